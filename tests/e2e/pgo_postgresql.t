#!/usr/bin/env bash
# `pgolab pgo postgresql` end to end with reduced but real settings (-O1 builds): Debian's postgresql-15
# source (apt-get source), three real builds of the server (recipes/postgresql.json), a short
# training on the instrumented server, the checksum gate, a short measurement. (The
# --gate=suite mechanics, the regression suite against every pgo build, are tested on the
# stand-in in pgo_matrix.t; PostgreSQL's own installcheck is not run here.) Asserts the pgo build was
# compiled with the profile and differs from the baseline, the profile covers the backend,
# the gate ran, the report and the results database are complete; a second run
# reuses every build; bad input gives one line and exit 1.
. "$(dirname "$0")/lib.sh"

# As root PostgreSQL runs as user postgres, which must reach the builds: a work directory
# outside the private test directory, removed at the end.
WD=$(mktemp -d /var/tmp/pgolab-pgo-pg.XXXXXX)
chmod 755 "$WD"
trap 'rm -rf "$WD"' EXIT

common=(--workdir="$WD" --results="$TMP/r.db" --cflags=-O1 --train=oltp_read_write --train-time=5
        --train-threads=2 --bench=oltp_read_only --threads=1 --rounds=2 --time=3 --table-size=2000)
timeout 3600 "$PGOLAB" pgo postgresql "${common[@]}" --output="$TMP/out.json" \
    >"$TMP/pgo.out" 2>"$TMP/pgo.err"
is "$?" 0 "pgo postgresql: exit 0"
[ -s "$TMP/pgo.err" ] && diag "stderr: $(tail -20 "$TMP/pgo.err")"
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

# The instrumented build writes profile data; the pgo build reads it.
like "$(grep -c -- '-fprofile-generate=' "$root/instrumented/build.log")" '^[1-9][0-9]*$' \
    "instrumented: compiled with -fprofile-generate"
like "$(grep -o -- '-fprofile-update=[a-z-]*' "$root/instrumented/build.log" | sort -u)" '^-fprofile-update=prefer-atomic$' \
    "instrumented: atomic counter updates (a multi-process, multithreaded server)"
is "$(grep -c -- '-fprofile' "$root/baseline/build.log")" 0 "baseline: no profile flags"
like "$(grep -o -- "-fprofile-use=[^ ]*" "$root/pgo/build.log" | sort -u)" "^-fprofile-use=${root}profile-oltp_read_write$" \
    "pgo: compiled with -fprofile-use=<the trainer's profile dir>"
is "$(grep -ciE 'coverage mismatch|corrupted profile|out of date' "$root/pgo/build.log")" 0 \
    "pgo: no stale or corrupt profile"
gcda=$(find "$root/profile-oltp_read_write" -name '*.gcda' -size +0 | wc -l)
cmp_ok "$gcda" '>=' 300 "training: .gcda files for hundreds of objects (the backend ran)"
ok "training: the executor's objects have profile data" \
    sh -c "ls '$root/profile-oltp_read_write' | grep -q 'executor#execMain.gcda'"
like "$out" "training +oltp_read_write, 5 s each, 2 threads: profile data for $gcda of [0-9]+ objects" \
    "summary: profile data for N of M objects, N = the .gcda files"
text_of() { objcopy -O binary --only-section=.text "$1" "$2" && sha256sum <"$2" | cut -c1-16; }
isnt "$(text_of "$root/baseline/prefix/bin/postgres" "$TMP/b.text")" \
     "$(text_of "$root/pgo/prefix/bin/postgres" "$TMP/p.text")" "the pgo server's code differs from the baseline's"
like "$(grep -c 'profile count data file not found' "$root/pgo/build.log")" '^[0-9]+$' "pgo: objects without profile counted"
missing=$(grep -c 'profile count data file not found' "$root/pgo/build.log")
like "$out" "  $missing objects had no profile data" "summary: says how many objects had no profile data (the build log's count)"

# Gate: the same checksum on the baseline's data under the pgo build.
like "$out" "gate +checksum: oltp_read_only verify, [0-9a-f]{16} over [1-9][0-9]* rows, identical for baseline, pgo" \
    "gate: identical checksums"
unlike "$out" "suite: the postgresql regression suite" "the default gate is the checksum gate (no suite line)"
unlike "$out" "note: trainer oltp_read_write" "no exam note when the trainer is not the measured workload"

# Measurement: the seed-000 tables, every run recorded.
for title in "Transactions per second" "Average response time \\(ms\\)" "95th percentile response time \\(ms\\)"; do
    block=$(T="$title, oltp_read_only" awk 'index($0, "Table") == 1 { on = ($0 ~ ENVIRON["T"]) } on' "$TMP/pgo.out")
    like "$block" "\\| +threads \\| +baseline +\\| +pgo +\\|" "oltp_read_only / $title: baseline and pgo columns"
    like "$block" "\\| +1 \\|" "oltp_read_only / $title: row for 1 thread"
done
runs=$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print scalar @{$j->{runs}}' <"$TMP/out.json")
is "$runs" 4 "JSON: every run (2 variants x 1 workload x 1 thread count x 2 rounds)"
"$PGOLAB" history --results="$TMP/r.db" >"$TMP/hist.out" 2>&1
like "$(cat "$TMP/hist.out")" "pgo +complete +baseline,pgo +oltp_read_only +4/4" "history: a complete pgo experiment, 4 of 4 runs"
tps=$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print join(" ", map { $_->{tps} > 0 ? "ok" : "zero" } @{$j->{runs}})' <"$TMP/out.json")
is "$tps" "ok ok ok ok" "every run measured transactions"

# A second run reuses everything built and trained.
timeout 900 "$PGOLAB" pgo postgresql "${common[@]}" --measure=off >"$TMP/again.out" 2>"$TMP/again.err"
is "$?" 0 "second run: exit 0"
is "$(grep -cE '^  (baseline|instrumented|training|pgo) .*\(cached\)$' "$TMP/again.out")" 4 \
    "second run: baseline, instrumented, training and pgo come from the cache"
like "$(cat "$TMP/again.out")" "  $missing objects had no profile data" "second run: the cached pgo build's count of objects without profile data"

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
like "$(cat "$TMP/b3.err")" "needs pgo or pgo\\+lto" "--variants: says what is missing"
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$TMP/private/wd"
    chmod 700 "$TMP/private"
    "$PGOLAB" pgo postgresql --workdir="$TMP/private/wd" --results="$TMP/r.db" >"$TMP/b4.out" 2>"$TMP/b4.err"
    is "$?" 1 "root, a work directory user postgres cannot reach: exit 1"
    like "$(cat "$TMP/b4.err")" "cannot enter $TMP(/private)? \\(mode 0700\\)" "unreachable work directory: names the first directory it cannot enter"
    is "$(ls "$TMP/private/wd" | wc -l)" 0 "unreachable work directory: nothing written"
fi
done_testing
