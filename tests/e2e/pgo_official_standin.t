#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_official_standin.t: the `official` variant of `pgolab pgo` on the stand-in (the mariadb
# recipe, whose server.official is Debian's /usr/sbin/mariadbd, for tests/standin, which runs
# that same mariadbd as its child, so its --version is MariaDB 10.11's): official is measured,
# gated and reported like the builds but never built (no directory of its own, the summary
# says so), its binary's sha256 is the one recorded, and a per-variant server option
# (--variant-server-option=official:...) reaches the report and the results database. An
# official binary of another major version (a fake "MariaDB 11.4" given with --official; the
# stand-in tree has no Debian version, so the baseline build's --version is the source's) is
# refused in one line naming both versions after the baseline build and before any other;
# an unknown variant in --variant-server-option is refused before anything.
. "$(dirname "$0")/lib.sh"

standin_setup # SRC, RECIPES; derive, pgo, errors_of: lib.sh
derive mariadb standin-mariadb
MARIADBD=/usr/sbin/mariadbd
is "$(jq -r '.server.official.binary' "$RECIPES/standin-mariadb.json")" "$MARIADBD" \
    "the mariadb recipe's official binary is Debian's mariadbd"
OFFPKG=$(dpkg-query -S "$MARIADBD" | sed -n 's/: .*//p' | head -1)
OFFVER=$(dpkg-query -W -f='${Version}' "$OFFPKG")
# re TEXT: TEXT as an extended regex matching itself
re() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'; }
WD=$TMP/wd
DB=$TMP/results.db
RUN=(--source="$SRC" --workdir="$WD" --train=oltp_point_select --train-time=2 --table-size=1000
     --bench=oltp_point_select --threads=1 --rounds=2 --time=1 --results="$DB")

note "---- an unknown variant in --variant-server-option: refused before any build"
pgo vbad standin-mariadb "${RUN[@]}" --variants=baseline,pgo,official \
    --variant-server-option=offical:innodb_buffer_pool_size=64M
is "$RC" 1 "unknown variant: exit 1"
is "$(errors_of "$TMP/vbad.err")" "FATAL: --variant-server-option=offical:innodb_buffer_pool_size=64M: no variant named 'offical' (the variants: baseline, pgo, official)" \
    "unknown variant: one line naming the variants"
ok "unknown variant: refused before anything (no work directory)" test ! -e "$WD"

note "---- baseline, pgo, official"
pgo off standin-mariadb "${RUN[@]}" --variants=baseline,pgo,official \
    --variant-server-option=official:innodb_buffer_pool_size=64M --output="$TMP/off.json"
is "$RC" 0 "official: exit 0" || diag "$(errors_of "$TMP/off.err" | tail -5)"
sha=$(sha256sum "$MARIADBD" | cut -c1-64)
like "$(cat "$TMP/off.out")" "  official +$MARIADBD  sha256 ${sha:0:16}  \(MariaDB 10\.11\.[0-9]+, the distribution's binary: not built\)" \
    "summary: the official binary, its hash and version, not built"
like "$(cat "$TMP/off.out")" "gate +checksum: oltp_read_only verify, [0-9a-f]+ over [0-9]+ rows, identical for baseline, pgo, official" \
    "summary: the checksum gate ran on official too"
like "$(cat "$TMP/off.out")" "variant +official +$MARIADBD \(MariaDB 10\.11\.[0-9]+, sha256 ${sha:0:12}; server options innodb_buffer_pool_size=64M; from Debian package $OFFPKG $(re "$OFFVER") \(dpkg\); its configure options are not known" \
    "report: official's variant line, with its own server option, no compiler, its package and version"
note "---- provenance: the summary, the report header, --output JSON, the results database"
like "$(cat "$TMP/off.out")" "^  built from +a tree of no Debian version \($SRC\); configure -DCMAKE_BUILD_TYPE=RelWithDebInfo .*-DWITH_SSL=system" \
    "summary: where the built variants come from (no Debian version: the stand-in) and the recipe's configure options"
like "$(cat "$TMP/off.out")" "^  official +Debian package $OFFPKG $(re "$OFFVER") \(dpkg\); its configure options are not known" \
    "summary: official's package and exact version (dpkg), its configure options not known (mariadbd does not say them)"
like "$(cat "$TMP/off.out")" "baseline +baseline +[^ ]+ \(.*; from a tree of no Debian version \($SRC\); configure -DCMAKE_BUILD_TYPE=RelWithDebInfo" \
    "report header: the baseline's provenance"
like "$(cat "$TMP/off.out")" "variant +pgo +[^ ]+ \(.*; from the same source and configure options as the baseline\)" \
    "report header: pgo's, said once"
like "$(jq -r '.variants[] | select(.name == "official") | .provenance' "$TMP/off.json")" "^Debian package $OFFPKG $(re "$OFFVER") \(dpkg\)" \
    "--output JSON: official's provenance"
like "$(jq -r '.variants[] | select(.name == "pgo") | .provenance' "$TMP/off.json")" "^a tree of no Debian version \($SRC\); configure -D" \
    "--output JSON: pgo's provenance"
like "$(sq "$DB" "SELECT json_extract(fingerprint_json, '\$.provenance') FROM variants WHERE name = 'baseline'")" "^a tree of no Debian version" \
    "results database: the baseline's provenance"
"$PGOLAB" report --results="$DB" --experiment=1 --format=html --output="$TMP/off.html" 2>"$TMP/html.err"
is "$?" 0 "report --format=html: exit 0"
like "$(grep -cF "from Debian package $OFFPKG $OFFVER (dpkg)" "$TMP/off.html")" "^[1-9]" \
    "HTML report: official's provenance in the page's header"
like "$(grep -m1 '^| threads |' "$TMP/off.out")" "\| baseline .*\| +pgo .*\| official .*\| % improvement official \|" \
    "report: official is a column of the tps table"
ROOT=$(find "$WD" -mindepth 1 -maxdepth 1 -type d -name 'standin-mariadb-*')
ok "no build directory for official" test ! -e "$ROOT/official"
is "$(sq "$DB" "SELECT library || ' ' || sha256 FROM variants WHERE name = 'official'")" "$MARIADBD $sha" \
    "results database: official's binary and sha256"
is "$(sq "$DB" "SELECT count(*) FROM runs r JOIN variants v ON v.experiment_id = r.experiment_id AND v.idx = r.variant_idx WHERE v.name = 'official' AND r.tps > 0")" 2 \
    "results database: official measured in both rounds"
is "$(sq "$DB" "SELECT json_extract(settings_json, '\$.\"variant.official\".server_options') FROM experiments")" \
    '["innodb_buffer_pool_size=64M"]' "results database: official's server option in its settings"
is "$(jq -c '.variants[] | select(.name == "official") | [.library, .compiler, .server_options]' "$TMP/off.json")" \
    "[\"$MARIADBD\",null,[\"innodb_buffer_pool_size=64M\"]]" "--output JSON: official's binary, no compiler, its option"

note "---- an official binary of another major version: refused after the baseline build"
printf '#!/bin/sh\necho "/usr/sbin/mariadbd  Ver 11.4.2-MariaDB-1 for debian-linux-gnu on x86_64 (Debian 13)"\n' \
    >"$TMP/mariadbd-11.4"
chmod 755 "$TMP/mariadbd-11.4"
pgo v11 standin-mariadb "${RUN[@]}" --variants=baseline,pgo,official --official="$TMP/mariadbd-11.4"
is "$RC" 1 "MariaDB 11.4 as official for a 10.11 source: exit 1"
like "$(errors_of "$TMP/v11.err")" "^FATAL: --variants: official: $TMP/mariadbd-11\.4 is MariaDB 11\.4\.2 \(major version 11\.4\), but the baseline build $ROOT/baseline/prefix/bin/mariadbd is 10\.11\.[0-9]+ \(major version 10\.11\): an official binary must be of the source's major version" \
    "... in one line naming both versions"
is "$(errors_of "$TMP/v11.err" | wc -l | tr -d ' ')" 1 "... and nothing else"
unlike "$(cat "$TMP/v11.err")" "^build: (instrumented|pgo)" "... before any other build"
is "$(sq "$DB" "SELECT count(*) FROM experiments")" 1 "... and nothing recorded"
done_testing
