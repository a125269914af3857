# lib.sh: shared helpers for the end-to-end TAP scripts in tests/e2e/*.t (bash).
#
# Source it first thing:  . "$(dirname "$0")/lib.sh"
#
# Provides
#   PGOLAB       the binary under test: $PGOLAB, else the repo's ./pgolab
#   TMP          a fresh temp dir for this script, removed on exit (also on ^C)
#   TAP          plan N | done_testing | ok DESC CMD... | is GOT WANT DESC | isnt |
#                like GOT ERE DESC | unlike | cmp_ok A OP B DESC | near A B TOL DESC |
#                diag MSG | note MSG | skip N WHY | bail_out WHY
#                TODO="reason" before a check marks it as a known failure (TAP "# TODO")
#   pg NAME ARGS...   runs "$PGOLAB bench ARGS" with a time cap; stdout in $TMP/NAME.out,
#                     stderr in $TMP/NAME.err, exit status in $RC
#   parse_final FILE  prints F_* shell assignments parsed from the final report block;
#                     use as: eval "$(parse_final "$TMP/x.out")"
#   sq DB SQL         runs SQL with the sqlite3 CLI (one value per line)
#   have CMD          true if CMD is on PATH

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
trap _e2e_cleanup EXIT
trap 'exit 130' INT TERM

plan() {
    _tap_planned=$1
    echo "1..$1"
}

bail_out() {
    echo "Bail out! $*"
    exit 255
}

diag() {
    printf '%s\n' "$@" | sed 's/^/# /' >&2
}

note() {
    printf '%s\n' "$@" | sed 's/^/# /'
}

# _tap_result STATUS DESC: print one TAP line; STATUS 0 = pass.
_tap_result() {
    local status=$1 desc=$2 suffix=
    _tap_n=$((_tap_n + 1))
    [ -n "$TODO" ] && suffix=" # TODO $TODO"
    desc=$(printf '%s' "$desc" | tr '\n#' ' _')
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
    if printf '%s\n' "$1" | grep -Eq -- "$2"; then
        _tap_result 0 "$3"
    else
        _tap_result 1 "$3"
        diag "     got: '$(printf '%s' "$1" | head -c 2000)'" "expected to match: /$2/"
        return 1
    fi
}

unlike() {
    if printf '%s\n' "$1" | grep -Eq -- "$2"; then
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

skip() {
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

# parse_final FILE: the cumulative report (sysbench 1.0 layout) as shell assignments.
# Every key is printed (empty when its line is missing), so a missing line fails the check
# that uses it instead of silently reusing an older value.
parse_final() {
    perl -ne '
        BEGIN {
            @keys = qw(read write other total transactions transactions_ps queries queries_ps
                       ignored_errors ignored_errors_ps reconnects reconnects_ps total_time
                       total_events lat_min lat_avg lat_max lat_pct pct_label pct_disabled lat_sum
                       fair_events_avg fair_events_sd fair_time_avg fair_time_sd);
            %v = map { $_ => "" } @keys;
        }
        chomp;
        $in = 1 if /^SQL statistics:$/;
        next unless $in;
        if (/^        (read|write|other|total):\s+(\d+)$/) { $v{$1} = $2 }
        elsif (/^    (transactions|queries|ignored errors|reconnects):\s+(\d+)\s+\(([\d.]+) per sec\.\)$/) {
            my ($k, $n, $ps) = ($1, $2, $3);
            $k =~ s/ /_/g; $v{$k} = $n; $v{"${k}_ps"} = $ps;
        }
        elsif (/^    total time:\s+([\d.]+)s$/) { $v{total_time} = $1 }
        elsif (/^    total number of events:\s+(\d+)$/) { $v{total_events} = $1 }
        elsif (/^         (min|avg|max|sum):\s+([\d.]+)$/) { $v{"lat_$1"} = $2 }
        elsif (/^        +(\d+)th percentile:\s+([\d.]+)$/) { $v{pct_label} = $1; $v{lat_pct} = $2 }
        elsif (/^         percentile stats:\s+disabled$/) { $v{pct_disabled} = 1 }
        elsif (m{^    events \(avg/stddev\):\s+([\d.]+)/([\d.]+)$}) {
            $v{fair_events_avg} = $1; $v{fair_events_sd} = $2;
        }
        elsif (m{^    execution time \(avg/stddev\):\s+([\d.]+)/([\d.]+)$}) {
            $v{fair_time_avg} = $1; $v{fair_time_sd} = $2;
        }
        END { print "F_$_=$v{$_}\n" for @keys }
    ' "$1"
}

if [ ! -x "$PGOLAB" ]; then
    bail_out "pgolab binary not found at $PGOLAB (run 'make pgolab' or set PGOLAB=/path/to/pgolab)"
fi
