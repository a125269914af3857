#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# `pgolab pgo sqlite --variants=baseline,pgo,bolt,pgo+bolt` end to end, small: the
# shared SQLite amalgamation fixture (lib.sh sqlite_amalgamation) as --source, -O1,
# short BOLT training and a 2-round measurement. BOLT instruments each input library, the
# instrumented copies write one .fdata per process, the merged profile covers SQLite's hot
# functions (sqlite3VdbeExec has counts), BOLT reports how many functions had a profile, the
# -dyno-stats summary is kept, the correctness gate covers every BOLT variant, the report has
# a column per variant and the "what each step added" lines. Failure: a copy of the recipe
# whose bolt key lacks -Wl,--emit-relocs: BOLT's instrument step fails in one line with its
# command and log tail, exit 1, nothing measured. One work dir serves both cases.
. "$(dirname "$0")/lib.sh"
have sqlite3 || bail_out "sqlite3 CLI not found (scripts/install-deps.sh installs it)"
have llvm-bolt-16 || bail_out "llvm-bolt-16 not found (scripts/install-deps.sh installs bolt-16)"

sqlite_amalgamation
WD=$TMP/wd
common=(--workdir="$WD" --source="$SQLITE_AMALG" --cflags=-O1 --train=oltp_read_only --train-time=2 --threads=1
        --bench=oltp_point_select --table-size=2000)
timeout 1500 "$PGOLAB" pgo sqlite "${common[@]}" --variants=baseline,pgo,bolt,pgo+bolt \
    --rounds=2 --time=1 --results="$TMP/results.db" --output="$TMP/out.json" \
    >"$TMP/bolt.out" 2>"$TMP/bolt.err"
is "$?" 0 "pgo sqlite with bolt variants: exit 0"
[ -s "$TMP/bolt.err" ] && diag "stderr: $(tail -5 "$TMP/bolt.err")"
for v in bolt pgo+bolt; do
    is "$(grep -cE "^bolt: ${v/+/\\+} made in [0-9]+ s \(BOLT profile for [1-9][0-9]* of [1-9][0-9]* functions\)$" "$TMP/bolt.err")" 1 \
        "off a terminal: $v's phase line, once, with BOLT's profile figure"
done
ok "off a terminal: the gate's line names every variant" \
    grep -qxE "correctness gate: every variant returns the baseline's results \([0-9]+ s\)" "$TMP/bolt.err"

bdir=$(ls -d "$WD"/build-gcc-*/ 2>/dev/null | head -1)
for v in bolt pgo-bolt; do
    input=baseline; [ "$v" = pgo-bolt ] && input=pgo
    ok "$v: optimized library written" test -s "$bdir/$v/libsqlite3.so"
    n=$(find "$bdir/$v/profile" -name '*.fdata' -size +0 | wc -l)
    cmp_ok "$n" '>=' 1 "$v: the instrumented library wrote per-process .fdata files"
    ok "$v: merged profile is non-empty" test -s "$bdir/$v/merged.fdata"
    hot=$(awk '$2 ~ /^sqlite3VdbeExec(\/|$)/ && $NF > 0 { n++ } END { print n + 0 }' "$bdir/$v/merged.fdata")
    cmp_ok "$hot" '>' 0 "$v: sqlite3VdbeExec has non-zero branch counts in BOLT's profile"
    like "$(cat "$bdir/$v/dyno-stats.txt")" "executed instructions" "$v: -dyno-stats summary kept"
    like "$(cat "$bdir/$v/optimize.log")" "-reorder-blocks=ext-tsp|BOLT-INFO" "$v: optimize log kept"
    isnt "$(sha256sum <"$bdir/$v/libsqlite3.so")" "$(sha256sum <"$bdir/$input/libsqlite3.so")" \
        "$v: the optimized library differs from its input ($input)"
done
ok "baseline was linked with the recipe's bolt link flags" grep -q -- "--emit-relocs" "$bdir/baseline/build.log"
like "$(cat "$TMP/bolt.out")" "BOLT profile: [1-9][0-9]* of [0-9]+ functions with profile.*/bolt/dyno-stats.txt" \
    "summary: BOLT's figure of profiled functions for bolt"
like "$(cat "$TMP/bolt.out")" "BOLT profile: [1-9][0-9]* of [0-9]+ functions with profile.*pgo-bolt/dyno-stats.txt" \
    "summary: BOLT's figure and the dyno-stats file for pgo+bolt"
like "$(cat "$TMP/bolt.out")" "gate +oltp_read_only verify: checksum [0-9a-f]+ over [0-9]+ rows, identical for baseline, pgo, bolt, pgo\+bolt" \
    "correctness gate passed for every variant"
block=$(awk 'index($0, "Table") == 1 { on = ($0 ~ /Transactions per second/) } on' "$TMP/bolt.out")
like "$block" "baseline +\| +pgo +\| +bolt +\| +pgo\+bolt" "tps table: a column per variant"
like "$(cat "$TMP/bolt.out")" "what each step added" "report: what each step added"
like "$(cat "$TMP/bolt.out")" "pgo\+bolt +bolt over pgo: " "report: bolt over pgo"
like "$(cat "$TMP/bolt.out")" "  bolt +bolt over baseline: " "report: bolt over baseline"
runs=$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print scalar @{$j->{runs}}' <"$TMP/out.json")
is "$runs" 8 "JSON has every run: 4 variants x 1 workload x 1 thread count x 2 rounds"

# A recipe copy whose bolt key has no --emit-relocs: BOLT's instrument step fails, one line.
sed -e 's/"-Wl,--emit-relocs", //' "$REPO_DIR/recipes/sqlite.json" >"$TMP/norelocs.json"
ok "the recipe copy has no emit-relocs" sh -c "! grep -q emit-relocs '$TMP/norelocs.json'"
timeout 900 "$PGOLAB" pgo "$TMP/norelocs.json" "${common[@]}" --variants=baseline,pgo,bolt \
    --results="$TMP/fail.db" >"$TMP/fail.out" 2>"$TMP/fail.err"
is "$?" 1 "BOLT without relocations: exit 1"
err=$(errors_of "$TMP/fail.err")
is "$(printf '%s\n' "$err" | wc -l)" 1 "BOLT without relocations: one line"
like "$err" "bolt: BOLT instrument failed \(exit [0-9]+\): .*llvm-bolt .* -instrument .*; log .*instrument.log: .*BOLT-ERROR" \
    "the line has the command and the log tail with BOLT's error"
unlike "$(cat "$TMP/fail.out")" "Transactions per second" "nothing measured"

# --bolt-profile=perf without LBR (or without perf): refused in one line with the reason.
timeout 60 "$PGOLAB" pgo sqlite --workdir="$TMP/wd3" --variants=baseline,pgo,bolt --bolt-profile=perf \
    >"$TMP/perf.out" 2>"$TMP/perf.err"
is "$?" 1 "--bolt-profile=perf here: exit 1"
like "$(cat "$TMP/perf.err")" "^FATAL: --bolt-profile=perf: .*use --bolt-profile=instrument$" \
    "--bolt-profile=perf: one line that says why and what to use"
ok "--bolt-profile=perf: nothing built" test ! -e "$TMP/wd3"

# A recipe without a bolt key is refused before anything is built.
sed -e '/"bolt": {/,/^  },$/d' "$REPO_DIR/recipes/sqlite.json" >"$TMP/nobolt.json"
timeout 60 "$PGOLAB" pgo "$TMP/nobolt.json" --workdir="$TMP/wd2" --variants=baseline,pgo+bolt \
    >"$TMP/nobolt.out" 2>"$TMP/nobolt.err"
is "$?" 1 "recipe without a bolt key: exit 1"
like "$(cat "$TMP/nobolt.err")" "has no \"bolt\" key" "recipe without a bolt key: says so"
ok "recipe without a bolt key: nothing built" test ! -e "$TMP/wd2"

done_testing
