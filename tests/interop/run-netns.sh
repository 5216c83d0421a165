#!/usr/bin/env bash
# run-netns: run.sh inside a private network namespace with only loopback, because the npm
# servers bind every interface. Where this machine allows no namespace (not root), run on the
# host with ports picked at random instead of the fixed ones, reached over 127.0.0.1 only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bash "$here/npm-setup.sh" >/dev/null || exit $? # needs the registry: before the namespace
if command -v ip >/dev/null && unshare -n true 2>/dev/null; then
    exec unshare -n bash -c 'ip link set lo up && exec bash "$0" "$@"' "$here/run.sh" "$@"
fi
echo "note: no private network namespace here; server-everything binds all interfaces" >&2
export EVERYTHING_PORT_BASE=$((20000 + RANDOM % 20000))
exec bash "$here/run.sh" "$@"
