#!/usr/bin/env bash
# completions: the bash completion completes verbs and options, and server names from a live
# mcpd; the zsh one parses (and is checked the same way when zsh is installed). Skips (77)
# without bash-completion outside CI; with CI=true that is a failure.
set -euo pipefail
src=$1 build=$2
fake=${FAKE_SERVER:?}
bc=/usr/share/bash-completion/bash_completion
if [ ! -r "$bc" ]; then
    [ "${CI:-}" = true ] && { echo "FAIL: bash-completion is not installed (CI=true)" >&2; exit 1; }
    echo "SKIP: bash-completion is not installed (bash .ci/deps --test)" >&2
    exit 77
fi
tmp=$(mktemp -d /tmp/mcpd-completions-XXXXXX)
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
mkdir -m 0700 "$tmp/run"
export XDG_RUNTIME_DIR=$tmp/run HOME=$tmp XDG_CONFIG_HOME=$tmp/.config XDG_CACHE_HOME=$tmp/.cache
unset MCPD_SOCKET MCPD_SESSION
printf '{"mcpServers": {"alpha": {"command": "%s"}, "beta-2": {"command": "%s"}}}\n' \
    "$fake" "$fake" >"$tmp/mcp.json"
"$build/daemon/mcpd" --config "$tmp/mcp.json" 2>"$tmp/mcpd.log" &
pid=$!
for _ in $(seq 400); do [ -S "$tmp/run/mcpd/mcpd.sock" ] && break; sleep 0.05; done
PATH=$build/client:$PATH
mcpctl --timeout 30000 wait alpha >/dev/null

# complete WORDS...: what bash offers for the last word.
complete_words() {
    bash -c '
        source "$1"
        source "$2"
        shift 2
        COMP_WORDS=("$@")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        COMP_LINE="${COMP_WORDS[*]}"
        COMP_POINT=${#COMP_LINE}
        _mcpctl mcpctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$bc" "$src/completions/mcpctl.bash" "$@"
}
expect() {
    local want=$1 got
    shift
    got=$(complete_words "$@" | tr '\n' ' ')
    [ "$got" = "$want" ] || { echo "mcpctl completion of [$*]: got [$got], want [$want]" >&2; exit 1; }
}
expect "status " mcpctl st
expect "config connect " mcpctl co
expect "alpha beta-2 " mcpctl status ""
expect "beta-2 " mcpctl --json logs b
expect "--timeout " mcpctl --ti
expect "--cwd " mcpctl config --cw
expect "mcp_alpha_echo " mcpctl call mcp_alpha_ec
if command -v zsh >/dev/null; then
    zsh -n "$src/completions/_mcpctl"
else
    echo "note: zsh is not installed; its completion was not parsed" >&2
fi
echo "completions: all checks passed"
