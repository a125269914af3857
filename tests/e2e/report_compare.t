#!/usr/bin/env bash
# `pgolab report --compare=ID1,ID2` and --fail-if-slower. The same two builds are measured
# twice (4 rounds: enough for a single cell to be significant). The second experiment is then
# made to look as if it ran on another machine by editing its recorded environment (hostname,
# kernel) with the sqlite3 CLI: the report must print the differences as a WARNING before the
# table. For a real, significant slowdown without building anything, a copy of the results
# file has variant B's recorded tps halved (and latencies doubled), as a build twice as slow
# would record them: `report --fail-if-slower` must exit 3 on it and 0 on the original;
# --fail-if-slower on compare itself is the same function (checked on a live A/A run in
# store_record.t).
. "$(dirname "$0")/lib.sh"

have sqlite3 || bail_out "the sqlite3 CLI is needed (apt-get install sqlite3)"
SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
vars=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")
common=(--bench=oltp_point_select --threads=1 --rounds=4 --time=1 --table-size=1000)
DB=$TMP/r.db

for i in 1 2; do
    timeout 120 "$PGOLAB" compare "${vars[@]}" "${common[@]}" --results="$DB" >"$TMP/c$i.out" 2>"$TMP/c$i.err"
    is "$?" 0 "experiment $i: exit 0"
done

# ---- the same machine: no warning. The load at each start is recorded, and one of a busy
# machine moves by more than the 0.5 that counts as a difference within seconds: the test
# gives experiment 2 experiment 1's load (a load difference is checked below)
sq "$DB" "UPDATE experiments SET environment_json = json_set(environment_json, '\$.loadavg_1m',
          (SELECT json_extract(environment_json, '\$.loadavg_1m') FROM experiments WHERE id = 1))
          WHERE id = 2"
timeout 60 "$PGOLAB" report --results="$DB" --compare=1,2 >"$TMP/same.out" 2>"$TMP/same.err"
is "$?" 0 "report --compare=1,2: exit 0"
like "$(head -1 "$TMP/same.out")" "^pgolab report: experiment 1 vs experiment 2 \(change = 2 against 1\)$" "title"
unlike "$(<"$TMP/same.out")" "WARNING" "same machine: no environment warning"
like "$(<"$TMP/same.out")" "environment: the same hostname, kernel, CPU model" "same machine: says so"
like "$(<"$TMP/same.out")" "variant B: the same build in both \(sha256 [0-9a-f]{12}\)" "same builds in both, by sha256"

# ---- "another machine": edit the recorded environment of experiment 2
sq "$DB" "UPDATE experiments SET environment_json = json_set(environment_json,
          '\$.hostname', 'client-b', '\$.kernel', '9.9.9-test', '\$.loadavg_1m',
          json_extract(environment_json, '\$.loadavg_1m') + 3) WHERE id = 2"
timeout 60 "$PGOLAB" report --results="$DB" --compare=1,2 >"$TMP/x.out" 2>"$TMP/x.err"
is "$?" 0 "report --compare across machines: exit 0"
out=$(<"$TMP/x.out")
like "$out" "^WARNING: experiments 1 and 2 ran in different environments; a change below may come from the machine" \
    "a WARNING block about the environment"
like "$out" "^  hostname: $(hostname) -> client-b$" "WARNING: hostname difference"
like "$out" "^  kernel: $(uname -r) -> 9\.9\.9-test$" "WARNING: kernel difference"
like "$out" "^  load \(1 min, at start\): [0-9.]+ -> [0-9.]+$" "WARNING: a load 3 higher at the start"
warn_line=$(grep -n '^WARNING' "$TMP/x.out" | head -1 | cut -d: -f1)
table_line=$(grep -n '^Table 1\.' "$TMP/x.out" | head -1 | cut -d: -f1)
cmp_ok "$warn_line" '<' "$table_line" "the warning comes before the tables"
for t in "Transactions per second" "Average response time \(ms\)" "95th percentile response time \(ms\)"; do
    block=$(T="$t" awk '/^Table / { on = ($0 ~ ENVIRON["T"]) } on' "$TMP/x.out")  # not -v: backslashes
    like "$block" "^\| variant \| +workload \| threads \| +experiment 1 +\| +experiment 2 +\| +change \(95% CI\) +\|$" "$t: header"
    for v in A B; do
        like "$block" "^\| +$v \| oltp_point_select \| +1 \| +[0-9.]+ \([0-9.]+-[0-9.]+\) +\| +[0-9.]+ \([0-9.]+-[0-9.]+\) +\| +(~|[-+][0-9.]+% \(95% CI .*\)) \|$" \
            "$t: cell ($v, oltp_point_select, 1): both medians and the change"
    done
done
timeout 60 "$PGOLAB" report --results="$DB" --compare=1,2 --format=json >"$TMP/x.json"
is "$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
      print join("|", $j->{report}, scalar @{$j->{environment_differences}}, scalar @{$j->{cells}})' <"$TMP/x.json")" \
    "compare|3|6" "json: 3 environment differences (hostname, kernel, load), 3 metrics x 2 variants"
timeout 60 "$PGOLAB" report --results="$DB" --compare=1,2 --format=csv >"$TMP/x.csv"
is "$(($(wc -l <"$TMP/x.csv") - 1))" 6 "csv: one row per metric and cell"
"$PGOLAB" report --results="$DB" --compare=1,99 >"$TMP/bad.out" 2>"$TMP/bad.err"
is "$?" 1 "--compare with an unknown id: exit 1"
like "$(<"$TMP/bad.err")" "^FATAL: no experiment 99 in $DB; it has experiments 1, 2 \(see pgolab history\)$" "--compare with an unknown id: message names the ids there are"
"$PGOLAB" report --results="$DB" --compare=1 >"$TMP/bad.out" 2>"$TMP/bad.err"
is "$?" 1 "--compare=1: exit 1"

# ---- --fail-if-slower
timeout 60 "$PGOLAB" report --results="$DB" --experiment=1 --fail-if-slower=30 >/dev/null 2>"$TMP/f0.err"
is "$?" 0 "A/A: --fail-if-slower=30 passes"
like "$(<"$TMP/f0.err")" "no tps cell significantly slower than the baseline A by more than 30%" "A/A: says it checked"
cp "$DB" "$TMP/slow.db"
# The copy gets steady measurements, so that the checks below depend neither on this machine's
# noise nor on which runs a busy machine made untrustworthy: in every round of both experiments
# A and B run within 1% of 1000 tps (B 0.2% above or below A, alternately) and no run has
# system metrics that could distrust it. Then B of experiment 2 is halved.
sq "$TMP/slow.db" "UPDATE runs SET tps = 1000.0 * (1 + 0.01 * (round % 3))
                       * (CASE variant_idx WHEN 1 THEN 1 + 0.002 * (2 * (round % 2) - 1) ELSE 1 END),
                   metrics_json = NULL"
sq "$TMP/slow.db" "UPDATE runs SET qps = tps, lat_avg_ms = 1000.0 / tps, lat_p95_ms = 1200.0 / tps"
sq "$TMP/slow.db" "UPDATE runs SET tps = tps / 2, qps = qps / 2, lat_avg_ms = lat_avg_ms * 2,
                   lat_p95_ms = lat_p95_ms * 2 WHERE experiment_id = 2 AND variant_idx = 1"
timeout 60 "$PGOLAB" report --results="$TMP/slow.db" --experiment=2 --fail-if-slower=5 >"$TMP/f1.out" 2>"$TMP/f1.err"
is "$?" 3 "B at half speed: --fail-if-slower=5 exits 3"
like "$(head -1 "$TMP/f1.err")" "^--fail-if-slower=5: 1 tps cell significantly slower than the baseline A by more than 5% \(exit 3\):$" \
    "... and says why"
like "$(<"$TMP/f1.err")" "^  B vs A, oltp_point_select, 1 thread: tps -[0-9.]+% \(95% CI -[0-9.]+% \.\. -[0-9.]+%\)$" \
    "... naming the cell, its change and CI"
block=$(awk '/^Table / { on = ($0 ~ /Transactions per second/) } on' "$TMP/f1.out")
like "$block" "^\| +1 \| .* \| +-[0-9.]+% \(95% CI -[0-9.]+% \.\. -[0-9.]+%\) \|$" "the table shows the significant drop"
timeout 60 "$PGOLAB" report --results="$TMP/slow.db" --experiment=2 --fail-if-slower=60 >/dev/null 2>&1
is "$?" 0 "B at half speed: --fail-if-slower=60 passes (not slower by more than 60%)"
timeout 60 "$PGOLAB" report --results="$TMP/slow.db" --compare=1,2 --fail-if-slower=5 >"$TMP/f2.out" 2>"$TMP/f2.err"
is "$?" 3 "--compare: B in experiment 2 at half speed of experiment 1: exit 3"
like "$(<"$TMP/f2.err")" "^  B in experiment 2 vs experiment 1, oltp_point_select, 1 thread: tps -" "--compare: names the cell"
timeout 60 "$PGOLAB" report --results="$TMP/slow.db" --compare=2,1 --fail-if-slower=5 >/dev/null 2>&1
is "$?" 0 "--compare the other way round (faster): exit 0"
"$PGOLAB" report --results="$DB" --experiment=1 --fail-if-slower=-1 >/dev/null 2>"$TMP/bad.err"
is "$?" 1 "--fail-if-slower=-1: exit 1"
like "$(<"$TMP/bad.err")" "invalid --fail-if-slower=-1" "--fail-if-slower=-1: message"
like "$("$PGOLAB" compare help)" "3 --fail-if-slower" "compare help documents exit status 3"
like "$("$PGOLAB" report help)" "3 --fail-if-slower" "report help documents exit status 3"
done_testing
