#!/usr/bin/env bash
# readme-quickstart: the README's quick start, run as written against this build: the demo
# config it writes, mcpd started with it, then every command of the second block; the last
# one must print "hello from mcpd". The package install and the build lines are left out
# (this build is the result of them).
set -euo pipefail
readme=$1 build=$2
tmp=$(mktemp -d /tmp/mcpd-quickstart-XXXXXX)
pid=
cleanup() {
    local status=$?
    if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
    exit "$status"
}
trap cleanup EXIT
# The shell blocks of the "Quick start" section, in order.
blocks=$(awk '/^## Quick start/{q=1; next} q && /^## /{exit} q && /^```sh$/{n++; in_=1; next}
              in_ && /^```$/{in_=0; next} in_{print n "\t" $0}' "$readme")
first=$(awk -F'\t' '$1 == 1 {print $2}' <<<"$blocks")
second=$(awk -F'\t' '$1 == 2 {print $2}' <<<"$blocks")
[ -n "$first" ] && [ -n "$second" ] || { echo "README: no quick start blocks found" >&2; exit 1; }
grep -q '^bash .ci/deps --runtime$' <<<"$first" ||
    { echo "README: the quick start must install with .ci/deps --runtime only" >&2; exit 1; }

mkdir -m 0700 "$tmp/run"
mkdir "$tmp/home"
ln -s "$build" "$tmp/build"
export XDG_RUNTIME_DIR=$tmp/run HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config
export XDG_CACHE_HOME=$tmp/home/.cache
unset MCPD_SOCKET MCPD_SESSION
cd "$tmp"
# First block: everything but installing and building; mcpd goes to the background.
while IFS= read -r line; do
    case $line in
    "bash .ci/deps"* | "meson setup"*) ;;
    build/daemon/mcpd*)
        eval "exec $line" 2>"$tmp/mcpd.log" &
        pid=$!
        for _ in $(seq 400); do [ -S "$tmp/run/mcpd/mcpd.sock" ] && break; sleep 0.05; done
        ;;
    *) eval "$line" ;;
    esac
done <<<"$first"
[ -n "$pid" ] || { echo "README: the quick start does not start build/daemon/mcpd" >&2; exit 1; }
out=
while IFS= read -r line; do
    out=$(eval "$line") || { echo "quick start step failed: $line" >&2; cat "$tmp/mcpd.log" >&2; exit 1; }
done <<<"$second"
echo "last step printed: $out"
[ "$out" = "hello from mcpd" ]
