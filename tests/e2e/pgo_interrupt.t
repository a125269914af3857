#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# pgo_interrupt.t: `pgolab pgo sqlite` stopped by Ctrl-C (SIGINT to its process group) in each
# phase in turn, and run again each time with the same options: the amalgamation, the baseline
# and instrumented builds, training, the pgo build and the measurement (the gate is run through once: see 5).
# Every interruption: exit 2, a line saying it was interrupted, no process of the pipeline left
# (compiler, prepare step, training or gate child, in pgolab's group or in their own), nothing
# half-done taken for done (a build or training that was cut off is done again by the next
# run; what had finished is reused, said
# "(cached)"). The measurement, stopped after its first recorded run, is continued with
# --resume=ID: the experiment ends complete with exactly the planned runs, none lost, none twice.
# (pgo_recipes.t does the same for a server recipe's build step, faults_process.t and
# store_resume.t for `pgolab compare`.)
. "$(dirname "$0")/lib.sh"
have sqlite3 || bail_out "sqlite3 CLI not found (scripts/install-deps.sh installs it)"
have setsid || bail_out "setsid (util-linux) not found"

WD=$TMP/wd
DB=$TMP/results.db
RUN=(pgo sqlite --workdir="$WD" --cflags=-O1 --train=oltp_point_select,oltp_read_only --train-time=3
     --bench=oltp_point_select --threads=1 --time=2 --rounds=3 --table-size=1000 --results="$DB")
BGPID= WDOG=
_int_cleanup() {
    [ -z "$BGPID" ] || kill -KILL -- "-$BGPID" 2>/dev/null
    [ -z "$WDOG" ] || kill -- "-$WDOG" 2>/dev/null
    rm -rf "$TMP"
}
on_exit _int_cleanup

# start NAME ARGS...: the pipeline in the background, leading its own process group (as a
# shell's foreground job does; no `timeout` in between: it would pass Ctrl-C on a second
# time); NAME.out, NAME.err; $BGPID. A watchdog kills the group after 20 minutes.
start() {
    local name=$1
    shift
    setsid "$PGOLAB" "${RUN[@]}" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    BGPID=$!
    setsid bash -c "sleep 1200; kill -KILL -- -$BGPID" 2>/dev/null &
    WDOG=$!  # its own group too: killing the group ends its sleep
}
# interrupt NAME WHAT CMD...: once CMD succeeds (polled every 0.05 s, at most 15 min), Ctrl-C
# the group; checks exit 2, the interruption said, nothing of the group left. WHAT: the phase.
interrupt() {
    local name=$1 what=$2 rc
    shift 2
    poll 18000 0.05 "$@"
    ok "$what: reached (the phase before it finished)" "$@" || diag "$(tail -5 "$TMP/$name.err")"
    kill -INT -- "-$BGPID"
    wait "$BGPID"
    rc=$?
    kill -- "-$WDOG" 2>/dev/null
    is "$rc" 2 "$what: exit 2 after Ctrl-C"
    like "$(cat "$TMP/$name.err")" "interrupted" "$what: says it was interrupted" ||
        diag "$(tail -5 "$TMP/$name.err")"
    # what Ctrl-C stopped (a compiler, a hash, a bench child) is not reported as a failure
    is "$(grep -c '^FATAL: ' "$TMP/$name.err")" 1 "$what: one FATAL line, the interruption's" ||
        diag "$(grep '^FATAL: ' "$TMP/$name.err")"
    unlike "$(cat "$TMP/$name.err")" "failed|--- last lines of" "$what: no 'failed', no log tail"
    poll 100 0.1 test -z "$(pgrep -g "$BGPID")"
    is "$(pgrep -g "$BGPID" | wc -l)" 0 "$what: no process of the pipeline is left"
    # a compiler or a prepare step runs in a process group of its own (stopped through
    # pgolab's interrupt flag): none is left either; their command lines name the workdir
    poll 100 0.1 test -z "$(pgrep -f -- "$WD/")"
    is "$(pgrep -f -- "$WD/" | wc -l)" 0 "$what: no compiler or step working in the workdir is left" ||
        diag "$(pgrep -af -- "$WD/")"
    BGPID=
}
line() { grep -qE "$2" "$TMP/$1.err"; }
root() { ls -d "$WD"/build-gcc-*/ 2>/dev/null | head -1; }
# cut_phase NAME WHAT AFTER NOT_DONE: a run interrupted once the line AFTER shows the phase before
# WHAT finished (interrupt's checks), and no line NOT_DONE: WHAT is not reported as done
cut_phase() {
    start "$1"
    interrupt "$1" "$2" line "$1" "$3"
    unlike "$(cat "$TMP/$1.err")" "$4" "$2: not reported as done"
}

note "---- 1. during the amalgamation (after the source phase)"
cut_phase r1 "amalgamation" '^source: ' '^amalgamation: '
like "$(cat "$TMP/r1.err")" "^FATAL: interrupted \(signal 2\); the same command continues" \
    "amalgamation: says how to go on"

note "---- 2. during the baseline and instrumented builds"
cut_phase r2 "builds" '^amalgamation: ' '^build: baseline'
like "$(cat "$TMP/r2.err")" "^amalgamation: .* made in [0-9]+ s$" "builds: the interrupted amalgamation was made again"

note "---- 3. during training"
cut_phase r3 "training" '^build: baseline \+ instrumented' '^training: '
like "$(cat "$TMP/r3.err")" "^amalgamation: .*\(cached\)$" "training: the amalgamation came from the cache"
like "$(cat "$TMP/r3.err")" "^build: baseline \+ instrumented \(gcc -O1\): 2/2 done in [0-9]+ s$" \
    "training: the interrupted builds were built again (2/2)"
R=$(root)
ok "training: no training stamp (the cut-off profile is not taken for a finished one)" test ! -e "${R}training.stamp"

note "---- 4. during the pgo build"
cut_phase r4 "pgo build" '^training: ' '^build: pgo'
like "$(cat "$TMP/r4.err")" "^training: 2 workloads on the instrumented build in [0-9]+ s$" \
    "pgo build: the interrupted training ran again, in full"

note "---- 5. the pgo build again and the correctness gate, not measured (--measure=off)"
# (A Ctrl-C inside the gate is not made here: on 1000 rows the gate's children live for
# milliseconds, too short for a poll to catch reliably; a signal between the gate and the
# measurement is test_signal_before_run in tests/unit/test_experiment.c.)
timeout 900 "$PGOLAB" "${RUN[@]}" --measure=off >"$TMP/r5.out" 2>"$TMP/r5.err"
is "$?" 0 "gate: --measure=off run, exit 0" || diag "$(tail -5 "$TMP/r5.err")"
like "$(cat "$TMP/r5.err")" '^correctness gate: ' "gate: passed"
like "$(cat "$TMP/r5.err")" "^training: the profile of an earlier training \(cached\)$" "gate: the finished training is reused"
like "$(cat "$TMP/r5.err")" "^build: pgo \(gcc -O1\): 1/1 done in [0-9]+ s$" "gate: the interrupted pgo build was built again"
is "$(sq "$DB" "SELECT count(*) FROM experiments" 2>/dev/null || echo 0)" 0 "gate: no experiment recorded before the gate passed"

note "---- 6. during the measurement, after its first recorded run"
start r6
interrupt r6 "measurement" eval 'line r6 "^correctness gate: " && [ "$(sq "$DB" "SELECT count(*) FROM runs" 2>/dev/null)" -ge 1 ] 2>/dev/null'
for b in baseline instrumented pgo; do
    like "$(cat "$TMP/r6.out")" "^  $b +.* \(cached\)$" "measurement: the $b library came from the cache"
done
ID=$(sq "$DB" "SELECT id FROM experiments ORDER BY id DESC LIMIT 1")
is "$(sq "$DB" "SELECT kind || ' ' || status FROM experiments WHERE id = $ID")" "pgo interrupted" \
    "measurement: experiment $ID recorded as an interrupted pgo experiment"
mid=$(sq "$DB" "SELECT count(*) FROM runs WHERE experiment_id = $ID")
cmp_ok "$mid" '<' 6 "measurement: stopped early ($mid of 6 runs kept)"
like "$(cat "$TMP/r6.err")" "^experiment $ID interrupted: \`pgolab pgo sqlite --resume=$ID --results=$DB --workdir=$WD --cflags=-O1\` continues it \(with the settings it recorded\)$" \
    "measurement: names the exact --resume=$ID command, with the build options it had"

note "---- 7. --resume with the build options only finishes the measurement"
# the training and measurement settings (--train, --train-time, --bench, --threads, --time,
# --rounds, --table-size) come from the store; a disagreeing one is refused first
timeout 60 "$PGOLAB" pgo sqlite --workdir="$WD" --cflags=-O1 --resume="$ID" --results="$DB" --rounds=4 \
    >"$TMP/r7x.out" 2>"$TMP/r7x.err"
is "$?" 1 "resume with --rounds=4 (recorded 3): exit 1"
is "$(cat "$TMP/r7x.err")" "FATAL: cannot resume experiment $ID: --rounds=4 differs from its recorded --rounds=3 (leave --rounds out to continue with the recorded settings)" \
    "resume with --rounds=4: one line naming both values"
# the command as printed (its words have no quotes here)
printed=$(sed -n "s/^experiment $ID interrupted: \`pgolab \(.*\)\` continues it.*/\1/p" "$TMP/r6.err")
read -r -a printed_args <<<"$printed"
timeout 600 "$PGOLAB" "${printed_args[@]}" >"$TMP/r7.out" 2>"$TMP/r7.err"
is "$?" 0 "resume with the printed command: exit 0" || diag "$(tail -5 "$TMP/r7.err")"
is "$(sq "$DB" "SELECT status FROM experiments WHERE id = $ID")" complete "resume: the experiment is complete"
is "$(sq "$DB" "SELECT count(*) FROM experiments")" 1 "resume: no second experiment"
want=$(for v in 0 1; do for r in 1 2 3; do echo "$v/$r"; done; done)
is "$(sq "$DB" "SELECT variant_idx || '/' || round FROM runs WHERE experiment_id = $ID ORDER BY variant_idx, round")" \
    "$want" "resume: exactly the planned runs (2 variants x 3 rounds), none lost, none twice"
is "$(sq "$DB" "PRAGMA integrity_check")" ok "resume: the results database is intact"
timeout 30 "$PGOLAB" report --results="$DB" --experiment="$ID" >"$TMP/rep.out" 2>"$TMP/rep.err"
is "$?" 0 "resume: pgolab report reads it"
unlike "$(cat "$TMP/rep.out")" "INCOMPLETE" "resume: the report covers every run"

done_testing
