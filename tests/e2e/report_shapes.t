#!/usr/bin/env bash
# `pgolab report` of a stored compare in each shape (seed000, seed003, seed002) and format
# (text, markdown, csv, json): the tables, rows and columns each shape promises, CSV with one
# row per cell and a constant column count, JSON that parses with every cell; the verdict
# block last, % improvement the change's own estimate, a p only where it decides; --shape=runs a
# row per run whose medians are the cells'; an experiment
# of 1 round says "no statistics with 1 round" instead of a CI; without --experiment the
# latest one is reported.
. "$(dirname "$0")/lib.sh"

SYSLIB=$(ldconfig -p | awk '/libsqlite3\.so\.0 .*x86-64/ {print $NF; exit}')
cp "$SYSLIB" "$TMP/libcopy.so"
vars=(--variant "A=sqlite:$SYSLIB" --variant "B=sqlite:$TMP/libcopy.so")
DB=$TMP/r.db

timeout 120 "$PGOLAB" compare "${vars[@]}" --bench=oltp_point_select --threads=1,2 --rounds=2 --time=1 \
    --table-size=1000 --results="$DB" >"$TMP/c1.out" 2>"$TMP/c1.err"
is "$?" 0 "experiment 1 (2 rounds, threads 1,2): exit 0"
timeout 60 "$PGOLAB" compare "${vars[@]}" --bench=oltp_point_select --threads=1 --rounds=1 --time=1 \
    --table-size=1000 --results="$DB" >"$TMP/c2.out" 2>"$TMP/c2.err"
is "$?" 0 "experiment 2 (1 round): exit 0"

rep() { # rep NAME ARGS...: pgolab report ARGS > $TMP/NAME.out, exit status in RC
    local name=$1
    shift
    timeout 60 "$PGOLAB" report --results="$DB" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    RC=$?
}
# table_block FILE TITLE-ERE: the lines of the table whose title matches
# (the pattern goes through the environment: `awk -v` would process its backslashes, and gawk
# and mawk do that differently)
table_block() { T="$2" awk '/^(### )?Table / { on = ($0 ~ ENVIRON["T"]) } on' "$1"; }
# csv_check FILE ROWS DESC: header + ROWS rows, every row as many fields as the header
csv_check() {
    is "$(($(wc -l <"$1") - 1))" "$2" "$3: $2 rows after the header"
    is "$(awk -F, 'NR == 1 { n = NF } NF != n { bad++ } END { print bad + 0 }' "$1")" 0 "$3: every row has the header's field count"
}
# The system metrics table's cells in every shape (src/report/system_metrics.c): 2 variants x 2 thread
# counts x (19 metrics + distrusted_runs)
M=80
# The precision table's CSV rows (src/report/noise.c), in every shape: per (B, thread count)
# the CV, the detectable change and the CI half-width, for tps and for CPU time per transaction
P=12
# json_cells FILE: shape and number of cells
json_cells() {
    perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); print "$j->{shape} $j->{experiment}{id} ", scalar @{$j->{cells}}' <"$1"
}

# ---- seed000 (the default)
rep s0 --experiment=1
is "$RC" 0 "seed000 text: exit 0"
ok "seed000 text = what compare printed" cmp -s "$TMP/s0.out" "$TMP/c1.out"
for t in "Transactions per second" "Average response time \(ms\)" "95th percentile response time \(ms\)"; do
    block=$(table_block "$TMP/s0.out" "$t, oltp_point_select")
    like "$block" "^\| +threads \| +A +\| +B +\| % improvement \| +change \(95% CI\) +\|$" "seed000 $t: header"
    for row in 1 2 Average; do
        like "$block" "^\| +$row \|" "seed000 $t: row $row"
    done
done
is "$(verdict_last "$TMP/s0.out")" ok "seed000 text: the verdict block is last"
like "$(improvement_agrees "$TMP/s0.out")" "^9 rows agree$" "seed000 text: % improvement is the change column's estimate (3 tables x 3 rows)"
rep s0md --experiment=1 --format=markdown
like "$(head -1 "$TMP/s0md.out")" "^## pgolab experiment 1 \(compare\):" "seed000 markdown: title heading"
like "$(<"$TMP/s0md.out")" "^- baseline A " "seed000 markdown: header as a list"
like "$(<"$TMP/s0md.out")" "^### Table 1\. Transactions per second" "seed000 markdown: table headings"
like "$(<"$TMP/s0md.out")" "^\|-+:\|" "seed000 markdown: pipe-table separator"
rep s0csv --experiment=1 --format=csv
is "$(head -1 "$TMP/s0csv.out")" "experiment,shape,table,workload,threads,metric,variant,baseline,value,baseline_value,improvement_pct,n,median,mean,stddev,min,max,ratio,ratio_ci_lo,ratio_ci_hi,change_pct,change_ci_lo_pct,change_ci_hi_pct,p_value,significant,verdict" \
    "seed000 csv: header"
csv_check "$TMP/s0csv.out" $((18 + P + M)) "seed000 csv (3 metrics x 3 rows x 2 variants, + the precision rows and the metrics cells)"
like "$(<"$TMP/s0csv.out")" "^1,seed000,1,oltp_point_select,2,tps,B,0,[0-9.]+,[0-9.]+,[-0-9.e]+,2,[0-9.]+,[0-9.]+,[0-9.e-]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[-0-9.e]+,[-0-9.e]+,[-0-9.e]+,([0-9.e-]+)?,[01],~$" \
    "seed000 csv: a variant cell has value, rounds' summary, ratio with CI, change, p (where it decides) and verdict"
# csv_p_deciding FILE: rows with a p_value (field 24) whose ratio CI (19, 20) holds 1, where
# the CI alone decides and a p would contradict a "~" (a "p 0.004" beside a "~")
csv_p_deciding() {
    awk -F, 'NR > 1 && $19 != "" { n++; if ($24 != "" && $19 <= 1 && $20 >= 1) bad++ }
             END { print n + 0 " cells with a CI, " bad + 0 " with a p where the CI holds 1" }' "$1"
}
like "$(csv_p_deciding "$TMP/s0csv.out")" "^[1-9][0-9]* cells with a CI, 0 with a p where the CI holds 1$" \
    "seed000 csv: a p only where it decides the verdict (empty where the CI holds 1)"
# the precision table as CSV: the numbers the JSON report's "precision" has
for k in cv_pct detectable_change_pct ci_half_width_pct; do
    is "$(grep -c ",tps_$k,B,0," "$TMP/s0csv.out")" 2 "seed000 csv: tps_$k per thread count"
done
like "$(<"$TMP/s0csv.out")" "^1,seed000,[0-9]+,oltp_point_select,2,tps_cv_pct,B,0,[0-9.e-]+,[0-9.e-]+,," \
    "seed000 csv: the CV of one run of B (value) and of A (baseline_value)"
rep s0json --experiment=1 --format=json
same=$(perl -MJSON::PP -e '
    local $/; open my $j, "<", $ARGV[0] or die; my $p = decode_json(<$j>)->{precision};
    open my $c, "<", $ARGV[1] or die; my %csv;
    for (split /\n/, <$c>) { my @f = split /,/; $csv{"$f[4] $f[5]"} = $f[8] if $f[5] =~ /^tps_/ }
    my ($bad, $n) = (0, 0);
    for my $cell (@{$p->{per_cell}}) {
        next unless $cell->{variant} eq "B";
        $n++;
        for (["cv_pct", "cv_variant_pct"], ["ci_half_width_pct", "half_width_pct"]) {
            my ($k, $jk) = @$_;
            my $x = $csv{"$cell->{threads} tps_$k"};
            $bad++ unless defined $x && defined $cell->{$jk} && abs($x - $cell->{$jk}) < 1e-6 * (1 + abs $x);
        }
    }
    print "$n cells, $bad differ";
' "$TMP/s0json.out" "$TMP/s0csv.out")
is "$same" "2 cells, 0 differ" "seed000 csv: the CVs and CI half-widths are the JSON report's precision.per_cell"
is "$(json_cells "$TMP/s0json.out")" "seed000 1 $((18 + M))" "seed000 json: 18 cells + the metrics cells"

# ---- seed003
rep s3 --experiment=1 --shape=seed003
is "$RC" 0 "seed003 text: exit 0"
for th in "1 thread" "2 threads"; do
    block=$(table_block "$TMP/s3.out" "oltp_point_select, $th: latency \(ms\) and QPS, median of 2 rounds")
    like "$block" "^\| +\| +A \| +B \| +change \(95% CI\) +\|$" "seed003 $th: one column per variant"
    for row in "min \(ms\)" "avg \(ms\)" "max \(ms\)" "95%ile \(ms\)" "QPS"; do
        like "$block" "^\| +$row \| +[0-9.]+ \| +[0-9.]+ \| +(~|[-+][0-9.]+% \(95% CI .*\)) \|$" "seed003 $th: row $row"
    done
done
rep s3csv --experiment=1 --shape=seed003 --format=csv
csv_check "$TMP/s3csv.out" $((20 + P + M)) "seed003 csv (2 tables x 5 rows x 2 variants, + the metrics cells)"
like "$(<"$TMP/s3csv.out")" "^1,seed003,2,oltp_point_select,2,lat_max_ms,A,1," "seed003 csv: lat_max_ms cells"
rep s3json --experiment=1 --shape=seed003 --format=json
is "$(json_cells "$TMP/s3json.out")" "seed003 1 $((20 + M))" "seed003 json: 20 cells + the metrics cells"

# ---- seed002
rep s2 --experiment=1 --shape=seed002
is "$RC" 0 "seed002 text: exit 0"
block=$(table_block "$TMP/s2.out" "Speedup \(x\) vs A")
like "$block" "^\| variant \| +workload \| threads \| +tps \| speedup \(x\) \| +95% CI \| +p \| +verdict \|$" "seed002: header"
like "$block" "^\| +A \| +all \| +all \| +\| +1\.000 \| +\| +\| baseline \|$" "seed002: baseline row, 1.000"
like "$block" "^\| +B \| +all \| +all \| +\| +[0-9]\.[0-9]{3} \| [0-9]\.[0-9]{3} \.\. [0-9]\.[0-9]{3} \| +([<0-9.]+|-) \| +(~|faster|slower) \|$" \
    "seed002: B over all cells: speedup, CI, p (where it decides), verdict"
for t in 1 2; do
    like "$block" "^\| +B \| oltp_point_select \| +$t \| +[0-9.]+ \| +[0-9]\.[0-9]{3} \| [0-9]\.[0-9]{3} \.\. [0-9]\.[0-9]{3} \| +([0-9.]+|-) \| +~ \|$" \
        "seed002: B at $t threads (2 rounds: never significant, ~)"
done
is "$(p_only_deciding "$TMP/s2.out")" "3 rows ok" "seed002: a p only where it decides the verdict (\"-\" where the CI holds 1)"
is "$(verdict_last "$TMP/s2.out")" ok "seed002 text: the verdict block is last"
like "$(<"$TMP/s2.out")" "speedup \(x\) = A's median time per transaction / the variant's" "seed002: says what speedup means"
rep s2csv --experiment=1 --shape=seed002 --format=csv
csv_check "$TMP/s2csv.out" $((6 + P + M)) "seed002 csv (2 variants x (all + 2 thread counts), + the metrics cells)"
rep s2json --experiment=1 --shape=seed002 --format=json
is "$(json_cells "$TMP/s2json.out")" "seed002 1 $((6 + M))" "seed002 json: 6 cells + the metrics cells"
is "$(jq -r '[.verdict.variants[0].variant, .verdict.variants[0].gains[0].metric, .verdict.variants[0].cells, (.verdict.variants[0].next | type)] | join(" ")' "$TMP/s2json.out")" \
    "B tps 2 string" "seed002 json: the verdict of B (tps over 2 cells, its next step)"
is "$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>);
      my ($c) = grep { $_->{variant} eq "B" && !defined $_->{threads} } @{$j->{cells}};
      my $v = $c->{vs_baseline};
      my $decides = $v->{ratio_ci}[0] > 1 || $v->{ratio_ci}[1] < 1;
      print join(" ", $c->{metric}, defined $v->{ratio} ? "ratio" : "-", scalar @{$v->{ratio_ci}},
                 (defined $v->{p_value}) == $decides ? "p-ok" : "p-wrong", $v->{pooled} ? "pooled" : "single")' <"$TMP/s2json.out")" \
    "speedup ratio 2 p-ok pooled" "seed002 json: the all-cells speedup has ratio, CI, a p exactly where the CI excludes 1 (pooled)"
# every change of the JSON (cells, verdict): a p exactly where it decides
for f in s0json s2json; do
    is "$(jq '[.. | objects | select(has("p_value") and has("ratio_ci") and .ratio_ci != null)
               | select((.p_value != null) != (.ratio_ci[0] > 1 or .ratio_ci[1] < 1))] | length' "$TMP/$f.out")" 0 \
        "$f: every change has its p_value exactly where the CI excludes 1 (null where the CI alone says ~)"
done

# ---- runs: every measured run as a row, the material of the cells above
rep runs --experiment=1 --shape=runs
is "$RC" 0 "runs text: exit 0"
block=$(awk '/^Runs$/ { on = 1 } on' "$TMP/runs.out")
like "$block" "^\| run \| variant \| +workload \| threads \| round \| +tps \| +qps \| avg ms \| p95 ms \| errors \| load1 \|" "runs text: the header"
is "$(grep -cE '^\| +[0-9]+ \| +[AB] \| oltp_point_select \| +[12] \| +[12] \| +[0-9.]+ \|' <<<"$block")" 8 \
    "runs text: 8 rows (2 variants x 2 thread counts x 2 rounds)"
rep runscsv --experiment=1 --shape=runs --format=csv
csv_check "$TMP/runscsv.out" 8 "runs csv"
like "$(head -1 "$TMP/runscsv.out")" "^experiment,run,variant,baseline,workload,threads,round,started_at,duration_s,tps,qps,lat_avg_ms,lat_p95_ms,.*,intr_per_s,.*,distrusted,distrust$" \
    "runs csv: the header names the run, its numbers and its metrics"
is "$(perl -e '
    my (%runs, %cell);
    open my $r, "<", $ARGV[0] or die; <$r>;
    while (<$r>) { my @f = split /,/; push @{$runs{"$f[2] $f[5]"}}, $f[9] }
    open my $c, "<", $ARGV[1] or die;
    while (<$c>) { my @f = split /,/; $cell{"$f[6] $f[4]"} = $f[12] if $f[2] eq "1" && $f[5] eq "tps" && $f[11] eq "2" }
    my @bad;
    for my $k (sort keys %runs) {
        my @v = sort { $a <=> $b } @{$runs{$k}};
        my $median = ($v[0] + $v[1]) / 2;
        push @bad, $k unless defined $cell{$k} && abs($median - $cell{$k}) <= 1e-6 * $cell{$k};
    }
    print scalar(keys %runs), " cells", (@bad ? " differ: @bad" : " agree")' "$TMP/runscsv.out" "$TMP/s0csv.out")" \
    "4 cells agree" "runs csv: the median tps of each cell'"'"'s 2 runs is the seed000 CSV'"'"'s median"
is "$(awk -F, 'NR > 1 { print $3 "/" $4 }' "$TMP/runscsv.out" | sort | uniq -c | awk '{ print $1 $2 }' | tr '\n' ' ')" \
    "4A/1 4B/0 " "runs csv: the baseline column marks A's 4 runs"
rep runsjson --experiment=1 --shape=runs --format=json
is "$(jq -r '[.report, .experiment.id, (.runs | length), ([.runs[].run] == [range(1; 9)]), (.runs[0].metrics | has("available"))] | join(" ")' "$TMP/runsjson.out")" \
    "runs 1 8 true true" "runs json: 8 runs numbered in order, each with its metrics"

# ---- 1 round: no statistics
for shape in seed000 seed003 seed002; do
    rep one --experiment=2 --shape=$shape
    like "$(<"$TMP/one.out")" "no statistics with 1 round" "1 round, $shape: no statistics with 1 round"
    unlike "$(<"$TMP/one.out")" "95% CI [-+]" "1 round, $shape: no CI printed"
done
rep onecsv --experiment=2 --format=csv
like "$(<"$TMP/onecsv.out")" ",1,tps,B,0,.*,,no statistics with 1 round$" "1 round, csv: no p-value, says why"

# ---- the latest by default
rep latest
is "$RC" 0 "report without --experiment: exit 0"
is "$(<"$TMP/latest.err")" "reporting experiment 2, the latest in $DB (see pgolab history)" "reports the latest and says which"
like "$(head -1 "$TMP/latest.out")" "^pgolab experiment 2 " "the latest is experiment 2"
rep bad --experiment=1 --shape=seed001
is "$RC" 1 "--shape=seed001: exit 1"
like "$(<"$TMP/bad.err")" "invalid --shape=seed001" "--shape=seed001: message"
done_testing
