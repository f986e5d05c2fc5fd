#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/realhost.sh - real canary-allreduce processes as hosts of an
# emulated fabric (canary-emu --attach), each in a network namespace of its
# own joined to the emulator's by a veth pair; needs root.
#
#   REAL="1 6" HOSTS=8 TOPO=fattree2:leaves=2,spines=2,hosts=4   README's 2 real among 8 (default)
#   REAL="0 1 2 3" HOSTS=4 TOPO=fattree2:leaves=2,spines=2,hosts=2   t/0110's 4 real hosts
#   RATE=100Mbps SIZE=64KiB ALGO=canary ARGS="..." (more canary-emu options) HOSTARGS="..." (more for the hosts)
#   EMU_PREFIX="chrt -f 10" (run the emulator under a real-time scheduling policy)
#   HOST_PREFIX="..." (run each real host under it; default: taskset to the last CPU, away from the
#     emulator's worker, which is pinned to the first; "" leaves them to the scheduler)
#
# Prints the emulator's verdict (kept_up, event and injected-frame lag
# p50/p99/max), the allreduce's time, retransmissions and failed blocks as
# the emulator saw them, each real host's time and retransmissions, the
# same scenario fully emulated in virtual time for comparison, and the load
# average before the run.
set -euo pipefail
cd "$(dirname "$0")/.."
EMU=$PWD/emu/canary-emu
AR=$PWD/libhost/tools/canary-allreduce
REAL=${REAL:-1 6}
HOSTS=${HOSTS:-8}
TOPO=${TOPO:-fattree2:leaves=2,spines=2,hosts=4}
RATE=${RATE:-100Mbps}
SIZE=${SIZE:-64KiB}
ALGO=${ALGO:-canary}
ARGS=${ARGS:-}
HOSTARGS=${HOSTARGS:-}
ncpu=$(nproc)
HOST_PREFIX=${HOST_PREFIX-$( [ "$ncpu" -ge 2 ] && echo "taskset -c $((ncpu - 1))" )}
id=$$
out=$(mktemp -d)
nss=()
cleanup() { for n in "${nss[@]}"; do ip netns del "$n" 2>/dev/null || true; done; rm -rf "$out"; }
trap cleanup EXIT

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); real hosts under: ${HOST_PREFIX:-(nothing)}"
e=crb${id}e; ip netns add "$e"; nss+=("$e")
attach=; i=0
for h in $REAL; do
	n=crb${id}h$i; ip netns add "$n"; nss+=("$n")
	ip link add ce$i netns "$e" type veth peer name ch$i netns "$n"
	ip -n "$e" link set ce$i up; ip -n "$n" link set ch$i up
	attach=${attach:+$attach,}H$h=ce$i; i=$((i + 1))
done
common=(--topology "$TOPO" --hosts "$HOSTS" --background none --algo "$ALGO" --size "$SIZE" --rate "$RATE")
# everyone starts sending at the same wall-clock instant (--start-at), 2 s from now
start=$(( $(date +%s) + ${LEAD:-2} ))
ip netns exec "$e" ${EMU_PREFIX:-} "$EMU" "${common[@]}" --clock wall --attach "$attach" --attach-peers "$out/peers" \
	--start-at "$start" --no-progress --json $ARGS > "$out/emu.json" 2> "$out/emu.err" &
epid=$!
for _ in $(seq 1000); do [ -s "$out/peers" ] && break; sleep 0.01; done
i=0; hp=()
for h in $REAL; do
	ip netns exec crb${id}h$i $HOST_PREFIX "$AR" --interface ch$i --rank "$h" --hosts "$HOSTS" --size "$SIZE" --algo "$ALGO" \
		--rate "$RATE" --start-at "$start" --peers "$out/peers" --verify --json $HOSTARGS \
		> "$out/h$i.json" 2> "$out/h$i.err" &
	hp+=($!); i=$((i + 1))
done
rc=0
for p in "${hp[@]}"; do wait "$p" || rc=1; done
wait "$epid" || rc=1
"$EMU" "${common[@]}" --time-limit 600s --stall 10s --no-progress --json > "$out/virt.json"
python3 - "$out" <<'PY'
import glob, json, sys
d = sys.argv[1]
e = json.load(open(d + "/emu.json"))["runs"][0]; v = json.load(open(d + "/virt.json"))["runs"][0]
a, va = e["allreduces"][0], v["allreduces"][0]
ms = lambda ns: "%.3f" % (ns / 1e6)
lag = lambda l: "p50 %s p99 %s max %s ms (%d)" % (ms(l["p50_ns"]), ms(l["p99_ns"]), ms(l["max_ns"]), l["samples"])
print("emulator: kept_up %s, lag max %s ms, late windows %d of %d, wall %.2f s, frame-hops %d" % (
    e["kept_up"], ms(e["max_lag_ns"]), e["late_windows"], e["paced_windows"], e["wall_s"], e["frame_hops"]))
print("  events behind wall time: " + lag(e["event_lag"]))
print("  injected frames behind arrival: " + lag(e["inject_lag"]))
hosts = []
for f in sorted(glob.glob(d + "/h*.json")):
    try:
        hosts.append(json.load(open(f)))
    except ValueError:
        hosts.append(None)
# every host real: the emulator times no host; the allreduce's time is the slowest real host's
rt = a["runtime_ns"] or max((h["runtime_ns"] for h in hosts if h), default=0)
print("allreduce: %s ms%s (virtual time %s ms, ratio %.2f), exact %s, retransmissions %d (virtual %d), failed blocks %d" % (
    ms(rt), "" if a["runtime_ns"] else " (slowest real host)", ms(va["runtime_ns"]), rt / va["runtime_ns"],
    a["result_exact"], a["retransmissions"], va["retransmissions"], a["failures"]))
for h in hosts:
    if h is None:
        print("real host: no report"); continue
    print("real host rank %d: %s ms, exact %s, retransmissions %d, failures %d, CPU %.2f s, %d of %d loop turns slept" % (
        h["rank"], ms(h["runtime_ns"]), h["result_exact"], h["retransmissions"], h["failures"], h["cpu_s"],
        h["sleeps"], h["loop_turns"]))
PY
[ $rc = 0 ] || { cat "$out"/*.err >&2; }
exit $rc
