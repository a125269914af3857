#!/usr/bin/env bash
# pgo_official.t: the refusals of the `official` variant of `pgolab pgo` (the distribution's
# own server binary, the recipe's server.official or --official=PATH), which all come before
# anything is built, so no build runs here (its measurement, gate and report are tested on the
# stand-in in pgo_official_standin.t). An official binary of another major version than the
# source is refused in one line naming both versions: Debian's PostgreSQL 15 against a
# stand-in PostgreSQL 16.2 source tree (the files the recipe expects, empty, and the .dsc
# `apt-get source` leaves beside it, which gives the source's version), and a fake "PostgreSQL
# 16.4" binary given with --official against a 15.x tree; nothing is built or recorded. Bad
# input, one line and exit 1 each: --official without official in --variants, an --official
# that is not executable or not a server of the recipe's family, a recipe that names no
# official binary, one whose binary is missing (naming its Debian package), official for the
# SQLite library, a malformed server.official in a recipe (FILE:LINE), and a
# --variant-server-option naming no variant (before anything with one trainer; with two, whose
# pgo builds are named per trainer, once the source is read and before any build) or a bare
# postgres name.
. "$(dirname "$0")/lib.sh"

PG=/usr/lib/postgresql/15/bin/postgres
[ -x "$PG" ] || bail_out "$PG missing (scripts/install-deps.sh installs postgresql)"
have jq || bail_out "jq missing (scripts/install-deps.sh installs it)"
PGVER=$("$PG" --version | sed -n 's/^postgres (PostgreSQL) \([0-9.]*\).*/\1/p')
# As root PostgreSQL runs as user postgres, which must reach the work directory: one outside
# the private test directory, removed at the end.
WD=$(mktemp -d /var/tmp/pgolab-pgo-off.XXXXXX)
chmod 755 "$WD"
on_exit 'rm -rf "$WD"; _e2e_cleanup'
DB=$TMP/r.db

# fake_tree DIR PKG VERSION: the files recipes/postgresql.json expects, empty, in DIR, and
# beside it the PKG_VERSION.dsc that `apt-get source` leaves
fake_tree() {
    local d
    for d in src/backend/main src/bin/initdb src/test/regress; do mkdir -p "$1/$d"; done
    touch "$1/configure" "$1/src/backend/main/main.c" "$1/src/bin/initdb/initdb.c" \
        "$1/src/test/regress/parallel_schedule" "$(dirname "$1")/$2_$3.dsc"
}
# the installed package's exact revision: the one tree official is compared with
PGDEB=$(dpkg-query -W -f='${Version}' postgresql-15)
PGUP=${PGDEB%%-*}
S15=$TMP/src15/postgresql-15-$PGUP
fake_tree "$TMP/src16/postgresql-15-16.2" postgresql-15 16.2-1
fake_tree "$S15" postgresql-15 "$PGDEB"
fake_tree "$TMP/old/postgresql-15-15.13" postgresql-15 15.13-0+deb12u1
# changelog DIR PKG VERSION: the first entry of DIR/debian/changelog
changelog() {
    mkdir -p "$1/debian"
    printf '%s (%s) bookworm; urgency=medium\n\n  * pgo_official.t\n\n -- T <t@example.org>  Mon, 01 Jan 2024 00:00:00 +0000\n' "$2" "$3" >"$1/debian/changelog"
}
# re TEXT: TEXT as an extended regex matching itself
re() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'; }

# run NAME ARGS...: `pgolab pgo ARGS` with the results in $DB; $TMP/NAME.out, .err, $RC
run() {
    local name=$1
    shift
    timeout -k 5 120 "$PGOLAB" pgo "$@" --results="$DB" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}
# refused NAME RE DESC ARGS...: exit 1, the one error line matches RE, no experiment recorded,
# nothing in a target's directory (WORKDIR/postgresql-gcc-KEY, made empty once the source is
# read)
refused() {
    local name=$1 re=$2 desc=$3
    shift 3
    run "$name" "$@"
    is "$RC" 1 "$desc: exit 1"
    is "$(errors_of "$TMP/$name.err" | wc -l | tr -d ' ')" 1 "$desc: one error line" ||
        diag "$(<"$TMP/$name.err")"
    like "$(errors_of "$TMP/$name.err")" "$re" "$desc: message"
    is "$(sq "$DB" "SELECT count(*) FROM experiments" 2>/dev/null || echo 0)" 0 "$desc: nothing recorded"
    is "$(find "$WD" -mindepth 2 -path "$WD/p*-*/*" | wc -l | tr -d ' ')" 0 \
        "$desc: nothing built (nothing in the target's directory)"
}

note "---- another major version than the source: refused after the source, before any build"
refused v16 "^FATAL: --variants: official: $PG is PostgreSQL $PGVER \(major version 15\), but the source $TMP/src16/postgresql-15-16\.2 is 16\.2-1 \(major version 16\): an official binary must be of the source's major version \(--official=PATH names another\)$" \
    "Debian's PostgreSQL 15 against a 16.2 source" \
    postgresql --source="$TMP/src16/postgresql-15-16.2" --workdir="$WD" --variants=baseline,pgo,official
like "$(<"$TMP/v16.err")" "^source: $TMP/src16/postgresql-15-16\.2 \(sha256 [0-9a-f]+\)" \
    "... the source was read (hashed) and nothing after it ran"
printf '#!/bin/sh\necho "postgres (PostgreSQL) 16.4 (Debian 16.4-1)"\n' >"$TMP/postgres16"
chmod 755 "$TMP/postgres16"
refused off16 "^FATAL: --variants: official: $TMP/postgres16 is PostgreSQL 16\.4 \(major version 16\), but the source $(re "$S15") is $(re "$PGDEB") \(major version 15\)" \
    "--official=PostgreSQL 16.4 against a $PGUP source" \
    postgresql --source="$S15" --workdir="$WD" --variants=baseline,pgo,official \
    --official="$TMP/postgres16"

note "---- another revision than the installed package's, an edited tree: refused after the source, before any build"
refused rev "^FATAL: --variants: official: $PG is Debian's postgresql-15 $(re "$PGDEB"), but the source tree $TMP/old/postgresql-15-15\.13 is 15\.13-0\+deb12u1: official is compared only with a build of its exact revision \(else the gain includes the version change\); fetch that one with .(.*apt-get .*source postgresql-15=$(re "$PGDEB")). \(without --source, pgolab pgo fetches it itself\)$" \
    "a 15.13 tree against the installed $PGDEB: both versions and the fetch command named" \
    postgresql --source="$TMP/old/postgresql-15-15.13" --workdir="$WD" --variants=baseline,pgo,official
fake_tree "$TMP/edited/postgresql-15-$PGUP" postgresql-15 "$PGDEB"
changelog "$TMP/edited/postgresql-15-$PGUP" postgresql-15 "$PGUP-99"
refused edited "^FATAL: --variants: official: the source tree $(re "$TMP/edited/postgresql-15-$PGUP") is postgresql-15 $(re "$PGUP-99") by its debian/changelog, but the \.dsc beside it is of $(re "$PGDEB"): the tree was edited or replaced since it was fetched; official is compared only with a build of a tree whose version is known" \
    "a tree whose debian/changelog disagrees with its .dsc: both named" \
    postgresql --source="$TMP/edited/postgresql-15-$PGUP" --workdir="$WD" --variants=baseline,pgo,official
mkdir -p "$TMP/foreign"
cp -a "$TMP/old/postgresql-15-15.13" "$TMP/foreign/pg"
changelog "$TMP/foreign/pg" postgresql-15 "15.13-0+deb12u1"
refused foreign "^FATAL: --variants: official: $PG is Debian's postgresql-15 $(re "$PGDEB"), but the source tree $TMP/foreign/pg is 15\.13-0\+deb12u1: " \
    "a tree without a .dsc: its version from its own debian/changelog" \
    postgresql --source="$TMP/foreign/pg" --workdir="$WD" --variants=baseline,pgo,official

note "---- --db-version: official only where that major's binary is installed"
if [ -x /usr/lib/postgresql/18/bin/postgres ]; then
    skip 5 "PostgreSQL 18's binary is installed here"
else
    refused pg18 "^FATAL: --variants: official: /usr/lib/postgresql/18/bin/postgres is not an executable file \(install Debian's postgresql-18\)$" \
        "official of PostgreSQL 18, not installed: its binary and package named" \
        postgresql --db-version=18 --source="$S15" --workdir="$WD" --variants=baseline,pgo,official
fi
refused pg19 "^FATAL: --db-version=19: the postgresql recipe builds the major versions 15, 16, 17, 18$" \
    "a major the recipe does not build" \
    postgresql --db-version=19 --source="$S15" --workdir="$WD" --variants=baseline,pgo,official

note "---- bad input, before the source is read"
refused noflag "^FATAL: --official=$PG: names the official variant's binary; add official to --variants \(e\.g\. --variants=baseline,pgo,official\)$" \
    "--official without official in --variants" \
    postgresql --source="$S15" --workdir="$WD" --official="$PG"
refused notexec "^FATAL: --variants: official: /nonexistent/postgres is not an executable file$" \
    "--official not executable" \
    postgresql --source="$S15" --workdir="$WD" --variants=baseline,pgo,official \
    --official=/nonexistent/postgres
refused dir "^FATAL: --variants: official: /usr/lib/postgresql/15/bin is not an executable file$" \
    "--official a directory" \
    postgresql --source="$S15" --workdir="$WD" --variants=baseline,pgo,official \
    --official=/usr/lib/postgresql/15/bin
refused notserver "^FATAL: --variants: official: /bin/true is not a PostgreSQL server \(\`/bin/true --version\` says 'true \(GNU coreutils\)" \
    "--official not a server" \
    postgresql --source="$S15" --workdir="$WD" --variants=baseline,pgo,official \
    --official=/bin/true
refused mysqlbin "^FATAL: --variants: official: /usr/sbin/mariadbd is not a PostgreSQL server" \
    "--official of another server family" \
    postgresql --source="$S15" --workdir="$WD" --variants=baseline,pgo,official \
    --official=/usr/sbin/mariadbd
refused typo "^FATAL: --variants: unknown variant 'offical' \(known: baseline, pgo, lto, pgo\+lto, bolt, pgo\+bolt, pgo\+lto\+bolt, distro, official\)$" \
    "a misspelt variant" \
    postgresql --source="$S15" --workdir="$WD" --variants=baseline,pgo,offical
refused sqlite "^FATAL: --official is for server targets \(recipes\)" "--official for the SQLite library" \
    sqlite --workdir="$WD" --variants=baseline,pgo,official --official="$PG"
refused sqlite2 "^FATAL: --variants: unknown variant 'official' for sqlite" "official for the SQLite library" \
    sqlite --workdir="$WD" --variants=baseline,pgo,official

note "---- --variant-server-option: an unknown variant, before anything (one trainer: the names are --variants'), or once the per-trainer names are known"
refused vso "^FATAL: --variant-server-option=offical:shared_buffers=64MB: no variant named 'offical' \(the variants: baseline, pgo, official\)$" \
    "--variant-server-option of an unknown variant" \
    postgresql --source="$S15" --workdir="$WD" --variants=baseline,pgo,official \
    --variant-server-option=offical:shared_buffers=64MB
unlike "$(<"$TMP/vso.err")" "^source: " "... before the source is read"
refused vsopg "^FATAL: --variant-server-option=official:fsync: expected NAME=VALUE \(a postgres setting" \
    "--variant-server-option with a bare postgres name" \
    postgresql --source="$S15" --workdir="$WD" --variants=baseline,pgo,official \
    --variant-server-option=official:fsync
refused vsotr "^FATAL: --variant-server-option=pgo:shared_buffers=64MB: no variant named 'pgo' \(the variants: baseline, pgo-oltp_read_only, pgo-oltp_write_only, official\)$" \
    "--variant-server-option with two trainers: the pgo builds are named per trainer" \
    postgresql --source="$S15" --workdir="$WD" --variants=baseline,pgo,official \
    --train=oltp_read_only,oltp_write_only --variant-server-option=pgo:shared_buffers=64MB

note "---- recipes: no official binary, a missing one, a malformed key"
mkdir -p "$TMP/recipes"
jq '.name = "pg-none" | del(.server.official)' "$REPO_DIR/recipes/postgresql.json" >"$TMP/recipes/pg-none.json"
jq '.name = "pg-gone" | .server.official.binary = "/nonexistent/15/bin/postgres"' \
    "$REPO_DIR/recipes/postgresql.json" >"$TMP/recipes/pg-gone.json"
jq '.name = "pg-rel" | .server.official.binary = "bin/postgres"' \
    "$REPO_DIR/recipes/postgresql.json" >"$TMP/recipes/pg-rel.json"
jq '.name = "pg-key" | .server.official.path = "/x"' \
    "$REPO_DIR/recipes/postgresql.json" >"$TMP/recipes/pg-key.json"
export PGOLAB_RECIPES=$TMP/recipes
refused none "^FATAL: --variants: official: the pg-none recipe names no official binary \(\"server\": \{\"official\": \{\"binary\": PATH\}\}\); give one with --official=PATH$" \
    "a recipe without server.official" \
    pg-none --source="$S15" --workdir="$WD" --variants=baseline,pgo,official
refused gone "^FATAL: --variants: official: /nonexistent/15/bin/postgres is not an executable file \(install Debian's postgresql-15\)$" \
    "the recipe's official binary missing: its package named" \
    pg-gone --source="$S15" --workdir="$WD" --variants=baseline,pgo,official
refused rel "pg-rel\.json:[0-9]+: .*server\.official\.binary 'bin/postgres': expected an absolute path" \
    "a relative server.official.binary" \
    pg-rel --source="$S15" --workdir="$WD" --variants=baseline,pgo,official
refused key "pg-key\.json:[0-9]+: unknown key 'path' in server\.official \(known: binary, package\)" \
    "an unknown key in server.official" \
    pg-key --source="$S15" --workdir="$WD" --variants=baseline,pgo,official
done_testing
