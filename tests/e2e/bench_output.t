#!/bin/bash
# bench_output.t: `pgolab bench ... run` text output is sysbench 1.0.20's, byte for byte where
# parsers care: the run header, the intermediate line (read with the regular expression sysbench
# log parsers use), and the final block line by line (values at column 42, latency values ending
# at column 53, the fairness lines), plus --percentile=99 / --percentile=0 and --histogram.
. "$(dirname "$0")/lib.sh"

DB=$TMP/sb.db
common=(--sqlite-db="$DB" --table-size=500)
have sqlite3 || bail_out "sqlite3 CLI not found (scripts/install-deps.sh installs it)"

# The intermediate line as sysbench parsers match it (sysbench.md §7).
INTERVAL_RE='^\[ (\d+)s \] thds: (\d+) tps: ([\d.]+) qps: ([\d.]+) \(r/w/o: ([\d.]+)/([\d.]+)/([\d.]+)\) lat \(ms,(\d+)%\): ([\d.]+) err/s: ([\d.]+) reconn/s: ([\d.]+)$'

# intervals FILE: one line per "[ " line: "time thds tps qps r w o pct lat err reconn", or
# "BAD <line>" for a "[ " line that the parser regex does not accept.
intervals() {
    perl -ne '
        next unless /^\[ /;
        chomp;
        if (m{'"$INTERVAL_RE"'}) { print join(" ", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11), "\n" }
        else { print "BAD $_\n" }
    ' "$1"
}

# check_block FILE PCT LABEL: the final block, from "SQL statistics:" to the end of the output,
# matches sysbench 1.0.20's layout line by line (PCT = the --percentile; 0 = disabled).
check_block() {
    local file=$1 pct=$2 label=$3 result
    result=$(perl -e '
        my ($file, $pct) = @ARGV;
        open my $fh, "<", $file or die;
        my @l = map { chomp; $_ } <$fh>;
        my ($start) = grep { $l[$_] eq "SQL statistics:" } 0 .. $#l;
        if (!defined $start) { print "no SQL statistics line\n"; exit }
        @l = @l[$start .. $#l];
        # %-41s label: the value starts in column 42.
        my $c41 = sub { my $p = sprintf("%-41s", $_[0]); die "label too long" if length $p != 41; quotemeta $p };
        my $cnt = sub { $c41->($_[0]) . q{\d+} };
        # %-6llu (%.2f per sec.)
        my $rate = sub { $c41->($_[0]) . q{(?:\d{6,}|\d{5} |\d{4} {2}|\d{3} {3}|\d{2} {4}|\d {5}) \(\d+\.\d\d per sec\.\)} };
        # "         min: %39.2f": 53 characters.
        my $lat = sub { "(?=.{53}\$)" . quotemeta("         $_[0]: ") . q{ *\d+\.\d\d} };
        my $pctre = $pct > 0
            ? "(?=.{53}\$)" . quotemeta(sprintf("        %3dth percentile: ", $pct)) . q{ *\d+\.\d\d}
            : quotemeta("         percentile stats:               disabled");
        my @want = (
            quotemeta("SQL statistics:"), quotemeta("    queries performed:"),
            $cnt->("        read:"), $cnt->("        write:"), $cnt->("        other:"),
            $cnt->("        total:"),
            $rate->("    transactions:"), $rate->("    queries:"), $rate->("    ignored errors:"),
            $rate->("    reconnects:"),
            "", quotemeta("General statistics:"),
            $c41->("    total time:") . q{\d+\.\d{4}s}, $cnt->("    total number of events:"),
            "", quotemeta("Latency (ms):"),
            $lat->("min"), $lat->("avg"), $lat->("max"), $pctre, $lat->("sum"),
            "", quotemeta("Threads fairness:"),
            quotemeta("    events (avg/stddev):           ") . q{\d+\.\d{4}/\d+\.\d\d},
            quotemeta("    execution time (avg/stddev):   ") . q{\d+\.\d{4}/\d+\.\d\d},
            "",
        );
        for my $i (0 .. $#want) {
            my $got = $i <= $#l ? $l[$i] : "<missing>";
            print "line ", $i + 1, ": \x27$got\x27 !~ /^$want[$i]\$/\n" unless $got =~ /^$want[$i]$/;
        }
        print "extra line after the block: \x27$l[$_]\x27\n" for @want .. $#l;
    ' "$file" "$pct")
    is "$result" "" "$label: final block matches the sysbench 1.0.20 layout line by line"
}

pg prep "${common[@]}" oltp_read_only prepare
[ "$RC" -eq 0 ] || bail_out "prepare failed: $(<"$TMP/prep.err")"

note "---- --report-interval=1 --time=3"
pg a "${common[@]}" --report-interval=1 --time=3 oltp_read_only run
is "$RC" 0 "run: exit 0"
is "$(<"$TMP/a.err")" "" "run: nothing on stderr"
like "$(head -n 1 "$TMP/a.out")" '^sysbench [0-9]+\.[0-9]+\.[0-9]+ ' "header: 'sysbench X.Y.Z' version line"
printf '%s\n' "" "Running the test with following options:" "Number of threads: 1" \
    "Report intermediate results every 1 second(s)" \
    "Initializing random number generator from current time" "" "" \
    "Initializing worker threads..." "" "Threads started!" "" >"$TMP/head.want"
ok "header: the sysbench run header, line for line" diff -u "$TMP/head.want" <(sed -n '2,12p' "$TMP/a.out")

intervals "$TMP/a.out" >"$TMP/a.iv"
is "$(grep -c '^BAD' "$TMP/a.iv")" 0 "every '[ ' line matches the sysbench interval regex"
grep '^BAD' "$TMP/a.iv" | head -n 3 | while read -r l; do diag "$l"; done
n=$(grep -vc '^BAD' "$TMP/a.iv")
cmp_ok "$n" '>=' 2 "at least 2 interval lines in 3 s ($n)"
cmp_ok "$n" '<=' 3 "at most 3 interval lines in 3 s ($n)"
is "$(awk '{ printf "%s ", $1 }' "$TMP/a.iv")" "$(seq 1 "$n" | tr '\n' ' ')" "interval times are 1, 2, ... s"
is "$(grep -n '^\[ 1s \]' "$TMP/a.out" | cut -d: -f1)" 13 "first interval line right after 'Threads started!' and a blank"
is "$(sed -n "$((13 + n))p" "$TMP/a.out")" "SQL statistics:" "final block right after the last interval line"
is "$(head -n 1 "$TMP/a.iv" | cut -d' ' -f2)" 1 "first interval: thds: 1"
is "$(awk '$2 > 1' "$TMP/a.iv")" "" "no interval shows more than 1 thread"
is "$(awk '$8 != 95' "$TMP/a.iv")" "" "every interval says lat (ms,95%)"
is "$(awk '$3 <= 0 || $9 <= 0' "$TMP/a.iv")" "" "every interval: tps > 0 and latency > 0"
is "$(awk '{ d = $4 - ($5 + $6 + $7); if (d < 0) d = -d; if (d > 0.03) print }' "$TMP/a.iv")" "" \
    "every interval: qps = r + w + o"
is "$(awk '$6 != 0 || $10 != 0 || $11 != 0' "$TMP/a.iv")" "" "read-only: w/s, err/s and reconn/s are 0.00"
# Counters are sampled mid-transaction: allow one partial transaction at each end of an interval.
is "$(awk '{ d = $4 - 16 * $3; if (d < 0) d = -d; if (d > 32) print }' "$TMP/a.iv")" "" \
    "every interval: qps = 16 x tps (oltp_read_only statements per transaction)"

final_vars "$TMP/a.out"
check_block "$TMP/a.out" 95 "--percentile=95"
is "$F_pct_label" 95 "final: 95th percentile line"
cmp_ok "$F_total_time" '>=' 3 "final: total time >= --time"
cmp_ok "$F_total_time" '<' 8 "final: total time < --time + 5 (the last event's overrun on a loaded machine)"
mean_tps=$(awk '{ s += $3 } END { if (NR) print s / NR }' "$TMP/a.iv")
near "$mean_tps" "$F_transactions_ps" "$(calc "$F_transactions_ps * 0.5")" \
    "mean interval tps ($mean_tps) close to the final tps ($F_transactions_ps)"
is "$(awk -v mn="$F_lat_min" -v mx="$F_lat_max" '$9 < mn - 0.01 || $9 > mx + 0.01' "$TMP/a.iv")" "" \
    "every interval latency is within the run's [min, max]"
cmp_ok "$F_lat_min" '<=' "$F_lat_avg" "final: min <= avg"
cmp_ok "$F_lat_avg" '<=' "$F_lat_max" "final: avg <= max"
cmp_ok "$F_lat_min" '<=' "$F_lat_pct" "final: min <= 95th percentile"
cmp_ok "$F_lat_pct" '<=' "$F_lat_max" "final: 95th percentile <= max"
near "$F_lat_avg" "$(calc "$F_lat_sum / $F_transactions")" 0.011 "final: avg = sum / transactions"
near "$F_lat_sum" "$(calc "$F_fair_time_avg * 1000")" "$(calc "$F_lat_sum * 0.001 + 0.1")" \
    "final: latency sum = execution time (1 thread)"
cmp_ok "$F_lat_sum" '<=' "$(calc "$F_total_time * 1000 + 1")" "final: latency sum <= total time"

note "---- --percentile=99"
pg b "${common[@]}" --report-interval=1 --time=2 --percentile=99 oltp_read_only run
is "$RC" 0 "--percentile=99: exit 0"
intervals "$TMP/b.out" >"$TMP/b.iv"
cmp_ok "$(grep -vc '^BAD' "$TMP/b.iv")" '>=' 1 "--percentile=99: interval lines parse"
is "$(grep -c 'lat (ms,99%): ' "$TMP/b.out")" "$(grep -c '^\[ ' "$TMP/b.out")" \
    "--percentile=99: every interval line says lat (ms,99%)"
is "$(grep -c '95%' "$TMP/b.out")" 0 "--percentile=99: no 95% label anywhere"
check_block "$TMP/b.out" 99 "--percentile=99"
final_vars "$TMP/b.out"
is "$F_pct_label" 99 "--percentile=99: '99th percentile:' line"
cmp_ok "$F_lat_min" '<=' "$F_lat_pct" "--percentile=99: min <= 99th percentile"
cmp_ok "$F_lat_pct" '<=' "$F_lat_max" "--percentile=99: 99th percentile <= max"

note "---- --percentile=0 (and --rand-seed in the header)"
pg c "${common[@]}" --events=200 --percentile=0 --rand-seed=42 oltp_read_only run
is "$RC" 0 "--percentile=0: exit 0"
ok "--percentile=0: exact 'percentile stats: disabled' line" \
    grep -qxF "         percentile stats:               disabled" "$TMP/c.out"
is "$(grep -c 'th percentile' "$TMP/c.out")" 0 "--percentile=0: no Nth percentile line"
check_block "$TMP/c.out" 0 "--percentile=0"
ok "--rand-seed=42: header says so" \
    grep -qxF "Initializing random number generator from seed (42)." "$TMP/c.out"
is "$(grep -c 'Report intermediate' "$TMP/c.out")" 0 "no --report-interval: no 'Report intermediate' header line"
is "$(grep -c '^\[ ' "$TMP/c.out")" 0 "no --report-interval: no interval lines"

note "---- --histogram"
pg d "${common[@]}" --events=300 --histogram oltp_read_only run
is "$RC" 0 "--histogram: exit 0"
final_vars "$TMP/d.out"
check_block "$TMP/d.out" 95 "--histogram"
perl -ne '
    chomp;
    if ($_ eq "Latency histogram (values are in milliseconds)") { $h = 1; print "TITLE\n"; next }
    next unless $h;
    if ($h == 1) { print $_ eq "       value  ------------- distribution ------------- count" ? "HEADER\n" : "BADHEADER $_\n"; $h = 2; next }
    if ($_ eq " ") { print "END\n"; $h = 3; next }
    if ($h == 3) { print "AFTER $_\n"; exit }
    if (my ($v, $bar, $n) = /^(.{12}) \|(.{40}) (\d+)$/) {
        if ($v =~ /^ *\d+\.\d{3}$/ && $bar =~ /^(\*+) *$/) { print "B ", $v + 0, " ", length($1), " $n\n"; next }
    }
    print "BAD $_\n";
' "$TMP/d.out" >"$TMP/d.h"
is "$(grep -c '^TITLE$' "$TMP/d.h")" 1 "--histogram: 'Latency histogram (values are in milliseconds)' once"
is "$(grep -c '^HEADER$' "$TMP/d.h")" 1 "--histogram: the value/distribution/count header line"
is "$(grep -c '^B ' "$TMP/d.h")" "$(grep -vc '^\(TITLE\|HEADER\|END\|AFTER\)' "$TMP/d.h")" \
    "--histogram: every bucket line is '%12.3f |%-40s %lu'"
grep -E '^(BAD|BADHEADER)' "$TMP/d.h" | head -n 3 | while read -r l; do diag "$l"; done
is "$(grep '^AFTER' "$TMP/d.h")" "AFTER SQL statistics:" "--histogram: ' ' line, then SQL statistics"
cmp_ok "$(grep -c '^B ' "$TMP/d.h")" '>=' 2 "--histogram: several buckets"
is "$(awk '$1 == "B" { s += $4 } END { print s + 0 }' "$TMP/d.h")" "$F_transactions" \
    "--histogram: bucket counts sum to transactions"
is "$(awk '$1 == "B" { if (NR > 1 && $2 < p) print; p = $2 }' "$TMP/d.h")" "" "--histogram: values ascending"
is "$(awk '$1 == "B" && $4 > m { m = $4; b = $3 } END { print b }' "$TMP/d.h")" 40 \
    "--histogram: the largest bucket has the full 40-star bar"
is "$(awk '$1 == "B" { if ($4 > m) m = $4; n[NR] = $4; w[NR] = $3 }
          END { for (i in n) { e = n[i] * 40 / m; if (w[i] < e - 1 || w[i] > e + 1 || w[i] < 1) print n[i], w[i] } }' "$TMP/d.h")" "" \
    "--histogram: bar length = count x 40 / largest count"
cmp_ok "$(awk '$1 == "B" { print $2; exit }' "$TMP/d.h")" '<=' "$(calc "$F_lat_min * 1.01 + 0.006")" \
    "--histogram: first bucket <= min latency"
cmp_ok "$(awk '$1 == "B" { v = $2 } END { print v }' "$TMP/d.h")" '>=' "$(calc "$F_lat_max * 0.99 - 0.006")" \
    "--histogram: last bucket >= max latency"
cmp_ok "$F_lat_min" '<=' "$F_lat_pct" "--histogram: min <= 95th percentile"
cmp_ok "$F_lat_pct" '<=' "$F_lat_max" "--histogram: 95th percentile <= max"


note "---- verify (the correctness gate's query set), text output"
snap() { sq "$DB" "SELECT count(*), sum(id), sum(k), group_concat(substr(c, 1, 3), '') FROM sbtest1" | md5sum; }
before=$(snap)
pg v1 "${common[@]}" oltp_read_only verify
is "$RC" 0 "verify: exit 0"
is "$(<"$TMP/v1.err")" "" "verify: nothing on stderr"
is "$(wc -l <"$TMP/v1.out" | tr -d ' ')" 1 "verify: one line on stdout"
like "$(<"$TMP/v1.out")" '^verify checksum: [0-9a-f]{16} \([1-9][0-9]* rows\)$' "verify: 'verify checksum: HEX16 (N rows)'"
is "$(snap)" "$before" "verify: the data is unchanged (its writes are rolled back)"
pg v2 "${common[@]}" oltp_read_only verify
is "$(<"$TMP/v2.out")" "$(<"$TMP/v1.out")" "verify: the same data gives the same line"
pg vj "${common[@]}" --format=json oltp_read_only verify
is "$(perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); printf "verify checksum: %s (%d rows)\n", $j->{checksum}, $j->{rows}' <"$TMP/vj.out")" \
    "$(<"$TMP/v1.out")" "verify: the text line says what the JSON says"
sq "$DB" "UPDATE sbtest1 SET c = 'changed' || substr(c, 8) WHERE id = 7" >/dev/null
pg v3 "${common[@]}" oltp_read_only verify
is "$RC" 0 "verify after one changed row: exit 0"
isnt "$(sed 's/ (.*//' "$TMP/v3.out")" "$(sed 's/ (.*//' "$TMP/v1.out")" "verify: one changed value changes the checksum"

done_testing
