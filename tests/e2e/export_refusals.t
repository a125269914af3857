#!/usr/bin/env bash
# export_refusals.t: what `pgolab export` refuses, one line and exit 1 each, before it writes
# anything: no results database, an unknown experiment (the pgo ones listed), a compare
# experiment, no pgo experiment to default to, an unknown variant (the experiment's listed), a
# build that is gone, a profile whose recorded health check failed, a package of the name
# already installed (its version named), a bad --output. The pgo experiment is a compare
# experiment of two SQLite libraries relabelled in the results database (no build: fast; the
# real export is tests/e2e/export_standin.t, full tier). Also `pgolab complete`, the bash
# completion's helper, and the completion itself (bash-completion's _init_completion), and
# `make deb` without the packaging tools (one line naming the packages).
. "$(dirname "$0")/lib.sh"

have sqlite3 || bail_out "sqlite3 not installed (make deps installs it)"
[ -r /usr/share/bash-completion/bash_completion ] || bail_out "bash-completion not installed (make deps installs it)"
cd "$TMP" || bail_out "no $TMP"
LIB=$TMP/lib/libsqlite3.so # a library variant is a libsqlite3.so, as pgolab pgo builds them
mkdir -p "$TMP/lib" && cp "$(ls /usr/lib/*/libsqlite3.so.0 | head -1)" "$LIB" || bail_out "no libsqlite3.so.0"
DB=$TMP/r.db
OUT=$TMP/out
mkdir -p "$OUT"
ex() { # ex NAME ARGS...: pgolab export ARGS; $TMP/NAME.out, .err, $RC
    local name=$1
    shift
    "$PGOLAB" export "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}
refused() { # refused NAME ERE WHAT ARGS...
    local name=$1 re=$2 what=$3
    shift 3
    ex "$name" "$@"
    is "$RC" 1 "$what: exit 1"
    like "$(cat "$TMP/$name.err")" "$re" "$what: the message"
    is "$(wc -l <"$TMP/$name.err" | tr -d ' ')" 1 "$what: one line"
}

refused nodb "^FATAL: --results=$DB: no such results database" "no results database" --results="$DB"
"$PGOLAB" compare --variant A=sqlite:"$LIB" --variant B=sqlite:"$LIB" --bench=oltp_point_select \
    --table-size=100 --time=1 --rounds=1 --results="$DB" >"$TMP/c.out" 2>&1
is "$?" 0 "a compare experiment recorded" || diag "$(tail -3 "$TMP/c.out")"
refused nopgo "^FATAL: $DB has no complete pgo experiment by time to export from \(pgo experiments: none\)" \
    "no pgo experiment" --results="$DB"
refused compare "^FATAL: --experiment=1: a compare experiment; export takes the builds of a pgo experiment" \
    "a compare experiment" --results="$DB" --experiment=1
refused badout "^FATAL: --output=$TMP/nodir: not a directory" "bad --output" --results="$DB" --output="$TMP/nodir"

# the same experiment relabelled as a pgo experiment of target sqlite, its variant B as pgo
sq "$DB" "UPDATE experiments SET kind = 'pgo', settings_json = json_set(settings_json, '\$.pgo', json('{\"target\":\"sqlite\",\"source_version\":\"3.40.1-2\",\"train\":[\"oltp_point_select\"],\"gate\":\"checksum\",\"profiles\":{\"oltp_point_select\":{\"files\":1,\"objects_counted\":1,\"functions\":10,\"functions_counted\":0,\"counts\":0,\"hot\":{\"sqlite3:sqlite3VdbeExec\":0}}}}'))"
refused unknown "^FATAL: --experiment=9: no such experiment in $DB \(pgo experiments: 1\)$" \
    "unknown experiment" --results="$DB" --experiment=9
refused variant "^FATAL: --variant=C: experiment 1 has no such variant \(its variants: A, B\)$" \
    "unknown variant" --results="$DB" --variant=C
refused winner "^FATAL: experiment 1: no variant is significantly faster than baseline by tps \(B " \
    "no significant winner" --results="$DB"
sq "$DB" "UPDATE variants SET name = 'pgo' WHERE idx = 1"
refused health "^FATAL: variant pgo: its profile \(trainer oltp_point_select\) failed the health check: 0 counts in 0 functions$" \
    "a failed profile health check" --results="$DB" --variant=pgo
sq "$DB" "UPDATE variants SET name = 'B' WHERE idx = 1"
refused installed "^FATAL: package dpkg $(dpkg-query -W -f='${Version}' dpkg | sed 's/[.+]/\\&/g') is installed: remove it first \(apt remove dpkg\)" \
    "a package of the name installed" --results="$DB" --variant=B --name=dpkg --output="$OUT"
sq "$DB" "UPDATE variants SET library = '$TMP/gone/libsqlite3.so' WHERE idx = 1"
refused gone "^FATAL: variant B of experiment 1 was never built here or its build is gone: no library $TMP/gone/libsqlite3.so" \
    "a build that is gone" --results="$DB" --variant=B
is "$(ls -A "$OUT")" "" "nothing written to --output"

note "---- pgolab complete: the words come from the binary"
cmds=$("$PGOLAB" complete commands | tr '\n' ' ')
is "$cmds" "bench pgo compare report history calibrate server export help " "complete commands: the command table"
for c in bench pgo compare export server; do
    want=$("$PGOLAB" help "$c" | grep -oE '^ +--[a-z][a-z0-9-]*' | tr -d ' ' | sort -u)
    got=$("$PGOLAB" complete options "$c" | tr -d '=' | sort -u)
    is "$got" "$want" "complete options $c: each option of its --help"
done
like "$("$PGOLAB" complete options bench | tr '\n' ' ')" "(^| )--time= .*--histogram " "a value option ends in =, a flag does not"
is "$("$PGOLAB" complete values db-driver | tr '\n' ' ')" "sqlite mysql pgsql " "values db-driver"
like "$("$PGOLAB" complete values variants | tr '\n' ' ')" "^baseline pgo lto pgo\+lto .*official $" "values variants"
like "$("$PGOLAB" complete words bench | tr '\n' ' ')" "oltp_read_write .*prepare .*run " "words bench: workloads, commands"
like "$("$PGOLAB" complete words pgo | tr '\n' ' ')" "postgresql .*sqlite" "words pgo: the recipes"
is "$("$PGOLAB" complete values experiment --results="$DB")" "1" "values experiment: the ids of --results"
is "$("$PGOLAB" complete values variant --results="$DB" | tr '\n' ' ')" "A B " "values variant: the newest pgo experiment's"
"$PGOLAB" complete values nosuch >"$TMP/cn.out" 2>&1
is "$?:$(cat "$TMP/cn.out")" "1:" "complete: unknown input prints nothing, exit 1"

note "---- the bash completion itself"
comp() { # comp WORD...: COMPREPLY for the last word
    PATH="$(dirname "$PGOLAB"):$PATH" bash -c '. /usr/share/bash-completion/bash_completion
        . "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
        _pgolab; printf "%s\n" "${COMPREPLY[@]}"' "$REPO_DIR/completions/pgolab.bash" "$@" | sort | tr '\n' ' '
}
is "$(comp pgolab ex)" "export " "subcommand"
is "$(comp pgolab bench --db-dri)" "--db-driver= " "an option"
is "$(comp pgolab bench --db-driver=p)" "pgsql " "--db-driver's values"
is "$(comp pgolab pgo sqlite --variants=baseline,pgo+)" "baseline,pgo+bolt baseline,pgo+lto baseline,pgo+lto+bolt " "--variants: the list's last item"
is "$(comp pgolab bench oltp_point_s)" "oltp_point_select " "a workload"
is "$(comp pgolab report --results="$DB" --experiment=)" "1 " "experiment ids of --results"

note "---- make deb without the packaging tools"
mkdir -p "$TMP/bin"
for t in sh dirname sed tr; do ln -s "$(command -v "$t")" "$TMP/bin/$t"; done
PATH=$TMP/bin sh "$REPO_DIR/scripts/make-deb.sh" >"$TMP/deb.out" 2>&1
is "$?" 1 "make deb without the tools: exit 1"
is "$(cat "$TMP/deb.out")" "make deb: needs the Debian packaging tools: apt-get install dpkg-dev debhelper lintian git" \
    "make deb without the tools: one line naming the packages"
done_testing
