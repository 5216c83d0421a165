#!/usr/bin/env bash
# npm-setup: install the pinned npm packages (package-lock.json) of a test folder once (default:
# this one), for every test that needs them. Prints the node_modules path; exits 77 (meson's
# "skipped") when node is missing.
set -euo pipefail
here=$(cd "${1:-$(dirname "$0")}" && pwd)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "SKIP: node/npm not installed; interop tests need them (apt-get install nodejs npm)" >&2
    exit 77
fi
stamp="$here/node_modules/.mcpd-lock-stamp"
(
    flock 9
    if [ ! -f "$stamp" ] || [ "$here/package-lock.json" -nt "$stamp" ]; then
        (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
        touch "$stamp"
    fi
) 9>"$here/.npm-setup.lock"
echo "$here/node_modules"
