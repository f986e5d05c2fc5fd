#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/summarize.pl - mean over seeds of the experiment CSVs, as gnuplot
# .dat files and as markdown tables (printed) for bench/README.md.
#
#   bench/summarize.pl [bench/results]
use strict;
use warnings;
use Text::ParseWords qw(parse_line);

our $dir = shift // 'bench/results';

sub readcsv {
	my ($f) = @_;
	open(my $h, '<', $f) or return ();
	my $hdr = <$h>;
	return () unless $hdr;
	chomp $hdr;
	my @cols = parse_line(',', 0, $hdr);
	my @rows;
	while (<$h>) {
		chomp;
		my @v = parse_line(',', 0, $_);
		my %r;
		@r{@cols} = @v;
		push @rows, \%r;
	}
	return (\@cols, \@rows);
}

# minimum and maximum over seeds of the goodput, a seed's goodput being the
# mean of its rows (one per run, or one per tenant when several allreduces
# ran at once); $by is { seed => [sum, rows] }
sub seedrange {
	my ($by) = @_;
	my @m = map { $_->[0] / $_->[1] } values %$by;
	my ($lo, $hi) = ($m[0], $m[0]);
	for (@m) {
		$lo = $_ if $_ < $lo;
		$hi = $_ if $_ > $hi;
	}
	return ($lo, $hi);
}

# group rows by the experiment's tag columns + algo; mean goodput/runtime
sub summarize {
	my ($name, $ntags) = @_;
	my ($cols, $rows) = readcsv("$dir/$name.csv");
	return unless $cols;
	my @tags = @$cols[0 .. $ntags - 1];
	my (%sum, %order, @keys);
	for my $r (@$rows) {
		my $k = join(',', (map { $r->{$_} } @tags), $r->{algo});
		push @keys, $k unless exists $sum{$k};
		my $s = $sum{$k} //= { n => 0, gp => 0, rt => 0, exact => 1, size => $r->{size_bytes} };
		$s->{n}++;
		$s->{gp} += $r->{goodput_gbps};
		my $seed = $s->{seed}{$r->{seed} // $s->{n}} //= [0, 0];
		$seed->[0] += $r->{goodput_gbps};
		$seed->[1]++;
		$s->{rt} += $r->{runtime_ns};
		$s->{exact} = 0 if $r->{result_exact} ne 'true';
	}
	open(my $out, '>', "$dir/$name.dat") or die "$dir/$name.dat: $!";
	print $out "# ", join(' ', @tags, 'algo', 'goodput_gbps', 'runtime_us', 'runs', 'exact', 'goodput_min', 'goodput_max'), "\n";
	print "\n### $name\n\n| ", join(' | ', @tags, 'algo', 'goodput (Gb/s)', 'min-max over seeds', 'runtime (us)', 'runs', 'exact'), " |\n";
	print "|", join('|', ('---') x (@tags + 6)), "|\n";
	for my $k (@keys) {
		my $s = $sum{$k};
		my @f = split /,/, $k;
		($s->{min}, $s->{max}) = seedrange($s->{seed});
		printf $out "%s %.3f %.3f %d %d %.3f %.3f\n", join(' ', @f), $s->{gp} / $s->{n}, $s->{rt} / $s->{n} / 1000,
			$s->{n}, $s->{exact}, $s->{min}, $s->{max};
		printf "| %s | %.1f | %.1f-%.1f | %.1f | %d | %s |\n", join(' | ', @f), $s->{gp} / $s->{n}, $s->{min}, $s->{max},
			$s->{rt} / $s->{n} / 1000, $s->{n}, $s->{exact} ? 'yes' : 'NO';
	}
	close $out;
}

sub pct_num {
	my ($k) = @_;
	$k =~ s/%$//;
	return $k;
}

# pivot NAME.csv: one row per value of @rowcols, one column per value of
# $colcol (a column name, or a list of them joined with _), mean goodput ->
# NAME.wide (for gnuplot); only rows with $fcol = $fval if given. After the
# means, two columns per column value: the minimum and maximum over seeds
# (KEY_min KEY_max, in the same order; seedrange), for error bars
# $name: a CSV, or [CSV, more CSVs whose rows join it] (the first names the output)
sub pivot {
	my ($names, $rowcols, $colcol, $out, $fcol, $fval) = @_;
	my ($name, @more) = ref $names ? @$names : ($names);
	my ($cols, $rows) = readcsv("$dir/$name.csv");
	return unless $cols;
	for my $m (@more) {
		my (undef, $r) = readcsv("$dir/$m.csv");
		push @$rows, @$r if $r;
	}
	my (%sum, %n, %seed, @rk, @ck, %seenr, %seenc);
	for my $r (@$rows) {
		next if defined $fcol && $r->{$fcol} ne $fval;
		my $rk = join('_', map { $r->{$_} } @$rowcols);
		my $ck = ref $colcol ? join('_', grep { $_ ne '-' } map { $r->{$_} } @$colcol) : $r->{$colcol};
		push @rk, $rk unless $seenr{$rk}++;
		push @ck, $ck unless $seenc{$ck}++;
		my $g = $r->{goodput_gbps};
		$sum{$rk}{$ck} += $g;
		$n{$rk}{$ck}++;
		my $sd = $seed{$rk}{$ck}{$r->{seed} // $n{$rk}{$ck}} //= [0, 0];
		$sd->[0] += $g;
		$sd->[1]++;
	}
	# numeric keys (or percentages: runs appended later come after): in order
	@rk = sort { pct_num($a) <=> pct_num($b) } @rk unless grep { !/^[0-9.eE+-]+%?$/ } @rk;
	open(my $o, '>', "$dir/" . ($out // $name) . ".wide") or die;
	print $o join(' ', 'key', @ck, map { ("${_}_min", "${_}_max") } @ck), "\n";
	for my $rk (@rk) {
		print $o join(' ', $rk,
			(map { $n{$rk}{$_} ? sprintf('%.3f', $sum{$rk}{$_} / $n{$rk}{$_}) : 'NaN' } @ck),
			(map { $n{$rk}{$_} ? map { sprintf('%.3f', $_) } seedrange($seed{$rk}{$_}) : ('NaN', 'NaN') } @ck)), "\n";
	}
	close $o;
}

sub utilization {
	my ($name) = @_;
	my ($cols, $rows) = readcsv("$dir/$name.csv");
	return unless $cols;
	my (%h, %sum, %n, @keys);
	for my $r (@$rows) {
		my $k = "$r->{tags} $r->{algo}";
		$k =~ s/"//g;
		push @keys, $k unless exists $n{$k};
		my $b = $r->{util} <= 0 ? 0 : int($r->{util} * 10) + 1;
		$b = 10 if $b > 10;
		$h{$k}[$b]++;
		$sum{$k} += $r->{util};
		$n{$k}++;
	}
	open(my $out, '>', "$dir/$name.dat") or die;
	print $out "# key idle 0-10 10-20 20-30 30-40 40-50 50-60 60-70 70-80 80-90 90+ mean\n";
	print "\n### $name (share of directed links per utilization bucket, %)\n\n";
	print "| run | idle | 0-10 | 10-20 | 20-30 | 30-40 | 40-50 | 50-60 | 60-70 | 70-80 | 80-90 | 90+ | mean |\n";
	print "|", join('|', ('---') x 13), "|\n";
	for my $k (@keys) {
		my @p = map { 100 * ($h{$k}[$_] // 0) / $n{$k} } 0 .. 10;
		(my $kk = $k) =~ s/ /_/g;
		printf $out "%s %s %.2f\n", $kk, join(' ', map { sprintf '%.2f', $_ } @p), 100 * $sum{$k} / $n{$k};
		printf "| %s | %s | %.1f |\n", $k, join(' | ', map { sprintf '%.1f', $_ } @p), 100 * $sum{$k} / $n{$k};
	}
	close $out;
}

# The switch-model columns (bench/models.sh, bench/README.md section 10):
# the same point of an experiment under each model, one row per algorithm,
# one column per model (mean goodput, then min-max over seeds) -> NAME.wide.
# A model's directory below $dir; the FIFO model at line rate is $dir itself.
# Without background the load does not matter: rows with bg=none have the
# line-rate columns only.
my @models = (['.', 'fifo'], ['fifo-0.4', 'fifo_0.4'], ['merlin-line', 'merlin'], ['merlin-0.4', 'merlin_0.4']);

sub models_pivot {
	my ($out, $name, %want) = @_;
	my (%sum, %n, %seed, @rk, %seenr, @ck);
	for my $m (@models) {
		my ($src, $col) = @$m;
		next if $src =~ /-0\.4$/ && ($want{bg} // '') eq 'none';
		my ($cols, $rows) = readcsv("$dir/$src/$name.csv");
		next unless $cols;
		my $any = 0;
		for my $r (@$rows) {
			next if grep { !defined $r->{$_} || $r->{$_} ne $want{$_} } keys %want;
			my $rk = $r->{algo};
			push @rk, $rk unless $seenr{$rk}++;
			$sum{$rk}{$col} += $r->{goodput_gbps};
			$n{$rk}{$col}++;
			my $sd = $seed{$rk}{$col}{$r->{seed}} //= [0, 0];
			$sd->[0] += $r->{goodput_gbps};
			$sd->[1]++;
			$any = 1;
		}
		push @ck, $col if $any;
	}
	return unless @ck > 1;
	open(my $o, '>', "$dir/$out.wide") or die "$dir/$out.wide: $!";
	print $o join(' ', 'key', @ck, map { ("${_}_min", "${_}_max") } @ck), "\n";
	print "\n### $out (goodput in Gb/s, mean over seeds, min-max; seeds per model)\n\n";
	print "| algo | ", join(' | ', @ck), " |\n|", join('|', ('---') x (@ck + 1)), "|\n";
	for my $rk (@rk) {
		my @mean = map { $n{$rk}{$_} ? sprintf('%.3f', $sum{$rk}{$_} / $n{$rk}{$_}) : 'NaN' } @ck;
		my @rng = map { $n{$rk}{$_} ? map { sprintf('%.3f', $_) } seedrange($seed{$rk}{$_}) : ('NaN', 'NaN') } @ck;
		print $o join(' ', $rk, @mean, @rng), "\n";
		print "| $rk | ", join(' | ', map {
			my $c = $_;
			$n{$rk}{$c} ? sprintf('%.1f (%.1f-%.1f, %d)', $sum{$rk}{$c} / $n{$rk}{$c}, seedrange($seed{$rk}{$c}),
				scalar keys %{$seed{$rk}{$c}}) : '-' } @ck), " |\n";
	}
	close $o;
}

summarize('exp1-motivation', 2);
summarize('exp2-trees', 1);
utilization('exp2-util');
summarize('exp3-share', 1);
summarize('exp4-size', 1);
summarize('exp5-tenants', 1);
utilization('exp5-util');
summarize('exp6-noise', 3);
summarize('exp7-tofino', 1);
summarize('exp8-priority', 2);
pivot('exp1-motivation', ['share', 'bg'], 'algo');
pivot('exp2-trees', ['algo'], 'bg');
pivot('exp3-share', ['share'], 'algo');
pivot('exp4-size', ['size_bytes'], 'algo', 'exp4-size-none', 'bg', 'none');
pivot('exp4-size', ['size_bytes'], 'algo', 'exp4-size-uniform', 'bg', 'uniform');
pivot('exp5-tenants', ['tenants'], 'algo');
# experiment 6 with the adaptive timeout as a fourth timeout (bench/adaptive.sh noise)
pivot(['exp6-noise', 'adaptive-noise'], ['noise'], ['algo', 'timeout'], 'exp6-noise-none', 'bg', 'none');
pivot(['exp6-noise', 'adaptive-noise'], ['noise'], ['algo', 'timeout'], 'exp6-noise-uniform', 'bg', 'uniform');
pivot('exp8-priority', ['case', 'prio'], 'algo');
pivot('exp2-trees-tofino1', ['algo'], 'bg');
pivot('exp3-share-tofino1', ['share'], 'algo');
pivot('exp5-tenants-tofino1', ['tenants'], 'algo');
pivot('exp5-tenants-hash', ['tenants'], 'algo');
# the same experiments with --profile tofino1 (PROFILE=tofino1), when present
summarize('exp2-trees-tofino1', 1);
summarize('exp3-share-tofino1', 1);
summarize('exp5-tenants-tofino1', 1);
summarize('exp5-tenants-hash', 1);
# the model columns, when bench/models.sh has filled their directories
if (-d "$dir/merlin-line") {
	models_pivot('models-512-uniform', 'exp2-trees', bg => 'uniform');
	models_pivot('models-512-none', 'exp2-trees', bg => 'none');
	models_pivot('models-5pct', 'exp3-share', share => '5%');
	models_pivot('models-1pct-uniform', 'exp1-motivation', share => '1%', bg => 'uniform');
	models_pivot('models-75pct-uniform', 'exp1-motivation', share => '75%', bg => 'uniform');
	models_pivot('models-16-tenants', 'exp5-tenants', tenants => '16');
	models_pivot('models-32-tenants', 'exp5-tenants', tenants => '32');
	for my $m (grep { $_->[0] ne '.' } @models) {
		local $dir = "$dir/$m->[0]";
		pivot('exp1-motivation', ['share', 'bg'], 'algo');
		pivot('exp3-share', ['share'], 'algo');
		pivot('exp5-tenants', ['tenants'], 'algo');
	}
}
