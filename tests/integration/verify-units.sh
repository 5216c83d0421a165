#!/usr/bin/env bash
# verify-units: systemd-analyze verify on the user units, with ExecStart pointing at this build.
set -euo pipefail
src=$1 bindir=$2
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze missing" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -e "s|@bindir@|$bindir|g" -e "s|@docdir@|$src|g" "$src/systemd/mcpd.service.in" >"$tmp/mcpd.service"
sed -e "s|file:///usr/local/share/doc/mcpd/README.md|file://$src/README.md|" \
    "$src/systemd/mcpd.socket" >"$tmp/mcpd.socket"
mkdir -m 0700 "$tmp/run"
XDG_RUNTIME_DIR="$tmp/run" systemd-analyze --user verify "$tmp/mcpd.service" "$tmp/mcpd.socket"
systemd-analyze verify "$tmp/mcpd.service" "$tmp/mcpd.socket"
echo "units verified"
