#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# The control plane's pure functions (hw/canary_cp.py), as TAP for prove.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hw"))
import canary_cp as cp  # noqa: E402

n = 0
bad = 0


def ok(cond, what):
    global n, bad
    n += 1
    if not cond:
        bad += 1
    print("%sok %d - %s" % ("" if cond else "not ", n, what))


print("1..24")
g = cp.paper_shard_groups(64, 4)
ok(len(g) == 2 ** 16 * 4 == 262144, "64 ports in 4 shards: 2^16 x 4 = 262144 groups (the paper's figure)")
ok(len(cp.paper_shard_groups(32, 4)) == 1024, "32 ports in 4 shards: 1024 groups")
ok(len({m for m, _, _ in g}) == len(g) and min(m for m, _, _ in g) == 1, "group ids unique, 0 unused")
# the groups of a bitmap cover exactly its ports
bitmap = (1 << 0) | (1 << 5) | (1 << 17) | (1 << 63)
ids = cp.paper_mgid(bitmap, 64, 4)
by_id = {m: members for m, _, members in g}
ok(sorted(p for i in ids for p in by_id[i]) == [0, 5, 17, 63], "a bitmap's groups cover exactly its ports")
ok(len(ids) == 3, "three non-empty shards: three groups (TNA carries two per pass)")
oh = cp.port_onehot([0, 4, 8, 12])
ok(oh == [(0, 1), (4, 2), (8, 4), (12, 8)], "port one-hot bits follow the port order")
try:
    cp.port_onehot(list(range(33)))
    ok(False, "33 ports refused")
except ValueError:
    ok(True, "33 ports refused (32-bit children bitmap)")
mg = cp.canary_mcast_groups(list(range(100, 132)))
ok(mg[0] == (1, list(range(100, 116))) and mg[1] == (2, list(range(116, 132))),
   "canary.p4 groups: MGID 1 = first 16 ports, MGID 2 = the next 16")
pg = cp.pktgen_config(1000, 1)
ok(pg["resolution_ns"] == 32768 and pg["worst_case_flush_ns"] == 33768,
   "pktgen: 32768 slots at 1 ns sweep in 32.768 us; flush by timeout + sweep")
r = cp.route_entries({"10.0.0.0/24": [[1, "02:00:00:00:00:01"]]})
ok(r == [("10.0.0.0", 24, [(1, "02:00:00:00:00:01")])], "route entries parsed")
spine = [[128, "02:01:00:00:00:20"], [136, "02:01:00:00:00:21"]]
routes = {"10.0.0.0/24": [[1, "02:00:00:00:00:01"]], "0.0.0.0/0": spine, "10.0.1.0/24": spine}
mem, grp, lpm = cp.selector_entries(routes, [128, 136])
ok(mem == [(1, 1, "02:00:00:00:00:01", None), (2, 128, "02:01:00:00:00:20", 0), (3, 136, "02:01:00:00:00:21", 1)] and
   grp == [(1, [1]), (2, [2, 3])] and lpm == [("10.0.0.0", 24, 1), ("0.0.0.0", 0, 2), ("10.0.1.0", 24, 2)],
   "ECMP selector: members shared, one group per distinct next-hop set, LPM entries point at groups, "
   "up ports carry their index (fwd_up)")
ok(cp.eg_up_entries([128, 136], routes) == [(128, 0, "02:01:00:00:00:20"), (136, 1, "02:01:00:00:00:21")],
   "eg_up: index and next-hop MAC per up port")
try:
    cp.eg_up_entries([200], routes)
    ok(False, "an up port in no route refused")
except ValueError:
    ok(True, "an up port in no route refused (no next-hop MAC)")
try:
    cp.selector_entries({"0.0.0.0/0": [[i, "02:00:00:00:00:00"] for i in range(65)]})
    ok(False, "65 next hops refused")
except ValueError:
    ok(True, "65 next hops refused (a group holds 64)")
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hw", "canary.p4")) as f:
    p4 = f.read()
ok("ActionProfile(%d) ecmp_members;" % cp.SEL_MEMBERS in p4 and
   "SelectorMode_t.FAIR, %d, %d) ecmp_sel;" % (cp.SEL_MAX_GROUP, cp.SEL_GROUPS) in p4,
   "the selector's sizes in canary_cp.py are canary.p4's")
ok("#define QPROBE_PORT %d\n" % cp.QPROBE_PORT in p4 and "#define QPROBE_SESSION %d\n" % cp.QPROBE_SESSION in p4,
   "the depth reports' loopback port and mirror session are canary.p4's")
ok("#define ATO_PORT %d " % cp.ATO_PORT in p4 and "#define ATO_SESSION %d\n" % cp.ATO_SESSION in p4 and
   "#define ATO_FLOOR_NS %d\n" % cp.ATO_FLOOR_NS in p4 and "#define ATO_SPAN_NS %d " % cp.ATO_SPAN_NS in p4 and
   "Register<bit<32>, bit<9>>(%d, TIMEOUT_NS - ATO_FLOOR_NS) r_ato;" % cp.ATO_ENTRIES in p4,
   "the adaptive timeout's loopback port, mirror session, floor, span and r_ato's size are canary.p4's")
ok(cp.ato_start(1000) == 800 and cp.ato_start(100) == 0 and cp.ato_start(20000) == 7800,
   "r_ato starts at the timeout minus the floor, clamped to [floor, ceiling] as the emulator does")
try:
    cp.ato_start(1001)
    ok(False, "a start timeout that is not a multiple of 4 ns refused")
except ValueError:
    ok(True, "a start timeout that is not a multiple of 4 ns refused (the deadline keeps bit 1 of now)")
ok(cp.prune_entries([0, 4]) == [(0, 1, 1), (4, 2, 2)], "egress pruning keeps a copy when the port's bit is set")
ok(cp.run_entries({"7": 2, "0": 3}) == [(0, 3), (7, 2)], "t_run: a run id per tenant")
for bad_runs in ({"0": 4}, {"256": 0}):
    try:
        cp.run_entries(bad_runs)
        ok(False, "t_run %r refused" % bad_runs)
    except ValueError:
        ok(True, "t_run %r refused (tenant 0..255, run id 0..3)" % bad_runs)
ok("table t_run {" in p4 and "key = { hdr.canary.id[31:24] : exact @name(\"tenant\"); }" in p4 and
   "action set_run(bit<2> run)" in p4, "canary.p4's t_run has the key and action canary_cp.py fills")
sys.exit(1 if bad else 0)
