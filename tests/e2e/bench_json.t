#!/bin/bash
# bench_json.t: `pgolab bench --format=json ... run` prints one valid JSON document (nothing
# else on stdout) whose figures agree with each other: tps/qps vs counts and total time, the r/w/o
# split, latency min <= p50 <= p90 <= p95 <= p99 <= p99.9 <= max, histogram counts summing to the
# transactions, the interval series with --report-interval, and the identity of the SQLite
# library (the system one: same version as the sqlite3 CLI).
. "$(dirname "$0")/lib.sh"

perl -MJSON::PP -e 1 2>/dev/null || bail_out "perl JSON::PP not available"

DB=$TMP/sb.db
common=(--sqlite-db="$DB" --table-size=500)

# flatten FILE: decode the JSON and print J_* shell assignments (scalars, flattened with _),
# plus derived J_hist_* and J_iv_* summaries. Exits non-zero if FILE is not one JSON document.
flatten() {
    perl -MJSON::PP -e '
        local $/; open my $fh, "<", $ARGV[0] or die; my $txt = <$fh>;
        my $j = JSON::PP->new->decode($txt);
        die "not an object\n" unless ref $j eq "HASH";
        my %out;
        my $walk; $walk = sub {
            my ($p, $v) = @_;
            if (ref $v eq "HASH") { $walk->($p eq "" ? $_ : "${p}_$_", $v->{$_}) for keys %$v }
            elsif (ref $v eq "ARRAY") { $out{"${p}_len"} = scalar @$v }
            elsif (JSON::PP::is_bool($v)) { $out{$p} = $v ? "true" : "false" }
            else { $out{$p} = defined $v ? $v : "null" }
        };
        $walk->("", $j);
        my $h = $j->{histogram} || [];
        my ($sum, $sorted, $bad, $prev) = (0, 1, 0, -1);
        for my $b (@$h) {
            $bad++ unless ref $b eq "HASH" && defined $b->{ms} && defined $b->{count} && $b->{count} > 0;
            $sum += $b->{count} // 0;
            $sorted = 0 if ($b->{ms} // 0) <= $prev;
            $prev = $b->{ms} // 0;
        }
        @out{qw(hist_sum hist_sorted hist_bad)} = ($sum, $sorted, $bad);
        my $iv = $j->{intervals} || [];
        my @f = qw(time_s threads tps qps reads_per_s writes_per_s other_per_s latency_ms errors_per_s reconnects_per_s);
        my ($ivbad, $qbad) = (0, 0);
        for my $i (@$iv) { for (@f) { $ivbad++ unless defined $i->{$_} && $i->{$_} =~ /^[\d.eE+-]+$/ } }
        for my $i (@$iv) {
            my $d = $i->{qps} - ($i->{reads_per_s} + $i->{writes_per_s} + $i->{other_per_s});
            $qbad++ if abs($d) > 1e-6 * ($i->{qps} + 1);
        }
        $out{iv_times} = join " ", map { $_->{time_s} } @$iv;
        $out{iv_bad} = $ivbad; $out{iv_qps_bad} = $qbad;
        $out{iv_lat_max} = 0; $out{iv_tps_min} = 1e300;
        for (@$iv) { $out{iv_lat_max} = $_->{latency_ms} if $_->{latency_ms} > $out{iv_lat_max} }
        for (@$iv) { $out{iv_tps_min} = $_->{tps} if $_->{tps} < $out{iv_tps_min} }
        for my $k (sort keys %out) {
            (my $v = "$out{$k}") =~ s/\x27/\x27\\\x27\x27/g;
            (my $n = $k) =~ s/[^A-Za-z0-9_]/_/g;
            print "J_$n=\x27$v\x27\n";
        }
    ' "$1"
}

pg prep "${common[@]}" oltp_read_write prepare
[ "$RC" -eq 0 ] || bail_out "prepare failed: $(<"$TMP/prep.err")"

# check_common LABEL FILE: consistency checks shared by every run.
check_common() {
    local label=$1 file=$2 vars
    vars=$(flatten "$file" 2>"$TMP/flatten.err")
    ok "$label: stdout is one valid JSON object" test $? -eq 0
    [ -s "$TMP/flatten.err" ] && diag "$(<"$TMP/flatten.err")"
    eval "$vars"
    is "${J_test:-}/${J_command:-}/${J_db_driver:-}" "oltp_read_write/run/sqlite" "$label: test, command, db_driver"
    is "${J_transactions:-}" "${J_events:-x}" "$label: transactions = events"
    cmp_ok "${J_transactions:-}" '>' 0 "$label: transactions > 0"
    is "${J_queries:-}" "$(calc "${J_reads:-0} + ${J_writes:-0} + ${J_other:-0}")" "$label: queries = reads + writes + other"
    is "${J_reads:-}/${J_writes:-}/${J_other:-}" \
        "$(calc "${J_transactions:-0} * 14")/$(calc "${J_transactions:-0} * 4")/$(calc "${J_transactions:-0} * 2")" \
        "$label: reads/writes/other = transactions x 14/4/2"
    is "${J_ignored_errors:-}/${J_reconnects:-}/${J_errors_per_s:-}" "0/0/0" "$label: no errors, no reconnects"
    near "${J_tps:-}" "$(calc "${J_transactions:-0} / ${J_total_time_s:-1}")" "$(calc "${J_tps:-0} * 1e-6")" \
        "$label: tps = transactions / total_time_s"
    near "${J_qps:-}" "$(calc "${J_queries:-0} / ${J_total_time_s:-1}")" "$(calc "${J_qps:-0} * 1e-6")" \
        "$label: qps = queries / total_time_s"
    cmp_ok "${J_latency_ms_min:-}" '>' 0 "$label: latency min > 0"
    local chain="${J_latency_ms_min:-x} ${J_latency_ms_p50:-x} ${J_latency_ms_p90:-x} ${J_latency_ms_p95:-x} ${J_latency_ms_p99:-x} ${J_latency_ms_p99_9:-x} ${J_latency_ms_max:-x}"
    ok "$label: min <= p50 <= p90 <= p95 <= p99 <= p99_9 <= max ($chain)" \
        awk -v s="$chain" 'BEGIN { n = split(s, a, " "); for (i = 1; i <= n; i++) if (a[i] !~ /^[0-9.eE+-]+$/) exit 1;
                                   for (i = 2; i <= n; i++) if (a[i] + 0 < a[i-1] + 0) exit 1 }'
    cmp_ok "${J_latency_ms_avg:-}" '>=' "${J_latency_ms_min:-x}" "$label: avg >= min"
    cmp_ok "${J_latency_ms_avg:-}" '<=' "${J_latency_ms_max:-x}" "$label: avg <= max"
    near "${J_latency_ms_sum:-}" "$(calc "${J_latency_ms_avg:-0} * ${J_transactions:-0}")" \
        "$(calc "${J_latency_ms_sum:-0} * 1e-6 + 1e-6")" "$label: latency sum = avg x transactions"
    cmp_ok "${J_latency_ms_sum:-}" '<=' "$(calc "${J_total_time_s:-0} * 1000 * ${J_threads:-1}")" \
        "$label: latency sum <= total time x threads"
    is "${J_hist_sum:-}" "${J_transactions:-x}" "$label: histogram counts sum to transactions"
    is "${J_hist_sorted:-}/${J_hist_bad:-}" "1/0" "$label: histogram buckets well-formed, ms ascending"
    cmp_ok "${J_histogram_len:-0}" '>=' 2 "$label: histogram has several buckets"
    is "${J_fairness_events_avg:-}" "${J_transactions:-x}" "$label: fairness events_avg = transactions (1 thread)"
    near "${J_fairness_exec_time_avg_s:-}" "$(calc "${J_latency_ms_sum:-0} / 1000")" 1e-6 \
        "$label: fairness exec_time_avg_s = latency sum"
    is "${J_interrupted:-}/${J_failed:-}" "false/false" "$label: not interrupted, not failed"
    is "${J_library_version:-}" "$(sqlite3 --version | cut -d' ' -f1)" \
        "$label: library.version = the system sqlite3's version"
    is "${J_library_source_id:-}" "$(sqlite3 --version | cut -d' ' -f2-4)" \
        "$label: library.source_id = the system sqlite3's source id"
    ok "$label: library.loaded_from is an existing file (${J_library_loaded_from:-})" test -f "${J_library_loaded_from:-/nonexistent}"
    is "${J_options_sqlite_db:-}" "$DB" "$label: options echo --sqlite-db"
}

have sqlite3 || bail_out "sqlite3 CLI not found"

note "---- --format=json --report-interval=1 --time=2"
pg a "${common[@]}" --format=json --report-interval=1 --time=2 oltp_read_write run
is "$RC" 0 "json run: exit 0"
is "$(<"$TMP/a.err")" "" "json run: nothing on stderr"
is "$(head -c 1 "$TMP/a.out")" "{" "json run: stdout starts with the JSON object (no text header)"
check_common "json --time=2" "$TMP/a.out"
cmp_ok "${J_total_time_s:-}" '>=' 2 "json --time=2: total_time_s >= 2"
# slack for one event that overruns --time on a loaded machine; a run that ignores --time lasts far longer
cmp_ok "${J_total_time_s:-}" '<' 7 "json --time=2: total_time_s < --time + 5"
is "${J_options_report_interval:-}/${J_options_time:-}/${J_options_format:-}" "1/2/json" "json: options echo the command line"
# the general options and the driver in use only: none of the server drivers'
opt_keys=$(python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1]))["options"])))' "$TMP/a.out")
unlike "$opt_keys" '(^| )(mysql|pgsql)-' "json on SQLite: no --mysql-*/--pgsql-* in options"
like "$opt_keys" '(^| )sqlite-library( |$)' "json on SQLite: the SQLite driver's options are there"
like "$opt_keys" '(^| )db-ps-mode( |$)' "json on SQLite: the general database options are there"
cmp_ok "${J_intervals_len:-0}" '>=' 1 "json --report-interval=1: intervals present (${J_intervals_len:-0})"
cmp_ok "${J_intervals_len:-0}" '<=' 2 "json --report-interval=1: at most 2 intervals in 2 s"
is "${J_iv_times:-}" "$(seq 1 "${J_intervals_len:-0}" | tr '\n' ' ' | sed 's/ $//')" "json intervals: time_s = 1, 2, ..."
is "${J_iv_bad:-x}" 0 "json intervals: every interval has the 10 numeric fields"
is "${J_iv_qps_bad:-x}" 0 "json intervals: qps = reads + writes + other per second"
cmp_ok "${J_iv_tps_min:-0}" '>' 0 "json intervals: tps > 0"
cmp_ok "${J_iv_lat_max:-}" '<=' "${J_latency_ms_max:-x}" "json intervals: latency <= the run's max"

note "---- --format=json --events=100 --percentile=99"
pg b "${common[@]}" --format=json --events=100 --percentile=99 oltp_read_write run
is "$RC" 0 "json --events: exit 0"
check_common "json --events=100" "$TMP/b.out"
is "${J_transactions:-}" 100 "json --events=100: transactions = 100"
is "${J_intervals_len:-x}" 0 "json without --report-interval: empty intervals array"
is "${J_latency_ms_percentile:-}" 99 "json --percentile=99: latency_ms.percentile = 99"
is "${J_latency_ms_percentile_value:-}" "${J_latency_ms_p99:-x}" "json --percentile=99: percentile_value = p99"

done_testing
