#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# (here: pgolab itself, as a Debian package, about 1-2 minutes)
# deb_package.t: `make deb` (scripts/make-deb.sh) builds pgolab_VERSION_ARCH.deb with
# dpkg-buildpackage, lintian finds no error in it, and the package installs (dpkg -i, as root:
# CI runs as root; as another user that check fails, it is not skipped): /usr/bin/pgolab runs
# `pgolab bench` on SQLite and `pgolab pgo sqlite` (builds, training, gate), finds its recipes
# in /usr/share/pgolab/recipes, has its man page
# and bash completion in their Debian places; Depends holds what bench on SQLite and pgo sqlite
# need, the dlopen'ed client libraries are Recommends; `dpkg -r` removes it all. The build
# happens in a copy of the repository under $TMP (the work tree's build/ is not touched).
. "$(dirname "$0")/lib.sh"

have dpkg-buildpackage || bail_out "dpkg-buildpackage not installed (make deps installs dpkg-dev)"
have dh || bail_out "debhelper not installed (make deps installs it)"
have lintian || bail_out "lintian not installed (make deps installs it)"
have git || bail_out "git not installed"
dpkg -s pgolab >/dev/null 2>&1 && bail_out "a pgolab package is installed already: remove it first (dpkg -r pgolab)"
on_exit 'dpkg -s pgolab >/dev/null 2>&1 && dpkg -r pgolab >/dev/null 2>&1; _e2e_cleanup'
# a copy of the work tree as git sees it (make deb packages the files git knows)
git -C "$REPO_DIR" ls-files -z -c -o --exclude-standard | (cd "$REPO_DIR" && xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
    (cd "$REPO_DIR" && tar --null -T - -cf -) | (mkdir -p "$TMP/repo" && tar -xf - -C "$TMP/repo")
git -C "$TMP/repo" init -q && git -C "$TMP/repo" add -A >/dev/null
VERSION=$(sed -n 's/^#define PGOLAB_VERSION "\(.*\)"$/\1/p' "$REPO_DIR/src/version.h")
DEB=pgolab_${VERSION}_$(dpkg --print-architecture).deb

make -C "$TMP/repo" deb >"$TMP/deb.out" 2>&1
is "$?" 0 "make deb: exit 0" || diag "$(tail -20 "$TMP/deb.out")"
ok "make deb: $DEB built" test -s "$TMP/repo/$DEB"
is "$(grep -c '^E:' "$TMP/repo/build/deb/lintian.log")" 0 "lintian: no errors"
DEPENDS=$(dpkg-deb -f "$TMP/repo/$DEB" Depends)
for p in libjansson4 libgsl27 libdw1 libsqlite3-0 make tcl dpkg-dev libc6-dev; do
    like "$DEPENDS" "(^|, )$p( |,|$)" "Depends: $p (bench on SQLite, pgo sqlite)"
done
like "$DEPENDS" "(^|, )gcc \| c-compiler" "Depends: a C compiler (pgo sqlite)"
RECOMMENDS=$(dpkg-deb -f "$TMP/repo/$DEB" Recommends)
for p in libpq5 libmariadb3 valgrind libjs-chart.js; do
    like "$RECOMMENDS" "(^|, )$p(,|$)" "Recommends: $p (loaded or run by some commands)"
done

dpkg -i "$TMP/repo/$DEB" >"$TMP/inst.out" 2>&1
is "$?" 0 "dpkg -i: exit 0" || diag "$(tail -5 "$TMP/inst.out")"
is "$(/usr/bin/pgolab --version)" "pgolab $VERSION" "/usr/bin/pgolab --version"
mkdir -p "$TMP/b" && cd "$TMP/b" || bail_out "no $TMP/b"
/usr/bin/pgolab bench oltp_point_select --table-size=100 prepare >"$TMP/prep.out" 2>&1
is "$?" 0 "installed: bench prepare on SQLite"
like "$(/usr/bin/pgolab bench oltp_point_select --table-size=100 --time=1 run 2>&1)" "transactions: +[1-9]" "installed: bench run on SQLite"
like "$(/usr/bin/pgolab pgo nosuch 2>&1)" "known: mariadb, mysql, postgresql, sqlite" "installed: the recipes in /usr/share/pgolab/recipes"
# pgo sqlite from the package: Debian's SQLite source through pgolab's own apt configuration (no
# deb-src in the system's sources needed), the three builds, training and the gate
/usr/bin/pgolab pgo sqlite --measure=off --train-time=2 >"$TMP/pgo.out" 2>"$TMP/pgo.err"
is "$?" 0 "installed: pgo sqlite builds, trains and gates (--measure=off)" || diag "$(tail -5 "$TMP/pgo.err")"
like "$(<"$TMP/pgo.out")" "^pgolab pgo sqlite: SQLite 3\.[0-9.]+, " "installed: pgo sqlite's summary names the SQLite version"
like "$(<"$TMP/pgo.err")" "correctness gate: baseline and pgo return the same results" "installed: pgo sqlite's gate passed"
ok "the man page" test -s /usr/share/man/man1/pgolab.1.gz
ok "the bash completion" test -s /usr/share/bash-completion/completions/pgolab
ok "the documentation" test -s /usr/share/doc/pgolab/packaging.md -o -s /usr/share/doc/pgolab/packaging.md.gz
dpkg -r pgolab >"$TMP/rm.out" 2>&1
is "$?" 0 "dpkg -r: exit 0"
ok "removed: no /usr/bin/pgolab, no recipes" test ! -e /usr/bin/pgolab -a ! -e /usr/share/pgolab
done_testing
