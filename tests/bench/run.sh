#!/usr/bin/env bash
# run: install the pinned npm packages that workloads 6 (server-everything, from tests/interop)
# and 7 (mcp-hub, from tests/bench/peer) need, then run the benchmark. Without node and npm
# those two workloads say they were skipped and the others still run.
# `run.sh --peers CMD...` (the bench-peers benchmark, peer/mcp-peers.mjs) needs only the packages
# of tests/bench/peer, and without them it is skipped (exit 77, or a failure with CI=true).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
peers_only=false
if [ "${1:-}" = --peers ]; then
    peers_only=true
    shift
fi
# Prints the node_modules path of one package dir, or nothing when node/npm are missing.
modules() {
    local status=0 out
    out=$(bash "$here/../interop/npm-setup.sh" "$1") || status=$?
    [ $status -eq 0 ] || [ $status -eq 77 ] || exit $status
    [ $status -ne 0 ] || echo "$out"
}
if $peers_only; then
    peer=$(modules "$here/peer")
    [ -n "$peer" ] || exit 77 # npm-setup.sh said why
    export PEER_MODULES="$peer"
    exec "$@"
fi
interop=$(modules "$here/../interop")
peer=$(modules "$here/peer")
if [ -n "$interop" ]; then
    export EVERYTHING_JS="$interop/@modelcontextprotocol/server-everything/dist/index.js"
fi
if [ -n "$peer" ]; then
    export MCP_HUB_JS="$peer/mcp-hub/dist/cli.js" MCP_HUB_PRELOAD="$here/peer/loopback.cjs"
fi
exec "$@"
