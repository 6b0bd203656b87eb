#!/usr/bin/env bash
# The real app end to end: Xvfb + tauri-driver (+ WebKitWebDriver) + WebdriverIO (node:test).
# Needs: the app, the demo agent and fake-desktop built (target/debug, or $CARGO_TARGET_DIR/debug),
# `npm ci` done, tauri-driver on PATH (`cargo install tauri-driver --locked`), and Debian's xvfb,
# webkit2gtk-driver, x11-utils, xdotool and dbus-daemon.
# E2E_SCREENSHOTS=DIR keeps the screenshots there (docs/screenshots when refreshing them).
# E2E_TESTS="FILES" runs only those; E2E_PORT=N puts the WebDriver ports at N..N+3 (default: random).
#
# The desktop tests (desktop*.test.mjs) need a session bus: the whole run goes inside
# `dbus-run-session` on a bus of its own (session-bus.conf: nothing is started on demand), with
# tests/src/bin/fake-desktop.rs on it as the notification server, tray host and launcher; their
# tauri-driver (so their app) has that bus. The other tests keep DBUS_SESSION_BUS_ADDRESS=disabled:
# as before: they start and quit the app in quick succession, and on a bus the single-instance
# name would hand a new launch's folder to the app still exiting (and they want no desktop).
set -euo pipefail
cd "$(dirname "$0")/../.."

# Absolute: the tests hand these paths to the app (settings files, ACP_DESK_DEMO_AGENT), whose
# working folder is not ours.
target=$(realpath -m "${CARGO_TARGET_DIR:-target}")
export ACP_DESK_APP=${ACP_DESK_APP:-$target/debug/acp-desk}
export FAKE_DESKTOP=${FAKE_DESKTOP:-$target/debug/fake-desktop}
tests=${E2E_TESTS:-tests/e2e/app.test.mjs tests/e2e/restart.test.mjs tests/e2e/history.test.mjs tests/e2e/agents.test.mjs tests/e2e/login-terminal.test.mjs tests/e2e/desktop.test.mjs tests/e2e/mcp.test.mjs tests/e2e/sign-in.test.mjs tests/e2e/elicitation.test.mjs tests/e2e/checkpoints.test.mjs}
plain=() desktop=() keychain=()
for t in $tests; do
  case "$(basename "$t")" in desktop*) desktop+=("$t") ;; mcp* | sign-in*) keychain+=("$t") ;; *) plain+=("$t") ;; esac
done

for tool in Xvfb tauri-driver WebKitWebDriver xdpyinfo xdotool; do
  command -v "$tool" >/dev/null || { echo "e2e: $tool is missing (see README: prerequisites)"; exit 2; }
done
[ -x "$ACP_DESK_APP" ] || { echo "e2e: build the app first: cargo build --workspace --bins ($ACP_DESK_APP)"; exit 2; }
if [ ${#desktop[@]} -gt 0 ]; then
  for tool in dbus-run-session xmessage; do
    command -v "$tool" >/dev/null || { echo "e2e: $tool is missing (scripts/deps --tests)"; exit 2; }
  done
  [ -x "$FAKE_DESKTOP" ] || { echo "e2e: build fake-desktop first: cargo build -p acp-desk-tests --bin fake-desktop ($FAKE_DESKTOP)"; exit 2; }
  if [ -z "${E2E_PRIVATE_BUS:-}" ]; then
    # Again, inside a private bus that ends with the run (the daemon with it).
    export E2E_PRIVATE_BUS=1
    exec dbus-run-session --config-file="$PWD/tests/e2e/session-bus.conf" -- "$0" "$@"
  fi
fi

work=$(mktemp -d)
port=${E2E_PORT:-$((4400 + RANDOM % 500))}

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sleep 0.3
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  # WebKitWebDriver and the app are tauri-driver's children; make sure none outlive the run.
  pkill -f "WebKitWebDriver --port=$((port + 1))" 2>/dev/null || true
  pkill -f "WebKitWebDriver --port=$((port + 3))" 2>/dev/null || true
  pkill -f "WebKitWebDriver --port=$((port + 5))" 2>/dev/null || true
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

# Settings and data of this run only: a user's agent_servers must not change the default agent.
export DISPLAY="$display" ACP_DESK_CONFIG_DIR="$work/config" ACP_DESK_DATA_DIR="$work/data"
# A page the app opens (an agent's URL question, a link) goes to xdg-open, which honours
# $BROWSER: `true` opens nothing, so no real browser starts on the test display and outlives it.
export BROWSER=true
bus=${DBUS_SESSION_BUS_ADDRESS:-disabled:}

# Starts a tauri-driver on $1 (+1 for WebKitWebDriver) with the session bus $2.
driver() {
  DBUS_SESSION_BUS_ADDRESS="$2" tauri-driver --port "$1" --native-port $(($1 + 1)) >"$work/tauri-driver-$1.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && break; sleep 0.1; done
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null ||
    { echo "e2e: tauri-driver did not listen on $1"; cat "$work/tauri-driver-$1.log"; exit 2; }
}

rc=0
if [ ${#plain[@]} -gt 0 ]; then
  # No session bus: without one GLib would autolaunch a dbus-daemon (and portals) that outlive us.
  driver "$port" "disabled:"
  TAURI_DRIVER_PORT=$port node --test --test-concurrency=1 "${plain[@]}" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "--- tauri-driver log (last 40 lines)"; tail -40 "$work/tauri-driver-$port.log" || true
  fi
fi
if [ ${#desktop[@]} -gt 0 ]; then
  "$FAKE_DESKTOP" serve >"$work/fake-desktop.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do "$FAKE_DESKTOP" call ping >/dev/null 2>&1 && break; sleep 0.1; done
  "$FAKE_DESKTOP" call ping >/dev/null || { echo "e2e: fake-desktop did not start"; cat "$work/fake-desktop.log"; exit 2; }
  driver $((port + 2)) "$bus"
  drc=0
  TAURI_DRIVER_PORT=$((port + 2)) node --test --test-concurrency=1 "${desktop[@]}" || drc=$?
  if [ "$drc" -ne 0 ]; then
    echo "--- tauri-driver log (last 40 lines)"; tail -40 "$work/tauri-driver-$((port + 2)).log" || true
    echo "--- fake-desktop log (last 20 lines)"; tail -20 "$work/fake-desktop.log" || true
    rc=$drc
  fi
fi
# The MCP/secrets and sign-in tests (mcp*.test.mjs, sign-in*.test.mjs) want a Secret Service for the app: inside
# tests/keychain/run.sh (gnome-keyring unlocked on a bus of its own) they get that bus; otherwise
# this script runs them again inside it (a nested run, its own Xvfb and driver); with no
# gnome-keyring (or E2E_KEYCHAIN=0) they run without a bus and assert the no-keychain message.
if [ ${#keychain[@]} -gt 0 ]; then
  krc=0
  if [ -n "${ACP_DESK_KEYCHAIN_HARNESS:-}" ]; then
    driver $((port + 4)) "${DBUS_SESSION_BUS_ADDRESS:-disabled:}"
    TAURI_DRIVER_PORT=$((port + 4)) node --test --test-concurrency=1 "${keychain[@]}" || krc=$?
  elif [ "${E2E_KEYCHAIN:-1}" != 0 ] && command -v gnome-keyring-daemon >/dev/null 2>&1; then
    E2E_TESTS="${keychain[*]}" E2E_PORT=$((port + 4)) tests/keychain/run.sh "$0" || krc=$?
  elif [ -n "${CI:-}" ] && [ "${E2E_KEYCHAIN:-1}" != 0 ]; then
    # CI installs gnome-keyring (scripts/deps --tests): without it the store tests would skip, green.
    echo "e2e: CI without gnome-keyring-daemon: ${keychain[*]} need a Secret Service (scripts/deps --tests installs it)" >&2
    krc=1
  else
    echo "e2e: no gnome-keyring-daemon (or E2E_KEYCHAIN=0): ${keychain[*]} run without a keychain"
    driver $((port + 4)) "disabled:"
    TAURI_DRIVER_PORT=$((port + 4)) node --test --test-concurrency=1 "${keychain[@]}" || krc=$?
  fi
  if [ "$krc" -ne 0 ]; then
    [ -f "$work/tauri-driver-$((port + 4)).log" ] &&
      { echo "--- tauri-driver log (last 40 lines)"; tail -40 "$work/tauri-driver-$((port + 4)).log" || true; }
    rc=$krc
  fi
fi
exit "$rc"
