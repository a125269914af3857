#!/usr/bin/env bash
# serial (tests/check.sh runs it alone): it watches the new directories in /dev/shm, which every compare makes
# private_tmp.t: the rule for temporary files and directories. Nothing pgolab makes in a
# shared directory (/dev/shm, /tmp) has a name another local user could create first, and what
# it makes there is private: a compare without --workdir works in a new /dev/shm/pgolab.XXXXXX
# (mkdtemp; mode 0711 so that a managed server's own user can pass through, nobody can list
# it) that is removed at the end, also when the compare stops at once on bad input; `bench
# --profile` without --profile-file keeps its raw profile in a private directory that is gone
# afterwards (text and JSON); the server registry (PGOLAB_RUNTIME_DIR, else
# /tmp/pgolab-servers-UID) is not used when someone else could have made it (a world-writable
# directory, a symlink): one warning, the server still starts and stops, nothing is written
# through the link.
. "$(dirname "$0")/lib.sh"
[ -x /usr/sbin/mariadbd ] || bail_out "/usr/sbin/mariadbd not installed (scripts/install-deps.sh installs mariadb-server)"
[ -w /dev/shm ] || bail_out "/dev/shm is not writable (the default work directory goes there)"
DATADIRS=()
on_exit srv_cleanup

SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
# shm_dirs: the default work directories now in /dev/shm (pgolab.XXXXXX), sorted
shm_dirs() { find /dev/shm -maxdepth 1 -type d -name 'pgolab.??????' 2>/dev/null | sort; }

note "---- compare without --workdir"
before=$(shm_dirs)
timeout 120 "$PGOLAB" compare --variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so" \
    --bench=oltp_point_select --threads=1 --time=2 --rounds=1 --table-size=100 \
    --results="$TMP/r.db" >"$TMP/c.out" 2>"$TMP/c.err" &
cpid=$!
new=
for _ in $(seq 1 200); do
    new=$(comm -13 <(printf '%s\n' "$before") <(shm_dirs) | head -1)
    [ -n "$new" ] && break
    sleep 0.05
done
ok "compare: a new work directory /dev/shm/pgolab.XXXXXX ($new)" test -n "$new"
is "$(stat -c '%a %U' "$new" 2>/dev/null)" "711 $(id -un)" "compare: it is ours, mode 0711 (not listable by others)"
wait "$cpid"
is "$?" 0 "compare: exit 0" || diag "$(tail -3 "$TMP/c.err")"
ok "compare: the work directory is removed at the end" test ! -e "$new"

before=$(shm_dirs)
timeout 60 "$PGOLAB" compare --variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so" \
    --bench=oltp_point_select --time=1 --rounds=1 --results="$TMP/no/such/dir/r.db" >"$TMP/f.out" 2>"$TMP/f.err"
is "$?" 1 "compare with an unusable --results: exit 1"
is "$(shm_dirs)" "$before" "... and no work directory left behind"

note "---- bench --profile without --profile-file"
mkdir -m 0700 "$TMP/tmpdir"
"$PGOLAB" bench oltp_point_select --sqlite-db="$TMP/b.db" --table-size=1000 prepare >/dev/null 2>&1
for fmt in text json; do
    TMPDIR=$TMP/tmpdir timeout 60 "$PGOLAB" bench oltp_point_select --sqlite-db="$TMP/b.db" \
        --table-size=1000 --time=1 --profile --format="$fmt" run >"$TMP/p.out" 2>"$TMP/p.err"
    is "$?" 0 "--profile --format=$fmt: exit 0" || diag "$(tail -3 "$TMP/p.err")"
    is "$(find "$TMP/tmpdir" -mindepth 1 | wc -l)" 0 "--profile --format=$fmt: nothing left in TMPDIR"
done
is "$(jq -r '.profile.event + " " + (.profile.raw | tostring)' "$TMP/p.out")" "cpu-clock null" \
    "--profile --format=json: the profile ran; no raw file named (it was temporary)"

note "---- the server registry"
reg_start() { # NAME REGISTRY: start MariaDB with PGOLAB_RUNTIME_DIR=REGISTRY, then stop it
    PGOLAB_RUNTIME_DIR=$2 srv "$1" start --db-driver=mysql
    is "$RC" 0 "$1: the server starts" || diag "$(tail -3 "$TMP/$1.err")"
    started "$1"
    PGOLAB_RUNTIME_DIR=$2 srv "$1-stop" stop --datadir="$D"
    is "$RC" 0 "$1: and stops"
}
mkdir -m 0700 "$TMP/reg-ok"
reg_start good "$TMP/reg-ok"
is "$(grep -c "server registry" "$TMP/good.err")" 0 "a registry of ours: no warning"
mkdir "$TMP/reg-open" && chmod 0777 "$TMP/reg-open"
reg_start open "$TMP/reg-open"
like "$(<"$TMP/open.err")" "^WARNING: not using the server registry $TMP/reg-open: it is not a directory of this user's that only it can write" \
    "a world-writable registry: not used, said"
is "$(find "$TMP/reg-open" -mindepth 1 | wc -l)" 0 "... nothing written in it"
mkdir -m 0700 "$TMP/elsewhere"
ln -s "$TMP/elsewhere" "$TMP/reg-link"
reg_start link "$TMP/reg-link"
like "$(<"$TMP/link.err")" "^WARNING: not using the server registry $TMP/reg-link" "a registry that is a symlink: not used, said"
is "$(find "$TMP/elsewhere" -mindepth 1 | wc -l)" 0 "... nothing written through the link"

done_testing
