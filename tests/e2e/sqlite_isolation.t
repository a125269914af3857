#!/usr/bin/env bash
# Proves the SQLite variant under test is the only SQLite code running in the measured process,
# even when another libsqlite3 is already loaded (here: the system one, via LD_PRELOAD) and the
# variant is built without -Bsymbolic: its version/source id, the engine's own answer to
# sqlite_source_id(), and the file holding sqlite3_step all belong to the variant. A negative
# control loads the same variant the naive way (dlopen RTLD_GLOBAL) and must NOT pass the check.
set -u
cd "$(dirname "$0")/../.."
PGOLAB=${PGOLAB:-$PWD/pgolab}
SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0; fail=0
ok() { n=$((n+1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
json() { perl -MJSON::PP -e 'my $j = decode_json(join "", <STDIN>); print $j->{library}{$ARGV[0]} // "", "\n"' "$1"; }

echo "1..7"
# A variant whose source id is marked, built from Debian's SQLite source, without -Bsymbolic.
( cd "$T" && apt-get source -qq sqlite3 >/dev/null 2>&1 ) 
src=$(ls -d "$T"/sqlite3-*/ 2>/dev/null | head -1)
ok $([ -n "$src" ] && [ -f "$src/src/sqliteInt.h" ]; echo $?) "apt-get source sqlite3 gave a source tree"
mkdir -p "$T/amalg"
( cd "$T/amalg" && "$src/configure" >/dev/null 2>&1 && make sqlite3.c >/dev/null 2>&1 )
sed 's/^#define SQLITE_SOURCE_ID *"\(.*\)"/#define SQLITE_SOURCE_ID "\1 pgolab-isolation-test"/' \
    "$T/amalg/sqlite3.c" > "$T/variant.c"
gcc -O0 -fPIC -shared -DSQLITE_THREADSAFE=1 -o "$T/libvariant.so" "$T/variant.c" -lpthread -lm -ldl
ok $? "variant library built with a marked source id"

out=$(LD_PRELOAD="$SYSLIB" "$PGOLAB" bench --sqlite-library="$T/libvariant.so" --format=json info)
ok $? "pgolab loads the variant while the system SQLite is preloaded"
case "$(echo "$out" | json source_id)" in *pgolab-isolation-test) r=0 ;; *) r=1 ;; esac
ok $r "sqlite3_sourceid() is the variant's"
case "$(echo "$out" | json engine_source_id)" in *pgolab-isolation-test) r=0 ;; *) r=1 ;; esac
ok $r "the engine's own sqlite_source_id() is the variant's (no interposed internal calls)"
[ "$(readlink -f "$(echo "$out" | json loaded_from)")" = "$(readlink -f "$T/libvariant.so")" ]
ok $? "sqlite3_step's code lies in the variant's mapping"

# Negative control: naive loading under interposition must fail the same check (mixed
# identity or a crash), which shows the check above can fail.
neg=$(LD_PRELOAD="$SYSLIB" PGOLAB_SQLITE_LOAD=global "$PGOLAB" bench --sqlite-library="$T/libvariant.so" \
      --format=json info 2>/dev/null)
rc=$?
case "$(echo "$neg" | json engine_source_id 2>/dev/null)" in *pgolab-isolation-test) mixed=1 ;; *) mixed=0 ;; esac
[ $rc -ne 0 ] || [ $mixed = 0 ]
ok $? "control: naive dlopen(RTLD_GLOBAL) is caught (exit $rc)"
exit $fail
