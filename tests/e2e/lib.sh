# lib.sh: shared helpers for the end-to-end TAP scripts in tests/e2e/*.t (bash).
#
# Source it first thing:  . "$(dirname "$0")/lib.sh"
#
# Provides
#   PGOLAB       the binary under test: $PGOLAB, else the repo's ./pgolab
#   TMP          a fresh temp dir for this script, removed on exit (also on ^C)
#   TAP          plan N | done_testing | ok DESC CMD... | is GOT WANT DESC | isnt |
#                like GOT ERE DESC | unlike | cmp_ok A OP B DESC | near A B TOL DESC |
#                diag MSG | note MSG | skip N WHY | skip_anywhere N WHY | bail_out WHY
#                (WHY names what the check needs and where it runs instead; under
#                PGOLAB_CI=1, set by .ci/run, `skip` fails: CI must run every check;
#                skip_anywhere is for a skip that is right in CI too, e.g. a race lost)
#                TODO="reason" before a check marks it as a known failure (TAP "# TODO")
#   pg NAME ARGS...   runs "$PGOLAB bench ARGS" with a time cap; stdout in $TMP/NAME.out,
#                     stderr in $TMP/NAME.err, exit status in $RC
#   parse_final FILE  prints F_* shell assignments parsed from the final report block;
#                     use as: eval "$(parse_final "$TMP/x.out")"
#   sq DB SQL         runs SQL with the sqlite3 CLI (one value per line)
#   have CMD          true if CMD is on PATH
#   bench_fails LABEL ERE ARGS...   four checks: `pgolab bench ARGS` fails in one line, no report
#   poll, free_port, private_server, end_server   waiting, a free port, hand-made servers
#   srv, server_fails, ... `pgolab server` tests: see "---- pgolab server tests" below
#   standin_setup, derive, pgo, info, ...   `pgolab pgo` recipe tests on the stand-in: see
#                     "---- pgolab pgo tests on the stand-in" below
#   browse, page_check, fails   an HTML report in headless Chromium: see "---- HTML reports
#                     in a browser" below

set -u

E2E_DIR=$(cd "$(dirname "$0")" && pwd)
REPO_DIR=$(cd "$E2E_DIR/../.." && pwd)
PGOLAB=${PGOLAB:-$REPO_DIR/pgolab}
# A single invocation must never hang the suite (seconds, for `timeout`).
E2E_CMD_TIMEOUT=${E2E_CMD_TIMEOUT:-60}

_tap_n=0
_tap_fail=0
_tap_planned=
TODO=

TMP=$(mktemp -d "${TMPDIR:-/tmp}/pgolab-e2e.XXXXXX") || { echo "Bail out! mktemp failed"; exit 255; }
_e2e_cleanup() {
    rm -rf "$TMP"
}
# on_exit CMD: run CMD when this test file's own shell exits, never in a child. bash 5.2 runs an
# inherited EXIT trap in a background subshell that is killed before it has reset its traps (a
# watchdog `( sleep N && kill ... ) &` killed right after the command it guards exited): with a
# plain `trap CMD EXIT` that child removed $TMP under the running test. Reproduced with a
# core loaded: `( sleep 15 ) & kill $!` removed the parent's directory on the first try.
_E2E_MAIN=$BASHPID
on_exit() {
    trap "[ \"\$BASHPID\" = $_E2E_MAIN ] || exit; $1" EXIT
}
on_exit _e2e_cleanup
trap 'exit 130' INT TERM
# The registry of running pgolab servers (`pgolab server status` without --datadir) is this
# file's own: test files run side by side (tests/check.sh) and must not list or ping each
# other's servers. A file that tests the registry sets PGOLAB_RUNTIME_DIR itself.
mkdir -m 0700 "$TMP/registry" && export PGOLAB_RUNTIME_DIR=$TMP/registry

plan() {
    _tap_planned=$1
    echo "1..$1"
}

bail_out() {
    echo "Bail out! $*"
    exit 255
}

# diag LINE...: each line of each argument as a TAP comment, on stderr; note: on stdout. No
# process: a file prints thousands.
diag() {
    note "$@" >&2
}

note() {
    local a
    [ $# -gt 0 ] || set -- ""
    for a in "$@"; do
        printf '# %s\n' "${a//$'\n'/$'\n'# }"
    done
}

# _tap_result STATUS DESC: print one TAP line; STATUS 0 = pass.
_tap_result() {
    local status=$1 desc=$2 suffix=
    _tap_n=$((_tap_n + 1))
    [ -n "$TODO" ] && suffix=" # TODO $TODO"
    desc=${desc//$'\n'/ }
    desc=${desc//#/_}
    if [ "$status" -eq 0 ]; then
        echo "ok $_tap_n - $desc$suffix"
    else
        echo "not ok $_tap_n - $desc$suffix"
        [ -z "$TODO" ] && _tap_fail=$((_tap_fail + 1))
    fi
    return "$status"
}

# ok DESC CMD [ARGS...]: passes when CMD exits 0.
ok() {
    local desc=$1
    shift
    "$@"
    _tap_result $? "$desc"
}

is() {
    if [ "$1" = "$2" ]; then
        _tap_result 0 "$3"
    else
        _tap_result 1 "$3"
        diag "     got: '$1'" "expected: '$2'"
        return 1
    fi
}

isnt() {
    if [ "$1" != "$2" ]; then
        _tap_result 0 "$3"
    else
        _tap_result 1 "$3"
        diag "     got: '$1'" "expected anything else"
        return 1
    fi
}

# like GOT ERE DESC: some line of GOT matches the extended regex.
like() {
    if grep -Eq -- "$2" <<<"$1"; then
        _tap_result 0 "$3"
    else
        _tap_result 1 "$3"
        diag "     got: '$(printf '%s' "$1" | head -c 2000)'" "expected to match: /$2/"
        return 1
    fi
}

unlike() {
    if grep -Eq -- "$2" <<<"$1"; then
        _tap_result 1 "$3"
        diag "     got: '$(printf '%s' "$1" | head -c 2000)'" "expected not to match: /$2/"
        return 1
    else
        _tap_result 0 "$3"
    fi
}

# _num A OP B: numeric comparison (floats) with awk; false when either side is not a number.
_num() {
    awk -v a="$1" -v op="$2" -v b="$3" 'BEGIN {
        n = "^[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?$"
        if (a !~ n || b !~ n) exit 2
        a += 0; b += 0
        if (op == "==") r = (a == b); else if (op == "!=") r = (a != b)
        else if (op == "<") r = (a < b); else if (op == "<=") r = (a <= b)
        else if (op == ">") r = (a > b); else if (op == ">=") r = (a >= b)
        else exit 2
        exit !r
    }'
}

# cmp_ok A OP B DESC (OP: == != < <= > >=, numeric)
cmp_ok() {
    if _num "$1" "$2" "$3"; then
        _tap_result 0 "$4"
    else
        _tap_result 1 "$4"
        diag "    '$1'" "        $2" "    '$3'"
        return 1
    fi
}

# near A B TOL DESC: |A - B| <= TOL (numbers).
near() {
    if awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {
            n = "^[-+]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?$"
            if (a !~ n || b !~ n) exit 1
            d = a - b; if (d < 0) d = -d
            exit !(d <= t + 0)
        }'; then
        _tap_result 0 "$4"
    else
        _tap_result 1 "$4"
        diag "     got: '$1'" "expected: '$2' +/- $3"
        return 1
    fi
}

# skip N WHY: N checks skipped, WHY = what they need and where they run instead. Under
# PGOLAB_CI=1 (.ci/run) they fail instead: CI installs every dependency, so a skip there hides
# a check that should have run.
skip() {
    local i
    case ${PGOLAB_CI:-0} in
    0 | '') skip_anywhere "$@" ;;
    *)
        for i in $(seq 1 "$1"); do
            _tap_result 1 "skipped under PGOLAB_CI=1 (CI must run it): $2"
        done
        ;;
    esac
}

# skip_anywhere N WHY: N checks skipped, in CI too (a condition CI cannot provide either).
skip_anywhere() {
    local i
    for i in $(seq 1 "$1"); do
        _tap_n=$((_tap_n + 1))
        echo "ok $_tap_n # skip $2"
    done
}

done_testing() {
    [ -z "$_tap_planned" ] && echo "1..$_tap_n"
    if [ "$_tap_fail" -gt 0 ]; then
        diag "failed $_tap_fail of $_tap_n checks"
        exit 1
    fi
    exit 0
}

have() {
    command -v "$1" >/dev/null 2>&1
}

# psql: the newest installed client binary itself. Debian's /usr/bin/psql is pg_wrapper, a
# Perl script that picks that same binary for a command that names its host and port (every
# test's does) and costs about 35 ms of CPU per call; parity_sysbench.t alone makes 800 calls.
_e2e_psql=$(ls -d /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -1)
if [ -n "$_e2e_psql" ]; then
    psql() { "$_e2e_psql" "$@"; }
fi

# pg NAME ARGS...: run `pgolab bench ARGS` (capped at E2E_CMD_TIMEOUT s).
pg() {
    local name=$1
    shift
    timeout -k 5 "$E2E_CMD_TIMEOUT" "$PGOLAB" bench "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
    if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then
        diag "pgolab bench $* timed out after ${E2E_CMD_TIMEOUT}s"
    fi
    return 0
}

sq() {
    sqlite3 -batch -noheader "$1" "$2"
}

# calc EXPR: arithmetic with awk (exact for integers below 2^53).
# Prints "calc-error(...)" when the expression is bad (e.g. an empty parsed value), so a check
# comparing against it fails instead of comparing two empty strings.
calc() {
    local r
    r=$(awk "BEGIN { printf \"%.10g\n\", $* }" 2>/dev/null)
    case $r in
    '' | *[!0-9.eE+-]*) echo "calc-error($*)" ;;
    *) echo "$r" ;;
    esac
}

# _final_parse FILE: the cumulative report (sysbench 1.0 layout) of FILE into _F[key] (keys:
# _FINAL_KEYS). Read by bash itself, each line tried against the one pattern its start can
# match: a fork costs ~10 ms on this machine, and the tests parse about 1,000 reports.
_final_parse() {
    local l in= k
    _F=()
    local re_count='^        (read|write|other|total):[[:space:]]+([0-9]+)$'
    local re_rate='^    (transactions|queries|ignored errors|reconnects):[[:space:]]+([0-9]+)[[:space:]]+\(([0-9.]+) per sec\.\)$'
    local re_time='^    total time:[[:space:]]+([0-9.]+)s$'
    local re_events='^    total number of events:[[:space:]]+([0-9]+)$'
    local re_lat='^         (min|avg|max|sum):[[:space:]]+([0-9.]+)$'
    local re_pct='^        +([0-9]+)th percentile:[[:space:]]+([0-9.]+)$'
    local re_pct_off='^         percentile stats:[[:space:]]+disabled$'
    local re_fair='^    (events|execution time) \(avg/stddev\):[[:space:]]+([0-9.]+)/([0-9.]+)$'
    while IFS= read -r l || [ -n "$l" ]; do
        if [ -z "$in" ]; then
            [ "$l" = "SQL statistics:" ] || continue
            in=1
        fi
        # each line is tried against the one pattern its start can match
        case $l in
        "        read:"* | "        write:"* | "        other:"* | "        total:"*)
            [[ $l =~ $re_count ]] && _F[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]} ;;
        "    transactions:"* | "    queries:"* | "    ignored errors:"* | "    reconnects:"*)
            if [[ $l =~ $re_rate ]]; then
                k=${BASH_REMATCH[1]// /_}
                _F[$k]=${BASH_REMATCH[2]} _F[${k}_ps]=${BASH_REMATCH[3]}
            fi ;;
        "    total time:"*) [[ $l =~ $re_time ]] && _F[total_time]=${BASH_REMATCH[1]} ;;
        "    total number of events:"*) [[ $l =~ $re_events ]] && _F[total_events]=${BASH_REMATCH[1]} ;;
        "         min:"* | "         avg:"* | "         max:"* | "         sum:"*)
            [[ $l =~ $re_lat ]] && _F[lat_${BASH_REMATCH[1]}]=${BASH_REMATCH[2]} ;;
        "         percentile stats:"*) [[ $l =~ $re_pct_off ]] && _F[pct_disabled]=1 ;;
        "        "*"th percentile:"*)
            [[ $l =~ $re_pct ]] && _F[pct_label]=${BASH_REMATCH[1]} _F[lat_pct]=${BASH_REMATCH[2]} ;;
        "    events (avg/stddev):"* | "    execution time (avg/stddev):"*)
            if [[ $l =~ $re_fair ]]; then
                k=fair_events
                [ "${BASH_REMATCH[1]}" = events ] || k=fair_time
                _F[${k}_avg]=${BASH_REMATCH[2]} _F[${k}_sd]=${BASH_REMATCH[3]}
            fi ;;
        esac
    done <"$1"
}
# parse_final FILE: the cumulative report as shell assignments, F_key=value per line.
# final_vars FILE [PREFIX]: the same assignments made in this shell, to PREFIXkey (default F_),
# without a process. Every key is set (empty when its line is missing), so a missing line
# fails the check that uses it instead of silently reusing an older value.
_FINAL_KEYS="read write other total transactions transactions_ps queries queries_ps
    ignored_errors ignored_errors_ps reconnects reconnects_ps total_time total_events lat_min
    lat_avg lat_max lat_pct pct_label pct_disabled lat_sum fair_events_avg fair_events_sd
    fair_time_avg fair_time_sd"
declare -A _F
parse_final() {
    local k
    _final_parse "$1"
    for k in $_FINAL_KEYS; do printf 'F_%s=%s\n' "$k" "${_F[$k]-}"; done
}
final_vars() {
    local k
    _final_parse "$1"
    for k in $_FINAL_KEYS; do printf -v "${2:-F_}$k" '%s' "${_F[$k]-}"; done
}

# bench_fails LABEL ERE ARGS...: 4 checks: `pgolab bench ARGS` exits 1, one stderr line matching ERE, no report
bench_fails() {
    local label=$1 re=$2
    shift 2
    pg err "$@"
    is "$RC" 1 "$label: exit status 1"
    is "$(wc -l <"$TMP/err.err" | tr -d ' ')" 1 "$label: one line on stderr"
    like "$(<"$TMP/err.err")" "$re" "$label: message"
    is "$(grep -c 'SQL statistics' "$TMP/err.out")" 0 "$label: no report printed"
}

# poll TRIES SECONDS CMD [ARGS...]: run CMD up to TRIES times, SECONDS apart, until it succeeds (else false)
# catches PID SIGNUM: PID has a handler installed for signal SIGNUM (its bit in SigCgt of
# /proc/PID/status). A test waits for it before signalling: a signal that comes earlier takes
# the default action, however fast or slow the machine is.
catches() {
    local m
    m=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
    [ -n "$m" ] && [ $(((0x$m >> ($2 - 1)) & 1)) -eq 1 ]
}

poll() {
    local tries=$1 pause=$2 i
    shift 2
    for i in $(seq 1 "$tries"); do
        "$@" && return 0
        sleep "$pause"
    done
    return 1
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on (python3). Free when asked: a
# server of another test file may take it later, so to connect to nothing use refused_port.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# refused_port VAR: sets VAR to a TCP port on 127.0.0.1 that a helper process holds bound and
# not listening until the test's shell ends (it watches that pid; it is no job of the shell, so
# a bare `wait` does not wait for it): a connection to it is refused, whatever else runs.
refused_port() {
    local f=$TMP/refused.$RANDOM
    (python3 -c 'import os, socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1], flush=True)
for _ in range(36000):
    try:
        os.kill(int(sys.argv[1]), 0)
    except OSError:
        break
    time.sleep(0.1)' "$$" >"$f" 2>/dev/null </dev/null &)
    poll 100 0.05 test -s "$f" || bail_out "refused_port: the helper gave no port"
    printf -v "$1" '%s' "$(<"$f")"
}

# exited PID: no process PID (kill -0 fails).
exited() {
    ! kill -0 "$1" 2>/dev/null
}

# private_server DRIVER VAR: before a hand-made server: a note, a free PORT, new dir /dev/shm/pgolab-DRIVER.* in VAR
private_server() {
    local d
    note "---- start a private server"
    PORT=$(free_port)
    d=$(mktemp -d "/dev/shm/pgolab-$1.XXXXXX") || bail_out "mktemp in /dev/shm failed"
    printf -v "$2" '%s' "$d"
}

# end_server PID TRIES DIR: give PID (told to stop) TRIES x 0.1 s, SIGKILL it, wait for children, rm DIR (may be "")
end_server() {
    if [ -n "$1" ]; then
        poll "$2" 0.1 exited "$1"
        kill -KILL "$1" 2>/dev/null
    fi
    wait 2>/dev/null
    [ -z "$3" ] || rm -rf "$3"
}

# ---- pgolab server tests (server_*.t): a script sets SERVER_ARGS_RE, the ERE that comes before a
# datadir on its server's command line ('--datadir=' or 'postgres -D '), and `trap srv_cleanup EXIT`.

DATADIRS=()  # every datadir a server may run in: srv_cleanup stops them at exit, whatever happened

# srv NAME ARGS...: `pgolab server ARGS` (capped); stdout $TMP/NAME.out, stderr $TMP/NAME.err, $RC
srv() {
    local name=$1
    shift
    timeout -k 5 "$E2E_CMD_TIMEOUT" "$PGOLAB" server "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
    if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then diag "pgolab server $* timed out"; fi
    return 0
}

# field NAME KEY: the value of "KEY: value" in $TMP/NAME.out (first line)
field() { sed -n "s/^$2: *//p" "$TMP/$1.out" | head -1; }

# started NAME: sets D (datadir), PORT, PID from a start's output and remembers D for cleanup
started() {
    D=$(field "$1" datadir | sed 's/ (.*//')
    PORT=$(field "$1" port | sed 's/^127\.0\.0\.1://')
    PID=$(field "$1" server | sed -n 's/.*(pid \([0-9]*\))$/\1/p')
    [ -n "$D" ] && DATADIRS+=("$D")
}

# state_pid DIR: the pid recorded in DIR's state file
state_pid() { sed -n 's/^ *"pid": \([0-9]*\),$/\1/p' "$1/pgolab-server.json" 2>/dev/null; }

# tail_datadir NAME: the datadir whose log tail ("---- last lines of DIR/pgolab-server.log:") $TMP/NAME.err shows
# (a failed start names the copy of the log it keeps beside the datadir, DATADIR.log)
tail_datadir() { sed -n 's/^---- last lines of \(.*\)\(\/pgolab-server\)\{0,1\}\.log:$/\1/p' "$TMP/$1.err" | head -1; }

# no_server_in DIR: no process has "$SERVER_ARGS_RE DIR" on its command line
no_server_in() { ! pgrep -f -- "$SERVER_ARGS_RE$1( |\$)" >/dev/null; }

# _no_process PID: PID does not exist or is a zombie
_no_process() {
    local s
    s=$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)
    [ -z "$s" ] || [ "$s" = Z ]
}

# gone PID: no such process within 10 s (a stopped server is reaped by its parent)
gone() { poll 100 0.1 _no_process "$1"; }

# listens_only_loopback PORT: LISTEN on 127.0.0.1:PORT and on no other address (IPv4 or 6)
listens_only_loopback() {
    local hex
    hex=$(printf '%04X' "$1")
    grep -q "^ *[0-9]*: 0100007F:$hex [0-9A-F:]* 0A " /proc/net/tcp || return 1
    ! grep -v "0100007F:$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -q ":$hex [0-9A-F:]* 0A "
}

# srv_cleanup: EXIT trap: stop (else SIGKILL) the servers in DATADIRS, remove generated and $TMP datadirs, _e2e_cleanup
srv_cleanup() {
    local d pid
    for d in "${DATADIRS[@]}"; do
        [ -f "$d/pgolab-server.json" ] || continue
        timeout 70 "$PGOLAB" server stop --datadir="$d" >/dev/null 2>&1 && continue
        pid=$(state_pid "$d")
        [ -n "$pid" ] && grep -qa -- "$d" "/proc/$pid/cmdline" 2>/dev/null && kill -KILL "$pid"
    done
    for d in "${DATADIRS[@]}"; do
        case $d in /dev/shm/pgolab-mysql.* | /dev/shm/pgolab-pgsql.* | "$TMP"/*) rm -rf "$d" ;; esac
    done
    _e2e_cleanup
}

# server_fails NAME ERE ARGS...: 3 checks: `pgolab server ARGS` exits 1 with exactly one stderr line, matching ERE
server_fails() {
    local name=$1 re=$2
    shift 2
    srv "$name" "$@"
    is "$RC" 1 "$name: exit 1"
    is "$(wc -l <"$TMP/$name.err" | tr -d ' ')" 1 "$name: one line on stderr"
    like "$(<"$TMP/$name.err")" "$re" "$name: names the problem"
}

# running_checks: 4 checks on the started server PID (D, PORT): it runs, state file, own session, loopback only
running_checks() {
    ok "start: the server runs after pgolab exited" kill -0 "$PID"
    is "$(state_pid "$D")" "$PID" "start: state file records the pid"
    is "$(ps -o sid= -p "$PID" | tr -d ' ')" "$PID" "start: the server leads its own session (no terminal signals)"
    ok "start: listens on 127.0.0.1:$PORT only" listens_only_loopback "$PORT"
}

# sysbench_checks DRIVER NAME: 3 checks: sysbench prepares and runs with the client options start NAME printed
sysbench_checks() {
    local drv=$1 name=$2 sb
    if ! have sysbench; then
        skip 3 "needs sysbench (make deps installs it); runs only here"
        return 0
    fi
    # the printed options: separate words
    sb=(sysbench $(field "$name" client | sed "s/--db-driver=$drv //") --db-driver="$drv" --tables=1 --table-size=200)
    "${sb[@]}" oltp_point_select prepare >"$TMP/sbp.out" 2>&1
    is "$?" 0 "sysbench: prepare with the printed options"
    "${sb[@]}" --time=1 oltp_point_select run >"$TMP/sbr.out" 2>&1
    is "$?" 0 "sysbench: run with the printed options"
    like "$(<"$TMP/sbr.out")" '^ +transactions: +[1-9][0-9]* ' "sysbench: transactions ran"
}

# stop_checks NAME SERVER: 5 checks: stop (output NAME) of server SERVER (D, PID): exit 0, quiet, clean, gone, D removed
stop_checks() {
    srv "$1" stop --datadir="$D"
    is "$RC" 0 "stop: exit 0"
    is "$(<"$TMP/$1.err")" "" "stop: nothing on stderr"
    like "$(field "$1" stopped)" "^$2 \(pid $PID\), clean shutdown$" "stop: says it was a clean shutdown"
    ok "stop: the process is gone" gone "$PID"
    ok "stop: the generated datadir is removed" test ! -e "$D"
}

# start_timeout_checks LOG_ERE LIMIT TIMEOUT ARGS...: 6 checks: `server start --timeout=TIMEOUT ARGS` gives up
# (TIMEOUT includes the datadir's initialization: long enough for it on a loaded machine), log
# tail, cleaned up, within LIMIT seconds
start_timeout_checks() {
    local re=$1 limit=$2 timeout=$3 t0 t1 dir
    shift 3
    t0=$(date +%s)
    srv slow start --timeout="$timeout" "$@"
    t1=$(date +%s)
    is "$RC" 1 "start timeout: exit 1"
    like "$(head -1 "$TMP/slow.err")" "did not accept connections within $timeout s" "start timeout: says so"
    like "$(<"$TMP/slow.err")" "$re" "start timeout: shows the log tail"
    dir=$(tail_datadir slow)
    ok "start timeout: the generated datadir is removed" test -n "$dir" -a ! -e "$dir"
    ok "start timeout: no server left" no_server_in "$dir"
    rm -f "$dir.log"  # the copy of the log the message named
    cmp_ok "$((t1 - t0))" '<' "$limit" "start timeout: gave up in time ($((t1 - t0)) s)"
}

# sigint_checks LOG_ERE ARGS...: 5 checks: SIGINT to `server start --datadir=$TMP/sigint ARGS` once its log has LOG_ERE
sigint_checks() {
    local re=$1 dir=$TMP/sigint pid rc
    shift
    "$PGOLAB" server start --datadir="$dir" "$@" >"$TMP/int.out" 2>"$TMP/int.err" &
    pid=$!
    DATADIRS+=("$dir")
    poll 600 0.1 grep -Eqs -- "$re" "$dir/pgolab-server.log"  # initdb/install-db first: slow under load
    ok "SIGINT: the server was up (and not ready) when the signal came" running_in "$dir"
    kill -INT "$pid"
    wait "$pid"
    rc=$?
    is "$rc" 2 "SIGINT: exit 2"
    like "$(<"$TMP/int.err")" "interrupted .* stopped it, nothing left running" "SIGINT: says so"
    ok "SIGINT: no server left" no_server_in "$dir"
    ok "SIGINT: the datadir pgolab created is removed" test ! -e "$dir"
}

# watchdog SECS PID: kill -KILL PID after SECS seconds unless end_watchdog comes first (a hung
# process must never stall the suite). end_watchdog ends the watchdog's sleep before the
# watchdog: a subshell that takes a TERM while its sleep runs (with the TERM trap it inherited
# from this file) acts on it only when the sleep ends, so a plain `kill; wait` could block for
# up to SECS. The watchdog holds none of the file's output open.
watchdog() {
    ( sleep "$1" && kill -KILL "$2" ) >/dev/null 2>&1 &
    _WATCHDOG=$!
}
end_watchdog() {
    [ -n "${_WATCHDOG:-}" ] || return 0
    pkill -P "$_WATCHDOG" 2>/dev/null
    kill "$_WATCHDOG" 2>/dev/null
    wait "$_WATCHDOG" 2>/dev/null
    _WATCHDOG=
}

# ---- shared fixtures: made once per `make check` run, in PGOLAB_E2E_FIXTURES (tests/check.sh
# sets it and removes it at the end); the first file that asks makes one under a lock, the others
# wait for it and reuse it. A file run alone (prove FILE) makes its own in $TMP.

# sqlite_amalgamation: SQLITE_SRC = Debian's SQLite source tree (`pgolab pgo sqlite --fetch`:
# the sqlite recipe's source package, through pgolab's own apt configuration),
# SQLITE_AMALG = a directory with its amalgamation (sqlite3.c, sqlite3.h), made as
# recipes/sqlite.json's prepare steps make it (configure, make sqlite3.c). For the tests that
# need SQLite's code but not pgolab's source and amalgamation phases (pgo_sqlite.t and
# pgo_interrupt.t run those). Bails out when the fixture cannot be made, naming its log.
sqlite_amalgamation() {
    local dir=${PGOLAB_E2E_FIXTURES:-$TMP/fixtures}/sqlite
    mkdir -p "$dir" || bail_out "cannot create $dir"
    (
        flock 9 || exit 1
        [ -e "$dir/done" ] && exit 0
        rm -rf "$dir/src" "$dir/amalg" && mkdir -p "$dir/src" "$dir/amalg" || exit 1
        "$PGOLAB" pgo sqlite --fetch --workdir="$dir" >"$dir/make.log" 2>&1 || exit 1
        src=$(ls -d "$dir"/src/sqlite3-*/ | head -1)
        { cd "$dir/amalg" && sh "${src}configure" && make sqlite3.c; } >>"$dir/make.log" 2>&1 || exit 1
        : >"$dir/done"
    ) 9>"$dir/lock" || bail_out "cannot make the SQLite amalgamation fixture (log: $dir/make.log)"
    SQLITE_SRC=$(ls -d "$dir"/src/sqlite3-*/ | head -1)
    SQLITE_SRC=${SQLITE_SRC%/}
    SQLITE_AMALG=$dir/amalg
}

# mysql_sid: MYSQL_SID_PREFIX = an install prefix whose bin/mysqld runs Debian sid's MySQL 9.7
# server (package mysql-server-core) with sid's own C library and the other libraries it links
# (a copy of sid's mysqld with sid's loader as its interpreter and an RPATH into them, made with
# patchelf): Debian 12 ships no MySQL and sid's binary needs a newer C
# library, so this is the real MySQL server for the server and client tests (server_mysql97.t,
# parity_mysql97.t) without a 2-hour build. The packages come through an apt configuration of
# the fixture's own (deb entries for sid in its directory; /etc/apt is not touched), made once
# under a lock like the SQLite fixture. Bails out naming its log when it cannot be made.
mysql_sid() {
    local dir=${PGOLAB_E2E_FIXTURES:-$TMP/fixtures}/mysql-sid
    have patchelf || bail_out "patchelf missing (make deps installs it)"
    mkdir -p "$dir" || bail_out "cannot create $dir"
    (
        flock 9 || exit 1
        [ -e "$dir/done" ] && exit 0
        rm -rf "$dir/apt" "$dir/debs" "$dir/root" "$dir/prefix" || exit 1
        mkdir -p "$dir/apt/sources.list.d" "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" \
            "$dir/debs" "$dir/root" "$dir/prefix/bin" || exit 1
        printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: sid\nComponents: main\nSigned-By: %s\n' \
            /usr/share/keyrings/debian-archive-keyring.gpg >"$dir/apt/sources.list.d/sid.sources"
        local o=(-o Dir::Etc::sourcelist=/dev/null -o "Dir::Etc::sourceparts=$dir/apt/sources.list.d"
            -o Dir::Etc::preferences=/dev/null -o "Dir::State::Lists=$dir/apt/lists"
            -o "Dir::Cache=$dir/apt/cache" -o Dir::State::status=/dev/null -o APT::Sandbox::User=root)
        {
            apt-get "${o[@]}" -q update || exit 1
            # the server and the shared libraries it needs, recursively (its Depends: perl and
            # the rest are for Debian's scripts, not for mysqld)
            local pkgs
            pkgs=$(apt-cache "${o[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
                --no-breaks --no-replaces --no-enhances mysql-server-core |
                grep -E '^(lib|zlib|mysql-server-core)' | sort -u)
            cd "$dir/debs" && apt-get "${o[@]}" -q download $pkgs || exit 1
            local d
            for d in "$dir"/debs/*.deb; do dpkg -x "$d" "$dir/root" || exit 1; done
        } >"$dir/make.log" 2>&1 || exit 1
        local lib=$dir/root/usr/lib/x86_64-linux-gnu
        [ -x "$lib/ld-linux-x86-64.so.2" ] && [ -x "$dir/root/usr/sbin/mysqld" ] || exit 1
        # a copy of mysqld whose interpreter is sid's loader and whose DT_RPATH (for every
        # library it loads) is sid's library directories: an ELF executable, not a script, so
        # valgrind (instruction mode) runs it as it runs any server
        cp "$dir/root/usr/sbin/mysqld" "$dir/prefix/bin/mysqld" &&
            patchelf --set-interpreter "$lib/ld-linux-x86-64.so.2" --force-rpath \
                --set-rpath "$lib:$dir/root/usr/lib" "$dir/prefix/bin/mysqld" >>"$dir/make.log" 2>&1 || exit 1
        ln -s "$dir/root/usr/share" "$dir/prefix/share" || exit 1
        "$dir/prefix/bin/mysqld" --version >>"$dir/make.log" 2>&1 || exit 1
        : >"$dir/done"
    ) 9>"$dir/lock" || bail_out "cannot make the MySQL (Debian sid) fixture (log: $dir/make.log)"
    MYSQL_SID_PREFIX=$dir/prefix
    MYSQL_SID_VERSION=$("$MYSQL_SID_PREFIX/bin/mysqld" --version | sed -n 's/.* Ver \([0-9.]*\).*/\1/p')
}

# ---- pgolab pgo tests on the stand-in (pgo_recipes.t, pgo_matrix.t): recipes derived from the real
# recipes/*.json for tests/standin, the small cmake "server" that runs the system mariadbd.

# standin_setup: bail out unless the stand-in's tools are installed; SRC = a copy of
# tests/standin (a test may edit it), RECIPES = an empty recipe directory, exported as
# PGOLAB_RECIPES (adding a target is adding a file there)
standin_setup() {
    local t
    [ -x /usr/sbin/mariadbd ] || bail_out "/usr/sbin/mariadbd not installed (make deps installs mariadb-server)"
    for t in jq cmake make gcc g++ bison; do
        have "$t" || bail_out "$t not installed (make deps installs it)"
    done
    SRC=$TMP/src
    cp -a "$REPO_DIR/tests/standin" "$SRC" || bail_out "cannot copy tests/standin"
    RECIPES=$TMP/recipes
    mkdir -p "$RECIPES"
    export PGOLAB_RECIPES=$RECIPES
}

# derive FROM NAME [JQ-FILTER]: recipes/FROM.json as RECIPES/NAME.json, for the stand-in's
# source (source.expect, source.hint) and its hot function (pgo.hot_functions: main), with
# JQ-FILTER applied after
STANDIN_EXPECT='["CMakeLists.txt", "cmake/fprofile.cmake", "standin.c"]'
derive() {
    jq --argjson e "$STANDIN_EXPECT" ".name = \"$2\" | del(.title) | .source.expect = \$e | .source.hint = \"the stand-in (tests/standin)\" | .pgo.hot_functions = [\"standin:main\"] ${3:+| $3}" \
        "$REPO_DIR/recipes/$1.json" >"$RECIPES/$2.json"
}

# pgo NAME TARGET ARGS...: `pgolab pgo TARGET ARGS` (capped at 300 s); $TMP/NAME.out, .err, $RC
pgo() {
    local name=$1
    shift
    timeout -k 5 300 "$PGOLAB" pgo "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
    [ "$RC" = 124 ] && diag "pgolab pgo $* timed out"
    return 0
}

# errors_of FILE: a pgo run's stderr without the phase lines it prints off a terminal
# ("source: ...", "build: ...", "training: ...", "bolt: ...", "correctness gate: ...") and the
# lines that say why a cached phase is redone ("rebuilding B: ...", "retraining T: ...), and
# without blank lines: what is left are its warnings and errors.
errors_of() { grep -vE '^(source|amalgamation|build|training|bolt|correctness gate|rebuilding [^ :]+|retraining [^ :]+): ' "$1" | grep -v '^[[:space:]]*$'; }
# info VARIANT-DIR KEY: KEY's value in the build-info.txt the stand-in of that build wrote
info() { sed -n "s/^$2: //p" "$1/prefix/share/standin/build-info.txt" 2>/dev/null; }
# count FILE RE: the number of lines of FILE matching RE (grep's basic regex; 0 for a missing file)
count() { grep -c -- "$2" "$1" 2>/dev/null; }
# option_of LOG NAME: the value of -DNAME=... on the build log's configure line
option_of() { grep -m1 '^\$ cd ' "$1" | grep -o -- "-D$2=[^ ']*" | head -1 | cut -d= -f2-; }

if [ ! -x "$PGOLAB" ]; then
    bail_out "pgolab binary not found at $PGOLAB (run 'make pgolab' or set PGOLAB=/path/to/pgolab)"
fi

# ---- HTML reports in a browser (report_html.t, compare_servers.t): headless Chromium (Debian
# `chromium`) loads a page from disk with every network request refused (a resolver that
# resolves nothing, a proxy port that accepts nothing); the page script
# (src/report/html_page.js) writes what it drew into its #pgolab-status block.
# browse FILE: load FILE in headless Chromium with the network refused; the page's status
# block in FILE.status, Chromium's log in FILE.log.
browse() {
    timeout 90 chromium --headless --no-sandbox --disable-gpu --no-first-run \
        --user-data-dir="$TMP/chromium-profile" --enable-logging=stderr --v=0 \
        --host-resolver-rules="MAP * ~NOTFOUND" --proxy-server=127.0.0.1:9 \
        --virtual-time-budget=3000 --dump-dom "file://$1" 2>"$1.log" |
        sed -n '/<pre id="pgolab-status"/,/<\/pre>/p' | sed -e 's/<[^>]*>//g' >"$1.status"
}

# page_check FILE CHART-SPEC...: browse FILE, then status_check it.
page_check() {
    browse "$1"
    status_check "$@"
}
# status_check FILE CHART-SPEC...: the page at FILE, as its last `browse` saw it (FILE.status
# and FILE.log), drew each chart "ID DATASETS POINTS" (POINTS as a,b,...) with ink (a heat map:
# its cell count), and no other chart, saw no error, made no request, and Chromium logged no
# console message. Prints what is wrong; 0 when nothing is.
status_check() {
    local f=$1 bad=0 spec id ds pts line
    shift
    [ -e "$f.status" ] && [ "$f.status" -nt "$f" ] || { echo "$f: not browsed since it was written"; return 1; }
    for spec in "$@"; do
        read -r id ds pts <<<"$spec"
        line=$(grep "^chart $id " "$f.status")
        if [ -z "$line" ]; then
            echo "chart $id: not drawn"
            bad=1
            continue
        fi
        [[ $line == *" datasets=$ds points=$pts "* ]] || { echo "chart $id: want datasets=$ds points=$pts, got: $line"; bad=1; }
        [[ $line == *" heatmap "* ]] && continue  # a table: its cells are counted, no canvas
        local ink=${line##*ink=} painted=${line##*painted=} least=50
        painted=${painted%% *}
        # series of one point each are markers (radius 3-4 px) that may all sit on one spot
        # (variants with the same tps): one marker's worth of ink is what they can promise
        [[ $pts =~ ^1(,1)*$ ]] && least=20
        [ "${ink:-0}" -ge $least ] && [ "${painted:-0}" -ge 1000 ] || { echo "chart $id: blank ($line)"; bad=1; }
    done
    [ "$(grep -c '^chart ' "$f.status")" = $# ] || { echo "charts drawn: $(grep -c '^chart ' "$f.status"), expected $#"; bad=1; }
    grep -qx 'errors=0' "$f.status" || { echo "page errors: $(grep '^errors=' "$f.status")"; bad=1; }
    grep -qx 'resources=0' "$f.status" || { echo "requests: $(grep '^resources=' "$f.status")"; bad=1; }
    if grep -q 'CONSOLE' "$f.log"; then
        echo "console: $(grep 'CONSOLE' "$f.log" | head -3)"
        bad=1
    fi
    return $bad
}
fails() { ! "$@" >/dev/null; }

# layout_check FILE NVARIANTS: what the page at FILE (browsed: FILE.status) breaks of the rules
# of a readable chart: every canvas's legend has at most one entry per variant (a timeline's
# exactly one), under a quarter of the canvas's height, and its plot area keeps over half.
layout_check() {
    awk -v nv="$2" '
        /^layout / {
            n++
            for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] + 0 }
            if (v["legend"] > nv || ($2 ~ /^time-/ && v["legend"] != nv))
                print $2 ": " v["legend"] " legend entries for " nv " variants"
            if (v["legend_h"] * 4 >= v["canvas_h"])
                print $2 ": the legend takes " v["legend_h"] " of " v["canvas_h"] " px"
            if (v["plot_h"] * 2 <= v["canvas_h"])
                print $2 ": the plot keeps " v["plot_h"] " of " v["canvas_h"] " px"
        }
        END { if (!n) print "no layout line" }' "$1.status"
}

# ---- the one estimator and the closing verdict of a text report (src/report/verdict.c)
# verdict_last FILE: the report's last block is the verdict: "ok" when a line "Verdict against
# ..." is followed only by its indented lines (no table, no blank line) up to the end of FILE
verdict_last() {
    awk '/^Verdict against / { on = 1; bad = 0; n = NR; next }
         on && !/^  [^ ]/ && !/^    [^ ]/ { bad = 1 }
         END { print (on && !bad && NR > n) ? "ok" : "not last" }' "$1"
}
# improvement_agrees FILE: in every table with "% improvement" and "change" columns, each
# variant's % improvement is the change's own estimate: a significant change "+X.X% (95% CI
# ...)" beside "+X.XX" (the same sign, within the rounding), "~" beside "(+X.XX)" or "-";
# prints "ROWS rows agree" or the first disagreeing row
improvement_agrees() {
    perl -e '
        my (@imp, @chg, $rows, $bad);
        sub cells { my $l = shift; $l =~ s/^\|//; $l =~ s/\|\s*$//; map { s/^\s+|\s+$//gr } split /\|/, $l }
        while (<>) {
            chomp;
            if (!/^\|/) { @imp = (); next }
            my @c = cells($_);
            if (grep { /^% improvement/ } @c) {
                @imp = grep { $c[$_] =~ /^% improvement/ } 0 .. $#c;
                @chg = grep { $c[$_] =~ /^change/ } 0 .. $#c;
                next;
            }
            next if !@imp || /^\|[-:|]+\|?$/;
            for my $k (0 .. $#imp) {
                my ($i, $ch) = ($c[$imp[$k]], $c[$chg[$k]]);
                $rows++;
                my $ok;
                if ($ch =~ /^([-+][0-9.]+)% \(95% CI/) {
                    my $x = $1;
                    $ok = $i =~ /^[-+][0-9.]+$/ && abs($i - $x) <= 0.051 + 1e-9 &&
                          ($x == 0 || $i * $x > 0);
                } elsif ($ch eq "~") {
                    $ok = $i =~ /^\([-+][0-9.]+\)$/ || $i eq "-";
                } else {
                    $ok = $i =~ /^[-+][0-9.]+$/ || $i eq "-";
                }
                if (!$ok) { $bad //= "row \"$_\": \"$i\" beside \"$ch\"" }
            }
        }
        print $bad // (($rows // 0) . " rows agree"), "\n"' "$1"
}
# p_only_deciding FILE: in the seed-002 table a p is printed only where it decides the
# verdict: "-" when the CI holds 1; where the CI excludes 1, "~" only with p >= 0.05. Prints
# "ROWS rows ok" or the first bad row.
p_only_deciding() {
    perl -e '
        my ($rows, $bad);
        while (<>) {
            next unless /^\|.*\| *([0-9.]+) \.\. ([0-9.]+) \| *([^|]*?) *\| *(~|faster|slower) *\|$/;
            my ($lo, $hi, $p, $v) = ($1, $2, $3, $4);
            $rows++;
            my $holds = $lo <= 1 && $hi >= 1;
            my $ok = $holds ? $p eq "-" && $v eq "~"
                   : $p ne "-" && ($v ne "~" || ($p !~ /^</ && $p >= 0.05));
            $bad //= "row $_" unless $ok;
        }
        print $bad // (($rows // 0) . " rows ok"), "\n"' "$1"
}
