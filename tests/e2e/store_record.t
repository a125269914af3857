#!/usr/bin/env bash
# Recording in the results database: `pgolab compare` records the experiment (settings,
# environment, variants with fingerprints, every run) and says so first; `pgolab report`
# rebuilds the very report compare printed; `pgolab history` lists it; the default file is
# ./pgolab.db; bad results files (not SQLite, another application's, a newer schema) and
# unknown ids are one-line errors that touch nothing.
. "$(dirname "$0")/lib.sh"

have sqlite3 || bail_out "the sqlite3 CLI is needed (apt-get install sqlite3)"
SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
vars=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")
common=(--bench=oltp_point_select --threads=1 --rounds=2 --time=1 --table-size=1000)
DB=$TMP/r.db

# ---- 1. a recorded compare
timeout 120 "$PGOLAB" compare "${vars[@]}" "${common[@]}" --results="$DB" --fail-if-slower=30 \
    >"$TMP/c1.out" 2>"$TMP/c1.err"
is "$?" 0 "compare: exit 0"
is "$(head -1 "$TMP/c1.err")" "experiment 1 recorded in $DB" "stderr starts with the experiment id and file"
like "$(head -1 "$TMP/c1.out")" "^pgolab experiment 1 \(compare\): 2 variants" "the report header names experiment 1"
like "$(<"$TMP/c1.err")" "^--fail-if-slower=30: no tps cell significantly slower than the baseline A" \
    "--fail-if-slower on an A/A run: checked, nothing slower"

is "$(sq "$DB" "SELECT kind || ' ' || status || ' ' || (finished_at IS NOT NULL) FROM experiments WHERE id = 1")" \
    "compare complete 1" "experiment row: kind compare, status complete, finished"
is "$(sq "$DB" "SELECT json_extract(settings_json, '\$.rounds') || ' ' || json_extract(settings_json, '\$.table_size')
               || ' ' || json_extract(settings_json, '\$.time_s') || ' ' || json_extract(settings_json, '\$.tables')
               || ' ' || json_extract(settings_json, '\$.workloads') || ' ' || json_extract(settings_json, '\$.threads')
               FROM experiments WHERE id = 1")" \
    '2 1000 1.0 1 ["oltp_point_select"] [1]' "settings: rounds, table size, time, tables, workloads, threads"
sha=$(sha256sum "$TMP/libcopy.so" | cut -c1-64)
is "$(sq "$DB" "SELECT json_extract(settings_json, '\$.\"variant.B\".library') || ' ' ||
               json_extract(settings_json, '\$.\"variant.B\".sha256') FROM experiments WHERE id = 1")" \
    "$TMP/libcopy.so $sha" "settings: each variant's path and sha256"
is "$(sq "$DB" "SELECT json_extract(environment_json, '\$.kernel') || ' ' || json_extract(environment_json, '\$.cores')
               || ' ' || json_extract(environment_json, '\$.hostname') FROM experiments WHERE id = 1")" \
    "$(uname -r) $(nproc) $(hostname)" "environment: kernel, cores, hostname"
is "$(sq "$DB" "SELECT group_concat(idx || ':' || name || ':' || length(sha256) || ':' || (version IS NOT NULL), ' ')
               FROM (SELECT * FROM variants WHERE experiment_id = 1 ORDER BY idx)")" \
    "0:A:64:1 1:B:64:1" "variants recorded with sha256 and version"
is "$(sq "$DB" "SELECT count(*) || ' ' || min(seq) || ' ' || max(seq) || ' ' || sum(json_extract(report_json, '\$.tps') = tps)
               || ' ' || sum(duration_s > 0) FROM runs WHERE experiment_id = 1")" \
    "4 1 4 4 4" "4 runs, seq 1..4, each with the child's JSON report and its duration"

# ---- 2. report and history read it back
timeout 60 "$PGOLAB" report --experiment=1 --results="$DB" >"$TMP/r1.out" 2>"$TMP/r1.err"
is "$?" 0 "report --experiment=1: exit 0"
ok "report rebuilt from the store = the report compare printed" cmp -s "$TMP/c1.out" "$TMP/r1.out"
"$PGOLAB" history --results="$DB" >"$TMP/h.out" 2>"$TMP/h.err"
is "$?" 0 "history: exit 0"
like "$(head -1 "$TMP/h.out")" "^id +started +kind +status +variants +workloads +runs$" "history: header"
like "$(sed -n 2p "$TMP/h.out")" "^ *1  [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}  compare  complete  A,B +oltp_point_select  4/4$" \
    "history: id, date, kind, status, variants, workloads, runs done/planned"

# ---- 3. the default results file is ./pgolab.db
mkdir "$TMP/cwd"
(cd "$TMP/cwd" && timeout 120 "$PGOLAB" compare "${vars[@]}" "${common[@]}" >"$TMP/c2.out" 2>"$TMP/c2.err")
is "$?" 0 "compare without --results: exit 0"
is "$(head -1 "$TMP/c2.err")" "experiment 1 recorded in pgolab.db" "default: experiment 1 recorded in pgolab.db"
is "$(sq "$TMP/cwd/pgolab.db" "SELECT count(*) FROM runs")" 4 "default: ./pgolab.db holds the runs"
(cd "$TMP/cwd" && "$PGOLAB" history >"$TMP/h2.out" 2>&1)
is "$(grep -c compare "$TMP/h2.out")" 1 "history without --results reads ./pgolab.db"

# ---- 4. bad input: one line, exit 1, nothing touched
printf 'just some text\n' >"$TMP/text.db"
sqlite3 "$TMP/other.db" "CREATE TABLE t(x); INSERT INTO t VALUES (1);"
cp "$DB" "$TMP/newer.db"
sqlite3 "$TMP/newer.db" "PRAGMA user_version = 99;"
rm -f "$TMP/newer.db-wal" "$TMP/newer.db-shm"
for spec in "text.db:not a SQLite database" "other.db:not a pgolab results database" "newer.db:newer pgolab"; do
    f=$TMP/${spec%%:*} re=${spec#*:}
    before=$(sha256sum "$f" | cut -c1-64)
    for cmd in compare pgo history report; do
        case $cmd in
        compare) args=("${vars[@]}" "${common[@]}" --workdir="$TMP/wd-bad") ;;
        pgo) args=(sqlite --workdir="$TMP/wd-bad") ;;
        *) args=() ;;
        esac
        timeout 60 "$PGOLAB" "$cmd" "${args[@]}" --results="$f" >"$TMP/bad.out" 2>"$TMP/bad.err"
        rc=$?
        is "$rc" 1 "${spec%%:*}: $cmd exits 1"
        like "$(head -1 "$TMP/bad.err")" "$re" "${spec%%:*}: $cmd says '$re'"
        is "$(wc -l <"$TMP/bad.err" | tr -d ' ')" 1 "${spec%%:*}: $cmd: one line"
    done
    is "$(sha256sum "$f" | cut -c1-64)" "$before" "${spec%%:*}: file unchanged"
    ok "${spec%%:*}: no -wal or -shm file created" test ! -e "$f-wal" -a ! -e "$f-shm"
done
ok "a refused results file: compare and pgo ran nothing (no work directory)" test ! -e "$TMP/wd-bad"
timeout 60 "$PGOLAB" pgo sqlite --workdir="$TMP/wd-bad" --results="$DB" --resume=42 >"$TMP/bad.out" 2>"$TMP/bad.err"
is "$?" 1 "pgo --resume=42: exit 1"
like "$(<"$TMP/bad.err")" "^FATAL: no experiment 42 in $DB; it has experiments? [0-9]+([-, ]+[0-9]+)* \(see pgolab history\)$" "pgo --resume=42: refused before building"
timeout 60 "$PGOLAB" pgo sqlite --workdir="$TMP/wd-bad" --results="$DB" --resume=1 >"$TMP/bad.out" 2>"$TMP/bad.err"
is "$(<"$TMP/bad.err")" "FATAL: experiment 1 is complete; nothing to resume" "pgo --resume of a complete experiment: refused"
ok "... without building anything" test ! -e "$TMP/wd-bad"

"$PGOLAB" report --experiment=42 --results="$DB" >"$TMP/bad.out" 2>"$TMP/bad.err"
is "$?" 1 "unknown experiment: exit 1"
like "$(<"$TMP/bad.err")" "^FATAL: no experiment 42 in $DB; it has experiments? [0-9]+([-, ]+[0-9]+)* \(see pgolab history\)$" "unknown experiment: one-line message naming the ids there are"
is "$(wc -l <"$TMP/bad.err")" 1 "unknown experiment: one line"
for cmd in history report; do
    "$PGOLAB" $cmd --results="$TMP/missing.db" >"$TMP/bad.out" 2>"$TMP/bad.err"
    is "$?" 1 "$cmd of a missing file: exit 1"
    like "$(<"$TMP/bad.err")" "no results file .*missing.db" "$cmd of a missing file: says so"
    ok "$cmd of a missing file: does not create it" test ! -e "$TMP/missing.db"
    : >"$TMP/empty.db"
    "$PGOLAB" $cmd --results="$TMP/empty.db" >"$TMP/bad.out" 2>"$TMP/bad.err"
    is "$?" 1 "$cmd of an empty file: exit 1"
    is "$(<"$TMP/bad.err")" "FATAL: results file $TMP/empty.db: empty (0 bytes), not a pgolab results database (pgolab compare, pgo and calibrate record their experiments in one)" \
        "$cmd of an empty file: one line"
    is "$(stat -c %s "$TMP/empty.db")" 0 "$cmd of an empty file: does not make it a database"
done
# --profile of an experiment recorded without profiles (its runs' options say "profile": "off")
"$PGOLAB" report --results="$DB" --profile >"$TMP/np.out" 2>"$TMP/np.err"
is "$?" 1 "report --profile without profiles: exit 1"
like "$(grep FATAL "$TMP/np.err")" "^FATAL: experiment [0-9]+ has no CPU profiles \(it ran without --profile\)$" \
    "report --profile without profiles: says so in one line"
like "$(<"$TMP/np.out")" "Table 1\." "report --profile without profiles: the report itself is written"
"$PGOLAB" report --results="$DB" --format=xml >"$TMP/bad.out" 2>"$TMP/bad.err"
is "$?" 1 "report --format=xml: exit 1"
like "$(<"$TMP/bad.err")" "invalid --format=xml" "report --format=xml: message"
"$PGOLAB" compare "${vars[@]}" --resume=0 >"$TMP/bad.out" 2>"$TMP/bad.err"
is "$?" 1 "compare --resume=0: exit 1"
like "$(<"$TMP/bad.err")" "invalid --resume=0" "compare --resume=0: message"

# a damaged database whose start times are no time (1e248 s, -5e20 s; kept by tests/fuzz/ as a
# regression input): history and report say "unknown" instead of an undefined conversion
DAMAGED=$REPO_DIR/tests/fuzz/regressions/store/created_at_nan_huge.db
cp "$DAMAGED" "$TMP/damaged.db"
"$PGOLAB" history --results="$TMP/damaged.db" >"$TMP/dh.out" 2>"$TMP/dh.err"
is "$?" 0 "history of a database with impossible start times: exit 0"
is "$(awk '$1 ~ /^[0-9]+$/ {print $1, $2}' "$TMP/dh.out" | tr '\n' ' ')" "1 unknown 2 unknown " \
    "history: the impossible start times read 'unknown'"
"$PGOLAB" report --results="$TMP/damaged.db" --experiment=1 --format=json >"$TMP/dr.out" 2>"$TMP/dr.err"
is "$(jq -r '.experiment.started_at // "absent"' "$TMP/dr.out" 2>/dev/null)" "unknown" \
    "report --format=json: started_at 'unknown'"
# a NOT NULL column read as NULL (another kept fuzz input): one line naming the file, exit 1
cp "$REPO_DIR/tests/fuzz/regressions/store/kind_null.db" "$TMP/nokind.db"
"$PGOLAB" history --results="$TMP/nokind.db" >"$TMP/nk.out" 2>"$TMP/nk.err"
is "$?" 1 "history of a database with an experiment without kind: exit 1"
is "$(<"$TMP/nk.err")" "FATAL: results file $TMP/nokind.db: experiment 0 has no kind (the file is damaged)" \
    "history: one line naming the file and what is damaged"
# settings that are not JSON: report refuses the experiment in one line (it printed "0 s per
# run" before, and report --compare a FATAL line with exit 0)
cp "$DB" "$TMP/badjson.db"
sq "$TMP/badjson.db" "UPDATE experiments SET settings_json = '{garbage' WHERE id = 1"
"$PGOLAB" report --results="$TMP/badjson.db" --experiment=1 >"$TMP/bj.out" 2>"$TMP/bj.err"
is "$?" 1 "report of an experiment whose settings are not JSON: exit 1"
is "$(<"$TMP/bj.err")" "FATAL: experiment 1: its recorded settings are not a JSON object: the database is damaged" \
    "report: one line naming the experiment and what is damaged"
"$PGOLAB" report --results="$TMP/badjson.db" --compare=1,1 >"$TMP/bj.out" 2>"$TMP/bj.err"
is "$?" 1 "report --compare with it: exit 1"
# a directory as the results file
mkdir -p "$TMP/adir"
"$PGOLAB" history --results="$TMP/adir" >"$TMP/ad.out" 2>"$TMP/ad.err"
is "$?" 1 "history --results=DIRECTORY: exit 1"
is "$(<"$TMP/ad.err")" "FATAL: results file $TMP/adir: a directory (expected a results database file, e.g. $TMP/adir/pgolab.db)" \
    "history --results=DIRECTORY: one line saying so"
done_testing
