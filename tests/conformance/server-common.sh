# server-common: what server.sh and server-next.sh share, sourced after they set $conf (the
# pinned suite's node_modules) and $scratch_name: Node 22 and the suite's entry point, the
# fixture, a private scratch dir with HOME and the XDG dirs in it, the pids to stop at exit
# (added to $pids), and free_port/wait_port for loopback ports.
node22=$conf/node/bin/node
[ -x "$node22" ] || node22=$conf/.bin/node
suite=$conf/@modelcontextprotocol/conformance/dist/index.js
fixture=$here/../interop/conformance-fixture.mjs

dir=$(mktemp -d "${TMPDIR:-/tmp}/mcpd-$scratch_name-XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    rm -rf "$dir"
}
trap cleanup EXIT
mkdir -m 700 "$dir/home" "$dir/config" "$dir/cache" "$dir/run"
export HOME=$dir/home XDG_CONFIG_HOME=$dir/config XDG_CACHE_HOME=$dir/cache XDG_RUNTIME_DIR=$dir/run

free_port() { "$node22" -e 's=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
# Up to 20 s (400 tries 50 ms apart) for a server to listen on port $1.
wait_port() { for _ in $(seq 400); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done; return 1; }
