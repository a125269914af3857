#!/bin/bash
# compare_servers.t: `pgolab compare` of server builds. An A/A run of Debian's mariadbd as two
# managed variants (each run on its own freshly started server, on a copy of the variant's own
# prepared datadir, stopped cleanly after it), the same for PostgreSQL (binary and install
# prefix; how each was built, from Debian's pg_config), Debian's PostgreSQL against a pgolab
# build directory (its stamp and build.log; a stand-in binary that says it is 18.6): the
# header's build of each and their differences, also in the results, `pgolab report`, JSON
# and HTML; and two external variants on a server started with `pgolab server start`; nothing
# is left running and the work directory is removed. A server killed in the middle of a run
# stops the experiment with the server's log tail, and the runs recorded before stay. Bad
# variants are one-line errors. The MariaDB experiment's HTML report is loaded in headless
# Chromium: every chart drew its data.
. "$(dirname "$0")/lib.sh"

MARIADBD=/usr/sbin/mariadbd
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$MARIADBD" ] || bail_out "$MARIADBD missing (scripts/install-deps.sh installs mariadb-server)"
[ -x "$PGBIN/postgres" ] || bail_out "$PGBIN/postgres missing (scripts/install-deps.sh installs postgresql)"
have chromium || bail_out "chromium missing (scripts/install-deps.sh installs it)"
DB=$TMP/r.db
# The work directory on tmpfs, as by default; its parents must be searchable by the postgres
# user that PostgreSQL runs as (the test's $TMP is mode 0700).
WD=$(mktemp -u /dev/shm/pgolab-e2e-wd.XXXXXX)
# a pgolab build directory of PostgreSQL (below), searchable by the postgres user too
BUILT=$(mktemp -u /dev/shm/pgolab-e2e-built.XXXXXX)
on_exit 'rm -rf "$WD" "$BUILT"; _e2e_cleanup'
common=(--threads=1 --time=1 --table-size=500 --results="$DB")

# mariadbd / postgres processes whose command line mentions our work directory
ours() { pgrep -f -- "$1.*$WD" | wc -l; }

# ---- MariaDB A/A, managed (a MYSQL_PWD in the environment is not tried on the managed account)
MYSQL_PWD=not-for-managed timeout 300 "$PGOLAB" compare --variant "A=mysql:$MARIADBD" --variant "B=mysql:$MARIADBD" \
    --bench=oltp_read_only,oltp_write_only --rounds=2 "${common[@]}" --workdir="$WD" \
    >"$TMP/my.out" 2>"$TMP/my.err"
is "$?" 0 "mysql A/A: exit 0" || diag "$(tail -5 "$TMP/my.err")"
like "$(<"$TMP/my.out")" "baseline A +$MARIADBD \(MariaDB 10\.[0-9.]+, sha256 [0-9a-f]{12}\)" \
    "report names the server binary, MariaDB and its version"
like "$(<"$TMP/my.out")" "Table 1\. Transactions per second, oltp_read_only" "tps table"
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 1 AND tps > 0")" 8 \
    "8 runs recorded (2 workloads x 2 rounds x 2 variants), each with tps"
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 1 AND json_extract(report_json, '\$.db_driver') = 'mysql'")" 8 \
    "every run went through the mysql driver"
is "$(sq "$DB" "SELECT json_extract(settings_json, '\$.\"variant.A\".driver') FROM experiments WHERE id = 1")" "mysql" \
    "settings record the variant's driver"
is "$(ours mariadbd)" 0 "no mariadbd left running"
ok "work directory removed" test ! -e "$WD"
# its HTML report (the page itself is checked in a browser by report_html.t): the server's CPU
# per transaction, which only managed servers have, is in the page's data
timeout 60 "$PGOLAB" report --results="$DB" --experiment=1 --format=html --output="$TMP/my.html" 2>"$TMP/myh.err"
is "$?" 0 "mysql A/A: report --format=html: exit 0"
is "$(perl -MJSON::PP -0ne 'm{id="pgolab-data">(.*?)</script>}s or die; my $d = decode_json($1);
      print scalar grep { $_->{metric} eq "server_cpu_us_per_txn" && defined $_->{value} && $_->{value} > 0 }
                  @{$d->{experiments}[0]{report}{cells}}' "$TMP/my.html")" 4 \
    "... with the server's CPU us/txn of every cell (2 variants x 2 workloads x 1 thread count)"
# ... and the page in headless Chromium: per workload tps vs threads (2 variants x 1 thread
# count), the latency percentiles (2 x p50..p99.9) and the timelines (2 variants, the median of
# 2 rounds, one point per second of a 1 s run), and a bar chart per system metric that is not 0
# everywhere (2 variants x 2 cells), all drawn with ink, no error, no request
browse "$TMP/my.html"
MSPEC=("tps-0-0 2 1,1" "tps-0-1 2 1,1" "pct-0-0 2 6,6" "pct-0-1 2 6,6" "time-0-0 2 1,1" "time-0-1 2 1,1")
for i in $(seq 0 20); do
    grep -q "^chart metric-0-$i " "$TMP/my.html.status" && MSPEC+=("metric-0-$i 2 2,2")
done
# the server's CPU per transaction (only managed servers have it) is one of the bar charts
k=$(perl -MJSON::PP -0ne 'm{id="pgolab-data">(.*?)</script>}s or die; my $d = decode_json($1);
      my @k = @{$d->{experiments}[0]{metrics_keys}}; print grep { $k[$_] eq "server_cpu_us_per_txn" } 0 .. $#k' "$TMP/my.html")
ok "... the server's CPU per transaction drawn as a chart (metric-0-$k)" grep -q "^chart metric-0-$k bar " "$TMP/my.html.status"
cmp_ok "${#MSPEC[@]}" ">=" 9 "... and at least 3 system metrics charts"
out=$(status_check "$TMP/my.html" "${MSPEC[@]}")
is "$out" "" "mysql A/A: the page drew every chart with its data in a browser, no error, no request"

# ---- PostgreSQL A/A: binary vs install prefix, with a server option
timeout 300 "$PGOLAB" compare --variant "A=pgsql:$PGBIN/postgres" --variant "B=pgsql:${PGBIN%/bin}" \
    --bench=oltp_point_select --rounds=2 "${common[@]}" --workdir="$WD" \
    --server-option=shared_buffers=32MB >"$TMP/pg.out" 2>"$TMP/pg.err"
is "$?" 0 "pgsql A/A (binary and prefix): exit 0" || diag "$(tail -5 "$TMP/pg.err")"
like "$(<"$TMP/pg.out")" "variant +B +${PGBIN%/bin} \(PostgreSQL 1[0-9.]+, sha256 [0-9a-f]{12}; same file as A" \
    "the prefix resolves to the same postgres binary"
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 2 AND tps > 0")" 4 "4 runs recorded"
is "$(sq "$DB" "SELECT json_extract(settings_json, '\$.server_options[0]') FROM experiments WHERE id = 2")" \
    "shared_buffers=32MB" "settings record --server-option"
is "$(ours postgres)" 0 "no postgres left running"
# how each was built: Debian's from the pg_config beside it, every feature option of its
# --configure named; B is the same file
feats=$("$PGBIN/pg_config" --configure | grep -oE "'--(with|without|enable|disable)-[^']*'" | tr -d "'" |
    grep -vE -- '-(extra-version|silent-rules|dependency-tracking|option-checking|maintainer-mode)')
like "$(<"$TMP/pg.out")" "^  build of A: $("$PGBIN/pg_config" --cc)[^;]* \((pg_config --cc|\.comment)\); flags [^;]*-O2[^;]* \(pg_config --cflags\); configure " \
    "pgsql A/A: the build of A: compiler and flags from pg_config"
ok "... and every feature option of pg_config --configure ($(echo $feats | wc -w))" \
    grep -qF -- "configure $(echo $feats) (pg_config --configure)" "$TMP/pg.out"
like "$(<"$TMP/pg.out")" "^  build of B: the same file as A's$" "... B: the same file, in one line"
unlike "$(<"$TMP/pg.out")" "build differences" "... and no differences line"

# ---- PostgreSQL of two builds: Debian's against a pgolab build directory as `pgolab pgo`
# leaves it (WORK/TARGET/VARIANT/{stamp,build.log,prefix}); its postgres is a stand-in that
# says it is PostgreSQL 18.6 and otherwise runs Debian's, so the runs work and the header must
# name another major version
V=$BUILT/work/postgresql-18-gcc-0123456789abcdef/baseline
mkdir -p "$V/prefix/bin" && chmod -R 755 "$BUILT"
ln -s "$PGBIN/initdb" "$V/prefix/bin/initdb"
printf '#!/bin/sh\n[ "$1" = --version ] && { echo "postgres (PostgreSQL) 18.6"; exit 0; }\nexec %s "$@"\n' \
    "$PGBIN/postgres" >"$V/prefix/bin/postgres"
chmod 755 "$V/prefix/bin/postgres"
printf 'stamp: 2\nsteps: 0123\nsource: abcd\ncompiler: clang version 14.0.6\ncflags: -O3\nphase-flags: \n' \
    >"$V/stamp"
printf '$ cd %s/build && %s/work/src/postgresql-18-18.6/configure --prefix=%s/prefix --without-icu --without-readline --with-system-tzdata=/usr/share/zoneinfo CC=clang CFLAGS=-O3\nchecking ...\n' \
    "$V" "$BUILT" "$V" >"$V/build.log"
DB2=$TMP/builds.db
timeout 300 "$PGOLAB" compare --variant "A=pgsql:$PGBIN/postgres" --variant "B=pgsql:$V/prefix" \
    --bench=oltp_point_select --rounds=1 --threads=1 --time=1 --table-size=500 --results="$DB2" \
    --workdir="$WD" --output="$TMP/b.json" >"$TMP/b.out" 2>"$TMP/b.err"
is "$?" 0 "pgsql of two builds: exit 0" || diag "$(tail -5 "$TMP/b.err")"
like "$(<"$TMP/b.out")" "^  variant +B +$V/prefix \(PostgreSQL 18\.6, sha256 " "B is PostgreSQL 18.6"
like "$(<"$TMP/b.out")" "^  build of B: clang version 14\.0\.6 \(pgolab stamp\); flags -O3 \(pgolab stamp[^)]*\); configure --without-icu --without-readline --with-system-tzdata=/usr/share/zoneinfo \(pgolab build\.log\)$" \
    "the build of B: its stamp's compiler and flags, its build.log's options without the work directory's paths"
diffs=$(sed -n 's/^  build differences, B against A: //p' "$TMP/b.out")
like "$diffs" "^PostgreSQL 18 against PostgreSQL 15: the change includes PostgreSQL 18's own changes, not only the build; " \
    "the differences name the other major version first"
like "$diffs" "; compiler gcc, version not known \(A\) vs clang 14\.0\.6 \(B\); flags only in A: [^;]*-O2[^;]*, flags only in B: -O3; configure " \
    "... then the compilers and the flags of each"
deb_icu=$("$PGBIN/pg_config" --configure | grep -oE "'--with(out)?-icu'" | tail -1 | tr -d "'")
if [ "$deb_icu" = --with-icu ]; then
    like "$diffs" "; configure icu: --with in A, --without in B; " "... icu, set by both, first"
else
    skip 1 "Debian's PostgreSQL is not configured --with-icu here"
fi
like "$diffs" "; readline: default in A, --without in B$" "... readline, which only B sets, last"
for f in $feats; do
    case $f in --with-system-tzdata=*) continue ;; esac
    name=${f#--*able-}; name=${name#--without-}; name=${name#--with-}; name=${name%%=*}
    grep -qE -- "(configure |; |, )$name(=[^,;:]*)?[,:]" <<<"$diffs" || { fail_feat=$f; break; }
done
is "${fail_feat:-}" "" "... every feature option of Debian's that B leaves to its default is named"
is "$(sq "$DB2" "SELECT json_extract(fingerprint_json, '\$.build_differences') FROM variants WHERE idx = 1")" \
    "$diffs" "the results database has B's differences"
"$PGOLAB" report --results="$DB2" --experiment=1 >"$TMP/b-report.out" 2>&1
is "$(grep '^  build' "$TMP/b-report.out")" "$(grep '^  build' "$TMP/b.out")" \
    "pgolab report prints the same build lines from the results"
is "$(perl -MJSON::PP -0ne 'my $d = decode_json($_); print $d->{variants}[1]{build_differences}' "$TMP/b.json")" \
    "$diffs" "--output JSON: B's build_differences"
like "$(perl -MJSON::PP -0ne 'my $d = decode_json($_); print $d->{variants}[0]{build}' "$TMP/b.json")" \
    "\(pg_config --configure\)$" "--output JSON: A's build"
"$PGOLAB" report --results="$DB2" --experiment=1 --format=html --output="$TMP/b.html" >/dev/null 2>&1
ok "the HTML report has the differences line" grep -qF "<li>build differences, B against A: PostgreSQL 18 against PostgreSQL 15" "$TMP/b.html"
is "$(ours postgres)" 0 "no postgres left running"

# ---- external servers: pgolab does not manage them
PW='Ext-pw-7Qx2'
"$PGOLAB" server start --db-driver=mysql --datadir="$TMP/ext" --mysql-password="$PW" >"$TMP/ext.out" 2>&1
is "$?" 0 "pgolab server start (external server for the next compare, sbtest with a password)"
port=$(sed -n 's/^port: *127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/ext.out")
# the password as a compare option, with a wrong MYSQL_PWD in the environment (the option wins)
MYSQL_PWD=wrong timeout 120 "$PGOLAB" compare --variant "A=mysql://127.0.0.1:$port" --variant "B=mysql://127.0.0.1:$port" \
    --mysql-user=sbtest --mysql-password="$PW" --mysql-db=sbtest \
    --bench=oltp_point_select --rounds=2 "${common[@]}" >"$TMP/x.out" 2>"$TMP/x.err"
is "$?" 0 "external A/A on 127.0.0.1:$port with --mysql-password: exit 0" || diag "$(tail -5 "$TMP/x.err")"
like "$(<"$TMP/x.out")" "baseline A +mysql://127\.0\.0\.1:$port \(MariaDB 10\.[0-9]+\.[0-9]+\)" \
    "the report names the external server and the version it reports"
is "$(sq "$DB" "SELECT version FROM variants WHERE experiment_id = 3 AND idx = 0")" \
    "$(mariadb -h127.0.0.1 -P"$port" -usbtest -p"$PW" -Nse 'select version()' | sed 's/^\([0-9.]*\)-MariaDB.*/MariaDB \1/')" \
    "the recorded version is the server's own"
like "$(<"$TMP/x.out")" "running servers A, B: tables dropped and prepared once per workload, never reset" \
    "the report says the running servers' data is not reset"
is "$(cat "$TMP/x.out" "$TMP/x.err" | grep -c -F -- "$PW")" 0 "the password is not printed"
is "$(sqlite3 "$DB" .dump | grep -c -F -- "$PW")" 0 "the password is not in the results database"
MYSQL_PWD= timeout 120 "$PGOLAB" compare --variant "A=mysql://127.0.0.1:$port" --variant "B=mysql://127.0.0.1:$port" \
    --bench=oltp_point_select --rounds=1 "${common[@]}" --results="$TMP/x2.db" >"$TMP/x2.out" 2>"$TMP/x2.err"
is "$?" 1 "external without the password: exit 1"
like "$(<"$TMP/x2.err")" "Access denied for user 'sbtest'" "external without the password: access denied"
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 3 AND tps > 0")" 4 "4 runs recorded"
"$PGOLAB" report --results="$DB" --experiment=3 >"$TMP/r3.out" 2>&1
like "$(<"$TMP/r3.out")" "on the running servers A, B: tables dropped and prepared once per workload, never reset" \
    "report from the results: the running servers' data line as compare printed it"
"$PGOLAB" report --results="$DB" --experiment=2 >"$TMP/r2.out" 2>&1
like "$(<"$TMP/r2.out")" "^  server options: shared_buffers=32MB \(managed servers\)$" \
    "report from the results: the server options"
like "$(<"$TMP/pg.out")" "^  server options: shared_buffers=32MB \(managed servers\)$" "compare's report: the server options"
"$PGOLAB" server status --datadir="$TMP/ext" >/dev/null 2>&1
is "$?" 0 "the external server is still running afterwards (not ours to stop)"
"$PGOLAB" server stop --datadir="$TMP/ext" >/dev/null 2>&1

# second_run_server PID EXPERIMENT: waits (up to a minute) until the experiment's first run is
# recorded and compare (the child of PID, its `timeout`) runs the bench child of the second run,
# then prints that run's server pid. The bench child starts only once its server answers:
# a server picked earlier may still be starting on a loaded machine, and killing or pausing it
# then tests the start instead of the run.
second_run_server() {
    local cpid=$1 exp=$2 compare_pid spid
    for _ in $(seq 1 600); do
        if [ "$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = $exp" 2>/dev/null)" = 1 ]; then
            compare_pid=$(pgrep -P "$cpid" | head -1)
            spid=$(pgrep -f -- "mariadbd.*$WD/run-" | head -1)
            if [ -n "$compare_pid" ] && [ -n "$spid" ] &&
                pgrep -P "$compare_pid" -f -- "bench .*--forced-shutdown=" >/dev/null; then
                echo "$spid"
                return 0
            fi
        fi
        sleep 0.1
    done
    return 1
}

# ---- a server killed in the middle of a run
timeout 300 "$PGOLAB" compare --variant "A=mysql:$MARIADBD" --variant "B=mysql:$MARIADBD" \
    --bench=oltp_read_only --rounds=3 --threads=1 --time=6 --table-size=500 --results="$DB" \
    --workdir="$WD" >"$TMP/k.out" 2>"$TMP/k.err" &
cpid=$!
killed=0
spid=$(second_run_server "$cpid" 4) && sleep 1 && kill -9 "$spid" && killed=1
wait $cpid
rc=$?
is "$killed" 1 "killed the server of a run"
is "$rc" 1 "compare: exit 1 when a server dies"
like "$(<"$TMP/k.err")" "run failed: variant [AB], oltp_read_only, threads=1, round [12]/3: exit [0-9]+: .*server log" \
    "the error names the run and carries the server's log"
like "$(<"$TMP/k.err")" "the server is gone" "... and says the server is gone"
# a server that died is a transient cause: --resume is worth trying, and the log it names is kept
like "$(<"$TMP/k.err")" "^experiment 4 failed: \`pgolab compare --resume=4 --results=$DB\` continues it \\(with the settings it recorded\\)\$" \
    "... and suggests --resume (a server that died may not die again)"
klog=$(sed -n 's/.*server log \([^:]*\.log\): .*/\1/p' "$TMP/k.err" | head -1)
like "$klog" "$DB\.logs/experiment-4-run-00[0-9]-[AB]-server\.log$" "... the server log it names is beside the results"
ok "... and kept" test -s "$klog"
is "$(sq "$DB" "SELECT count(*) || ' ' || (SELECT status FROM experiments WHERE id = 4) FROM runs WHERE experiment_id = 4")" \
    "1 failed" "the run recorded before is kept; the experiment is marked failed"
is "$(ours mariadbd)" 0 "no mariadbd left running after the failure"
# --resume continues it: the grid complete, the run recorded before kept, none twice
kept=$(sq "$DB" "SELECT id || ' ' || tps FROM runs WHERE experiment_id = 4")
timeout 300 "$PGOLAB" compare --variant "A=mysql:$MARIADBD" --variant "B=mysql:$MARIADBD" \
    --bench=oltp_read_only --rounds=3 --threads=1 --time=6 --table-size=500 --results="$DB" \
    --workdir="$WD" --resume=4 >"$TMP/kr.out" 2>"$TMP/kr.err"
is "$?" 0 "after the killed server: --resume=4 exits 0" || diag "$(grep -v "^20[0-9][0-9]-" "$TMP/kr.err" | tail -25)"
is "$(sq "$DB" "SELECT variant_idx || '/' || round FROM runs WHERE experiment_id = 4 ORDER BY 1")" \
    "$(printf '0/1\n0/2\n0/3\n1/1\n1/2\n1/3')" "... exactly the 6 planned runs: none lost, none twice"
like "$(sq "$DB" "SELECT id || ' ' || tps FROM runs WHERE experiment_id = 4")" "^$kept" \
    "... the run recorded before the kill kept as it was"
is "$(sq "$DB" "SELECT status FROM experiments WHERE id = 4")" complete "... status complete"

# ---- a server paused (SIGSTOP) in the middle of a run: the run ends by --time + the grace
# compare gives its child (--forced-shutdown=10 + 5% of --time), not after the child's timeout
# and a 120 s wait for the paused server to stop; the error says the server is paused. The run
# lasts 6 s, so the pause lands inside it however slowly the test's own loop runs.
timeout 300 "$PGOLAB" compare --variant "A=mysql:$MARIADBD" --variant "B=mysql:$MARIADBD" \
    --bench=oltp_read_only --rounds=2 --threads=1 --time=6 --table-size=500 --results="$DB" \
    --workdir="$WD" >"$TMP/s.out" 2>"$TMP/s.err" &
cpid=$!
paused=0
spid=$(second_run_server "$cpid" 5) && sleep 0.5 && kill -STOP "$spid" && paused=$(date +%s)
wait $cpid
rc=$?
took=$(($(date +%s) - paused))
cmp_ok "$paused" '>' 0 "paused the server of a run"
is "$rc" 1 "paused server: compare exits 1"
cmp_ok "$took" '<' 60 "paused server: the experiment ended ${took} s after the pause (run: 6 s + 10 s grace, then the server's stop; not the child's timeout and a 120 s wait)"
like "$(<"$TMP/s.err")" "run failed: variant [AB], oltp_read_only, threads=1, round [12]/2: exit 2: FATAL: The --max-time limit has expired, forcing shutdown\.\.\.; the server is paused \(SIGSTOP\); server log " \
    "paused server: the error names the run, the forced shutdown and the paused server"
like "$(<"$TMP/s.err")" "^experiment 5 failed: \`pgolab compare --resume=5 --results=$DB\` continues it \\(with the settings it recorded\\)\$" \
    "paused server: --resume is suggested (a stall may not come back)"
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = 5")" 1 "paused server: the run before it is kept, the cut one not recorded"
is "$(ours mariadbd)" 0 "no mariadbd left running (the paused one was continued and stopped)"

# ---- bad variants
bad() {
    local desc=$1 re=$2
    shift 2
    "$PGOLAB" compare "$@" --results="$DB" >"$TMP/bad.out" 2>"$TMP/bad.err"
    is "$?" 1 "$desc: exit 1"
    like "$(head -1 "$TMP/bad.err")" "$re" "$desc: message"
    is "$(wc -l <"$TMP/bad.err" | tr -d ' ')" 1 "$desc: one line"
}
bad "missing server binary" "variant B: server /nonexistent/mariadbd: No such file" \
    --variant "A=mysql:$MARIADBD" --variant "B=mysql:/nonexistent/mariadbd"
bad "not a server" "variant B: /bin/ls is not a MariaDB/MySQL server" \
    --variant "A=mysql:$MARIADBD" --variant "B=mysql:/bin/ls"
bad "external without a port" "variant B: 'mysql://localhost' is not mysql://HOST:PORT" \
    --variant "A=mysql:$MARIADBD" --variant "B=mysql://localhost"
bad "unknown kind" "variant B: unknown kind 'oracle'" --variant "A=mysql:$MARIADBD" --variant "B=oracle:/x"
bad "instructions on a running server" "--measure=instructions counts a server pgolab starts under valgrind; variant B is a running server at 127\.0\.0\.1:3306" \
    --variant "A=mysql:$MARIADBD" --variant "B=mysql://127.0.0.1:3306" --measure=instructions
# valgrind not installed (not on PATH): one line naming the package, before anything runs
env PATH=/nonexistent "$PGOLAB" compare --variant "A=mysql:$MARIADBD" --variant "B=mysql:$MARIADBD" \
    --measure=instructions --results="$TMP/novg.db" >"$TMP/bad.out" 2>"$TMP/bad.err"
is "$?" 1 "valgrind missing: exit 1"
is "$(<"$TMP/bad.err")" "FATAL: --measure=instructions needs valgrind, but valgrind was not found; install it (apt-get install valgrind)" \
    "valgrind missing: one line naming the package"
ok "valgrind missing: no experiment recorded" test ! -e "$TMP/novg.db"
bad "a managed option" "server-option=datadir=/x" \
    --variant "A=mysql:$MARIADBD" --variant "B=mysql:$MARIADBD" --server-option=datadir=/x
bad "mysql://localhost:PORT (libmariadb would use its socket)" \
    "variant B: mysql://localhost:3306 would connect to the default unix socket, not port 3306; use mysql://127\.0\.0\.1:3306" \
    --variant "A=mysql:$MARIADBD" --variant "B=mysql://localhost:3306"
bad "an account in the address" "variant B: an account in the address is not taken; use --mysql-user and --mysql-password" \
    --variant "A=mysql:$MARIADBD" --variant "B=mysql://u:Pw-in-url@127.0.0.1:3306"
unlike "$(<"$TMP/bad.err")" "Pw-in-url" "an account in the address: the password is not echoed"
bad "bulk_insert without a reset per run" "--bench=bulk_insert needs empty tables for every run: use --reset=run" \
    --variant "A=mysql:$MARIADBD" --variant "B=mysql:$MARIADBD" --bench=bulk_insert --reset=variant
bad "bulk_insert on a running server" "--bench=bulk_insert needs empty tables for every run, and variant B is a running server" \
    --variant "A=mysql:$MARIADBD" --variant "B=mysql://127.0.0.1:3306" --bench=bulk_insert

# ---- bulk_insert at 1 and 2 threads: the template has a table per thread of the most threads
timeout 300 "$PGOLAB" compare --variant "A=mysql:$MARIADBD" --variant "B=mysql:$MARIADBD" \
    --bench=bulk_insert --rounds=1 --threads=1,2 --time=1 --table-size=500 --results="$TMP/bulk.db" \
    --workdir="$WD" >"$TMP/bulk.out" 2>"$TMP/bulk.err"
is "$?" 0 "bulk_insert --threads=1,2: exit 0" || diag "$(tail -3 "$TMP/bulk.err")"
is "$(sq "$TMP/bulk.db" "SELECT count(*) FROM runs WHERE tps > 0")" 4 "bulk_insert --threads=1,2: 4 runs with tps"
is "$(ours mariadbd)" 0 "bulk_insert: no mariadbd left running"
done_testing
