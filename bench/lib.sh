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
# EXTRA adds options to every run, e.g. EXTRA="--router merlin --bg-load 0.3"
# RESULTS=bench/results/merlin-0.3 (the switch model and background load of
# the model columns in bench/README.md). The paper's fabric has one traffic
# class: --priority none (the emulator's default, recovery, puts an
# allreduce's recovery frames in a second one; bench/loss-sweep.sh uses it,
# and experiment 8 asks for collective). Its recovery is the paper's,
# --sketch 0 (the emulator's default, auto, gives the sketch to runs that
# can lose frames; bench/loss-sweep.sh's sketch runs override it).
PAPER="--topology fattree2:leaves=32,spines=32,hosts=32 --elements 256 --profile ${PROFILE:-unbounded} --no-progress --priority none --sketch 0 ${EXTRA:-}"

mkdir -p "$RESULTS"

# JOBS=N runs N emulator runs at a time, each with one worker on its own CPU
# (taskset: a run pins its workers to the first CPUs it may use). Results do
# not depend on the worker count, and rows still land in the order of the
# calls: every run writes its own file and bench_flush appends them in
# order. On the 2-core machine this does not pay for the paper's 1024-host
# runs (memory bound: two default Canary runs took 15.8 s side by side with
# one worker each, 13.8 s one after the other with two), hence JOBS=1.
JOBS=${JOBS:-1}
NCPU=$(nproc 2>/dev/null || echo 1)
declare -a BENCH_SLOT
BENCH_TMP=$(mktemp -d /tmp/bench.XXXXXX)
BENCH_SEQ=0
trap 'rm -rf "$BENCH_TMP"' EXIT

# seed_range: $SEEDS as A-B for --seeds (they must be consecutive)
seed_range() {
	set -- $SEEDS
	local first=$1 last=$1 s
	for s in "$@"; do
		[ "$s" = "$last" ] || [ "$s" = $((last + 1)) ] || { echo "bench: SEEDS='$SEEDS' are not consecutive" >&2; return 1; }
		last=$s
	done
	echo "$first-$last"
}

# csv_append FILE TAGS OUT: append OUT's rows (canary-emu --csv, its '# key=value' scenario lines
# left out) to FILE; a FILE written before the last columns were added keeps its columns
csv_append() {
	local file=$1 tags=$2 out=$3
	local names values head extra=0
	out=$(printf '%s\n' "$out" | grep -v '^#' || true)
	names=$(printf '%s' "$tags" | tr ',' '\n' | cut -d= -f1 | paste -sd, -)
	values=$(printf '%s' "$tags" | tr ',' '\n' | cut -d= -f2- | paste -sd, -)
	head="$names,$(printf '%s\n' "$out" | head -1)"
	[ -s "$file" ] || printf '%s\n' "$head" > "$file"
	if [ "$(head -1 "$file")" != "$head" ]; then
		case "$head" in
		"$(head -1 "$file"),"*) extra=$(( $(printf '%s' "$head" | tr -cd , | wc -c) - $(head -1 "$file" | tr -cd , | wc -c) )) ;;
		*) echo "bench: $file has other columns than canary-emu writes now; move it away" >&2; return 1 ;;
		esac
		out=$(printf '%s\n' "$out" | N=$extra perl -pe 's/(,[^,]*){$ENV{N}}$// if $. > 1')
	fi
	printf '%s\n' "$out" | tail -n +2 | V="$values" perl -pe 's/^/$ENV{V},/' >> "$file"
	printf '%s\n' "$out" | tail -n +2 | T="$tags" perl -MText::ParseWords -ne 'chomp; my @f = parse_line(",", 0, $_);
		printf "  %-40s %-9s %9.2f us %7.2f Gb/s exact=%s\n", $ENV{T}, $f[0], $f[7] / 1000, $f[9], $f[10];'
}

# one command's run into $BENCH_TMP/N.{out,err,rc}
bench_one() {
	local n=$1
	shift
	if "$@" > "$BENCH_TMP/$n.out" 2> "$BENCH_TMP/$n.err"; then
		echo 0 > "$BENCH_TMP/$n.rc"
	else
		echo $? > "$BENCH_TMP/$n.rc"
	fi
}

# bench_flush: wait for the runs started so far, append their rows in call order
bench_flush() {
	wait
	local m
	for m in $(ls "$BENCH_TMP" | grep '\.meta$' | sort -n); do
		local n=${m%.meta} kind file tags
		{ read -r kind; read -r file; read -r tags; } < "$BENCH_TMP/$m"
		if [ "$(cat "$BENCH_TMP/$n.rc")" != 0 ] && [ "$kind" = csv ]; then
			echo "bench: FAILED: $(head -1 "$BENCH_TMP/$n.cmd") ($(head -1 "$BENCH_TMP/$n.err"))" >&2
		fi
		if [ "$kind" = csv ]; then
			csv_append "$file" "$tags" "$(cat "$BENCH_TMP/$n.out")"
		else
			cat "$BENCH_TMP/$n.out" >> "$file"
		fi
		rm -f "$BENCH_TMP/$n".*
	done
}

# bench_start KIND FILE TAGS CMD...: start (with JOBS=1: run) one emulator
# run whose output goes to FILE (KIND csv: rows to tag; util: rows as they are)
bench_start() {
	local kind=$1 file=$2 tags=$3
	shift 3
	local n=$BENCH_SEQ
	BENCH_SEQ=$((BENCH_SEQ + 1))
	printf '%s\n%s\n%s\n' "$kind" "$file" "$tags" > "$BENCH_TMP/$n.meta"
	echo "$*" > "$BENCH_TMP/$n.cmd"
	if [ "$JOBS" -le 1 ]; then
		bench_one "$n" "$@"
		bench_flush
		return
	fi
	local slot
	for (( ; ; )); do
		for (( slot = 0; slot < JOBS; slot++ )); do
			[ -z "${BENCH_SLOT[$slot]:-}" ] && break
			kill -0 "${BENCH_SLOT[$slot]}" 2>/dev/null || break
		done
		[ "$slot" -lt "$JOBS" ] && break
		wait -n || true
	done
	bench_one "$n" taskset -c $((slot % NCPU)) "$@" --workers 1 &
	BENCH_SLOT[$slot]=$!
}

# csv_run FILE TAGS ARGS...: TAGS is "name=value,..." columns prepended to each row
csv_run() {
	local file=$1 tags=$2
	shift 2
	bench_start csv "$file" "$tags" "$EMU" "$@" --csv
}

# util_run FILE TAGS ARGS...: the per-link utilization of one run (one row per link)
util_run() {
	local file=$1 tags=$2
	shift 2
	[ -s "$file" ] || echo "tags,algo,link,util" > "$file"
	bench_start util "$file" "$tags" bench/util-rows "$tags" "$EMU" "$@"
}
