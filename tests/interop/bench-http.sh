#!/usr/bin/env bash
# bench-http: the HTTP call-overhead figures of the README. Runs server-everything
# (streamableHttp) and mcpd in a private network namespace and bench-http.mjs against both.
# Usage: bench-http.sh BUILD_DIR [calls]   (use a release build for figures)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: bench-http.sh BUILD_DIR [calls]}" && pwd)
calls=${2:-2000}
modules=$(bash "$here/npm-setup.sh")
exec unshare -n bash -s "$here" "$build" "$calls" "$modules" <<'INNER'
set -euo pipefail
here=$1 build=$2 calls=$3 modules=$4
ip link set lo up
tmp=$(mktemp -d /tmp/mcpd-bench-http.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$tmp"' EXIT
PORT=3101 node "$modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp \
    >"$tmp/everything.log" 2>&1 &
printf '{"mcpServers": {"eh": {"type": "http", "url": "http://127.0.0.1:3101/mcp"}}}\n' >"$tmp/mcp.json"
for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/3101) 2>/dev/null && break; sleep 0.1; done
mkdir -m 0700 "$tmp/run"
XDG_RUNTIME_DIR=$tmp/run HOME=$tmp XDG_CACHE_HOME=$tmp/cache \
    "$build/daemon/mcpd" --config "$tmp/mcp.json" --socket "$tmp/run/mcpd.sock" \
    --log-level warning >"$tmp/mcpd.log" 2>&1 &
for _ in $(seq 200); do [ -S "$tmp/run/mcpd.sock" ] && break; sleep 0.05; done
"$build/client/mcpctl" --socket "$tmp/run/mcpd.sock" --timeout 30000 wait eh >/dev/null
cd "$here"
node bench-http.mjs http://127.0.0.1:3101/mcp "$tmp/run/mcpd.sock" mcp_eh_echo "$calls"
INNER
