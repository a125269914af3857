#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_config.t: every build is configured as its baseline (src/pgo/config_check.c), on the
# stand-in (tests/standin) with the real recipes/mariadb.json. The stand-in's configure runs a
# check with -Werror, as MariaDB's HAVE_VFORK check does, and writes include/my_config.h.
# In a pgo build GCC warns that the check program has no profile (-Wmissing-profile); pgolab's
# pgo flags keep that a warning (-Wno-error=missing-profile), so the pgo build's configure
# decides as the baseline's did, and pgolab keeps each build's header and compares them. A
# check that fails under the pgo build's flags whatever pgolab does (the test adds
# -Werror=missing-profile to the check alone) makes the pgo build another program than the
# one measured against: refused in one line that names the header, the macro, both builds and
# where the configure log is; nothing of the refused build is installed. Clang's pgo flags keep
# its "profile data may be out of date" warning (every check program's main()) a warning too,
# and pgolab's log check lets it through for a second copy of a source (a tool's) outside the
# recipe's hot objects, counted, and refuses it in a hot object. Bad input: a
# config_headers path that is absolute, and one the build does not make.
. "$(dirname "$0")/lib.sh"

standin_setup # SRC, RECIPES; derive, pgo: lib.sh
derive mariadb standin-config
WD=$TMP/wd
RUN=(--source="$SRC" --workdir="$WD" --train=oltp_point_select --train-time=2 --table-size=1000 --measure=off)

note "---- the pgo build's configure decides as the baseline's"
pgo ok standin-config "${RUN[@]}"
is "$RC" 0 "pgo build: exit 0" || diag "$(tail -20 "$TMP/ok.err")"
ROOT=$(ls -d "$WD"/standin-config-gcc-*/ 2>/dev/null | head -1)
ROOT=${ROOT%/}
for b in baseline instrumented pgo; do
    like "$(cat "$ROOT/$b/config/include#my_config.h" 2>/dev/null)" "#define STANDIN_HAVE_WERROR_CHECK 1" \
        "$b: its configure's my_config.h is kept, and the -Werror check passed"
done
like "$(grep -m1 -- '-fprofile-use' "$ROOT/pgo/build.log")" "-Wmissing-profile -Wno-error=missing-profile" \
    "the pgo flags keep GCC's missing-profile warning a warning"
pgo again standin-config "${RUN[@]}"
is "$RC" 0 "cached builds: exit 0 (their kept headers agree)"
like "$(grep '^  pgo ' "$TMP/again.out")" "\(cached\)" "cached builds: the pgo build is cached"

note "---- clang: its profile is keyed by function name, so a check program's main() is 'out of date'"
pgo clang standin-config "${RUN[@]}" --variants=baseline,clang:pgo+lto
is "$RC" 0 "clang:pgo+lto: exit 0" || diag "$(tail -5 "$TMP/clang.err")"
CROOT=$(ls -d "$WD"/standin-config-clang-*/ 2>/dev/null | head -1)
CROOT=${CROOT%/}
like "$(cat "$CROOT/pgo+lto/config/include#my_config.h" 2>/dev/null)" "#define STANDIN_HAVE_WERROR_CHECK 1" \
    "clang:pgo+lto: the -Werror check passed as in clang's instrumented build"
like "$(grep -m1 -- '-fprofile-instr-use' "$CROOT/pgo+lto/build.log")" "-Wno-error=profile-instr-out-of-date" \
    "clang:pgo+lto: the out-of-date warning stays a warning (the build's log is checked for it)"

note "---- clang: a source built twice, its second copy never trained (PostgreSQL's frontend copies)"
# standin.c again, as a tool: its main() is another function under the trained main()'s name
cat >>"$SRC/CMakeLists.txt" <<'EOF'
add_executable(standin-tool standin.c "${CMAKE_BINARY_DIR}/build_info.c" ${BISON_statement_OUTPUTS})
target_include_directories(standin-tool PRIVATE "${CMAKE_BINARY_DIR}")
target_compile_definitions(standin-tool PRIVATE STANDIN_TOOL=1)
EOF
derive mariadb standin-tool '.pgo.hot_functions = ["statement:standin_parse"]'
pgo tool standin-tool "${RUN[@]}" --variants=baseline,clang:pgo+lto
is "$RC" 0 "a second copy outside the hot objects: exit 0" || diag "$(tail -5 "$TMP/tool.err")"
TROOT=$(ls -d "$WD"/standin-tool-clang-*/ 2>/dev/null | head -1)
TROOT=${TROOT%/}
is "$(grep -A3 'Building C object CMakeFiles/standin-tool.dir/standin.c.o' "$TROOT/pgo+lto/build.log" | grep -c 'profile data may be out of date: of [0-9]* functions, 1 has mismatched')" 1 \
    "the log: clang's out-of-date warning right after the tool's compile (make --output-sync)"
like "$(cat "$TMP/tool.out")" "  1 objects compiled 1 functions without their profile data \(same names built twice, the trained copy differs; no hot object among them\)" \
    "the summary counts the object and the function"
# the same copy of the object that holds standin:main (lib.sh's hot function) is refused
pgo hot standin-config "${RUN[@]}" --variants=baseline,clang:pgo+lto
is "$RC" 1 "a second copy of a hot object: exit 1"
like "$(errors_of "$TMP/hot.err" | grep -m1 "^FATAL")" "^FATAL: build clang:pgo\+lto did not use the profile data \('profile data may be out of date' in CMakeFiles/standin-tool\.dir/standin\.c\.o \(1 of [0-9]+ functions\), an object of the recipe's hot functions \(standin\): its profile may be stale in .*/pgo\+lto/build\.log\)" \
    "... naming the object, the counts and the hot function's object"

note "---- a check that fails only under the pgo flags: the build is refused"
sed -i 's/^set(STANDIN_CHECK_FLAGS "" /set(STANDIN_CHECK_FLAGS "-Werror=missing-profile" /' "$SRC/CMakeLists.txt"
grep -q 'STANDIN_CHECK_FLAGS "-Werror=missing-profile"' "$SRC/CMakeLists.txt" || bail_out "the stand-in's check did not take the flag"
pgo differs standin-config "${RUN[@]}"
is "$RC" 1 "configured otherwise: exit 1"
errs=$(errors_of "$TMP/differs.err")
is "$(printf '%s\n' "$errs" | grep -c .)" 1 "configured otherwise: one line" || diag "$errs"
like "$errs" "^FATAL: build pgo is configured differently from baseline: include/my_config.h: STANDIN_HAVE_WERROR_CHECK defined in baseline \(1\), not in pgo \(1 macro differs\); a configure check decided otherwise under pgo's compiler flags, .*its configure log in $ROOT/instrumented/build says which check and why" \
    "configured otherwise: names the header, the macro, both builds and the log's directory"
ok "configured otherwise: nothing of the pgo build is installed" test ! -e "$ROOT/pgo/prefix"
like "$(cat "$ROOT/pgo/config/include#my_config.h" 2>/dev/null)" "/\* #undef STANDIN_HAVE_WERROR_CHECK \*/" \
    "configured otherwise: the pgo build's header is kept to look at"

note "---- bad input: config_headers"
derive mariadb standin-abs '.config_headers = ["/etc/my_config.h"]'
pgo abs standin-abs "${RUN[@]}"
is "$RC" 1 "absolute config header: exit 1"
like "$(errors_of "$TMP/abs.err")" "^FATAL: .*standin-abs.json:[0-9]+: config_headers: '/etc/my_config.h': expected a path relative to the build directory" \
    "absolute config header: one line naming the recipe file and what is expected"
derive mariadb standin-none '.config_headers = ["include/none.h"]'
pgo none standin-none "${RUN[@]}"
is "$RC" 1 "a header the build does not make: exit 1"
like "$(errors_of "$TMP/none.err")" "^FATAL: build baseline made no include/none.h \(the recipe's config_headers name it, relative to the build directory .*/baseline/build\)$" \
    "a header the build does not make: one line naming it"

done_testing
