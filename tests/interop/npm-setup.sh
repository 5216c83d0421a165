#!/usr/bin/env bash
# npm-setup: install the pinned npm packages (package-lock.json) of a test folder once (default:
# this one), for every test that needs them. Prints the node_modules path. Exits 77 (meson's
# "skipped") with a one-line reason when node/npm is missing or the npm registry cannot be
# reached; with CI=true those are failures instead (exit 1), so CI never skips these suites.
set -euo pipefail
here=$(cd "${1:-$(dirname "$0")}" && pwd)
# How long one registry request may take before the registry counts as unreachable: npm's own
# default is 5 minutes, far too long for a test that should say "skipped" quickly offline.
fetch_timeout_ms=20000
skip() {
    if [ "${CI:-}" = true ]; then
        echo "FAIL (CI=true, so no skipping): $*" >&2
        exit 1
    fi
    echo "SKIP: $*" >&2
    exit 77
}
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    skip "node/npm not installed; interop tests need them (bash .ci/deps --test)"
fi
stamp="$here/node_modules/.mcpd-lock-stamp"
status=0
(
    flock 9
    if [ ! -f "$stamp" ] || [ "$here/package-lock.json" -nt "$stamp" ]; then
        if ! (cd "$here" && npm ci --no-audit --no-fund --loglevel=error \
            --fetch-timeout="$fetch_timeout_ms" --fetch-retries=1 >&2); then
            # Was it the network? Then skip (outside CI); anything else is a real failure.
            if ! npm ping --fetch-timeout="$fetch_timeout_ms" --fetch-retries=0 >/dev/null 2>&1; then
                exit 77
            fi
            exit 1
        fi
        touch "$stamp"
    fi
) 9>"$here/.npm-setup.lock" || status=$?
if [ "$status" -eq 77 ]; then
    skip "the npm registry ($(npm config get registry 2>/dev/null)) is unreachable; cannot install $here/package-lock.json"
elif [ "$status" -ne 0 ]; then
    echo "npm ci failed in $here (see above)" >&2
    exit "$status"
fi
echo "$here/node_modules"
