#!/bin/bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# compare_slowdown.t: a real slowdown of known size is found, exactly, and trips
# --fail-if-slower live; an A/A pair in the same experiment does not.
# Three variants of the same SQLite library: A (baseline), A2 (a copy: the A/A pair) and B (a
# copy whose bench children run at 80% speed: the runner's throttle knob,
# PGOLAB_THROTTLE=0.8:LIBRARY, runs one uncounted extra event per 4 counted ones, so B does
# 1.25 x the work per transaction). Measured with --measure=instructions, which is
# deterministic (every round counts the same instructions), so the per-cell checks are strict:
#   - every cell of B: ratio to A within 2% of 1.25 (the extra events draw other ids than the
#     counted ones, so not exactly 1.25), significantly more instructions, verdict slower;
#     a read (oltp_point_select) and a write (oltp_update_index) workload, the cheapest under
#     valgrind (3 variants x 2 workloads x 4 rounds x 2 callgrind children);
#   - every cell of A2: ratio within 0.01% of 1 (a copy of one library at a path of another
#     length counts a few instructions per transaction more or less, the same in every round:
#     the heap and stack layout follows the length of the child's arguments and environment;
#     see src/experiment/callgrind.h; on reads too: 0.999975 in one CI run, so no check asks for
#     exactly 1), so tiny it never trips --fail-if-slower;
#   - --fail-if-slower=10: exit 3, B's cells named on stderr, A2 never.
# The statistics' coverage on noisy time measurements (a CI holds the true ratio in ~95% of
# trials, an A/A pair is significant in <= 5%) is checked on a synthetic noise model in
# tests/unit/test_compare.c, where thousands of trials are cheap.
. "$(dirname "$0")/lib.sh"

have valgrind || bail_out "valgrind is not installed (run scripts/install-deps.sh)"
SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libaa.so"
cp "$SYSLIB" "$TMP/libslow.so"
DB=$TMP/r.db
WL=oltp_point_select,oltp_update_index

PGOLAB_THROTTLE="0.8:$TMP/libslow.so" timeout 1800 "$PGOLAB" compare \
    --variant "A=sqlite:$SYSLIB" --variant "A2=sqlite:$TMP/libaa.so" --variant "B=sqlite:$TMP/libslow.so" \
    --bench=$WL --threads=1 --rounds=4 --measure=instructions --events=150 --table-size=1000 \
    --fail-if-slower=10 --results="$DB" --workdir="$TMP/wd" >"$TMP/c.out" 2>"$TMP/c.err"
is "$?" 3 "compare --fail-if-slower=10 with B doing 25% more work: exit 3"
[ -s "$TMP/c.out" ] || diag "stderr: $(tail -20 "$TMP/c.err")"
like "$(cat "$TMP/c.err")" "WARNING: test knob PGOLAB_THROTTLE=0\.8:$TMP/libslow\.so is set" \
    "the throttle knob is announced on stderr"
for w in oltp_point_select oltp_update_index; do
    like "$(cat "$TMP/c.err")" "B .*$w.*instructions per transaction" "--fail-if-slower names B's $w cell"
done
# (the progress lines off a terminal name every variant as it runs: only --fail-if-slower's)
unlike "$(sed -n '/^--fail-if-slower/,$p' "$TMP/c.err")" "A2" "--fail-if-slower never names the A/A pair A2"
is "$(sq "$DB" "SELECT json_extract(environment_json, '\$.test_knobs.PGOLAB_THROTTLE') FROM experiments WHERE id = 1")" \
    "0.8:$TMP/libslow.so" "the experiment's environment records the knob"
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE json_extract(report_json, '\$.test_knobs.PGOLAB_THROTTLE') = '0.8:$TMP/libslow.so'")" \
    24 "every run's JSON records the knob (3 variants x 2 workloads x 4 rounds)"

timeout 60 "$PGOLAB" report --results="$DB" --format=json >"$TMP/r.json" 2>/dev/null
# One line per cell of A2 and B: variant workload ratio lo hi significant.
perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
    for my $c (@{$j->{cells}}) {
        next unless $c->{metric} =~ /^instr/ && $c->{variant} ne "A" && defined $c->{threads};
        my $v = $c->{vs_baseline};
        printf "%s %s %.6f %.6f %.6f %d\n", $c->{variant}, $c->{workload}, $v->{ratio},
            $v->{ratio_ci}[0], $v->{ratio_ci}[1], $v->{significant} ? 1 : 0;
    }' <"$TMP/r.json" >"$TMP/cells"
diag "$(cat "$TMP/cells")"
is "$(grep -c '^B ' "$TMP/cells")" 2 "two instruction cells of B"
is "$(grep -c '^A2 ' "$TMP/cells")" 2 "two instruction cells of A2"
is "$(awk '$1 == "B" && !($3 >= 1.225 && $3 <= 1.275)' "$TMP/cells" | wc -l)" 0 \
    "every cell of B: ratio within 2% of the true 1.25"
is "$(awk '$1 == "B" && !($6 == 1 && $4 > 1.2)' "$TMP/cells" | wc -l)" 0 \
    "every cell of B: significantly more instructions (CI above 1.2)"
is "$(awk '$1 == "A2" && !($3 > 0.9999 && $3 < 1.0001 && $4 > 0.9999 && $5 < 1.0001)' "$TMP/cells" | wc -l)" 0 \
    "every cell of A2: ratio and CI within 0.01% of 1"
like "$(cat "$TMP/c.out")" "Instructions per transaction" "the report was printed"

# The knob is checked: a malformed value is refused in one line.
"$PGOLAB" bench --sqlite-db="$TMP/k.db" --table-size=10 oltp_point_select prepare >/dev/null 2>&1
PGOLAB_THROTTLE=1.5:x "$PGOLAB" bench --sqlite-db="$TMP/k.db" --table-size=10 --time=1 oltp_point_select run \
    >"$TMP/k.out" 2>"$TMP/k.err"
is "$?" 1 "PGOLAB_THROTTLE=1.5:x: exit 1"
like "$(cat "$TMP/k.err")" "FATAL: PGOLAB_THROTTLE=1\.5:x: expected F:LIBRARY with 0 < F < 1" "... says what is valid"
done_testing
