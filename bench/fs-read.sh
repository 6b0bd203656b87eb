#!/usr/bin/env bash
# Window read benchmark: lines 5,000,000..5,000,100 of a 1 GiB text file (~200-byte lines),
# through fs::read_text_file (crates/acp-desk-core/examples/read_window.rs, release build)
# against `sed -n '5000000,5000100p;5000101q'`, both as whole processes, warm page cache, best
# of 5 each. Both outputs are compared byte for byte first. Not a test: nothing is asserted
# about time.
#
# Usage (from anywhere):  bench/fs-read.sh
# Environment:
#   FILE=/tmp/acpdesk-fs-read-1g.txt   the text file (created when missing or too short)
#   RUNS=5                             runs per command (the best is printed)
#   SKIP_BUILD=1                       use the existing release example
#   CARGO_TARGET_DIR                   where the example is built (default: <repo>/target)
set -euo pipefail
cd "$(dirname "$0")/.."

FILE=${FILE:-/tmp/acpdesk-fs-read-1g.txt}
RUNS=${RUNS:-5}
FIRST=5000000
LIMIT=101
LAST=$((FIRST + LIMIT - 1))
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
BIN=$TARGET/release/examples/read_window

if [[ -z "${SKIP_BUILD:-}" ]]; then
  cargo build --release -p acp-desk-core --example read_window >&2
fi

# 5,400,000 lines of 200 bytes (8-digit line number, a space, 190 x's, newline): 1.08 GB, so
# the window sits near the end and both tools scan ~1 GB to reach it.
LINES=5400000
SIZE=$((LINES * 200))
if [[ ! -f "$FILE" || $(stat -c %s "$FILE") -ne $SIZE ]]; then
  echo "creating $FILE ($SIZE bytes)..." >&2
  awk -v n=$LINES 'BEGIN { pad = sprintf("%190s", ""); gsub(/ /, "x", pad);
                           for (i = 1; i <= n; i++) printf "%08d %s\n", i, pad }' > "$FILE"
fi

sed_cmd() { sed -n "${FIRST},${LAST}p;$((LAST + 1))q" "$FILE"; }
ours_cmd() { "$BIN" "$FILE" "$FIRST" "$LIMIT"; }

# Same bytes from both, and the window is what it should be.
cmp <(ours_cmd) <(sed_cmd)
[[ $(ours_cmd | wc -l) -eq $LIMIT && $(ours_cmd | head -c 8) == $(printf '%08d' $FIRST) ]]

cat "$FILE" > /dev/null # warm the page cache

best_ms() {
  local best="" t0 t1 ms
  for _ in $(seq "$RUNS"); do
    t0=$(date +%s%N)
    "$@" > /dev/null
    t1=$(date +%s%N)
    ms=$(( (t1 - t0) / 1000 ))
    if [[ -z "$best" || $ms -lt $best ]]; then best=$ms; fi
  done
  awk -v us="$best" 'BEGIN { printf "%.1f", us / 1000 }'
}

ours=$(best_ms ours_cmd)
sed=$(best_ms sed_cmd)
echo "file: $FILE ($(stat -c %s "$FILE") bytes, $LINES lines); window: line $FIRST, limit $LIMIT; best of $RUNS, warm cache"
echo "read_text_file (read_window example): ${ours} ms"
echo "sed -n '${FIRST},${LAST}p;$((LAST + 1))q':    ${sed} ms"
awk -v a="$ours" -v b="$sed" 'BEGIN { printf "ratio ours/sed: %.2f\n", a / b }'
