#!/usr/bin/env bash
# Runs CMD ARGS... with a real Secret Service: its own D-Bus session bus (dbus-run-session) and
# gnome-keyring-daemon on it, its login keyring created and unlocked with a throwaway password,
# in a throwaway HOME and XDG folders. The daemon is ended after CMD; the exit status is CMD's.
#
#   tests/keychain/run.sh cargo nextest run -p acp-desk-tests --test keychain
#   tests/keychain/run.sh secret-tool search --all service dev.acpdesk.desk
#
# CMD sees ACP_DESK_KEYCHAIN_HARNESS=1 (the keychain tests refuse to run without it, so that
# they never touch the user's own keyring), the bus in DBUS_SESSION_BUS_ADDRESS, the keyring's
# password in ACP_DESK_KEYCHAIN_PASSWORD and the throwaway folder in ACP_DESK_KEYCHAIN_TMP. Cargo and
# rustup keep their own folders (CARGO_HOME and RUSTUP_HOME are set from the real HOME).
# Needs: dbus-run-session (dbus-daemon), gnome-keyring-daemon (gnome-keyring), and for the
# tests' cross-checks secret-tool (libsecret-tools): `scripts/deps --tests` installs them.
set -euo pipefail

if [ "${1:-}" = "--inside-bus" ]; then
  shift
  # The password only unlocks a keyring that lives in this run's throwaway folder.
  # --foreground keeps it our child (its pid is ours to end); --unlock reads the password
  # from stdin and creates the login keyring with it when there is none, which also makes it
  # the default collection.
  # printf, not a here-string: the newline would be part of the password.
  printf %s "$ACP_DESK_KEYCHAIN_PASSWORD" |
    gnome-keyring-daemon --foreground --unlock --components=secrets \
      >"$ACP_DESK_KEYCHAIN_TMP/daemon.log" 2>&1 &
  daemon=$!
  # shellcheck disable=SC2317 # called by the trap
  stop() {
    kill "$daemon" 2>/dev/null || true
    wait "$daemon" 2>/dev/null || true
  }
  trap stop EXIT
  owned() {
    dbus-send --session --print-reply --dest=org.freedesktop.DBus / \
      org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null |
      grep -q 'boolean true'
  }
  for _ in $(seq 1 100); do
    owned && break
    if ! kill -0 "$daemon" 2>/dev/null; then
      echo "tests/keychain/run.sh: gnome-keyring-daemon exited at once; its output:" >&2
      cat "$ACP_DESK_KEYCHAIN_TMP/daemon.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  if ! owned; then
    echo "tests/keychain/run.sh: gnome-keyring-daemon did not take org.freedesktop.secrets within 10 s; its output:" >&2
    cat "$ACP_DESK_KEYCHAIN_TMP/daemon.log" >&2
    exit 1
  fi
  set +e
  "$@"
  status=$?
  set -e
  exit "$status"
fi

if [ $# -eq 0 ]; then
  echo "usage: tests/keychain/run.sh CMD [ARGS...]" >&2
  exit 2
fi
for tool in dbus-run-session dbus-send gnome-keyring-daemon; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "tests/keychain/run.sh: $tool is missing: run scripts/deps --tests (or install dbus-daemon, dbus-bin and gnome-keyring)" >&2
    exit 1
  fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/acp-desk-keychain.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export HOME="$tmp/home"
export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_CACHE_HOME="$tmp/cache"
export XDG_RUNTIME_DIR="$tmp/run"
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$XDG_RUNTIME_DIR"
# No desktop to show an unlock prompt on: a locked keyring must fail, not wait for one.
unset DISPLAY WAYLAND_DISPLAY GNOME_KEYRING_CONTROL SSH_AUTH_SOCK
# The login keyring's password, a throwaway one (the tests lock and unlock it again).
export ACP_DESK_KEYCHAIN_PASSWORD=acp-desk-keychain-tests
export ACP_DESK_KEYCHAIN_HARNESS=1 ACP_DESK_KEYCHAIN_TMP="$tmp"
dbus-run-session -- "$0" --inside-bus "$@"
