#!/usr/bin/env bash
# verify-units: systemd-analyze verify --user on the user units, with ExecStart/ExecReload
# pointing at this build, and the unit policy the README promises: socket-only start
# ([Install] on the socket only), man-page documentation, a reload that waits, and nothing
# that implies NoNewPrivileges= in a user unit.
set -euo pipefail
src=$1 bindir=$2 ctlbindir=${3:-$2}
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze missing" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# ExecStart and ExecReload each need their binary: link both into one bindir.
mkdir "$tmp/bin"
ln -s "$bindir/mcpd" "$tmp/bin/mcpd"
ln -s "$ctlbindir/mcpctl" "$tmp/bin/mcpctl"
sed -e "s|@bindir@|$tmp/bin|g" "$src/systemd/mcpd.service.in" >"$tmp/mcpd.service"
cp "$src/systemd/mcpd.socket" "$tmp/mcpd.socket"
fail() { echo "verify-units: $*" >&2; exit 1; }
grep -q '^Documentation=man:mcpd(8)' "$tmp/mcpd.service" || fail "service: Documentation= is not man:mcpd(8)"
grep -q '^Documentation=man:mcpd(8)' "$tmp/mcpd.socket" || fail "socket: Documentation= is not man:mcpd(8)"
grep -q '^WantedBy=sockets.target' "$tmp/mcpd.socket" || fail "socket: not WantedBy=sockets.target"
! grep -q '^WantedBy=' "$tmp/mcpd.service" || fail "service: WantedBy= starts servers at login; install the socket only"
grep -q '^ExecReload=.*/mcpctl reload$' "$tmp/mcpd.service" || fail "service: ExecReload= must wait (mcpctl reload)"
# The unit's cgroup ends every process of every server when the service stops or dies (also one
# that cleared mcpd's tag and left its group): KillMode=process or none would leave them.
grep -Eq '^KillMode=(mixed|control-group)$' "$tmp/mcpd.service" ||
    fail "service: KillMode= must be mixed or control-group (the cgroup ends servers' strays)"
for k in NoNewPrivileges LockPersonality RestrictRealtime SystemCallArchitectures SystemCallFilter \
    MemoryDenyWriteExecute RestrictNamespaces ProtectSystem; do
    ! grep -q "^$k=" "$tmp/mcpd.service" || fail "service: $k= implies NoNewPrivileges= or does nothing in a user unit"
done
# verify runs man(1) on each Documentation=man: page: point it at this tree's pages.
for page in "$src"/docs/man/*.[0-9]; do
    sec=${page##*.}
    mkdir -p "$tmp/man/man$sec"
    sed -e 's/@VERSION@/test/' -e 's/@DATE@/test/' "$page" >"$tmp/man/man$sec/${page##*/}"
done
man_check=()
if ! command -v man >/dev/null; then
    echo "note: man(1) is not installed; the Documentation= pages are not checked" >&2
    man_check=(--man=no)
fi
mkdir -m 0700 "$tmp/run"
MANPATH="$tmp/man" XDG_RUNTIME_DIR="$tmp/run" \
    systemd-analyze --user verify "${man_check[@]}" "$tmp/mcpd.service" "$tmp/mcpd.socket"
echo "units verified"
