#!/usr/bin/env bash
# example-agent: the libmcpc example in docs/libmcpc.md is the file that is built (word for word), and it
# works against a real mcpd: progress and the asynchronous result arrive.
set -euo pipefail
readme=$1 example_src=$2 example_bin=$3
mcpd=${MCPD_BINARY:?} fake=${FAKE_SERVER:?}

# The README block after the marker line must equal the source file.
block=$(awk '/<!-- example-agent.c -->/{f=1; next} f && /^```c$/{g=1; next} g && /^```$/{exit} g' "$readme")
if ! diff <(printf '%s\n' "$block") "$example_src" >/dev/null; then
    echo "docs/libmcpc.md's example differs from $example_src:" >&2
    diff <(printf '%s\n' "$block") "$example_src" >&2 || true
    exit 1
fi

dir=$(mktemp -d /tmp/mcpd-example-XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
mkdir -p "$dir/run" "$dir/config/mcpd" "$dir/cache" "$dir/home"
chmod 700 "$dir/run"
export XDG_RUNTIME_DIR=$dir/run XDG_CONFIG_HOME=$dir/config XDG_CACHE_HOME=$dir/cache HOME=$dir/home
unset MCPD_SOCKET MCPD_SESSION
printf '{"mcpServers": {"up": {"command": "%s"}}}\n' "$fake" >"$dir/config/mcpd/mcp.json"
"$mcpd" 2>"$dir/mcpd.log" &
pid=$!
for _ in $(seq 200); do [ -S "$dir/run/mcpd/mcpd.sock" ] && break; sleep 0.05; done
out=$(cd "$dir/home" && "$example_bin" mcp_up_sleep '{"ms":350}')
echo "$out"
grep -q '^tools: {"tools":\[' <<<"$out"
grep -q '^call [0-9]*: 1 of 3' <<<"$out"
grep -q '^call [0-9]* finished with status 0: .*slept 350 ms' <<<"$out"
grep -q '^for subagents: MCPD_SESSION=[0-9a-f]\{32\}$' <<<"$out"
echo "example-agent: all checks passed"
