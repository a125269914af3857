#!/usr/bin/env bash
# tier: full (make check-full, .ci/run): it builds a database or the stand-in from source, or runs valgrind
# report_html_instr.t: the HTML report of an instruction-count experiment (`pgolab compare
# --measure=instructions`, SQLite under valgrind callgrind) in headless Chromium, as
# report_html.t checks the time-based pages: its four metrics (estimated cycles, instructions,
# I1 misses, branch mispredictions per transaction) drawn as bars with ink, nothing else, no
# error, no request, legends of the variants that leave the plots their room.
. "$(dirname "$0")/lib.sh"

have valgrind || bail_out "valgrind is not installed (scripts/install-deps.sh installs it)"
have chromium && [ -r /usr/share/javascript/chart.js/chart.min.js ] ||
    bail_out "needs chromium and libjs-chart.js (scripts/install-deps.sh installs both)"

SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
vars=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")

# ---- an instruction-count experiment (--measure=instructions): its four metrics as bars
IDB=$TMP/i.db
timeout 300 "$PGOLAB" compare "${vars[@]}" --bench=oltp_point_select --rounds=2 --measure=instructions \
    --events=200 --table-size=1000 --results="$IDB" >"$TMP/i.out" 2>"$TMP/i.err"
is "$?" 0 "an instruction-count experiment: exit 0"
timeout 60 "$PGOLAB" report --results="$IDB" --format=html --output="$TMP/i.html" 2>/dev/null
is "$?" 0 "its HTML report: exit 0"
out=$(page_check "$TMP/i.html" "instr-0-0 2 1,1" "instr-0-1 2 1,1" "instr-0-2 2 1,1" "instr-0-3 2 1,1")
is "$out" "" "estimated cycles, instructions, I1 misses and branch mispredictions per transaction drawn, nothing else"
is "$(layout_check "$TMP/i.html" 2)" "" "... legends of the 2 variants, plots with their room"

done_testing
