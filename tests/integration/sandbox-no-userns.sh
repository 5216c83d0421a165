#!/bin/sh
# SPDX-License-Identifier: MIT
# sandbox-no-userns: run a command (mcpd, through MCPD_WRAPPER) where the kernel refuses new user
# namespaces: a user namespace of its own whose limit of nested ones is 0. mcpd's own sandbox is
# then refused and it falls back to bubblewrap, as on a system with user namespaces disabled.
# Absolute paths: test-sandbox runs mcpd with a PATH that finds nothing.
set -eu
exec /usr/bin/unshare --map-root-user /bin/sh -c \
    'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"' sandbox-no-userns "$@"
