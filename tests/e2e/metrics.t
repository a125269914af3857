#!/bin/bash
# metrics.t: system metrics of every run (src/metrics). `pgolab compare` on two SQLite variants
# records metrics for every run (the store has them; `report` prints the metrics table in the
# default and the seed-002 shapes, the load per run with --trust-table (else one line); CSV and JSON carry them; so does the
# --output file); --metrics=off records none and says so; an unreadable /proc (the
# PGOLAB_METRICS_PROC test knob) degrades to one "metrics unavailable" line with every run
# still recorded; a managed PostgreSQL variant gets server CPU per transaction > 0 from more
# than one server process (its forked backends), split into user and system time that add up
# to it, shown in the server CPU table with the line that PGO and BOLT can only move user time;
# the ceiling (the server's user share of a transaction, the tps a build could gain at most)
# in text, JSON and the HTML page.
. "$(dirname "$0")/lib.sh"

PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/postgres" ] || bail_out "$PGBIN/postgres missing (scripts/install-deps.sh installs postgresql)"
SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
vars=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")
common=(--bench=oltp_point_select --threads=1 --rounds=2 --time=1 --table-size=1000)
DB=$TMP/r.db

# ---- SQLite: every run has metrics
timeout 120 "$PGOLAB" compare "${vars[@]}" "${common[@]}" --results="$DB" --output="$TMP/out.json" \
    >"$TMP/c.out" 2>"$TMP/c.err"
is "$?" 0 "compare of two SQLite variants: exit 0" || diag "$(tail -5 "$TMP/c.err")"
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE json_extract(metrics_json, '\$.available') = 1")" 4 \
    "all 4 runs stored with metrics"
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE json_extract(metrics_json, '\$.ctxsw_per_s') > 0 AND json_extract(metrics_json, '\$.intr_per_s') > 0 AND json_extract(metrics_json, '\$.client_us_per_txn') > 0 AND json_extract(metrics_json, '\$.nsamples') >= 2")" 4 \
    "each with ctxsw/s, intr/s, client CPU us/txn > 0 and at least 2 snapshots"
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE abs(json_extract(metrics_json, '\$.us_pct') + json_extract(metrics_json, '\$.sys_pct') + json_extract(metrics_json, '\$.idle_pct') + json_extract(metrics_json, '\$.iowait_pct') + json_extract(metrics_json, '\$.steal_pct') - 100) < 0.001")" 4 \
    "us + sys + idle + iowait + steal = 100% in every run"
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE json_extract(metrics_json, '\$.server_us_per_txn') IS NULL")" 4 \
    "no server CPU for an in-process SQLite variant"
like "$(<"$TMP/c.out")" "System metrics per cell" "compare prints the metrics table at the end"
like "$(<"$TMP/c.out")" "^Load and trust per run: [0-9]+ of 4 runs with metrics distrusted \(--trust-table lists every run\)\.$" \
    "compare counts the distrusted runs in one line"
unlike "$(<"$TMP/c.out")" "Load and trust per run \(" "compare: the per-run trust table only with --trust-table"
unlike "$(<"$TMP/c.out")" "Server CPU time per transaction" "no server CPU table for SQLite"
is "$(python3 -c "import json,sys; d=json.load(open('$TMP/out.json')); print(sum(1 for r in d['runs'] if r['metrics']['available']))")" 4 \
    "--output JSON: every run carries its metrics"

"$PGOLAB" report --results="$DB" >"$TMP/r.out" 2>"$TMP/r.err"
is "$?" 0 "report: exit 0"
like "$(<"$TMP/r.out")" "\| +variant +\| +workload +\| +threads +\| +speedup \(x\) +\| +intr/s +\| +ctxsw/s +\| +us% +\| +sys% +\| +idle% +\| +iowait% +\| +steal% +\| +ctxsw/txn +\| +CPU us/txn client +\| +CPU us/txn server +\| +distrusted runs +\|" \
    "report: the metrics table's seed-002 columns"
like "$(<"$TMP/r.out")" "\| +B +\| +oltp_point_select +\| +1 +\| +[0-9]+\.[0-9]{3} +\| +[0-9]+ ±[0-9]+ +\|" \
    "report: a row per variant with its speedup and intr/s ± spread"
like "$(<"$TMP/r.out")" "\| +[0-9]+ of 2 +\|" "report: distrusted runs counted per cell"
is "$(grep -cE '^\| +[1-4] \| +[AB] \| oltp_point_select \| +1 \| +[12] \| +[0-9.]+ / [0-9]+ \|' "$TMP/r.out")" 0 \
    "report: no row per run by default"
"$PGOLAB" report --results="$DB" --trust-table >"$TMP/rt.out" 2>"$TMP/rt.err"
is "$(grep -cE '^\| +[1-4] \| +[AB] \| oltp_point_select \| +1 \| +[12] \| +[0-9.]+ / [0-9]+ \|' "$TMP/rt.out")" 4 \
    "report --trust-table: the load of each of the 4 runs"
like "$(<"$TMP/rt.out")" "Table [0-9]+\. Load and trust per run \(run queue" "report --trust-table: the per-run table"
"$PGOLAB" report --results="$DB" --shape=seed002 >"$TMP/r2.out" 2>&1
like "$(<"$TMP/r2.out")" "Speedup \(x\) vs A" "seed002 shape: the speedup table"
like "$(<"$TMP/r2.out")" "System metrics per cell" "seed002 shape: the metrics table"
"$PGOLAB" report --results="$DB" --format=csv >"$TMP/r.csv" 2>&1
is "$(grep -c ',intr_per_s,' "$TMP/r.csv")" 2 "CSV: an intr/s row per variant"
like "$(grep ',B,0,' "$TMP/r.csv" | grep ',server_cpu_us_per_txn,')" "server_cpu_us_per_txn,B,0,,," \
    "CSV: server CPU empty for SQLite"
like "$(grep ',ctxsw_per_txn,A,1,' "$TMP/r.csv")" ",ctxsw_per_txn,A,1,[0-9.e-]+,[0-9.e-]+,,2," \
    "CSV: ctxsw/txn of the baseline with its 2 rounds"
"$PGOLAB" report --results="$DB" --format=json >"$TMP/r.json" 2>/dev/null
is "$(python3 -c "import json; d=json.load(open('$TMP/r.json')); print(len(d['runs_metrics']), sum(1 for c in d['cells'] if c['metric'] == 'us_pct'))")" "4 2" \
    "JSON: every run's metrics and a us% cell per variant"

# ---- --metrics=off
timeout 120 "$PGOLAB" compare "${vars[@]}" "${common[@]}" --rounds=1 --metrics=off --results="$TMP/off.db" \
    >"$TMP/off.out" 2>"$TMP/off.err"
is "$?" 0 "--metrics=off: exit 0"
is "$(sq "$TMP/off.db" "SELECT count(*) FROM runs WHERE metrics_json IS NULL")" 2 "--metrics=off: runs stored without metrics"
like "$(<"$TMP/off.out")" "System metrics: unavailable" "--metrics=off: the report says so"

# ---- an unreadable /proc: one line, every run recorded
PGOLAB_METRICS_PROC=$TMP/noproc timeout 120 "$PGOLAB" compare "${vars[@]}" "${common[@]}" --results="$TMP/bad.db" \
    >"$TMP/bad.out" 2>"$TMP/bad.err"
is "$?" 0 "unreadable /proc: exit 0, the experiment goes on"
is "$(grep -c 'metrics unavailable' "$TMP/bad.err")" 1 "unreadable /proc: said once"
like "$(<"$TMP/bad.err")" "metrics unavailable: cannot read $TMP/noproc/stat: No such file or directory" \
    "unreadable /proc: the line names the file and why"
is "$(sq "$TMP/bad.db" "SELECT count(*) FROM runs WHERE tps > 0 AND json_extract(metrics_json, '\$.available') = 0")" 4 \
    "unreadable /proc: all 4 runs recorded, marked without metrics"
like "$(<"$TMP/bad.out")" "System metrics: unavailable \\(cannot read $TMP/noproc/stat" "unreadable /proc: the report says why"

# ---- managed PostgreSQL: the server's processes
WD=$(mktemp -u /dev/shm/pgolab-e2e-wd.XXXXXX)
on_exit 'rm -rf "$WD"; _e2e_cleanup'
timeout 300 "$PGOLAB" compare --variant "A=pgsql:$PGBIN/postgres" --variant "B=pgsql:$PGBIN/postgres" \
    --bench=oltp_point_select --threads=2 --rounds=1 --time=2 --table-size=500 --workdir="$WD" \
    --results="$TMP/pg.db" >"$TMP/pg.out" 2>"$TMP/pg.err"
is "$?" 0 "managed PostgreSQL A/A: exit 0" || diag "$(tail -5 "$TMP/pg.err")"
is "$(sq "$TMP/pg.db" "SELECT count(*) FROM runs WHERE json_extract(metrics_json, '\$.server_us_per_txn') > 0 AND json_extract(metrics_json, '\$.client_us_per_txn') > 0")" 2 \
    "PostgreSQL: server and client CPU us/txn > 0 in both runs"
is "$(sq "$TMP/pg.db" "SELECT count(*) FROM runs WHERE json_extract(metrics_json, '\$.server_procs') > 1")" 2 \
    "PostgreSQL: the server CPU came from more than one process (postmaster's forked backends)"
like "$(<"$TMP/pg.out")" "\| +A +\| +oltp_point_select +\| +2 +\| +1\.000 +\|.*\| +[0-9.]+ +\| +[0-9.]+ +\| +[0-9]+ of 1 +\|" \
    "PostgreSQL: the metrics row has client and server CPU us/txn"
# the server's CPU split into user and system time: stored per run and adding up to the server
# CPU figure (and the client's to its own), within rounding
is "$(sq "$TMP/pg.db" "SELECT count(*) FROM runs WHERE json_extract(metrics_json, '\$.server_user_us_per_txn') > 0 AND json_extract(metrics_json, '\$.server_sys_us_per_txn') >= 0 AND abs(json_extract(metrics_json, '\$.server_user_us_per_txn') + json_extract(metrics_json, '\$.server_sys_us_per_txn') - json_extract(metrics_json, '\$.server_us_per_txn')) <= 1e-6 * json_extract(metrics_json, '\$.server_us_per_txn') + 1e-6")" 2 \
    "PostgreSQL: server user + system us/txn = server us/txn in both runs (user > 0)"
is "$(sq "$TMP/pg.db" "SELECT count(*) FROM runs WHERE abs(json_extract(metrics_json, '\$.client_user_us_per_txn') + json_extract(metrics_json, '\$.client_sys_us_per_txn') - json_extract(metrics_json, '\$.client_us_per_txn')) <= 1e-6 * json_extract(metrics_json, '\$.client_us_per_txn') + 1e-6")" 2 \
    "PostgreSQL: client user + system us/txn = client us/txn in both runs"
block=$(awk '/^Table [0-9]+\. / { on = /Server CPU time per transaction \(us\), user and system, oltp_point_select/ } on' "$TMP/pg.out")
like "$block" "\| +threads \| +CPU \| +A +\| +B +\| % improvement \| +change \(95% CI\) +\|" \
    "PostgreSQL: the server CPU table per workload, with the tps table's columns"
for part in user system; do
    like "$block" "\| +2 \| +$part \| +[0-9]+\.[0-9]+ +\| +[0-9]+\.[0-9]+ +\| +([-+][0-9]+\.[0-9]+|-) \| +no statistics with 1 round \|" \
        "PostgreSQL: the $part row has both variants' us/txn (1 round: no statistics)"
    like "$block" "\| +Average \| +$part \|" "PostgreSQL: the $part Average row"
done
like "$block" "PGO and BOLT change the server's code: only its user time can move; a change in system time is the machine or the I/O, not the build\." \
    "PostgreSQL: the line under the table"
# what the build could change: the server's user share of a transaction and the ceiling,
# with the measured tps change beside the expected one (X = min(2 threads, cores) / tps)
block=$(awk '/^Table [0-9]+\. / { on = /What the builds could change: the server.s user time in a transaction, oltp_point_select/ } on' "$TMP/pg.out")
like "$block" "\| +threads \| +variant \| +X \(us\) \| +server user u \(us\) \| +u / X \| +ceiling \| +change of u \| +expected tps \| +measured tps \|" \
    "PostgreSQL: the ceiling table's columns"
like "$block" "\| +2 \| +A \| +[0-9.]+ \| +[0-9.]+ \| +[0-9]+% \| +\+[0-9.]+% \| +\(baseline\) \|" \
    "PostgreSQL: the baseline's row: X, u, its share and the ceiling"
like "$block" "\| +2 \| +B \| +[0-9.]+ \| +[0-9.]+ \| +[0-9]+% \| +\+[0-9.]+% \| +[-+][0-9.]+ us \([-+][0-9.]+%\) \| +[-+][0-9.]+% \| +[-+][0-9.]+% \(no statistics with 1 round\) \|" \
    "PostgreSQL: the variant's row: the change of u, the expected and the measured tps change"
"$PGOLAB" report --results="$TMP/pg.db" --format=csv >"$TMP/pg.csv" 2>/dev/null
is "$(grep -c ',server_user_us_per_txn,' "$TMP/pg.csv") $(grep -c ',server_sys_us_per_txn,' "$TMP/pg.csv")" "4 4" \
    "CSV: user and system rows per variant (2 threads and Average)"
"$PGOLAB" report --results="$TMP/pg.db" --format=json >"$TMP/pg.json" 2>/dev/null
is "$(python3 - "$TMP/pg.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cell = {(c["metric"], c["variant"]): c["value"] for c in d["cells"] if c["threads"] == 2}
ok = 0
for v in ("A", "B"):
    u, s, t = (cell[(k, v)] for k in ("server_user_us_per_txn", "server_sys_us_per_txn",
                                      "server_cpu_us_per_txn"))
    ok += u > 0 and s >= 0 and abs(u + s - t) <= 1e-6 * t + 1e-6
print(ok, "PGO and BOLT" in d.get("server_cpu_note", ""))
PY
)" "2 True" "JSON: per variant user + system = the metrics table's server CPU us/txn; the note"
# the ceiling in JSON: per variant the server's user share s of a transaction and the ceiling
# s / (1 - s) (= X / (X - u) - 1), the variant's expected tps change, and the note
is "$(python3 - "$TMP/pg.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cell = {(c["metric"], c["variant"]): c["value"] for c in d["cells"] if c["threads"] == 2}
ok = 0
for v in ("A", "B"):
    s, c = cell[("server_user_share_pct", v)], cell[("ceiling_tps_pct", v)]
    ok += 0 < s < 100 and abs(c - 100 * s / (100 - s)) <= 1e-6 * c + 1e-6
print(ok, ("expected_tps_change_pct", "B") in cell, ("expected_tps_change_pct", "A") in cell,
      "ceiling" in d.get("ceiling_note", ""))
PY
)" "2 True False True" "JSON: per variant the user share and the ceiling s/(1-s), B's expected tps change, the note"
# ... and in the HTML page: the ceiling table with its columns and a row per variant
"$PGOLAB" report --results="$TMP/pg.db" --format=html --output="$TMP/pg.html" 2>"$TMP/pgh.err"
is "$?" 0 "HTML report: exit 0" || diag "$(<"$TMP/pgh.err")"
ctab=$(awk '/What the builds could change: the server/ && /user time in a transaction, oltp_point_select/ { on = 1 } on && /<\/table>/ { print; exit } on' "$TMP/pg.html")
like "$ctab" "<th>u / X</th>.*<th>ceiling</th>" "HTML: the ceiling table's columns"
is "$(printf '%s\n' "$ctab" | grep -cE '<tr><td( class="[^"]*")?>2</td><td( class="[^"]*")?>(A|B)</td>')" 2 "HTML: its row per variant"
ok "work directory removed" test ! -e "$WD"

done_testing
