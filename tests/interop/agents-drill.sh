#!/usr/bin/env bash
# agents-drill: install the pinned agent CLIs (agents/package-lock.json) once, then run the setup
# drill with them (agents-drill.mjs). Skips (77) only when node/npm or the registry is missing,
# and never with CI=true (npm-setup.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
modules=$(bash "$here/npm-setup.sh" "$here/agents") || exit $?
export AGENTS_BIN="$modules/.bin"
export OPENCODE_BIN="$modules/opencode-linux-x64/bin/opencode"
# Claude Code asks for Node 22 (its package's engines); the pinned one runs the drill and the CLIs.
exec "$AGENTS_BIN/node" "$here/agents-drill.mjs"
