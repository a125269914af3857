#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# export_standin.t: `pgolab export` (src/pgo/export.c) of a built and measured variant of the PGO
# stand-in (tests/standin with the mariadb recipe: fast builds, Debian's mariadbd as its child).
# The package: named pgolab-TARGET-VARIANT, version SOURCE+pgolabEXPERIMENT, everything under
# /opt/pgolab/TARGET-VARIANT and /usr/share/doc/PACKAGE (nothing over the distribution's files),
# the binary byte for byte the one the experiment measured (its recorded sha256), a manifest
# with the target, variant, compiler, flags, trainer, profile digest (the build's stamp), the
# recorded profile health and the gain over baseline of the experiment, a README. Then it is
# installed with dpkg -i, started with `pgolab server start --prefix=...`, serves `pgolab bench`,
# is stopped, and `dpkg -r` leaves nothing under /opt/pgolab. Refusals, one line each: an
# unknown variant (the experiment's are listed), official, a package of the name installed (its
# version named), an existing output file, a build that changed since it was measured.
# Installing needs root (CI runs as root): as another user that part fails, it is not skipped.
. "$(dirname "$0")/lib.sh"

standin_setup # SRC, RECIPES; derive, pgo, errors_of: lib.sh
have dpkg-deb || bail_out "dpkg-deb not installed"
have dpkg-shlibdeps || bail_out "dpkg-shlibdeps not installed (make deps installs dpkg-dev)"
derive mariadb standin-export
PKG=pgolab-standin-export-pgo
OPT=/opt/pgolab/standin-export-pgo
cleanup() {
    [ -n "${D:-}" ] && "$PGOLAB" server stop --datadir="$D" >/dev/null 2>&1
    dpkg -s "$PKG" >/dev/null 2>&1 && dpkg -r "$PKG" >/dev/null 2>&1
    _e2e_cleanup
}
on_exit cleanup
WD=$TMP/wd
DB=$TMP/results.db
OUT=$TMP/out
mkdir -p "$OUT"

note "---- build and measure baseline, pgo, official"
pgo m standin-export --source="$SRC" --workdir="$WD" --train=oltp_point_select --train-time=2 \
    --table-size=1000 --variants=baseline,pgo,official --bench=oltp_point_select --threads=1 \
    --rounds=2 --time=1 --results="$DB"
is "$RC" 0 "pgo: exit 0" || diag "$(errors_of "$TMP/m.err" | tail -5)"
EXP=$(sq "$DB" "SELECT max(id) FROM experiments WHERE kind = 'pgo'")

ex() { # ex NAME ARGS...: pgolab export ARGS; $TMP/NAME.out, .err, $RC
    local name=$1
    shift
    timeout -k 5 300 "$PGOLAB" export "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}
note "---- refusals: one line each"
ex nosuch standin-export --results="$DB" --variant=nosuch --output="$OUT"
is "$RC" 1 "unknown variant: exit 1"
is "$(cat "$TMP/nosuch.err")" "FATAL: --variant=nosuch: experiment $EXP has no such variant (its variants: baseline, pgo, official)" \
    "unknown variant: one line listing the experiment's variants"
ex off standin-export --results="$DB" --variant=official --output="$OUT"
like "$RC $(cat "$TMP/off.err")" "^1 FATAL: --variant=official: the distribution's own binary, not a build" "official: refused"

note "---- export the pgo build"
ex e standin-export --results="$DB" --variant=pgo --output="$OUT"
is "$RC" 0 "export: exit 0" || diag "$(cat "$TMP/e.err")"
DEB=$(ls "$OUT"/*.deb 2>/dev/null)
like "$(basename "$DEB")" "^${PKG}_0\+pgolab${EXP}_[a-z0-9]+\.deb$" "the package: NAME_VERSION_ARCH.deb (the stand-in's source has no Debian version: 0)"
like "$(cat "$TMP/e.out")" "pgolab server start --db-driver=mysql --prefix=$OPT" "export: says how to start it"
is "$(dpkg-deb -f "$DEB" Package)" "$PKG" "control: Package"
like "$(dpkg-deb -f "$DEB" Depends)" "libc6" "control: Depends from dpkg-shlibdeps"
is "$(dpkg-deb -c "$DEB" | awk '{ print $6 }' | grep -vE "^\./(opt/(pgolab/(standin-export-pgo/.*)?)?|usr/(share/(doc/($PKG/.*)?)?)?)?$")" "" \
    "every file under $OPT or /usr/share/doc/$PKG"
mkdir -p "$TMP/x"
dpkg-deb -x "$DEB" "$TMP/x"
BIN=$(sq "$DB" "SELECT json_extract(fingerprint_json, '\$.loaded_from') FROM variants WHERE experiment_id = $EXP AND name = 'pgo'")
REL=${BIN#"$WD"/*/pgo/prefix/}
is "$(sha256sum <"$TMP/x$OPT/$REL" | cut -d' ' -f1)" "$(sq "$DB" "SELECT sha256 FROM variants WHERE experiment_id = $EXP AND name = 'pgo'")" \
    "the packaged $REL is the binary the experiment measured (its sha256)"
M=$TMP/x$OPT/pgolab-manifest.json
is "$(jq -r '[.target, .variant, .trainer, .measured.experiment] | join(" ")' "$M")" "standin-export pgo oltp_point_select $EXP" \
    "manifest: target, variant, trainer, experiment"
ROOT=$(dirname "$(dirname "$BIN")")
ROOT=${ROOT%/prefix}
is "$(jq -r .profile_digest "$M")" "$(sed -n 's/^profile: //p' "$ROOT/stamp")" "manifest: the profile digest of the build's stamp"
is "$(jq -r .cflags "$M")" "$(sq "$DB" "SELECT cflags FROM variants WHERE experiment_id = $EXP AND name = 'pgo'")" "manifest: the flags recorded"
like "$(jq -r .compiler "$M")" "gcc" "manifest: the compiler"
cmp_ok "$(jq -r .profile_health.counts "$M")" '>' 0 "manifest: the profile health recorded (counts)"
like "$(jq -c .measured.tps_over_baseline "$M")" '^\{"pct":-?[0-9.e+-]+,"ci95_pct":(null|\[[^]]*\]),"significant":(true|false)\}$' "manifest: the gain over baseline with its CI"
like "$(jq -c .measured.tps_over_official "$M")" '^\{"pct":' "manifest: the gain over official"
ok "README in /usr/share/doc/$PKG" grep -q "pgolab server start --db-driver=mysql --prefix=$OPT" "$TMP/x/usr/share/doc/$PKG/README"

ex again standin-export --results="$DB" --variant=pgo --output="$OUT"
like "$RC $(cat "$TMP/again.err")" "^1 FATAL: $(printf '%s' "$DEB" | sed 's/[]*^$()+?{}|.[\\]/\\&/g') exists: remove it or pass another --output directory; nothing was overwritten$" "an existing output file: refused"

note "---- install, start, bench, stop, remove"
dpkg -i "$DEB" >"$TMP/inst.out" 2>&1
is "$?" 0 "dpkg -i: exit 0 (needs root)" || diag "$(tail -3 "$TMP/inst.out")"
ok "installed under $OPT" test -x "$OPT/$REL"
ex inst standin-export --results="$DB" --variant=pgo --output="$TMP"
like "$RC $(cat "$TMP/inst.err")" "^1 FATAL: package $PKG 0\+pgolab$EXP is installed: remove it first \(apt remove $PKG\)" \
    "the same package installed: refused, naming its version"
srv_out=$TMP/start.out
"$PGOLAB" server start --db-driver=mysql --prefix="$OPT" >"$srv_out" 2>"$TMP/start.err"
is "$?" 0 "server start --prefix=$OPT: exit 0" || diag "$(tail -5 "$TMP/start.err")"
D=$(sed -n 's/^datadir: *//p' "$srv_out" | sed 's/ (.*//' | head -1)
PORT=$(sed -n 's/^port: *127\.0\.0\.1://p' "$srv_out" | head -1)
like "$(sed -n 's/^server: *//p' "$srv_out")" "^mariadbd .*\(pid [0-9]+\)" "the started server"
B=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" --table-size=100)
"$PGOLAB" bench oltp_point_select "${B[@]}" prepare >"$TMP/prep.out" 2>&1
is "$?" 0 "bench prepare on the exported build: exit 0" || diag "$(tail -3 "$TMP/prep.out")"
"$PGOLAB" bench oltp_point_select "${B[@]}" --time=1 run >"$TMP/run.out" 2>&1
like "$(cat "$TMP/run.out")" "transactions: +[1-9][0-9]* " "bench run on the exported build: transactions"
"$PGOLAB" server stop --datadir="$D" >/dev/null 2>&1
is "$?" 0 "server stop: exit 0"
D=
dpkg -r "$PKG" >"$TMP/rm.out" 2>&1
is "$?" 0 "dpkg -r: exit 0"
ok "removed: nothing left in $OPT" test ! -e "$OPT"

note "---- a build that changed since the experiment measured it"
printf 'x' >>"$BIN"
ex changed standin-export --results="$DB" --variant=pgo --output="$TMP"
like "$RC $(cat "$TMP/changed.err")" "^1 FATAL: variant pgo: $BIN changed since experiment $EXP measured it" "a changed binary: refused"
done_testing
