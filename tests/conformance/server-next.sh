#!/usr/bin/env bash
# server-next: the conformance suite 0.2.0-alpha.12's server scenarios (--suite all: the 2025
# revisions and 2026-07-28) scored three ways: the fixture server alone
# (tests/interop/conformance-fixture.mjs over Streamable HTTP; the suite ships no reference
# server), mcpd's /servers/fixture/mcp in front of the same fixture (a stdio upstream), and
# mcpd's own /mcp on the scenarios that need no named fixture. mcpd is reached on its socket
# through socket-pipe.mjs (the suite's raw requests cannot carry the loopback token). Fails
# when a scenario passes alone and not through mcpd, or when one of mcpd's runs has more failed
# checks in a scenario than server-next.expected allows (docs/http.md has the table).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${MCPD_BINARY:?}" "${MCPCTL_BINARY:?}"
conf=$(bash "$here/../interop/npm-setup.sh" "$here/next") || exit $?
bash "$here/../interop/npm-setup.sh" "$here/../interop" >/dev/null || exit $?
expected=$here/server-next.expected
scratch_name=conf-next
# shellcheck source=server-common.sh
. "$here/server-common.sh"

port=$(free_port)
PORT=$port "$node22" "$fixture" http 2>"$dir/fixture.log" &
pids+=($!)
sock=$dir/run/mcpd.sock
printf '{"mcpServers":{"fixture":{"command":"%s","args":["%s","stdio"],"timeout":60000}}}\n' \
    "$node22" "$fixture" >"$dir/mcp.json"
"$MCPD_BINARY" --config "$dir/mcp.json" --socket "$sock" 2>"$dir/mcpd.log" &
pids+=($!)
for _ in $(seq 400); do [ -S "$sock" ] && break; sleep 0.05; done
"$node22" "$here/socket-pipe.mjs" "$sock" >"$dir/pipe.port" &
pids+=($!)
for _ in $(seq 200); do [ -s "$dir/pipe.port" ] && break; sleep 0.05; done
pport=$(cat "$dir/pipe.port")
wait_port "$port"
"$MCPCTL_BINARY" --socket "$sock" --timeout 60000 wait fixture >/dev/null

# The scenarios of /mcp: those that score mcpd's own HTTP layer and need no named fixture (the
# aggregate prefixes the fixture's names). The three runs go side by side, to keep the wall time.
own=(server-session-lifecycle server-sse-multiple-streams dns-rebinding-protection
     server-stateless http-header-validation caching)
run() { "$node22" "$suite" server --url "$1" "${@:3}" >"$2" 2>&1 || true; }
aggregate() {
    local s
    for s in "${own[@]}"; do
        run "http://127.0.0.1:$pport/mcp" "$dir/agg-$s.txt" --scenario "$s"
        # one scenario ends in "Passed: N/M, F failed"
        sed -n "s/^Passed: \([0-9]*\)\/[0-9]*, \([0-9]*\) failed.*/$s \1 \2/p" "$dir/agg-$s.txt"
    done >"$dir/agg.txt"
}
run "http://127.0.0.1:$port/mcp" "$dir/alone.txt" --suite all &
jobs=($!)
aggregate &
jobs+=($!)
run "http://127.0.0.1:$pport/servers/fixture/mcp" "$dir/mcpd.txt" --suite all
wait "${jobs[@]}"

# "name passed failed" per scenario.
counts() { sed -n 's/^[✓✗] \([^:]*\): \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2 \3/p' "$1" | sort; }
counts "$dir/alone.txt" >"$dir/alone.c"
counts "$dir/mcpd.txt" >"$dir/mcpd.c"
sort "$dir/agg.txt" >"$dir/agg.c"
if [ ! -s "$dir/alone.c" ] || [ ! -s "$dir/mcpd.c" ] || [ ! -s "$dir/agg.c" ]; then
    echo "FAIL: the suite printed no scenario lines" >&2
    tail -30 "$dir/alone.txt" "$dir/mcpd.txt" "$dir/mcpd.log" >&2
    exit 1
fi
mark() { [ -z "$1" ] && echo "-" && return; [ "$2" = 0 ] && echo "✓ $1/$(($1 + $2))" || echo "✗ $1/$(($1 + $2))"; }
printf '%-46s %-9s %-9s %-9s\n' scenario alone servers/ /mcp
status=0
while read -r name ap af; do
    read -r mp mf < <(awk -v n="$name" '$1 == n { print $2, $3 }' "$dir/mcpd.c") || true
    read -r gp gf < <(awk -v n="$name" '$1 == n { print $2, $3 }' "$dir/agg.c") || gp=""
    printf '%-46s %-9s %-9s %-9s\n' "$name" "$(mark "$ap" "$af")" "$(mark "${mp:-}" "${mf:-}")" "$(mark "${gp:-}" "${gf:-}")"
    if [ "$af" = 0 ] && [ "${mf:-1}" != 0 ]; then
        echo "FAIL: $name passes alone and fails through mcpd" >&2
        status=1
    fi
    for where in servers mcp; do
        got=$([ "$where" = servers ] && echo "${mf:-}" || echo "${gf:-}")
        allowed=$(awk -v n="$name" -v r="$where" '$1 == n && $2 == r { print $3 }' "$expected")
        [ -z "$got" ] && continue
        if [ "$got" -gt "${allowed:-0}" ]; then
            echo "FAIL: $name on $where: $got failed checks, server-next.expected allows ${allowed:-0}" >&2
            status=1
        fi
    done
    unset mp mf gp gf
done <"$dir/alone.c"
if [ "$status" -ne 0 ]; then
    grep -h -B1 -A3 "FAILURE" "$dir/mcpd.txt" "$dir"/agg-*.txt | head -80 >&2
    tail -20 "$dir/mcpd.log" >&2
fi
exit "$status"
