#!/bin/bash
# compare_slowdown.t: a real slowdown of known size is found. Variant B is the same SQLite
# library as A, but its bench children run at 80% of full speed (the runner's throttle knob,
# PGOLAB_THROTTLE=0.8:LIBRARY: after each event the worker spins for a quarter of the event's
# time), so B's true tps ratio is 0.8. Over four workloads at 1 thread:
#   - the Average row (geometric mean, all rounds pooled) must call B significantly slower;
#   - the 95% CI of each cell's ratio should contain 0.8: each does with ~95% probability, so
#     the test asks for at least 2 of 4 (a correct CI fails that about once in 1000 runs; a CI
#     that is biased or far too narrow fails it most of the time);
#   - no cell calls B significantly faster (its CI above 1).
# The A/A side (no significant change in >= 95% of A/A trials) is checked on a synthetic noise
# model in tests/unit/test_compare.c, where thousands of trials are cheap.
. "$(dirname "$0")/lib.sh"

SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libslow.so"
DB=$TMP/r.db
WL=oltp_read_only,oltp_point_select,oltp_read_write,oltp_update_index

PGOLAB_THROTTLE="0.8:$TMP/libslow.so" timeout 600 "$PGOLAB" compare \
    --variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libslow.so" \
    --bench=$WL --threads=1 --rounds=5 --time=2 --table-size=1000 --results="$DB" \
    >"$TMP/c.out" 2>"$TMP/c.err"
is "$?" 0 "compare with a throttled B: exit 0"

timeout 60 "$PGOLAB" report --results="$DB" --format=json >"$TMP/r.json" 2>/dev/null
# One line per tps cell of B at 1 thread: workload ratio lo hi significant.
perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
    for my $c (@{$j->{cells}}) {
        next unless $c->{metric} eq "tps" && $c->{variant} eq "B" && defined $c->{threads};
        my $v = $c->{vs_baseline};
        printf "%s %.4f %.4f %.4f %d\n", $c->{workload}, $v->{ratio}, $v->{ratio_ci}[0],
            $v->{ratio_ci}[1], $v->{significant} ? 1 : 0;
    }' <"$TMP/r.json" >"$TMP/cells"
diag "$(cat "$TMP/cells")"
is "$(wc -l <"$TMP/cells")" 4 "four tps cells of B"
# (not "every point estimate below 1": on this noisy machine one cell's CI can span 0.59-1.11,
# and its point estimate then lands above 1 now and then, with B really slower)
is "$(awk '$3 > 1' "$TMP/cells" | wc -l)" 0 "no cell calls B significantly faster (a CI above 1)"
cmp_ok "$(awk '$3 <= 0.8 && 0.8 <= $4' "$TMP/cells" | wc -l)" '>=' 2 \
    "the 95% CI contains the true ratio 0.8 in at least 2 of 4 cells"
# The overall speedup (seed 002 shape): geometric mean over the cells, all rounds pooled.
timeout 60 "$PGOLAB" report --results="$DB" --shape=seed002 --format=json >"$TMP/s2.json" 2>/dev/null
avg=$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
    for my $c (@{$j->{cells}}) {
        next unless $c->{variant} eq "B" && !defined $c->{workload};
        my $v = $c->{vs_baseline};
        printf "%.4f %.4f %.4f %d\n", $v->{ratio}, $v->{ratio_ci}[0], $v->{ratio_ci}[1], $v->{significant} ? 1 : 0;
    }' <"$TMP/s2.json")
diag "overall speedup of B: ratio lo hi significant = $avg"
like "$avg" "^0\.[0-9]+ [0-9.]+ [0-9.]+ 1$" "overall (seed 002): B significantly slower"
like "$(cat "$TMP/c.out")" "Transactions per second" "the report was printed"
done_testing
