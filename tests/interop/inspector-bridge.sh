#!/usr/bin/env bash
# inspector-bridge: MCP Inspector 2.12's CLI (pinned with the Node 22 it needs in inspector/)
# drives mcpd through `mcpctl bridge` with --protocol-era modern and auto, against the real
# server-everything (2025 era) upstream: tools/list and tools/call answer, and the traffic
# between Inspector and the bridge shows the 2026-07-28 era (no initialize, resultType). Then,
# through `mcpctl bridge --profile finder` (a profile in search mode), Inspector in both eras
# starts with mcpd's two tools, finds a tool with mcpd_search_tools (the legacy run is sent
# tools/list_changed), and calls it through mcpd_call_tool. Each Inspector CLI command is a
# connection of its own, and it calls only what that connection lists: the found tool is in the
# list of the connection that searched, not of the next one (the SDK clients, one connection
# each, see it join their list and call it by name: search-bridge.mjs).
# Needs MCPD_BINARY, MCPCTL_BINARY and EVERYTHING_JS (run through run.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=inspector-common.sh
. "$here/inspector-common.sh"
echo '{"profiles":{"finder":{"mode":"search"}}}' >"$dir/config/mcpd/mcpd.json"
start_mcpd

# The host's side of the bridge, recorded: what Inspector sends and what it gets back.
cat >"$dir/bridge.sh" <<EOF
#!/bin/sh
tee -a "$dir/host-in.log" | "$MCPCTL_BINARY" --socket "$sock" bridge --cwd "$dir/project" | tee -a "$dir/host-out.log"
EOF
# The same, for an agent of profile finder (Inspector passes its stdio server no environment
# of the test's: the option is in the script).
sed 's/ bridge / bridge --profile finder /' "$dir/bridge.sh" >"$dir/bridge-finder.sh"
chmod +x "$dir/bridge.sh" "$dir/bridge-finder.sh"

failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

run_inspector() {
    local era=$1
    shift
    : >"$dir/host-in.log"
    : >"$dir/host-out.log"
    timeout 120 "$node22" "$inspector" --cli --protocol-era "$era" -q --format json \
        --connect-timeout 60000 "$@" "${bridge_script:-$dir/bridge.sh}" 2>"$dir/inspector.err" || {
        fail "inspector --protocol-era $era $* exited with $? ($(cat "$dir/inspector.err"))"
        return 0
    }
}

for era in modern auto; do
    out=$(run_inspector "$era" --method tools/list)
    grep -q '"mcp_everything_echo"' <<<"$out" || fail "$era tools/list: $out"
    out=$(run_inspector "$era" --method tools/call --tool-name mcp_everything_get_sum \
        --tool-args-json '{"a":40,"b":2}')
    grep -q 'The sum of 40 and 2 is 42' <<<"$out" || fail "$era tools/call get-sum: $out"
    grep -q '"method":"initialize"' "$dir/host-in.log" &&
        fail "$era: Inspector fell back to initialize: $(head -c 600 "$dir/host-in.log")"
    grep -q '"io.modelcontextprotocol/protocolVersion":"2026-07-28"' "$dir/host-in.log" ||
        fail "$era: no 2026-07-28 request reached the bridge: $(head -c 600 "$dir/host-in.log")"
    grep -q '"resultType":"complete"' "$dir/host-out.log" ||
        fail "$era: results without resultType: $(head -c 600 "$dir/host-out.log")"
done

bridge_script=$dir/bridge-finder.sh
for era in legacy modern; do
    out=$(run_inspector "$era" --method tools/list)
    grep -q '"mcpd_search_tools"' <<<"$out" && ! grep -q '"mcp_everything_echo"' <<<"$out" ||
        fail "$era search mode tools/list: $out"
    out=$(run_inspector "$era" --method tools/call --tool-name mcpd_search_tools \
        --tool-args-json '{"query":"add two numbers","limit":3}')
    grep -q 'mcp_everything_get_sum' <<<"$out" || fail "$era mcpd_search_tools: $out"
    if [ "$era" = legacy ]; then
        grep -q '"method":"notifications/tools/list_changed"' "$dir/host-out.log" ||
            fail "$era: no tools/list_changed after the search: $(tail -c 600 "$dir/host-out.log")"
    fi
    out=$(run_inspector "$era" --method tools/call --tool-name mcpd_call_tool \
        --tool-args-json '{"name":"mcp_everything_get_sum","arguments":{"a":1,"b":2}}')
    grep -q 'The sum of 1 and 2 is 3' <<<"$out" || fail "$era mcpd_call_tool: $out"
done

if [ "$failures" -ne 0 ]; then
    echo "--- mcpd log" >&2
    cat "$dir/mcpd.log" >&2
    exit 1
fi
echo "inspector-bridge: all checks passed"
