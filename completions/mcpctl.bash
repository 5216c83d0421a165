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

    local verbs="status tools call reload connect disconnect wait logs config bridge help"
    local opts="--json --socket --timeout --version --help"
    local verb="" sock="" i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
        --socket) sock=${words[i + 1]} ;;
        --socket=*) sock=${words[i]#--socket=} ;;
        -*) ;;
        *)
            case ${words[i - 1]} in
            --socket | -s | --timeout | -t | --cwd | -n | --lines) ;;
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
    --timeout | -t | -n | --lines) return ;;
    esac

    if [[ $cur == -* ]]; then
        case $verb in
        config | bridge | reload) opts+=" --cwd" ;;
        logs) opts+=" -n" ;;
        esac
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        return
    fi
    case $verb in
    "") COMPREPLY=($(compgen -W "$verbs" -- "$cur")) ;;
    status | connect | disconnect | wait | logs)
        COMPREPLY=($(compgen -W "$(_mcpctl_servers "$sock")" -- "$cur"))
        ;;
    call)
        local tools
        tools=$(mcpctl ${sock:+--socket "$sock"} --timeout 2000 tools 2>/dev/null | awk '{print $1}')
        COMPREPLY=($(compgen -W "$tools" -- "$cur"))
        ;;
    esac
} && complete -F _mcpctl mcpctl
