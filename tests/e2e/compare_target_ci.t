#!/usr/bin/env bash
# `pgolab compare --target-ci=PCT` (and calibrate's): rounds are added until every tps cell's sequential 95% CI
# is narrow enough, or a cap (--max-rounds, --max-time) is reached, and the report, the JSON
# and the results database say which, per cell. Two SQLite variants: A (the system library)
# and B (a copy throttled to half speed by the runner's test knob PGOLAB_THROTTLE=0.5:LIBRARY).
# Time on a shared machine is noisy, so nothing here depends on how fast the target is
# reached: the stopping rule itself is checked by recomputing the confidence sequence from the
# recorded runs (an independent implementation of the formula of src/stats/sequential.h):
# not reached after the next-to-last round, reached after the last one, unless a cap stopped
# it. Its error rate under optional stopping is tested in tests/unit/test_sequential.c.
. "$(dirname "$0")/lib.sh"

SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libslow.so"
vars=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libslow.so")
common=(--bench=oltp_point_select --threads=1 --time=1 --table-size=1000 --workdir="$TMP/wd")
export PGOLAB_THROTTLE="0.5:$TMP/libslow.so"

# The confidence sequence of experiment $2's cell after $3 rounds (log ratios B/A paired by
# round): "n half_pct" (half-width in percent); cs_rounds from the settings.
cs_after() {
    perl -e '
        my ($db, $id, $upto) = @ARGV;
        my $cs = `sqlite3 -batch -noheader "$db" "SELECT json_extract(settings_json, \x27\$.target_ci.cs_rounds\x27) FROM experiments WHERE id = $id"`;
        my %t;
        for (`sqlite3 -batch -noheader -separator " " "$db" "SELECT variant_idx, round, tps FROM runs WHERE experiment_id = $id"`) {
            my ($v, $r, $tps) = split;
            $t{$r}[$v] = $tps;
        }
        my @d = map { log($t{$_}[1] / $t{$_}[0]) } grep { $_ <= $upto && defined $t{$_}[0] && defined $t{$_}[1] } sort { $a <=> $b } keys %t;
        my $n = @d;
        my $m = 0; $m += $_ / $n for @d;
        my $ss = 0; $ss += ($_ - $m) ** 2 for @d;
        my $sd = sqrt($ss / ($n - 1));
        my $l = -2 * log(0.05);
        my $rho2 = ($l + log($l + 1)) / $cs;
        my $v = $n * $rho2 + 1;
        my $half = $sd * sqrt(2 * $v / ($n * $n * $rho2) * log(sqrt($v) / 0.05));
        printf "%d %.6f\n", $n, (exp($half) - 1) * 100;' "$1" "$2" "$3"
}

# 1. A target of 20%: the rounds stop as soon as the sequence is narrow enough (or at the cap
#    of 20 on a very noisy machine); the rule is checked against the recorded runs.
timeout 600 "$PGOLAB" compare "${vars[@]}" "${common[@]}" --results="$TMP/r.db" \
    --target-ci=20 --max-rounds=20 --output="$TMP/t.json" >"$TMP/t.out" 2>"$TMP/t.err"
is "$?" 0 "--target-ci=20 --max-rounds=20: exit 0"
[ -s "$TMP/t.out" ] || diag "stderr: $(tail -20 "$TMP/t.err")"
R=$(sq "$TMP/r.db" "SELECT max(round) FROM runs WHERE experiment_id = 1")
is "$(sq "$TMP/r.db" "SELECT count(*) FROM runs WHERE experiment_id = 1")" "$((2 * R))" \
    "every round ran both variants ($R rounds)"
cmp_ok "$R" ">=" 5 "at least 5 rounds (the sequence's minimum)"
# one estimator: under --target-ci the % improvement is the paired sequence's estimate too
like "$(improvement_agrees "$TMP/t.out")" "^[1-9][0-9]* rows agree$" "% improvement and the change column follow the paired estimate"
is "$(verdict_last "$TMP/t.out")" ok "the verdict block is the last thing printed"
last=$(cs_after "$TMP/r.db" 1 "$R")
diag "after round $R: n and half-width $last"
note_="$(sq "$TMP/r.db" "SELECT note FROM experiments WHERE id = 1")"
# reached: the recomputed half-width after the last round is <= 20% (which may be at round 20,
# the cap itself); pgolab's note, header and table must then agree with the recomputation
reached=$(awk -v h="${last#* }" 'BEGIN { print (h <= 20) ? 1 : 0 }')
if [ "$reached" = 1 ]; then
    cmp_ok "$R" "<=" 20 "stopped by the target after round $R (half-width ${last#* }% <= 20%), not past the cap"
    if [ "$R" -gt 5 ]; then
        prev=$(cs_after "$TMP/r.db" 1 $((R - 1)))
        ok "... and it was > 20% after round $((R - 1)) (it did not stop late)" \
            awk -v h="${prev#* }" 'BEGIN { exit !(h > 20) }'
    else
        ok "... at the first round it could stop (5)" true
    fi
    is "$note_" "--target-ci=20%: reached in 1 of 1 tps cells, stopped by target reached" \
        "results database: the note says the target was reached"
    like "$(<"$TMP/t.out")" "reached in 1 of 1 cell, stopped by target reached" "the header says so"
    like "$(<"$TMP/t.out")" "\| +B \| oltp_point_select \| +1 \| +$R \|.*\| +reached \|" \
        "the precision table: B's cell reached the target in $R rounds"
else
    is "$R" 20 "not reached (half-width ${last#* }% > 20%): it ran to the cap of 20 rounds"
    ok "(target not reached on this machine: the noisy case)" true
    is "$note_" "--target-ci=20%: reached in 0 of 1 tps cells, stopped by --max-rounds" \
        "results database: the note says the cap stopped it"
    like "$(<"$TMP/t.out")" "reached in 0 of 1 cell, stopped by --max-rounds" "the header says so"
    like "$(<"$TMP/t.out")" "\| +B \| oltp_point_select \| +1 \| +20 \|.*NOT reached \|" \
        "the precision table: NOT reached"
fi
like "$(<"$TMP/t.out")" "the CI is a confidence sequence \(Waudby-Smith et al\. 2024\), valid at every round" \
    "the report says its CIs are the sequential ones"
like "$(<"$TMP/t.out")" "^Noise: one run's tps varied by [0-9.]+%" "the noise is said plainly"
unlike "$(<"$TMP/t.out")" "INCOMPLETE" "stopping early is not an incomplete experiment"
perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); my $p = $j->{precision};
    my $c = $p->{per_cell}[0];
    printf "%s %s %d %s %s %s\n", $p->{sequential} ? "seq" : "fixed", $c->{variant}, $c->{rounds},
        defined $c->{cv_baseline_pct} ? "cv" : "nocv", defined $c->{detectable_change_pct} ? "det" : "nodet",
        $c->{target_reached} ? "reached" : "not"; print $j->{complete} ? "complete\n" : "incomplete\n"' \
    <"$TMP/t.json" >"$TMP/t.prec"
expect=$([ "$reached" = 1 ] && echo reached || echo not)
is "$(head -1 "$TMP/t.prec")" "seq B $R cv det $expect" "--output JSON: the precision of B's cell"
is "$(tail -1 "$TMP/t.prec")" "complete" "--output JSON: complete although it stopped early"

# 2. An unreachable target: exactly --max-rounds rounds, NOT reached, and said so everywhere.
timeout 300 "$PGOLAB" compare "${vars[@]}" "${common[@]}" --results="$TMP/r.db" \
    --target-ci=0.1 --max-rounds=5 >"$TMP/c.out" 2>"$TMP/c.err"
is "$?" 0 "--target-ci=0.1 --max-rounds=5: exit 0"
is "$(sq "$TMP/r.db" "SELECT count(*) FROM runs WHERE experiment_id = 2")" 10 "5 rounds x 2 variants"
is "$(sq "$TMP/r.db" "SELECT note FROM experiments WHERE id = 2")" \
    "--target-ci=0.1%: reached in 0 of 1 tps cells, stopped by --max-rounds" "the note: not reached, the cap"
like "$(<"$TMP/c.out")" "reached in 0 of 1 cell, stopped by --max-rounds" "the header: not reached, the cap"
like "$(<"$TMP/c.out")" "\| +B \| oltp_point_select \| +1 \| +5 \|.*\| +NOT reached \|" "the table: NOT reached"
"$PGOLAB" report --results="$TMP/r.db" --experiment=2 --format=json >"$TMP/c.json" 2>/dev/null
is "$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); my $p = $j->{precision};
      print join(" ", $p->{target_ci_pct}, $p->{stop_reason}, $p->{cells_reached}, $p->{cells},
                 $p->{per_cell}[0]{target_reached} ? "true" : "false")' <"$TMP/c.json")" \
    "0.1 --max-rounds 0 1 false" "report --format=json from the database: the same verdict"
"$PGOLAB" report --results="$TMP/r.db" --experiment=2 >"$TMP/c-r.out" 2>/dev/null
is "$(grep -c 'NOT reached' "$TMP/c-r.out")" "$(grep -c 'NOT reached' "$TMP/c.out")" \
    "report from the database: the same precision table"

# 3. --max-time: it stops starting rounds before the time is up.
timeout 300 "$PGOLAB" compare "${vars[@]}" "${common[@]}" --results="$TMP/r.db" \
    --target-ci=0.1 --max-rounds=100 --max-time=8 >"$TMP/m.out" 2>"$TMP/m.err"
is "$?" 0 "--max-time=8: exit 0"
cmp_ok "$(sq "$TMP/r.db" "SELECT max(round) FROM runs WHERE experiment_id = 3")" "<" 100 "far fewer than 100 rounds"
like "$(grep '^measuring ' "$TMP/m.err" | head -1)" ", ETA at most [0-8]s$" \
    "--max-time=8: the ETA is at most what --max-time leaves (not 100 rounds' worth)"
is "$(sq "$TMP/r.db" "SELECT note FROM experiments WHERE id = 3")" \
    "--target-ci=0.1%: reached in 0 of 1 tps cells, stopped by --max-time" "the note: stopped by --max-time"

# 4. calibrate --target-ci: the A/A pair's sequential CI, an unreachable target, the cap.
timeout 300 "$PGOLAB" calibrate --bench=oltp_point_select --time=1 --table-size=1000 \
    --target-ci=0.1 --max-rounds=5 --results="$TMP/cal.db" --output="$TMP/cal.json" >"$TMP/cal.out" 2>"$TMP/cal.err"
is "$?" 0 "calibrate --target-ci=0.1 --max-rounds=5: exit 0"
like "$(<"$TMP/cal.out")" "^--target-ci=0\.1%: rounds until the A/A pair's sequential 95% CI .* stopped by --max-rounds:$" \
    "calibrate: says what stopped the rounds"
like "$(<"$TMP/cal.out")" "^  oltp_point_select, 1 thread: 5 rounds, A'/A [0-9.]+, CI \+/-[0-9.]+%: target NOT reached$" \
    "calibrate: the A/A cell, 5 rounds, target not reached"
is "$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print $j->{precision}{per_cell}[0]{rounds}' <"$TMP/cal.json")" \
    5 "calibrate --output: the precision of the A/A cell"

# 5. Bad input: one line, exit 1, nothing recorded.
for bad in "--target-ci=0" "--target-ci=100" "--target-ci=2 --rounds=5" "--max-rounds=10" \
           "--target-ci=2 --max-rounds=3" "--target-ci=2 --max-time=0"; do
    # shellcheck disable=SC2086
    env -u PGOLAB_THROTTLE "$PGOLAB" compare "${vars[@]}" "${common[@]}" --results="$TMP/r.db" $bad \
        >"$TMP/b.out" 2>"$TMP/b.err"
    is "$?" 1 "$bad: exit 1"
    is "$(wc -l <"$TMP/b.err")" 1 "$bad: one line ($(<"$TMP/b.err"))"
done
is "$(sq "$TMP/r.db" "SELECT count(*) FROM experiments")" 3 "bad input recorded nothing"

done_testing
