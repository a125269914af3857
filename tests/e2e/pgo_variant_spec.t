#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_variant_spec.t: --variants as [DIMENSION:]...KIND (src/pgo/variant_spec.h) on the stand-in
# (the mariadb recipe for tests/standin). Bad specs are refused in one line naming what is
# accepted, before the work directory exists: an unknown value, an unknown dimension, an
# unknown kind after a dimension, a dimension on a kind that takes none, the same build
# written twice, a compiler that is not installed (named with its Debian package). A mixed
# list, baseline,pgo,clang:baseline,clang:pgo+lto,-O1:lto, builds --cc's variants in its work
# directory and each other group (clang; gcc with -O1) in its own, clang's pgo with its own
# instrumentation (.profraw merged into .profdata, -fprofile-instr-use) and -flto=thin; every
# variant is gated and measured in one experiment, named with its settings, its compiler and
# flags in the report, the results database and --output; a per-variant server option
# reaches clang:pgo+lto; the -O1 group compiles at -O1 (cmake's RelWithDebInfo -O2 does not
# come after it). The same command again reuses every build and training.
# BOLT in a group: clang:pgo+lto+bolt without clang:pgo+lto is refused; with it, clang's pgo+lto
# is rebuilt as BOLT's input (linked with --emit-relocs, without GCC's bolt cflags, which clang
# does not know), BOLT instruments, trains (its watcher processes hold no run up) and optimizes
# its mariadbd in ROOT/pgo-lto-bolt,
# the gate covers it and the report says what BOLT added over clang:pgo+lto. clang:baseline,
# built with the bolt link flags too, is configured as clang's instrumented build was (clang's
# "argument unused" warning on -Wl,--emit-relocs fails no -Werror configure check).
# The mysql recipe with clang:pgo: MySQL's own -DFPROFILE_USE/-DFPROFILE_DIR give clang
# -fprofile-use=DIR, so the merged profile is DIR/default.profdata, and the build uses it.
. "$(dirname "$0")/lib.sh"

standin_setup # SRC, RECIPES; derive, pgo, errors_of: lib.sh
for t in clang clang++ llvm-profdata; do
    have "$t" || bail_out "$t not installed (make deps installs clang and llvm)"
done
# BOLT's periodic profile dumps as in the real recipe (a watcher process per run of the binary,
# `--version` included, which lives until its parent is reaped), every second, so that the 2 s
# training is long enough
derive mariadb standin-spec '.bolt.sleep_time = 1'
WD=$TMP/wd
DB=$TMP/results.db
RUN=(--source="$SRC" --workdir="$WD" --train=oltp_point_select --train-time=2 --table-size=1000
     --bench=oltp_point_select --threads=1 --rounds=2 --time=1 --results="$DB")

note "---- refusals: one line each, before anything"
refused() { # refused NAME VARIANTS EXPECTED-ERE WHAT
    pgo "$1" standin-spec "${RUN[@]}" --variants="$2"
    is "$RC" 1 "$4: exit 1"
    like "$(errors_of "$TMP/$1.err")" "$3" "$4: the message"
    is "$(errors_of "$TMP/$1.err" | wc -l | tr -d ' ')" 1 "$4: one line"
}
refused value baseline,pgo,icc:pgo \
    "^FATAL: --variants: 'icc:pgo': unknown value 'icc' \(accepted: compiler \(cc=\): gcc, clang, or a versioned name such as gcc-12 or clang-14 .*; compiler flags \(cflags=\): words starting with '-'" \
    "an unknown value"
refused dim baseline,pgo,opt=3:pgo "^FATAL: --variants: 'opt=3:pgo': unknown dimension 'opt' \(known: cc, cflags\)$" \
    "an unknown dimension"
refused kind baseline,pgo,clang:pgx "^FATAL: --variants: 'clang:pgx': unknown variant 'pgx' \(known: baseline, pgo, lto, pgo\+lto, bolt, pgo\+bolt, pgo\+lto\+bolt; before it, dimensions: " \
    "an unknown kind after a dimension"
refused plain baseline,pgo,clang:official "^FATAL: --variants: 'clang:official': official takes no compiler or flags: it is the distribution's binary, never built$" \
    "official with a compiler"
refused badcc baseline,pgo,cc=icc:pgo "^FATAL: --variants: 'cc=icc:pgo': compiler 'icc': not a compiler \(accepted: gcc, clang" \
    "cc= of no compiler"
refused twice baseline,pgo,gcc:-O2:pgo "^FATAL: --variants: 'pgo' and 'gcc:-O2:pgo' are the same variant, pgo " \
    "the default's values are the default"
refused missing baseline,pgo,clang-99:pgo+lto \
    "^FATAL: --variants: clang-99:pgo\+lto: compiler clang-99 not found on PATH \(Debian package clang-99; its ThinLTO and profile merging need lld and llvm too\)$" \
    "a compiler that is not installed"
refused nolto baseline,pgo,clang:pgo+lto+bolt \
    "^FATAL: --variants=clang:pgo\+lto\+bolt: it optimizes the pgo\+lto build, so --variants needs clang:pgo\+lto too \(e\.g\. --variants=baseline,clang:pgo\+lto,clang:pgo\+lto\+bolt\)$" \
    "pgo+lto+bolt without its input"
ok "refusals: no work directory" test ! -e "$WD"
# a library recipe (sqlite) takes dimensions on baseline and pgo (pgo_sqlite_search.t builds
# them), not lto (one translation unit) nor on a BOLT variant, refused before anything
pgo lib sqlite --variants=baseline,clang:pgo+lto --workdir="$TMP/sq" --results="$DB"
is "$RC" 1 "a library recipe: lto refused"
like "$(errors_of "$TMP/lib.err")" "^FATAL: --variants: 'clang:pgo\+lto': sqlite is a library recipe compiled from one translation unit \(the amalgamation\), where link-time optimization has nothing to add; accepted: baseline, pgo, bolt, pgo\+bolt, with a compiler or flags before baseline or pgo \(clang:pgo, -O3:pgo\)$" \
    "... in one line naming what is accepted"
pgo lib2 sqlite --variants=baseline,pgo,clang:pgo+bolt --workdir="$TMP/sq" --results="$DB"
is "$RC" 1 "a library recipe: a dimension on a BOLT variant refused"
like "$(errors_of "$TMP/lib2.err")" "^FATAL: --variants: 'clang:pgo\+bolt': pgo\+bolt takes no compiler or flags" "... saying so"
pgo lib3 sqlite --variants=baseline,pgo,icc:pgo --workdir="$TMP/sq" --results="$DB"
is "$RC" 1 "a library recipe: a value of no dimension refused"
like "$(errors_of "$TMP/lib3.err")" "^FATAL: --variants: 'icc:pgo': " "... naming it"
ok "library refusals: no work directory" test ! -e "$TMP/sq"

note "---- gcc and clang (and gcc -O1) variants in one experiment"
VARIANTS=baseline,pgo,clang:baseline,clang:pgo+lto,-O1:lto
pgo mix standin-spec "${RUN[@]}" --variants=$VARIANTS --output="$TMP/mix.json" \
    --variant-server-option=clang:pgo+lto:innodb_buffer_pool_size=64M
is "$RC" 0 "mixed variants: exit 0" || diag "$(errors_of "$TMP/mix.err" | tail -5)"
OUT=$(cat "$TMP/mix.out")
CROOT=$(ls -d "$WD"/standin-spec-clang-*/ 2>/dev/null)
is "$(ls -d "$WD"/standin-spec-gcc-*/ | wc -l | tr -d ' ')" 2 "two gcc work directories (-O2, -O1)"
is "$(echo "$CROOT" | wc -l | tr -d ' ')" 1 "one clang work directory"
CROOT=${CROOT%/}
after() { grep -m1 -A1 -E -- "$1" "$TMP/mix.out" | tail -1; } # after ERE: the line after the first match
like "$(grep -E '^  clang ' "$TMP/mix.out")" "^  clang +Debian clang version [0-9.]+, -O2$" \
    "summary: clang's group, its compiler and flags"
like "$(after '^  clang ')" "^  clang:baseline $CROOT/baseline/prefix/bin/mariadbd " "... then its baseline"
like "$OUT" "  clang:instrumented $CROOT/instrumented/prefix/bin/mariadbd" "summary: clang's instrumented build"
like "$(after '^  clang:instrumented ')" "^  training +oltp_point_select, .*\([0-9]+ \.profraw files merged\)" \
    "summary: clang's training merged its .profraw files"
like "$OUT" "  clang:pgo\+lto $CROOT/pgo\+lto/prefix/bin/mariadbd" "summary: clang:pgo+lto"
like "$(after '^  clang:pgo\+lto ')" "^ +flags: -O2 -fprofile-instr-use=$CROOT/profile-oltp_point_select\.profdata .*-flto=thin -fuse-ld=lld -Wno-unused-command-line-argument$" \
    "... with clang's profile and ThinLTO"
like "$(grep -E '^  -O1 ' "$TMP/mix.out")" "^  -O1 +gcc \(Debian .*, -O1$" "summary: the -O1 group"
like "$(after '^  -O1 ')" "^  -O1:lto " "... builds lto only (no baseline, no instrumented build)"
unlike "$OUT" "-O1:(baseline|instrumented)" "... none of -O1's baseline or instrumented build"
is "$(info "$CROOT/pgo+lto" c_flags | grep -c -- "-fprofile-instr-use=$CROOT/")" 1 "the stand-in was compiled with clang's profile"
like "$OUT" "identical for baseline, pgo, clang:baseline, clang:pgo\+lto, -O1:lto" \
    "gate: every group's builds"
like "$OUT" "variant +clang:pgo\+lto +$CROOT/pgo\+lto/prefix \(MariaDB [0-9.]+, sha256 [0-9a-f]+, Debian clang version [0-9.]+, -O2 -fprofile-instr-use=[^;]*; server options innodb_buffer_pool_size=64M(\)|; from )" \
    "report: clang:pgo+lto with its compiler, flags and server option"
like "$OUT" "variant +pgo +[^ ]+ \(MariaDB [0-9.]+, sha256 [0-9a-f]+, gcc \(Debian" "report: pgo with gcc"
like "$(grep -m1 '^| threads |' "$TMP/mix.out")" "\| baseline .*\| +pgo .*\| +clang:baseline .*\| +clang:pgo\+lto .*\| +-O1:lto " \
    "report: a column per variant, named with its settings"
is "$(sq "$DB" "SELECT group_concat(name || '=' || substr(compiler, 1, 5) || '/' || substr(cflags, 1, 3), ' ') FROM (SELECT * FROM variants ORDER BY idx)")" \
    "baseline=gcc (/-O2 pgo=gcc (/-O2 clang:baseline=Debia/-O2 clang:pgo+lto=Debia/-O2 -O1:lto=gcc (/-O1" \
    "results database: each variant's compiler and flags"
is "$(jq -r '.variants[] | select(.name == "-O1:lto") | .cflags' "$TMP/mix.json")" "-O1 -flto=auto" \
    "--output: -O1:lto's flags"
# cmake appends its build type's flags (RelWithDebInfo: -O2 -g) after CMAKE_C_FLAGS: the
# recipe repeats {cflags} there, so the group's -O1 is the last -O of its compile line
O1LTO=$(ls -d "$WD"/standin-spec-gcc-*/lto 2>/dev/null | head -1)
is "$(info "$O1LTO" c_flags | grep -oE -- '(^| )-O[0-3s]' | tail -1 | tr -d ' ')" "-O1" \
    "-O1:lto: compiled at -O1 (no -O2 of cmake's after it)"
GBASE=$(ls -d "$WD"/standin-spec-gcc-*/baseline 2>/dev/null | head -1)
is "$(info "$GBASE" c_flags | grep -oE -- '(^| )-O[0-3s]' | tr -d ' ' | sort -u)" "-O2" \
    "baseline: compiled at --cflags' -O2 only"
is "$(sq "$DB" "SELECT count(*) FROM runs")" 10 "every variant measured in both rounds"

note "---- the same command again: every build and training reused"
pgo again standin-spec "${RUN[@]}" --variants=$VARIANTS --measure=off
is "$RC" 0 "again: exit 0"
is "$(grep -c '(cached)$' "$TMP/again.out")" 9 "again: 7 builds and 2 trainings cached"
unlike "$(cat "$TMP/again.out")" "built: " "again: nothing built"

note "---- BOLT in a group: clang:pgo+lto+bolt (and clang:baseline, built with BOLT's flags too)"
pgo cbolt standin-spec "${RUN[@]}" --variants=baseline,clang:baseline,clang:pgo+lto,clang:pgo+lto+bolt
is "$RC" 0 "clang:pgo+lto+bolt: exit 0" || diag "$(errors_of "$TMP/cbolt.err" | tail -5)"
OUT=$(cat "$TMP/cbolt.out")
like "$OUT" "  clang:instrumented $CROOT/instrumented/prefix/bin/mariadbd .*\(cached\)" "clang's instrumented build reused"
like "$OUT" "  clang:pgo\+lto $CROOT/pgo\+lto/prefix/bin/mariadbd .*built: the BOLT build flags changed" \
    "clang:pgo+lto rebuilt as BOLT's input, saying why"
LF=$(info "$CROOT/pgo+lto" link_flags)
like "$LF" "(^| )-Wl,--emit-relocs( |$)" "clang:pgo+lto: linked with the recipe's bolt link flags"
unlike "$(info "$CROOT/pgo+lto" c_flags)" "reorder-blocks" "clang:pgo+lto: none of GCC's bolt cflags (clang_cflags: none)"
like "$(info "$CROOT/pgo+lto" c_flags)" "-flto=thin" "clang:pgo+lto: still ThinLTO"
is "$(grep -cE "^bolt: clang:pgo\+lto\+bolt made in [0-9]+ s \(BOLT profile for [1-9][0-9]* of [1-9][0-9]* functions\)$" "$TMP/cbolt.err")" 1 \
    "its phase line, with BOLT's profile figure"
BD=$CROOT/pgo-lto-bolt
ok "clang:pgo+lto+bolt: its own prefix, ROOT/pgo-lto-bolt" test -x "$BD/prefix/bin/mariadbd"
ok "clang:pgo+lto+bolt: its mariadbd differs from clang:pgo+lto's" \
    eval '! cmp -s "$BD/prefix/bin/mariadbd" "$CROOT/pgo+lto/prefix/bin/mariadbd"'
cmp_ok "$(readelf -S "$BD/prefix/bin/mariadbd" | grep -c '\.bolt\.org\.text')" '>=' 1 \
    "clang:pgo+lto+bolt: rewritten by BOLT (.bolt.org.text)"
cmp_ok "$(find "$BD/profile" -name '*.fdata' -size +0 | wc -l)" '>=' 1 "clang:pgo+lto+bolt: BOLT's training wrote a profile"
ok "clang:pgo+lto+bolt: merged profile non-empty" test -s "$BD/merged.fdata"
like "$OUT" "identical for baseline, clang:baseline, clang:pgo\+lto, clang:pgo\+lto\+bolt" "gate: clang:pgo+lto+bolt included"
# the link flags are in its compile lines too: clang's "argument unused" warning must not fail
# the stand-in's -Werror configure check, or the group's builds are configured differently
like "$(info "$CROOT/baseline" link_flags)" "(^| )-Wl,--emit-relocs( |$)" "clang:baseline: linked with the bolt link flags"
like "$OUT" "  clang:baseline $CROOT/baseline/prefix/bin/mariadbd .*built: the BOLT build flags changed" \
    "clang:baseline rebuilt with them, and configured as clang's instrumented build was (no FATAL)"
like "$OUT" "  clang:pgo\+lto\+bolt +bolt over clang:pgo\+lto: " "report: what BOLT added over clang:pgo+lto"
note "---- the mysql recipe with clang: MySQL's own FPROFILE options"
# MySQL's cmake/fprofile.cmake gives clang -fprofile-use=FPROFILE_DIR, which clang reads as
# FPROFILE_DIR/default.profdata: the trainer's merged profile must be there
derive mysql standin-mysqlc
MWD=$TMP/wdm
pgo myc standin-mysqlc --source="$SRC" --workdir="$MWD" --train=oltp_point_select --train-time=2 \
    --table-size=1000 --variants=baseline,clang:pgo --measure=off
is "$RC" 0 "mysql recipe, clang:pgo: exit 0" || diag "$(errors_of "$TMP/myc.err" | tail -5)"
MROOT=$(ls -d "$MWD"/standin-mysqlc-clang-*/ 2>/dev/null | head -1)
MROOT=${MROOT%/}
USE_DIR=$(option_of "$MROOT/pgo/build.log" FPROFILE_DIR)
like "$USE_DIR" "^$MWD/" "mysql recipe, clang:pgo: FPROFILE_DIR is in the workdir ($USE_DIR)"
ok "mysql recipe, clang:pgo: the merged profile is FPROFILE_DIR/default.profdata" test -s "$USE_DIR/default.profdata"
like "$(info "$MROOT/pgo" c_flags)" "(^| )-fprofile-use=$USE_DIR( |$)" \
    "mysql recipe, clang:pgo: compiled with -fprofile-use=FPROFILE_DIR (MySQL's option)"
like "$(grep -E '^  clang:instrumented ' -A1 "$TMP/myc.out" | tail -1)" "\([1-9][0-9]* \.profraw files merged\)" \
    "mysql recipe, clang: the training merged its .profraw files"
is "$(count "$MROOT/pgo/build.log" '\(warning\|error\): .*profile')" 0 \
    "mysql recipe, clang:pgo: no profile warning in its build log" ||
    diag "$(grep -m3 -- '\(warning\|error\): .*profile' "$MROOT/pgo/build.log")"
like "$(cat "$TMP/myc.out")" "identical for baseline, clang:pgo" "mysql recipe, clang:pgo: gated"
done_testing
