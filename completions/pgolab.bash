# bash completion for pgolab: commands, options, option values, workloads, targets and the
# experiment ids of the results database. Every list comes from the binary itself through its
# hidden helper `pgolab complete` (src/cli/complete.c), so it never goes stale. Installed as
# share/bash-completion/completions/pgolab by `make install` and the Debian package.

_pgolab() {
    local cur prev words cword
    _init_completion -n = || return
    local pg=${words[0]} cmd="" i results=""
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
        --results=*) results=${words[i]} ;;
        -*) ;;
        *) [ -z "$cmd" ] && cmd=${words[i]} ;;
        esac
    done
    if [ -z "$cmd" ]; then
        COMPREPLY=($(compgen -W "$("$pg" complete commands 2>/dev/null)" -- "$cur"))
        return
    fi
    case $cur in
    --*=*)
        local opt=${cur%%=*} val=${cur#*=} kind
        opt=${opt#--}
        case $opt in
        db-driver | variants | bench | train | resume) kind=$opt ;;
        experiment) [ "$cmd" = export ] && kind=pgo-experiment || kind=experiment ;;
        variant) [ "$cmd" = export ] && kind=variant || return ;;
        results | output | source | workdir | datadir | prefix | sqlite-db | sqlite-library | \
            server | official | profile-file)
            _filedir
            return
            ;;
        *) return ;;
        esac
        local list=$("$pg" complete values "$kind" $results 2>/dev/null)
        case $opt in
        variants | bench | train) # comma-separated lists: complete the last item
            local head=""
            [[ $val == *,* ]] && head=${val%,*},
            COMPREPLY=($(compgen -P "$head" -W "$list" -- "${val##*,}"))
            compopt -o nospace 2>/dev/null
            ;;
        *) COMPREPLY=($(compgen -W "$list" -- "$val")) ;;
        esac
        ;;
    -*)
        COMPREPLY=($(compgen -W "$("$pg" complete options "$cmd" 2>/dev/null)" -- "$cur"))
        [[ ${COMPREPLY-} == *= ]] && compopt -o nospace 2>/dev/null
        ;;
    *)
        COMPREPLY=($(compgen -W "$("$pg" complete words "$cmd" 2>/dev/null)" -- "$cur"))
        ;;
    esac
}
complete -F _pgolab pgolab
