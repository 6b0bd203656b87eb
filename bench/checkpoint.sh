#!/usr/bin/env bash
# Checkpoint benchmark (issue 20): a 10,000-file, ~1 GB project (9,900 text files of ~4 KB in
# 99 folders, 100 incompressible binaries of 9.5 MiB, under the 10 MB `checkpoints.max_file_mb` default),
# checkpointed through acp_desk_core::checkpoint (crates/acp-desk-core/examples/checkpoint_bench.rs,
# release build): the first `begin`, `begin` with nothing changed (median of 5), `begin` after
# one small file changed (median of 5) and the storage each such step adds; against plain git
# on a copy of the same tree in the same run: `git init && git add -A && git commit`, then an
# unchanged `git add -A && git commit --allow-empty`, then one with one file changed. Warm page
# cache (the tree was just written). Not a test: nothing is asserted about time.
#
# Usage (from anywhere):  bench/checkpoint.sh
# Environment:
#   DIR=$(mktemp -d)     where the trees go (removed at the end unless KEEP=1)
#   SKIP_BUILD=1         use the existing release example
#   CARGO_TARGET_DIR     where the example is built (default: <repo>/target)
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET=${CARGO_TARGET_DIR:-$PWD/target}
BIN=$TARGET/release/examples/checkpoint_bench
if [[ -z "${SKIP_BUILD:-}" ]]; then
  cargo build --release -p acp-desk-core --example checkpoint_bench >&2
fi

DIR=${DIR:-$(mktemp -d)}
[[ -n "${KEEP:-}" ]] || trap 'rm -rf "$DIR"' EXIT
OURS=$DIR/ours
PLAIN=$DIR/plain
mkdir -p "$OURS"

echo "building the tree in $OURS" >&2
python3 - "$OURS" <<'PY'
import os, sys
root = sys.argv[1]
line = "let value_{i} = compute({i}, \"some text that looks like code\"); // {j}\n"
for d in range(99):
    folder = os.path.join(root, f"src/mod{d:02}")
    os.makedirs(folder, exist_ok=True)
    for f in range(100):
        n = d * 100 + f
        with open(os.path.join(folder, f"file{f:03}.rs"), "w") as out:
            out.write("".join(line.format(i=n, j=k) for k in range(56)))
PY
mkdir -p "$OURS/assets"
for i in $(seq -w 0 99); do
  head -c $((9728 * 1024)) /dev/urandom > "$OURS/assets/blob$i.bin"
done
files=$(find "$OURS" -type f | wc -l)
bytes=$(du -sb "$OURS" | cut -f1)
echo "files $files bytes $bytes"
cp -a "$OURS" "$PLAIN"
sync

ms() { # ms CMD...: wall milliseconds of CMD
  local t0 t1
  t0=$(date +%s%N)
  "$@" > /dev/null
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}

echo "== ours (checkpoint_bench)"
"$BIN" "$OURS" "$OURS/src/mod50/file050.rs"

echo "== plain git on a copy"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
g() { git -C "$PLAIN" -c user.name=b -c user.email=b@b -c gc.auto=0 "$@"; }
git -C "$PLAIN" init -q
first=$(ms sh -c "git -C '$PLAIN' add -A && git -C '$PLAIN' -c user.name=b -c user.email=b@b -c gc.auto=0 commit -q -m first")
echo "git_first_add_commit_ms $first"
times=()
for _ in 1 2 3 4 5; do
  times+=("$(ms sh -c "git -C '$PLAIN' add -A && git -C '$PLAIN' -c user.name=b -c user.email=b@b -c gc.auto=0 commit -q --allow-empty -m same")")
done
echo "git_unchanged_add_commit_ms_all ${times[*]}"
echo "git_unchanged_add_commit_ms_median $(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)"
before=$(du -sb "$PLAIN/.git" | cut -f1)
times=()
for i in 1 2 3 4 5; do
  echo "changed $i" >> "$PLAIN/src/mod50/file050.rs"
  times+=("$(ms sh -c "git -C '$PLAIN' add -A && git -C '$PLAIN' -c user.name=b -c user.email=b@b -c gc.auto=0 commit -q -m one")")
done
after=$(du -sb "$PLAIN/.git" | cut -f1)
echo "git_one_changed_add_commit_ms_all ${times[*]}"
echo "git_one_changed_add_commit_ms_median $(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)"
echo "git_storage_per_changed_commit_bytes $(( (after - before) / 5 ))"
echo "git_storage_bytes $after"
