#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_matrix.t: the parts of the server PGO pipeline that pgo_recipes.t does not run, on the same
# stand-in (tests/standin, the real mariadbd as its child) and the real recipes/mariadb.json with
# the stand-in's source and a tiny regression suite of our own (a mariadb client query whose
# failure fails the step). All runs share one work directory, so the baseline and instrumented
# builds and the trainings are built once and reused.
# Trainer matrix: three trainers (a workload, another, a mix) give three pgo builds, each with
# its own profile, each compiled in the instrumented build's directory (the mariadb recipe's
# build_dir), all measured against the baseline; the "Trainer matrix"
# table has a row per trainer and a column per workload plus overall, its cells agree with the
# seed-000 tps tables of the same report, the best trainer per column is the highest, and '*'
# marks exactly the cells whose workload the trainer is or includes.
# Variants: lto (-flto=auto, LTO objects, no profile flags) and pgo+lto (the profile and -flto)
# are built, gated and measured with baseline and pgo.
# Suite: the trainer "suite" writes a profile; --gate=suite runs the suite on every pgo build;
# a failing suite stops with "regression suite failed", exit 1, nothing measured; that run has
# one trainer, whose build ("pgo") is the matrix run's pgo-oltp_point_select, cached where it is.
# Clang: -fprofile-instr-generate, .profraw files merged by llvm-profdata into the trainer's
# .profdata, -fprofile-instr-use=THAT.profdata; the summary counts the merged files; the builds
# carry DWARF 4, which valgrind (the --search screen) reads without a complaint.
. "$(dirname "$0")/lib.sh"

standin_setup # SRC, RECIPES; derive, pgo, info, count: lib.sh
have mariadb || bail_out "the mariadb client is not installed (make deps installs mariadb-client)"
have readelf || bail_out "readelf not installed (binutils)"

# The suite: a table of 100 rows, its sum checked by a CHECK constraint (a wrong sum is an error,
# so the client exits 1), the sum printed (the log shows the query ran). SUM = 2 * 5050.
suite() { # suite WANT: the recipe's "suite" as a jq filter
    cat <<EOF
.server.suite_server = "started" | .suite = [{ "name": "sum-check",
  "run": ["mariadb", "--no-defaults", "--socket={socket}", "--user={user}", "--database={db}", "--batch",
          "-e", "CREATE TABLE suite_t (id INT PRIMARY KEY, v INT) ENGINE=InnoDB; INSERT INTO suite_t SELECT seq, 2 * seq FROM seq_1_to_100; SELECT CONCAT('suite sum ', SUM(v)) FROM suite_t; CREATE TABLE suite_ok (ok INT CHECK (ok = 1)); INSERT INTO suite_ok SELECT SUM(v) = $1 FROM suite_t; DROP TABLE suite_t, suite_ok"] }]
EOF
}
derive mariadb standin-matrix "$(suite 10100)"
mkdir -p "$TMP/bad"
RECIPES=$TMP/bad derive mariadb standin-matrix "$(suite 10101)" # the same target, a failing suite
is "$(jq -cS '.steps, (.pgo | del(.hot_functions)), (.server | del(.suite_server))' "$RECIPES/standin-matrix.json")" \
    "$(jq -cS '.steps, (.pgo | del(.hot_functions)), (.server | del(.suite_server))' "$REPO_DIR/recipes/mariadb.json")" \
    "standin-matrix: steps, pgo and server are the real mariadb recipe's (its suite, mysql-test-run, starts its own servers; the hot function is the stand-in's main)"

WD=$TMP/wd
DB=$TMP/results.db
RUN=(--source="$SRC" --workdir="$WD" --train-time=2 --table-size=1000)
MEASURE=(--threads=1 --time=2 --results="$DB")
# key TRAINER: its directory-safe name (the trainer's own: a mix keeps its '+')
key() { printf '%s' "$1"; }
# md_cell FILE TITLE-ERE ROW COLUMN: a cell (trimmed) of the first markdown table after the first
# line matching TITLE-ERE: the row whose first cell is ROW, the column headed COLUMN
md_cell() {
    T=$2 R=$3 C=$4 awk -F'|' '
        function trim(s) { gsub(/^ +| +$/, "", s); return s }
        !on && $0 ~ ENVIRON["T"] { on = 1; next }
        on && /^\|/ {
            if (!head) { for (i = 2; i < NF; i++) if (trim($i) == ENVIRON["C"]) col = i; head = 1; next }
            if (col && trim($2) == ENVIRON["R"]) { print trim($col); exit }
            next
        }
        on && head { exit }' "$1"
}
# md_rows FILE TITLE-ERE: the first cells of that table's rows (not the header or separator)
md_rows() {
    T=$2 awk -F'|' '
        function trim(s) { gsub(/^ +| +$/, "", s); return s }
        !on && $0 ~ ENVIRON["T"] { on = 1; next }
        on && /^\|/ { if (head++ && trim($2) !~ /^-+:?$/) print trim($2); next }
        on && head { exit }' "$1"
}
# pct CELL: the first signed percentage in a cell ("~ (+1.6%) *" -> +1.6)
pct() { printf '%s\n' "$1" | grep -oE -- '[-+][0-9]+(\.[0-9]+)?%' | head -1 | tr -d %; }
# re TEXT: TEXT as an ERE matching itself
re() { printf '%s' "$1" | sed 's/[]*^$()+?{}|.[\\]/\\&/g'; }
# includes TRAINER WORKLOAD: the trainer is the workload or a mix with it
includes() { case "+$1+" in *"+$2+"*) return 0 ;; esac; return 1; }
# section_count LOG HEAD ERE: lines matching ERE in the sections of LOG after a line HEAD (fixed
# string; a section ends at the next '# gate: ' or '# suite: ' line)
section_count() {
    H=$2 E=$3 awk '/^# (gate|suite): / { on = index($0, ENVIRON["H"]) == 1; next }
                   on && $0 ~ ENVIRON["E"] { n++ } END { print n + 0 }' "$1"
}
# history_count: experiments recorded in $DB
history_count() { "$PGOLAB" history --results="$DB" 2>/dev/null | grep -cE '^ +[0-9]+ '; }

note "---- trainer matrix: three trainers, two measured workloads"
TRAINERS=(oltp_point_select oltp_read_only oltp_read_only+oltp_write_only)
BENCH=(oltp_point_select oltp_read_only)
pgo matrix standin-matrix "${RUN[@]}" "${MEASURE[@]}" --rounds=2 \
    --train="$(IFS=,; echo "${TRAINERS[*]}")" --bench="$(IFS=,; echo "${BENCH[*]}")"
is "$RC" 0 "matrix: exit 0"
[ "$RC" = 0 ] || diag "$(tail -20 "$TMP/matrix.err")"
OUT=$TMP/matrix.out
ROOT=$(ls -d "$WD"/standin-matrix-gcc-*/ 2>/dev/null | head -1)
ROOT=${ROOT%/}
uses=() bdirs=()
for t in "${TRAINERS[@]}"; do
    k=$(key "$t")
    like "$(cat "$OUT")" "^  training +$(re "$t"), 2 s each, 2 threads: profile counts in [1-9][0-9]* of [1-9][0-9]* objects, [1-9][0-9]* of [1-9][0-9]* functions, .*; main [1-9]" \
        "matrix: trained $t (the profile check's counts, main's among them)"
    like "$(cat "$OUT")" "^  pgo-$(re "$t") +$(re "$ROOT/pgo-$k")/prefix/bin/mariadbd " "matrix: built pgo-$t in pgo-$k/"
    flags=$(info "$ROOT/pgo-$k" c_flags)
    use=$(printf '%s\n' "$flags" | grep -o -- '-fprofile-use=[^ ]*' | cut -d= -f2-)
    is "$use" "$ROOT/profile-$k" "matrix: pgo-$t compiled with -fprofile-use of its own trainer's directory"
    cmp_ok "$(find "$use" -name '*standin.c.gcda' -size +0 2>/dev/null | wc -l)" == 1 "matrix: $t's profile directory holds the stand-in's .gcda"
    is "$(info "$ROOT/pgo-$k" binary_dir)" "$ROOT/instrumented/build" "matrix: pgo-$t compiled in the instrumented build's directory"
    uses+=("$use") bdirs+=("$(info "$ROOT/pgo-$k" binary_dir)")
    # the training log ran exactly the trainer's workloads
    IFS=+ read -ra parts <<<"$t"
    ran=$(grep -oE ' [a-z_]+ run$' "$ROOT/train-$k.log" | sed 's/^ //; s/ run$//' | paste -sd+)
    is "$ran" "$t" "matrix: training $t ran its workloads (${#parts[@]})"
done
is "$(printf '%s\n' "${uses[@]}" | sort -u | grep -c .)" 3 "matrix: three different profile directories"
is "$(printf '%s\n' "${bdirs[@]}" | sort -u | grep -c .)" 1 "matrix: one build directory for the three pgo builds"
like "$("$PGOLAB" history --results="$DB")" "^ +1 +.* pgo +complete +baseline,pgo-oltp_point_select,pgo-oltp_read_only,pgo-oltp_read_only\+oltp_write_only +oltp_point_select,oltp_read_only +16/16$" \
    "matrix: every pgo build measured against the baseline: 4 variants x 2 workloads x 2 rounds"

MT='^Trainer matrix: tps change'
like "$(cat "$OUT")" "$MT" "matrix: the report has the trainer matrix"
is "$(md_rows "$OUT" "$MT" | paste -sd,)" "$(IFS=,; echo "${TRAINERS[*]}")" "matrix: a row per trainer, in order, nothing else"
head=$(grep -A2 -E "$MT" "$OUT" | grep '^|' | head -1 | tr -d ' ' | tr '|' ' ' | xargs)
is "$head" "trainer ${BENCH[*]} overall" "matrix: a column per workload, then overall"
declare -A SEED
for t in "${TRAINERS[@]}"; do
    prod=1
    for w in "${BENCH[@]}"; do
        # (in parentheses when not significant: the same estimate)
        seed=$(md_cell "$OUT" "^Table [0-9]+\. Transactions per second, $w\$" 1 "% improvement pgo-$t" | tr -d '()')
        SEED[$t,$w]=$seed
        cell=$(md_cell "$OUT" "$MT" "$t" "$w")
        near "$(pct "$cell")" "$seed" 0.056 "matrix: $t on $w: the cell ($cell) is the tps table's % improvement ($seed)"
        if includes "$t" "$w"; then
            like "$cell" ' \*$' "matrix: $t on $w: marked '*' (the trainer includes the workload)"
        else
            unlike "$cell" '\*' "matrix: $t on $w: not marked"
        fi
        prod=$(calc "$prod * (1 + $seed / 100)")
    done
    SEED[$t,overall]=$(calc "(sqrt($prod) - 1) * 100")
    cell=$(md_cell "$OUT" "$MT" "$t" overall)
    near "$(pct "$cell")" "${SEED[$t,overall]}" 0.06 "matrix: $t overall: the cell ($cell) is the geometric mean of its workloads' changes (${SEED[$t,overall]})"
    unlike "$cell" '\*' "matrix: $t overall: not marked"
done
best=$(sed -n 's/^Best trainer (highest estimate): //p' "$OUT")
for c in "${BENCH[@]}" overall; do
    named=$(printf '%s\n' "$best" | tr ';' '\n' | sed -n "s/^ *$c: //p")
    max=$(for t in "${TRAINERS[@]}"; do echo "${SEED[$t,$c]}"; done | sort -g | tail -1)
    ok "matrix: best on $c is $named, the highest change (${SEED[$named,$c]:-none} of max $max)" \
        _num "${SEED[$named,$c]:-x}" '>=' "$(calc "$max - 0.02")"
done
like "$(cat "$OUT")" '^\* the trainer is \(or includes\) the measured workload: a profile trained on the exam flatters the result$' \
    "matrix: the note under the table"
for tw in oltp_point_select:oltp_point_select oltp_read_only:oltp_read_only oltp_read_only+oltp_write_only:oltp_read_only; do
    like "$(cat "$OUT")" "note: trainer $(re "${tw%%:*}") includes the measured workload ${tw#*:} " "summary: notes that ${tw%%:*} includes ${tw#*:}"
done
unlike "$(cat "$OUT")" "note: trainer oltp_point_select includes the measured workload oltp_read_only" "summary: no note where the trainer does not include the workload"
# the same matrix from the results database: `pgolab report` prints it, and its HTML page has
# it as the heat map's data (the page is checked in a browser by report_html.t)
matrix_of() { sed -n '/^Trainer matrix: /,/^\* the trainer/p' "$1"; }
timeout 60 "$PGOLAB" report --results="$DB" --experiment=1 >"$TMP/matrix-report.out" 2>/dev/null
is "$(matrix_of "$TMP/matrix-report.out")" "$(matrix_of "$OUT")" "matrix: pgolab report prints the same matrix from the results database"
timeout 60 "$PGOLAB" report --results="$DB" --experiment=1 --format=html --output="$TMP/matrix.html" 2>/dev/null
is "$(perl -MJSON::PP -0ne 'm{id="pgolab-data">(.*?)</script>}s or die; my $t = decode_json($1)->{experiments}[0]{trainers};
      print join(",", map { $_->{trainer} } @{$t->{rows}}), " x ", join(",", @{$t->{workloads}})' "$TMP/matrix.html")" \
    "$(IFS=,; echo "${TRAINERS[*]} x ${BENCH[*]},overall")" "matrix: the HTML report's heat map, a row per trainer, a column per workload and overall"

note "---- variants baseline, pgo, lto, pgo+lto (two trainers: a pgo and a pgo+lto build each)"
pgo var standin-matrix "${RUN[@]}" "${MEASURE[@]}" --rounds=1 --train=oltp_point_select,oltp_read_only \
    --bench=oltp_point_select --variants=baseline,pgo,lto,pgo+lto
is "$RC" 0 "variants: exit 0"
[ "$RC" = 0 ] || diag "$(tail -20 "$TMP/var.err")"
OUT=$TMP/var.out
VARIANTS=(baseline lto pgo-oltp_point_select pgo-oltp_read_only pgo+lto-oltp_point_select pgo+lto-oltp_read_only)
is "$(count "$OUT" '^  training .*(cached)$')" 2 "variants: the trainings of the matrix run are reused"
B=$(info "$ROOT/baseline" c_flags) L=$(info "$ROOT/lto" c_flags) LL=$(info "$ROOT/lto" link_flags)
like "$L" "(^| )-flto=auto( |$)" "lto: compiled with -flto=auto"
like "$LL" "(^| )-flto=auto( |$)" "lto: linked with -flto=auto"
unlike "$L $LL" "-fprofile" "lto: no profile flag"
unlike "$B" "-flto|-fprofile" "baseline: neither -flto nor a profile flag"
# lto_obj BUILD-DIR: .gnu.lto_ sections (GIMPLE for the link-time optimizer) in standin.c's object
lto_obj() { readelf -S "$1/build/CMakeFiles/mariadbd.dir/standin.c.o" 2>/dev/null | grep -c '\.gnu\.lto_'; }
cmp_ok "$(lto_obj "$ROOT/lto")" '>' 0 "lto: standin.c.o is an LTO object (.gnu.lto_ sections)"
is "$(lto_obj "$ROOT/baseline")" 0 "baseline: standin.c.o is not"
for t in oltp_point_select oltp_read_only; do
    PL=$(info "$ROOT/pgo+lto-$t" c_flags) PLL=$(info "$ROOT/pgo+lto-$t" link_flags)
    like "$PL" "(^| )-fprofile-use=$ROOT/profile-$t( |$)" "pgo+lto-$t: compiled with -fprofile-use of its trainer's profile"
    like "$PL" "(^| )-flto=auto( |$)" "pgo+lto-$t: ... and -flto=auto"
    like "$PLL" "(^| )-fprofile-use=$ROOT/profile-$t .*-flto=auto( |$)" "pgo+lto-$t: linked with both"
    is "$(count "$ROOT/pgo+lto-$t/build.log" 'profile count data file not found')" 0 "pgo+lto-$t: the compiler found the profile"
    unlike "$(info "$ROOT/pgo-$t" c_flags)" "-flto" "pgo-$t: no -flto"
done
# the pgo builds share the instrumented build's directory: it holds the tree built last
# (pgo-* are cached from the matrix run, pgo+lto-oltp_read_only is built after ..._point_select)
cmp_ok "$(lto_obj "$ROOT/instrumented")" '>' 0 "pgo+lto-oltp_read_only, built last in instrumented/build: standin.c.o is an LTO object"
like "$(cat "$OUT")" "^  gate +checksum: oltp_read_only verify, [0-9a-f]{16} over [1-9][0-9]* rows, identical for $(re "$(echo "${VARIANTS[*]}" | sed 's/ /, /g')")$" \
    "variants: the gate compared all of them with the baseline"
for v in "${VARIANTS[@]}"; do
    is "$(section_count "$ROOT/gate.log" "# gate: $v (" ' oltp_read_only verify$')" 1 "variants: gate.log: $v ran the verify"
done
like "$("$PGOLAB" history --results="$DB")" "^ +2 +.* pgo +complete +$(re "$(echo "${VARIANTS[*]}" | tr ' ' ,)") +oltp_point_select +6/6$" \
    "variants: all six measured"
TPS='^Table [0-9]+\. Transactions per second, oltp_point_select$'
for v in "${VARIANTS[@]:1}"; do
    like "$(md_cell "$OUT" "$TPS" 1 "% improvement $v")" '^\(?[-+][0-9]+\.[0-9]+\)?$' "variants: the tps table has $v's improvement"
done
# the matrix: a row per trainer, of its pgo build (not a second row for its pgo+lto build)
is "$(md_rows "$OUT" "$MT" | paste -sd,)" "oltp_point_select,oltp_read_only" "variants: the trainer matrix has a row per trainer"
for t in oltp_point_select oltp_read_only; do
    near "$(pct "$(md_cell "$OUT" "$MT" "$t" oltp_point_select)")" "$(md_cell "$OUT" "$TPS" 1 "% improvement pgo-$t" | tr -d '()')" 0.056 \
        "variants: the matrix row $t is its pgo build's"
done

note "---- suite: the trainer suite and --gate=suite"
pgo suite standin-matrix "${RUN[@]}" --train=suite,oltp_point_select --gate=suite --measure=off
is "$RC" 0 "suite: exit 0"
[ "$RC" = 0 ] || diag "$(tail -20 "$TMP/suite.err")"
OUT=$TMP/suite.out
like "$(cat "$OUT")" "^  training +suite: profile counts in [1-9][0-9]* of [1-9][0-9]* objects, .*; main [1-9][^ ]* \([0-9]+ objects compiled\) \([0-9.]+ s\)$" \
    "suite trainer: a profile (and trained now, not cached)"
is "$(grep -c '^# suite: ' "$ROOT/train-suite.log")" 1 "suite trainer: ran the suite once"
like "$(cat "$ROOT/train-suite.log")" "^# suite: $ROOT/instrumented/prefix/bin/mariadbd " "suite trainer: on the instrumented server"
like "$(cat "$ROOT/train-suite.log")" '^suite sum 10100$' "suite trainer: the suite's query ran"
cmp_ok "$(find "$ROOT/profile-suite" -name '*standin.c.gcda' -size +0 2>/dev/null | wc -l)" == 1 "suite trainer: its profile directory holds the .gcda"
like "$(info "$ROOT/pgo-suite" c_flags)" "(^| )-fprofile-use=$ROOT/profile-suite( |$)" "suite trainer: pgo-suite uses that profile"
like "$(cat "$OUT")" "^ +suite: the standin-matrix regression suite passed on every pgo build$" "suite gate: the summary says it passed"
for v in pgo-suite pgo-oltp_point_select; do
    is "$(section_count "$ROOT/gate.log" "# suite: $ROOT/$v/prefix/bin/mariadbd " '^suite sum 10100$')" 1 "suite gate: ran on $v"
done
is "$(grep -c '^# suite: ' "$ROOT/gate.log")" 2 "suite gate: on the two pgo builds only"

note "---- a failing suite stops the pipeline before anything is measured"
before=$(history_count)
pgo bad "$TMP/bad/standin-matrix.json" "${RUN[@]}" "${MEASURE[@]}" --rounds=1 --train=oltp_point_select \
    --bench=oltp_point_select --gate=suite
is "$RC" 1 "failing suite: exit 1"
like "$(errors_of "$TMP/bad.err" | head -1)" "regression suite failed: step sum-check \(exit 1\): mariadb --no-defaults --socket=" \
    "failing suite: says so, with the step and its command"
like "$(cat "$TMP/bad.err")" "CONSTRAINT .suite_ok\.ok. failed" "failing suite: the log tail shows the check that failed"
# one trainer names its build "pgo", several "pgo-TRAINER": the matrix run's pgo-oltp_point_select
# is the same build (an install cannot move: its prefix is compiled in), used where it is
like "$(cat "$TMP/bad.err")" "^build: pgo \(cached\)$" "failing suite: one trainer's pgo is the matrix run's build, not rebuilt"
ok "failing suite: ... kept in pgo-oltp_point_select/, no pgo/ made" test ! -e "$ROOT/pgo"
like "$(cat "$ROOT/gate.log")" "^# suite: $ROOT/pgo-oltp_point_select/prefix/bin/mariadbd " "failing suite: it ran on that pgo build"
unlike "$(cat "$TMP/bad.out")" "^Table [0-9]|^  gate " "failing suite: no summary, no tables"
is "$(history_count)" "$before" "failing suite: no experiment recorded"

note "---- clang: .profraw -> llvm-profdata merge -> .profdata -> -fprofile-instr-use"
for t in clang clang++ llvm-profdata; do
    have "$t" || bail_out "$t not installed (make deps installs clang and llvm)"
done
have valgrind || bail_out "valgrind not installed (make deps installs it)"
pgo clang standin-matrix "${RUN[@]}" --cc=clang --train=oltp_point_select --measure=off
is "$RC" 0 "clang: exit 0"
[ "$RC" = 0 ] || diag "$(tail -20 "$TMP/clang.err")"
CROOT=$(ls -d "$WD"/standin-matrix-clang-*/ 2>/dev/null | head -1)
CROOT=${CROOT%/}
OUT=$TMP/clang.out
I=$(info "$CROOT/instrumented" c_flags) IL=$(info "$CROOT/instrumented" link_flags)
like "$I" "(^| )-fprofile-instr-generate=$CROOT/profile-raw/%p-%m\.profraw -fprofile-update=atomic( |$)" \
    "clang instrumented: compiled with -fprofile-instr-generate=DIR/%p-%m.profraw -fprofile-update=atomic"
like "$IL" "(^| )-fprofile-instr-generate=" "clang instrumented: linked with it"
like "$(grep -m1 '^\$ cd ' "$CROOT/instrumented/build.log")" "-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang\+\+ " "clang: cmake got clang and clang++"
PD=$CROOT/profile-oltp_point_select.profdata
RAW=$(find "$CROOT/profile-oltp_point_select" -name '*.profraw' -size +0 | sort)
NRAW=$(printf '%s\n' "$RAW" | grep -c .)
BYTES=$(printf '%s\n' "$RAW" | xargs stat -c %s | awk '{ n += $1 } END { print n }')
cmp_ok "$NRAW" '>=' 1 "clang training: .profraw files in the trainer's directory ($NRAW)"
like "$(cat "$OUT")" "^  training +oltp_point_select, 2 s each, 2 threads: profile [1-9][0-9]* of [1-9][0-9]* functions, .*; main [1-9][^ ]* \($NRAW \.profraw files merged\) " \
    "clang summary: the training line says how many .profraw files were merged"
ok "clang training: merged into $PD" test -s "$PD"
show=$(llvm-profdata show --all-functions "$PD" 2>&1)
# every stand-in process (--version, the bootstrap, the server) runs main once and writes a file
like "$show" "Total functions: [1-9]" "clang profdata: has functions"
is "$(printf '%s\n' "$show" | grep -A3 '^  main:$' | sed -n 's/^ *Function count: //p')" "$NRAW" \
    "clang profdata: main ran once per merged .profraw file"
cmp_ok "$(printf '%s\n' "$show" | grep -A3 'standin.c:tokenize:$' | sed -n 's/^ *Function count: //p')" '>' 0 \
    "clang profdata: the stand-in's work has counts"
printf '%s\n' "$RAW" | xargs llvm-profdata merge -o "$TMP/mine.profdata"
is "$(llvm-profdata show --all-functions --counts "$PD" | md5sum)" "$(llvm-profdata show --all-functions --counts "$TMP/mine.profdata" | md5sum)" \
    "clang profdata: the merge of exactly those .profraw files"
P=$(info "$CROOT/pgo" c_flags) PLF=$(info "$CROOT/pgo" link_flags)
like "$P" "(^| )-fprofile-instr-use=$PD( |$)" "clang pgo: compiled with -fprofile-instr-use=THAT.profdata"
like "$PLF" "(^| )-fprofile-instr-use=$PD( |$)" "clang pgo: linked with it"
unlike "$P" "-fprofile-instr-generate" "clang pgo: not instrumented"
unlike "$(info "$CROOT/baseline" c_flags)" "-fprofile" "clang baseline: no profile flag"
# the stand-in is RelWithDebInfo (-g), as MariaDB is: clang's default DWARF 5 is what valgrind
# 3.19 cannot read (the screen of --search runs every build under callgrind)
for b in baseline pgo; do
    like "$(info "$CROOT/$b" c_flags)" "(^| )-fdebug-default-version=4( |$)" "clang $b: compiled for DWARF 4"
    is "$(readelf --debug-dump=info "$CROOT/$b/prefix/bin/mariadbd" 2>/dev/null | sed -n 's/^ *Version: *//p' | sort -u)" 4 \
        "clang $b: every compile unit of its mariadbd is DWARF 4"
    is "$(valgrind --tool=none "$CROOT/$b/prefix/bin/mariadbd" --version 2>&1 | grep -c 'unhandled dwarf2')" 0 \
        "clang $b: valgrind reads its debug info without a complaint"
done
is "$(grep -v '^\$ ' "$CROOT/pgo/build.log" | grep -ciE 'warning.*profil|profile data')" 0 "clang pgo: no profile warning in its build log"
ok "no stand-in server of this test left running" test -z "$(pgrep -f -- "^$WD/")"
done_testing
