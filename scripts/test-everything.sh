#!/usr/bin/env bash
# Installs everything the tests need (Debian packages, npm packages) and runs every test:
# the build, then the whole vitest suite inside a private D-Bus session with an unlocked
# gnome-keyring (for the OS keychain tests) and Debian's Chromium (for the consent page), with lint,
# format and types checked alongside; any of them failing fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v dbus-run-session >/dev/null || missing+=(dbus)
command -v gnome-keyring-daemon >/dev/null || missing+=(gnome-keyring)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v script >/dev/null || missing+=(bsdutils)
command -v zsh >/dev/null || missing+=(zsh)
command -v faketime >/dev/null || missing+=(faketime)
# The Python template of `mkt init` runs on Debian's Flask and PyJWT (test/init).
/usr/bin/python3 -c 'import flask, jwt' 2>/dev/null || missing+=(python3-flask python3-jwt)
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
    echo "Need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  echo "apt-get update (quiet; this can take a minute)…"
  $sudo apt-get update -qq
  echo "apt-get install ${missing[*]} dbus-x11 (quiet; this can take a few minutes)…"
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" dbus-x11 >/dev/null
fi

# Node 22 and 24 for test/package (the binary inside the registry's package; kept apart so that
# their `node` never shadows the project's on the PATH of npm scripts): installed beside the project's
# own packages, by the machine's npm; waited for before the tests.
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
npm ci --prefix test/package/node-versions --no-audit --no-fund >"$logs/node-versions" 2>&1 &
versions=$!
npm ci --no-audit --no-fund
# npm finds its global config file (a CA file, a registry, a proxy) under the prefix of the Node it
# runs on; on the project's Node below, that would be node_modules/node/etc/npmrc. Every npm from
# here on (and in the tests) reads the machine's own, as `npm run` would pass it.
export npm_config_globalconfig="${npm_config_globalconfig:-$(npm config get globalconfig)}"
# mkt needs Node.js 22.13 or newer; the machine's own may be older. The project's pinned Node (the
# `node` dev dependency, from the npm registry) goes first on the PATH, as `npm run` does.
export PATH="$PWD/node_modules/.bin:$PATH"
echo "Node.js $(node --version) from $(command -v node)"
# The build first, then the tests, which need only it and the Node versions; lint (eslint and
# prettier) and types alongside from the start, at a lower priority (nice: the build and the tests go
# first; they take what the two cores leave). Each step's output is printed whole once it ends (lint
# and types: in the middle of the tests' output); the run fails if any step failed, after the tests.
step() { # NAME COMMAND...: runs it, then prints its status and output at once; exits with its code
  local name=$1 code=0
  shift
  "$@" >"$logs/$name" 2>&1 || code=$?
  { [ "$code" -eq 0 ] && echo "── $name: ok" || echo "── $name: FAILED"; cat "$logs/$name"; } >"$logs/$name.report"
  cat "$logs/$name.report"
  return "$code"
}
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$logs"' EXIT
step lint nice -n 10 npm run lint &
lint=$!
step typecheck nice -n 10 npm run typecheck &
typecheck=$!
failed=()
step build sh -c 'npm run clean && npm run build' || failed+=(build)
wait "$versions" && status=ok || { status=FAILED; failed+=(node-versions); }
echo "── node-versions: $status"
cat "$logs/node-versions"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
# The ten slowest test files are printed just before vitest's summary (test/support/run-order.ts).
tests=0
./scripts/with-keyring.sh node_modules/.bin/vitest run || tests=$?
wait "$lint" || failed+=(lint)
wait "$typecheck" || failed+=(typecheck)
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]} (output above)" >&2
  exit 1
fi
exit "$tests"
