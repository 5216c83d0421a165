#!/usr/bin/env bash
# run: install the pinned npm packages that workloads 6 (server-everything, from tests/interop)
# and 7 (mcp-hub, from tests/bench/peer) need, then run the benchmark. Without node and npm
# those two workloads say they were skipped and the others still run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# Prints the node_modules path of one package dir, or nothing when node/npm are missing.
modules() {
    local status=0 out
    out=$(bash "$here/../interop/npm-setup.sh" "$1") || status=$?
    [ $status -eq 0 ] || [ $status -eq 77 ] || exit $status
    [ $status -ne 0 ] || echo "$out"
}
interop=$(modules "$here/../interop")
peer=$(modules "$here/peer")
if [ -n "$interop" ]; then
    export EVERYTHING_JS="$interop/@modelcontextprotocol/server-everything/dist/index.js"
fi
if [ -n "$peer" ]; then
    export MCP_HUB_JS="$peer/mcp-hub/dist/cli.js" MCP_HUB_PRELOAD="$here/peer/loopback.cjs"
fi
exec "$@"
