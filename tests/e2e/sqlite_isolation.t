#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# Proves the SQLite variant under test is the only SQLite code running in the measured process.
# The variant is built from Debian's SQLite source with a marked source id and without
# -Bsymbolic (so its internal calls to its own exported functions could be interposed). Plainly
# loaded, its version/source id, the engine's own answer to sqlite_source_id() and the file
# holding sqlite3_step all belong to the variant, and a running `bench run` maps no other
# SQLite. With another libsqlite3 already in the process (the system one, via LD_PRELOAD) the
# default load refuses in one line, for `info` and `run` alike; PGOLAB_SQLITE_LOAD=dlmopen
# then loads the variant into a private namespace where the same identity checks hold. A
# negative control loads the variant the naive way (dlopen RTLD_GLOBAL) beside the preloaded
# SQLite and must NOT pass the check.
# The source and amalgamation are the shared fixture (lib.sh sqlite_amalgamation). The checks
# count themselves (ok RC DESC, below, replaces lib.sh's ok).
. "$(dirname "$0")/lib.sh"
SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
T=$TMP
n=0; fail=0
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
json() { perl -MJSON::PP -e 'my $j = decode_json(join "", <STDIN>); print $j->{library}{$ARGV[0]} // "", "\n"' "$1"; }
# identity OUT WHAT: three checks that the JSON of `bench info` in OUT is the variant's
identity() {
    case "$(echo "$1" | json source_id)" in *pgolab-isolation-test) r=0 ;; *) r=1 ;; esac
    ok $r "$2: sqlite3_sourceid() is the variant's"
    case "$(echo "$1" | json engine_source_id)" in *pgolab-isolation-test) r=0 ;; *) r=1 ;; esac
    ok $r "$2: the engine's own sqlite_source_id() is the variant's (no interposed internal calls)"
    [ "$(readlink -f "$(echo "$1" | json loaded_from)")" = "$(readlink -f "$T/libvariant.so")" ]
    ok $? "$2: sqlite3_step's code lies in the variant's mapping"
}

echo "1..19"
# A variant whose source id is marked, built from Debian's SQLite source, without -Bsymbolic.
sqlite_amalgamation
ok $([ -f "$SQLITE_SRC/src/sqliteInt.h" ] && [ -s "$SQLITE_AMALG/sqlite3.c" ]; echo $?) \
    "apt-get source sqlite3 gave a source tree, and its amalgamation"
sed 's/^#define SQLITE_SOURCE_ID *"\(.*\)"/#define SQLITE_SOURCE_ID "\1 pgolab-isolation-test"/' \
    "$SQLITE_AMALG/sqlite3.c" > "$T/variant.c"
gcc -O0 -fPIC -shared -DSQLITE_THREADSAFE=1 -o "$T/libvariant.so" "$T/variant.c" -lpthread -lm -ldl
ok $? "variant library built with a marked source id"

# The measured process links no SQLite of its own.
readelf -d "$PGOLAB" | grep -q 'NEEDED.*libsqlite3'
ok $([ $? -ne 0 ]; echo $?) "the pgolab binary does not link libsqlite3"

# Plain load: the variant alone in the process.
out=$("$PGOLAB" bench --sqlite-library="$T/libvariant.so" --format=json info)
ok $? "pgolab loads the variant"
case "$(echo "$out" | json isolation)" in dlopen*only\ SQLite*) r=0 ;; *) r=1 ;; esac
ok $r "it is loaded plainly, as the only SQLite in the process ($(echo "$out" | json isolation))"
identity "$out" "plain"

# A running `bench run` (past "Threads started!") maps the variant and no other SQLite.
"$PGOLAB" bench --sqlite-library="$T/libvariant.so" --sqlite-db="$T/sb.db" --table-size=100 \
    oltp_point_select prepare >/dev/null 2>&1
"$PGOLAB" bench --sqlite-library="$T/libvariant.so" --sqlite-db="$T/sb.db" --table-size=100 \
    --time=60 oltp_point_select run >"$T/running.out" 2>&1 &
pid=$!
for _ in $(seq 300); do
    grep -q 'Threads started!' "$T/running.out" 2>/dev/null && break
    sleep 0.1
done
maps=$(cat /proc/$pid/maps 2>/dev/null)
kill -INT $pid 2>/dev/null; wait $pid 2>/dev/null
case "$maps" in *libvariant.so*) r=0 ;; *) r=1 ;; esac
ok $r "bench run maps the variant"
others=$(echo "$maps" | awk '$6 ~ /\// {print $6}' | sort -u | while read -r f; do
    case "${f##*/}" in libvariant.so) ;; *[Ss][Qq][Ll][Ii][Tt][Ee]*) echo "$f" ;; esac; done)
ok $([ -z "$others" ]; echo $?) "bench run maps no other SQLite${others:+ (found: $others)}"

# Another SQLite already in the process: refused in one line, nothing measured.
err=$(LD_PRELOAD="$SYSLIB" "$PGOLAB" bench --sqlite-library="$T/libvariant.so" --format=json info 2>&1 >"$T/refused.out")
rc=$?
ok $([ $rc -eq 1 ] && [ ! -s "$T/refused.out" ]; echo $?) "with the system SQLite preloaded, info exits 1 with nothing on stdout (exit $rc)"
case "$err" in
    "FATAL: --sqlite-library=$T/libvariant.so: another SQLite is already loaded in this process ($SYSLIB; LD_PRELOAD=$SYSLIB)"*PGOLAB_SQLITE_LOAD=dlmopen*) r=0 ;;
    *) r=1 ;;
esac
ok $([ $r -eq 0 ] && [ "$(echo "$err" | wc -l)" -eq 1 ]; echo $?) "the refusal is one line naming the preloaded file and the way out"
LD_PRELOAD="$SYSLIB" "$PGOLAB" bench --sqlite-library="$T/libvariant.so" --sqlite-db="$T/sb.db" \
    --table-size=100 --time=1 oltp_point_select run >"$T/run.out" 2>"$T/run.err"
rc=$?
ok $([ $rc -eq 1 ] && ! grep -q 'transactions:' "$T/run.out" && grep -q 'another SQLite' "$T/run.err"; echo $?) \
    "bench run (the measured process) refuses the same way (exit $rc)"

# Asked for explicitly: a private namespace beside the preloaded SQLite.
out=$(LD_PRELOAD="$SYSLIB" PGOLAB_SQLITE_LOAD=dlmopen "$PGOLAB" bench --sqlite-library="$T/libvariant.so" --format=json info)
ok $? "PGOLAB_SQLITE_LOAD=dlmopen loads the variant while the system SQLite is preloaded"
case "$(echo "$out" | json isolation)" in dlmopen*) r=0 ;; *) r=1 ;; esac
ok $r "it is in its own namespace ($(echo "$out" | json isolation))"
identity "$out" "dlmopen beside a preloaded SQLite"

# Negative control: naive loading under interposition must fail the same check (mixed
# identity or a crash), which shows the check above can fail.
neg=$(LD_PRELOAD="$SYSLIB" PGOLAB_SQLITE_LOAD=global "$PGOLAB" bench --sqlite-library="$T/libvariant.so" \
      --format=json info 2>/dev/null)
rc=$?
case "$(echo "$neg" | json engine_source_id 2>/dev/null)" in *pgolab-isolation-test) mixed=1 ;; *) mixed=0 ;; esac
[ $rc -ne 0 ] || [ $mixed = 0 ]
ok $? "control: naive dlopen(RTLD_GLOBAL) is caught (exit $rc)"
exit $fail
