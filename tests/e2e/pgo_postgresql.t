#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# `pgolab pgo postgresql --variants=baseline,pgo,pgo+bolt` end to end with reduced but real
# settings (-O1 builds): Debian's postgresql-15 source (apt-get source), three real builds of
# the server (recipes/postgresql.json; baseline and pgo linked for BOLT with the recipe's bolt
# flags, so BOLT adds no build), a short training on the instrumented server, the pgo+bolt
# variant (the pgo build's bin/postgres instrumented by llvm-bolt-16, trained with the same
# trainer, every forked backend writing its own profile, merged, optimized), the checksum gate
# on pgo and pgo+bolt, a short measurement of the three. (The --gate=suite mechanics, the
# regression suite against every pgo build, are tested on the stand-in in pgo_matrix.t;
# PostgreSQL's own installcheck is not run here.) Asserts the pgo build was compiled with the
# profile and differs from the baseline, the profile covers the backend, BOLT reported a
# profile for postgres' functions and the executor's hot code has counts, the gate ran on
# every variant, the report (a column per variant, what each step added) and the results
# database are complete; a second run reuses every build and the BOLT variant; a failing BOLT
# step and bad input give one line and exit 1.
. "$(dirname "$0")/lib.sh"

# As root PostgreSQL runs as user postgres, which must reach the builds: a work directory
# outside the private test directory, removed at the end.
WD=$(mktemp -d /var/tmp/pgolab-pgo-pg.XXXXXX)
chmod 755 "$WD"
on_exit 'rm -rf "$WD"'

have llvm-bolt-16 || bail_out "llvm-bolt-16 not found (scripts/install-deps.sh installs bolt-16)"
common=(--workdir="$WD" --results="$TMP/r.db" --cflags=-O1 --train=oltp_read_write --train-time=5
        --train-threads=2 --bench=oltp_read_only --threads=1 --rounds=2 --time=3 --table-size=2000
        --variants=baseline,pgo,pgo+bolt)
timeout 3600 "$PGOLAB" pgo postgresql "${common[@]}" --output="$TMP/out.json" \
    >"$TMP/pgo.out" 2>"$TMP/pgo.err"
is "$?" 0 "pgo postgresql: exit 0"
errors_of "$TMP/pgo.err" >/dev/null && diag "stderr: $(errors_of "$TMP/pgo.err" | tail -20)"
like "$(cat "$TMP/pgo.err")" "^bolt: pgo\\+bolt made in [0-9]+ s \\(BOLT profile for [1-9][0-9]* of [1-9][0-9]* functions\\)$" \
    "off a terminal: the BOLT variant's phase line, with BOLT's profile figure"
like "$(cat "$TMP/pgo.err")" "^correctness gate: every variant returns the baseline's results \\([0-9]+ s\\)$" \
    "off a terminal: the gate's phase line"
out=$(cat "$TMP/pgo.out")

root=$(ls -d "$WD"/postgresql-gcc-*/ 2>/dev/null | head -1)
ok "the builds live in WORKDIR/postgresql-gcc-KEY" test -d "$root"
for v in baseline instrumented pgo; do
    ok "$v: bin/postgres installed" test -x "$root/$v/prefix/bin/postgres"
    ok "$v: bin/initdb installed" test -x "$root/$v/prefix/bin/initdb"
    like "$out" "^  $v +$root$v/prefix/bin/postgres  sha256 [0-9a-f]{16}  \\([0-9.]+ s; built: not built before\\)" \
        "summary: $v built, with its sha256 and why"
done
like "$out" "^pgolab pgo postgresql: postgresql-15 15\\.[0-9]+-[^,]+, gcc " "summary: the Debian source version and the compiler"

# The exam: the measured oltp_read_only on the instrumented server, its hottest backend
# functions named from the build's notes, against the trainer oltp_read_write
like "$out" "^  exam +oltp_read_only against trainer oltp_read_write: its 10 hottest functions on the instrumented build, counter sums per transaction$" \
    "summary: the exam of the measured workload against the trainer"
exam=$(awk '/^  exam /{on=1; next} on && /^                  [A-Za-z_]/{print} on && /^$/{exit}' <<<"$out" | sed 1d)
is "$(grep -c . <<<"$exam")" 10 "exam: 10 functions"
is "$(grep -Evc '^ +[A-Za-z0-9_.-]+:[A-Za-z_][A-Za-z0-9_]* +[0-9]+\.[0-9] +([0-9]+\.[0-9]|<0\.1|0)( +cold)?$' <<<"$exam")" 0 \
    "exam: each an OBJECT:FUNCTION of the backend (named from the notes) with its counts per transaction"

# The instrumented build writes profile data; the pgo build reads it.
like "$(grep -c -- '-fprofile-generate=' "$root/instrumented/build.log")" '^[1-9][0-9]*$' \
    "instrumented: compiled with -fprofile-generate"
like "$(grep -o -- '-fprofile-update=[a-z-]*' "$root/instrumented/build.log" | sort -u)" '^-fprofile-update=prefer-atomic$' \
    "instrumented: atomic counter updates (a multi-process, multithreaded server)"
is "$(grep -c -- '-fprofile' "$root/baseline/build.log")" 0 "baseline: no profile flags"
for v in baseline pgo; do
    like "$(grep -c -- '-Wl,--emit-relocs' "$root/$v/build.log")" '^[1-9][0-9]*$' \
        "$v: linked with the recipe's bolt link flags (-Wl,--emit-relocs), BOLT's input"
    like "$(grep -c -- '-fno-reorder-blocks-and-partition' "$root/$v/build.log")" '^[1-9][0-9]*$' \
        "$v: compiled with the recipe's bolt cflags"
done
is "$(grep -c -- '--emit-relocs' "$root/instrumented/build.log")" 0 "instrumented: no bolt flags (not BOLT's input)"
ok "the pgo build's postgres keeps its relocations (.rela.text)" \
    sh -c "readelf -S '$root/pgo/prefix/bin/postgres' | grep -q '\.rela\.text'"
like "$(grep -o -- "-fprofile-use=[^ ]*" "$root/pgo/build.log" | sort -u)" "^-fprofile-use=${root}profile-oltp_read_write$" \
    "pgo: compiled with -fprofile-use=<the trainer's profile dir>"
is "$(grep -ciE 'coverage mismatch|corrupted profile|out of date' "$root/pgo/build.log")" 0 \
    "pgo: no stale or corrupt profile"
gcda=$(find "$root/profile-oltp_read_write" -name '*.gcda' -size +0 | wc -l)
cmp_ok "$gcda" '>=' 300 "training: .gcda files for hundreds of objects (the backend ran)"
ok "training: the executor's objects have profile data" \
    sh -c "ls '$root/profile-oltp_read_write' | grep -q 'executor#execMain.gcda'"
like "$out" "training +oltp_read_write, 5 s each, 2 threads: profile counts in [1-9][0-9]* of $gcda objects, [1-9][0-9]* of [1-9][0-9]* functions, [^;]* counts in all; ExecInterpExpr [1-9][^ ,]*, PostgresMain [1-9]" \
    "summary: the profile's counts (of the .gcda files), the executor's interpreter and the protocol loop among them"
is "$(stat -c %U "$root"/profile-oltp_read_write/*.gcda | sort -u | grep -cv '^postgres$')" 0 \
    "training: every .gcda file written by postgres, the user the server runs as (none by root's BINARY --version)"
is "$(grep -c 'profiling:' "$root/train-oltp_read_write.log.server")" 0 \
    "training: the server's log holds no lost profile counts (libgcov's profiling: lines)"
text_of() { objcopy -O binary --only-section=.text "$1" "$2" && sha256sum <"$2" | cut -c1-16; }
isnt "$(text_of "$root/baseline/prefix/bin/postgres" "$TMP/b.text")" \
     "$(text_of "$root/pgo/prefix/bin/postgres" "$TMP/p.text")" "the pgo server's code differs from the baseline's"
like "$(grep -c 'profile count data file not found' "$root/pgo/build.log")" '^[0-9]+$' "pgo: objects without profile counted"
missing=$(grep -c 'profile count data file not found' "$root/pgo/build.log")
like "$out" "  $missing objects had no profile data" "summary: says how many objects had no profile data (the build log's count)"

# BOLT: the pgo+bolt variant is the pgo build's prefix with an optimized bin/postgres.
bd="${root}pgo-bolt"
ok "pgo+bolt: bin/postgres installed in its own prefix" test -x "$bd/prefix/bin/postgres"
ok "pgo+bolt: initdb copied from the pgo prefix" cmp -s "$bd/prefix/bin/initdb" "$root/pgo/prefix/bin/initdb"
isnt "$(sha256sum <"$bd/prefix/bin/postgres")" "$(sha256sum <"$root/pgo/prefix/bin/postgres")" \
    "pgo+bolt: its postgres differs from the pgo build's"
cmp_ok "$(readelf -S "$bd/prefix/bin/postgres" | grep -c '\.bolt\.org\.text')" '>=' 1 \
    "pgo+bolt: the postgres binary was rewritten by BOLT (.bolt.org.text)"
ok "pgo+bolt: the optimized binary is the one in the prefix" cmp -s "$bd/postgres" "$bd/prefix/bin/postgres"
fdata=$(find "$bd/profile" -name '*.fdata' -size +0 | wc -l)
cmp_ok "$fdata" '>=' 3 "pgo+bolt: one profile per process (postmaster, backends, auxiliary processes)"
ok "pgo+bolt: merged profile non-empty" test -s "$bd/merged.fdata"
hot=$(awk '$2 ~ /^(ExecutorRun|PortalRun|ExecScan)(\/|$)/ && $NF > 0 { n++ } END { print n + 0 }' "$bd/merged.fdata")
cmp_ok "$hot" '>' 0 "pgo+bolt: the executor's functions have branch counts in BOLT's profile"
like "$(cat "$bd/dyno-stats.txt")" "executed instructions" "pgo+bolt: -dyno-stats summary kept"
prof=$(grep -o 'BOLT-INFO: [0-9]* out of [0-9]* functions in the binary' "$bd/optimize.log" | grep -o '[0-9]* out of [0-9]*')
like "$prof" '^[1-9][0-9]* out of [1-9][0-9]*$' "pgo+bolt: BOLT reported a profile for postgres' functions"
like "$out" "^  pgo\\+bolt +$bd/prefix/bin/postgres  sha256 [0-9a-f]{16}  \\([0-9.]+ s: BOLT [0-9.]+ s, training [0-9.]+ s; built: not built before\\)" \
    "summary: pgo+bolt built, its BOLT and training times"
like "$out" "BOLT on pgo: profile for ${prof% out of *} of ${prof#* out of } functions, $fdata .fdata files merged into [0-9]+ bytes" \
    "summary: BOLT's profile figure and the number of per-process profiles"
like "$out" "dyno-stats: taken branches [0-9]+ -> [0-9]+ \\([-+][0-9.]+%\\), executed instructions [0-9]+ -> [0-9]+ \\([-+][0-9.]+%\\), $bd/dyno-stats.txt" \
    "summary: BOLT's taken branches and instructions before and after, and where the -dyno-stats summary is"

# Gate: the same checksum on the baseline's data under the pgo and pgo+bolt builds.
like "$out" "gate +checksum: oltp_read_only verify, [0-9a-f]{16} over [1-9][0-9]* rows, identical for baseline, pgo, pgo\\+bolt" \
    "gate: identical checksums, pgo+bolt included"
like "$(cat "$root/gate.log")" "# gate: pgo\\+bolt \\($bd/prefix/bin/postgres\\)" "gate: verify ran on the pgo+bolt server"
unlike "$out" "suite: the postgresql regression suite" "the default gate is the checksum gate (no suite line)"
unlike "$out" "note: trainer oltp_read_write" "no exam note when the trainer is not the measured workload"

# Measurement: the seed-000 tables, every run recorded.
for title in "Transactions per second" "Average response time \\(ms\\)" "95th percentile response time \\(ms\\)"; do
    block=$(T="$title, oltp_read_only" awk 'index($0, "Table") == 1 { on = ($0 ~ ENVIRON["T"]) } on' "$TMP/pgo.out")
    like "$block" "\\| +threads \\| +baseline +\\| +pgo +\\| +pgo\\+bolt +\\|" "oltp_read_only / $title: baseline, pgo and pgo+bolt columns"
    like "$block" "\\| +1 \\|" "oltp_read_only / $title: row for 1 thread"
done
runs=$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print scalar @{$j->{runs}}' <"$TMP/out.json")
is "$runs" 6 "JSON: every run (3 variants x 1 workload x 1 thread count x 2 rounds)"
"$PGOLAB" history --results="$TMP/r.db" >"$TMP/hist.out" 2>&1
like "$(cat "$TMP/hist.out")" "pgo +complete +baseline,pgo,pgo\\+bolt +oltp_read_only +6/6" "history: a complete pgo experiment, 6 of 6 runs"
tps=$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print join(" ", map { $_->{tps} > 0 ? "ok" : "zero" } @{$j->{runs}})' <"$TMP/out.json")
is "$tps" "ok ok ok ok ok ok" "every run measured transactions"
like "$out" "what each step added" "report: what each step added"
like "$out" "  pgo +pgo over baseline: " "report: pgo over baseline"
like "$out" "  pgo\\+bolt +bolt over pgo: " "report: bolt over pgo"

# A second run reuses everything built and trained.
timeout 900 "$PGOLAB" pgo postgresql "${common[@]}" --measure=off >"$TMP/again.out" 2>"$TMP/again.err"
is "$?" 0 "second run: exit 0"
is "$(grep -cE '^  (baseline|instrumented|training|pgo) .*\(cached\)$' "$TMP/again.out")" 4 \
    "second run: baseline, instrumented, training and pgo come from the cache"
like "$(cat "$TMP/again.out")" "^  pgo\\+bolt +$bd/prefix/bin/postgres  sha256 [0-9a-f]{16}  \\(cached\\)$" \
    "second run: pgo+bolt comes from the cache"
like "$(cat "$TMP/again.out")" "BOLT on pgo: profile for ${prof% out of *} of ${prof#* out of } functions" \
    "second run: the cached variant's BOLT figure"
like "$(cat "$TMP/again.out")" "identical for baseline, pgo, pgo\\+bolt" "second run: the gate ran on every variant"
like "$(cat "$TMP/again.out")" "  $missing objects had no profile data" "second run: the cached pgo build's count of objects without profile data"

# A BOLT step that fails: a recipe copy whose bolt.binary is not a program (the builds, keyed
# by their steps and flags, stay cached): one line with the command and the log tail, exit 1.
sed -e 's|"binary": "bin/postgres",|"binary": "share/postgres.bki",|' \
    "$REPO_DIR/recipes/postgresql.json" >"$TMP/badbolt.json"
ok "the recipe copy names another bolt binary" grep -q 'postgres.bki' "$TMP/badbolt.json"
timeout 900 "$PGOLAB" pgo "$TMP/badbolt.json" "${common[@]}" --measure=off >"$TMP/bolt-fail.out" 2>"$TMP/bolt-fail.err"
is "$?" 1 "failing BOLT step: exit 1"
err=$(errors_of "$TMP/bolt-fail.err")
is "$(printf '%s\n' "$err" | wc -l)" 1 "failing BOLT step: one line"
like "$err" "pgo\\+bolt: BOLT instrument failed \\(exit [0-9]+\\): .*llvm-bolt.* .*postgres\\.bki -instrument .*; log .*instrument\\.log: ." \
    "failing BOLT step: its command and log tail"
unlike "$(cat "$TMP/bolt-fail.out")" "gate +checksum" "failing BOLT step: no gate, no summary"
ok "failing BOLT step: no half variant left" test ! -e "$bd/prefix"

# Bad input: one line, exit 1, nothing built.
mkdir -p "$TMP/notpg"
echo hello >"$TMP/notpg/README"
"$PGOLAB" pgo postgresql --workdir="$WD" --results="$TMP/r.db" --source="$TMP/notpg" >"$TMP/b1.out" 2>"$TMP/b1.err"
is "$?" 1 "--source that is not PostgreSQL: exit 1"
like "$(cat "$TMP/b1.err")" "^FATAL: --source=$TMP/notpg: not a postgresql source tree \\(no configure; expected configure, " \
    "--source: says what the tree lacks and what was expected"
is "$(wc -l <"$TMP/b1.err")" 1 "--source: one line"
"$PGOLAB" pgo postgresql --workdir="$WD" --results="$TMP/r.db" --train=oltp_read_only+nope >"$TMP/b2.out" 2>"$TMP/b2.err"
is "$?" 1 "unknown workload in a trainer mix: exit 1"
like "$(cat "$TMP/b2.err")" "unknown workload 'nope' in trainer 'oltp_read_only\\+nope'" "trainer mix: names the bad part"
"$PGOLAB" pgo postgresql --workdir="$WD" --results="$TMP/r.db" --variants=baseline,lto >"$TMP/b3.out" 2>"$TMP/b3.err"
is "$?" 1 "--variants without a pgo variant: exit 1"
like "$(cat "$TMP/b3.err")" "needs pgo, pgo\\+lto or distro" "--variants: says what is missing"
"$PGOLAB" pgo postgresql --workdir="$WD/none-b5" --results="$TMP/r.db" --variants=baseline,pgo+lto,pgo+bolt >"$TMP/b5.out" 2>"$TMP/b5.err"
is "$?" 1 "pgo+bolt without pgo: exit 1"
like "$(cat "$TMP/b5.err")" "^FATAL: --variants=pgo\\+bolt: it optimizes the pgo build, so --variants needs pgo too" \
    "pgo+bolt without pgo: says what to add"
ok "pgo+bolt without pgo: nothing fetched or built" test ! -e "$WD/none-b5"
"$PGOLAB" pgo postgresql --workdir="$WD/none-b6" --results="$TMP/r.db" --variants=baseline,pgo,pgo+bolt --train=suite >"$TMP/b6.out" 2>"$TMP/b6.err"
is "$?" 1 "pgo+bolt with the suite trainer: exit 1"
like "$(cat "$TMP/b6.err")" "BOLT trains with the one workload trainer of the pgo build" "pgo+bolt with the suite trainer: says why"
is "$(wc -l <"$TMP/b6.err")" 1 "pgo+bolt with the suite trainer: one line"
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$TMP/private/wd"
    chmod 700 "$TMP/private"
    "$PGOLAB" pgo postgresql --workdir="$TMP/private/wd" --results="$TMP/r.db" >"$TMP/b4.out" 2>"$TMP/b4.err"
    is "$?" 1 "root, a work directory user postgres cannot reach: exit 1"
    like "$(cat "$TMP/b4.err")" "cannot enter $TMP(/private)? \\(mode 0700\\)" "unreachable work directory: names the first directory it cannot enter"
    is "$(ls "$TMP/private/wd" | wc -l)" 0 "unreachable work directory: nothing written"
fi
done_testing
