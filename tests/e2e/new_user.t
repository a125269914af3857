#!/bin/bash
# new_user.t: what a new user meets first. `make install` into a DESTDIR gives the
# binary, its recipes and pgolab(1), whose sections are the commands' own --help text;
# `pgolab help`, `help COMMAND`, `--version`; PGOLAB_RESULTS as the default results file and a
# missing results file that names where experiments were last recorded; `calibrate
# --bench=nope` fails before anything is recorded; a compare that fails before its first run
# leaves no row in history, says --resume would not help, and keeps the server log it names.
. "$(dirname "$0")/lib.sh"

export HOME=$TMP/home XDG_STATE_HOME=
mkdir -p "$HOME"
unset PGOLAB_RESULTS

note "---- make install (DESTDIR, PREFIX)"
DEST=$TMP/dest
make -s -C "$REPO_DIR" install DESTDIR="$DEST" PREFIX=/opt/pgolab >"$TMP/install.out" 2>&1
is "$?" 0 "make install DESTDIR=... PREFIX=/opt/pgolab: exit 0"
ok "the binary in PREFIX/bin" test -x "$DEST/opt/pgolab/bin/pgolab"
ok "the man page in PREFIX/share/man/man1" test -s "$DEST/opt/pgolab/share/man/man1/pgolab.1"
ok "the recipes in PREFIX/share/pgolab/recipes" test -s "$DEST/opt/pgolab/share/pgolab/recipes/postgresql.json"
ok "... sqlite's too" test -s "$DEST/opt/pgolab/share/pgolab/recipes/sqlite.json"
MAN=$DEST/opt/pgolab/share/man/man1/pgolab.1
like "$(head -1 "$MAN")" '^\.TH PGOLAB 1 ' "pgolab.1 is a roff man page"
for c in bench pgo compare report history calibrate server; do
    like "$(grep -c "^\.SH \"PGOLAB $c\"$" "$MAN")" '^1$' "pgolab.1 has a section for $c"
    # the section is the command's --help, line for line (roff escapes undone)
    "$PGOLAB" "$c" --help >"$TMP/help-$c.txt" 2>&1
    awk -v sec=".SH \"PGOLAB $c\"" '$0 == sec { on = 1; next } on && /^\.nf$/ { next }
        on && /^\.fi$/ { exit } on' "$MAN" | sed -e 's/\\-/-/g' -e 's/^\\&//' -e 's/\\e/\\/g' >"$TMP/man-$c.txt"
    ok "pgolab.1's $c section is \`pgolab $c --help\`" cmp -s "$TMP/help-$c.txt" "$TMP/man-$c.txt"
done
if have man; then
    man -l "$MAN" >"$TMP/man.txt" 2>"$TMP/man.err"
    like "$(<"$TMP/man.txt")" 'ENVIRONMENT' "man renders pgolab.1"
    is "$(grep -c 'warning' "$TMP/man.err")" 0 "man: no roff warnings"
fi
"$DEST/opt/pgolab/bin/pgolab" --version >"$TMP/v.out" 2>&1
is "$(<"$TMP/v.out")" "pgolab $(sed -n 's/^#define PGOLAB_VERSION "\(.*\)"$/\1/p' "$REPO_DIR/src/version.h")" \
    "the installed pgolab --version"
(cd "$TMP" && "$DEST/opt/pgolab/bin/pgolab" pgo nosuchtarget >/dev/null 2>"$TMP/recipe.err")
like "$(<"$TMP/recipe.err")" "known: mariadb, mysql, postgresql, sqlite;" \
    "the installed pgolab finds its recipes in PREFIX/share/pgolab/recipes"

note "---- pgolab help"
"$PGOLAB" help >"$TMP/help.out" 2>&1
is "$?" 0 "pgolab help: exit 0"
for c in bench pgo compare report history calibrate server; do
    like "$(<"$TMP/help.out")" "^  $c " "pgolab help lists $c"
done
like "$(<"$TMP/help.out")" 'pgolab help --man' "pgolab help names --man"
# every format `pgolab report --format` takes is named on report's line
fmts=$("$PGOLAB" report --help | sed -n 's/^  --format=[A-Z]* *\([^(]*\).*/\1/p' | grep -oE '[a-z]+' | grep -vx or)
is "$(echo $fmts)" "text markdown csv json html" "report --help: the formats"
for f in $fmts; do
    like "$(grep '^  report ' "$TMP/help.out")" "[ (]$f[,)]" "pgolab help: report's line names --format=$f"
done
"$PGOLAB" help history >"$TMP/hh.out" 2>&1
is "$?/$(cmp -s "$TMP/hh.out" "$TMP/help-history.txt" && echo same)" "0/same" "pgolab help history = pgolab history --help"
"$PGOLAB" help frob >"$TMP/hf.out" 2>&1
is "$?" 1 "pgolab help frob: exit 1"
is "$(<"$TMP/hf.out")" "FATAL: unknown command 'frob' (see \`pgolab help\`)" "pgolab help frob: one line"

note "---- unknown options in every command"
for c in report history; do
    "$PGOLAB" "$c" --roundz=3 >/dev/null 2>"$TMP/u.err"
    is "$?/$(<"$TMP/u.err")" "1/FATAL: invalid option: --roundz=3 (see pgolab $c --help)" \
        "$c --roundz=3: FATAL, and where the list is"
done
"$PGOLAB" calibrate --time=99999999 >/dev/null 2>"$TMP/u.err"
is "$(<"$TMP/u.err")" "FATAL: invalid --time=99999999 (out of range: seconds from 1 to 604800, a week)" \
    "calibrate --time=99999999: out of range, and the range"
"$PGOLAB" calibrate --time=99999999999999999999 >/dev/null 2>"$TMP/u.err"
is "$(<"$TMP/u.err")" "FATAL: invalid value for --time: '99999999999999999999' is out of range (at most 9223372036854775807)" \
    "calibrate --time beyond int64: out of range"
"$PGOLAB" compare --roundz=3 >/dev/null 2>"$TMP/u.err"
is "$(<"$TMP/u.err")" "FATAL: invalid option: --roundz=3 (did you mean --rounds? see pgolab compare --help)" \
    "compare --roundz=3: did you mean --rounds?"
"$PGOLAB" history --result=x.db >/dev/null 2>"$TMP/u.err"
is "$(<"$TMP/u.err")" "FATAL: invalid option: --result=x.db (did you mean --results? see pgolab history --help)" \
    "history --result: did you mean --results?"
"$PGOLAB" pgo sqlite --treads=2 >/dev/null 2>"$TMP/u.err"
is "$(<"$TMP/u.err")" "FATAL: invalid option: --treads=2 (did you mean --threads? see pgolab pgo --help)" \
    "pgo --treads: did you mean --threads?"
"$PGOLAB" server status --datdir=x >/dev/null 2>"$TMP/u.err"
is "$(<"$TMP/u.err")" "FATAL: invalid option: --datdir=x (did you mean --datadir? see pgolab server --help)" \
    "server --datdir: did you mean --datadir?"

note "---- --latency-unit=us: sub-millisecond latencies in the text output"
LDB=$TMP/lat.db
pg lprep --sqlite-db="$LDB" --table-size=100 oltp_point_select prepare
pg lms --sqlite-db="$LDB" --table-size=100 --events=2000 --time=0 --histogram oltp_point_select run
pg lus --sqlite-db="$LDB" --table-size=100 --events=2000 --time=0 --histogram --latency-unit=us \
    --report-interval=1 oltp_point_select run
is "$RC" 0 "--latency-unit=us: exit 0"
ok "default: 'Latency (ms):', sysbench's" grep -qx 'Latency (ms):' "$TMP/lms.out"
ok "us: 'Latency (us):'" grep -qx 'Latency (us):' "$TMP/lus.out"
ok "us: the histogram says microseconds" grep -qx 'Latency histogram (values are in microseconds)' "$TMP/lus.out"
avg_ms=$(sed -n 's/^ *avg: *//p' "$TMP/lms.out")
avg_us=$(sed -n 's/^ *avg: *//p' "$TMP/lus.out")
cmp_ok "$avg_us" '>' 0 "us: avg is not 0.00 ($avg_us us; ms prints $avg_ms)"
cmp_ok "$(sed -n 's/^ *min: *//p' "$TMP/lus.out")" '>' 0 "us: min is not 0.00"
# same column as ms: the value ends in column 53
is "$(grep -E '^ +avg: +[0-9.]+$' "$TMP/lus.out" | awk '{ print length($0) }')" 53 "us: the layout of sysbench's block"
"$PGOLAB" bench --latency-unit=ns oltp_point_select run >/dev/null 2>"$TMP/lns.err"
is "$?/$(<"$TMP/lns.err")" "1/FATAL: --latency-unit=ns: expected ms (sysbench's, the default) or us" \
    "--latency-unit=ns: one line"

note "---- the results file: PGOLAB_RESULTS, and where experiments were last recorded"
W=$TMP/work
mkdir -p "$W" "$TMP/elsewhere"
(cd "$W" && timeout 120 "$PGOLAB" calibrate --bench=oltp_point_select --rounds=2 --time=1 \
    --table-size=100 >"$TMP/cal.out" 2>"$TMP/cal.err")
is "$?" 0 "calibrate in one directory: exit 0"
like "$(<"$TMP/cal.err")" "^experiment 1 recorded in pgolab\.db$" "calibrate: recorded in ./pgolab.db"
(cd "$TMP/elsewhere" && "$PGOLAB" history >"$TMP/h.out" 2>"$TMP/h.err")
is "$?" 1 "history in another directory: exit 1"
is "$(<"$TMP/h.err")" "FATAL: no results file pgolab.db; experiments were last recorded in $W/pgolab.db (--results=$W/pgolab.db, or set PGOLAB_RESULTS=$W/pgolab.db once)" \
    "history elsewhere: the message says where experiments were last recorded"
ok "history elsewhere: creates no file" test ! -e "$TMP/elsewhere/pgolab.db"
(cd "$TMP/elsewhere" && PGOLAB_RESULTS=$W/pgolab.db "$PGOLAB" history >"$TMP/h.out" 2>"$TMP/h.err")
is "$?" 0 "PGOLAB_RESULTS=...: history elsewhere finds the experiments"
like "$(<"$TMP/h.out")" '^ *1 .*calibrate +complete' "PGOLAB_RESULTS: history lists experiment 1"
(cd "$TMP/elsewhere" && PGOLAB_RESULTS=$W/pgolab.db "$PGOLAB" report >"$TMP/r.out" 2>"$TMP/r.err")
is "$?" 0 "PGOLAB_RESULTS: report elsewhere works"
is "$(verdict_last "$TMP/r.out")" ok "report of a calibration (its A/A pair): the verdict block is last"
like "$(<"$TMP/r.out")" "^  A': tps " "report of a calibration: the verdict of A' against A"
unlike "$(<"$TMP/r.out")" "^Table [0-9]+\. Load and trust per run" "report: the per-run trust table only with --trust-table"
(cd "$TMP/elsewhere" && PGOLAB_RESULTS=$W/pgolab.db "$PGOLAB" history --results="$TMP/none.db" >/dev/null 2>"$TMP/h.err")
like "$(<"$TMP/h.err")" "no results file $TMP/none\.db" "--results wins over PGOLAB_RESULTS"
rm -rf "$HOME/.local"
(cd "$TMP/elsewhere" && "$PGOLAB" history >/dev/null 2>"$TMP/h.err")
is "$(<"$TMP/h.err")" "FATAL: no results file pgolab.db (pgolab compare, pgo and calibrate record their experiments there; --results=FILE or PGOLAB_RESULTS=FILE names another)" \
    "no record of an earlier experiment: the message names --results and PGOLAB_RESULTS"

note "---- everything is checked before anything is recorded"
R=$TMP/check.db
"$PGOLAB" calibrate --bench=nope --results="$R" >"$TMP/c.out" 2>"$TMP/c.err"
is "$?" 1 "calibrate --bench=nope: exit 1"
like "$(<"$TMP/c.err")" "^FATAL: --bench: unknown workload 'nope' \(known: oltp_read_write, " "calibrate --bench=nope: one line naming the workload"
is "$(wc -l <"$TMP/c.err" | tr -d ' ')" 1 "calibrate --bench=nope: one line on stderr"
ok "calibrate --bench=nope: no results file" test ! -e "$R"
"$PGOLAB" calibrate --output=/nonexistent/dir/x.json --results="$R" >/dev/null 2>"$TMP/c.err"
like "$(<"$TMP/c.err")" "^FATAL: --output" "calibrate --output=unwritable: refused first"
ok "calibrate --output=unwritable: no results file" test ! -e "$R"

if have mariadbd || [ -x /usr/sbin/mariadbd ]; then
    note "---- a compare that fails before its first run (a bad --server-option)"
    (cd "$W" && timeout 180 "$PGOLAB" compare --variant a=mysql:/usr/sbin/mariadbd --variant b=mysql:/usr/sbin/mariadbd \
        --server-option=innodb_no_such_option=1 --bench=oltp_point_select --threads=1 --rounds=1 --time=1 \
        --table-size=100 --results="$R" >"$TMP/cmp.out" 2>"$TMP/cmp.err")
    is "$?" 1 "compare with a bad --server-option: exit 1" || diag "$(<"$TMP/cmp.err")"
    like "$(<"$TMP/cmp.err")" "^experiment 1 removed from $R: it failed before its first run$" \
        "compare: the experiment is removed again"
    unlike "$(<"$TMP/cmp.err")" "resume" "compare: no --resume suggested"
    "$PGOLAB" history --results="$R" >"$TMP/h.out" 2>&1
    is "$(<"$TMP/h.out")" "no experiments in $R" "compare: no junk row in history"
    log=$(sed -n 's/^---- last lines of \(.*\):$/\1/p' "$TMP/cmp.err" | head -1)
    is "$log" "$R.logs/experiment-1-a-server-start.log" "the message names a server log beside the results" ||
        diag "$(grep -v '^20' "$TMP/cmp.err")"
    ok "that log is kept" grep -q "innodb_no_such_option" "$log"

    note "---- server status without --datadir: the running pgolab servers"
    export PGOLAB_RUNTIME_DIR=$TMP/run
    "$PGOLAB" server status >"$TMP/st0.out" 2>&1
    is "$?/$(<"$TMP/st0.out")" "1/no pgolab servers running (started by this user; registry $TMP/run)" \
        "status with none running: exit 1, says so and where it looked"
    SD=$TMP/srv
    timeout 120 "$PGOLAB" server start --db-driver=mysql --datadir="$SD" >"$TMP/start.out" 2>&1
    is "$?" 0 "server start: exit 0"
    spid=$(sed -n 's/^server: .*(pid \([0-9]*\))$/\1/p' "$TMP/start.out")
    "$PGOLAB" server status >"$TMP/st1.out" 2>&1
    is "$?" 0 "status with one running: exit 0"
    like "$(<"$TMP/st1.out")" "^mysql  mariadbd [0-9.]+, pid $spid, 127\.0\.0\.1:[0-9]+, datadir $SD$" \
        "status lists the server: kind, binary, version, pid, port, datadir"
    like "$(<"$TMP/st1.out")" "^       stop: pgolab server stop --datadir=$SD$" "status gives its stop command"
    like "$(<"$TMP/st1.out")" '^1 pgolab server running; `pgolab server status --datadir=DIR` for one$' "status counts them"
    timeout 120 "$PGOLAB" server stop --datadir="$SD" >/dev/null 2>&1
    "$PGOLAB" server status >"$TMP/st2.out" 2>&1
    is "$?/$(head -c 26 "$TMP/st2.out")" "1/no pgolab servers running " "after stop: none listed"
    ok "after stop: the stale registry entry is gone" test ! -e "$TMP/run/$spid"
    "$PGOLAB" server status --db-driver=mysql >"$TMP/st3.out" 2>&1
    is "$?/$(<"$TMP/st3.out")" "1/FATAL: --db-driver without --datadir: status lists every pgolab server" \
        "status --db-driver without --datadir: one line"
else
    bail_out "mariadbd missing (scripts/install-deps.sh installs mariadb-server)"
fi

done_testing
