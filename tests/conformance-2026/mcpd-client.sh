#!/usr/bin/env bash
# mcpd-client: the "client under test" for the conformance suite's 2026-07-28 client scenarios.
# The suite runs it with the scenario's server URL as the last argument and the scenario in
# $MCP_CONFORMANCE_SCENARIO; it starts mcpd with that URL as its only upstream (protocol auto)
# and drives the scenario through mcpd's socket with agent.py, a 2025-era agent. Exit 0 only if
# every step worked.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
url=${!#}
case "${MCP_CONFORMANCE_SCENARIO:-}" in
auth/* | tools_call)
    # The same flows as in the 2025 era (sign-in with mcpctl login, one call): the 2025
    # wrapper drives them; mcpd speaks whichever era the scenario's server does.
    exec bash "$here/../conformance/mcpd-client.sh" "$@"
    ;;
esac
: "${MCPD_BINARY:?MCPD_BINARY is not set}"
tmp=$(mktemp -d /tmp/mcpd-conf26.XXXXXX)
mcpd_pid=
cleanup() {
    if [ -n "$mcpd_pid" ] && kill -0 "$mcpd_pid" 2>/dev/null; then
        kill -TERM "$mcpd_pid"
        wait "$mcpd_pid" 2>/dev/null
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
printf '{"mcpServers": {"conf": {"url": "%s", "timeout": 20000}}}\n' "$url" >"$tmp/mcp.json"
export XDG_RUNTIME_DIR=$tmp/run XDG_CONFIG_HOME=$tmp/config XDG_CACHE_HOME=$tmp/cache HOME=$tmp
sock=$tmp/run/mcpd.sock
$MCPD_BINARY --config "$tmp/mcp.json" --socket "$sock" --log-level debug >"$tmp/mcpd.log" 2>&1 &
mcpd_pid=$!
for _ in $(seq 200); do
    [ -S "$sock" ] && break
    kill -0 "$mcpd_pid" 2>/dev/null || fail "mcpd exited at start-up"
    sleep 0.05
done
[ -S "$sock" ] || fail "mcpd did not create its socket"
python3 "$here/agent.py" "$sock" || fail "the agent's steps failed"
kill -TERM "$mcpd_pid"
wait "$mcpd_pid" || fail "mcpd exited with status $? on SIGTERM"
mcpd_pid=
exit 0
