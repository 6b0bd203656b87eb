#!/usr/bin/env bash
# The time from the end of the notification delay to the `Notify` call, in the real app: a demo
# agent's permission request arrives while the window is unfocused; the policy waits
# NOTIFY_DELAY (2 s) and the shell sends `Notify`. Measured from the moment the agent's
# `session/request_permission` line leaves the agent (a wrapper stamps it) + 2 s, to the moment
# the notification server (tests/src/bin/fake-desktop.rs) receives the call: so the figure also
# holds the app's reading of the request, its pump and the attention thread's wake-up. Each
# round is answered Reject from the notification (ActionInvoked "reject"), and the agent's
# answer is checked to be the scenario's reject option.
#
# Needs, built in $CARGO_TARGET_DIR/debug (or target/debug): acp-desk (`npm run build:ui`, then
# `cargo build -p acp-desk --bin acp-desk`), acp-desk-demo-agent, fake-desktop
# (`cargo build -p acp-desk-tests --bin fake-desktop`); Xvfb, xdotool, xmessage, dbus-run-session,
# python3.
#
# Usage: bench/notify-latency.sh [ROUNDS]   (default 20; DISPLAY_NUM=:32 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-20}
target=${CARGO_TARGET_DIR:-target}
app=$PWD/$target/debug/acp-desk
[ "${target#/}" != "$target" ] && app=$target/debug/acp-desk
bin=$(dirname "$app")
for f in "$app" "$bin/acp-desk-demo-agent" "$bin/fake-desktop"; do
  [ -x "$f" ] || { echo "notify-latency: build $f first (see the header)"; exit 2; }
done

if [ -z "${NOTIFY_BENCH_BUS:-}" ]; then
  # A private session bus with nothing started on demand: only fake-desktop answers.
  conf=$(mktemp)
  cat >"$conf" <<'EOF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
  status=0
  NOTIFY_BENCH_BUS=1 dbus-run-session --config-file="$conf" -- "$0" "$@" || status=$?
  rm -f "$conf"
  exit $status
fi

work=$(mktemp -d)
display=${DISPLAY_NUM:-:32}
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.5
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

fd() { "$bin/fake-desktop" call "$@"; }
"$bin/fake-desktop" serve >"$work/fake-desktop.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do fd ping >/dev/null 2>&1 && break; sleep 0.1; done

Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
pids+=($!)
export DISPLAY=$display
for _ in $(seq 50); do xdotool getmouselocation >/dev/null 2>&1 && break; sleep 0.1; done

# The demo agent behind a wrapper that stamps its permission requests and the client's answers.
cat >"$work/agent.py" <<'EOF'
#!/usr/bin/env python3
import json, os, subprocess, sys, threading, time
log = open(os.environ["NOTIFY_BENCH_LOG"], "a", buffering=1)
child = subprocess.Popen([os.environ["NOTIFY_BENCH_AGENT"], *sys.argv[1:]],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
asked = set()
def down():
    for line in child.stdout:
        if b'"session/request_permission"' in line:
            msg = json.loads(line)
            asked.add(msg["id"])
            log.write(json.dumps({"asked_ms": time.time() * 1000, "id": msg["id"]}) + "\n")
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
threading.Thread(target=down, daemon=True).start()
for line in sys.stdin.buffer:
    try:
        msg = json.loads(line)
        if msg.get("id") in asked and "result" in msg:
            log.write(json.dumps({"answered": msg["result"], "id": msg["id"]}) + "\n")
    except ValueError:
        pass
    child.stdin.write(line)
    child.stdin.flush()
child.stdin.close()
sys.exit(child.wait())
EOF
chmod +x "$work/agent.py"
mkdir -p "$work/proj" "$work/config" "$work/data"

NOTIFY_BENCH_LOG=$work/agent.log NOTIFY_BENCH_AGENT=$bin/acp-desk-demo-agent \
  ACP_DESK_DEMO_AGENT=$work/agent.py ACP_DESK_CONFIG_DIR=$work/config ACP_DESK_DATA_DIR=$work/data \
  ACP_DESK_LOG=${ACP_DESK_LOG:-info} "$app" --agent demo "$work/proj" >"$work/app.log" 2>&1 &
pids+=($!)
win=
for _ in $(seq 150); do
  win=$(xdotool search --name 'proj — ACP Desk' 2>/dev/null | head -1 || true)
  [ -n "$win" ] && break
  sleep 0.2
done
[ -n "$win" ] || { echo "notify-latency: the window never appeared"; cat "$work/app.log"; exit 1; }
xmessage -name unfocus "not ACP Desk" &
pids+=($!)
other=
for _ in $(seq 50); do
  other=$(xdotool search --name unfocus 2>/dev/null | head -1 || true)
  [ -n "$other" ] && break
  sleep 0.1
done
sleep 3 # the agent starts

count() { fd notifications | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
results=()
for round in $(seq "$rounds"); do
  before=$(count)
  xdotool windowfocus --sync "$win"
  sleep 0.3
  xdotool type --delay 5 "ask for permission"
  xdotool key Return
  # Unfocused before the request comes (the scenario says a line first).
  xdotool windowfocus --sync "$other"
  for _ in $(seq 100); do [ "$(count)" -gt "$before" ] && break; sleep 0.1; done
  IFS=$'\t' read -r id at_ms text <<<"$(fd notifications | python3 -c '
import json, sys
n = json.load(sys.stdin)[-1]
keys = ",".join(a["key"] for a in n["actions"])
print(n["id"], n["at_ms"], n["summary"] + " | " + n["body"] + " | actions " + keys, sep="\t")')"
  asked=$(python3 -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1]) if "asked_ms" in l][-1]["asked_ms"])' "$work/agent.log")
  ms=$(python3 -c "print(round($at_ms - ($asked + 2000), 1))")
  results+=("$ms")
  echo "round $round: Notify $ms ms after the delay's end; notification $id: $text"
  if [ "$round" = 1 ]; then
    # What the tray host and the dock see while the request waits.
    fd tray | python3 -c '
import json, sys
for item in json.load(sys.stdin).get("items", []):
    print("  tray title:", item.get("props", {}).get("XAyatanaLabel") or item.get("props", {}).get("Title"))
    print("  tray menu:", [e["text"] for e in item.get("entries", [])])'
    echo "  launcher: $(fd launcher | python3 -c 'import json,sys; l=json.load(sys.stdin); print(l[-1] if l else "no signal")')"
  fi
  fd invoke-action "$id" reject >/dev/null
  for _ in $(seq 50); do grep -q answered "$work/agent.log" && [ "$(grep -c answered "$work/agent.log")" -ge "$round" ] && break; sleep 0.1; done
  answer=$(grep answered "$work/agent.log" | tail -1)
  echo "  the agent got: $answer"
  if [ "$round" = 1 ]; then
    sleep 0.5
    fd tray | python3 -c '
import json, sys
for item in json.load(sys.stdin).get("items", []):
    print("  tray menu after Reject:", [e["text"] for e in item.get("entries", [])])'
  fi
  sleep 1.5 # the turn ends
done

python3 - "${results[@]}" <<'EOF'
import statistics, sys
v = sorted(float(x) for x in sys.argv[1:])
p95 = v[min(len(v) - 1, max(0, round(0.95 * len(v)) - 1))]
print(f"{len(v)} rounds: median {statistics.median(v):.1f} ms, p95 {p95:.1f} ms, min {v[0]:.1f}, max {v[-1]:.1f}")
EOF
