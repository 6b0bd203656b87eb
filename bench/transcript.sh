#!/usr/bin/env bash
# A long stored session opened from the history (issue 14: "a 3.3 MB transcript, about 1,100
# entries, long tool outputs"): generates it and records it through the history store's
# recorder, then measures opening it, backend (`transcript-bench open`: what the shell's
# `history_events` does, time and peak memory) and webview (`ui/bench/transcript.mjs`: the
# built UI in Debian's Chromium, time until the thread is painted and the JS heap it costs).
# See bench/README.md; figures in docs/PERFORMANCE.md.
#
# Usage (from anywhere):  bench/transcript.sh
# Environment:
#   TURNS=100         turns of the generated session (about 11 entries and 33 KB each)
#   ROUNDS=5          backend: processes that open it (each its own, for its peak memory)
#   UI_RUNS=5         webview: browsers that open it (0: skip the webview)
#   SKIP_BUILD=1      do not build (use the existing release binary and ui/dist)
#   CARGO_TARGET_DIR  where the release binary is (default: target/)
set -euo pipefail
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$script_dir/.."
TURNS=${TURNS:-100}
ROUNDS=${ROUNDS:-5}
UI_RUNS=${UI_RUNS:-5}
target_dir=${CARGO_TARGET_DIR:-"$PWD/target"}
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    echo "building the release binary and the UI..." >&2
    cargo build --release -p acp-desk-bench-history --bin transcript-bench
    if [[ "$UI_RUNS" != 0 ]]; then npm run build:ui; fi
fi
bench="$target_dir/release/transcript-bench"
[[ -x "$bench" ]] || { echo "transcript.sh: missing $bench (build it first)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p bench/out
out="bench/out/transcript-$(date +%Y%m%d-%H%M%S).txt"
{
    echo "# transcript benchmark, $(uname -srm), $(nproc) CPUs, git $(git rev-parse --short HEAD 2>/dev/null || echo none)"
    echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    "$bench" make --dir "$tmp" --turns "$TURNS"
    echo "## backend: $ROUNDS processes, each opening it once, then 10 times more"
    for ((i = 1; i <= ROUNDS; i++)); do
        echo "### process $i"
        "$bench" open --dir "$tmp" --rounds 10
    done
    echo "## backend, the answer built from the stored JSON as it is (--raw): $ROUNDS processes"
    for ((i = 1; i <= ROUNDS; i++)); do
        echo "### process $i"
        "$bench" open --dir "$tmp" --rounds 10 --raw
    done
    if [[ "$UI_RUNS" != 0 ]]; then
        echo "## webview: $UI_RUNS runs"
        node ui/bench/transcript.mjs --answer "$tmp/transcript.json" --runs "$UI_RUNS" --out "$tmp/ui.json" 2>&1
        echo "## webview through the History view: $UI_RUNS runs"
        node ui/bench/transcript.mjs --answer "$tmp/transcript.json" --runs "$UI_RUNS" --via history --out "$tmp/ui-history.json" 2>&1
    fi
    echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out"
echo "raw figures: $out" >&2
