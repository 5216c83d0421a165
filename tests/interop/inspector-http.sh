#!/usr/bin/env bash
# inspector-http: MCP Inspector 2.12's CLI (pinned with the Node 22 it needs in inspector/)
# talks Streamable HTTP to mcpd's loopback port (`--transport http --header "Authorization:
# Bearer ..."`), with --protocol-era legacy (2025 sessions) and modern (2026-07-28), on /mcp and
# /servers/everything/mcp, against the real server-everything upstream: every method its CLI
# has (tools/list and call, resources/list, read and templates, prompts/list and get,
# logging/setLevel, which 2026-07-28 has no more), and refused without the token. The CLI has no Unix-socket transport,
# and no subscribe, completion, sampling or elicitation (its web UI does them): docs/http.md.
# Needs MCPD_BINARY, MCPCTL_BINARY and EVERYTHING_JS (run through run.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=inspector-common.sh
. "$here/inspector-common.sh"
start_mcpd --listen 127.0.0.1:0
port=$(sed -n 's/.*serving MCP over HTTP on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$dir/mcpd.log" | head -1)
token=$("$MCPCTL_BINARY" --socket "$sock" http-token)
[ -n "$port" ] && [ -n "$token" ] || {
    echo "FAIL: no loopback port or token: $(cat "$dir/mcpd.log")" >&2
    exit 1
}

failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# inspector ERA PATH ARGS...: one CLI run (a connection of its own), its JSON on stdout.
inspector() {
    local era=$1 path=$2
    shift 2
    timeout 120 "$node22" "$inspector" --cli --protocol-era "$era" -q --format json \
        --connect-timeout 60000 --transport http --server-url "http://127.0.0.1:$port$path" \
        --header "Authorization: Bearer $token" "$@" 2>"$dir/inspector.err" || {
        fail "inspector --protocol-era $era $path $* exited with $? ($(cat "$dir/inspector.err"))"
        return 0
    }
}

# expect WHAT PATTERN OUTPUT
expect() {
    grep -q -- "$2" <<<"$3" || fail "$1: no '$2' in: $(head -c 600 <<<"$3")"
}

# Each CLI run starts Node 22 and the Inspector (seconds): every method once on the aggregate
# in the 2025 era, the calls again in 2026-07-28 and on one server's endpoint.
w="legacy /mcp"
out=$(inspector legacy /mcp --method tools/list)
expect "$w tools/list" '"mcp_everything_echo"' "$out"
out=$(inspector legacy /mcp --method resources/list)
expect "$w resources/list" 'demo://resource/static/document/architecture.md' "$out"
out=$(inspector legacy /mcp --method resources/templates/list)
expect "$w resources/templates/list" 'demo://resource/dynamic/text/{resourceId}' "$out"
out=$(inspector legacy /mcp --method prompts/list)
expect "$w prompts/list" '"mcp_everything_args_prompt"' "$out"
out=$(inspector legacy /mcp --method logging/setLevel --log-level warning)
expect "$w logging/setLevel" '"result"' "$out"
for era in legacy modern; do
    for path in /mcp /servers/everything/mcp; do
        # mcpd's names on the aggregate, the server's own on its endpoint.
        if [ "$path" = /mcp ]; then sum=mcp_everything_get_sum prompt=mcp_everything_args_prompt; else sum=get-sum prompt=args-prompt; fi
        w="$era $path"
        out=$(inspector "$era" "$path" --method tools/call --tool-name "$sum" --tool-args-json '{"a":40,"b":2}')
        expect "$w tools/call" 'The sum of 40 and 2 is 42' "$out"
        [ "$path" = /mcp ] || continue
        out=$(inspector "$era" "$path" --method resources/read --uri demo://resource/static/document/architecture.md)
        expect "$w resources/read" 'Everything Server' "$out"
        out=$(inspector "$era" "$path" --method prompts/get --prompt-name "$prompt" --prompt-args city=Paris)
        expect "$w prompts/get" "What's weather in Paris?" "$out"
    done
done

# Without the token: refused, and the CLI says so.
if timeout 120 "$node22" "$inspector" --cli -q --format json --connect-timeout 60000 --transport http \
    --server-url "http://127.0.0.1:$port/mcp" --stored-auth-only --method tools/list \
    >"$dir/notoken.out" 2>&1; then
    fail "tools/list without the token succeeded: $(head -c 600 "$dir/notoken.out")"
fi
grep -q '401\|auth' "$dir/notoken.out" || fail "no 401 without the token: $(head -c 600 "$dir/notoken.out")"

if [ "$failures" -ne 0 ]; then
    echo "--- mcpd log" >&2
    cat "$dir/mcpd.log" >&2
    exit 1
fi
echo "inspector-http: all checks passed"
