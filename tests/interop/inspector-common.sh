# inspector-common: sourced by the Inspector interop scripts (inspector-bridge.sh,
# inspector-http.sh): the pinned Inspector 2.12 and the Node 22 it needs (inspector/), a scratch
# dir $dir that is removed at exit with the mcpd started as $mcpd_pid, and a private HOME and
# XDG dirs in it (Inspector keeps state under ~/.mcp-inspector).
# Needs MCPD_BINARY, MCPCTL_BINARY and EVERYTHING_JS (run through run.sh).
modules=$(bash "$here/npm-setup.sh" "$here/inspector") || exit $?
node22=$modules/node/bin/node
[ -x "$node22" ] || node22=$modules/.bin/node
inspector=$modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
: "${MCPD_BINARY:?}" "${MCPCTL_BINARY:?}" "${EVERYTHING_JS:?}"

dir=$(mktemp -d "${TMPDIR:-/tmp}/mcpd-inspector-XXXXXX")
mcpd_pid=
cleanup() {
    if [ -n "$mcpd_pid" ]; then
        kill "$mcpd_pid" 2>/dev/null || true
        wait "$mcpd_pid" 2>/dev/null || true
    fi
    rm -rf "$dir"
}
trap cleanup EXIT
mkdir -m 700 "$dir/home" "$dir/config" "$dir/config/mcpd" "$dir/cache" "$dir/run" "$dir/project"
export HOME=$dir/home XDG_CONFIG_HOME=$dir/config XDG_CACHE_HOME=$dir/cache XDG_RUNTIME_DIR=$dir/run
sock=$dir/run/mcpd.sock
printf '{"mcpServers":{"everything":{"command":"%s","args":["%s","stdio"],"timeout":60000}}}\n' \
    "$(command -v node)" "$EVERYTHING_JS" >"$dir/mcp.json"

# start_mcpd [OPTION...]: mcpd on $sock with $dir/mcp.json (its log in $dir/mcpd.log), once
# server-everything is connected.
start_mcpd() {
    "$MCPD_BINARY" --config "$dir/mcp.json" --socket "$sock" "$@" 2>"$dir/mcpd.log" &
    mcpd_pid=$!
    for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
    "$MCPCTL_BINARY" --socket "$sock" --timeout 60000 wait everything >/dev/null
}
