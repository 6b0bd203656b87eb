#!/usr/bin/env bash
# History search benchmark: records generated sessions (1,000 by default, about 100 MB of
# StreamEvent JSON lines) through the history store's recorder into a temporary file, indexes
# them, and times searches of several kinds (median and p95). See bench/README.md.
#
# Usage (from anywhere):  bench/history.sh [history-bench options...]
# Environment:
#   SESSIONS=1000     sessions generated
#   ROUNDS=20         times each search is run
#   SKIP_BUILD=1      do not run cargo build (use the existing release binary)
#   CARGO_TARGET_DIR  where the release binary is (default: target/)
set -euo pipefail
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$script_dir/.."
SESSIONS=${SESSIONS:-1000}
ROUNDS=${ROUNDS:-20}
target_dir=${CARGO_TARGET_DIR:-"$PWD/target"}
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    echo "building the release binary..." >&2
    cargo build --release -p acp-desk-bench-history
fi
bench="$target_dir/release/history-bench"
[[ -x "$bench" ]] || { echo "history.sh: missing $bench (build it first)" >&2; exit 1; }
mkdir -p bench/out
out="bench/out/history-$(date +%Y%m%d-%H%M%S).txt"
{
    echo "# history benchmark, $(uname -srm), $(nproc) CPUs, git $(git rev-parse --short HEAD 2>/dev/null || echo none)"
    "$bench" --sessions "$SESSIONS" --rounds "$ROUNDS" "$@"
} | tee "$out"
echo "raw figures: $out" >&2
