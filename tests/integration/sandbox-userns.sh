#!/bin/sh
# SPDX-License-Identifier: MIT
# sandbox-userns: test-sandbox as a user without privileges, so bubblewrap builds each sandbox in
# a user namespace (as root it needs none). Run as root, it drops to nobody; run as anyone else,
# that user is the case already.
set -eu
if [ "$(id -u)" -ne 0 ]; then
    exec "$@"
fi
# HOME: the test makes its own; nobody's passwd home (/nonexistent) is never used.
exec setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent "$@"
