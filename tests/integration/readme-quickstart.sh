#!/usr/bin/env bash
# readme-quickstart: the README's quick start, run as written against this build. First its one
# command (.ci/quickstart, with this build as its build directory and the package check left
# out: the packages are what built this), whose last line must be "hello from mcpd"; then the
# step-by-step way: the demo config it writes, mcpd started with it, then every command of the
# block after; the last one must print "hello from mcpd". The package install and the build
# lines are left out (this build is the result of them).
set -euo pipefail
readme=$1 build=$2
tmp=$(mktemp -d /tmp/mcpd-quickstart-XXXXXX)
pid=
cleanup() {
    local status=$?
    if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
        wait "$pid" 2>/dev/null || true
    fi
    # The one command's daemon is not our child: its pid file says which it is. It is waited for
    # (no wait(1) for a non-child: polled, 20 s at most) before its runtime dir is removed, as it
    # writes there until it exits.
    for f in "$tmp"/run/mcpd-quickstart-*/mcpd.pid; do
        [ -f "$f" ] || continue
        qpid=$(cat "$f")
        kill "$qpid" 2>/dev/null || continue
        for _ in $(seq 200); do
            kill -0 "$qpid" 2>/dev/null || break
            sleep 0.1
        done
    done
    rm -rf "$tmp"
    exit "$status"
}
trap cleanup EXIT
# The shell blocks of the "Quick start" section, in order.
blocks=$(awk '/^## Quick start/{q=1; next} q && /^## /{exit} q && /^```sh$/{n++; in_=1; next}
              in_ && /^```$/{in_=0; next} in_{print n "\t" $0}' "$readme")
one=$(awk -F'\t' '$1 == 1 {print $2}' <<<"$blocks")
first=$(awk -F'\t' '$1 == 2 {print $2}' <<<"$blocks")
second=$(awk -F'\t' '$1 == 3 {print $2}' <<<"$blocks")
[ -n "$one" ] && [ -n "$first" ] && [ -n "$second" ] ||
    { echo "README: the quick start's three blocks are not there" >&2; exit 1; }
[ "$one" = "bash .ci/quickstart" ] ||
    { echo "README: the quick start's one command is not bash .ci/quickstart: $one" >&2; exit 1; }
grep -q '^bash .ci/deps --runtime$' <<<"$first" ||
    { echo "README: the quick start must install with .ci/deps --runtime only" >&2; exit 1; }

mkdir -m 0700 "$tmp/run"
mkdir "$tmp/home" "$tmp/bin"
# This build is the result of the README's build lines, so the one command's own "meson
# compile" is left out too: from a tree changed since the build, it would relink mcpd under the
# tests running beside this one (they then fail to start it).
printf '#!/bin/sh\n[ "$1" = compile ] && exit 0\necho "readme-quickstart: meson $* not expected" >&2\nexit 1\n' \
    >"$tmp/bin/meson"
chmod +x "$tmp/bin/meson"
export PATH=$tmp/bin:$PATH
ln -s "$build" "$tmp/build"
export XDG_RUNTIME_DIR=$tmp/run HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config
export XDG_CACHE_HOME=$tmp/home/.cache
unset MCPD_SOCKET MCPD_SESSION

# The one command, from the source tree the README is in.
src=$(cd "$(dirname "$readme")" && pwd)
out=$(QUICKSTART_DEPS=0 QUICKSTART_BUILD=$build bash "$src/.ci/quickstart" </dev/null) ||
    { echo "bash .ci/quickstart failed:" >&2; echo "$out" >&2; exit 1; }
last=$(tail -1 <<<"$out")
echo "bash .ci/quickstart: last line: $last"
[ "$last" = "hello from mcpd" ] || { echo "$out" >&2; exit 1; }
# Again: it finds its daemon running and reuses it.
out=$(QUICKSTART_DEPS=0 QUICKSTART_BUILD=$build bash "$src/.ci/quickstart" </dev/null)
grep -q "already running" <<<"$out" && [ "$(tail -1 <<<"$out")" = "hello from mcpd" ] ||
    { echo "a second bash .ci/quickstart did not reuse its daemon:" >&2; echo "$out" >&2; exit 1; }

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
