#!/usr/bin/env bash
# The precision work beyond the tables, on the real binary:
# - --cpu-placement: every run's bench child (a SQLite A/A at --threads=1) reports the CPUs it
#   was allowed (its own sched_getaffinity, kept in the run's report_json as cpus_allowed:
#   every run, whatever the machine's load), and while an experiment runs /proc/PID/status of
#   its managed PostgreSQL server's processes (postmaster and the backend serving the bench)
#   says Cpus_allowed_list = the CPUs the placement gives them (auto: the client on the first
#   CPU allowed, the server on the others; an explicit CLIENT:SERVER; off: the test's own set),
#   the report header and the settings say so, and bad lists are one-line errors;
# - CPU time per transaction: its own noise table with each cell's change and 95% CI (text),
#   and "cpu_per_txn" in the JSON with the change and its CI; --target-metric=cpu stops on it;
# - `pgolab calibrate` records the machine state and recommends a run length and rounds;
#   `compare --target-ci --from-calibration` takes that run length;
# - an experiment run while the test keeps the client's CPU busy with bounded busy loops says
#   the machine was busier than at calibration (text and JSON).
. "$(dirname "$0")/lib.sh"

PGBIN=/usr/lib/postgresql/15/bin
[ -x "$PGBIN/postgres" ] || bail_out "$PGBIN/postgres missing (scripts/install-deps.sh installs postgresql)"
have taskset || bail_out "taskset missing (util-linux)"
SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
ALLOWED=$(sed -n 's/^Cpus_allowed_list:\t*//p' /proc/self/status)
NCPU=$(nproc)
FIRST=$(printf '%s\n' "$ALLOWED" | sed 's/[-,].*//')
# The PostgreSQL work directory on tmpfs, searchable by the postgres user ($TMP is 0700).
WD=$(mktemp -u /dev/shm/pgolab-e2e-place.XXXXXX)
BUSY=()
on_exit 'for p in "${BUSY[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$WD"; _e2e_cleanup'
sqlite_vars=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")
common=(--bench=oltp_point_select --threads=1 --table-size=1000)

# cpus PID: its Cpus_allowed_list (empty when it is gone)
cpus() { sed -n 's/^Cpus_allowed_list:\t*//p' "/proc/$1/status" 2>/dev/null; }
# cmdline PID: its argv joined by spaces (empty when it is gone)
cmdline() { tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline"; }
# watch PID OUT: until PID exits, every 0.05 s, append "WHO CPUS" to OUT for every process below
# PID that is a postmaster (a postgres pgolab started) or a backend (a postgres's postgres).
# (The bench children are checked by what each reports, below: a 1-second child can run
# between two polls on a loaded machine.)
watch() {
    local top=$1 out=$2 p q todo
    : >"$out"
    while kill -0 "$top" 2>/dev/null; do
        todo=$(pgrep -P "$top")
        while [ -n "$todo" ]; do
            set -- $todo
            p=$1
            shift
            todo="$* $(pgrep -P "$p" | paste -sd' ')"
            todo=${todo# }
            [ "$todo" = " " ] && todo=
            case $(cat "/proc/$p/comm" 2>/dev/null) in
            postgres)
                q=$(awk '{ print $4 }' "/proc/$p/stat" 2>/dev/null)
                case $(cat "/proc/$q/comm" 2>/dev/null) in
                postgres) echo "backend $(cpus "$p")" >>"$out" ;;
                pgolab) # not initdb's bootstrap, nor the `postgres --version` check that
                        # pgolab runs before it places the server (under load, the 0.05 s poll
                        # catches that short process too)
                    case $(cmdline "$p") in
                    *--version*) ;;
                    *) echo "postmaster $(cpus "$p")" >>"$out" ;;
                    esac ;;
                esac ;;
            esac
        done
        sleep 0.05
    done
}
# ran_on DB EXPERIMENT: the CPU lists its runs' bench children were allowed (distinct, sorted,
# one line), then "in N of M runs" (N: the runs that report it)
ran_on() {
    sq "$1" "SELECT (SELECT group_concat(c, ' ') FROM (SELECT DISTINCT json_extract(report_json,
        '\$.cpus_allowed') AS c FROM runs WHERE experiment_id = $2 AND c IS NOT NULL ORDER BY c))
        || ' in ' || count(json_extract(report_json, '\$.cpus_allowed')) || ' of ' || count(*) || ' runs'
        FROM runs WHERE experiment_id = $2"
}
# seen OUT WHO: the CPU lists WHO had (sorted, unique, one line, empty ones dropped)
seen() { awk -v w="$2" '$1 == w && NF == 2 { print $2 }' "$1" | sort -u | paste -sd' '; }

# ---- 1. bad input
"$PGOLAB" compare "${sqlite_vars[@]}" "${common[@]}" --cpu-placement=0:x --results="$TMP/bad.db" \
    >/dev/null 2>"$TMP/bad.err"
is "$?" 1 "--cpu-placement=0:x: exit 1"
like "$(<"$TMP/bad.err")" "invalid --cpu-placement=0:x \(expected auto, off, or CLIENT\[:SERVER\]" "one line naming the option"
"$PGOLAB" compare "${sqlite_vars[@]}" "${common[@]}" --cpu-placement=1000 --results="$TMP/bad.db" \
    >/dev/null 2>"$TMP/bad.err"
is "$?" 1 "a CPU outside the allowed ones: exit 1"
like "$(<"$TMP/bad.err")" "names a CPU this process may not use \(allowed: $ALLOWED\)" "... says which are allowed"
"$PGOLAB" compare "${sqlite_vars[@]}" "${common[@]}" --target-metric=cpu --results="$TMP/bad.db" \
    >/dev/null 2>"$TMP/bad.err"
is "$?" 1 "--target-metric without --target-ci: exit 1"
"$PGOLAB" compare "${sqlite_vars[@]}" "${common[@]}" --target-ci=5 --from-calibration \
    --results="$TMP/bad.db" >/dev/null 2>"$TMP/bad.err"
is "$?" 1 "--from-calibration without a calibration: exit 1"
like "$(<"$TMP/bad.err")" "no complete \`pgolab calibrate\` of this host" "... and says so"
ok "nothing recorded by bad input" test ! -e "$TMP/bad.db" -o "$(sq "$TMP/bad.db" 'SELECT count(*) FROM experiments' 2>/dev/null)" = 0

if [ "$NCPU" -lt 2 ]; then
    skip_anywhere 12 "one CPU: placement auto is off here (nothing to place)"
else
    # ---- 2. SQLite A/A, auto placement: the bench child runs on the first allowed CPU
    "$PGOLAB" compare "${sqlite_vars[@]}" "${common[@]}" --cpu-placement=auto --time=2 --rounds=3 --results="$TMP/r.db" \
        --output="$TMP/s.json" >"$TMP/s.out" 2>"$TMP/s.err"
    is "$?" 0 "SQLite A/A with --cpu-placement=auto: exit 0" || diag "$(tail -5 "$TMP/s.err")"
    is "$(ran_on "$TMP/r.db" 1)" "$FIRST in 6 of 6 runs" "every bench child ran on CPU $FIRST only (its sched_getaffinity)"
    like "$(<"$TMP/s.out")" "CPU placement: client on CPU $FIRST \(auto" "the report header says where the client ran"
    is "$(sq "$TMP/r.db" "SELECT json_extract(settings_json, '\$.cpu_placement.client') FROM experiments WHERE id = 1")" \
        "$FIRST" "the settings record the client's CPUs"

    # CPU time per transaction: its own table, each cell's change with a 95% CI or "~"
    out=$(<"$TMP/s.out")
    like "$out" "Noise and precision \(CPU time per transaction, client \+ server\)" "CPU/txn noise table"
    row=$(awk -F'|' '/Noise and precision \(CPU time/ { t = 1 } t && $2 ~ /^ +B / { print; exit }' "$TMP/s.out")
    like "$row" "\| +\+/-[0-9.]+% +\| +- +\| +(~|[-+][0-9.]+% \([-+][0-9.]+% to [-+][0-9.]+%\)) +\|\$" \
        "the CPU/txn row has a CI half-width and a change (or ~): $row"
    "$PGOLAB" report --results="$TMP/r.db" --experiment=1 --format=json >"$TMP/s.rep.json" 2>/dev/null
    ok "JSON: cpu_per_txn has the cell's change, its CI and the CI of the ratio" python3 -c '
import json, math, sys
c = json.load(open(sys.argv[1]))["precision"]["cpu_per_txn"][0]
lo, hi = c["change_ci_pct"]
assert c["rounds"] == 3 and lo <= c["change_pct"] <= hi, c
assert c["ratio_ci"][0] <= c["ratio"] <= c["ratio_ci"][1] and c["half_width_pct"] > 0, c
assert isinstance(c["significant"], bool)' "$TMP/s.rep.json"
    # the CPU/txn of a cell recomputed from the stored runs' metrics (client + server us/txn)
    ok "JSON: the ratio is the geometric mean of the rounds' CPU/txn ratios B/A" python3 -c '
import json, math, sqlite3, sys
db = sqlite3.connect(sys.argv[2])
v = {}
for idx, rnd, m in db.execute("SELECT variant_idx, round, metrics_json FROM runs WHERE experiment_id = 1"):
    m = json.loads(m)
    v[(idx, rnd)] = m["client_us_per_txn"] + (m.get("server_us_per_txn") or 0)
d = [math.log(v[(1, r)] / v[(0, r)]) for r in (1, 2, 3)]
c = json.load(open(sys.argv[1]))["precision"]["cpu_per_txn"][0]
assert abs(math.exp(sum(d) / 3) / c["ratio"] - 1) < 1e-9, (d, c["ratio"])' "$TMP/s.rep.json" "$TMP/r.db"

    # ---- 3. explicit lists and off
    other=$(printf '%s\n' "$ALLOWED" | awk -v f="$FIRST" 'BEGIN { RS = "," } {
        n = split($0, a, "-"); lo = a[1]; hi = n > 1 ? a[2] : a[1]
        for (c = lo; c <= hi; c++) if (c != f) { print c; exit } }')
    "$PGOLAB" compare "${sqlite_vars[@]}" "${common[@]}" --time=1 --rounds=1 --cpu-placement="$other" \
        --results="$TMP/r.db" >"$TMP/l.out" 2>"$TMP/l.err"
    is "$?" 0 "--cpu-placement=$other: exit 0" || diag "$(tail -5 "$TMP/l.err")"
    is "$(ran_on "$TMP/r.db" 2)" "$other in 2 of 2 runs" "the bench children ran on CPU $other"
    "$PGOLAB" compare "${sqlite_vars[@]}" "${common[@]}" --time=1 --rounds=1 --cpu-placement=off \
        --results="$TMP/r.db" >"$TMP/o.out" 2>"$TMP/o.err"
    is "$(ran_on "$TMP/r.db" 3)" "$ALLOWED in 2 of 2 runs" "--cpu-placement=off: the bench children may use every CPU ($ALLOWED)"
    like "$(<"$TMP/o.out")" "CPU placement: off" "... and the header says off"

    # ---- 4. a managed PostgreSQL: the server's processes on the other CPUs
    rest=$(python3 -c 'import os, sys
s = sorted(os.sched_getaffinity(0) - {int(sys.argv[1])})
out, i = [], 0
while i < len(s):
    j = i
    while j + 1 < len(s) and s[j + 1] == s[j] + 1: j += 1
    out.append(str(s[i]) if i == j else "%d-%d" % (s[i], s[j])); i = j + 1
print(",".join(out))' "$FIRST")
    timeout 300 "$PGOLAB" compare --variant "A=pgsql:$PGBIN/postgres" --variant "B=pgsql:$PGBIN/postgres" \
        "${common[@]}" --cpu-placement=auto --time=2 --rounds=1 --table-size=500 --workdir="$WD" --results="$TMP/pg.db" \
        >"$TMP/pg.out" 2>"$TMP/pg.err" &
    cpid=$!
    watch "$cpid" "$TMP/pg.watch"
    wait "$cpid"
    is "$?" 0 "PostgreSQL A/A with auto placement: exit 0" || diag "$(tail -5 "$TMP/pg.err")"
    is "$(ran_on "$TMP/pg.db" 1)" "$FIRST in 2 of 2 runs" "the bench children ran on CPU $FIRST"
    is "$(seen "$TMP/pg.watch" postmaster)" "$rest" "the postmaster ran on CPU $rest"
    is "$(seen "$TMP/pg.watch" backend)" "$rest" "its backends (forked per connection) inherit CPU $rest"
    like "$(<"$TMP/pg.out")" "CPU placement: client on CPU $FIRST, managed server on CPU $rest \(auto\)" \
        "the header names both"
fi

# ---- 5. calibrate: the machine state and the recommendation
timeout 300 "$PGOLAB" calibrate "${common[@]}" --cpu-placement=auto --time=3 --rounds=4 --results="$TMP/c.db" \
    --output="$TMP/cal.json" >"$TMP/cal.out" 2>"$TMP/cal.err"
is "$?" 0 "calibrate: exit 0" || diag "$(tail -5 "$TMP/cal.err")"
cal=$(<"$TMP/cal.out")
like "$cal" "Machine state during calibration .*: load1 [0-9.]+, steal [0-9.]+%, other work [0-9.]+% of the CPU, CV of tps [0-9.]+%, the client got [0-9]+% of a CPU \(8 runs with metrics\)" \
    "calibrate states the machine"
like "$cal" "Recommendation for a 95% CI of \+/-2% on the tps ratio" "a recommendation for the default 2%"
ok "the recommendation: rounds by the sequence's formula from the printed sd, the cheapest run length" python3 -c '
import json, math, sys
from statistics import NormalDist
r = json.load(open(sys.argv[1]))["calibration"]["recommendation"]
assert r["ok"] and r["time_s"] in (1, 2, 3) and r["max_rounds"] == 2 * r["rounds"], r
# Waudby-Smith et al. (2024) Gaussian-mixture boundary, tuned for t* = n (src/stats/sequential.h)
def factor(n):
    l = -2 * math.log(0.05); rho2 = (l + math.log(l + 1)) / n; v = n * rho2 + 1
    return math.sqrt(2 * v / (n * n * rho2) * math.log(math.sqrt(v) / 0.05))
for c in r["candidates"]:
    if c["rounds"] is None: continue
    n, goal = c["rounds"], math.log1p(0.02)
    assert c["sd_log_ratio"] * factor(n) <= goal, c
    assert n == 5 or c["sd_log_ratio"] * factor(n - 1) > goal, c  # the least such n
best = min((c for c in r["candidates"] if c["rounds"] is not None), key=lambda c: c["wall_s"])
assert best["time_s"] == r["time_s"], (best, r)' "$TMP/cal.json"
rec_time=$(python3 -c 'import json,sys; print("%g" % json.load(open(sys.argv[1]))["calibration"]["recommendation"]["time_s"])' "$TMP/cal.json")
like "$cal" "Recommended: --time=$rec_time --max-rounds=[0-9]+ \(about [0-9]+ rounds" "the recommendation in the text: --time=$rec_time"

# ---- 6. compare --from-calibration takes the run length (for the same target: 2%);
#         --target-metric=cpu; --max-rounds keeps it short
timeout 300 "$PGOLAB" compare "${sqlite_vars[@]}" "${common[@]}" --cpu-placement=auto --target-ci=2 --max-rounds=5 \
    --from-calibration --target-metric=cpu --results="$TMP/c.db" >"$TMP/fc.out" 2>"$TMP/fc.err"
is "$?" 0 "compare --target-ci=2 --from-calibration --target-metric=cpu: exit 0" || diag "$(tail -5 "$TMP/fc.err")"
like "$(<"$TMP/fc.err")" "from calibration 1: --time=$rec_time " "says what it took from calibration 1"
is "$(sq "$TMP/c.db" "SELECT json_extract(settings_json, '\$.time_s') FROM experiments WHERE id = 2")" "$rec_time.0" \
    "the experiment ran with the recommended --time"
is "$(sq "$TMP/c.db" "SELECT json_extract(settings_json, '\$.target_ci.metric') FROM experiments WHERE id = 2")" "cpu" \
    "the settings record --target-metric=cpu"
like "$(<"$TMP/fc.out")" "rounds were added until every CPU time per transaction cell's 95% CI half-width was at most 2%" \
    "the header says the target applies to CPU time per transaction"
like "$(sq "$TMP/c.db" "SELECT note FROM experiments WHERE id = 2")" "of 1 CPU time per transaction cells" \
    "the note names the metric"

# ---- 7. busier than at calibration: bounded busy loops on the client's CPU
#    (auto placement pins the client to CPU $FIRST; on one CPU it is there anyway)
for i in 1 2 3 4 5 6 7 8; do
    timeout 120 taskset -c "$FIRST" sh -c 'while :; do :; done' &
    BUSY+=($!)
done
timeout 300 "$PGOLAB" compare "${sqlite_vars[@]}" "${common[@]}" --cpu-placement=auto --time=2 --rounds=2 \
    --results="$TMP/c.db" --output="$TMP/busy.json" >"$TMP/busy.out" 2>"$TMP/busy.err"
st=$?
for p in "${BUSY[@]}"; do kill "$p" 2>/dev/null; done
wait "${BUSY[@]}" 2>/dev/null
BUSY=()
is "$st" 0 "compare under 8 busy loops: exit 0" || diag "$(tail -5 "$TMP/busy.err")"
like "$(<"$TMP/busy.out")" "WARNING: the machine was busier than at calibration \(experiment 1, [0-9T:Z-]+\): .*the client got [0-9]+% of a CPU vs [0-9]+%" \
    "text: the warning names the calibration and the client's lost CPU share"
check_busy_json='
import json, sys
b = json.load(open(sys.argv[1]))["precision"]["busier_than_calibration"]
assert b["busier"] and b["calibration_experiment"] == 1, b
assert any(r.startswith("the client got") for r in b["reasons"]), b
assert b["now"]["client_cpu_share"] < 0.75 * b["calibration"]["client_cpu_share"], b'
ok "--output JSON: busier_than_calibration says busier, against calibration 1, with the reasons" \
    python3 -c "$check_busy_json" "$TMP/busy.json"
"$PGOLAB" report --results="$TMP/c.db" --format=json >"$TMP/busy.rep.json" 2>/dev/null
ok "pgolab report --format=json of it says the same (the calibration recorded before it)" \
    python3 -c "$check_busy_json" "$TMP/busy.rep.json"
ok "the calibration itself is compared with nothing" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["precision"]["busier_than_calibration"] is None' \
    <("$PGOLAB" report --results="$TMP/c.db" --experiment=1 --format=json 2>/dev/null)

done_testing
