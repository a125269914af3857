#!/usr/bin/env bash
# `pgolab report --format=html` in a real browser: a small stored compare of two SQLite
# libraries (2 thread counts, 2 rounds) rendered to one HTML file, loaded from disk by headless
# Chromium (Debian `chromium`) with every network request refused (a resolver that resolves
# nothing, a proxy port that accepts nothing). The page script reports what Chart.js drew
# (src/report/html_page.js: per chart its datasets' point counts, the pixels it painted and the
# pixels in its plot area in its datasets' colors), the script errors it saw and the requests
# the page made; Chromium's own log must hold no console message. The checks: every chart the
# experiment calls for, with the point counts its settings give, drawn with ink; no error; no
# request; legends of variants, never of runs, that leave the plot its room, at 2, 5 and 40
# rounds (the page reports each canvas's legend entries and height and its plot's height); a
# screenshot at 1280 px; the numbers in the page are the JSON report's (one source of
# statistics); the tables are the markdown report's. A page with a broken data block, and one
# with a line per run, must fail the same checks (so the checks can fail). Then --compare in
# HTML, and bad input. The page of an instruction-count experiment is checked by
# report_html_instr.t (full tier: it runs valgrind).
. "$(dirname "$0")/lib.sh"

if ! have chromium || [ ! -r /usr/share/javascript/chart.js/chart.min.js ]; then
    skip 1 "needs chromium and libjs-chart.js (scripts/install-deps.sh installs both)"
    done_testing
    exit 0
fi

SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
vars=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")
DB=$TMP/r.db

timeout 120 "$PGOLAB" compare "${vars[@]}" --bench=oltp_point_select --threads=1,2 --rounds=2 --time=2 \
    --table-size=1000 --results="$DB" >"$TMP/c1.out" 2>"$TMP/c1.err"
is "$?" 0 "experiment 1 (threads 1,2, 2 rounds x 2 s): exit 0"

rep() { # rep NAME ARGS...: pgolab report ARGS, stdout/stderr in $TMP/NAME.out/.err, status in RC
    local name=$1
    shift
    timeout 60 "$PGOLAB" report --results="$DB" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}

# What experiment 1 must show: tps vs threads (2 variants x 2 thread counts); the latency
# percentiles per thread count (2 variants x p50..p99.9); the timelines per thread count (2
# variants, the median of their 2 rounds, one point per second of a 2 s run); the system
# metrics (every metric that is not 0 everywhere: not checked one by one, counted below).
SPEC=("tps-0-0 2 2,2" "pct-0-0 2 6,6" "pct-0-1 2 6,6" "time-0-0 2 2,2" "time-0-1 2 2,2")

rep html --experiment=1 --format=html --output="$TMP/r.html"
is "$RC" 0 "report --format=html: exit 0"
like "$(<"$TMP/html.err")" "^report written to $TMP/r.html$" "says where the report went"
is "$(wc -c <"$TMP/html.out")" 0 "nothing on stdout with --output"
is "$(grep -Eic '<(script|link|img|iframe)[^>]+(src|href)=' "$TMP/r.html")" 0 "nothing loaded from elsewhere: no src= or href= element"
ok "Chart.js inlined" grep -q 'Chart.js v3' "$TMP/r.html"

browse "$TMP/r.html"
nmetrics=$(grep -c '^chart metric-0-' "$TMP/r.html.status")
cmp_ok "$nmetrics" ">=" 3 "system metrics charts (intr/s, ctxsw/s, us% at least: never 0 on a busy loop)"
for i in $(seq 0 9); do
    line=$(grep "^chart metric-0-$i " "$TMP/r.html.status") && SPEC+=("metric-0-$i 2 2,2")
done
out=$(status_check "$TMP/r.html" "${SPEC[@]}")
is "$out" "" "every chart drew its data (point counts, ink), no error, no request, no console message"
is "$(layout_check "$TMP/r.html" 2)" "" "legends name the 2 variants and leave the plots their room"
note "$(<"$TMP/r.html.status")"

# ---- a broken data block fails the same checks
sed 's/"percentiles":\[/"percentiles":[}/' "$TMP/r.html" >"$TMP/broken.html"
ok "a broken data block fails the check" fails page_check "$TMP/broken.html" "${SPEC[@]}"
like "$(<"$TMP/broken.html.status")" "^errors=1 report script: .*JSON" "... and the page says why"
# a page whose chart library is missing: every chart fails
perl -0pe 's/Chart\.js v3\.9\.1.*?\n<\/script>/\n<\/script>/s' "$TMP/r.html" >"$TMP/nolib.html"
ok "a page without its chart library fails the check" fails page_check "$TMP/nolib.html" "${SPEC[@]}"

# ---- screenshot at 1280 px
timeout 90 chromium --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
    --user-data-dir="$TMP/chromium-profile" --host-resolver-rules="MAP * ~NOTFOUND" \
    --proxy-server=127.0.0.1:9 --virtual-time-budget=3000 --window-size=1280,2200 \
    --screenshot="$TMP/shot.png" "file://$TMP/r.html" >/dev/null 2>&1
is "$(od -An -tx1 -j1 -N3 "$TMP/shot.png" 2>/dev/null | tr -d ' ')" "504e47" "screenshot is a PNG"
is "$(od -An -tu1 -j16 -N4 "$TMP/shot.png" 2>/dev/null | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }')" 1280 "screenshot 1280 px wide"
cmp_ok "$(wc -c <"$TMP/shot.png")" ">" 50000 "screenshot is not an empty page"

# ---- many rounds: a legend names variants, never runs, and leaves the plot its room. A
# 5-round experiment, and the same made 40 rounds (its rounds copied 7 times, each copy's tps a
# little higher so the runs spread; the settings say 40 rounds: cheaper than 80 more runs). On
# both pages every chart draws its data (a timeline per variant: its median per second, its runs
# a band) and reads well (layout_check).
MDB=$TMP/m5.db
timeout 120 "$PGOLAB" compare "${vars[@]}" --bench=oltp_point_select --threads=1 --rounds=5 \
    --time=1 --table-size=1000 --results="$MDB" >"$TMP/m5.out" 2>"$TMP/m5.err"
is "$?" 0 "a 5-round experiment: exit 0"
cp "$MDB" "$TMP/m40.db"
sq "$TMP/m40.db" "WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < 7)
    INSERT INTO runs (experiment_id, variant_idx, workload, threads, round, seq, started_at,
                      duration_s, tps, qps, lat_min_ms, lat_avg_ms, lat_p95_ms, lat_max_ms,
                      transactions, errors, report_json, metrics_json)
    SELECT experiment_id, variant_idx, workload, threads, round + 5 * n, seq + 10 * n, started_at,
           duration_s, tps * (1 + 0.02 * n), qps, lat_min_ms, lat_avg_ms, lat_p95_ms, lat_max_ms,
           transactions, errors,
           json_set(report_json, '\$.intervals[0].tps',
                    json_extract(report_json, '\$.intervals[0].tps') * (1 + 0.02 * n)),
           metrics_json
    FROM runs, k;
    UPDATE experiments SET settings_json = json_set(settings_json, '\$.rounds', 40);"
is "$(sq "$TMP/m40.db" "SELECT count(DISTINCT round) || ' ' || count(*) FROM runs")" "40 80" \
    "... made 40 rounds: 80 runs"
for r in 5 40; do
    timeout 60 "$PGOLAB" report --results="$TMP/m$r.db" --format=html --output="$TMP/m$r.html" \
        2>/dev/null
    is "$?" 0 "$r rounds: report --format=html: exit 0"
    MSPEC=("tps-0-0 2 1,1" "pct-0-0 2 6,6" "time-0-0 2 1,1")
    browse "$TMP/m$r.html"
    for i in $(seq 0 9); do
        grep -q "^chart metric-0-$i " "$TMP/m$r.html.status" && MSPEC+=("metric-0-$i 2 1,1")
    done
    out=$(status_check "$TMP/m$r.html" "${MSPEC[@]}")
    is "$out" "" "$r rounds: every chart drew its data, a timeline per variant, no error"
    is "$(layout_check "$TMP/m$r.html" 2)" "" \
        "$r rounds: legends of 2 variants (not $((2 * r)) runs) under 1/4 of a canvas, plots > 1/2"
    note "$(grep '^layout ' "$TMP/m$r.html.status")"
done
# the 40-round page with a line per run (as the page drew its timelines before its bands): the
# check fails, on the legend's entries, its height and the plot's
perrun='var byV = rows.map(function (r) { return [r]; });'
perrun+=' vs = rows.map(function (r) { return r.v; });'
PERRUN=$perrun perl -pe 's/var byV = vs\.map\(.*$/$ENV{PERRUN}/' "$TMP/m40.html" >"$TMP/perrun.html"
ok "... (a page drawing a line per run made from it)" \
    fails cmp -s "$TMP/m40.html" "$TMP/perrun.html"
browse "$TMP/perrun.html"
like "$(grep '^chart time-0-0 ' "$TMP/perrun.html.status")" " datasets=80 " "... draws 80 lines"
like "$(layout_check "$TMP/perrun.html" 2 | tr '\n' ' ')" \
    "^time-0-0: 80 legend entries for 2 variants time-0-0: the legend takes .* the plot keeps " \
    "... and fails the check: a legend of 80 entries that takes the plot's room"

# ---- one source of statistics: the page's cells are the JSON report's, its tables the
# markdown report's
rep json --experiment=1 --format=json
same=$(perl -MJSON::PP -e '
    local $/;
    open my $h, "<", $ARGV[0] or die; my $html = <$h>;
    open my $j, "<", $ARGV[1] or die; my $json = decode_json(<$j>);
    my ($data) = $html =~ m{<script type="application/json" id="pgolab-data">(.*?)</script>}s;
    my $page = decode_json($data)->{experiments}[0]{report};
    my $canon = JSON::PP->new->canonical;
    print $canon->encode($page->{cells}) eq $canon->encode($json->{cells}) ? "same" : "differ";
' "$TMP/r.html" "$TMP/json.out")
is "$same" "same" "the page's data block has the JSON report's cells, number for number"
# the tps chart's points: the baseline's median, and B at its change's estimate on it (the
# number the table and the verdict give), never the ratio of the medians
# chart_want KIND: what the tps chart of oltp_point_select must show per variant, from the JSON
# report: KIND values (A's median; B's change estimate on the baseline's median) or whiskers
# (A's min-max over rounds; B's change CI on the baseline's median), as the page's status has it
chart_want() {
    perl -MJSON::PP -e '
        local $/; open my $j, "<", $ARGV[1] or die; my $r = decode_json(<$j>);
        my @out;
        for my $v ("A", "B") {
            my @pts;
            for my $t (1, 2) {
                my ($c) = grep { $_->{metric} eq "tps" && $_->{variant} eq $v && defined $_->{threads}
                                 && $_->{threads} == $t && $_->{workload} eq "oltp_point_select" } @{$r->{cells}};
                my $base = $c->{baseline_value};
                push @pts, $ARGV[0] eq "values"
                    ? sprintf("%.3f", $v eq "A" ? $c->{value} : $base * $c->{vs_baseline}{ratio})
                    : sprintf("%.3f..%.3f", $v eq "A" ? ($c->{rounds}{min}, $c->{rounds}{max})
                                                     : map { $base * $_ } @{$c->{vs_baseline}{ratio_ci}});
            }
            push @out, "$v=" . join(",", @pts);
        }
        print join(" ", @out);
    ' "$1" "$TMP/json.out"
}
is "$(grep '^values tps-0-0 ' "$TMP/r.html.status")" "values tps-0-0 $(chart_want values)" \
    "the tps chart plots the baseline's medians and B's change estimates on them"
is "$(grep '^whiskers tps-0-0 ' "$TMP/r.html.status")" "whiskers tps-0-0 $(chart_want whiskers)" \
    "its whiskers: the baseline's min-max over rounds, B's change CI on the baseline's median"
rep md --experiment=1 --format=markdown --trust-table
is "$(grep -c '<h3>Table ' "$TMP/r.html")" "$(grep -c '^### Table ' "$TMP/md.out")" "as many tables as the markdown report (the page keeps the per-run trust table)"
like "$(<"$TMP/r.html")" "<h3>Table [0-9]+\. Load and trust per run" "the page has the per-run trust table"
like "$(<"$TMP/r.html")" "<h3>Verdict against A</h3>" "the page has the verdict"
verdicts_md=$(grep '^| ' "$TMP/md.out" | awk -F'|' 'NF > 3 { gsub(/^ +| +$/, "", $(NF-1)); print $(NF-1) }' | grep -c '^~$')
verdicts_html=$(grep -o '<td class="same">~</td>' "$TMP/r.html" | wc -l)
is "$verdicts_html" "$verdicts_md" "the same '~' verdicts as the markdown tables"
like "$(grep -o '<li>baseline A [^<]*' "$TMP/r.html")" "sha256 [0-9a-f]{12}" "header: the baseline with its fingerprint"
like "$(<"$TMP/r.html")" "<li>host: [^<]*, load [0-9.]+ at start" "header: host, kernel, load"
like "$(<"$TMP/r.html")" "<li>data: 1 table x 1000 rows, a fresh copy per run" "header: how data was reset"

# ---- two experiments compared
timeout 60 "$PGOLAB" compare "${vars[@]}" --bench=oltp_point_select --threads=1 --rounds=2 --time=1 \
    --table-size=1000 --results="$DB" >"$TMP/c2.out" 2>"$TMP/c2.err"
is "$?" 0 "experiment 2 (1 thread count, 1 s): exit 0"
rep cmp --compare=1,2 --format=html --output="$TMP/cmp.html"
is "$RC" 0 "report --compare=1,2 --format=html: exit 0"
like "$(<"$TMP/cmp.html")" "<h2>pgolab report: experiment 1 vs experiment 2" "the comparison's header"
like "$(<"$TMP/cmp.html")" "settings differ: threads" "its notes on settings"
browse "$TMP/cmp.html"
CSPEC=("tps-0-0 2 2,2" "pct-0-0 2 6,6" "pct-0-1 2 6,6" "time-0-0 2 2,2" "time-0-1 2 2,2"
       "tps-1-0 2 1,1" "pct-1-0 2 6,6" "time-1-0 2 1,1")
for e in 0 1; do
    for i in $(seq 0 9); do
        # experiment 1's metric charts have 2 cells (thread counts), experiment 2's one
        grep -q "^chart metric-$e-$i " "$TMP/cmp.html.status" && CSPEC+=("metric-$e-$i 2 $([ $e = 0 ] && echo 2,2 || echo 1,1)")
    done
done
out=$(status_check "$TMP/cmp.html" "${CSPEC[@]}")
is "$out" "" "compare page: both experiments' charts drew their data, no error, no request"
is "$(layout_check "$TMP/cmp.html" 2)" "" \
    "... side by side, legends of the 2 variants, plots with their room"

# ---- the trainer x workload heat map: a pgo experiment with two trainers, stood in for by a
# compare with pgo's variant names and the trainers pgo records in its settings
TDB=$TMP/t.db
timeout 60 "$PGOLAB" compare --variant "baseline=sqlite:$SYSLIB" \
    --variant "pgo-oltp_point_select=sqlite:$TMP/libcopy.so" --variant "pgo-oltp_read_only=sqlite:$TMP/libcopy.so" \
    --bench=oltp_point_select --threads=1 --rounds=2 --time=1 --table-size=1000 --results="$TDB" \
    >"$TMP/t.out" 2>"$TMP/t.err"
is "$?" 0 "experiment with two pgo variants: exit 0"
sq "$TDB" "UPDATE experiments SET settings_json = json_set(settings_json, '\$.pgo', json('{\"train\":[\"oltp_point_select\",\"oltp_read_only\"]}'))"
timeout 60 "$PGOLAB" report --results="$TDB" --format=html --output="$TMP/t.html" 2>"$TMP/t.err"
is "$?" 0 "its report: exit 0"
browse "$TMP/t.html"
TSPEC=("tps-0-0 3 1,1,1" "pct-0-0 3 6,6,6" "time-0-0 3 1,1,1" "heat-0 1 4")
for i in $(seq 0 9); do
    grep -q "^chart metric-0-$i " "$TMP/t.html.status" && TSPEC+=("metric-0-$i 3 1,1,1")
done
out=$(status_check "$TMP/t.html" "${TSPEC[@]}")
is "$out" "" "a heat map of 2 trainers x (1 workload + overall), and every chart drew its data"
is "$(layout_check "$TMP/t.html" 3)" "" "... legends of the 3 variants, plots with their room"
like "$(<"$TMP/t.html.status")" "^chart heat-0 heatmap datasets=1 points=4 " "... the heat map's cells"
timeout 60 "$PGOLAB" report --results="$TDB" >"$TMP/t.txt" 2>/dev/null
like "$(<"$TMP/t.txt")" "^Trainer matrix: tps change" "the text report has the trainer matrix too"
like "$(<"$TMP/t.txt")" "^\| +oltp_read_only \| .+ \| .+ \|$" "... with a row per trainer"
# ... and as markdown, CSV (a table of its own: a row per trainer's variant and workload, "all"
# = overall) and JSON (its cells, and "trainers" as the page's heat map has it)
timeout 60 "$PGOLAB" report --results="$TDB" --format=markdown >"$TMP/t.md" 2>/dev/null
like "$(<"$TMP/t.md")" "^Trainer matrix: tps change" "markdown report: the trainer matrix"
timeout 60 "$PGOLAB" report --results="$TDB" --format=csv >"$TMP/t.csv" 2>/dev/null
last=$(tail -1 "$TMP/t.csv" | cut -d, -f3)
is "$(awk -F, -v t="$last" '$3 == t { print $4 "/" $5 "/" $6 "/" $7 }' "$TMP/t.csv" | sort | tr '\n' ' ')" \
    "all/all/tps/pgo-oltp_point_select all/all/tps/pgo-oltp_read_only oltp_point_select/all/tps/pgo-oltp_point_select oltp_point_select/all/tps/pgo-oltp_read_only " \
    "CSV report: the trainer matrix's table, a row per trainer and workload (all = overall)"
timeout 60 "$PGOLAB" report --results="$TDB" --format=json >"$TMP/t.json" 2>/dev/null
same=$(perl -MJSON::PP -e '
    local $/;
    open my $h, "<", $ARGV[0] or die; my $html = <$h>;
    open my $j, "<", $ARGV[1] or die; my $json = decode_json(<$j>);
    open my $c, "<", $ARGV[2] or die; my @csv = map { [split /,/] } split /\n/, <$c>;
    my ($data) = $html =~ m{<script type="application/json" id="pgolab-data">(.*?)</script>}s;
    my $page = decode_json($data)->{experiments}[0]{trainers};
    my $canon = JSON::PP->new->canonical;
    my @out = ($canon->encode($page) eq $canon->encode($json->{trainers}) ? "same" : "differ");
    # every matrix cell of the CSV (change_pct, field 21) is the JSON one
    my %pct;
    for my $r (@{$json->{trainers}{rows}}) {
        my @w = @{$json->{trainers}{workloads}};
        $pct{"$r->{variant} " . ($w[$_] eq "overall" ? "all" : $w[$_])} = $r->{cells}[$_]{change_pct} for 0 .. $#w;
    }
    my $last = $csv[-1][2];
    my ($n, $bad) = (0, 0);
    for my $f (grep { $_->[2] eq $last } @csv) {
        $n++;
        my $want = $pct{"$f->[6] $f->[3]"};
        $bad++ unless defined $want && abs($f->[20] - $want) < 1e-6 * (1 + abs $want);
    }
    push @out, "$n cells, $bad differ";
    print "@out";
' "$TMP/t.html" "$TMP/t.json" "$TMP/t.csv")
is "$same" "same 4 cells, 0 differ" "JSON report's trainers = the page's heat map data, its changes = the CSV rows'"

# ---- a partial experiment (interrupted): reported as partial, what is there drawn
PDB=$TMP/p.db
timeout 120 "$PGOLAB" compare "${vars[@]}" --bench=oltp_point_select --threads=1 --rounds=5 --time=1 \
    --table-size=1000 --results="$PDB" >"$TMP/p.out" 2>"$TMP/p.err" &
pid=$!
runs_recorded() { [ "$(sq "$PDB" "SELECT count(*) FROM runs" 2>/dev/null)" -ge "$1" ] 2>/dev/null; }
# while it runs: the report of what is recorded, said to be partial
poll 600 0.1 runs_recorded 2
timeout 60 "$PGOLAB" report --results="$PDB" --format=html --output="$TMP/running.html" 2>"$TMP/running.err"
is "$?" 0 "an HTML report of the experiment while it runs: exit 0"
like "$(<"$TMP/running.html")" "PARTIAL: experiment 1 is running: [0-9]+ of 10 runs are recorded" "... says it is partial (running)"
poll 600 0.1 runs_recorded 4
kill -INT $pid
wait $pid
is "$?" 2 "an experiment stopped by SIGINT after 4 runs: exit 2"
timeout 60 "$PGOLAB" report --results="$PDB" --format=html --output="$TMP/p.html" 2>"$TMP/p.err"
is "$?" 0 "its HTML report: exit 0"
like "$(<"$TMP/p.html")" "PARTIAL: experiment 1 is interrupted: [0-9]+ of 10 runs are recorded" "says it is partial"
like "$(<"$TMP/p.html")" "<li>INCOMPLETE: [0-9]+ of 10 runs finished" "... as the text report does"
browse "$TMP/p.html"
like "$(<"$TMP/p.html.status")" "^chart tps-0-0 line datasets=2 " "... and draws what is there"
ok "... without an error" grep -qx 'errors=0' "$TMP/p.html.status"

# ---- CPU profiles (--profile): the page shows what `report --profile` prints, when the
# machine let the runs be profiled (a refusal leaves the runs without profiles: then neither)
FDB=$TMP/f.db
timeout 60 "$PGOLAB" compare "${vars[@]}" --bench=oltp_point_select --threads=1 --rounds=2 --time=1 \
    --table-size=1000 --profile --results="$FDB" >"$TMP/f.out" 2>"$TMP/f.err"
is "$?" 0 "a --profile experiment: exit 0"
timeout 60 "$PGOLAB" report --results="$FDB" --profile >"$TMP/ftext.out" 2>/dev/null
timeout 60 "$PGOLAB" report --results="$FDB" --format=html --output="$TMP/f.html" 2>/dev/null
is "$?" 0 "its HTML report: exit 0"
is "$(verdict_last "$TMP/ftext.out")" ok "report --profile: the verdict comes after the profiles, last"
# the profiles without the verdict block that follows them
sed -n '/^CPU profile: /,$p' "$TMP/ftext.out" | perl -0pe 's/\n+Verdict against .*\z/\n/s' >"$TMP/ftext.prof"
perl -0ne 'print $1 if m{<section class="profiles">.*?<pre>(.*?)</pre>}s' "$TMP/f.html" |
    sed -e 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&amp;/\&/g' | sed -n '/^CPU profile: /,$p' >"$TMP/fhtml.prof"
note "profiles in the text report: $(grep -c '^CPU profile: ' "$TMP/ftext.prof")"
ok "the page's profiles are the text report's, line for line" cmp -s "$TMP/ftext.prof" "$TMP/fhtml.prof"

# ---- --output for the other formats: the same bytes as stdout
rep csv1 --experiment=1 --format=csv
rep csv2 --experiment=1 --format=csv --output="$TMP/r.csv"
ok "--output=FILE.csv holds what stdout would" cmp -s "$TMP/csv1.out" "$TMP/r.csv"

# ---- bad input
rep bad1 --experiment=1 --format=html --output="$TMP/no/such/dir/r.html"
is "$RC" 1 "unwritable --output: exit 1"
is "$(wc -l <"$TMP/bad1.err")" 1 "... in one line"
like "$(<"$TMP/bad1.err")" "--output=$TMP/no/such/dir/r.html: cannot write there: No such file or directory" "... naming the path and why"
rep bad2 --experiment=1 --format=html --shape=seed003
is "$RC" 1 "--shape with html: exit 1"
like "$(<"$TMP/bad2.err")" "--shape is for the text formats" "... says why"
PGOLAB_CHARTJS=$TMP/no-chart.min.js rep bad4 --experiment=1 --format=html --output="$TMP/x.html"
is "$RC" 1 "no chart library: exit 1"
like "$(<"$TMP/bad4.err")" "^FATAL: --format=html needs Chart.js: cannot read $TMP/no-chart.min.js \(No such file or directory\); install the Debian package libjs-chart.js" \
    "... one line naming the file and the package"
ok "... and no page written" test ! -e "$TMP/x.html"
rep bad5 --experiment=99 --format=html --output="$TMP/x.html"
is "$RC" 1 "an unknown experiment id: exit 1"
is "$(<"$TMP/bad5.err")" "FATAL: no experiment 99 in $DB; it has experiments 1, 2 (see pgolab history)" "... one line naming the ids there are"
ok "... and no page written" test ! -e "$TMP/x.html"
sqlite3 "$TMP/other.db" "CREATE TABLE t(x);"
cp "$DB" "$TMP/newer.db"
sqlite3 "$TMP/newer.db" "PRAGMA user_version = 99;"
for spec in "other.db:not a pgolab results database" "newer.db:newer pgolab"; do
    f=$TMP/${spec%%:*}
    timeout 60 "$PGOLAB" report --results="$f" --format=html --output="$TMP/x.html" >/dev/null 2>"$TMP/bad6.err"
    is "$?.$(wc -l <"$TMP/bad6.err")" "1.1" "${spec%%:*}: exit 1, one line"
    like "$(<"$TMP/bad6.err")" "${spec#*:}" "... saying '${spec#*:}'"
done
ok "... and no page written" test ! -e "$TMP/x.html"
rep bad3 --experiment=1 --format=pdf
is "$RC" 1 "--format=pdf: exit 1"
like "$(<"$TMP/bad3.err")" "expected text, markdown, csv, json or html" "... names the formats"

done_testing
