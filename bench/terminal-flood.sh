#!/usr/bin/env bash
# Terminal flood: 100 MB through a terminal (pty, supervisor, streaming UTF-8 decoder, 1 MiB
# output limit, every delta consumed) against the same bytes through a plain pipe and through a
# pty alone (`script`), for context. Prints MB/s and the example's peak RSS (VmHWM).
#
# Usage (from anywhere):  bench/terminal-flood.sh
# Environment:
#   ROUNDS=3            rounds of each
#   BYTES=100000000     bytes of output
#   SKIP_BUILD=1        do not run cargo build (use the existing release binaries)
#   CARGO_TARGET_DIR    where cargo builds (default: target/ at the repository root)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
ROUNDS=${ROUNDS:-3}
BYTES=${BYTES:-100000000}
target=${CARGO_TARGET_DIR:-$root/target}

if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
    cargo build --release -p acp-desk-core --bins --example terminal_flood
fi
example=$target/release/examples/terminal_flood
[[ -x "$example" ]] || { echo "terminal-flood.sh: $example not built" >&2; exit 1; }
export ACP_DESK_SUPERVISOR=${ACP_DESK_SUPERVISOR:-$target/release/acp-desk-supervisor}

mbps() { # $1 = seconds
    awk -v b="$BYTES" -v s="$1" 'BEGIN { printf "%.1f", b / s / 1e6 }'
}
seconds() { # runs "$@", prints wall seconds
    local t0 t1
    t0=$(date +%s.%N)
    "$@"
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}

for ((r = 1; r <= ROUNDS; r++)); do
    echo "--- round $r"
    echo "terminal:  $("$example" "$BYTES" 1048576 | tr '\n' ' ')"
    s=$(seconds sh -c "head -c $BYTES /dev/zero | tr '\\0' a | cat > /dev/null")
    echo "pipe:      seconds=$s throughput=$(mbps "$s") MB/s"
    s=$(seconds sh -c "script -qec \"head -c $BYTES /dev/zero | tr '\\\\0' a\" /dev/null > /dev/null")
    echo "script:    seconds=$s throughput=$(mbps "$s") MB/s (a pty read by script(1), written to /dev/null)"
done
