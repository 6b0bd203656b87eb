#!/usr/bin/env bash
# The real app end to end: Xvfb + tauri-driver (+ WebKitWebDriver) + WebdriverIO (node:test).
# Needs: the app and the demo agent built (target/debug), `npm ci` done, tauri-driver on PATH
# (`cargo install tauri-driver --locked`), and Debian's xvfb and webkit2gtk-driver.
# E2E_SCREENSHOTS=DIR keeps the screenshots there (docs/screenshots when refreshing them).
set -euo pipefail
cd "$(dirname "$0")/../.."

for tool in Xvfb tauri-driver WebKitWebDriver xdpyinfo xdotool; do
  command -v "$tool" >/dev/null || { echo "e2e: $tool is missing (see README: prerequisites)"; exit 2; }
done
[ -x "${ACP_DESK_APP:-target/debug/acp-desk}" ] || { echo "e2e: build the app first: cargo build --workspace --bins"; exit 2; }

work=$(mktemp -d)
port=$((4400 + RANDOM % 500))

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.3
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  # WebKitWebDriver and the app are tauri-driver's children; make sure none outlive the run.
  pkill -f "WebKitWebDriver --port=$((port + 1))" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Xvfb picks a free display itself and says which (no race with another run).
exec 3>"$work/display"
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
pids+=($!)
exec 3>&-
# Up to 20 s: on a loaded machine (CI with 2 cores) Xvfb has taken longer than 5 s to start.
for _ in $(seq 400); do [ -s "$work/display" ] && break; sleep 0.05; done
display=":$(head -1 "$work/display" 2>/dev/null)"
[ "$display" != ":" ] || { echo "e2e: Xvfb did not start"; cat "$work/xvfb.log"; exit 2; }
for _ in $(seq 50); do xdpyinfo -display "$display" >/dev/null 2>&1 && break; sleep 0.1; done
xdpyinfo -display "$display" >/dev/null 2>&1 || { echo "e2e: Xvfb on $display does not answer"; exit 2; }

# No session bus: without one GLib would autolaunch a dbus-daemon (and portals) that outlive us.
export DISPLAY="$display" DBUS_SESSION_BUS_ADDRESS="disabled:"
# Settings and data of this run only: a user's agent_servers must not change the default agent.
export ACP_DESK_CONFIG_DIR="$work/config" ACP_DESK_DATA_DIR="$work/data"
tauri-driver --port "$port" --native-port $((port + 1)) >"$work/tauri-driver.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null ||
  { echo "e2e: tauri-driver did not listen on $port"; cat "$work/tauri-driver.log"; exit 2; }

rc=0
TAURI_DRIVER_PORT=$port node --test --test-concurrency=1 ${E2E_TESTS:-tests/e2e/app.test.mjs tests/e2e/restart.test.mjs tests/e2e/history.test.mjs tests/e2e/agents.test.mjs} || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "--- tauri-driver log (last 40 lines)"; tail -40 "$work/tauri-driver.log" || true
fi
exit "$rc"
