#!/bin/bash
# parity_sysbench.t: pgolab checked against sysbench 1.0.20 itself, on a real MariaDB (mysql
# driver) and a real PostgreSQL (pgsql driver), each a fresh private server from
# `pgolab server start`. For each of the eleven workloads, each tool in turn (sysbench first):
#   1. prepare: the schema the server reports (SHOW CREATE TABLE; information_schema.columns and
#      pg_indexes), the tables, the row counts and the shape of the data must be identical, and
#      cleanup must leave no sbtest table behind;
#   2. run --threads=1: the statements and rows the *server* counted per transaction (MariaDB
#      SHOW GLOBAL STATUS Com_*/Handler_*, PostgreSQL pg_stat_database/pg_stat_user_tables)
#      and the r/w/o the tool reported must agree within 1%;
#      PostgreSQL only: the statement forms the server recorded (pg_stat_statements: the calls
#      of every normalised statement text of the sbtest account, table numbers folded) must
#      agree within 1% per transaction, which tells a prepared (extended protocol) BEGIN or
#      COMMIT from a simple-protocol one;
#      MariaDB only (the statement texts are the workload's, not the driver's): the general log
#      of a 5-event run, literals normalised, must show the same statements in the same order,
#      sent the same way (prepared or text), one table per statement group, ids per statement;
#   3. run --time=2 --report-interval=1 --histogram: every regular expression of a sysbench
#      output parser that matches sysbench's text output must match pgolab's, both outputs must
#      be fully covered by the same set, and the kinds of lines must come in the same order.
# 4. Then, once: the k values prepare draws (sysbench's default distribution, special, and
#    --rand-type=uniform/gaussian/pareto) must come from the same distribution (KS test).
# Known differences are asserted as such (see KNOWN DIFFERENCES below), never by loosening the 1%.
# Takes about 3 minutes. PARITY_DRIVERS="mysql" and PARITY_WORKLOADS="oltp_delete ..." narrow
# it down when debugging.
. "$(dirname "$0")/lib.sh"

SYSBENCH=${SYSBENCH:-/usr/bin/sysbench}
[ -x "$SYSBENCH" ] || bail_out "$SYSBENCH missing (scripts/install-deps.sh installs sysbench)"
"$SYSBENCH" --version 2>/dev/null | grep -q '^sysbench 1\.0\.' ||
    bail_out "$SYSBENCH is not sysbench 1.0.x: $("$SYSBENCH" --version 2>&1 | head -1)"
have mariadb || bail_out "the mariadb client is missing (scripts/install-deps.sh installs mariadb-server)"
have psql || bail_out "psql is missing (scripts/install-deps.sh installs postgresql)"

WORKLOADS=(oltp_read_write oltp_read_only oltp_write_only oltp_point_select oltp_update_index
    oltp_update_non_index oltp_delete oltp_insert select_random_points select_random_ranges
    bulk_insert)
[ -n "${PARITY_WORKLOADS:-}" ] && read -r -a WORKLOADS <<<"$PARITY_WORKLOADS"
read -r -a DRIVERS <<<"${PARITY_DRIVERS:-mysql pgsql}"
N=300            # events of a measured run (--threads=1)
N_BULK=200000    # bulk_insert: one row per event, one INSERT per ~512 KiB (about 6 statements)
SIZE=1000        # --table-size

# ---- servers: one fresh server per driver, in a private directory on tmpfs. PostgreSQL runs as
# the postgres user, so the directory must be searchable by it (mktemp -d makes it 0700).
SD=$(mktemp -d /dev/shm/pgolab-parity.XXXXXX) || bail_out "mktemp in /dev/shm failed"
chmod 0711 "$SD"
parity_cleanup() {
    local d
    for d in my pg; do
        [ -e "$SD/$d" ] && "$PGOLAB" server stop --datadir="$SD/$d" >/dev/null 2>&1
    done
    rm -rf "$SD"
    _e2e_cleanup
}
on_exit parity_cleanup

start_server() {  # start_server DRIVER DIR [server options...]
    local drv=$1 dir=$2
    shift 2
    "$PGOLAB" server start --db-driver="$drv" --datadir="$dir" "$@" >"$TMP/start-$drv.out" 2>&1 ||
        bail_out "pgolab server start --db-driver=$drv failed: $(tail -3 "$TMP/start-$drv.out")"
}
declare -A CLIENT   # driver -> the client options `server start` printed
for drv in "${DRIVERS[@]}"; do
    case $drv in
    # PostgreSQL's autovacuum/autoanalyze workers would add transactions of their own to the
    # sbtest database's counters at random moments.
    # PARITY_MYSQL_PREFIX: another server of the family (parity_mysql97.t: MySQL 9.7)
    mysql) start_server mysql "$SD/my" ${PARITY_MYSQL_PREFIX:+--prefix="$PARITY_MYSQL_PREFIX"} --timeout=180 ;;
    # pg_stat_statements records the statement forms each tool sends (checked in 2.)
    pgsql) start_server pgsql "$SD/pg" --server-option=autovacuum=off \
        --server-option=shared_preload_libraries=pg_stat_statements ;;
    *) bail_out "unknown driver $drv" ;;
    esac
    CLIENT[$drv]=$(sed -n 's/^client: *//p' "$TMP/start-$drv.out")
    [ -n "${CLIENT[$drv]}" ] || bail_out "no client options in: $(<"$TMP/start-$drv.out")"
done
MYSOCK=$SD/my/mysql.sock
PGPORT=$(sed -n 's/^port: *127\.0\.0\.1:\([0-9]*\)$/\1/p' "$TMP/start-pgsql.out" 2>/dev/null)

# ---- observers: the servers' superusers over the unix socket (never the benchmark's account).
my_sql() { mariadb --socket="$MYSOCK" -u root -N -B sbtest -e "$1"; }
pg_sql() { psql -h "$SD/pg" -p "$PGPORT" -U postgres -d sbtest -XAtq -v ON_ERROR_STOP=1 -F ' ' "$@"; }
if [ -n "${CLIENT[pgsql]:-}" ]; then
    pg_sql -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" ||
        bail_out "CREATE EXTENSION pg_stat_statements failed (postgresql-15 ships it)"
fi

# schema DRIVER: the tables, their definitions and indexes as the server reports them, and the
# shape of their data (counts, id range, k range, c/pad templates). AUTO_INCREMENT=N is
# normalised (the next value is InnoDB's business; max(id) is compared instead).
C_RE='^[0-9]{11}(-[0-9]{11}){9}$'
PAD_RE='^[0-9]{11}(-[0-9]{11}){4}$'
schema() {
    local t
    case $1 in
    mysql)
        for t in $(my_sql "SHOW TABLES LIKE 'sbtest%'" | sort); do
            echo "== $t"
            my_sql "SHOW CREATE TABLE $t" | cut -f2- | sed 's/ AUTO_INCREMENT=[0-9]*//'
        done
        ;;
    pgsql)
        for t in $(pg_sql -c "SELECT tablename FROM pg_tables WHERE tablename LIKE 'sbtest%' ORDER BY 1"); do
            echo "== $t"
            pg_sql -F '|' -c "SELECT column_name, data_type, character_maximum_length, is_nullable,
                                     column_default
                                FROM information_schema.columns WHERE table_name = '$t'
                               ORDER BY ordinal_position" \
                -c "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = '$t' ORDER BY 1"
        done
        ;;
    esac
}
# shape DRIVER: per table "rows min(id) max(id) distinct(id) k_in_range c_ok pad_ok" (bulk_insert
# tables have no c/pad: "-").
shape() {
    local t q
    for t in $(tables "$1"); do
        if [ "$(cols "$1" "$t")" = "id,k" ]; then
            q="SELECT count(*), min(id), max(id), count(DISTINCT id), '-', '-', '-' FROM $t"
        elif [ "$1" = mysql ]; then
            q="SELECT count(*), min(id), max(id), count(DISTINCT id),
                      sum(k BETWEEN 1 AND $SIZE), sum(c REGEXP '$C_RE'), sum(pad REGEXP '$PAD_RE')
                 FROM $t"
        else
            q="SELECT count(*), min(id), max(id), count(DISTINCT id),
                      sum((k BETWEEN 1 AND $SIZE)::int), sum((rtrim(c) ~ '$C_RE')::int),
                      sum((rtrim(pad) ~ '$PAD_RE')::int)
                 FROM $t"
        fi
        echo "$t $(sqlq "$1" "$q" | tr '\t' ' ')"
    done
}
# malformed DRIVER: rows whose c or pad is not a full template (after a run: §10.5 suspects that
# sysbench's prepared CHAR parameters store one character on PostgreSQL).
malformed() {
    local t n=0
    for t in $(tables "$1"); do
        [ "$(cols "$1" "$t")" = "id,k" ] && continue
        if [ "$1" = mysql ]; then
            n=$((n + $(sqlq mysql "SELECT count(*) FROM $t WHERE NOT (c REGEXP '$C_RE' AND pad REGEXP '$PAD_RE')")))
        else
            n=$((n + $(sqlq pgsql "SELECT count(*) FROM $t WHERE NOT (rtrim(c) ~ '$C_RE' AND rtrim(pad) ~ '$PAD_RE')")))
        fi
    done
    echo "$n"
}
sqlq() { if [ "$1" = mysql ]; then my_sql "$2"; else pg_sql -c "$2"; fi; }
tables() {
    if [ "$1" = mysql ]; then my_sql "SHOW TABLES LIKE 'sbtest%'" | sort
    else pg_sql -c "SELECT tablename FROM pg_tables WHERE tablename LIKE 'sbtest%' ORDER BY 1"; fi
}
cols() {
    if [ "$1" = mysql ]; then
        my_sql "SELECT group_concat(column_name ORDER BY ordinal_position) FROM information_schema.columns
                 WHERE table_schema = 'sbtest' AND table_name = '$2'"
    else
        pg_sql -c "SELECT string_agg(column_name, ',' ORDER BY ordinal_position)
                     FROM information_schema.columns WHERE table_name = '$2'"
    fi
}

# counters DRIVER: "name value" lines of the server's counters, read once the benchmark's
# connections are gone.
# MariaDB: a disconnected thread's counters are folded into the global ones; wait for that.
# The SHOW itself counts only in Com_show_status.
# PostgreSQL 15: a backend flushes its statistics when it exits (there is no
# pg_stat_force_next_flush() before 16), before it leaves pg_stat_activity; so poll, with
# pg_stat_clear_snapshot() between looks, until no other backend is connected to sbtest, then
# read in a new transaction (a fresh statistics snapshot). The observer's own transactions in
# sbtest (flushed when it exits) add the same few commits to every interval between two
# snapshots, and cancel like the tools' setup (see measure below).
# MariaDB: Handler_write/update/delete count rows written to real tables (internal temporary
# tables have Handler_tmp_*); MariaDB 10.11 has no Innodb_rows_* any more. Oracle MySQL counts
# its internal temporary tables' rows in Handler_write too (a DISTINCT range's, as many as the
# drawn range has rows), so there the rows InnoDB wrote are compared: Innodb_rows_*.
MY_ROWS="Handler_write Handler_update Handler_delete"
if [ -n "${CLIENT[mysql]:-}" ] && ! my_sql "SELECT VERSION()" | grep -qi mariadb; then
    MY_ROWS="Innodb_rows_inserted Innodb_rows_updated Innodb_rows_deleted"
fi
MY_COUNTERS="Com_select Com_insert Com_update Com_delete Com_begin Com_commit Com_rollback
    Com_stmt_execute $MY_ROWS Com_stmt_prepare Connections"
PG_COUNTERS="xact_commit xact_rollback scans n_tup_ins n_tup_upd n_tup_del"
counters() {
    case $1 in
    mysql)
        local names
        names=$(printf "'%s'," $MY_COUNTERS)
        for _ in $(seq 1 200); do
            [ "$(my_sql "SELECT count(*) FROM information_schema.PROCESSLIST WHERE USER = 'sbtest'")" = 0 ] && break
            sleep 0.025
        done
        my_sql "SHOW GLOBAL STATUS WHERE Variable_name IN (${names%,})" | tr '\t' ' '
        ;;
    pgsql)
        pg_sql -c "DO \$\$ BEGIN
                     FOR i IN 1..400 LOOP
                       PERFORM pg_stat_clear_snapshot();
                       EXIT WHEN NOT EXISTS (SELECT 1 FROM pg_stat_activity
                                              WHERE datname = 'sbtest' AND pid <> pg_backend_pid());
                       PERFORM pg_sleep(0.025);
                     END LOOP;
                     IF EXISTS (SELECT 1 FROM pg_stat_activity
                                 WHERE datname = 'sbtest' AND pid <> pg_backend_pid()) THEN
                       RAISE EXCEPTION 'a client of sbtest is still connected after 10 s';
                     END IF;
                   END \$\$" \
            -c "SELECT 'xact_commit', xact_commit FROM pg_stat_database WHERE datname = 'sbtest'
                UNION ALL SELECT 'xact_rollback', xact_rollback FROM pg_stat_database WHERE datname = 'sbtest'
                UNION ALL SELECT 'scans', coalesce(sum(coalesce(seq_scan, 0) + coalesce(idx_scan, 0)), 0)
                            FROM pg_stat_user_tables WHERE relname LIKE 'sbtest%'
                UNION ALL SELECT 'n_tup_ins', coalesce(sum(n_tup_ins), 0) FROM pg_stat_user_tables WHERE relname LIKE 'sbtest%'
                UNION ALL SELECT 'n_tup_upd', coalesce(sum(n_tup_upd), 0) FROM pg_stat_user_tables WHERE relname LIKE 'sbtest%'
                UNION ALL SELECT 'n_tup_del', coalesce(sum(n_tup_del), 0) FROM pg_stat_user_tables WHERE relname LIKE 'sbtest%'
                UNION ALL SELECT 'pss:' || q, sum(calls) FROM (
                    SELECT regexp_replace(regexp_replace(regexp_replace(query,
                               '(VALUES\s*\([^)]*\)).*', '\1'), 'sbtest[0-9]+', 'sbtest#', 'g'),
                               '\s+', '_', 'g') AS q, calls
                      FROM pg_stat_statements
                     WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'sbtest')
                       AND userid = (SELECT oid FROM pg_roles WHERE rolname = 'sbtest')) s
                 GROUP BY q"
        ;;
    esac
}

# tool TOOL OUT ARGS...: run sysbench or `pgolab bench` with ARGS; stdout in OUT, stderr in
# OUT.err; the exit status in RC.
tool() {
    local t=$1 out=$2
    shift 2
    case $t in
    sysbench) timeout -k 5 "$E2E_CMD_TIMEOUT" "$SYSBENCH" "$@" >"$out" 2>"$out.err" ;;
    pgolab) timeout -k 5 "$E2E_CMD_TIMEOUT" "$PGOLAB" bench "$@" >"$out" 2>"$out.err" ;;
    esac
    RC=$?
}
# must TOOL OUT ARGS...: tool, and a failure is recorded (FAILED) for the checks to report.
must() {
    tool "$@"
    if [ "$RC" -ne 0 ]; then
        echo "$1 ${*:3} -> exit $RC: $(tail -q -n 3 "$2.err" "$2" 2>/dev/null | tr '\n' ' ')" >>"$FAILED"
    fi
}

# measure DRIVER TOOL DIR EVENTS ARGS...: the per-run setup of a tool (its connections, statement
# preparation; on PostgreSQL every Parse outside a transaction is a transaction of its own) is
# the same in a 1-event run and an EVENTS-event run, so the per-transaction cost is
# (delta(EVENTS) - delta(1)) / (EVENTS - 1), and delta(1) - that is the setup, reported below.
# bulk_insert numbers its rows from 1 in every run: its table is recreated between the runs.
# Distinct seeds: sysbench seeds from time() in seconds, so two runs started in the same second
# draw the same numbers, and the second run's first UPDATE of c would write the value the first
# run just wrote (0 rows changed: "other", not "write", on MariaDB).
measure() {
    local drv=$1 t=$2 d=$3 events=$4 wl=$5
    shift 5
    local -a run=("$@" --threads=1 --time=0 --rand-type=uniform)
    counters "$drv" >"$d/c1a"
    must "$t" "$d/run1.out" "${run[@]}" --rand-seed=1 --events=1 "$wl" run
    counters "$drv" >"$d/c1b"
    if [ "$wl" = bulk_insert ]; then
        must "$t" "$d/x.out" "$@" --threads=1 "$wl" cleanup
        must "$t" "$d/x.out" "$@" --threads=1 "$wl" prepare
    fi
    counters "$drv" >"$d/cNa"
    must "$t" "$d/runN.out" "${run[@]}" --rand-seed=2 --events="$events" "$wl" run
    counters "$drv" >"$d/cNb"
}

# per_txn DIR EVENTS: "name per-transaction setup" for every server counter of DIR's runs.
per_txn() {
    awk -v n="$2" '
        FNR == 1 { f++ }
        { v[f, $1] = $2; names[$1] = 1 }
        END {
            for (k in names) {
                d1 = v[2, k] - v[1, k]; dn = v[4, k] - v[3, k]
                p = (dn - d1) / (n - 1)
                printf "%s %.6f %.6f\n", k, p, d1 - p
            }
        }' "$1/c1a" "$1/c1b" "$1/cNa" "$1/cNb" | sort
}
# client DIR EVENTS: the same for what the tool reported (read/write/other/transactions/errors).
client() {
    local d=$1 n=$2 k
    final_vars "$d/run1.out" A_
    final_vars "$d/runN.out" B_
    for k in read write other transactions ignored_errors reconnects; do
        local a="A_$k" b="B_$k"
        if [ -n "${!a}" ] && [ -n "${!b}" ]; then
            echo "$k $(calc "(${!b} - ${!a}) / ($n - 1)")"
        else
            echo "$k missing"
        fi
    done
}

# statements DIR TOOL ARGS...: MariaDB's general log of a 5-event run, reduced by stmts.pl.
cat >"$TMP/stmts.pl" <<'PERL'
# stmts.pl SIZE < general.log: what one benchmark connection executed, tool-independently:
# the statements with literals and table numbers normalised (repeats counted), how each kind
# was sent (Execute = server-side prepared, Query = text), and properties of the values.
use strict; use warnings;
my $size = shift;
my (@e, %n);
while (my $l = <STDIN>) {
    chomp $l;
    # "261130 14:31:35\t     8 Query\t..." on the first line of a second, "\t\t     8 Query\t..."
    # on the others
    if ($l =~ /^(?:\d{6} [ \d]\d:\d\d:\d\d\t|\t\t|\d{4}-\d\d-\d\dT[\d:.]+Z\t)\s*(\d+) (\w+(?: \w+)?)\t(.*)$/) {
        push @e, [$1, $2, $3];
    } elsif (@e && $l !~ /^(?:Time\s|Tcp port:|\/)/) {
        $e[-1][2] .= " $l";
    }
}
# the benchmark's connections: those of the sbtest account (not the observer's, root)
my %bench = map { $_->[0] => 1 } grep { $_->[1] eq "Connect" && $_->[2] =~ /^sbtest@/ } @e;
@e = grep { $bench{$_->[0]} && ($_->[1] eq "Execute" || $_->[1] eq "Query") } @e;
$n{$_->[0]}++ for @e;
my ($conn) = sort { $n{$b} <=> $n{$a} } keys %n;
@e = grep { $_->[0] eq $conn } @e if defined $conn;
my (@seq, %how, @seg, $tx);
$tx = grep { $_->[2] =~ /^\s*BEGIN\s*$/ } @e;
my ($one_table, $ids_vary, $di_same, $in_range, %width) = ("yes", "n/a", "n/a", "yes");
my $flush = sub {
    my %tables;
    my @pt;
    for my $i (0 .. $#seg) {
        my ($k, $sql) = @{$seg[$i]};
        my $g = $k =~ /^(DELETE|INSERT INTO sbtest# \(id)/ ? "delete+insert" : $k;
        $tables{$g}{$1} = 1 while $sql =~ /\bsbtest(\d+)\b/g;
        push @pt, $1 if $k =~ /^SELECT c FROM sbtest# WHERE id=N$/ && $sql =~ /id=(\d+)/;
        if ($k =~ /^DELETE/ && $i < $#seg && $seg[$i + 1][0] =~ /^INSERT/) {
            my ($d) = $sql =~ /id=(\d+)/;
            my ($v) = $seg[$i + 1][1] =~ /VALUES \((\d+)/;
            $di_same = "no" if !defined $v || $d != $v;
            $di_same = "yes" if $di_same eq "n/a";
        }
    }
    $one_table = "no" if grep { keys %{$tables{$_}} > 1 } keys %tables;
    if (@pt > 1) {
        my %u = map { $_ => 1 } @pt;
        $ids_vary = keys %u > 1 ? ($ids_vary eq "no" ? "no" : "yes") : "no";
    }
    @seg = ();
};
for (@e) {
    (my $sql = $_->[2]) =~ s/\s+/ /g;
    $sql =~ s/^ | $//g;
    (my $k = $sql) =~ s/'[^']*'/'S'/g;
    $k =~ s/\bsbtest\d+\b/sbtest#/g;
    $k =~ s/\b\d+\b/N/g;
    $flush->() if $tx && $k eq "BEGIN";
    push @seg, [$k, $sql];
    $flush->() unless $tx;
    if (@seq && $seq[-1][1] eq $k) { $seq[-1][0]++ } else { push @seq, [1, $k] }
    $how{$k}{$_->[1]} = 1;
    $width{$2 - $1} = 1 while $sql =~ /BETWEEN (\d+) AND (\d+)/g;
    $in_range = "no" if ($sql =~ /\bid=(\d+)/ && ($1 < 1 || $1 > $size));
}
$flush->();
printf "statements: %d\n", scalar @e;
print "  ${\ $_->[0]} x $_->[1]\n" for @seq;
print "sent as: $_ ", join("+", sort keys %{$how{$_}}), "\n" for sort keys %how;
print "one table per statement group in an event: $one_table\n";
print "point select ids drawn per statement: $ids_vary\n";
print "DELETE and INSERT of a pair use the same id: $di_same\n";
print "BETWEEN widths: ", join(",", sort { $a <=> $b } keys %width) || "n/a", "\n";
print "ids in 1..$size: $in_range\n";
PERL
statements() {
    local d=$1 t=$2
    shift 2
    rm -f "$SD/general.log"
    my_sql "SET GLOBAL general_log_file = '$SD/general.log'; SET GLOBAL general_log = ON"
    must "$t" "$d/log.out" "$@"
    my_sql "SET GLOBAL general_log = OFF"
    perl "$TMP/stmts.pl" "$SIZE" <"$SD/general.log" >"$d/statements" 2>&1
    mv "$SD/general.log" "$d/general.log"
}

# ---- collect: everything each tool does, per driver and workload, before any check.
FAILED=$TMP/failed
: >"$FAILED"
R=$TMP/r
mkdir -p "$R"
collect() {  # collect DRIVER WORKLOAD TOOL
    local drv=$1 wl=$2 t=$3 d=$R/$1.$2.$3 events=$N
    local -a db shape_opts
    read -r -a db <<<"${CLIENT[$drv]}"
    mkdir -p "$d"
    case $wl in
    # sysbench's own cleanup of select_random_* asserts --tables=1; pgolab refuses other values.
    select_random_*) shape_opts=(--tables=1 "--table-size=$SIZE") ;;
    # one table per thread: --threads=2 shows that
    bulk_insert) shape_opts=(--threads=2) events=$N_BULK ;;
    *) shape_opts=(--tables=2 "--table-size=$SIZE") ;;
    esac
    # 1. prepare, schema and data. k follows --rand-type in prepare too, and the defaults differ
    # (sysbench 1.0: special, pgolab: uniform; §10.2): with sysbench's hot spot of k values the
    # k index of select_random_* is much smaller and PostgreSQL picks other plans. The
    # distributions themselves are compared in part 4.
    must "$t" "$d/prepare.out" "${db[@]}" "${shape_opts[@]}" --rand-type=uniform "$wl" prepare
    schema "$drv" >"$d/schema"
    shape "$drv" >"$d/shape"
    # 2. statement counts per transaction
    if [ "$wl" = bulk_insert ]; then
        must "$t" "$d/x.out" "${db[@]}" "${shape_opts[@]}" "$wl" cleanup
        shape_opts=(--threads=1)
        must "$t" "$d/x.out" "${db[@]}" "${shape_opts[@]}" "$wl" prepare
    fi
    measure "$drv" "$t" "$d" "$events" "$wl" "${db[@]}" "${shape_opts[@]}"
    malformed "$drv" >"$d/malformed"
    # 2b. the statements themselves (MariaDB's general log; the texts are the workload's, the
    # same for both drivers)
    if [ "$drv" = mysql ]; then
        if [ "$wl" = bulk_insert ]; then
            must "$t" "$d/x.out" "${db[@]}" "${shape_opts[@]}" "$wl" cleanup
            must "$t" "$d/x.out" "${db[@]}" "${shape_opts[@]}" "$wl" prepare
        fi
        statements "$d" "$t" "${db[@]}" "${shape_opts[@]}" --threads=1 --time=0 --rand-type=uniform \
            --rand-seed=3 --events=5 "$wl" run
    fi
    # 3. text output
    if [ "$wl" = bulk_insert ]; then
        must "$t" "$d/x.out" "${db[@]}" "${shape_opts[@]}" "$wl" cleanup
        must "$t" "$d/x.out" "${db[@]}" "${shape_opts[@]}" "$wl" prepare
    fi
    must "$t" "$d/format.out" "${db[@]}" "${shape_opts[@]}" --rand-type=uniform --time=2 \
        --report-interval=1 --histogram "$wl" run
    [ "$wl" = bulk_insert ] && shape_opts=(--threads=2)
    must "$t" "$d/cleanup.out" "${db[@]}" "${shape_opts[@]}" "$wl" cleanup
    tables "$drv" >"$d/after_cleanup"
}

start_s=$(date +%s)
for drv in "${DRIVERS[@]}"; do
    for wl in "${WORKLOADS[@]}"; do
        for t in sysbench pgolab; do
            collect "$drv" "$wl" "$t"
        done
    done
done
note "collected in $(($(date +%s) - start_s)) s"
is "$(<"$FAILED")" "" "every prepare/run/cleanup of both tools exited 0"

# ---- checks
# agree DESC SB PG [SLACK]: SB and PG (per transaction) agree within 1% of the larger one, plus
# SLACK (absolute; 0 when not given).
agree() {
    if awk -v a="$2" -v b="$3" -v s="${4:-0}" 'BEGIN {
            n = "^[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?$"
            if (a !~ n || b !~ n) exit 1
            d = a - b; if (d < 0) d = -d
            m = a < 0 ? -a : a; if ((b < 0 ? -b : b) > m) m = b < 0 ? -b : b
            exit !(d <= 0.01 * m + s + 1e-9)
        }'; then
        _tap_result 0 "$1"
    else
        _tap_result 1 "$1"
        diag "sysbench: $2 per transaction" "  pgolab: $3 per transaction (must agree within 1%)"
        return 1
    fi
}
val() { awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print "missing" }' "$1"; }
# kv_load NAME FILE: the "key value ..." lines of FILE into KV as NAME:key; kv VAR NAME KEY: VAR
# is that value, or "missing" (val without a process: the checks below make thousands)
declare -A KV
kv_load() { local k v rest; while read -r k v rest; do KV[$1:$k]=$v; done <"$2"; }
kv() { local -n _kv_out=$1; _kv_out=${KV[$2:$3]-missing}; }
setup() { awk -v k="$2" '$1 == k { printf "%.0f", $3 }' "$1"; }

# The text output's line kinds, as sysbench log parsers match them (reference/sysbench.md §7):
# "name<TAB>regex", most specific first; the final block with its exact columns (%-41s labels,
# latency values ending in column 53).
cat >"$TMP/format.pl" <<'PERL'
use strict; use warnings;
my ($sbf, $pgf) = @ARGV;
my $c41 = sub { quotemeta(sprintf("%-41s", $_[0])) };
my $rate = q{(?:\d{6,}|\d{5} |\d{4} {2}|\d{3} {3}|\d{2} {4}|\d {5}) \(\d+\.\d\d per sec\.\)};
my $lat = sub { "(?=.{53}\$)" . quotemeta("         $_[0]: ") . q{ *\d+\.\d\d} };
my @re = (
    [header => q{sysbench \d+\.\d+\.\d+ \(.+\)}],
    [blank => q{}],
    [running => q{Running the test with following options:}],
    [threads => q{Number of threads: \d+}],
    [report_every => q{Report intermediate results every \d+ second\(s\)}],
    [rng => q{Initializing random number generator from (?:current time|seed \(\d+\)\.)}],
    [init => q{Initializing worker threads\.\.\.}],
    [started => q{Threads started!}],
    [interval => q{\[ \d+s \] thds: \d+ tps: \d+\.\d\d qps: \d+\.\d\d \(r/w/o: \d+\.\d\d/\d+\.\d\d/\d+\.\d\d\) lat \(ms,\d+%\): \d+\.\d\d err/s: \d+\.\d\d reconn/s: \d+\.\d\d}],
    [hist_title => q{Latency histogram \(values are in milliseconds\)}],
    [hist_head => q{       value  ------------- distribution ------------- count}],
    # "%12.3f |%-40.*s %lu": stars then spaces, 40 characters in all
    [hist_row => q{(?=.{12} \|) *\d+\.\d{3} \|\** *(?<=\|[* ]{40}) \d+}],
    [hist_end => q{ }],
    [sql_stats => q{SQL statistics:}],
    [performed => q{    queries performed:}],
    (map { ["count_$_" => $c41->("        $_:") . q{\d+}] } qw(read write other total)),
    (map { (my $n = $_) =~ s/ /_/g; ["rate_$n" => $c41->("    $_:") . $rate] }
        ("transactions", "queries", "ignored errors", "reconnects")),
    [general => q{General statistics:}],
    [total_time => $c41->("    total time:") . q{\d+\.\d{4}s}],
    [total_events => $c41->("    total number of events:") . q{\d+}],
    [latency => q{Latency \(ms\):}],
    (map { ["lat_$_" => $lat->($_)] } qw(min avg max)),
    [lat_pct => "(?=.{53}\$)" . q{        [ \d]{2}\dth percentile: *\d+\.\d\d}],
    [lat_sum => $lat->("sum")],
    [fairness => q{Threads fairness:}],
    [fair_events => q{    events \(avg/stddev\):           \d+\.\d{4}/\d+\.\d\d}],
    [fair_time => q{    execution time \(avg/stddev\):   \d+\.\d{4}/\d+\.\d\d}],
);
my $REPEAT = qr/^(interval|hist_row)$/;
sub kinds {
    my ($file, $label, $seen) = @_;
    open my $fh, "<", $file or die "$file: $!";
    my @seq;
    while (my $l = <$fh>) {
        chomp $l;
        my ($k) = map { $_->[0] } grep { $l =~ /^$_->[1]$/ } @re;
        if (!defined $k) { print "uncovered $label: '$l'\n"; $k = "?" }
        $seen->{$_->[0]}++ for grep { $l =~ /^$_->[1]$/ } @re;
        push @seq, $k unless @seq && $seq[-1] eq $k && $k =~ $REPEAT;
    }
    return join(" ", @seq);
}
my (%sb, %pg);
my $s1 = kinds($sbf, "sysbench", \%sb);
my $s2 = kinds($pgf, "pgolab", \%pg);
for (@re) {
    my $k = $_->[0];
    print "unused $k\n" unless $sb{$k};
    print "missing $k\n" if $sb{$k} && !$pg{$k};
}
print "sequence sysbench: $s1\nsequence pgolab:   $s2\n" if $s1 ne $s2;
PERL

# KNOWN DIFFERENCES (asserted as such):
# * Both tools prepare BEGIN and COMMIT on MariaDB (which accepts them as server-side prepared
#   statements; reference §3 says MySQL refuses BEGIN), so Com_stmt_execute counts them in
#   both, and on PostgreSQL, where pg_stat_statements records the forms (part 2).
# * oltp_delete: the ids drawn are random, so how many DELETEs find their row (rows deleted;
#   sysbench's "write") and how many find it gone ("other") differ by chance. The server's rows
#   deleted must equal the tool's own "write" count exactly, and rows deleted plus the tool's
#   "other" (DELETEs that found nothing) is compared across tools.
TABLE=$TMP/table
: >"$TABLE"
for drv in "${DRIVERS[@]}"; do
    if [ "$drv" = mysql ]; then
        list="Com_select Com_insert Com_update Com_delete Com_begin Com_commit Com_rollback Com_stmt_execute $MY_ROWS"
        rowdel=${MY_ROWS##* }  # Handler_delete, or Innodb_rows_deleted on MySQL
    else
        list=$PG_COUNTERS
        rowdel=n_tup_del
    fi
    for wl in "${WORKLOADS[@]}"; do
        note "---- $drv $wl"
        sb=$R/$drv.$wl.sysbench pg=$R/$drv.$wl.pgolab
        n=$N
        [ "$wl" = bulk_insert ] && n=$N_BULK
        L="$drv $wl"

        # 1. schema, data, cleanup
        like "$(<"$sb/schema")" "^== sbtest1$" "$L: sysbench's prepare created sbtest1"
        is "$(<"$pg/schema")" "$(<"$sb/schema")" "$L: prepare: same tables, columns, types, defaults and indexes"
        is "$(<"$pg/shape")" "$(<"$sb/shape")" "$L: prepare: same row counts, id ranges, k in 1..$SIZE, c/pad templates"
        is "$(cat "$sb/after_cleanup" "$pg/after_cleanup" | tr '\n' ' ')" "" "$L: cleanup drops every sbtest table"
        is "$(<"$sb/malformed") $(<"$pg/malformed")" "0 0" \
            "$L: after the runs every c and pad is still a full template (both tools)"

        # 2. server counters per transaction
        per_txn "$sb" "$n" >"$sb/per_txn"
        per_txn "$pg" "$n" >"$pg/per_txn"
        client "$sb" "$n" >"$sb/client"
        client "$pg" "$n" >"$pg/client"
        row="$drv $wl"
        KV=()
        kv_load sbp "$sb/per_txn"
        kv_load pgp "$pg/per_txn"
        for k in $list; do
            kv a sbp "$k"
            kv b pgp "$k"
            desc="$L: $k per transaction"
            if [ "$k" = "$rowdel" ] && [ "$wl" = oltp_delete ]; then
                # exact: the rows the server deleted are what the tool counted as writes
                is "$(printf '%.4f %.4f' "$a" "$b")" \
                    "$(printf '%.4f %.4f' "$(val "$sb/client" write)" "$(val "$pg/client" write)")" \
                    "$L: $k per transaction = the tool's own writes (sysbench, pgolab)"
                a=$(calc "$a + $(val "$sb/client" other)") b=$(calc "$b + $(val "$pg/client" other)")
                desc="$L: $k + the tool's 'other' (DELETEs that found no row) per transaction"
            fi
            # a server counter is global: one statement of another session inside a window
            # (the server's own housekeeping, a monitoring query) moves the rate by 1/(n-1),
            # which is no difference between the tools; a real one is a statement per
            # transaction or a fraction of one many times larger
            agree "$desc" "$a" "$b" "$(calc "1.5 / ($n - 1)")"
            printf -v ab '%.4g/%.4g' "$a" "$b"
            row="$row $k=$ab"
        done
        # the statement forms PostgreSQL recorded (pg_stat_statements), per transaction
        if [ "$drv" = pgsql ]; then
            forms=$(cat "$sb/per_txn" "$pg/per_txn" | awk '$1 ~ /^pss:/ { print $1 }' | sort -u)
            like "$(grep -c '^pss:' "$sb/per_txn")" '^[1-9]' "$L: pg_stat_statements recorded sysbench's statements"
            for k in $forms; do
                kv a sbp "$k"
                kv b pgp "$k"
                [ "$a" = missing ] && a=0
                [ "$b" = missing ] && b=0
                # what both tools send once per run (their setup) is no statement form of a
                # transaction
                [ "$(calc "($a < 0.0005 && $a > -0.0005 && $b < 0.0005 && $b > -0.0005)")" = 1 ] && continue
                agree "$L: pg_stat_statements: ${k#pss:} calls per transaction" "$a" "$b"
                printf -v ab '%.4g/%.4g' "$a" "$b"
                case $k in pss:BEGIN | pss:COMMIT) row="$row ${k#pss:}=$ab" ;; esac
            done
        fi
        # what the tools reported
        if [ "$wl" = oltp_delete ]; then
            keys="read write+other"
        else
            keys="read write other"
        fi
        for k in $keys; do
            if [ "$k" = write+other ]; then
                a=$(calc "$(val "$sb/client" write) + $(val "$sb/client" other)")
                b=$(calc "$(val "$pg/client" write) + $(val "$pg/client" other)")
            else
                a=$(val "$sb/client" "$k") b=$(val "$pg/client" "$k")
            fi
            agree "$L: reported $k per transaction" "$a" "$b"
            printf -v ab '%.4g/%.4g' "$a" "$b"
            row="$row $k=$ab"
        done
        is "$(val "$sb/client" transactions) $(val "$pg/client" transactions)" "1 1" \
            "$L: --events is exact (one transaction per event, both tools)"
        is "$(val "$sb/client" ignored_errors)/$(val "$sb/client" reconnects) $(val "$pg/client" ignored_errors)/$(val "$pg/client" reconnects)" \
            "0/0 0/0" "$L: no ignored errors or reconnects (both tools)"
        setup_sb='' setup_pg=''
        for k in Com_stmt_prepare Connections xact_commit; do
            grep -q "^$k " "$sb/per_txn" || continue
            setup_sb="$setup_sb $k=$(setup "$sb/per_txn" "$k")"
            setup_pg="$setup_pg $k=$(setup "$pg/per_txn" "$k")"
        done
        echo "$row | setup per run, sysbench:$setup_sb; pgolab:$setup_pg" >>"$TABLE"

        # 2b. statement texts and order
        if [ "$drv" = mysql ]; then
            like "$(<"$sb/statements")" "^statements: [1-9]" "$L: sysbench's statements are in the general log"
            is "$(<"$pg/statements")" "$(<"$sb/statements")" \
                "$L: general log of 5 events: same statements in the same order, sent the same way, one table per group, ids per statement"
        fi

        # 3. text output
        perl "$TMP/format.pl" "$sb/format.out" "$pg/format.out" >"$pg/format.diff"
        is "$(grep '^unused' "$pg/format.diff")" "" \
            "$L: output: sysbench's output exercises every parser regex (intervals, histogram, final block)"
        is "$(grep '^missing' "$pg/format.diff")" "" \
            "$L: output: every parser regex that matches sysbench's output matches pgolab's"
        is "$(grep '^uncovered' "$pg/format.diff")" "" "$L: output: every line of both outputs is parsed"
        is "$(grep '^sequence' "$pg/format.diff")" "" \
            "$L: output: the same kinds of lines in the same order (repeated interval/histogram lines as one)"
    done
done

# ---- 4. random distributions: k of a prepared table is drawn from the tool's default
# distribution (sysbench 1.0: special) or --rand-type's, as are the ids of the runs. sysbench's
# and pgolab's k values must come from the same distribution: the two-sample Kolmogorov-Smirnov
# distance D must stay below its critical value at alpha = 1e-4,
# sqrt(-ln(alpha/2)/2) * sqrt(2/n) (2.23 * 0.01 = 0.0223 for n = 20000 rows each).
DIST_SIZE=20000
KS_CRIT=$(calc "sqrt(-log(0.0001 / 2) / 2) * sqrt(2 / $DIST_SIZE)")
ks() {  # ks FILE1 FILE2: D of the two samples of integers (one per line)
    perl -e '
        sub load { open my $f, "<", $_[0] or die; my @v = sort { $a <=> $b } map { chomp; $_ } <$f>; \@v }
        my ($x, $y) = (load($ARGV[0]), load($ARGV[1]));
        my ($n, $m, $i, $j, $d) = (scalar @$x, scalar @$y, 0, 0, 0);
        die "empty sample\n" unless $n && $m;
        while ($i < $n || $j < $m) {
            my $v = $j >= $m || ($i < $n && $x->[$i] <= $y->[$j]) ? $x->[$i] : $y->[$j];
            $i++ while $i < $n && $x->[$i] == $v;
            $j++ while $j < $m && $y->[$j] == $v;
            my $e = abs($i / $n - $j / $m);
            $d = $e if $e > $d;
        }
        printf "%.4f\n", $d;
    ' "$1" "$2"
}
drv=${DRIVERS[0]}
read -r -a db <<<"${CLIENT[$drv]}"
: >"$FAILED"
for rt in special uniform gaussian pareto; do
    for t in sysbench pgolab; do
        opt=("--rand-type=$rt")
        [ "$t" = sysbench ] && [ "$rt" = special ] && opt=()  # sysbench 1.0's default
        must "$t" "$TMP/dist.out" "${db[@]}" --tables=1 --table-size=$DIST_SIZE "${opt[@]}" oltp_read_only prepare
        sqlq "$drv" "SELECT k FROM sbtest1" >"$TMP/k.$rt.$t"
        must "$t" "$TMP/dist.out" "${db[@]}" --tables=1 oltp_read_only cleanup
    done
    is "$(wc -l <"$TMP/k.$rt.sysbench") $(wc -l <"$TMP/k.$rt.pgolab")" "$DIST_SIZE $DIST_SIZE" \
        "k distribution $rt: $DIST_SIZE rows from each tool"
    D=$(ks "$TMP/k.$rt.sysbench" "$TMP/k.$rt.pgolab")
    note "k distribution $rt: KS distance sysbench/pgolab $D"
    cmp_ok "$D" '<' "$KS_CRIT" \
        "k distribution $rt$([ $rt = special ] && echo " (sysbench's default)"): sysbench and pgolab agree (KS distance < $(printf '%.4f' "$KS_CRIT"))"
done
cmp_ok "$(ks "$TMP/k.special.sysbench" "$TMP/k.uniform.pgolab")" '>' "$(calc "10 * $KS_CRIT")" \
    "k distribution: the KS distance tells special from uniform (the check can fail)"
is "$(<"$FAILED")" "" "every prepare/cleanup of the distribution checks exited 0"

# The per-transaction table (sysbench/pgolab) for the log.
note "" "per transaction, sysbench/pgolab:"
while read -r line; do note "$line"; done <"$TABLE"
note "total $(($(date +%s) - start_s)) s"
done_testing
