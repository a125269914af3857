#!/usr/bin/env bash
# `pgolab calibrate`: a short real A/A run of the system SQLite gives a row per metric with a
# plausible CV, "~" in most A/A cells, a detectable change and round counts that follow the
# documented formula from the printed CV; too few rounds say "never"; Ctrl-C exits 2; bad input
# is a one-line error with exit 1.
. "$(dirname "$0")/lib.sh"

# The planning formula (src/stats/compare.h, stats_detectable_change / stats_rounds_needed):
#   delta = (z_0.975 + z_0.8) * CV * sqrt(2/n) / sqrt(3/pi)
#   n     = ceil(2 * ((z_0.975 + z_0.8) * CV / change)^2 / (3/pi)), at least 4 (alpha 0.05)
Z=1.959964+0.841621

run=(--bench=oltp_point_select --threads=1,2 --rounds=4 --time=1 --table-size=1000)
timeout 180 "$PGOLAB" calibrate "${run[@]}" --workdir="$TMP/wd" --output="$TMP/cal.json" --results="$TMP/r.db" \
    >"$TMP/cal.out" 2>"$TMP/cal.err"
is "$?" 0 "calibrate: exit 0" || diag "$(<"$TMP/cal.err")"
out=$(<"$TMP/cal.out")
like "$out" "^Noise calibration \(A/A\): /.*libsqlite3\.so" "header names the system library it found"
like "$out" "\| workload +\| threads \| metric +\| +mean \| +CV \| A/A +\| detectable \(4 rounds\) \| rounds for 5% \| rounds for 2% \|" \
    "table header"

# Table rows as "threads|metric|CV|A/A|detectable|r5|r2" (the pipe table's cells, trimmed).
rows=$(awk -F'|' '$2 ~ /^ oltp_point_select / {
    for (i = 2; i <= 10; i++) gsub(/^ +| +$/, "", $i)
    print $3 "|" $4 "|" $6 "|" $7 "|" $8 "|" $9 "|" $10 }' "$TMP/cal.out")
for t in 1 2; do
    for m in "tps" "avg lat (ms)" "p95 lat (ms)"; do
        is "$(printf '%s\n' "$rows" | awk -F'|' -v t="$t" -v m="$m" '$1 == t && $2 == m' | wc -l | tr -d ' ')" 1 \
            "threads=$t: one row for $m"
    done
done

nrows=0
nsame=0
while IFS='|' read -r t m cv aa det r5 r2; do
    nrows=$((nrows + 1))
    cvn=${cv%\%}
    cmp_ok "$cvn" '>' 0 "threads=$t $m: CV $cv > 0"
    like "$cvn" '^[0-9]+\.[0-9]{2}$' "threads=$t $m: CV $cv is a number (no upper bound: a busy machine's can pass 100%)"
    case $aa in "~"*) nsame=$((nsame + 1)) ;; esac
    # a p-value only where it decides the verdict: beside "~" only when the CI leaves 1 out
    # and the test's p (>= 0.05) is what says "~"
    if [[ $aa =~ ^~.*p=([0-9.]+) ]]; then
        cmp_ok "${BASH_REMATCH[1]}" '>=' 0.05 "threads=$t $m: the p beside ~ is what says ~ ($aa)"
    else
        unlike "$aa" "^~.*p=" "threads=$t $m: no p-value beside ~ ($aa)"
    fi
    # The CV is printed to 0.01 points, the detectable change too: allow both roundings.
    want=$(calc "($Z) * $cvn * sqrt(2 / 4) / sqrt(3 / 3.141592653589793)")
    near "${det%\%}" "$want" 0.02 "threads=$t $m: detectable $det follows from CV $cv and 4 rounds"
    # Rounds: ceil() of the formula over the CV's rounding interval, at least 4.
    for pair in "5 $r5" "2 $r2"; do
        set -- $pair
        ok "threads=$t $m: rounds for $1% ($2) fits CV $cv" awk -v cv="$cvn" -v ch="$1" -v n="$2" -v z="$(calc "$Z")" '
            function need(c,  q, r) { q = z * c / ch; r = 2 * q * q / (3 / 3.141592653589793)
                                      r = (r == int(r)) ? r : int(r) + 1; return r < 4 ? 4 : r }
            BEGIN { exit !(n >= need(cv - 0.005) && n <= need(cv + 0.005)) }'
    done
    cmp_ok "$r5" '<=' "$r2" "threads=$t $m: rounds for 5% <= rounds for 2%"
done <<<"$rows"
is "$nrows" 6 "six rows (2 thread counts x 3 metrics)"
# A/A is a statistical statement: each row can come out "significant" by chance (with 4 + 4
# rounds, in about 3% of rows: the exact Mann-Whitney test rejects only when the groups are
# completely separated), and the three metrics of one thread count move together. So no
# assertion that every row is "~", only that most are: failing this takes both thread counts
# to come out "significant" at once.
cmp_ok "$nsame" '>=' 3 "A/A: most rows say ~ ($nsame of $nrows)"

like "$out" "^On this machine a single 1 s run of oltp_point_select with 1 thread varies by [0-9]+\.[0-9]% in tps \(CV\); with 4 rounds per variant pgolab can detect changes of about [0-9.]+% or more; a 5% change needs [0-9]+ rounds and a 2% change [0-9]+ rounds\.$" \
    "closing line in plain words"
# The same CV as the table's tps row (printed there to 0.01 points, here to 0.1).
tps_cv=$(printf '%s\n' "$rows" | awk -F'|' '$1 == 1 && $2 == "tps" { sub(/%/, "", $3); print $3 }')
said_cv=$(sed -n 's/^On this machine a single 1 s run of oltp_point_select with 1 thread varies by \([0-9.]*\)% in tps.*/\1/p' "$TMP/cal.out")
near "$said_cv" "$tps_cv" 0.055 "closing line: the table's CV ($said_cv% vs $tps_cv%)"
like "$out" "relative standard error is about 29% \(1/sqrt\(2\(N-2\)\), N = 8\)" "says the CV from 8 runs is rough"
read -r nruns ncells < <(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
    print scalar @{$j->{runs}}, " ", scalar @{$j->{calibration}{cells}}, "\n"' <"$TMP/cal.json")
is "$nruns" 16 "JSON: 2 variants x 2 thread counts x 4 rounds = 16 runs"
is "$ncells" 6 "JSON: a calibration cell per row"
ok "workdir removed at the end" test ! -e "$TMP/wd"
# Recorded in the results database like a compare: kind calibrate, every run, complete.
like "$(<"$TMP/cal.err")" "experiment 1 recorded in $TMP/r\.db" "says where it is recorded"
is "$(sq "$TMP/r.db" "SELECT kind || ' ' || status || ' ' || (SELECT count(*) FROM runs WHERE experiment_id = 1) FROM experiments WHERE id = 1")" \
    "calibrate complete 16" "results database: the calibrate experiment, complete, 16 runs"
like "$(timeout 60 "$PGOLAB" report --results="$TMP/r.db" --experiment=1 2>&1)" "Transactions per second, oltp_point_select" \
    "pgolab report shows the stored A/A experiment"

# Below stats_min_rounds(0.05) = 4 the test can never reach significance.
timeout 120 "$PGOLAB" calibrate --bench=oltp_point_select --rounds=2 --time=1 --table-size=1000 --results="$TMP/r.db" \
    >"$TMP/few.out" 2>"$TMP/few.err"
is "$?" 0 "calibrate --rounds=2: exit 0"
like "$(<"$TMP/few.out")" "never reach significance at alpha 0\.05" "--rounds=2: says the test can never reach significance"
like "$(<"$TMP/few.out")" "\| +never \(< 4 rounds\) \|" "--rounds=2: detectable column says never"

# Ctrl-C midway: exit 2.
timeout 120 "$PGOLAB" calibrate --bench=oltp_point_select --rounds=20 --time=1 --table-size=1000 --results="$TMP/r.db" \
    >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
# the event, not a fixed sleep: the first run is recorded (experiment 3), within 60 s
recorded() { [ "$(sq "$TMP/r.db" "SELECT count(*) FROM runs WHERE experiment_id = 3" 2>/dev/null)" -ge 1 ] 2>/dev/null; }
ok "interrupted calibrate: a first run was recorded before the signal" poll 600 0.1 recorded
kill -INT $pid
wait $pid
is "$?" 2 "interrupted calibrate: exit 2"
is "$(sq "$TMP/r.db" "SELECT status FROM experiments WHERE id = 3")" "interrupted" "interrupted calibrate: recorded as interrupted"

bad() {
    local desc=$1 re=$2
    shift 2
    "$PGOLAB" calibrate --time=1 "$@" >"$TMP/bad.out" 2>"$TMP/bad.err"
    is "$?" 1 "$desc: exit 1"
    like "$(head -1 "$TMP/bad.err")" "$re" "$desc: message"
    is "$(wc -l <"$TMP/bad.err" | tr -d ' ')" 1 "$desc: one line"
}
bad "rounds=0" "rounds" --rounds=0
bad "missing library" "/nonexistent/lib\.so" --sqlite-library=/nonexistent/lib.so
bad "missing variant library" "/nonexistent/lib\.so" --variant=sqlite:/nonexistent/lib.so
bad "server variant" "mysql" --variant=mysql:/usr/sbin/mariadbd
bad "two variants" "^FATAL: --variant given 2 times: calibrate measures one build \(pgolab compare measures several\)$" --variant=sqlite:/nonexistent/a.so --variant=B=sqlite:/nonexistent/b.so
bad "bad threads" "thread" --threads=0
done_testing
