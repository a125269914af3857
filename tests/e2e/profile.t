#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# profile.t: CPU profiles (`--profile`). `bench --profile` prints the top functions
# and says which event it used; `compare --profile` (an A/A of the system SQLite) keeps a raw
# and a folded profile per run next to the results database and prints the side-by-side top
# 30 with round ranges and the diff view; `report --profile` prints the same again from the
# stored files, and `--format=folded` the stacks; a managed PostgreSQL variant is profiled
# through its server's process tree; a truncated or missing profile file is one
# warning naming it, the tables stay whole, exit 1. Unprivileged (setpriv to nobody):
# perf_event_paranoid=2 leaves the kernel out and says so; perf_event_open refused (paranoid 3,
# and an LD_PRELOAD shim failing the syscall with EACCES, as upstream kernels treat 3 as 2):
# the run completes without a profile and says so once (the sysctl is restored on exit).
# --measure=instructions --profile: the exact profile of the same library in two rounds is
# identical.
. "$(dirname "$0")/lib.sh"

have setpriv || bail_out "setpriv is missing (util-linux)"
have valgrind || bail_out "valgrind is not installed (run scripts/install-deps.sh)"
[ "$(id -u)" = 0 ] || bail_out "needs root (it sets kernel.perf_event_paranoid and runs as nobody)"
PARANOID=/proc/sys/kernel/perf_event_paranoid
OLD_PARANOID=$(cat "$PARANOID")
on_exit 'echo "$OLD_PARANOID" > "$PARANOID"; _e2e_cleanup'

SYSLIB=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0
[ -f "$SYSLIB" ] || SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
common=(--table-size=2000)

# ---- bench --profile
"$PGOLAB" bench oltp_point_select --sqlite-db="$TMP/b.db" "${common[@]}" prepare >/dev/null 2>&1
timeout 60 "$PGOLAB" bench oltp_point_select --sqlite-db="$TMP/b.db" "${common[@]}" --time=2 \
    --profile run >"$TMP/b.out" 2>"$TMP/b.err"
is "$?" 0 "bench --profile run: exit 0"
like "$(cat "$TMP/b.out")" "CPU profile: [0-9]+ (cycles|cpu-clock) samples at 999 Hz, user \+ kernel" \
    "names the event, the frequency and that the kernel is in (root)"
if grep -q "cpu-clock samples" "$TMP/b.out"; then
    like "$(cat "$TMP/b.out")" "note: no hardware cycle counter" "says why it is not cycles"
fi
like "$(cat "$TMP/b.out")" "<libsqlite3\.so[.0-9]*>" "the DSO table names the SQLite library"
like "$(cat "$TMP/b.out")" " sqlite3[A-Za-z]+ +libsqlite3" "a SQLite function in the top list"
unlike "$(cat "$TMP/b.out")" "\.(cold|part|constprop|isra)" "no clone suffix in the names"
timeout 60 "$PGOLAB" bench oltp_point_select --sqlite-db="$TMP/b.db" "${common[@]}" --time=1 \
    --profile --profile-file="$TMP/b.raw" --format=json run >"$TMP/bj.out" 2>"$TMP/bj.err"
is "$(jq -r '.profile.raw' "$TMP/bj.out")" "$TMP/b.raw" "JSON: the profile object names the raw file"
like "$(head -1 "$TMP/b.raw")" "^pgolab-profile-raw 1$" "the raw file has its header"
is "$(tail -1 "$TMP/b.raw")" "end" "... and its end line"

# ---- compare --profile: the side-by-side, the stored files
DB=$TMP/r.db
timeout 300 "$PGOLAB" compare --variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$SYSLIB" \
    --bench=oltp_point_select --threads=1 --rounds=2 --time=2 "${common[@]}" --results="$DB" \
    --workdir="$TMP/wd" --profile >"$TMP/c.out" 2>"$TMP/c.err"
is "$?" 0 "compare --profile: exit 0" || diag "$(tail -5 "$TMP/c.err")"
like "$(cat "$TMP/c.out")" "CPU profile: oltp_point_select, threads=1: A vs B" "the side-by-side's title"
like "$(cat "$TMP/c.out")" "A 1?[0-9]+ samples in 2 rounds, B [0-9]+ in 2" "samples and rounds per side"
like "$(cat "$TMP/c.out")" "Top 30 functions" "the top-30 table"
like "$(cat "$TMP/c.out")" "[0-9]+\.[0-9]{3} \[ *[0-9]+\.[0-9]{3}- *[0-9]+\.[0-9]{3}\][ !] +[A-Za-z_\[]" \
    "rows: share, [round range], stability mark, function"
like "$(cat "$TMP/c.out")" "Diff B - A \(points of Samples%, largest change first" "the diff view"
ok "4 folded profiles next to the results database" test "$(ls "$DB.profiles/1/"*.folded | wc -l)" = 4
ok "and 4 raw ones" test "$(ls "$DB.profiles/1/"*.raw | wc -l)" = 4
is "$(sq "$DB" "SELECT count(*) FROM runs WHERE json_extract(report_json, '\$.profile.file') LIKE 'run%.folded'")" 4 \
    "each run's stored report names its profile file"
is "$(sq "$DB" "SELECT DISTINCT json_extract(report_json, '\$.profile.frequency') FROM runs")" 999 \
    "and its frequency"

# report --profile: the same side-by-side from the stored files
"$PGOLAB" report --results="$DB" --profile >"$TMP/rp.out" 2>"$TMP/rp.err"
is "$?" 0 "report --profile: exit 0"
ok "report --profile prints the side-by-side compare printed" \
    cmp <(sed -n '/^CPU profile/,$p' "$TMP/c.out") <(sed -n '/^CPU profile/,$p' "$TMP/rp.out")
"$PGOLAB" report --results="$DB" --profile --format=folded >"$TMP/f.out" 2>/dev/null
is "$?" 0 "report --profile --format=folded: exit 0"
ok "folded lines: VARIANT;WORKLOAD;frames COUNT" \
    awk '!/^(A|B);oltp_point_select;[^ ]+ [0-9]+$/ { bad = 1 } END { exit bad || NR == 0 }' "$TMP/f.out"
ok "folded: both variants" grep -q '^B;oltp_point_select;' "$TMP/f.out"
sum_f=$(awk '{ s += $NF } END { print s }' "$TMP/f.out")
sum_h=$(cat "$DB.profiles/1/"*.folded | sed -n 's/^# samples //p' | awk '{ s += $1 } END { print s }')
is "$sum_f" "$sum_h" "folded stacks add up to every run's samples"
"$PGOLAB" report --results="$DB" --format=folded >/dev/null 2>"$TMP/fe.err"
is "$?" 1 "--format=folded without --profile: exit 1"
like "$(cat "$TMP/fe.err")" "^FATAL: --format=folded is the profiles' stacks: add --profile$" "one line says why"

# report --profile as data: CSV and JSON hold the profiles alone, markdown appends them
"$PGOLAB" report --results="$DB" --profile --format=csv >"$TMP/p.csv" 2>/dev/null
is "$?" 0 "report --profile --format=csv: exit 0"
is "$(head -1 "$TMP/p.csv" | cut -d, -f1-8,19)" "workload,threads,baseline,variant,event,kind,name,dso,change_points" \
    "CSV header: the pair, the row, then each side and the change"
ncsv=$(python3 -c 'import csv,sys; print(len(list(csv.DictReader(open(sys.argv[1])))))' "$TMP/p.csv")
ok "CSV: a row per DSO and function (union of both top-30 lists)" test "$ncsv" -gt 10 -a "$ncsv" -le 70
is "$(python3 - "$TMP/p.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = []
for kind in ("dso",):
    for side in ("baseline", "variant"):
        s = sum(float(r[side + "_pct"]) for r in rows if r["kind"] == kind)
        if abs(s - 100) > 0.01: bad.append("%s %s sum %.3f" % (kind, side, s))
for r in rows:
    if abs(float(r["variant_pct"]) - float(r["baseline_pct"]) - float(r["change_points"])) > 1e-6:
        bad.append("change of " + r["name"])
    if r["baseline_rank"] and not float(r["baseline_min_pct"]) <= float(r["baseline_pct"]) + 1e-9 <= float(r["baseline_max_pct"]) + 2e-9:
        bad.append("range of " + r["name"])
fns = [abs(float(r["change_points"])) for r in rows if r["kind"] == "function"]
if fns != sorted(fns, reverse=True): bad.append("functions not by |change|")
print(" ".join(bad) or "consistent")
PY
)" "consistent" "CSV: every DSO side sums to 100%, change = variant - baseline, pooled share within the round range, functions by |change|"
first_txt=$(sed -n '/^Diff B - A/,$p' "$TMP/rp.out" | sed -n 3p | awk '{ print $1 }' | tr -d '~')
first_csv=$(awk -F, '$6 == "function" { printf "%+.3f\n", $19; exit }' "$TMP/p.csv")
is "$first_csv" "$first_txt" "CSV: the first function's change is the text diff view's first"
"$PGOLAB" report --results="$DB" --profile --format=json >"$TMP/p.json" 2>/dev/null
is "$?" 0 "report --profile --format=json: exit 0"
is "$(jq -r '[.id, .kind, (.profiles | length), .profiles[0].workload, .profiles[0].baseline, .profiles[0].variant, .profiles[0].rounds.baseline] | join(" ")' "$TMP/p.json")" \
    "1 compare 1 oltp_point_select A B 2" "JSON: the experiment's head and one pair (A vs B, 2 rounds)"
is "$(jq '.profiles[0] | (.dsos | length) + (.functions | length)' "$TMP/p.json")" "$ncsv" \
    "JSON: as many rows as the CSV"
is "$(jq '[.profiles[0].samples.baseline, .profiles[0].samples.variant] | add' "$TMP/p.json")" "$sum_h" \
    "JSON: the sides' samples add up to every run's"
"$PGOLAB" report --results="$DB" --profile --format=markdown >"$TMP/p.md" 2>/dev/null
is "$?" 0 "report --profile --format=markdown: exit 0"
like "$(cat "$TMP/p.md")" "### CPU profile: oltp_point_select, threads=1: A vs B" "markdown: a section per pair"
like "$(cat "$TMP/p.md")" "\| change \(points\) \| +A % \| +B % \| +function \(DSO\) \|" "markdown: the function table's header"
ok "markdown: after the report's own tables" grep -q "Transactions per second" "$TMP/p.md"
"$PGOLAB" report --results="$DB" --profile --output="$TMP/x.txt" >/dev/null 2>"$TMP/po.err"
is "$?" 1 "--profile text with --output: exit 1"
like "$(cat "$TMP/po.err")" "^FATAL: --output is for the report, not --profile's text: redirect stdout, or use --format=markdown, csv or json$" \
    "one line says what to do"
"$PGOLAB" report --results="$DB" --profile --format=csv --output="$TMP/o.csv" 2>/dev/null
ok "--profile --format=csv --output writes the CSV" cmp "$TMP/o.csv" "$TMP/p.csv"

# a truncated and a missing file: named, left out, the rest of the report intact
cp -a "$DB.profiles/1" "$TMP/saved"
f2=$(sq "$DB" "SELECT json_extract(report_json, '\$.profile.file') FROM runs ORDER BY seq LIMIT 1 OFFSET 1")
f3=$(sq "$DB" "SELECT json_extract(report_json, '\$.profile.file') FROM runs ORDER BY seq LIMIT 1 OFFSET 2")
head -c 200 "$TMP/saved/$f2" >"$DB.profiles/1/$f2"
rm "$DB.profiles/1/$f3"
"$PGOLAB" report --results="$DB" --profile >"$TMP/bad.out" 2>"$TMP/bad.err"
is "$?" 1 "report --profile with a truncated and a missing file: exit 1"
like "$(cat "$TMP/bad.err")" "WARNING: profile .*/$f2 is truncated .*: round [12] of [AB] \(oltp_point_select, threads=1\) is left out" \
    "the truncated file is named, with its run"
like "$(cat "$TMP/bad.err")" "WARNING: profile .*/$f3: No such file or directory: round [12] of [AB]" \
    "the missing file is named"
like "$(cat "$TMP/bad.out")" "Table 1\. Transactions per second, oltp_point_select" "the tables are intact"
like "$(cat "$TMP/bad.out")" "Top 30 functions" "the side-by-side of the other runs is printed"
like "$(cat "$TMP/bad.out")" "2 profile files could not be read" "and says what is missing"
"$PGOLAB" report --results="$DB" --profile --format=json >"$TMP/badj.out" 2>/dev/null
is "$?" 1 "report --profile --format=json with them: exit 1"
is "$(jq '[.unreadable_profiles, .profiles[0].rounds.baseline + .profiles[0].rounds.variant] | join(" ")' -r "$TMP/badj.out")" "2 2" \
    "JSON: says 2 files could not be read, the 2 other rounds are in"
rm -rf "$DB.profiles/1" && cp -a "$TMP/saved" "$DB.profiles/1"

# ---- a managed PostgreSQL variant: the server's process tree is sampled, backends included
PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/postgres" ] || bail_out "$PGBIN/postgres missing (scripts/install-deps.sh installs postgresql)"
# the work directory must be searchable by the postgres user (the test's $TMP is mode 0700)
WD=$(mktemp -u /dev/shm/pgolab-e2e-prof.XXXXXX)
on_exit 'rm -rf "$WD"; echo "$OLD_PARANOID" > "$PARANOID"; _e2e_cleanup'
timeout 300 "$PGOLAB" compare --variant "A=pgsql:$PGBIN/postgres" --variant "B=pgsql:$PGBIN/postgres" \
    --bench=oltp_point_select --threads=1 --rounds=2 --time=2 --table-size=1000 \
    --results="$TMP/pg.db" --workdir="$WD" --profile >"$TMP/pg.out" 2>"$TMP/pg.err"
is "$?" 0 "compare --profile of a managed PostgreSQL: exit 0" || diag "$(tail -5 "$TMP/pg.err")"
like "$(cat "$TMP/pg.out")" "CPU profile: oltp_point_select, threads=1: A vs B" "the side-by-side"
pg_share=$(sed -n '/^By DSO/,/^$/p' "$TMP/pg.out" | grep -o '[0-9.]* \[[ 0-9.-]*\][ !] <postgres>' |
    head -1 | awk '{ print int($1) }')
note "postgres DSO share on side A: ${pg_share:-none}%"
# the postmaster alone sleeps in poll() (kernel and libc samples, next to none in postgres):
# a share of several percent means the forked backends were followed. Measured here: 18%,
# both quiet and in a loaded CI run (the old bound of 20 failed CI), so the bound is low.
cmp_ok "${pg_share:-0}" '>=' 5 "the postgres binary has >= 5% of the samples (backends forked during the run were followed)"
is "$(pgrep -f -- "postgres.*$WD" | wc -l)" 0 "no postgres left running"

# ---- unprivileged: kernel left out at paranoid 2, refused at 3
mkdir -p "$TMP/nobody" && chmod 755 "$TMP" && chown nobody "$TMP/nobody"
cp "$TMP/b.db" "$TMP/nobody/n.db" && chown nobody "$TMP/nobody/n.db"
asnobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
echo 2 >"$PARANOID"
asnobody timeout 60 "$PGOLAB" bench oltp_point_select --sqlite-db="$TMP/nobody/n.db" "${common[@]}" \
    --time=1 --profile run >"$TMP/n2.out" 2>"$TMP/n2.err"
is "$?" 0 "unprivileged, paranoid 2: exit 0"
like "$(cat "$TMP/n2.out")" "samples at 999 Hz, user space only" "user space only"
like "$(cat "$TMP/n2.out")" "note: .*kernel space left out \(kernel\.perf_event_paranoid=2" \
    "says the kernel was left out and names the sysctl"
# paranoid 3: Debian's kernels refuse unprivileged perf_event_open; an upstream kernel treats
# 3 as 2. So the refusal is also injected where pgolab meets the kernel: an LD_PRELOAD shim
# whose syscall() fails perf_event_open with EACCES (x86-64) and passes every other call on.
cat >"$TMP/refuse.c" <<'EOF_C'
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
long syscall(long n, ...)
{
    va_list ap;
    long a[6];
    va_start(ap, n);
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (n == SYS_perf_event_open) {
        errno = EACCES;
        return -1;
    }
    long ret;
    register long r10 __asm__("r10") = a[3], r8 __asm__("r8") = a[4], r9 __asm__("r9") = a[5];
    __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a[0]), "S"(a[1]), "d"(a[2]), "r"(r10),
                     "r"(r8), "r"(r9) : "rcx", "r11", "memory");
    if (ret < 0 && ret > -4096) {
        errno = (int)-ret;
        return -1;
    }
    return ret;
}
EOF_C
gcc -shared -fPIC -O2 -o "$TMP/refuse.so" "$TMP/refuse.c" || bail_out "cannot build the refusal shim"
chmod 755 "$TMP/refuse.so"
echo 3 >"$PARANOID"
asnobody timeout 60 "$PGOLAB" bench oltp_point_select --sqlite-db="$TMP/nobody/n.db" "${common[@]}" \
    --time=1 --profile run >"$TMP/k3.out" 2>"$TMP/k3.err"
if grep -q 'perf_event_open refused' "$TMP/k3.err"; then
    note "this kernel refuses unprivileged perf_event_open at paranoid 3 by itself"
else
    note "this kernel allows unprivileged perf_event_open at paranoid 3 (no Debian patch): the shim refuses"
fi
asnobody env LD_PRELOAD="$TMP/refuse.so" timeout 60 "$PGOLAB" bench oltp_point_select \
    --sqlite-db="$TMP/nobody/n.db" "${common[@]}" --time=1 --profile run >"$TMP/n3.out" 2>"$TMP/n3.err"
is "$?" 0 "perf_event_open refused: the run completes, exit 0"
like "$(cat "$TMP/n3.out")" "transactions: +[0-9]+" "with its report"
unlike "$(cat "$TMP/n3.out")" "CPU profile" "and no profile"
is "$(grep -c 'perf_event_open refused' "$TMP/n3.err")" 1 "said once"
like "$(cat "$TMP/n3.err")" "^WARNING: perf_event_open refused \(Permission denied; kernel\.perf_event_paranoid=3, 2 or lower" \
    "naming the errno and the sysctl"
asnobody env LD_PRELOAD="$TMP/refuse.so" timeout 300 "$PGOLAB" compare --variant "A=sqlite:$SYSLIB" \
    --variant "B=sqlite:$SYSLIB" --bench=oltp_point_select --threads=1 --rounds=2 --time=1 \
    "${common[@]}" --results="$TMP/nobody/n.results" --workdir="$TMP/nobody/wd" --profile \
    >"$TMP/nc.out" 2>"$TMP/nc.err"
is "$?" 0 "compare --profile, perf_event_open refused: exit 0" || diag "$(tail -3 "$TMP/nc.err")"
is "$(grep -c 'perf_event_open refused' "$TMP/nc.err")" 1 "the refusal is said once for the 4 runs"
is "$(sq "$TMP/nobody/n.results" "SELECT count(*) FROM runs WHERE json_extract(report_json, '\$.profile.refused') IS NOT NULL")" 4 \
    "every run is recorded, without a profile"
like "$(cat "$TMP/nc.out")" "Table 1\. Transactions per second" "the report is printed"
unlike "$(cat "$TMP/nc.out")" "Top 30 functions" "without a side-by-side"
echo "$OLD_PARANOID" >"$PARANOID"

# ---- exact profiles: --measure=instructions --profile
cp "$SYSLIB" "$TMP/libcopy.so"
timeout 600 "$PGOLAB" compare --variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so" \
    --bench=oltp_point_select --measure=instructions --events=200 --rounds=2 "${common[@]}" \
    --rand-seed=3 --results="$TMP/i.db" --workdir="$TMP/iwd" --profile >"$TMP/i.out" 2>"$TMP/i.err"
is "$?" 0 "compare --measure=instructions --profile: exit 0" || diag "$(tail -3 "$TMP/i.err")"
like "$(cat "$TMP/i.out")" "Exact profile: instructions per function \(callgrind" "the exact profile"
like "$(cat "$TMP/i.out")" "Ir/txn a -> b" "the diff view shows instructions per transaction"
read -r a1 a2 < <(sq "$TMP/i.db" "SELECT group_concat(json_extract(r.report_json, '\$.profile.file'), ' ') FROM runs r JOIN variants v ON v.experiment_id = r.experiment_id AND v.idx = r.variant_idx WHERE v.name = 'A'")
# pgolab's own histogram_add varies a little (its loop depends on the measured latency, i.e.
# on time): everything else, and all of SQLite, is exactly the same
ok "the instruction profile of the same library in two rounds is identical (SQLite's functions)" \
    cmp <(grep '^libsqlite3' "$TMP/i.db.profiles/1/$a1") <(grep '^libsqlite3' "$TMP/i.db.profiles/1/$a2")
ok "... and every other function but pgolab's timing-dependent histogram_add" \
    cmp <(grep -v -e '^# samples' -e '`histogram_add ' "$TMP/i.db.profiles/1/$a1") \
        <(grep -v -e '^# samples' -e '`histogram_add ' "$TMP/i.db.profiles/1/$a2")
like "$(grep -v '^#' "$TMP/i.db.profiles/1/$a1" | sort -k2 -n -r | head -3)" "libsqlite3\.so\.0[.0-9]*\`sqlite3" \
    "SQLite functions lead the instruction profile"

done_testing
