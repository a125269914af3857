#!/bin/bash
# bench_errors.t: bad input makes `pgolab bench` exit 1 with one line on stderr that names the
# offending input (unknown option/test/command, run before prepare, bad --threads/--time/
# --events/--percentile/--format/--rand-type/--table-size, a SQLite journal or synchronous mode
# SQLite would ignore, --db-ps-mode, --verbosity, a --sqlite-library that is not a
# shared library or not SQLite), and never prints a report. A disk that fills up during prepare
# (ulimit -f) is a clean failure too: exit 1, an I/O / disk-full error, no report.
. "$(dirname "$0")/lib.sh"

DB=$TMP/sb.db

pg prep --sqlite-db="$DB" --table-size=200 oltp_read_write prepare
[ "$RC" -eq 0 ] || bail_out "prepare failed: $(<"$TMP/prep.err")"
ok_db=(--sqlite-db="$DB" --table-size=200)

note "---- command line"
bench_fails "unknown option" '^FATAL: invalid option: --xyz \(see pgolab bench --help\)$' "${ok_db[@]}" --xyz oltp_read_write run
bench_fails "unknown option with a value" '^FATAL: invalid option: --no-such-thing=1 \(see pgolab bench --help\)$' "${ok_db[@]}" --no-such-thing=1 oltp_read_write run
bench_fails "a typo: the nearest option" '^FATAL: invalid option: --thread=1 \(did you mean --threads\? see pgolab bench --help\)$' "${ok_db[@]}" --thread=1 oltp_read_write run
bench_fails "a typo with '_': the nearest option" '^FATAL: invalid option: --tabel_size=4 \(did you mean --table-size\? see pgolab bench --help\)$' "${ok_db[@]}" --tabel_size=4 oltp_read_write run
bench_fails "--time out of range" "^FATAL: invalid value for --time: '99999999999999999999' is out of range \(at most 9223372036854775807\)$" "${ok_db[@]}" --time=99999999999999999999 oltp_read_write run
bench_fails "unknown test" "nosuch_test.*oltp_read_write.*oltp_read_only.*oltp_write_only.*oltp_point_select" \
    "${ok_db[@]}" nosuch_test run
bench_fails "unknown command" "frobnicate" "${ok_db[@]}" oltp_read_write frobnicate
bench_fails "missing command" "[Cc]ommand is required.*prepare.*run.*cleanup" "${ok_db[@]}" oltp_read_write
bench_fails "--threads=0" '--threads=0' "${ok_db[@]}" --threads=0 oltp_read_write run
bench_fails "--threads=-1" '--threads=-1' "${ok_db[@]}" --threads=-1 oltp_read_write run
bench_fails "--threads=abc" "--threads.*abc" "${ok_db[@]}" --threads=abc oltp_read_write run
bench_fails "--time=-5" '--time=-5' "${ok_db[@]}" --time=-5 oltp_read_write run
bench_fails "--events=-1" '--events=-1' "${ok_db[@]}" --events=-1 oltp_read_write run
bench_fails "--percentile=101" '--percentile=101' "${ok_db[@]}" --percentile=101 oltp_read_write run
bench_fails "--histogram with --percentile=0" '--histogram.*--percentile=0' "${ok_db[@]}" --histogram --percentile=0 oltp_read_write run
bench_fails "--format=xml" '--format=xml' "${ok_db[@]}" --format=xml oltp_read_write run
bench_fails "--rand-type=foo" '--rand-type=foo' "${ok_db[@]}" --rand-type=foo oltp_read_write run
bench_fails "--sqlite-journal-mode=bogus" '^FATAL: --sqlite-journal-mode=bogus: expected delete, truncate, persist, memory, wal or off$' "${ok_db[@]}" --sqlite-journal-mode=bogus oltp_read_write run
bench_fails "--sqlite-synchronous=bogus" '^FATAL: --sqlite-synchronous=bogus: expected off, normal, full or extra' "${ok_db[@]}" --sqlite-synchronous=bogus oltp_read_write run
bench_fails "--db-ps-mode=x" '^FATAL: --db-ps-mode=x: expected auto or disable$' "${ok_db[@]}" --db-ps-mode=x oltp_read_write run
bench_fails "--verbosity=9" '^FATAL: --verbosity=9: expected a level from 0' "${ok_db[@]}" --verbosity=9 oltp_read_write run
pg jm "${ok_db[@]}" --sqlite-journal-mode=DELETE --sqlite-synchronous=FULL --time=1 oltp_point_select run
is "$RC" 0 "--sqlite-journal-mode=DELETE --sqlite-synchronous=FULL: accepted, any case"
bench_fails "--table-size=0" '--table-size=0' --sqlite-db="$TMP/ts0.db" --table-size=0 oltp_read_write prepare
ok "--table-size=0: no database file created" test ! -e "$TMP/ts0.db"

note "---- usage and help"
bench_fails "no test and no command" '^FATAL: a test name and a command are required'
"$PGOLAB" >"$TMP/noargs.out" 2>"$TMP/noargs.err"
is "$?" 1 "pgolab without arguments: exit 1"
like "$(head -1 "$TMP/noargs.err")" '^usage: pgolab <command>' "pgolab without arguments: usage on stderr"
is "$(wc -c <"$TMP/noargs.out" | tr -d ' ')" 0 "pgolab without arguments: nothing on stdout"
"$PGOLAB" server >"$TMP/srvnoargs.out" 2>"$TMP/srvnoargs.err"
is "$?" 1 "pgolab server without a command: exit 1"
like "$(<"$TMP/srvnoargs.err")" '^FATAL: a command is required: start, stop, status or help$' "pgolab server without a command: one line"
for h in --help -h help; do
    pg "gen$h" "$h"
    is "$RC/$(grep -c '^General options:' "$TMP/gen$h.out")" "0/1" "bench $h: exit 0, the general usage"
done
pg testhelp oltp_point_select help
pg testdashhelp oltp_point_select --help
is "$RC" 0 "bench oltp_point_select --help: exit 0"
is "$(<"$TMP/testdashhelp.out")" "$(<"$TMP/testhelp.out")" "bench TEST --help = bench TEST help"
like "$(<"$TMP/testhelp.out")" "--point-selects" "bench TEST help lists the test's options"
for h in "--help" "start --help" "help"; do
    # shellcheck disable=SC2086
    "$PGOLAB" server $h >"$TMP/srvhelp.out" 2>&1
    is "$?/$(grep -c '^Usage:$' "$TMP/srvhelp.out")" "0/1" "server $h: exit 0, the usage"
done
pg info info
unlike "$(<"$TMP/info.out")" "\(null\)" "bench info: no (null) values"

note "---- prepare over an existing table"
pg again "${ok_db[@]}" oltp_read_write prepare
is "$RC" 1 "prepare twice: exit status 1"
like "$(<"$TMP/again.err")" "sbtest1.*already exists" "prepare twice: message names the table and says it exists"
like "$(<"$TMP/again.err")" 'already exists \(code 1\); run `pgolab bench oltp_read_write cleanup` with the same options first$' \
    "prepare twice: the message says to run cleanup first"
is "$(grep -c 'Inserting' "$TMP/again.out")" 0 "prepare twice: stops before inserting"
is "$(wc -l <"$TMP/again.err" | tr -d ' ')" 1 "prepare twice: one line on stderr"

note "---- run before prepare"
bench_fails "run without a database" "nodb\.db.*run prepare first" --sqlite-db="$TMP/nodb.db" oltp_read_write run
ok "run without a database: does not create the file" test ! -e "$TMP/nodb.db"
pg clean "${ok_db[@]}" oltp_read_write cleanup
is "$RC" 0 "cleanup: exit 0"
bench_fails "run after cleanup" "sbtest1.*run prepare first" "${ok_db[@]}" oltp_read_write run
pg prep1 --sqlite-db="$TMP/t1.db" --table-size=200 oltp_read_write prepare
bench_fails "run --tables=2 on a 1-table database" "sbtest2.*run prepare first" \
    --sqlite-db="$TMP/t1.db" --table-size=200 --tables=2 oltp_read_write run

note "---- --sqlite-library"
bench_fails "--sqlite-library=/etc/passwd" '--sqlite-library=/etc/passwd' "${ok_db[@]}" --sqlite-library=/etc/passwd oltp_read_write run
bench_fails "--sqlite-library=missing file" '--sqlite-library=/nonexistent/libsqlite3\.so' \
    "${ok_db[@]}" --sqlite-library=/nonexistent/libsqlite3.so oltp_read_write run
libz=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64|libz\.so\.1 / { print $NF; exit }')
[ -n "$libz" ] && [ -f "$libz" ] || libz=/lib/x86_64-linux-gnu/libz.so.1
if [ -f "$libz" ]; then
    bench_fails "--sqlite-library=libz" "--sqlite-library=${libz//./\\.}.*not a SQLite library" \
        "${ok_db[@]}" --sqlite-library="$libz" oltp_read_write run
else
    skip 4 "needs libz.so.1 (a library that is not SQLite; zlib1g); runs only here"
fi

note "---- disk full during prepare (ulimit -f 1024 KiB)"
full=$TMP/full.db
(
    trap '' XFSZ
    ulimit -f 1024
    exec timeout -k 5 "$E2E_CMD_TIMEOUT" "$PGOLAB" bench --sqlite-db="$full" --table-size=200000 oltp_read_write prepare
) >"$TMP/full.out" 2>"$TMP/full.err"
RC=$?
is "$RC" 1 "disk full: exit status 1"
like "$(<"$TMP/full.err")" '[Dd]isk I/O error|disk is full|[Nn]o space|File too large|SQLITE_(IOERR|FULL)' \
    "disk full: the error names the I/O / disk-full condition"
is "$(grep -c 'SQL statistics' "$TMP/full.out")" 0 "disk full: no report"
ok "disk full: prepare had started ('Inserting 200000 records')" grep -qxF "Inserting 200000 records into 'sbtest1'" "$TMP/full.out"
is "$(grep -c 'secondary index' "$TMP/full.out")" 0 "disk full: stops before the index step"
is "$(wc -l <"$TMP/full.err" | tr -d ' ')" 1 "disk full: one line on stderr"
cmp_ok "$(wc -c <"$TMP/full.err" | tr -d ' ')" '<' 1000 "disk full: the error line is short (not the whole INSERT)"
cmp_ok "$(stat -c %s "$full" 2>/dev/null || echo 0)" '<=' $((1024 * 1024)) "disk full: the file limit was in force"

done_testing
