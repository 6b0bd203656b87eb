#!/usr/bin/env bash
# Start to window mapped, and idle memory (PSS of the whole process tree: the app, WebKit's web
# and network processes, any sidecar), of ACP Desk against a bare Tauri 2 window
# (bench/bare-window: the same tauri version, features and release profile), in one run, the
# two alternating, under one Xvfb and one private session bus. Prints each run and the medians.
#   bench/startup.sh                        RUNS=5, IDLE_S=6
# Environment:
#   RUNS=N            runs of each app (default 5)
#   IDLE_S=S          seconds after the window is mapped before memory is read (default 6)
#   ACP_DESK_BIN=path the app (default: $CARGO_TARGET_DIR/release/acp-desk, which scripts/package
#                     builds; or /usr/bin/acp-desk once the .deb is installed)
#   ACP_DESK_ARGS=... arguments for the app (default none: the empty window; a folder opens a
#                     session with the default agent)
#   BARE_BIN=path     the bare window (default: built here with cargo into $CARGO_TARGET_DIR)
#   SKIP_BUILD=1      do not build the bare window
#   DISPLAY_NUM=N     the Xvfb display (default 34)
#   FRESH=1           new config and data folders for every run (a first launch); by default one
#                     pair per app for the whole bench, after one uncounted warm-up launch each
# Window mapped = the first moment `xdotool search --onlyvisible --name TITLE` finds it (polled
# every ~10 ms from just before exec; xdotool's own --sync waits in 0.5 s steps, too coarse).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

RUNS=${RUNS:-5}
IDLE_S=${IDLE_S:-6}
target_dir=$(realpath -m "${CARGO_TARGET_DIR:-target}")
ACP_DESK_BIN=${ACP_DESK_BIN:-$target_dir/release/acp-desk}
BARE_BIN=${BARE_BIN:-$target_dir/release/bare-window}
DISPLAY_NUM=${DISPLAY_NUM:-34}
read -r -a acp_args <<<"${ACP_DESK_ARGS:-}"

for tool in Xvfb xdotool xdpyinfo dbus-daemon; do
  command -v "$tool" >/dev/null || { echo "$tool is needed: scripts/deps --tests installs it"; exit 1; }
done
if [ -z "${SKIP_BUILD:-}" ]; then
  (cd bench/bare-window && CARGO_TARGET_DIR="$target_dir" cargo build --release --locked)
fi
[ -x "$ACP_DESK_BIN" ] || { echo "no app at $ACP_DESK_BIN: run scripts/package first (or set ACP_DESK_BIN)"; exit 1; }
[ -x "$BARE_BIN" ] || { echo "no bare window at $BARE_BIN (build bench/bare-window, or set BARE_BIN)"; exit 1; }

work=$(mktemp -d)
pids_to_end=()
cleanup() {
  # The bus's activated services (portals, at-spi) are its children; end them with it.
  if [ -n "${bus_pid:-}" ]; then
    local more
    read -r -a more <<<"$(tree "$bus_pid")"
    pids_to_end+=("${more[@]}")
  fi
  for p in "${pids_to_end[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

Xvfb ":$DISPLAY_NUM" -screen 0 1280x800x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
pids_to_end+=($!)
export DISPLAY=":$DISPLAY_NUM"
for _ in $(seq 100); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.05; done
xdpyinfo >/dev/null 2>&1 || { echo "Xvfb did not start on $DISPLAY: $(cat "$work/xvfb.log")"; exit 1; }
# One private session bus for every run: both apps meet the same D-Bus (single instance,
# notifications and the tray look for it), and nothing reaches the user's.
bus=$(dbus-daemon --session --fork --nopidfile --print-address=1 --print-pid=1)
export DBUS_SESSION_BUS_ADDRESS=${bus%%$'\n'*}
bus_pid=${bus##*$'\n'}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The process and every descendant, by walking /proc's parent links.
tree() {
  local all=("$1") queue=("$1") p kid
  while [ ${#queue[@]} -gt 0 ]; do
    p=${queue[0]}
    queue=("${queue[@]:1}")
    for kid in $(ps -o pid= --ppid "$p" 2>/dev/null); do
      all+=("$kid")
      queue+=("$kid")
    done
  done
  echo "${all[@]}"
}

pss_kib() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
# USS: the pages only this process maps. PSS also charges each process a share of the shared
# libraries (libwebkit2gtk is ~100 MB), which shrinks when any other WebKit process on the
# machine maps them too: on a shared machine PSS moves with other people's work, USS does not.
uss_kib() { awk '/^Private_(Clean|Dirty):/ {s += $2} END {print s + 0}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }

# run NAME TITLE_REGEX BIN ARGS...: prints "NAME mapped_ms pss_kib uss_kib detail"
run() {
  local name=$1 title=$2 bin=$3
  shift 3
  # One config and data folder per app for the whole bench (a later launch, as a user's usually
  # is: the history store and state file exist); FRESH=1 gives every run new ones (first launch).
  local dir="$work/$name"
  [ -z "${FRESH:-}" ] || dir="$work/$name-$RANDOM"
  mkdir -p "$dir/config" "$dir/data"
  local t0 pid mapped=""
  t0=$(now_ms)
  ACP_DESK_CONFIG_DIR="$dir/config" ACP_DESK_DATA_DIR="$dir/data" "$bin" "$@" >"$dir/log" 2>&1 &
  pid=$!
  local deadline=$((t0 + 30000))
  while [ "$(now_ms)" -lt "$deadline" ]; do
    if xdotool search --onlyvisible --name "$title" >/dev/null 2>&1; then
      mapped=$(($(now_ms) - t0))
      break
    fi
    sleep 0.01
  done
  if [ -z "$mapped" ]; then
    echo "$name: no visible window whose title matches $title within 30 s; its output:" >&2
    cat "$dir/log" >&2
    kill "$pid" 2>/dev/null || true
    exit 1
  fi
  sleep "$IDLE_S"
  local total=0 utotal=0 detail="" p kib ukib procs
  procs=$(tree "$pid")
  for p in $procs; do
    kib=$(pss_kib "$p")
    ukib=$(uss_kib "$p")
    total=$((total + kib))
    utotal=$((utotal + ukib))
    detail+="$(cat "/proc/$p/comm" 2>/dev/null || echo "?")=$((kib / 1024))/$((ukib / 1024)) "
  done
  echo "$name $mapped $total $utotal $detail"
  # End the whole tree: the app first (it ends its own children), then whatever is left.
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  for p in $procs; do kill -9 "$p" 2>/dev/null || true; done
  wait "$pid" 2>/dev/null || true
}

median() { sort -n | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print int((v[NR/2]+v[NR/2+1])/2)}'; }

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $RUNS runs each, memory read ${IDLE_S} s after the window maps"
# One launch of each first, not counted: it fills the page cache and creates the app's files.
run bare '^Bare Tauri window$' "$BARE_BIN" >/dev/null
run acp-desk 'ACP Desk$' "$ACP_DESK_BIN" "${acp_args[@]}" >/dev/null
echo "app mapped_ms PSS_MiB USS_MiB (per process: PSS/USS MiB)"
: >"$work/results"
for i in $(seq "$RUNS"); do
  # Alternate which goes first, so neither always meets a warmer page cache.
  if [ $((i % 2)) -eq 1 ]; then order=(bare acp); else order=(acp bare); fi
  for which in "${order[@]}"; do
    if [ "$which" = bare ]; then
      line=$(run bare '^Bare Tauri window$' "$BARE_BIN")
    else
      # The window's title becomes "FOLDER — ACP Desk" once a session shows.
      line=$(run acp-desk 'ACP Desk$' "$ACP_DESK_BIN" "${acp_args[@]}")
    fi
    echo "$line" >>"$work/results"
    read -r n ms kib ukib rest <<<"$line"
    printf '%-9s %6s ms  PSS %6.1f  USS %6.1f  %s\n' "$n" "$ms" "$(echo "$kib / 1024" | bc -l)" \
      "$(echo "$ukib / 1024" | bc -l)" "$rest"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A med_ms med_kib med_ukib
for n in bare acp-desk; do
  ms=$(awk -v n=$n '$1==n {print $2}' "$work/results" | median)
  kib=$(awk -v n=$n '$1==n {print $3}' "$work/results" | median)
  ukib=$(awk -v n=$n '$1==n {print $4}' "$work/results" | median)
  med_ms[$n]=$ms
  med_kib[$n]=$kib
  med_ukib[$n]=$ukib
  printf 'median %-9s mapped %5s ms   PSS %7.1f MiB   USS %7.1f MiB\n' "$n" "$ms" \
    "$(echo "$kib / 1024" | bc -l)" "$(echo "$ukib / 1024" | bc -l)"
done
printf 'ACP Desk / bare: start %.2f×, PSS %.2f×, USS %.2f× (goal: at most 1.15×)\n' \
  "$(echo "${med_ms[acp-desk]} / ${med_ms[bare]}" | bc -l)" \
  "$(echo "${med_kib[acp-desk]} / ${med_kib[bare]}" | bc -l)" \
  "$(echo "${med_ukib[acp-desk]} / ${med_ukib[bare]}" | bc -l)"
