#!/bin/bash
# bench_rate.t: sysbench's runner options on SQLite. --rate: Poisson arrivals at the target
# rate, the "[ Ns ] queue length: Q, concurrency: C" line after every interval line, the wait
# for a worker counted in the latency (workers that fall behind: the queue and the latencies
# grow), a queue that overflows ends the run with sysbench's message (and the rate achieved
# beside the requested one), exit 1 and a partial summary under a FAILED heading. --warmup-time: the events before it run but are not counted.
# Interval lines: stamps one interval apart, a final partial interval divided by its real
# length (the lines add up to the run's events), nothing after the final block. Bad values of
# the new options fail in one line.
. "$(dirname "$0")/lib.sh"

have sqlite3 || bail_out "sqlite3 CLI not found (scripts/install-deps.sh installs it)"
DB=$TMP/sb.db
common=(--sqlite-db="$DB" --table-size=500)
pg prep "${common[@]}" oltp_read_write prepare
[ "$RC" -eq 0 ] || bail_out "prepare failed: $(<"$TMP/prep.err")"

# jq-free JSON reads
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

note "---- --rate below capacity"
pg r1 "${common[@]}" --threads=2 --rate=100 --time=3 --report-interval=1 oltp_read_write run
is "$RC" 0 "--rate=100: exit 0"
ok "--rate=100: header says 'Target transaction rate: 100/sec'" grep -qxF "Target transaction rate: 100/sec" "$TMP/r1.out"
n_iv=$(grep -c '^\[ [0-9]*s \] thds: ' "$TMP/r1.out")
n_q=$(grep -cE '^\[ [0-9]+s \] queue length: [0-9]+, concurrency: [0-9]+$' "$TMP/r1.out")
cmp_ok "$n_iv" '>=' 2 "--rate=100: interval lines ($n_iv)"
is "$n_q" "$n_iv" "--rate=100: one queue line per interval line"
is "$(awk '/^\[ [0-9]+s \] thds: / { t = $2; getline; if ($2 != t || $5 != "length:") print "bad" }' "$TMP/r1.out")" "" \
    "--rate=100: each queue line follows its interval line, same stamp"
final_vars "$TMP/r1.out"
# 300 arrivals expected in 3 s (Poisson, sd ~17): far inside [150, 450] unless the generator is wrong
cmp_ok "$F_transactions" '>=' 150 "--rate=100: about 300 transactions in 3 s ($F_transactions)"
cmp_ok "$F_transactions" '<=' 450 "--rate=100: not more than the arrivals ($F_transactions)"

note "---- --rate above capacity: queue and latency grow"
pg r2 "${common[@]}" --threads=1 --rate=20000 --time=3 --report-interval=1 --format=json oltp_read_write run
is "$RC" 0 "--rate=20000 (over capacity, queue not full in 3 s): exit 0"
qs=$(jget "$TMP/r2.out" '" ".join(str(i["queue_length"]) for i in d["intervals"])')
lat=$(jget "$TMP/r2.out" '" ".join(str(i["latency_ms"]) for i in d["intervals"])')
note "queue lengths: $qs; interval p95 (ms): $lat"
is "$(echo "$qs" | awk '{ for (i = 2; i <= NF; i++) if ($i <= $(i-1)) { print "no"; exit } print "yes" }')" yes \
    "--rate over capacity: the queue grows at every interval ($qs)"
is "$(echo "$lat" | awk '{ print ($NF > $1) ? "yes" : "no" }')" yes "--rate over capacity: latency grows ($lat)"
avg=$(jget "$TMP/r2.out" 'd["latency_ms"]["avg"]')
cmp_ok "$avg" '>' 100 "--rate over capacity: the wait in the queue is in the latency (avg $avg ms)"
tps=$(jget "$TMP/r2.out" 'd["tps"]')
cmp_ok "$tps" '<' 20000 "--rate over capacity: tps below the rate ($tps)"
tt=$(jget "$TMP/r2.out" 'd["total_time_s"]')
# draining the queue would take ~20 times --time: 8 s leaves room for a loaded machine
cmp_ok "$tt" '<' 8 "--rate over capacity: the run still ends at --time, queue left behind ($tt s)"
# concurrency is sampled at each interval's end: a saturated worker can be caught between two
# events (0) when the machine is loaded, but not at every sample, and never above --threads
cs=$(jget "$TMP/r2.out" '" ".join(str(i["concurrency"]) for i in d["intervals"])')
is "$(echo "$cs" | tr ' ' '\n' | sort -n | tail -1)" 1 "--rate over capacity: concurrency = the busy worker, at some sample ($cs)"
is "$(echo "$cs" | tr ' ' '\n' | awk '$1 > 1' | wc -l)" 0 "--rate over capacity: concurrency never above --threads=1 ($cs)"

note "---- --rate: the queue overflows"
pg r3 "${common[@]}" --threads=1 --rate=1000000 --time=20 oltp_read_write run
is "$RC" 1 "queue full: exit 1 (sysbench's)"
is "$(grep -c 'The event queue is full' "$TMP/r3.err")" 1 "queue full: sysbench's message, once"
like "$(<"$TMP/r3.err")" '^FATAL: The event queue is full\. This means the worker threads are unable to keep up with the specified event generation rate' \
    "queue full: sysbench's wording"
like "$(<"$TMP/r3.err")" '\(--rate=1000000 requested, [0-9]+/s achieved: [0-9]+ events started in [0-9.]+ s; the queue holds 131072 arrivals\): lower --rate or add --threads$' \
    "queue full: the achieved rate beside the requested one"
achieved=$(sed -n 's/.*requested, \([0-9]*\)\/s achieved.*/\1/p' "$TMP/r3.err")
cmp_ok "${achieved:-1000000}" '<' 1000000 "queue full: the achieved rate is below the requested one (${achieved}/s)"
ok "queue full: a heading says the run failed" grep -q '^FAILED: ' "$TMP/r3.out"
f=$(grep -n '^FAILED: ' "$TMP/r3.out" | cut -d: -f1)
s=$(grep -nxF 'SQL statistics:' "$TMP/r3.out" | cut -d: -f1)
ok "queue full: the partial summary follows the heading" test "${f:-0}" -gt 0 -a "${s:-0}" -gt "${f:-0}"
final_vars "$TMP/r3.out"
cmp_ok "$F_total_time" '<' 20 "queue full: the run stopped early ($F_total_time s of --time=20)"
is "$F_total" "$(calc "$F_read + $F_write + $F_other")" "queue full: the summary is consistent"
pg r3j "${common[@]}" --threads=1 --rate=1000000 --time=20 --format=json oltp_read_write run
is "$RC" 1 "queue full, JSON: exit 1"
is "$(jget "$TMP/r3j.out" 'd["failed"], d["queue_full"]')" "(True, True)" "queue full, JSON: failed and queue_full"

note "---- --warmup-time"
pg w1 "${common[@]}" --threads=1 --warmup-time=1 --events=300 --time=0 oltp_read_write run
is "$RC" 0 "--warmup-time=1 --events=300: exit 0"
ok "--warmup-time: header says 'Warmup time: 1s'" grep -qxF "Warmup time: 1s" "$TMP/w1.out"
final_vars "$TMP/w1.out"
is "$F_transactions" 300 "--warmup-time: exactly --events counted after the warmup"
is "$F_read/$F_write/$F_other" "4200/1200/600" "--warmup-time: none of the warmup's queries counted (300 x 14/4/2)"
# a 4 s warmup before a 2 s run: counted in, the total would be >= 6 s
pg w2 "${common[@]}" --threads=2 --warmup-time=4 --time=2 --report-interval=1 oltp_read_write run
is "$RC" 0 "--warmup-time=4 --time=2: exit 0"
final_vars "$TMP/w2.out"
cmp_ok "$F_total_time" '>=' 2 "--warmup-time: total time is the measured --time ($F_total_time)"
cmp_ok "$F_total_time" '<' 5.5 "--warmup-time: the warmup is not in the total time ($F_total_time)"
is "$(grep -o '^\[ [0-9]*s \] thds' "$TMP/w2.out" | tr -dc '0-9\n' | tr '\n' ' ')" "1 2 " \
    "--warmup-time: interval stamps count from the end of the warmup"
is "$F_fair_events_avg" "$(printf '%.4f' "$(calc "$F_transactions / 2")")" "--warmup-time: per-thread events add up"

note "---- interval lines: a final partial interval, nothing after the final block"
pg p1 "${common[@]}" --threads=1 --rate=200 --events=300 --time=0 --report-interval=1 --format=json oltp_read_write run
is "$RC" 0 "--events=300 at 200/s: exit 0"
is "$(jget "$TMP/p1.out" '" ".join("%g" % i["time_s"] for i in d["intervals"])')" \
    "$(jget "$TMP/p1.out" '" ".join(str(k + 1) for k in range(len(d["intervals"])))')" \
    "stamps are 1, 2, ... (one interval apart)"
last=$(jget "$TMP/p1.out" 'd["intervals"][-1]["length_s"]')
cmp_ok "$last" '<' 0.95 "the last interval is partial (its real length $last s)"
cmp_ok "$last" '>' 0 "the last interval has a length"
is "$(jget "$TMP/p1.out" 'round(sum(i["tps"] * i["length_s"] for i in d["intervals"]))')" 300 \
    "the interval lines add up to the run's 300 events (each rate over its real length)"
pg p2 "${common[@]}" --threads=1 --rate=200 --events=300 --time=0 --report-interval=1 oltp_read_write run
s=$(grep -nxF 'SQL statistics:' "$TMP/p2.out" | cut -d: -f1)
is "$(sed -n "${s:-1},\$p" "$TMP/p2.out" | grep -c '^\[ ')" 0 "no interval line after the final block"
is "$(grep '^\[ ' "$TMP/p2.out" | grep -c -- '-')" 0 "no negative figure in any interval line"

note "---- bad values, one line each"
bench_fails "--forced-shutdown=abc" "^FATAL: --forced-shutdown=abc: expected seconds after --time \(N\), a percentage of --time \(N%\), on \(5%\) or off$" \
    "${common[@]}" --forced-shutdown=abc oltp_read_write run
bench_fails "--forced-shutdown without --time" "^FATAL: --forced-shutdown=5 needs a --time limit to count from$" \
    "${common[@]}" --forced-shutdown=5 --time=0 --events=10 oltp_read_write run
bench_fails "--thread-init-timeout=0" "^FATAL: --thread-init-timeout=0: expected a number of seconds >= 1$" \
    "${common[@]}" --thread-init-timeout=0 oltp_read_write run
bench_fails "--rate=-1" "^FATAL: --rate=-1: expected a number >= 0$" "${common[@]}" --rate=-1 oltp_read_write run

done_testing
