#!/usr/bin/env bash
# run: set up the pinned npm packages, then run one interop test binary with their paths.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
modules=$(bash "$here/npm-setup.sh") || exit $?
export NODE_MODULES="$modules"
export EVERYTHING_JS="$modules/@modelcontextprotocol/server-everything/dist/index.js"
exec "$@"
