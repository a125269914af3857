#!/bin/bash
# compare_variant_options.t: per-variant server options of `pgolab compare`
# (--variant-server-option=VARIANT:NAME=VALUE), on Debian's PostgreSQL as two managed variants.
# A variant's own option replaces a global --server-option of the same name (a global
# shared_buffers=bogus, which postgres refuses, with a valid shared_buffers for each variant
# runs), reaches only its variant (an invalid value for B alone stops the experiment at B's
# server and names it), and is recorded with the variant: the settings in the results
# database, the --output JSON, the report's variant lines (also from `pgolab report`), and
# --resume restores them (and refuses another value). Bad input (an unknown variant, no VARIANT:, a managed option,
# a SQLite variant, an option given twice, a bare postgres name) is one line, exit 1, and
# nothing is recorded.
. "$(dirname "$0")/lib.sh"

PG=/usr/lib/postgresql/15/bin/postgres
SQLITE=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0
[ -x "$PG" ] || bail_out "$PG missing (scripts/install-deps.sh installs postgresql)"
DB=$TMP/r.db
# The work directory on tmpfs, as by default; its parents must be searchable by the postgres
# user that PostgreSQL runs as (the test's $TMP is mode 0700).
WD=$(mktemp -u /dev/shm/pgolab-e2e-vo.XXXXXX)
on_exit 'rm -rf "$WD"; _e2e_cleanup'
common=(--bench=oltp_read_only --threads=1 --rounds=1 --time=1 --table-size=500 --results="$DB"
        --workdir="$WD")
AB=(--variant "A=pgsql:$PG" --variant "B=pgsql:$PG")

# ---- bad input: one line, exit 1, no results database made
bad() {
    local desc=$1 re=$2
    shift 2
    "$PGOLAB" compare "$@" --results="$TMP/bad.db" >"$TMP/bad.out" 2>"$TMP/bad.err"
    is "$?" 1 "$desc: exit 1"
    like "$(head -1 "$TMP/bad.err")" "$re" "$desc: message"
    is "$(wc -l <"$TMP/bad.err" | tr -d ' ')" 1 "$desc: one line"
    ok "$desc: no results database" test ! -e "$TMP/bad.db"
}
bad "unknown variant" \
    "^FATAL: --variant-server-option=C:shared_buffers=256MB: no variant named 'C' \(the variants: A, B\)$" \
    "${AB[@]}" --variant-server-option=C:shared_buffers=256MB
bad "no VARIANT:" \
    "^FATAL: --variant-server-option=shared_buffers=256MB: expected VARIANT:NAME=VALUE, e\.g\. --variant-server-option=B:shared_buffers=256MB$" \
    "${AB[@]}" --variant-server-option=shared_buffers=256MB
bad "nothing after VARIANT:" "^FATAL: --variant-server-option=B:: expected VARIANT:NAME=VALUE" \
    "${AB[@]}" --variant-server-option=B:
bad "a managed option" "^FATAL: --variant-server-option=B:port=5999: pgolab sets that itself" \
    "${AB[@]}" --variant-server-option=B:port=5999
bad "a bare postgres name" "^FATAL: --variant-server-option=B:fsync: expected NAME=VALUE" \
    "${AB[@]}" --variant-server-option=B:fsync
bad "a SQLite variant" "^FATAL: --variant-server-option=A:x=1: variant A is a SQLite library, not a server pgolab starts" \
    --variant "A=sqlite:$SQLITE" --variant "B=pgsql:$PG" --variant-server-option=A:x=1
bad "--server-option with no server variant" \
    "^FATAL: --server-option=shared_buffers=1GB: no variant is a server pgolab starts \(it applies to NAME=mysql:/path/to/mariadbd and NAME=pgsql:/path/to/postgres variants\)$" \
    --variant "A=sqlite:$SQLITE" --variant "B=sqlite:$SQLITE" --server-option=shared_buffers=1GB
bad "given twice ('-' and '_' alike)" \
    "^FATAL: --variant-server-option=B:shared-buffers=32MB: variant B already has shared_buffers=16MB" \
    "${AB[@]}" --variant-server-option=B:shared_buffers=16MB --variant-server-option=B:shared-buffers=32MB

# ---- each variant's own shared_buffers replaces the global one, which postgres would refuse
timeout 300 "$PGOLAB" compare "${AB[@]}" "${common[@]}" --server-option=shared_buffers=bogus \
    --server-option=work_mem=8MB --variant-server-option=A:shared_buffers=16MB \
    --variant-server-option=B:shared_buffers=32MB --output="$TMP/ab.json" >"$TMP/ab.out" 2>"$TMP/ab.err"
is "$?" 0 "A/B of shared_buffers: exit 0 (the global shared_buffers=bogus was replaced)" ||
    diag "$(grep -v '^20[0-9][0-9]-' "$TMP/ab.err" | tail -5)"
like "$(<"$TMP/ab.out")" "baseline A +$PG \(PostgreSQL 15\.[0-9]+, sha256 [0-9a-f]{12}; server options shared_buffers=16MB\)" \
    "report: A's line has its own option"
like "$(<"$TMP/ab.out")" "variant +B +$PG \(PostgreSQL 15\.[0-9]+, sha256 [0-9a-f]{12}; server options shared_buffers=32MB; same file as A, other server options\)" \
    "report: B's line has its own option, and says the same binary runs with other options (not an A/A run)"
like "$(<"$TMP/ab.out")" "server options: shared_buffers=bogus, work_mem=8MB \(managed servers; a variant's own option of the same name replaces one\)" \
    "report: the global options, and that a variant's own replaces one"
is "$(sq "$DB" "SELECT json_extract(settings_json, '\$.\"variant.B\".server_options') FROM experiments WHERE id = 1")" \
    '["shared_buffers=32MB"]' "results database: B's options in its settings"
is "$(sq "$DB" "SELECT json_extract(settings_json, '\$.\"variant.A\".server_options') FROM experiments WHERE id = 1")" \
    '["shared_buffers=16MB"]' "results database: A's options in its settings"
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 1 AND tps > 0")" 2 "both variants measured"
is "$(jq -c '[.variants[] | {(.name): .server_options}] | add' "$TMP/ab.json")" \
    '{"A":["shared_buffers=16MB"],"B":["shared_buffers=32MB"]}' "--output JSON: each variant's options"
"$PGOLAB" report --results="$DB" --experiment=1 >"$TMP/rep.out" 2>"$TMP/rep.err"
like "$(<"$TMP/rep.out")" "variant +B +$PG \(PostgreSQL 15\.[0-9]+, sha256 [0-9a-f]{12}; server options shared_buffers=32MB;" \
    "pgolab report: B's options read back from the store"
"$PGOLAB" report --results="$DB" --experiment=1 --format=json >"$TMP/rep.json" 2>"$TMP/rep.err"
is "$(jq -c '.experiment.variants[1].server_options' "$TMP/rep.json")" '["shared_buffers=32MB"]' \
    "pgolab report --format=json: B's options"

# ---- an option of B's reaches B's server only: an invalid value stops the experiment there
timeout 300 "$PGOLAB" compare "${AB[@]}" "${common[@]}" --variant-server-option=B:shared_buffers=bogus \
    >"$TMP/bogus.out" 2>"$TMP/bogus.err"
isnt "$?" 0 "B's invalid shared_buffers: compare fails"
like "$(<"$TMP/bogus.err")" "variant B: the server $PG did not start" "... at B's server"
like "$(<"$TMP/bogus.err")" 'invalid value for parameter "shared_buffers": "bogus"' "... with postgres's reason"
unlike "$(<"$TMP/bogus.err")" "variant A: the server" "... and A's server started (the template was prepared by it)"
like "$(<"$TMP/bogus.err")" "pgolab: $PG .* -c max_connections=1000 -c shared_buffers=bogus" \
    "... whose command line has the option last"
# --resume restores each variant's options: experiment 1 made unfinished again, a resume with
# another value for B is refused, one without the option continues with the recorded ones
# (the settings would differ otherwise) and has nothing left to run
sq "$DB" "UPDATE experiments SET status = 'interrupted', finished_at = NULL WHERE id = 1"
"$PGOLAB" compare --resume=1 --results="$DB" --variant-server-option=B:shared_buffers=64MB \
    >"$TMP/res.out" 2>"$TMP/res.err"
is "$?" 1 "--resume with another value for B: exit 1"
like "$(<"$TMP/res.err")" "cannot resume experiment 1: --variant-server-option B:shared_buffers=64MB differs from its recorded --variant-server-option A:shared_buffers=16MB --variant-server-option B:shared_buffers=32MB" \
    "... naming the recorded ones"
timeout 300 "$PGOLAB" compare --resume=1 --results="$DB" --workdir="$WD" >"$TMP/res.out" 2>"$TMP/res.err"
is "$?" 0 "--resume alone: exit 0 (the recorded per-variant options restored)" ||
    diag "$(grep -v '^20[0-9][0-9]-' "$TMP/res.err" | tail -3)"
is "$(sq "$DB" "SELECT status FROM experiments WHERE id = 1")" complete "... and the experiment is complete"
ok "work directory removed" test ! -e "$WD"
done_testing
