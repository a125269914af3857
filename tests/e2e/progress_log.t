#!/usr/bin/env bash
# Progress off a terminal (stderr to a file: `make demo > log`, CI, nohup): a SQLite compare
# of three rounds prints plain lines, never a carriage return or an escape sequence: the
# prepare, the start of the measurement with its ETA, and a line per finished round with the
# ETA (PGOLAB_PROGRESS_EVERY=0 lets every round end print; by default at most one line a
# minute, see src/experiment/pace.h), then the workload's end. On a terminal (under script(1))
# the status line stays as it was and the paced lines are not printed.
. "$(dirname "$0")/lib.sh"

SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
run=(compare --variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so"
    --bench=oltp_point_select --threads=1 --rounds=3 --time=1 --table-size=500)

# ---- 1. off a terminal
PGOLAB_PROGRESS_EVERY=0 timeout 120 "$PGOLAB" "${run[@]}" --results="$TMP/log.db" \
    >"$TMP/log.out" 2>"$TMP/log.err"
is "$?" 0 "compare with stderr to a file: exit 0" || diag "$(tail -5 "$TMP/log.err")"
is "$(grep -c $'\r' "$TMP/log.err")" 0 "no carriage return in the log"
is "$(grep -c $'\e' "$TMP/log.err")" 0 "no escape sequence in the log"
like "$(<"$TMP/log.err")" "^prepared oltp_point_select for A: 500 rows in " "a line for the prepare"
like "$(<"$TMP/log.err")" "^measuring oltp_point_select: 3 rounds x 1 thread count x 2 variants, 0 of 6 runs recorded, ETA [0-9hms]+$" "a line when the measurement starts, with the ETA"
for r in 1 2 3; do
    is "$(grep -cE "^round $r/3 done  oltp_point_select  \[[0-9]+ of 6 runs recorded, ETA [0-9]+(s|m[0-9]{2}s|h[0-9]{2}m)\]$" "$TMP/log.err")" 1 \
        "round $r: one line with the runs recorded and the ETA"
done
like "$(<"$TMP/log.err")" "^measured oltp_point_select: 6 runs in [0-9hms]+ \(6 of 6 runs recorded\)" "a line when the workload is measured"
# the rounds' lines in order, after the start line and before the end line
is "$(grep -oE '^(measuring|round [0-9]/3 done|measured)' "$TMP/log.err" | tr '\n' ',')" \
    "measuring,round 1/3 done,round 2/3 done,round 3/3 done,measured," "the lines in order"

# ---- 2. on a terminal: today's status line, none of the paced lines
if have script; then
    printf -v cmdline '%q ' "$PGOLAB" "${run[@]}" --results="$TMP/tty.db"
    PGOLAB_PROGRESS_EVERY=0 timeout 120 script -qec "$cmdline >$TMP/tty.out" /dev/null >"$TMP/tty.log" 2>&1
    is "$?" 0 "compare on a terminal: exit 0" || diag "$(tail -5 "$TMP/tty.log")"
    cmp_ok "$(grep -c $'\r' "$TMP/tty.log")" '>' 0 "on a terminal: the status line, redrawn with a carriage return"
    like "$(<"$TMP/tty.log")" "round [0-9]/3  oltp_point_select  threads=1  [AB]  \[run [0-9]/6, ETA " "... saying the round, run and ETA"
    unlike "$(<"$TMP/tty.log")" "round [0-9]/3 done|measuring oltp_point_select" "... and no paced log lines"
else
    skip 4 "no script(1) for a terminal"
fi
done_testing
