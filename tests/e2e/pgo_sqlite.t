#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# `pgolab pgo sqlite` end to end, small and fast (-O1, short training and runs): the three
# builds exist and differ, training left non-empty profile data that the pgo build was compiled
# with (and no missing-profile warning), the correctness gate passed, the report has every
# table and row, the JSON file has every run; a second run reuses the cached builds; bad input
# (unknown target, a --source that is not SQLite, a failing build) gives a one-line error.
# Progress: the first run has its stderr on a pseudo-terminal (util-linux `script`): one status
# line updated in place (builds k/n, training, prepare rows loaded/total with rate and ETA, run
# k/n with the cell and an ETA), cleared before anything else is printed; off a terminal (the
# later runs) one plain line per finished phase, nothing animated.
. "$(dirname "$0")/lib.sh"
have sqlite3 || bail_out "sqlite3 CLI not found (scripts/install-deps.sh installs it)"
have script || bail_out "script (util-linux) not found (scripts/install-deps.sh installs bsdutils)"

WD=$TMP/wd
common=(--workdir="$WD" --cflags=-O1 --train-time=2 --time=1 --rounds=1)
# stdout to a file, stderr to the terminal `script` makes (its copy of what the terminal got
# in pgo.tty: a "Script started/done" line around it)
cmd=$(printf '%q ' timeout 900 "$PGOLAB" pgo sqlite "${common[@]}" --results="$TMP/results.db" --threads=1,2 \
    --bench=oltp_point_select,oltp_read_only --output="$TMP/out.json")
script -qec "$cmd >$(printf '%q' "$TMP/pgo.out")" "$TMP/pgo.tty" </dev/null >/dev/null
is "$?" 0 "pgo sqlite (stderr on a pseudo-terminal): exit 0"
# tty_check FILE: what is wrong with the terminal's stream, one line per problem. Physical
# lines end in "\n" (the terminal adds "\r"); a status update is "\r\e[K" + text. Every
# status is cleared before its line ends (nothing left behind), the stream holds each kind of
# status, the 8 measured runs' statuses are one line redrawn (run 1/8 .. 8/8 in order), and no
# off-terminal phase line is printed.
tty_check() {
    perl -e '
        local $/; open my $h, "<", $ARGV[0] or die "$ARGV[0]: $!"; my $s = <$h>;
        $s =~ s/\r\n/\n/g;
        my (@bad, %kind, @runs_lines, @runs);
        my $n = 0;
        for my $line (split /\n/, $s) {
            next if $line =~ /^Script (started|done) /;
            $n++;
            my @seg = split /\r/, $line, -1;
            # what stays on the screen: the last segment (after a clear, "\e[K")
            my $vis = $seg[-1] =~ s/^\e\[K//r;
            push @bad, "a status left on its line: $vis"
                if $vis =~ /^(source|amalgamation|build|correctness gate): |^(training|preparing|round) /;
            push @bad, "an off-terminal phase line on the terminal: $vis"
                if $vis =~ /^(prepared |measured |source: |training: |correctness gate: |build: .* done in )/;
            for my $st (map { /^\e\[K(.+)/ ? $1 : () } @seg) {
                $kind{build}++ if $st =~ m{^build: baseline \+ instrumented \(gcc -O1\): [0-2]/2 done, [0-9]+ s$};
                $kind{build_pgo}++ if $st =~ m{^build: pgo \(gcc -O1\): [01]/1 done, [0-9]+ s$};
                $kind{training}++ if $st =~ m{^training [0-9]+/[0-9]+: oltp_read_write (prepare|run|cleanup)};
                $kind{gate}++ if $st =~ m{^correctness gate: verify pgo$};
                if ($st =~ m{^preparing (oltp_point_select|oltp_read_only) for baseline: ([0-9]+)/([0-9]+) rows(, ([0-9]+) rows/s, ETA [0-9]+s)?$}) {
                    push @bad, "prepare total $3, not 10000 (1 table x 10000 rows)" if $3 != 10000;
                    push @bad, "prepare: $2 of $3 rows without a rate" if $2 > 0 && !defined $4;
                    $kind{"prepare_done_$1"}++ if $2 == $3 && $5 > 0;
                }
                if ($st =~ m{^round 1/1  (oltp_point_select|oltp_read_only)  threads=[12]  (baseline|pgo)  \[run ([0-9]+)/8, ETA [0-9]+s\]$}) {
                    push @runs, $3;
                    push @runs_lines, $n;
                }
            }
        }
        for my $k (qw(build build_pgo training gate prepare_done_oltp_point_select prepare_done_oltp_read_only)) {
            push @bad, "no $k status" unless $kind{$k};
        }
        # the workloads are 4 runs each (2 thread counts x 2 variants); between them the
        # next workload is prepared on the same line
        push @bad, "runs shown: @runs (want 1 .. 8)" unless "@runs" eq "1 2 3 4 5 6 7 8";
        my %l = map { $_ => 1 } @runs_lines;
        push @bad, "the run statuses are on " . scalar(keys %l) . " lines, not redrawn on one"
            if keys %l != 1;
        print "$_\n" for @bad;
    ' "$1"
}
is "$(tty_check "$TMP/pgo.tty")" "" "progress on a terminal: one status line redrawn in place (builds k/n, training, gate, prepare rows/total with rate and ETA, run k/n with the cell and ETA), cleared before other output"
# the same check fails on a stream whose statuses end in newlines (a status per line)
perl -pe 's/(\e\[K[^\r\n]+)\r(?=\e\[K)/$1\r\n\r/g' "$TMP/pgo.tty" >"$TMP/perline.tty"
like "$(tty_check "$TMP/perline.tty")" "redrawn on one" "... and a stream with a status per line fails it"

bdir=$(ls -d "$WD"/build-gcc-*/ 2>/dev/null | head -1)
for v in baseline instrumented pgo; do
    ok "$v library built" test -s "$bdir/$v/libsqlite3.so"
done
gcda=$(find "$bdir/profile" -name '*.gcda' -size +0 | wc -l)
cmp_ok "$gcda" '>=' 1 "training left non-empty .gcda profile data"
like "$(grep -o -- '-fprofile-use=[^ ]*' "$bdir/pgo/build.log" | head -1)" "-fprofile-use=.*profile" \
    "the pgo build was compiled with -fprofile-use=<profile dir>"
is "$(grep -ciE 'profile count data file not found|coverage mismatch' "$bdir/pgo/build.log")" 0 \
    "no missing or mismatched profile warnings in the pgo build log"
text_of() { objcopy -O binary --only-section=.text "$1" "$2" && sha256sum <"$2" | cut -c1-16; }
isnt "$(text_of "$bdir/baseline/libsqlite3.so" "$TMP/b.text")" "$(text_of "$bdir/pgo/libsqlite3.so" "$TMP/p.text")" \
    "the pgo library's code differs from the baseline's"
like "$(cat "$TMP/pgo.out")" "gate +oltp_read_only verify: checksum [0-9a-f]+ over [0-9]+ rows, identical" \
    "correctness gate passed with identical checksums"
# atomic counters (-fprofile-update=prefer-atomic) under 2 training threads: nothing for GCC's
# -fprofile-correction to correct, and that is counted (the note it would print: test_correction)
like "$(cat "$TMP/pgo.out")" "^ +GCC corrected no profile counts \(0 objects with inconsistent counts\)$" \
    "summary: GCC's profile corrections counted (0 objects)"
is "$(sq "$TMP/results.db" "SELECT json_extract(settings_json, '\$.pgo.profile_corrections.pgo.objects') || ' ' || json_array_length(settings_json, '\$.pgo.profile_corrections.pgo.sources') FROM experiments ORDER BY id LIMIT 1")" "0 0" \
    "results: settings.pgo.profile_corrections.pgo is {objects: 0, sources: []}"

for w in oltp_point_select oltp_read_only; do
    for title in "Transactions per second" "Average response time \(ms\)" "95th percentile response time \(ms\)"; do
        block=$(T="$title, $w" awk 'index($0, "Table") == 1 { on = ($0 ~ ENVIRON["T"]) } on' "$TMP/pgo.out")
        like "$block" "\| +1 \|" "$w / $title: row for 1 thread"
        like "$block" "\| +2 \|" "$w / $title: row for 2 threads"
        like "$block" "\| Average \|" "$w / $title: Average row"
        like "$block" "% improvement" "$w / $title: % improvement column"
    done
done

# make demo's path ends in the bottom line: the verdict block, last
is "$(verdict_last "$TMP/pgo.out")" ok "the verdict block ends pgo's output"
like "$(cat "$TMP/pgo.out")" "^  pgo: tps [-+][0-9.]+% \(no CI yet\); significant in 0 of 4 cells$" "verdict: pgo's tps gain (1 round: no CI)"
like "$(cat "$TMP/pgo.out")" "^    next: no statistics from 1 round: needs at least [0-9]+ rounds \(--rounds=[0-9]+\)$" \
    "verdict: 1 round: the rounds statistics need"
like "$(improvement_agrees "$TMP/pgo.out")" "^[1-9][0-9]* rows agree$" "% improvement and the change column follow the same estimate"
runs=$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print scalar @{$j->{runs}}' <"$TMP/out.json")
is "$runs" 8 "JSON has every run: 2 variants x 2 workloads x 2 thread counts x 1 round"
fp=$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print join(" ", map { $_->{name} . "=" . (length($_->{sha256} // "")) } @{$j->{variants}})' <"$TMP/out.json")
is "$fp" "baseline=64 pgo=64" "JSON fingerprints both variants with a sha256"

# The measured pgo library exports as a package (export_standin.t covers a server build and
# installs it): found as the newest complete pgo experiment of target sqlite, its profile
# health recorded by trainer, the library byte for byte the one measured
mkdir -p "$TMP/deb"
# (--variant: one round decides nothing, and export takes no unproven build by itself)
"$PGOLAB" export sqlite --variant=pgo --results="$TMP/results.db" --output="$TMP/deb" >"$TMP/export.out" 2>"$TMP/export.err"
is "$?" 0 "export sqlite: exit 0" || diag "$(cat "$TMP/export.err")"
DEB=$(ls "$TMP"/deb/*.deb 2>/dev/null | head -1)
like "$DEB" "/pgolab-sqlite-pgo_3\.[0-9.]+\+pgolab1_amd64\.deb$" "export sqlite: a .deb named for SQLite's version"
dpkg-deb -x "$DEB" "$TMP/debx" 2>/dev/null
SO=$(ls "$TMP"/debx/opt/pgolab/*/lib/libsqlite3.so 2>/dev/null | head -1)
is "$(sha256sum <"$SO" | cut -d' ' -f1)" "$(jq -r '.variants[] | select(.name == "pgo") | .sha256' "$TMP/out.json")" \
    "export sqlite: the packaged library is the measured pgo build"

# A second run with the same settings reuses every build (resumable pipeline).
timeout 300 "$PGOLAB" pgo sqlite "${common[@]}" --results="$TMP/results.db" --measure=off >"$TMP/again.out" 2>&1
is "$?" 0 "second run: exit 0"
is "$(grep -cE '^ +(amalgamation|baseline|instrumented) .*\(cached\)' "$TMP/again.out")" 3 \
    "second run: amalgamation, baseline and instrumented builds come from the cache"

# --fail-if-slower live from pgo: the pgo variant slowed by the throttle knob (half speed: one
# uncounted extra event per counted one, so 2 x the instructions per transaction), measured
# deterministically: exit 3, the cell named. Every build comes from the cache.
PGOLIB=${bdir%/}/pgo/libsqlite3.so
PGOLAB_THROTTLE="0.5:$PGOLIB" timeout 900 "$PGOLAB" pgo sqlite --workdir="$WD" --cflags=-O1 --train-time=2 \
    --results="$TMP/slow.db" --bench=oltp_point_select --measure=instructions --events=100 --rounds=4 \
    --fail-if-slower=10 >"$TMP/slow.out" 2>"$TMP/slow.err"
is "$?" 3 "pgo --fail-if-slower=10 with the pgo build at half speed: exit 3"
like "$(cat "$TMP/slow.err")" "^  pgo .*oltp_point_select.*instructions per transaction" \
    "--fail-if-slower names the pgo variant's cell"
like "$(head -1 "$TMP/slow.err")" "^WARNING: test knob PGOLAB_THROTTLE=0\.5:$PGOLIB is set" "the knob is announced first"
is "$(grep -c 'test knob' "$TMP/slow.err")" 1 "... once"
is "$(grep -c $'[\r\e]' "$TMP/slow.err")" 0 "measuring off a terminal: nothing animated"
is "$(grep -cE '^prepared oltp_point_select for baseline: 10000 rows in [0-9.]+ s \([0-9]+ rows/s\)$' "$TMP/slow.err")" 1 \
    "... one line for the prepare: its rows and rate"
is "$(grep -cE '^measured oltp_point_select: 8 runs in [0-9]+(m[0-9]+)?s \(8 of 8 runs recorded\)$' "$TMP/slow.err")" 1 \
    "... one line for the measured workload"
is "$(grep -cE '^(training|build|source|amalgamation|correctness gate): ' "$TMP/slow.err")" 6 "... and one per cached phase"
is "$(sq "$TMP/slow.db" "SELECT json_extract(environment_json, '\$.test_knobs.PGOLAB_THROTTLE') FROM experiments")" \
    "0.5:$PGOLIB" "the experiment's environment records the knob"

# The correctness gate's failure path: a pgo build that really returns other results. The
# PGOLAB_PGO_EXTRA_CFLAGS test knob adds flags to the pgo build only (last on its command
# line); SQLite's SQLITE_PRINTF_PRECISION_LIMIT=2 cuts printf('%.4f', ...) of the gate's query
# set to two decimals (it adds a branch to sqlite3_str_vappendf, so -Wno-coverage-mismatch
# lets that function be built without its profile). The pipeline stops before measuring:
# exit 1, both checksums named, the baseline's the one the passing gate printed, no
# experiment recorded, no report.
base_sum=$(sed -n 's/^  gate .* verify: checksum \([0-9a-f]*\) over.*/\1/p' "$TMP/pgo.out")
PGOLAB_PGO_EXTRA_CFLAGS="-DSQLITE_PRINTF_PRECISION_LIMIT=2 -Wno-coverage-mismatch" timeout 900 "$PGOLAB" pgo sqlite "${common[@]}" \
    --results="$TMP/gate.db" --bench=oltp_point_select >"$TMP/gate.out" 2>"$TMP/gate.err"
is "$?" 1 "gate: a pgo build with other results: exit 1"
like "$(cat "$TMP/gate.err")" "^FATAL: correctness gate failed: baseline checksum $base_sum != pgo checksum [0-9a-f]{16}$" \
    "gate: names both checksums (the baseline's is the one that passed before)"
pgo_sum=$(sed -n 's/.* != pgo checksum \([0-9a-f]*\)$/\1/p' "$TMP/gate.err")
isnt "$pgo_sum" "$base_sum" "gate: the pgo checksum differs"
like "$(cat "$TMP/gate.err")" "^WARNING: test knob PGOLAB_PGO_EXTRA_CFLAGS=-DSQLITE_PRINTF_PRECISION_LIMIT=2 -Wno-coverage-mismatch is set" \
    "gate: the knob is announced"
like "$(cat "$bdir/pgo/build.log")" "-DSQLITE_PRINTF_PRECISION_LIMIT=2" "gate: the pgo build had the extra flag"
unlike "$(cat "$bdir/baseline/build.log")" "SQLITE_PRINTF_PRECISION_LIMIT" "gate: the baseline build did not"
is "$(sq "$TMP/gate.db" "SELECT count(*) FROM experiments" 2>/dev/null || echo 0)" 0 "gate: no experiment recorded (stopped before measuring)"
unlike "$(cat "$TMP/gate.out")" "Table|gate +oltp_read_only verify" "gate: no report and no passing gate line"

# An edited source tree is rebuilt (its content is in the amalgamation's stamp, not only its
# path), and so is everything built from it.
tree=$(ls -d "$WD"/src/sqlite3-*/ | head -1)
printf '/* edited by pgo_sqlite.t */\n' >>"$tree/src/sqliteInt.h"
timeout 900 "$PGOLAB" pgo sqlite "${common[@]}" --results="$TMP/results.db" --measure=off >"$TMP/edited.out" 2>&1
is "$?" 0 "edited source: exit 0"
like "$(cat "$TMP/edited.out")" '^  amalgamation .*\([0-9.]+ s\)$' "edited source: the amalgamation is rebuilt"
is "$(grep -cE '^ +(baseline|instrumented|pgo) .*\(cached\)' "$TMP/edited.out")" 0 \
    "edited source: no library comes from the cache"
# off a terminal: one line per phase, each once, nothing animated
is "$(grep -c $'[\r\e]' "$TMP/edited.out")" 0 "off a terminal: no carriage return or escape sequence"
phases=$(grep -E '^(source|amalgamation|build|training|correctness gate): ' "$TMP/edited.out")
like "$phases" "^source: $WD/src/sqlite3-" "off a terminal: the source phase's line"
like "$phases" "^amalgamation: $WD/amalg-.*/sqlite3\.c made in [0-9]+ s$" "... the amalgamation's"
like "$phases" "^build: baseline \+ instrumented \(gcc -O1\): 2/2 done in [0-9]+ s$" "... the first builds'"
like "$phases" "^training: [0-9]+ workloads? on the instrumented build in [0-9]+ s$" "... training's"
like "$phases" "^build: pgo \(gcc -O1\): 1/1 done in [0-9]+ s$" "... the pgo build's"
like "$phases" "^correctness gate: baseline and pgo return the same results \([0-9]+ s\)$" "... the gate's"
is "$(printf '%s\n' "$phases" | wc -l)" 6 "... and no more (one line each)"

# A user's recipe: recipes/sqlite.json copied, renamed and edited (one more compile option),
# run as a file with no code change. Its source is the amalgamation made above, given as a
# directory (the prepare steps are skipped for it); every library it built has the option (a
# default cache size SQLite reports through PRAGMA cache_size, the library preloaded into the
# sqlite3 CLI), the shipped recipe's libraries keep SQLite's default.
sed -e 's/"name": "sqlite"/"name": "my-sqlite"/' \
    -e 's/"-DNDEBUG",/"-DNDEBUG", "-DSQLITE_DEFAULT_CACHE_SIZE=-1234",/' \
    "$REPO_DIR/recipes/sqlite.json" >"$TMP/my-sqlite.json"
is "$(grep -c 'SQLITE_DEFAULT_CACHE_SIZE=-1234' "$TMP/my-sqlite.json")" 1 "my-sqlite.json: the edited copy has the option"
amalg=$(ls -d "$WD"/amalg-*/ | head -1)
timeout 900 "$PGOLAB" pgo "$TMP/my-sqlite.json" --workdir="$TMP/wd2" --source="$amalg" --cflags=-O0 \
    --train-time=1 --train=oltp_point_select --measure=off >"$TMP/my.out" 2>"$TMP/my.err"
is "$?" 0 "edited recipe: exit 0"
# (its stderr: the phase lines, and nothing else unless something is wrong)
grep -vqE '^(source|amalgamation|build|training|correctness gate): ' "$TMP/my.err" && diag "stderr: $(tail -5 "$TMP/my.err")"
like "$(head -1 "$TMP/my.out")" "^pgolab pgo my-sqlite: SQLite [0-9.]+, " "edited recipe: its name in the summary"
like "$(cat "$TMP/my.out")" "^  source +${amalg%/} \(amalgamation\)$" "edited recipe: an amalgamation directory is used as it is"
like "$(cat "$TMP/my.out")" "gate +oltp_read_only verify: checksum [0-9a-f]+ over [0-9]+ rows, identical" \
    "edited recipe: the correctness gate passed"
mdir=$(ls -d "$TMP"/wd2/build-gcc-*/ 2>/dev/null | head -1)
like "$(head -1 "$mdir/pgo/build.log")" "-DSQLITE_DEFAULT_CACHE_SIZE=-1234 .*-fprofile-use=" \
    "edited recipe: the option is on the pgo build's command line"
cache_size() { LD_PRELOAD="$1" sqlite3 :memory: 'PRAGMA cache_size;'; }
for v in baseline pgo; do  # (the instrumented one would write profile data as it exits)
    is "$(cache_size "$mdir/$v/libsqlite3.so")" "-1234" "edited recipe: the $v library has the new default cache size"
done
is "$(cache_size "$bdir/pgo/libsqlite3.so")" "-2000" "the shipped recipe's pgo library keeps SQLite's default"

# Bad input: one line, exit 1.
"$PGOLAB" pgo mysqlx >"$TMP/bad1.out" 2>"$TMP/bad1.err"
is "$?" 1 "unknown target: exit 1"
like "$(cat "$TMP/bad1.err")" "mysqlx.*sqlite" "unknown target: names it and the known ones"
mkdir -p "$TMP/notsqlite"
echo hello >"$TMP/notsqlite/README"
"$PGOLAB" pgo sqlite --workdir="$WD" --results="$TMP/results.db" --source="$TMP/notsqlite" >"$TMP/bad2.out" 2>"$TMP/bad2.err"
is "$?" 1 "--source that is not SQLite: exit 1"
like "$(head -1 "$TMP/bad2.err")" "notsqlite.*not a SQLite source" "--source error names the directory"
"$PGOLAB" pgo sqlite --workdir="$WD" --results="$TMP/results.db" --cflags=-fno-such-flag-pgolab --measure=off >"$TMP/bad3.out" 2>"$TMP/bad3.err"
is "$?" 1 "failing build: exit 1"
like "$(cat "$TMP/bad3.err")" "no-such-flag-pgolab" "failing build: shows the failing command / log tail"
done_testing
