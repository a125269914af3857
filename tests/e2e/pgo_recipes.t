#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_recipes.t: the mechanics of the mysql and mariadb recipes on the stand-in cmake project
# (tests/standin: a small C program that records how it was built and runs the real MariaDB
# server as its child), with a real managed MariaDB server for training, gate and measurement.
# The test recipes are the real recipes/mysql.json and recipes/mariadb.json with only
# source.expect changed (jq), found through PGOLAB_RECIPES: adding a target is adding a file.
# mysql recipe: MySQL's own FPROFILE options reach the compiler (-fprofile-generate=FPROFILE_DIR
# with prefer-atomic; -fprofile-use=DIR with -fprofile-correction; baseline neither), every
# phase builds in the same directory ("shared"), the .gcda names carry that directory mangled,
# the summary has the gate line and the seed-000 tables, `pgolab history` a complete pgo
# experiment. mariadb recipe: the flags arrive through CMAKE_C_FLAGS and the linker flags, the
# baseline builds in its own directory and the pgo build in the instrumented build's
# ("pgo-reuses-instrumented": the stand-in's bison parser, like MariaDB's, names its generated
# path in #line; with a directory per variant the pgo build stops on GCC's coverage mismatch and
# says which build_dir to set). Resume: a run interrupted inside the instrumented build
# step continues when the same command runs again (baseline cached, the finished configure
# step not redone); an edited source rebuilds every phase and says why. Bad input: a --source that is not the
# recipe's, an unknown recipe key (file:line), a failing build step (command, log tail, no half
# variant left), a trainer that writes no profile, a disk that fills during a build (a small
# tmpfs; the results database intact): one line (+ the log tail), exit 1. SIGHUP or SIGTERM to
# pgolab alone (not its group) also stops the build step it runs, and nothing of it is left.
. "$(dirname "$0")/lib.sh"

# Everything is under $TMP; pgolab's servers die with it (PR_SET_PDEATHSIG), the stand-in's
# mariadbd with the stand-in. A background run a failed check left behind is killed here.
cleanup() {
    [ -n "${BGPID:-}" ] && kill -KILL -- "-$BGPID" 2>/dev/null
    mountpoint -q "$TMP/small" 2>/dev/null && umount -l "$TMP/small"
    _e2e_cleanup
}
on_exit cleanup

standin_setup # SRC (a copy: the test edits it), RECIPES; derive, pgo, info, count, option_of: lib.sh
derive mysql standin-mysql
derive mariadb standin-mariadb
for r in mysql:standin-mysql mariadb:standin-mariadb; do
    for k in steps pgo build_dir server; do
        is "$(jq -cS ".$k | del(.hot_functions?)" "$RECIPES/${r#*:}.json")" "$(jq -cS ".$k | del(.hot_functions?)" "$REPO_DIR/recipes/${r%%:*}.json")" \
            "${r#*:}: '$k' is the real recipe's (but for the hot functions, the stand-in's main)"
    done
done

# Every package a shipped recipe requires is one `make deps` installs (scripts/install-deps.sh),
# so a fresh machine runs these tests and `pgolab pgo` of each recipe without a manual apt-get.
# Not the "distro" key's: they are the Debian package's own build dependencies, needed only by
# the distro variant, which names the missing ones with their apt-get command (pgo_distro.t).
deps_pkgs=" $(sed -n '/^PKGS="/,/"$/p' "$REPO_DIR/scripts/install-deps.sh" | tr -d '"' | sed 's/^PKGS=//' | tr '\n' ' ') "
for f in "$REPO_DIR"/recipes/*.json; do
    # {major}: the recipe's default major, the one a fresh Debian 12 machine builds ("versions")
    for p in $(jq -r '(.versions.default // "") as $d | del(.distro) | .. | objects | select(has("package")) | .package | gsub("\\{major\\}"; $d)' "$f" | sort -u); do
        case $deps_pkgs in *" $p "*) in=0 ;; *) in=1 ;; esac
        is "$in" 0 "$(basename "$f") requires package $p: scripts/install-deps.sh installs it"
    done
done

WD=$TMP/wd
DB=$TMP/results.db
RUN=(--source="$SRC" --workdir="$WD" --train=oltp_point_select --train-time=2 --table-size=1000)
MEASURE=(--bench=oltp_point_select --threads=1 --rounds=2 --time=2 --results="$DB")

note "---- the stand-in project itself: MySQL's FPROFILE rules (cmake configure only)"
mkdir -p "$TMP/cfg/build"
cmake -S "$SRC" -B "$TMP/cfg/build" -DFPROFILE_GENERATE=ON -DFPROFILE_USE=ON >"$TMP/cfg.out" 2>&1
isnt "$?" 0 "stand-in: FPROFILE_GENERATE and FPROFILE_USE both ON fail to configure"
like "$(cat "$TMP/cfg.out")" "CMake Error.*fprofile.cmake" "stand-in: ... with a FATAL_ERROR from cmake/fprofile.cmake"
rm -rf "$TMP/cfg/build"
cmake -S "$SRC" -B "$TMP/cfg/build" -DFPROFILE_GENERATE=ON >"$TMP/cfg.out" 2>&1
like "$(cat "$TMP/cfg/build/build_info.c" 2>/dev/null)" "-fprofile-generate=$TMP/cfg/build-profile-data -fprofile-update=prefer-atomic" \
    "stand-in: FPROFILE_DIR defaults to \${CMAKE_BINARY_DIR}-profile-data (GCC)"

note "---- mysql recipe, interrupted inside the instrumented build's build step"
touch "$TMP/hold"
STANDIN_HOLD=$TMP/hold setsid "$PGOLAB" pgo standin-mysql "${RUN[@]}" "${MEASURE[@]}" \
    >"$TMP/int.out" 2>"$TMP/int.err" &
BGPID=$!
poll 1200 0.1 test -e "$TMP/hold.held"
ok "interrupt: the instrumented build reached the hold in its build step" test -e "$TMP/hold.held"
is "$(ps -o pgid= -p "$BGPID" | tr -d ' ')" "$BGPID" "interrupt: pgolab leads its own process group"
kill -INT -- "-$BGPID" # Ctrl-C: the whole foreground group
wait "$BGPID"
is "$?" 2 "interrupt: exit 2"
BGPID=
rm -f "$TMP/hold"
like "$(cat "$TMP/int.err")" "^FATAL: interrupted \(signal 2\); the same command continues" "interrupt: says the same command continues"
ROOT=$(ls -d "$WD"/standin-mysql-gcc-*/ 2>/dev/null | head -1)
ROOT=${ROOT%/}
ok "interrupt: the baseline was finished" test -s "$ROOT/baseline/stamp" -a -x "$ROOT/baseline/prefix/bin/mysqld"
ok "interrupt: no half instrumented variant (no prefix)" test ! -e "$ROOT/instrumented/prefix"

note "---- again, with SIGHUP (a closed terminal) or SIGTERM to pgolab alone, not its group"
for sig in HUP TERM; do
    rm -f "$TMP/hold.held"
    touch "$TMP/hold"
    STANDIN_HOLD=$TMP/hold setsid "$PGOLAB" pgo standin-mysql "${RUN[@]}" "${MEASURE[@]}" \
        >"$TMP/sig.out" 2>"$TMP/sig.err" &
    BGPID=$!
    poll 1200 0.1 test -e "$TMP/hold.held"
    ok "SIG$sig: the instrumented build reached the hold again" test -e "$TMP/hold.held"
    kill -"$sig" "$BGPID"
    # the build step must end although only pgolab got the signal: no wait on the held step
    poll 300 0.1 eval '! kill -0 "$BGPID" 2>/dev/null'
    ok "SIG$sig: pgolab ended within 30 s (it stopped the build step it ran)" eval '! kill -0 "$BGPID" 2>/dev/null'
    rm -f "$TMP/hold"
    wait "$BGPID"
    is "$?" 2 "SIG$sig: exit 2"
    BGPID_DONE=$BGPID
    BGPID=
    like "$(cat "$TMP/sig.err")" "interrupted \(signal $(kill -l "$sig")\); the same command continues" "SIG$sig: interrupted, says the same command continues"
    poll 100 0.1 test -z "$(pgrep -s "$BGPID_DONE")"
    is "$(pgrep -s "$BGPID_DONE" | wc -l)" 0 "SIG$sig: no process of the pipeline is left (build tool, hold loop)"
    ok "SIG$sig: still no half instrumented variant" test ! -e "$ROOT/instrumented/prefix"
done

note "---- the same command again finishes: train, pgo build, gate, measurement"
note "     (with --jobs=1: the number of build jobs is no input of the cache)"
pgo full standin-mysql "${RUN[@]}" "${MEASURE[@]}" --jobs=1
is "$RC" 0 "mysql: exit 0"
[ "$RC" = 0 ] || diag "$(tail -20 "$TMP/full.err")"
OUT=$(cat "$TMP/full.out")
like "$OUT" "^  baseline +$ROOT/baseline/prefix/bin/mysqld .*\(cached\)$" "resume: the finished baseline is not rebuilt (cached)"
like "$OUT" "^  built from +standin-mysql 9\.7\.2 \(by its MYSQL_VERSION\), a tree of no Debian version \($SRC\)" \
    "provenance: a tree without debian/ is named by its own MYSQL_VERSION"
like "$OUT" "^  instrumented +$ROOT/instrumented/prefix/bin/mysqld .*built: " "resume: the interrupted instrumented build is built"
LOG=$ROOT/instrumented/build.log
is "$(count "$LOG" "^\$ cd .* && cmake $SRC ")" 1 "resume: the instrumented build's finished configure step is not redone"
is "$(count "$LOG" "^\$ cd .* && cmake --build ")" 4 "resume: its interrupted build step runs again (after three interruptions)"
is "$(count "$LOG" "^\$ cd .* && cmake --build \. --target mysqld --parallel 1$")" 1 "resume: ... the last time with --jobs=1"

GEN_DIR=$(option_of "$ROOT/instrumented/build.log" FPROFILE_DIR)
USE_DIR=$(option_of "$ROOT/pgo/build.log" FPROFILE_DIR)
like "$GEN_DIR" "^$WD/" "instrumented: FPROFILE_DIR is an absolute directory in the workdir ($GEN_DIR)"
like "$USE_DIR" "^$WD/" "pgo: FPROFILE_DIR is an absolute directory in the workdir ($USE_DIR)"
B=$(info "$ROOT/baseline" c_flags) I=$(info "$ROOT/instrumented" c_flags) P=$(info "$ROOT/pgo" c_flags)
like "$I" "(^| )-fprofile-generate=$GEN_DIR( |$)" "instrumented: compiled with -fprofile-generate=FPROFILE_DIR"
like "$I" "(^| )-fprofile-update=prefer-atomic( |$)" "instrumented: compiled with -fprofile-update=prefer-atomic"
unlike "$I" "-fprofile-use" "instrumented: not with -fprofile-use"
like "$I" "(^| )-ftest-coverage( |$)" "instrumented: compiled with -ftest-coverage (pgolab's notes for the profile check)"
like "$P" "(^| )-fprofile-use=$USE_DIR( |$)" "pgo: compiled with -fprofile-use=FPROFILE_DIR"
like "$P" "(^| )-fprofile-correction( |$)" "pgo: compiled with -fprofile-correction"
like "$P" "(^| )-fprofile-partial-training( |$)" "pgo: compiled with -fprofile-partial-training"
unlike "$P" "-fprofile-generate" "pgo: not with -fprofile-generate"
like "$B" "-O2" "baseline: compiled with --cflags (-O2)"
unlike "$B" "-fprofile" "baseline: no profile flag at all"
BD=$(info "$ROOT/baseline" binary_dir)
like "$BD" "^/" "baseline: records an absolute CMAKE_BINARY_DIR ($BD)"
is "$(info "$ROOT/instrumented" binary_dir)" "$BD" "instrumented: the same CMAKE_BINARY_DIR as baseline (build_dir shared)"
is "$(info "$ROOT/pgo" binary_dir)" "$BD" "pgo: the same CMAKE_BINARY_DIR as baseline"
for v in baseline instrumented pgo; do
    is "$(info "$ROOT/$v" prefix)" "$ROOT/$v/prefix" "$v: installed into its own prefix"
done
mangled=$(printf '%s' "$BD" | tr / '#')
GCDA=$USE_DIR/$mangled#CMakeFiles#mariadbd.dir#standin.c.gcda
ok "training: the pgo build's FPROFILE_DIR holds the server's .gcda, named after its object in $BD (# for /)" test -s "$GCDA"
cmp_ok "$(find "$USE_DIR" -name '*.gcda' -size +0 | wc -l)" '>=' 1 "training: non-empty .gcda files in the trainer's profile directory"
is "$(count "$ROOT/pgo/build.log" 'profile count data file not found')" 0 "pgo: the compiler found the profile data (no missing-profile warning)"
like "$OUT" "^  training +oltp_point_select, 2 s each, 2 threads: profile counts in [1-9][0-9]* of [1-9][0-9]* objects, [1-9][0-9]* of [1-9][0-9]* functions, .*; main [1-9][0-9]* \(" \
    "summary: the training line gives the profile's counts by function (the notes of -ftest-coverage name them)"
like "$OUT" "^  gate +checksum: oltp_read_only verify, [0-9a-f]{16} over [1-9][0-9]* rows, identical for baseline, pgo$" "summary: the gate line"
like "$OUT" "^ +flags: -O2 -DFPROFILE_USE=ON -DFPROFILE_DIR=$USE_DIR$" "summary: the pgo flags with the options expanded"
for title in "Transactions per second" "Average response time \(ms\)" "95th percentile response time \(ms\)"; do
    block=$(T="$title, oltp_point_select" awk 'index($0, "Table") == 1 { on = ($0 ~ ENVIRON["T"]) } on' "$TMP/full.out")
    like "$block" "^\| +1 \| +[0-9.]+ \([0-9.]+-[0-9.]+\) +\| +[0-9.]+ \(" "tables: $title: the 1-thread row"
    like "$block" "^\| Average \|" "tables: $title: the Average row"
    like "$block" "% improvement" "tables: $title: % improvement column"
done
"$PGOLAB" history --results="$DB" >"$TMP/hist.out" 2>&1
like "$(cat "$TMP/hist.out")" "^ +[0-9]+ +[0-9-]+ [0-9:]+ +pgo +complete +baseline,pgo +oltp_point_select +4/4$" \
    "history: a complete pgo experiment, 2 rounds x 2 variants"
# MySQL's own FPROFILE options pass -fprofile-correction without pgolab's -fopt-info-note-ipa:
# what GCC corrected is not known, and the summary and the results say so
like "$OUT" "^ +GCC's profile corrections are not counted \(the target's own PGO flags, without -fopt-info-note-ipa\)$" \
    "summary: GCC's profile corrections are not counted with the target's own PGO options"
is "$(sq "$DB" "SELECT json_type(settings_json, '\$.pgo.profile_corrections.pgo') FROM experiments ORDER BY id DESC LIMIT 1")" "null" \
    "results: settings.pgo.profile_corrections.pgo is null (not counted)"

note "---- mariadb recipe: flags through CMAKE_C_FLAGS, the pgo build where the instrumented one was"
pgo maria standin-mariadb "${RUN[@]}" --measure=off
is "$RC" 0 "mariadb: exit 0"
[ "$RC" = 0 ] || diag "$(tail -20 "$TMP/maria.err")"
MROOT=$(ls -d "$WD"/standin-mariadb-gcc-*/ 2>/dev/null | head -1)
MROOT=${MROOT%/}
# off a terminal (stderr is a file here): one line per finished phase, in order, nothing else
is "$(grep -vE '^(WARNING|note):' "$TMP/maria.err" | sed -E 's/[0-9]+ s/N s/; s/sha256 [0-9a-f]{12}/sha256 X/')" \
"source: $SRC (sha256 X)
build: baseline made in N s (not built before)
build: instrumented made in N s (not built before)
training: oltp_point_select on the instrumented build in N s
build: pgo made in N s (not built before)
correctness gate: every variant returns the baseline's results (N s)" \
    "mariadb, off a terminal: a line per finished phase (source, 3 builds, training, gate)"
# on a terminal (script(1)'s pseudo-terminal): the status line redrawn in place, no phase lines
have script || bail_out "script (util-linux) not found (scripts/install-deps.sh installs bsdutils)"
cmd=$(printf '%q ' timeout -k 5 300 "$PGOLAB" pgo standin-mariadb "${RUN[@]}" --measure=off --rebuild)
script -qec "$cmd >$(printf '%q' "$TMP/tty.out")" "$TMP/tty.raw" </dev/null >/dev/null
is "$?" 0 "mariadb under a pseudo-terminal (--rebuild): exit 0"
tty=$(tr '\r' '\n' <"$TMP/tty.raw" | sed 's/\x1b\[K//g')
like "$tty" "^build baseline: .*[0-9]+ s" "terminal: the build's status line (phase, elapsed time)"
like "$tty" "^training oltp_point_select: " "terminal: the training's status line"
ok "terminal: each status is redrawn in place (carriage return, clear to end of line)" \
    grep -q $'\r\x1b\[K' "$TMP/tty.raw"
unlike "$tty" "^(build: |training: |correctness gate: )" "terminal: no phase lines (they are for logs)"
like "$(cat "$TMP/tty.out")" "^  pgo +$MROOT/pgo/prefix/bin/mariadbd .*built: --rebuild" "terminal: the summary on stdout, every build redone"
configure=$(grep -m1 '^\$ cd ' "$MROOT/instrumented/build.log")
like "$configure" "-DCMAKE_C_FLAGS=-O2 -fprofile-generate=/" "mariadb: the instrumented configure passes -fprofile-generate in CMAKE_C_FLAGS"
unlike "$configure" "FPROFILE" "mariadb: and no FPROFILE option"
I=$(info "$MROOT/instrumented" c_flags) P=$(info "$MROOT/pgo" c_flags) B=$(info "$MROOT/baseline" c_flags)
like "$I" "(^| )-fprofile-generate=/[^ ]+ -fprofile-update=prefer-atomic( |$)" "mariadb instrumented: compiled with -fprofile-generate=DIR -fprofile-update=prefer-atomic"
like "$(info "$MROOT/instrumented" link_flags)" "(^| )-fprofile-generate=/" "mariadb instrumented: linked with -fprofile-generate (CMAKE_EXE_LINKER_FLAGS)"
MUSE=$(printf '%s\n' "$P" | grep -o -- '-fprofile-use=[^ ]*' | cut -d= -f2-)
like "$MUSE" "^$MROOT/" "mariadb pgo: compiled with -fprofile-use=DIR in the workdir"
like "$P" "(^| )-fprofile-correction( |$)" "mariadb pgo: compiled with -fprofile-correction"
unlike "$B" "-fprofile" "mariadb baseline: no profile flag"
cmp_ok "$(find "$MUSE" -name '*standin.c.gcda' -size +0 | wc -l)" '==' 1 "mariadb: the pgo build's profile directory holds the trained .gcda"
is "$(info "$MROOT/baseline" binary_dir)" "$MROOT/baseline/build" "mariadb baseline: its build directory is its own"
is "$(info "$MROOT/instrumented" binary_dir)" "$MROOT/instrumented/build" "mariadb instrumented: its build directory is its own"
is "$(info "$MROOT/pgo" binary_dir)" "$MROOT/instrumented/build" "mariadb pgo: compiled in the instrumented build's directory (build_dir pgo-reuses-instrumented)"
like "$(grep -m1 '^#line .*statement\.c"' "$MROOT/instrumented/build/statement.c")" "^#line [0-9]+ \"$MROOT/instrumented/build/statement.c\"$" \
    "mariadb: the stand-in's bison parser names its generated path in #line (as MariaDB's sql/yy_*.cc do)"
is "$(count "$MROOT/pgo/build.log" 'source locations for function')" 0 "mariadb pgo: no coverage mismatch on the generated parser"
like "$P" "(^| )-fopt-info-note-ipa( |$)" "mariadb pgo: compiled with -fopt-info-note-ipa (GCC notes what -fprofile-correction corrected)"
is "$(count "$MROOT/pgo/build.log" 'correcting inconsistent profile data')" 0 "mariadb pgo: atomic counters, nothing for GCC to correct"
like "$(cat "$TMP/maria.out")" "^ +GCC corrected no profile counts \(0 objects with inconsistent counts\)$" \
    "mariadb summary: GCC's profile corrections counted (0 objects)"

note "---- mariadb recipe with a build directory per variant: the generated parser's profile does not match"
derive mariadb standin-maria-pv '.build_dir = "per-variant"'
pgo pv standin-maria-pv "${RUN[@]}" --measure=off
is "$RC" 1 "per-variant: exit 1"
PVROOT=$(ls -d "$WD"/standin-maria-pv-gcc-*/ 2>/dev/null | head -1)
PVROOT=${PVROOT%/}
like "$(errors_of "$TMP/pv.err" | head -n 1)" "^FATAL: build pgo: step build failed \(exit [0-9]+\): cmake --build " \
    "per-variant: the failing step and its command"
like "$(cat "$TMP/pv.err")" "statement\.c:[0-9]+:[0-9]+: error: source locations for function .standin_yyparse. have changed.*coverage-mismatch" \
    "per-variant: GCC's coverage mismatch on the bison parser, in the log tail"
like "$(errors_of "$TMP/pv.err" | tail -n 1)" "^FATAL: the profile's source locations do not match because pgo compiled in $PVROOT/pgo/build and the instrumented build in $PVROOT/instrumented/build: a generated source \(a bison parser, say\) names its build directory in #line; set the recipe's \"build_dir\" to \"pgo-reuses-instrumented\" \(docs/recipes.md\)$" \
    "per-variant: the last line says why and which build_dir to set"
ok "per-variant: no half pgo variant is left" test ! -e "$PVROOT/pgo/prefix"

note "---- an edited source rebuilds every phase and says why (also with --resume)"
echo "/* edited by pgo_recipes.t */" >>"$SRC/standin.c"
pgo edit standin-mysql "${RUN[@]}" --measure=off --resume
is "$RC" 0 "edited source: exit 0"
for v in baseline instrumented pgo; do
    like "$(cat "$TMP/edit.out")" "^  $v +.*built: the source tree changed since the cached build: 1 file changed \(edited: standin.c\)\)$" \
        "edited source: $v rebuilt, because the source tree changed (the file named)"
done
unlike "$(cat "$TMP/edit.out")" "^  training .*\(cached\)$" "edited source: retrained (the instrumented build changed)"
like "$(cat "$TMP/edit.err")" "^build: baseline made in [0-9]+ s \(the source tree changed since the cached build: 1 file changed \(edited: standin.c\)\)$" \
    "edited source: the phase line says why it was built"

note "---- bad input: one line, exit 1"
mkdir -p "$TMP/notsrc"
echo hello >"$TMP/notsrc/README"
pgo bad1 standin-mysql --source="$TMP/notsrc" --workdir="$WD" --measure=off
is "$RC" 1 "wrong --source: exit 1"
is "$(wc -l <"$TMP/bad1.err")" 1 "wrong --source: one line"
like "$(cat "$TMP/bad1.err")" "--source=$TMP/notsrc: not a standin-mysql source tree \(no CMakeLists.txt; expected CMakeLists.txt, cmake/fprofile.cmake, standin.c" \
    "wrong --source: says what was expected"

cp -r "$SRC" "$TMP/src80"
printf 'MYSQL_VERSION_MAJOR=8\nMYSQL_VERSION_MINOR=0\nMYSQL_VERSION_PATCH=36\n' >"$TMP/src80/MYSQL_VERSION"
pgo bad80 standin-mysql --source="$TMP/src80" --workdir="$TMP/wd80" --measure=off
is "$RC" 1 "a tree of another major (by its MYSQL_VERSION): exit 1"
like "$(errors_of "$TMP/bad80.err")" "^FATAL: the source $TMP/src80 is standin-mysql 8\.0\.36 \(by its MYSQL_VERSION\), a major the standin-mysql recipe does not build \(it builds 9\.7\)$" \
    "a tree of another major: one line naming both versions"
is "$(find "$TMP/wd80" -name prefix 2>/dev/null | wc -l)" 0 "a tree of another major: refused before any build"

derive mysql standin-typo '. + {"buildir": "shared"}'
line=$(grep -n '"buildir"' "$RECIPES/standin-typo.json" | cut -d: -f1)
pgo bad2 standin-typo "${RUN[@]}" --measure=off
is "$RC" 1 "unknown recipe key: exit 1"
is "$(wc -l <"$TMP/bad2.err")" 1 "unknown recipe key: one line"
like "$(cat "$TMP/bad2.err")" "$RECIPES/standin-typo.json:$line: unknown key 'buildir'" "unknown recipe key: FILE:LINE and the key"

sed -i 's/^int main(int argc, char \*\*argv)$/int main(int argc, char **argv) not_c/' "$SRC/standin.c"
grep -q not_c "$SRC/standin.c" || bail_out "could not break standin.c"
ok "failing build: the baseline of the earlier run is there before" test -x "$ROOT/baseline/prefix/bin/mysqld"
pgo bad3 standin-mysql "${RUN[@]}" --measure=off
is "$RC" 1 "failing build: exit 1"
like "$(errors_of "$TMP/bad3.err" | head -1)" "build baseline: step build failed \(exit [0-9]+\): cmake --build \. (--target mysqld )?--parallel [0-9]+$" \
    "failing build: names the build, the step and its command"
like "$(cat "$TMP/bad3.err")" "standin\.c:[0-9]+:.*error" "failing build: shows the compiler's error from the log tail"
ok "failing build: no half variant left (the baseline prefix is gone)" test ! -e "$ROOT/baseline/prefix"
ok "failing build: the baseline is not marked built" test ! -e "$ROOT/baseline/stamp"
sed -i 's/ not_c$//' "$SRC/standin.c"

derive mysql standin-noprof '.pgo.phase_options.instrumented = ["-DFPROFILE_DIR={profile_dir}"]'
pgo bad4 standin-noprof "${RUN[@]}" --measure=off
is "$RC" 1 "trainer writes no profile (server not instrumented): exit 1"
is "$(errors_of "$TMP/bad4.err" | wc -l)" 1 "trainer writes no profile: one line" || diag "$(cat "$TMP/bad4.err")"
like "$(cat "$TMP/bad4.err")" "training with oltp_point_select wrote no profile data in $WD/.*: the instrumented server $WD/.*/bin/mysqld has no profiling code" \
    "trainer writes no profile: says so, and why (the server is not instrumented)"

note "---- disk full during a build: a 32 MiB tmpfs work directory that the build fills"
SMALL=$TMP/small
mkdir -p "$SMALL"
if mount -t tmpfs -o size=32m pgolab-e2e-small "$SMALL" 2>"$TMP/mount.err"; then
    before=$("$PGOLAB" history --results="$DB" 2>&1)
    STANDIN_FILL=1 pgo full5 standin-mysql "${RUN[@]}" --workdir="$SMALL/wd" "${MEASURE[@]}"
    is "$RC" 1 "disk full: exit 1"
    like "$(errors_of "$TMP/full5.err" | head -1)" "build baseline: step build failed \(exit [0-9]+\): cmake --build " \
        "disk full: names the build, the step and its command"
    like "$(cat "$TMP/full5.err")" "the file system of $SMALL/wd/standin-mysql-gcc-[0-9a-f]+ is full \([0-9]+ KiB free\).*--resume" \
        "disk full: says the work directory's file system is full, and how to go on"
    R5=$(ls -d "$SMALL"/wd/standin-mysql-gcc-*/ 2>/dev/null | head -1)
    ok "disk full: no half variant left (no baseline prefix)" test -n "$R5" -a ! -e "${R5}baseline/prefix"
    ok "disk full: the baseline is not marked built" test ! -e "${R5}baseline/stamp"
    is "$("$PGOLAB" history --results="$DB" 2>&1)" "$before" "disk full: the results database is intact (same history)"
    umount "$SMALL" || umount -l "$SMALL"
else
    # not a skip: the check needs root (CI runs as root); say what failed
    ok "disk full: mount a 32 MiB tmpfs (needs root): $(cat "$TMP/mount.err")" false
fi

ok "no stand-in server of this test left running" test -z "$(pgrep -f -- "^$WD/")"
done_testing
