# SPDX-License-Identifier: MIT
# bench/lib.sh - helpers for the experiment drivers: run canary-emu with
# --csv and append its rows to a results file, tagged with the experiment's
# own columns. Sourced by bench/paper.sh and bench/run-quick.

EMU=${EMU:-emu/canary-emu}
RESULTS=${RESULTS:-bench/results}
SEEDS=${SEEDS:-1 2 3 4 5}
# The paper's simulated switches aggregate 256 elements at line rate (sec.
# 5.1: "we run simulations with 256 elements per packet"); a Tofino 1 needs 8
# recirculating passes for that, so the paper's figures are reproduced with
# the unbounded profile. PROFILE=tofino1 shows what a Tofino 1 would do.
PAPER="--topology fattree2:leaves=32,spines=32,hosts=32 --elements 256 --profile ${PROFILE:-unbounded} --no-progress"

mkdir -p "$RESULTS"

# csv_run FILE TAGS ARGS...: TAGS is "name=value,..." columns prepended to each row
csv_run() {
	local file=$1 tags=$2
	shift 2
	local names values
	names=$(printf '%s' "$tags" | tr ',' '\n' | cut -d= -f1 | paste -sd, -)
	values=$(printf '%s' "$tags" | tr ',' '\n' | cut -d= -f2- | paste -sd, -)
	local out
	if ! out=$("$EMU" "$@" --csv 2>/tmp/bench-err.txt); then
		echo "bench: FAILED: $EMU $* ($(head -1 /tmp/bench-err.txt))" >&2
	fi
	[ -s "$file" ] || printf '%s,%s\n' "$names" "$(printf '%s\n' "$out" | head -1)" > "$file"
	printf '%s\n' "$out" | tail -n +2 | V="$values" perl -pe 's/^/$ENV{V},/' >> "$file"
	printf '%s\n' "$out" | tail -n +2 | T="$tags" perl -MText::ParseWords -ne 'chomp; my @f = parse_line(",", 0, $_);
		printf "  %-40s %-9s %9.2f us %7.2f Gb/s exact=%s\n", $ENV{T}, $f[0], $f[7] / 1000, $f[9], $f[10];'
}

# util_run FILE TAGS ARGS...: the per-link utilization of one run (one row per link)
util_run() {
	local file=$1 tags=$2
	shift 2
	[ -s "$file" ] || echo "tags,algo,link,util" > "$file"
	"$EMU" "$@" --json 2>/dev/null | perl -MJSON::PP -e '
		local $/; my $j = decode_json(<STDIN>);
		my @runs = exists $j->{runs} ? @{$j->{runs}} : ($j);
		for my $r (@runs) { my $i = 0; print "\"$ARGV[0]\",$r->{algo},", $i++, ",$_\n" for @{$r->{link_util}}; }
	' "$tags" >> "$file"
}
