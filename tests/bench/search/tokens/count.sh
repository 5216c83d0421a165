#!/bin/sh
# SPDX-License-Identifier: MIT
# count.sh: the search benchmark's real tokenizer; installs its pinned package on first use.
# Fails (and the benchmark says "skipped") without node or npm.
set -e
dir=$(dirname "$0")
command -v node >/dev/null && command -v npm >/dev/null
[ -d "$dir/node_modules/gpt-tokenizer" ] ||
    npm ci --prefix "$dir" --ignore-scripts --no-audit --no-fund >/dev/null 2>&1
exec node "$dir/count.mjs"
