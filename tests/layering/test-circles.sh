#!/usr/bin/env bash
# test-circles: the layering check on small trees of its own: a circle of calls between two files
# of one folder fails it and is named with the functions that close it, even when one private
# header declares them all; a file built instead of another (-fallback.c) is no circle, nor is a
# call that only goes down.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A copy, away from the project's known-debt.txt (CHECK_LAYERS: another version of the check).
check=$tmp/check-layers.py
cp "${CHECK_LAYERS:-$(cd "$(dirname "$0")" && pwd)/check-layers.py}" "$check"
fail() { echo "FAIL: $*"; exit 1; }

# One tree: daemon/sys with a.c and b.c, declared in one private header.
tree() {
    rm -rf "$tmp/t"
    mkdir -p "$tmp/t/daemon/sys" "$tmp/t/common" "$tmp/t/client"
    printf '#pragma once\nint a_one(void);\nint b_one(void);\n' >"$tmp/t/daemon/sys/private.h"
}

tree
printf '#include "daemon/sys/private.h"\nint a_one(void)\n{\n    return b_one();\n}\n' >"$tmp/t/daemon/sys/a.c"
printf '#include "daemon/sys/private.h"\nint b_one(void)\n{\n    return a_one() + 1;\n}\n' >"$tmp/t/daemon/sys/b.c"
if out=$(python3 "$check" "$tmp/t"); then
    fail "a circle of calls passed: $out"
fi
grep -q 'FAIL: call circle in daemon/sys: a, b' <<<"$out" || fail "circle not named: $out"
grep -q 'a uses b_one of b; b uses a_one of a' <<<"$out" || fail "functions not named: $out"

tree
printf '#include "daemon/sys/private.h"\nint a_one(void)\n{\n    return b_one();\n}\n' >"$tmp/t/daemon/sys/a.c"
printf '#include "daemon/sys/private.h"\nint b_one(void)\n{\n    return 1;\n}\n' >"$tmp/t/daemon/sys/b.c"
printf '#include "daemon/sys/private.h"\nint b_one(void)\n{\n    return 2;\n}\n' \
    >"$tmp/t/daemon/sys/b-fallback.c"
out=$(python3 "$check" "$tmp/t") || fail "calls that only go down, and a fallback, failed: $out"
echo "ok: circles named, fallbacks and calls down pass"
