#!/usr/bin/env bash
# server: the official conformance suite's server scenarios (0.1.16, --suite all) scored twice:
# against the fixture server alone (tests/interop/conformance-fixture.mjs over Streamable HTTP)
# and against mcpd's /servers/fixture/mcp in front of the same fixture (a stdio upstream), so
# that every scenario is mcpd's own HTTP layer plus its pass-through. Prints one line per
# scenario (alone, through mcpd) and fails when a scenario passes alone and fails through mcpd.
# Needs MCPD_BINARY and MCPCTL_BINARY; installs the pinned suite, Node 22 and the SDK.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${MCPD_BINARY:?}" "${MCPCTL_BINARY:?}"
conf=$(bash "$here/../interop/npm-setup.sh" "$here") || exit $?
bash "$here/../interop/npm-setup.sh" "$here/../interop" >/dev/null || exit $?
scratch_name=conf-server
# shellcheck source=server-common.sh
. "$here/server-common.sh"

# The fixture alone.
port=$(free_port)
PORT=$port "$node22" "$fixture" http 2>"$dir/fixture.log" &
pids+=($!)
# mcpd in front of it (the fixture on stdio), HTTP on loopback.
sock=$dir/run/mcpd.sock
printf '{"mcpServers":{"fixture":{"command":"%s","args":["%s","stdio"],"timeout":60000}}}\n' \
    "$node22" "$fixture" >"$dir/mcp.json"
"$MCPD_BINARY" --config "$dir/mcp.json" --socket "$sock" --listen 127.0.0.1:0 2>"$dir/mcpd.log" &
pids+=($!)
for _ in $(seq 400); do grep -q "serving MCP over HTTP" "$dir/mcpd.log" 2>/dev/null && [ -S "$sock" ] && break; sleep 0.05; done
mport=$(sed -n 's/.*serving MCP over HTTP on 127.0.0.1 port \([0-9]*\).*/\1/p' "$dir/mcpd.log" | head -1)
"$MCPCTL_BINARY" --socket "$sock" --timeout 60000 wait fixture >/dev/null
token=$("$MCPCTL_BINARY" --socket "$sock" http-token)
for _ in $(seq 200); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done

# The suite's client cannot add a header: the token rides in the query (docs/http.md).
run() { "$node22" "$suite" server --url "$1" --suite all >"$2" 2>&1 || true; }
run "http://127.0.0.1:$port/mcp" "$dir/alone.txt"
run "http://127.0.0.1:$mport/servers/fixture/mcp?token=$token" "$dir/mcpd.txt"

# "✓ name: N passed, M failed" per scenario (✗ when it failed).
verdicts() { sed -n 's/^\([✓✗]\) \([^:]*\): .*/\2 \1/p' "$1" | sort; }
verdicts "$dir/alone.txt" >"$dir/alone.v"
verdicts "$dir/mcpd.txt" >"$dir/mcpd.v"
if [ ! -s "$dir/alone.v" ] || [ ! -s "$dir/mcpd.v" ]; then
    echo "FAIL: the suite printed no scenario lines" >&2
    tail -30 "$dir/alone.txt" "$dir/mcpd.txt" "$dir/mcpd.log" >&2
    exit 1
fi
printf '%-36s %-6s %-6s\n' scenario alone mcpd
status=0
while read -r name alone; do
    through=$(awk -v n="$name" '$1 == n { print $2 }' "$dir/mcpd.v")
    printf '%-36s %-6s %-6s\n' "$name" "$alone" "${through:-none}"
    if [ "$alone" = "✓" ] && [ "$through" != "✓" ]; then
        echo "FAIL: $name passes alone and fails through mcpd:" >&2
        grep -A12 "$name" "$dir/mcpd.txt" | head -30 >&2
        status=1
    fi
done <"$dir/alone.v"
grep -h "^Total" "$dir/alone.txt" "$dir/mcpd.txt" || true
exit "$status"
