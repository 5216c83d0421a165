#!/usr/bin/env bash
# mcpd-client: the "client under test" for the MCP conformance suite. The suite runs it with
# the scenario's server URL as the last argument and the scenario in $MCP_CONFORMANCE_SCENARIO;
# it starts mcpd with that URL as its only upstream (transport auto) and drives the scenario
# through mcpd's socket with mcpctl. Exit 0 only if every step worked.
set -uo pipefail
url=${!#}
: "${MCPD_BINARY:?MCPD_BINARY is not set}" "${MCPCTL_BINARY:?MCPCTL_BINARY is not set}"
tmp=$(mktemp -d /tmp/mcpd-conf.XXXXXX)
mcpd_pid=
cleanup() {
    if [ -n "$mcpd_pid" ] && kill -0 "$mcpd_pid" 2>/dev/null; then
        kill -TERM "$mcpd_pid"
        wait "$mcpd_pid" 2>/dev/null
    fi
    if [ -n "${MCPD_CONFORMANCE_NOTES:-}" ]; then
        grep -E '\[conf\] (stream dropped|resuming)' "$tmp/mcpd.log" >>"$MCPD_CONFORMANCE_NOTES"
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
    echo "mcpd-client: $*" >&2
    echo "--- mcpd log" >&2
    cat "$tmp/mcpd.log" >&2
    exit 1
}

mkdir -m 0700 "$tmp/run"
# auth/*: the sign-in options a user would write, taken from the scenario's context.
ctx=${MCP_CONFORMANCE_CONTEXT:-}
ctx_get() { printf '%s' "$ctx" | python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1], ""))' "$1"; }
oauth='{}'
case "${MCP_CONFORMANCE_SCENARIO:-}" in
auth/basic-cimd) oauth='{"clientMetadataUrl": "https://conformance-test.local/client-metadata.json"}' ;;
auth/pre-registration)
    oauth=$(printf '{"clientId": "%s", "clientSecret": "%s"}' "$(ctx_get client_id)" "$(ctx_get client_secret)") ;;
auth/client-credentials-basic)
    oauth=$(printf '{"grantType": "client_credentials", "clientId": "%s", "clientSecret": "%s"}' \
        "$(ctx_get client_id)" "$(ctx_get client_secret)") ;;
auth/client-credentials-jwt)
    oauth=$(printf '%s' "$ctx" | python3 -c 'import json,sys; c=json.load(sys.stdin)
print(json.dumps({"grantType": "client_credentials", "clientId": c["client_id"],
                  "privateKey": c["private_key_pem"], "signingAlgorithm": c["signing_algorithm"]}))') ;;
auth/cross-app-access-complete-flow)
    oauth=$(printf '%s' "$ctx" | python3 -c 'import json,sys; c=json.load(sys.stdin)
print(json.dumps({"grantType": "jwt-bearer", "clientId": c["client_id"],
                  "clientSecret": c["client_secret"], "idToken": c["idp_id_token"],
                  "idpTokenEndpoint": c["idp_token_endpoint"], "idpClientId": c["idp_client_id"]}))') ;;
esac
printf '{"mcpServers": {"conf": {"url": "%s", "timeout": 20000, "oauth": %s}}}\n' "$url" "$oauth" >"$tmp/mcp.json"
export XDG_RUNTIME_DIR=$tmp/run XDG_CONFIG_HOME=$tmp/config XDG_CACHE_HOME=$tmp/cache HOME=$tmp
sock=$tmp/run/mcpd.sock
ctl() { "$MCPCTL_BINARY" --socket "$sock" --timeout 20000 "$@"; }

$MCPD_BINARY --config "$tmp/mcp.json" --socket "$sock" --log-level debug >"$tmp/mcpd.log" 2>&1 &
mcpd_pid=$!
for _ in $(seq 200); do
    [ -S "$sock" ] && break
    kill -0 "$mcpd_pid" 2>/dev/null || fail "mcpd exited at start-up"
    sleep 0.05
done
[ -S "$sock" ] || fail "mcpd did not create its socket"
case "${MCP_CONFORMANCE_SCENARIO:-}" in
auth/client-credentials-* | auth/cross-app-access-*)
    # mcpd gets its own token on the 401 (nobody logs in); the server shows failed meanwhile.
    for _ in $(seq 50); do
        ctl wait conf >/dev/null && break
        sleep 0.2
    done
    ;;
auth/authorization-server-migration)
    # The resource names another authorization server after the first sign-in: its token is
    # refused, mcpd asks for sign-in again, and that login registers anew there (SEP-2352).
    ctl wait conf >/dev/null
    ctl login conf --headless >/dev/null || fail "login failed"
    ctl wait conf >/dev/null || ctl login conf --headless >/dev/null || fail "second login failed"
    ;;
auth/*)
    # mcpd shows the server as needing sign-in; the headless login follows the redirect.
    ctl wait conf >/dev/null
    ctl login conf --headless >/dev/null || fail "login failed"
    ;;
esac
ctl wait conf >/dev/null || fail "server did not connect: $(ctl status)"
tools=$(ctl tools) || fail "tools/list through mcpd failed"

# call TOOL ARGS EXPECTED: the tool's text must contain EXPECTED.
call() {
    local out
    out=$(ctl call "$1" "$2") || fail "tools/call $1 failed: $out"
    case "$out" in
    *"$3"*) ;;
    *) fail "tools/call $1 gave: $out" ;;
    esac
}

case "${MCP_CONFORMANCE_SCENARIO:-}" in
initialize) ;;
tools_call) call mcp_conf_add_numbers '{"a":2,"b":3}' "5" ;;
sse-retry) call mcp_conf_test_reconnection '{}' "Reconnection test completed successfully" ;;
auth/*)
    # A 403 insufficient_scope asks for a step-up sign-in; mcpd refuses an endless one.
    for _ in 1 2 3 4; do
        out=$(ctl call mcp_conf_test_tool '{}' 2>&1) && break
        case "$out" in
        *insufficient_scope*) ctl login conf --headless >/dev/null || fail "step-up login failed" ;;
        *) fail "tools/call test-tool failed: $out" ;;
        esac
    done
    case "$out" in *test*) ;; *) fail "tools/call test-tool gave: $out" ;; esac
    ;;
*)
    # Other scenarios are driven by an agent program on the socket when one is given.
    [ -n "${MCPD_CONF_AGENT:-}" ] ||
        fail "scenario '${MCP_CONFORMANCE_SCENARIO:-}' is not driven by this wrapper (tools: $tools)"
    python3 "$MCPD_CONF_AGENT" "$sock" || fail "the agent's steps failed"
    ;;
esac
kill -TERM "$mcpd_pid"
wait "$mcpd_pid" || fail "mcpd exited with status $? on SIGTERM"
mcpd_pid=
exit 0
