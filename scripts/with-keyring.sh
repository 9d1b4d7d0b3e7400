#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with an unlocked gnome-keyring (the Secret Service),
# so the keychain tests use a real OS keychain without touching the user's own.
set -euo pipefail
# Output that goes to a file or a pipe (a CI log) carries no colour codes; vitest colours it otherwise.
[ -t 1 ] || export NO_COLOR=1
if [ -z "${MKT_KEYRING_SESSION:-}" ]; then
  export MKT_KEYRING_SESSION=1
  # The bus daemon logs service activations to stderr; they are noise after the test summary.
  exec dbus-run-session --dbus-daemon="$(dirname "$0")/quiet-dbus-daemon.sh" -- "$0" "$@"
fi
# A throwaway keyring in a temporary home, created and unlocked with a throwaway password.
keyring_home=$(mktemp -d)
trap 'rm -rf "$keyring_home"' EXIT
export HOME="$keyring_home" XDG_DATA_HOME="$keyring_home/data" XDG_RUNTIME_DIR="$keyring_home/run"
mkdir -p "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
printf 'mkt-test' | gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null
export MKT_TEST_KEYCHAIN=1
"$@"
