#!/usr/bin/env bash
# run: the official MCP conformance suite's server scenarios (0.1.16, --suite all) against the
# fixture server twice, each behind supergateway (stdio -> Streamable HTTP): directly, and
# through mcpd with `mcpctl bridge --server fixture` (single-server passthrough). Prints both
# tables; fails unless every tools-*, resources-*, prompts-* and completion scenario has the
# same outcome through mcpd as directly. Installs the pinned packages (package-lock.json).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${MCPD_BINARY:?}" "${MCPCTL_BINARY:?}"
modules=$(bash "$here/../interop/npm-setup.sh" "$here") || exit $?
node22=$modules/node/bin/node
[ -x "$node22" ] || node22=$modules/.bin/node
tmp=$(mktemp -d /tmp/mcpd-conf-server.XXXXXX)
pids=()
cleanup() {
    local status=$? p
    for p in "${pids[@]}"; do
        kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null
    done
    rm -rf "$tmp"
    exit "$status"
}
trap cleanup EXIT
# A free loopback port, from the kernel.
free_port() {
    "$node22" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
# gateway PORT CMD: supergateway serving the stdio server CMD on 127.0.0.1:PORT/mcp.
gateway() {
    "$node22" "$modules/supergateway/dist/index.js" --stdio "$2" --outputTransport streamableHttp \
        --stateful --port "$1" --logLevel none >"$tmp/gateway-$1.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 400); do
        "$node22" -e 'require("net").connect(+process.argv[1],"127.0.0.1").on("connect",()=>process.exit(0)).on("error",()=>process.exit(1))' "$1" && return 0
        sleep 0.05
    done
    echo "supergateway did not listen on port $1" >&2
    return 1
}
# suite PORT OUT: the scenario lines of one run ("name: N passed, M failed").
suite() {
    "$node22" "$modules/@modelcontextprotocol/conformance/dist/index.js" server \
        --url "http://127.0.0.1:$1/mcp" --suite all >"$2.raw" 2>&1 || true
    grep -E '^[^ ]+ [a-z0-9-]+: [0-9]+ passed, [0-9]+ failed' "$2.raw" | sed 's/^[^ ]* //' >"$2"
    [ -s "$2" ] || { echo "no scenario results:" >&2; cat "$2.raw" >&2; return 1; }
}

fixture="$node22 $here/fixture.mjs"
direct=$(free_port)
gateway "$direct" "$fixture"
suite "$direct" "$tmp/direct"

mkdir -m 0700 "$tmp/run"
printf '{"mcpServers": {"fixture": {"command": "%s", "args": ["%s/fixture.mjs"]}}}\n' \
    "$node22" "$here" >"$tmp/mcp.json"
export XDG_RUNTIME_DIR=$tmp/run XDG_CONFIG_HOME=$tmp/config XDG_CACHE_HOME=$tmp/cache HOME=$tmp
sock=$tmp/run/mcpd.sock
"$MCPD_BINARY" --config "$tmp/mcp.json" --socket "$sock" >"$tmp/mcpd.log" 2>&1 &
pids+=($!)
for _ in $(seq 400); do [ -S "$sock" ] && break; sleep 0.05; done
"$MCPCTL_BINARY" --socket "$sock" --timeout 60000 wait fixture >/dev/null
via=$(free_port)
gateway "$via" "$MCPCTL_BINARY --socket $sock bridge --server fixture"
suite "$via" "$tmp/mcpd"

echo "== directly (supergateway -> fixture)"
cat "$tmp/direct"
echo "== through mcpd (supergateway -> mcpctl bridge --server fixture -> mcpd -> fixture)"
cat "$tmp/mcpd"
status=0
for s in $(sed 's/:.*//' "$tmp/direct" | grep -E '^(tools-|resources-|prompts-|completion)'); do
    a=$(grep "^$s:" "$tmp/direct")
    b=$(grep "^$s:" "$tmp/mcpd" || echo "$s: missing")
    if [ "$a" != "$b" ]; then
        echo "DIFFERS: directly [$a], through mcpd [$b]" >&2
        status=1
    fi
done
[ "$status" -eq 0 ] && echo "tools-*, resources-*, prompts-* and completion: the same through mcpd as directly"
exit "$status"
