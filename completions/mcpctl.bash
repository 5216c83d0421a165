# bash completion for mcpctl                                  -*- shell-script -*-
# SPDX-License-Identifier: MIT

# Server names from the live daemon (nothing when it is not running).
_mcpctl_servers()
{
    local sock=$1
    mcpctl ${sock:+--socket "$sock"} --timeout 2000 status 2>/dev/null |
        awk '/^SERVER /{f=1; next} f && /^$/{exit} f && /^[A-Za-z0-9_.-]+ /{print $1}'
}

_mcpctl()
{
    local cur prev words cword
    _init_completion || return

    local verbs="status top tools call prompts prompt resources read reload connect disconnect wait pin unpin login
        logout logs config bridge setup trust untrust help"
    local opts="--json --socket --timeout --version --help"
    local verb="" sock="" i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
        --socket) sock=${words[i + 1]} ;;
        --socket=*) sock=${words[i]#--socket=} ;;
        -*) ;;
        *)
            case ${words[i - 1]} in
            --socket | -s | --timeout | -t | --cwd | -n | --lines | --run | --server) ;;
            *) [ -z "$verb" ] && verb=${words[i]} ;;
            esac
            ;;
        esac
    done

    case $prev in
    --socket | -s)
        _filedir
        return
        ;;
    --cwd)
        _filedir -d
        return
        ;;
    --server)
        COMPREPLY=($(compgen -W "$(_mcpctl_servers "$sock")" -- "$cur"))
        return
        ;;
    --timeout | -t | -n | --lines | --run) return ;;
    esac

    if [[ $cur == -* ]]; then
        case $verb in
        config | reload) opts+=" --cwd" ;;
        bridge) opts+=" --cwd --server --host-prefix --host" ;;
        logs) opts+=" -n --run -f" ;;
        login) opts+=" --no-browser --headless" ;;
        setup) opts+=" --all --dry-run --undo" ;;
        trust | untrust) opts+=" --server" ;;
        esac
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    case $verb in
    "") COMPREPLY=($(compgen -W "$verbs" -- "$cur")) ;;
    status | connect | disconnect | wait | pin | unpin | logs | login | logout)
        COMPREPLY=($(compgen -W "$(_mcpctl_servers "$sock")" -- "$cur"))
        ;;
    setup) COMPREPLY=($(compgen -W "claude codex gemini cursor windsurf claude-desktop cline roo kiro antigravity antigravity-cli vscode vscode-insiders vscodium" -- "$cur")) ;;
    trust | untrust) _filedir -d ;;
    call)
        local tools
        tools=$(mcpctl ${sock:+--socket "$sock"} --timeout 2000 tools 2>/dev/null | awk '{print $1}')
        COMPREPLY=($(compgen -W "$tools" -- "$cur"))
        ;;
    esac
} && complete -F _mcpctl mcpctl
