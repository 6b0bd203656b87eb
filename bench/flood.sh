#!/usr/bin/env bash
# Flood benchmark: how fast does acp-desk-cli consume a prompt turn of 204,000 session/update
# notifications (~41 MB), compared with the parse-only baseline, against the same flood agent
# (our demo agent, prompt "flood")? See bench/README.md.
#
# Usage (from anywhere):  bench/flood.sh
# Environment:
#   ROUNDS=10                  rounds; each round runs the agent alone, the CLI and parse-only
#   FLOOD_NOTIFICATIONS=204000 notifications the flood agent sends (for notifications/s)
#   SKIP_BUILD=1               do not run cargo build (use the existing release binaries)
#   AGENT_ALONE=0              skip the "agent alone" runs
#   FLOOD_AGENT=path           flood agent to use instead of target/release/acp-desk-demo-agent
#   FLOOD_CLI=path             CLI to use instead of target/release/acp-desk-cli
#   HISTORY_ROWS=0             skip the "CLI without history" runs (`run --no-history`)
#   CARGO_TARGET_DIR=dir       where the release binaries are (default: target/)
#   FRESH_HISTORY=1            each CLI run creates its history file (a first run ever) instead
#                              of finding an empty one, made once by `history list`
# Every CLI run gets a fresh, temporary data folder (ACP_DESK_DATA_DIR): the history and the
# audit log it writes never reach yours, and no run starts with an earlier run's history. By
# default the folder holds an empty history file, as every run but a user's first finds it:
# creating the file (its schema, and the fsyncs of switching it to WAL: 20-50 ms on this
# machine's disk) is a one-off cost, not part of a rate; FRESH_HISTORY=1 measures it too.
set -euo pipefail

# --- internal mode: the "agent alone" driver -------------------------------------------------
# Runs the agent with a minimal shell-and-grep client: initialize, session/new, session/prompt,
# then the rest of stdout goes to `grep -m1` (memchr-speed scan, no JSON parsing) until the
# prompt response (id 3). This is the agent's own cost plus a pipe.
if [[ "${1:-}" == "__agent_alone" ]]; then
    agent=$2
    coproc AGENT { exec "$agent"; }
    to_agent=${AGENT[1]}
    from_agent=${AGENT[0]}
    read_until_id() { # $1 = id; echoes the matching line
        local line
        while IFS= read -r line <&"$from_agent"; do
            if [[ "$line" =~ \"id\":\ ?$1[,}] ]]; then
                printf '%s\n' "$line"
                return 0
            fi
        done
        echo "flood.sh: agent closed stdout before answering request $1" >&2
        return 1
    }
    printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}' >&"$to_agent"
    read_until_id 1 >/dev/null
    printf '{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"%s","mcpServers":[]}}\n' "$PWD" >&"$to_agent"
    new_session=$(read_until_id 2)
    [[ "$new_session" =~ \"sessionId\":\ ?\"([^\"]*)\" ]] || { echo "flood.sh: no sessionId in: $new_session" >&2; exit 1; }
    printf '{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"%s","prompt":[{"type":"text","text":"flood"}]}}\n' \
        "${BASH_REMATCH[1]}" >&"$to_agent"
    grep -m1 -qE '"id": ?3[,}]' <&"$from_agent"
    eval "exec $to_agent>&- $from_agent<&-" # EOF on the agent's stdin: it exits
    wait "$AGENT_PID" || true
    exit 0
fi

# --- main mode --------------------------------------------------------------------------------
ROUNDS=${ROUNDS:-10}
FLOOD_NOTIFICATIONS=${FLOOD_NOTIFICATIONS:-204000}
SKIP_BUILD=${SKIP_BUILD:-0}
AGENT_ALONE=${AGENT_ALONE:-1}
HISTORY_ROWS=${HISTORY_ROWS:-1}
FRESH_HISTORY=${FRESH_HISTORY:-0}

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
script="$script_dir/$(basename "${BASH_SOURCE[0]}")"
cd "$script_dir/.."

TIME=/usr/bin/time
if ! "$TIME" -f '%e %M' true 2>/dev/null; then
    echo "flood.sh: GNU time is missing at $TIME; install it with: sudo apt-get install time" >&2
    exit 1
fi
if ! [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]]; then
    echo "flood.sh: ROUNDS must be a positive integer, got '$ROUNDS'" >&2
    exit 1
fi

if [[ "$SKIP_BUILD" != 1 ]]; then
    echo "building release binaries..." >&2
    cargo build --release -p acp-desk-cli -p acp-desk-demo-agent -p acp-desk-bench-parse-only
fi
target_dir=${CARGO_TARGET_DIR:-"$PWD/target"}
AGENT=${FLOOD_AGENT:-"$target_dir/release/acp-desk-demo-agent"}
CLI=${FLOOD_CLI:-"$target_dir/release/acp-desk-cli"}
PARSE_ONLY="$target_dir/release/parse-only"
for bin in "$AGENT" "$CLI" "$PARSE_ONLY"; do
    [[ -x "$bin" ]] || { echo "flood.sh: missing $bin (build it first)" >&2; exit 1; }
done

mkdir -p bench/out
stamp=$(date +%Y%m%d-%H%M%S)
out="bench/out/flood-$stamp.txt"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{
    echo "# flood benchmark $stamp"
    echo "# host: $(uname -srm), $(nproc) CPUs; rounds: $ROUNDS; notifications per run: $FLOOD_NOTIFICATIONS"
    echo "# git: $(git rev-parse --short HEAD 2>/dev/null || echo none)"
    echo "# history file: $([[ "$FRESH_HISTORY" == 1 ]] && echo "created by each run" || echo "an empty one, made before the runs")"
    echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# agent: $AGENT"
    echo "# columns: round client wall_seconds peak_rss_kib cpu_seconds [extra]"
    echo "# cpu_seconds is /usr/bin/time %U + %S: user + system CPU of the client and its waited-for children."
    echo "# peak_rss_kib is /usr/bin/time %M: max RSS of the client AND its waited-for children (the agent)."
} >"$out"

# run NAME CMD...: time one run, append "round NAME wall rss" to $out; stdout goes to /dev/null.
run() {
    local name=$1
    shift
    local timing="$tmp/time" errlog="$tmp/stderr-$name"
    if ! "$TIME" -o "$timing" -f '%e %M %U %S' "$@" >/dev/null 2>"$errlog"; then
        echo "flood.sh: $name failed (round $round):" >&2
        tail -n 20 "$errlog" >&2
        exit 1
    fi
    local wall rss user sys extra=""
    read -r wall rss user sys <"$timing"
    if [[ "$name" == parse-only ]]; then
        extra=$(grep -Eo 'notifications=[0-9]+|own_peak_rss_kib=[0-9]+' "$errlog" | tr '\n' ' ' || true)
        local n
        n=$(grep -Eo 'notifications=[0-9]+' "$errlog" | head -n1 | cut -d= -f2 || true)
        if [[ "$n" != "$FLOOD_NOTIFICATIONS" ]]; then
            echo "flood.sh: warning: parse-only counted ${n:-?} notifications, expected $FLOOD_NOTIFICATIONS" >&2
        fi
    fi
    echo "$round $name $wall $rss $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') $extra" >>"$out"
    printf '  round %2d  %-13s %6.2f s  %7.1f MiB\n' "$round" "$name" "$wall" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" >&2
}

# A fresh data folder for each CLI run (the history file, the audit log), with an empty
# history file in it unless FRESH_HISTORY=1 (the same for the runs with and without history).
if [[ "$FRESH_HISTORY" != 1 ]]; then
    ACP_DESK_DATA_DIR="$tmp/template" "$CLI" history list >/dev/null 2>&1 || true
    [[ -f "$tmp/template/history.sqlite3" ]] || { echo "flood.sh: '$CLI history list' made no history file in $tmp/template" >&2; exit 1; }
fi
fresh_data() {
    rm -rf "$tmp/data"
    if [[ "$FRESH_HISTORY" != 1 ]]; then cp -r "$tmp/template" "$tmp/data"; fi
    export ACP_DESK_DATA_DIR="$tmp/data"
}
run_cli() { fresh_data; run cli "$CLI" run --agent-command "$AGENT" --json flood; }
run_cli_no_history() { fresh_data; run cli-no-history "$CLI" run --no-history --agent-command "$AGENT" --json flood; }
run_parse_only() { run parse-only "$PARSE_ONLY" -- "$AGENT"; }

echo "running $ROUNDS rounds (results in $out)..." >&2
for ((round = 1; round <= ROUNDS; round++)); do
    if [[ "$AGENT_ALONE" == 1 ]]; then
        run agent-alone bash "$script" __agent_alone "$AGENT"
    fi
    # Alternate which client goes first, so that neither always runs on a warmer machine.
    if ((round % 2)); then
        run_cli
        run_parse_only
        if [[ "$HISTORY_ROWS" == 1 ]]; then run_cli_no_history; fi
    else
        if [[ "$HISTORY_ROWS" == 1 ]]; then run_cli_no_history; fi
        run_parse_only
        run_cli
    fi
done

# --- summary ----------------------------------------------------------------------------------
summary=$(awk -v n="$FLOOD_NOTIFICATIONS" '
    function median(a, k,    t, i, j, x) {
        for (i = 1; i <= k; i++) t[i] = a[i]
        for (i = 2; i <= k; i++) { x = t[i]; for (j = i - 1; j >= 1 && t[j] > x; j--) t[j + 1] = t[j]; t[j + 1] = x }
        return (k % 2) ? t[(k + 1) / 2] : (t[k / 2] + t[k / 2 + 1]) / 2
    }
    function minof(a, k,    i, m) { m = a[1]; for (i = 2; i <= k; i++) if (a[i] < m) m = a[i]; return m }
    function maxof(a, k,    i, m) { m = a[1]; for (i = 2; i <= k; i++) if (a[i] > m) m = a[i]; return m }
    /^#/ { next }
    {
        c = $2; k = ++cnt[c]
        wall[c, k] = $3; rss[c, k] = $4 / 1024
        w[$1, c] = $3
        cpu[$1, c] = $5
        if (c == "parse-only") for (i = 5; i <= NF; i++) if ($i ~ /^own_peak_rss_kib=/) { split($i, p, "="); own[++nown] = p[2] / 1024 }
    }
    END {
        printf "| run | wall s, median (min–max) | notifications/s, median | peak RSS MiB, median (min–max) |\n"
        printf "| --- | --- | ---: | --- |\n"
        split("agent-alone cli cli-no-history parse-only", names, " ")
        label["agent-alone"] = "demo agent alone (shell handshake + grep)"
        label["cli"] = "acp-desk-cli run --json (history on)"
        label["cli-no-history"] = "acp-desk-cli run --no-history --json"
        label["parse-only"] = "parse-only (serde_json typed, nothing else)"
        for (ni = 1; ni <= 4; ni++) {
            c = names[ni]; k = cnt[c]
            if (!k) continue
            for (i = 1; i <= k; i++) { ww[i] = wall[c, i]; rr[i] = rss[c, i] }
            mw = median(ww, k)
            printf "| %s | %.3f (%.3f–%.3f) | %.0f k | %.1f (%.1f–%.1f) |\n", label[c], mw, minof(ww, k), maxof(ww, k), n / mw / 1000, median(rr, k), minof(rr, k), maxof(rr, k)
            med[c] = mw
        }
        if (nown) printf "\nparse-only own peak RSS (VmHWM, without the agent): %.1f MiB median (%.1f–%.1f)\n", median(own, nown), minof(own, nown), maxof(own, nown)
        np = 0
        for (r = 1; r <= cnt["cli"]; r++) if ((r, "cli") in w && (r, "parse-only") in w && w[r, "cli"] > 0) ratio[++np] = w[r, "parse-only"] / w[r, "cli"]
        if (np) {
            printf "\nCLI rate / parse-only rate: %.3f median of %d paired rounds (%.3f–%.3f); ratio of medians %.3f\n", median(ratio, np), np, minof(ratio, np), maxof(ratio, np), med["parse-only"] / med["cli"]
        }
        nh = 0
        for (r = 1; r <= cnt["cli"]; r++) if ((r, "cli") in w && (r, "cli-no-history") in w && w[r, "cli"] > 0) hist[++nh] = w[r, "cli-no-history"] / w[r, "cli"]
        if (nh) {
            printf "History on / off rate: %.3f median of %d paired rounds (%.3f–%.3f); ratio of medians %.3f\n", median(hist, nh), nh, minof(hist, nh), maxof(hist, nh), med["cli-no-history"] / med["cli"]
        }
        nc = 0
        for (r = 1; r <= cnt["cli"]; r++) if ((r, "cli") in cpu && (r, "cli-no-history") in cpu && cpu[r, "cli"] > 0) { hc[++nc] = cpu[r, "cli-no-history"] / cpu[r, "cli"]; con[nc] = cpu[r, "cli"]; coff[nc] = cpu[r, "cli-no-history"] }
        if (nc) {
            printf "History on / off CPU (user+sys, agent included; off / on): %.3f median of %d paired rounds (%.3f–%.3f); CPU s median on %.2f, off %.2f\n", median(hc, nc), nc, minof(hc, nc), maxof(hc, nc), median(con, nc), median(coff, nc)
        }
        print "Peak RSS is /usr/bin/time %M: the larger of the client and the agent it spawns (see the agent-alone row)."
    }' "$out")

echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out"
echo
echo "flood: $FLOOD_NOTIFICATIONS notifications per run, $ROUNDS rounds, $(nproc) CPUs, $stamp"
grep -E '^# (history file|load average)' "$out"
echo "$summary"
{
    echo
    echo "# summary"
    echo "$summary" | sed 's/^/# /'
} >>"$out"
echo
echo "raw figures: $out"
