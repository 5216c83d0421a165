#!/usr/bin/env bash
# run: client scenarios of the MCP conformance suite 0.2.0-alpha.12 (the 2026-07-28 revision),
# with mcpd as the client (mcpd-client.sh). "run.sh SCENARIO" runs one; "run.sh --requirements"
# runs the whole client set the revision requires and prints the table. Installs the pinned
# suite and Node 22 from package-lock.json first. The suite's mock servers bind every interface,
# so they run in a private network namespace with only loopback when this machine allows one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
arg=${1:?usage: run.sh SCENARIO | --requirements}
modules=$(bash "$here/../interop/npm-setup.sh" "$here") || exit $?
node22=$modules/node/bin/node
[ -x "$node22" ] || node22=$modules/.bin/node
cmd=("$node22" "$modules/@modelcontextprotocol/conformance/dist/index.js" client
     --command "bash $here/mcpd-client.sh" --timeout 60000)
if [ "$arg" = --requirements ]; then
    cmd+=(--requirements 2026-07-28)
else
    # The revision's rules (SEP-837's application_type, ...) apply to one scenario too.
    cmd+=(--scenario "$arg" --spec-version 2026-07-28)
fi
if command -v ip >/dev/null && unshare -n true 2>/dev/null; then
    exec unshare -n bash -c 'ip link set lo up && exec "$@"' run.sh "${cmd[@]}"
fi
echo "note: no private network namespace here; the mock servers bind all interfaces" >&2
exec "${cmd[@]}"
