#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_corrections.t: what GCC's -fprofile-correction corrected is counted, not hidden, through
# the whole pipeline (the stand-in, tests/standin, with the real recipes/mariadb.json and a
# managed MariaDB server). The stand-in has no threads racing on its counters, so its profile is
# consistent (0 objects: pgo_recipes.t); here the compiler is a wrapper around gcc that, in the
# pgo build (-fprofile-use with -fprofile-correction and -fopt-info-note-ipa), also prints the
# note GCC 12 prints for an object whose profile it corrected, exactly as GCC words it (GCC's own
# behaviour on a real racy profile is tests/unit/test_correction.c). The pgo build warns on
# stderr naming the source, the summary counts the object, and the results record
# settings.pgo.profile_corrections.pgo = {objects: 1, sources: [...]}.
. "$(dirname "$0")/lib.sh"

standin_setup # SRC, RECIPES; derive, pgo: lib.sh
derive mariadb standin-corr
WD=$TMP/wd
DB=$TMP/results.db
mkdir -p "$TMP/bin"
# gcc-notes / g++-notes: gcc / g++, plus GCC's correction note for each pgo compile of a source
for pair in gcc-notes:gcc g++-notes:g++; do
    cat >"$TMP/bin/${pair%%:*}" <<WRAP
#!/usr/bin/env bash
use= corr= info= src=
for a in "\$@"; do
    case "\$a" in
    -fprofile-use=*) use=1 ;;
    -fprofile-correction) corr=1 ;;
    -fopt-info-note-ipa) info=1 ;;
    *.c | *.cc) src=\$a ;;
    esac
done
${pair#*:} "\$@" || exit
[ -n "\$use" ] && [ -n "\$corr" ] && [ -n "\$info" ] && [ -n "\$src" ] &&
    echo "\$src:1:0: note: correcting inconsistent profile data" >&2
exit 0
WRAP
    chmod +x "$TMP/bin/${pair%%:*}"
done

pgo corr standin-corr --source="$SRC" --workdir="$WD" --cc="$TMP/bin/gcc-notes" \
    --train=oltp_point_select --train-time=2 --table-size=1000 \
    --bench=oltp_point_select --threads=1 --rounds=1 --time=1 --results="$DB"
is "$RC" 0 "exit 0: a corrected profile is used, and said so"
[ "$RC" = 0 ] || diag "$(tail -20 "$TMP/corr.err")"
ROOT=$(ls -d "$WD"/standin-corr-*/ 2>/dev/null | head -1)
ROOT=${ROOT%/}
notes=$(count "$ROOT/pgo/build.log" 'note: correcting inconsistent profile data')
cmp_ok "$notes" '>=' 1 "the pgo build's log has GCC's correction note ($notes)"
like "$(cat "$TMP/corr.err")" "^WARNING: build pgo: GCC corrected inconsistent profile counts in $notes objects?: .*standin\.c" \
    "the pgo build warns on stderr, naming the source"
like "$(cat "$TMP/corr.out")" "^ +GCC corrected inconsistent profile counts in $notes objects?: .*standin\.c" \
    "the summary counts the objects GCC corrected"
unlike "$(cat "$TMP/corr.out")" "GCC corrected no profile counts" "the summary does not say none"
is "$(sq "$DB" "SELECT json_extract(settings_json, '\$.pgo.profile_corrections.pgo.objects') FROM experiments ORDER BY id DESC LIMIT 1")" "$notes" \
    "results: settings.pgo.profile_corrections.pgo.objects"
like "$(sq "$DB" "SELECT json_extract(settings_json, '\$.pgo.profile_corrections.pgo.sources') FROM experiments ORDER BY id DESC LIMIT 1")" "standin\.c\"" \
    "results: settings.pgo.profile_corrections.pgo.sources names the sources (standin.c among them)"

note "---- the cached pgo build: the count read again from its log"
pgo again standin-corr --source="$SRC" --workdir="$WD" --cc="$TMP/bin/gcc-notes" \
    --train=oltp_point_select --train-time=2 --table-size=1000 --measure=off
is "$RC" 0 "second run: exit 0"
like "$(cat "$TMP/again.out")" "^  pgo +.*\(cached\)$" "second run: the pgo build is cached"
like "$(cat "$TMP/again.out")" "^ +GCC corrected inconsistent profile counts in $notes objects?: " \
    "second run: the cached build's count, from its log"

done_testing
