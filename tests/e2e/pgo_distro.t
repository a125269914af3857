#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_distro.t: the `distro` variant of `pgolab pgo` on the stand-in (the mysql recipe, whose
# phases share one build directory, for tests/standin), given a small debian/ of its own: the
# variant is built with the configure options its debian/rules passes and the flags
# dpkg-buildflags gives with the rules' settings, read by dry runs that leave the tree as it
# was; Debian's install directories and the recipe's distro.drop are left out, each named in
# the summary; the stand-in's own record of what it was compiled with (build-info.txt) is
# compared with what dpkg-buildflags says when this test asks it; the provenance ("built like
# Debian's standin 9.7.2-1 ...; not the distribution's binary") is in the summary, the report
# header, --output JSON, the results database and the HTML page. Two rules files: one through
# dh_auto_configure (debhelper's cmake build system, which adds CPPFLAGS to CFLAGS), one the
# way MySQL's runs cmake itself inside `sh -c` after dpkg's buildflags.mk. A missing Debian
# package of an option (distro.requires) is refused before any build; a recipe without a
# "distro" key and a tree without debian/rules are refused in one line.
. "$(dirname "$0")/lib.sh"

standin_setup # SRC, RECIPES; derive, pgo, errors_of, info, option_of: lib.sh
have dpkg-buildflags && have dh_auto_configure ||
    bail_out "dpkg-dev and debhelper not installed (make deps installs them)"
DISTRO='{"run": ["cmake", "{source}"], "paths": ["-DCMAKE_INSTALL_PREFIX={prefix}"],
  "drop": [{"option": "-DSTANDIN_DROPPED", "reason": "a test of distro.drop"}],
  "requires": [{"option": "-DSTANDIN_NEEDS", "package": "pgolab-test-no-such-package"}]}'
derive mysql standin-distro ".distro = $DISTRO | del(.requires)"
WD=$TMP/wd
DB=$TMP/results.db
RUN=(--source="$SRC" --workdir="$WD" --table-size=1000 --bench=oltp_point_select --threads=1
     --rounds=2 --time=1 --results="$DB")

# (a version of the mysql recipe's major, 9.7: a tree of another is refused before any build)
mkdir -p "$SRC/debian"
cat >"$SRC/debian/changelog" <<'EOF'
standin (9.7.2-1) unstable; urgency=medium

  * The stand-in, packaged for pgo_distro.t.

 -- pgolab tests <tests@pgolab.invalid>  Mon, 01 Jan 2024 00:00:00 +0000
EOF
printf '%s\n' 'Source: standin' 'Build-Depends: debhelper-compat (= 13), cmake, bison' '' \
    'Package: standin' 'Architecture: any' 'Description: the pgolab stand-in server' >"$SRC/debian/control"
# dh's way: debian/rules passes options to dh_auto_configure, which adds its own
printf '%s\n' '#!/usr/bin/make -f' \
    'export DEB_BUILD_MAINT_OPTIONS = hardening=+all' \
    'export DEB_CFLAGS_MAINT_APPEND = -DSTANDIN_DISTRO_MARK=1' \
    '%:' '	dh $@' \
    'override_dh_auto_configure:' \
    '	dh_auto_configure -- -DSTANDIN_CHECK_FLAGS="-DFROM_RULES=1" -DSTANDIN_DROPPED=1 -DSTANDIN_NEEDS=1' \
    >"$SRC/debian/rules"
chmod +x "$SRC/debian/rules"

note "---- refusals before any build"
derive mysql standin-nokey 'del(.requires) | del(.distro)'
pgo nokey standin-nokey "${RUN[@]}" --variants=distro
is "$RC" 1 "a recipe without a distro key: exit 1"
is "$(errors_of "$TMP/nokey.err")" "FATAL: --variants: distro: $RECIPES/standin-nokey.json has no \"distro\" key (how Debian's configure replaces the recipe's, docs/recipes.md)" \
    "a recipe without a distro key: one line naming the recipe"
pgo clang standin-distro "${RUN[@]}" --variants=distro --cc=clang
is "$RC" 1 "distro with --cc=clang: exit 1"
like "$(errors_of "$TMP/clang.err")" "^FATAL: --variants: distro is built as Debian builds it, with GCC, and --cc=clang is" \
    "distro with --cc=clang: one line"
pgo search standin-distro "${RUN[@]}" --variants=pgo,distro --search
is "$RC" 1 "distro with --search: exit 1"
is "$(errors_of "$TMP/search.err")" "FATAL: --search: distro is a reference, not a candidate: measure it without --search (e.g. --variants=pgo,distro)" \
    "distro with --search: one line"
pgo needs standin-distro "${RUN[@]}" --variants=distro
is "$RC" 1 "an option's package not installed: exit 1"
is "$(errors_of "$TMP/needs.err")" "FATAL: the distro variant builds standin-distro with Debian's options, and these need Debian packages not installed: -DSTANDIN_NEEDS=1 (pgolab-test-no-such-package): apt-get install pgolab-test-no-such-package (or leave distro out of --variants)" \
    "an option's package not installed: one line naming the option, the package and the command"
ok "an option's package not installed: nothing built" test ! -e "$(find "$WD" -maxdepth 2 -name baseline 2>/dev/null | head -1)/stamp"
mv "$SRC/debian" "$TMP/debian.aside"
pgo norules standin-distro "${RUN[@]}" --variants=distro
mv "$TMP/debian.aside" "$SRC/debian"
is "$RC" 1 "a tree without debian/rules: exit 1"
like "$(errors_of "$TMP/norules.err")" "^FATAL: the distro variant is built as Debian builds the package, from its debian/rules, and $SRC has none" \
    "a tree without debian/rules: one line naming the tree"

note "---- dh_auto_configure's way: baseline and distro"
derive mysql standin-distro ".distro = ($DISTRO | del(.requires)) | del(.requires)"
before=$(cd "$SRC" && find . -newer debian/rules | sort | md5sum)
pgo dh standin-distro "${RUN[@]}" --variants=distro --output="$TMP/dh.json"
is "$RC" 0 "distro: exit 0" || diag "$(errors_of "$TMP/dh.err" | tail -5)"
is "$(cd "$SRC" && find . -newer debian/rules | sort | md5sum)" "$before" \
    "the dry runs left the tree as it was (no build directory, no stamp)"
ROOT=$(find "$WD" -mindepth 1 -maxdepth 1 -type d -name 'standin-distro-*')
LOG=$ROOT/distro/build.log
ok "distro: built in a build directory of its own (the recipe shares one between its phases)" \
    grep -q "^\$ cd $ROOT/distro/build " "$LOG"
is "$(option_of "$LOG" STANDIN_CHECK_FLAGS)" "-DFROM_RULES=1" \
    "configure: the option debian/rules passes"
is "$(option_of "$LOG" CMAKE_BUILD_TYPE)" "None" \
    "configure: an option dh_auto_configure adds (its cmake build system's build type)"
is "$(option_of "$LOG" CMAKE_INSTALL_PREFIX)" "$ROOT/distro/prefix" \
    "configure: the variant's own prefix, not Debian's /usr"
CONF=$(grep -m1 '^\$ cd ' "$LOG")
unlike "$CONF" "=/usr" "configure: none of Debian's install directories"
unlike "$CONF" "-DSTANDIN_DROPPED" "configure: the dropped option is not there"
# what dpkg-buildflags says with the rules' settings, asked here (in the tree, as its
# -ffile-prefix-map names it); debhelper's cmake build system adds CPPFLAGS to CFLAGS
want_c=$(cd "$SRC" && DEB_BUILD_MAINT_OPTIONS=hardening=+all DEB_CFLAGS_MAINT_APPEND=-DSTANDIN_DISTRO_MARK=1 dpkg-buildflags --get CFLAGS)
want_cpp=$(cd "$SRC" && DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CPPFLAGS)
want_ld=$(cd "$SRC" && DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get LDFLAGS)
like "$want_c" "-fstack-protector-strong .*-DSTANDIN_DISTRO_MARK=1" \
    "dpkg-buildflags here: hardening and the rules' MAINT_APPEND"
is "$(info "$ROOT/distro" c_flags | xargs)" "$(echo "$want_c $want_cpp" | xargs)" \
    "distro: compiled with dpkg-buildflags' CFLAGS and CPPFLAGS, and nothing else (build-info.txt)"
like "$(info "$ROOT/distro" link_flags)" "$(printf '%s' "$want_ld" | sed 's/[.]/\\./g')" \
    "distro: linked with dpkg-buildflags' LDFLAGS"
ok "baseline: not compiled with Debian's flags" fails grep -q -e '-DSTANDIN_DISTRO_MARK' \
    "$ROOT/baseline/prefix/share/standin/build-info.txt"
out=$(cat "$TMP/dh.out")
like "$out" "  distro +$ROOT/distro/prefix/bin/mysqld  sha256 [0-9a-f]{16}  \(" "summary: the distro build"
like "$out" "flags from dpkg-buildflags, DEB_BUILD_MAINT_OPTIONS=hardening=\+all: CFLAGS=.*-DSTANDIN_DISTRO_MARK=1" \
    "summary: the flags and where they came from"
like "$out" "options from debian/rules override_dh_auto_configure, dh_auto_configure --no-act: .*-DSTANDIN_CHECK_FLAGS=-DFROM_RULES=1" \
    "summary: the options and how they were read"
like "$out" "dropped -DCMAKE_INSTALL_PREFIX=/usr \(an install directory of the package: the variant installs under its own prefix\)" \
    "summary: Debian's prefix dropped, with the reason"
like "$out" "dropped -DSTANDIN_DROPPED=1 \(a test of distro.drop\)" "summary: the recipe's drop, with its reason"
PROV="built like Debian's standin 9\.7\.2-1 \(options from debian/rules, flags from dpkg-buildflags\); not the distribution's binary"
like "$out" "variant +distro +[^ ]+ \(.*$PROV; compiler gcc" "report header: distro's provenance"
like "$(grep -m1 '^| threads |' "$TMP/dh.out")" "\| baseline .*\| +distro .*\|" "report: distro is a column"
like "$(jq -r '.variants[] | select(.name == "distro") | .provenance' "$TMP/dh.json")" "^$PROV; compiler gcc .*; CFLAGS=.*-DSTANDIN_DISTRO_MARK=1" \
    "--output JSON: distro's provenance, with its flags"
like "$(sq "$DB" "SELECT json_extract(fingerprint_json, '\$.provenance') FROM variants WHERE name = 'distro'")" "^$PROV" \
    "results database: distro's provenance"
"$PGOLAB" report --results="$DB" --format=html --output="$TMP/dh.html" 2>"$TMP/html.err"
like "$(grep -c "built like Debian&#39;s standin 9.7.2-1\|built like Debian's standin 9.7.2-1" "$TMP/dh.html")" "^[1-9]" \
    "HTML report: distro's provenance"

note "---- the same command again: cached"
pgo again standin-distro "${RUN[@]}" --variants=distro
is "$RC" 0 "again: exit 0"
like "$(cat "$TMP/again.out")" "  distro +[^ ]+  sha256 [0-9a-f]{16}  \(cached\)" "again: the distro build is cached"

note "---- MySQL's way: cmake inside sh -c, flags from dpkg's buildflags.mk plus the rules' own"
printf '%s\n' '#!/usr/bin/make -f' \
    'export DEB_BUILD_MAINT_OPTIONS = hardening=+all' \
    'DPKG_EXPORT_BUILDFLAGS = 1' \
    'include /usr/share/dpkg/buildflags.mk' \
    'CFLAGS += -DSTANDIN_RULES_ADD' \
    'BUILDDIR := builddir' \
    'override_dh_auto_configure: configure-stamp' \
    'configure-stamp:' \
    '	dh_testdir' \
    '	( test -d $(BUILDDIR) || mkdir $(BUILDDIR) ) && cd $(BUILDDIR) && \' \
    "	sh -c 'PATH=\$\${MYSQL_BUILD_PATH:-\"/bin:/usr/bin\"} CC=\$\${MYSQL_BUILD_CC:-gcc} \\" \
    '		cmake -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_BUILD_TYPE=RelWithDebInfo \' \
    '		-DSTANDIN_CHECK_FLAGS="-DFROM_SH=1" \' \
    "		-DSTANDIN_EXTRA_DIR=../share ..'" \
    '	touch $@' \
    '%:' '	dh $@' >"$SRC/debian/rules"
pgo sh standin-distro "${RUN[@]}" --variants=distro
is "$RC" 0 "sh -c: exit 0" || diag "$(errors_of "$TMP/sh.err" | tail -5)"
ok "sh -c: the tree has no builddir or configure-stamp" test ! -e "$SRC/builddir" -a ! -e "$SRC/configure-stamp"
like "$(cat "$TMP/sh.out")" "  distro +[^ ]+  sha256 [0-9a-f]{16}  \([0-9.]+ s; built: Debian's configure or the recipe's steps changed since the cached build \(debian/rules' options, dpkg-buildflags' flags\)" \
    "sh -c: rebuilt, saying why (Debian's command changed)"
is "$(option_of "$LOG" STANDIN_CHECK_FLAGS)" "-DFROM_SH=1" "sh -c: the option inside the quoted command"
is "$(option_of "$LOG" STANDIN_EXTRA_DIR)" "$SRC/builddir/../share" \
    "sh -c: a relative path taken from Debian's build directory"
want_c=$(cd "$SRC" && DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CFLAGS)
# cmake's own RelWithDebInfo flags come after CMAKE_C_FLAGS (the build type MySQL's rules name)
is "$(info "$ROOT/distro" c_flags | xargs)" "$(echo "$want_c -DSTANDIN_RULES_ADD -O2 -g -DNDEBUG" | xargs)" \
    "sh -c: compiled with the rules' CFLAGS (buildflags.mk's plus its own), no CPPFLAGS (cmake reads none)"
like "$(cat "$TMP/sh.out")" "flags from debian/rules \(dpkg's buildflags.mk: dpkg-buildflags\)" \
    "sh -c: the flags came from the rules' make variables"
like "$(cat "$TMP/sh.out")" "dropped CC=\\$\{MYSQL_BUILD_CC:-gcc\} \(the compiler is pgolab's --cc, GCC as Debian's\)" \
    "sh -c: the rules' compiler assignment dropped, with the reason"
like "$(cat "$TMP/sh.out")" "dropped PATH=.* \(the build runs with pgolab's PATH\)" "sh -c: PATH dropped, with the reason"

done_testing
