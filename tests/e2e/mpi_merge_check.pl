#!/usr/bin/perl
# mpi_merge_check.pl JSON PREFIX NP: a `pgolab bench --format=json` job of NP ranks against
# every rank's raw latencies (PREFIX.RANK, ns one a line: the PGOLAB_LATENCY_FILE test knob).
# Prints "ok" or what differs: the JSON's per-rank events against each rank's sample count, the
# job's events against their sum, and the histogram, min, max, sum and percentiles against
# those recomputed from all samples. The bucket geometry is histogram.h's (128 linear
# sub-buckets per power of two, 1 us .. 100 s), the percentile its nearest rank ceil(N*p/100),
# shown as the bucket's midpoint clamped into [min, max] (the extreme ranks: min and max
# themselves). Used by bench_mpi.t and bench_mpi_hosts.t.
use strict; use warnings; use JSON::PP; use POSIX qw(ceil);
my ($json, $prefix, $np) = @ARGV;
my $j = decode_json(do { local $/; open my $f, '<', $json or die "$json: $!"; <$f> });
my @bad;
my @all;
my $ranks = $j->{ranks} || [];
push @bad, "ranks: " . scalar(@$ranks) . " entries, expected $np" if @$ranks != $np;
my $sum = 0;
for my $r (0 .. $np - 1) {
    open my $f, '<', "$prefix.$r" or do { push @bad, "no $prefix.$r"; next };
    my @v = map { chomp; $_ } <$f>;
    my $e = $ranks->[$r]{events} // -1;
    push @bad, "rank $r: $e events in the JSON, " . scalar(@v) . " latencies" if $e != @v;
    push @bad, "rank $r: threads $ranks->[$r]{threads}" if ($ranks->[$r]{threads} // 0) < 1;
    $sum += $e;
    push @all, @v;
}
push @bad, "events $j->{events}, ranks' sum $sum" if $j->{events} != $sum;
push @bad, "events $j->{events}, samples " . scalar(@all) if $j->{events} != @all;
push @bad, "no samples" unless @all;
sub raw { my $v = shift; return $v if $v < 256; my $e = 0; $e++ while ($v >> ($e + 1)); my $s = $e - 7; return $s * 128 + ($v >> $s); }
sub mid { my $r = shift; return $r if $r < 256; my $s = int($r / 128) - 1; my $lo = (($r % 128) + 128) << $s; my $m = $lo + (1 << $s) / 2; return $m > 1e11 ? 1e11 : $m; }
sub rawof { my $v = shift; $v = 1000 if $v < 1000; return raw($v); }
my %h;
$h{rawof($_)}++ for @all;
my @keys = sort { $a <=> $b } keys %h;
my @jh = sort { $a->{ms} <=> $b->{ms} } @{ $j->{histogram} };
push @bad, "histogram: " . scalar(@jh) . " buckets in the JSON, " . scalar(@keys) . " from the samples" if @jh != @keys;
sub rel { my ($a, $b) = @_; return abs($a - $b) <= 1e-9 * (abs($b) + 1e-9); }
for my $i (0 .. $#keys) {
    last if $i > $#jh;
    my ($ms, $n) = (mid($keys[$i]) / 1e6, $h{ $keys[$i] });
    push @bad, "bucket $i: JSON $jh[$i]{ms} ms x $jh[$i]{count}, samples $ms ms x $n"
        unless rel($jh[$i]{ms}, $ms) && $jh[$i]{count} == $n;
}
my @s = sort { $a <=> $b } @all;
my ($min, $max, $n) = ($s[0], $s[-1], scalar @s);
my $l = $j->{latency_ms};
push @bad, "min $l->{min} ms, samples' " . $min / 1e6 unless rel($l->{min}, $min / 1e6);
push @bad, "max $l->{max} ms, samples' " . $max / 1e6 unless rel($l->{max}, $max / 1e6);
my $tot = 0; $tot += $_ for @s;
push @bad, "sum $l->{sum} ms, samples' " . $tot / 1e6 unless rel($l->{sum}, $tot / 1e6);
for my $p ([p50 => 50], [p90 => 90], [p95 => 95], [p99 => 99], [p99_9 => 99.9]) {
    my $r = $n * $p->[1] / 100; my $k = ceil($r - $r * 1e-12); $k = 1 if $k < 1; $k = $n if $k > $n;
    my $v = $k == 1 ? $min : $k == $n ? $max : mid(rawof($s[$k - 1]));
    $v = $min if $v < $min; $v = $max if $v > $max;
    push @bad, "$p->[0] $l->{$p->[0]} ms, samples' " . $v / 1e6 unless rel($l->{ $p->[0] }, $v / 1e6);
}
print @bad ? join("\n", @bad) . "\n" : "ok\n";
