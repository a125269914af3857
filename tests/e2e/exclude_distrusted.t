#!/usr/bin/env bash
# --exclude-distrusted on `report` and `compare`: the statistics without the runs the trust
# rules flag (src/metrics: steal, iowait, run queue, other work), the number left out said in
# the header, the verdict and the JSON; without the option nothing changes. A SQLite A/B compare
# of 6 rounds is made, then a copy of its results file is given steady numbers (as in
# report_compare.t, so nothing depends on this machine's noise): every run trusted, B 10%
# faster than A in every round but rounds 1 and 2, where B ran at half speed under 50% steal
# (a co-tenant took the CPU). With those runs the gain is not significant; without them it is,
# and the verdict says the two runs were left out. A live compare --exclude-distrusted says
# how many it left out in its header, verdict and --output file (the store keeps every run),
# and `report --exclude-distrusted` rebuilds the same verdict from the store.
. "$(dirname "$0")/lib.sh"

have sqlite3 || bail_out "the sqlite3 CLI is needed (apt-get install sqlite3)"
SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
vars=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")
common=(--bench=oltp_point_select --threads=1 --rounds=6 --time=1 --table-size=1000)
DB=$TMP/x.db

# ---- a live compare with the option: its verdict counts what it left out
timeout 180 "$PGOLAB" compare "${vars[@]}" "${common[@]}" --results="$DB" --exclude-distrusted \
    --output="$TMP/c.json" >"$TMP/c.out" 2>"$TMP/c.err"
is "$?" 0 "compare --exclude-distrusted: exit 0" || diag "$(tail -5 "$TMP/c.err")"
left=$(sed -n 's/^  --exclude-distrusted: \([0-9]*\) distrusted runs\{0,1\} left out of every number below (\([0-9]*\) of 12 runs used)$/\1 \2/p' "$TMP/c.out" | head -1)
like "$left" "^[0-9]+ [0-9]+$" "compare: the header says how many distrusted runs were left out"
n=${left% *}
is "$(( n + ${left#* } ))" 12 "... and how many were used (together the 12 run)"
like "$(awk '/^Verdict against A/ { on = 1 } on' "$TMP/c.out")" \
    "noise: .*; $n of [0-9]+ runs distrusted, $n left out \(--exclude-distrusted\)$" \
    "compare: the verdict says the same number was left out"
is "$(jq -r '[.runs_left_out, (.runs | length), .complete] | map(tostring) | join(" ")' "$TMP/c.json")" \
    "$n $((12 - n)) true" "compare --output: runs_left_out, the runs kept, complete"
is "$(sq "$DB" "SELECT count(*) FROM runs")" 12 "the results database keeps every run"
timeout 60 "$PGOLAB" report --results="$DB" --exclude-distrusted >"$TMP/r.out" 2>"$TMP/r.err"
is "$?" 0 "report --exclude-distrusted of that experiment: exit 0"
is "$(awk '/^Verdict against A/ { on = 1 } on' "$TMP/r.out")" \
    "$(awk '/^Verdict against A/ { on = 1 } on' "$TMP/c.out")" \
    "report --exclude-distrusted rebuilds compare's verdict from the store"

# ---- steady numbers: B +10% in every round but 1 and 2, run at half speed under 50% steal
cp "$DB" "$TMP/s.db"
sq "$TMP/s.db" "UPDATE experiments SET environment_json = json_set(environment_json, '\$.loadavg_1m', 0.1)"
sq "$TMP/s.db" "UPDATE runs SET tps = 1000.0 * (1 + 0.01 * (round % 3))
                   * (CASE WHEN variant_idx = 0 THEN 1 WHEN round <= 2 THEN 0.5 ELSE 1.1 END),
                   metrics_json = json_set(metrics_json, '\$.steal_pct', 0, '\$.iowait_pct', 0,
                                           '\$.other_pct', 0, '\$.runq_avg', 0)"
sq "$TMP/s.db" "UPDATE runs SET qps = tps, lat_avg_ms = 1000.0 / tps, lat_p95_ms = 1200.0 / tps"
sq "$TMP/s.db" "UPDATE runs SET metrics_json = json_set(metrics_json, '\$.steal_pct', 50)
                WHERE variant_idx = 1 AND round <= 2"
is "$(sq "$TMP/s.db" "SELECT count(*) FROM runs WHERE json_extract(metrics_json, '\$.available')")" 12 \
    "every run of the copy has system metrics"

rep() { # NAME ARGS...: report of the steady copy into $TMP/NAME.out
    local name=$1
    shift
    timeout 60 "$PGOLAB" report --results="$TMP/s.db" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}
rep all
is "$RC" 0 "report with the distrusted runs: exit 0"
verdict=$(awk '/^Verdict against A/ { on = 1 } on' "$TMP/all.out")
like "$verdict" "^  B: tps [-+][0-9.]+% \(95% CI [^)]*\) ~; significant in 0 of 1 cell$" \
    "with the two slow distrusted runs B's gain is not significant"
like "$verdict" "; 2 of 12 runs distrusted$" "... and the verdict counts them as distrusted"
unlike "$(<"$TMP/all.out")" "exclude-distrusted|left out" "without the option nothing is left out"

rep ex --exclude-distrusted
is "$RC" 0 "report --exclude-distrusted: exit 0"
like "$(<"$TMP/ex.out")" "^  --exclude-distrusted: 2 distrusted runs left out of every number below \(10 of 12 runs used\)$" \
    "the header says 2 runs were left out, 10 used"
unlike "$(<"$TMP/ex.out")" "INCOMPLETE" "runs left out do not make the experiment incomplete"
verdict=$(awk '/^Verdict against A/ { on = 1 } on' "$TMP/ex.out")
like "$verdict" "^  B: tps \+9\.5% \(95% CI \+[0-9.]+% \.\. \+[0-9.]+%\) better; significant in 1 of 1 cell$" \
    "without them B's +9.5% (B's 4 trusted rounds' median over A's 6) is significant"
like "$verdict" "; 2 of 12 runs distrusted, 2 left out \(--exclude-distrusted\)$" \
    "... and the verdict says the 2 distrusted runs were left out"
like "$(<"$TMP/ex.out")" "^Load and trust per run: 0 of 10 runs with metrics distrusted after --exclude-distrusted left out 2 " \
    "the trust line counts the runs kept and those left out"
block=$(awk '/^Table / { on = ($0 ~ /Transactions per second/) } on' "$TMP/ex.out")
like "$block" "^\| +1 \| 1010\.00 \(1000\.00-1020\.00\) \| 1105\.50 \(1100\.00-1122\.00\) \| +\+9\.46 \| \+9\.5% \(95% CI " \
    "the tps table: B's median of its 4 trusted runs, +9.46 and the CI"

rep exjson --exclude-distrusted --format=json
is "$(jq -r '[.experiment.runs, .experiment.runs_left_out, .experiment.complete,
              .verdict.distrusted_runs, .verdict.distrusted_runs_left_out,
              .verdict.variants[0].gains[0].change.significant] | map(tostring) | join(" ")' "$TMP/exjson.out")" \
    "10 2 true 2 2 true" "json: 10 runs used, 2 left out, complete; the verdict's counts; significant"
is "$(jq -r '[.cells[] | select(.metric == "tps" and .threads == 1) | .rounds.n] | map(tostring) | join(" ")' "$TMP/exjson.out")" \
    "6 4" "json: A's cell has its 6 rounds, B's the 4 trusted ones"
rep alljson --format=json
is "$(jq -r '[(.experiment | has("runs_left_out")), (.verdict | has("distrusted_runs_left_out"))] | map(tostring) | join(" ")' "$TMP/alljson.out")" \
    "false false" "json without the option: no new keys"
rep excsv --exclude-distrusted --format=csv
is "$(awk -F, '$6 == "tps" && $7 == "B" && $5 == "1" { print $12 }' "$TMP/excsv.out")" 4 \
    "csv: B's tps cell has n = 4"

# ---- report --compare: the header line of each experiment says what was left out
rep cmp --compare=1,1 --exclude-distrusted
is "$RC" 0 "report --compare --exclude-distrusted: exit 0"
like "$(<"$TMP/cmp.out")" ", 12 of 12 runs \(2 distrusted left out: --exclude-distrusted\)$" \
    "report --compare: each experiment's line says how many were left out"

# ---- the option is documented
for c in compare report pgo; do
    like "$("$PGOLAB" $c --help)" "--exclude-distrusted" "$c --help documents --exclude-distrusted"
done
done_testing
