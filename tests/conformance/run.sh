#!/usr/bin/env bash
# run: one client scenario of the official MCP conformance suite, with mcpd as the client
# (mcpd-client.sh). Installs the pinned suite and Node 22 from package-lock.json first. The
# suite's mock servers bind every interface, so they run in a private network namespace with
# only loopback when this machine allows one (root); otherwise on the host, reached over
# localhost only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scenario=${1:?usage: run.sh SCENARIO}
modules=$(bash "$here/../interop/npm-setup.sh" "$here") || exit $?
node22=$modules/node/bin/node
[ -x "$node22" ] || node22=$modules/.bin/node
cmd=("$node22" "$modules/@modelcontextprotocol/conformance/dist/index.js" client
     --command "bash $here/mcpd-client.sh" --scenario "$scenario" --timeout 60000)
# mcpd-client.sh copies mcpd's HTTP timing lines here (when a stream dropped, when mcpd resumed
# it): printed after the suite, so a timing verdict (sse-retry) can be told apart from load.
MCPD_CONFORMANCE_NOTES=$(mktemp /tmp/mcpd-conf-notes.XXXXXX)
export MCPD_CONFORMANCE_NOTES
trap 'rm -f "$MCPD_CONFORMANCE_NOTES"' EXIT
status=0
if command -v ip >/dev/null && unshare -n true 2>/dev/null; then
    unshare -n bash -c 'ip link set lo up && exec "$@"' run.sh "${cmd[@]}" || status=$?
else
    echo "note: no private network namespace here; the mock servers bind all interfaces" >&2
    "${cmd[@]}" || status=$?
fi
if [ -s "$MCPD_CONFORMANCE_NOTES" ]; then
    echo "--- mcpd's stream timing (mcpd log):" >&2
    cat "$MCPD_CONFORMANCE_NOTES" >&2
fi
exit "$status"
