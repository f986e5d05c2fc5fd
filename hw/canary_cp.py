# SPDX-License-Identifier: MIT
"""hw/canary_cp.py - control plane of hw/canary.p4.

Pure functions (tested by t/0051-hw-controlplane.py with Debian's python3)
compute every table entry; setup() writes them through bfrt_python in the
SDE's bfshell:

    bfshell -b hw/canary_cp.py        (with CANARY_CONFIG=path/to/config.json)

The configuration names the switch address, its front-panel ports, the
leaders that hang off it, the routes (prefix -> [(port, next-hop MAC)]) and
the timeout.
"""

import json
import os

N_DESC = 32768
PKTGEN_PORT = 68          # pipe 0 packet generator
PKTGEN_APP = 1
QPROBE_PORT = 64          # canary.p4: loopback port of the queue-depth reports
QPROBE_SESSION = 1        # canary.p4: their egress mirror session
ATO_PORT = 66             # canary.p4 -DCANARY_ADAPTIVE_TIMEOUT: loopback port of the timeout samples
ATO_SESSION = 2           # their ingress mirror session
ATO_FLOOR_NS = 200        # canary.p4 ATO_FLOOR_NS, ATO_SPAN_NS: Q in [floor, floor + span]
ATO_SPAN_NS = 7800
ATO_ENTRIES = 512         # r_ato: (tenant, root)


def port_onehot(ports):
    """Ingress/egress one-hot entries: the i-th front-panel port of the
    switch gets bit i (bits 0..31, the children bitmap)."""
    if len(ports) > 32:
        raise ValueError("the children bitmap has 32 bits: at most 32 ports")
    return [(dev_port, 1 << i) for i, dev_port in enumerate(ports)]


def paper_shard_groups(p, s):
    """The paper's sharded multicast groups (sec. 4.2): the p-bit children
    bitmap in s shards of p/s bits, one group per (shard, value):
    2^(p/s) * s groups. Returns [(mgid, shard, [port index, ...])]; mgid 0
    is never used (it means "no multicast" in TNA)."""
    if p % s:
        raise ValueError("p must be a multiple of s")
    w = p // s
    groups = []
    mgid = 1
    for shard in range(s):
        for value in range(1 << w):
            members = [shard * w + b for b in range(w) if value >> b & 1]
            groups.append((mgid, shard, members))
            mgid += 1
    return groups


def paper_mgid(children, p, s):
    """MGIDs a broadcast to the @children bitmap needs under the paper's
    scheme: one per non-empty shard (TNA carries two per pass)."""
    w = p // s
    out = []
    for shard in range(s):
        value = children >> (shard * w) & ((1 << w) - 1)
        if value:
            out.append(1 + shard * (1 << w) + value)
    return out


def canary_mcast_groups(ports):
    """What hw/canary.p4 uses: two shards of 16 ports, MGID 1 = ports 0..15,
    MGID 2 = ports 16..31, pruned to the children in egress; every node gets
    rid 1 so egress knows a copy carries the bridged bitmap."""
    dev = [d for d, _ in port_onehot(ports)]
    return [(1, dev[:16]), (2, dev[16:32])]


def pktgen_config(timeout_ns, tick_ns, n_desc=N_DESC):
    """The clock app: a batch of n_desc packets (packet i checks slot i),
    tick_ns apart, repeated back to back. A descriptor flushes between
    timeout and timeout + n_desc * tick (the sweep period)."""
    if tick_ns <= 0:
        raise ValueError("tick must be positive")
    sweep = n_desc * tick_ns
    return {
        "app_id": PKTGEN_APP, "trigger": "TRIGGER_PERIODIC",
        "batch_count_cfg": 0, "packets_per_batch_cfg": n_desc - 1,
        "ibg": tick_ns, "ipg": tick_ns, "timer_nanosec": sweep,
        "resolution_ns": sweep, "worst_case_flush_ns": timeout_ns + sweep,
    }


def ato_start(timeout_ns):
    """-DCANARY_ADAPTIVE_TIMEOUT: the value every r_ato entry starts from
    (Q - floor) for a start timeout of timeout_ns, as the emulator clamps
    it to [floor, ceiling]. A multiple of 4 ns: the stored now + Q - floor
    must keep bit 1 of now (0 and 1 mean free and flushed)."""
    q = min(max(int(timeout_ns), ATO_FLOOR_NS), ATO_FLOOR_NS + ATO_SPAN_NS)
    if q % 4:
        raise ValueError("the adaptive timeout's start must be a multiple of 4 ns")
    return q - ATO_FLOOR_NS


def route_entries(routes):
    """LPM entries for the route table (IPv4 and Canary leaders alike):
    {"10.0.0.0/24": [[port, "02:00:..."], ...]} -> [(addr, plen, [(port, mac)])]."""
    out = []
    for prefix, hops in routes.items():
        addr, plen = prefix.split("/")
        parts = [int(x) for x in addr.split(".")]
        if len(parts) != 4 or not all(0 <= x < 256 for x in parts) or not 0 <= int(plen) <= 32:
            raise ValueError("bad prefix %r" % prefix)
        out.append((addr, int(plen), [(int(p), m) for p, m in hops]))
    return out


SEL_MAX_GROUP = 64        # ActionSelector(ecmp_members, ..., 64, 1024) in canary.p4
SEL_GROUPS = 1024
SEL_MEMBERS = 4096        # ActionProfile(4096) ecmp_members


def uplink_index(uplinks):
    """Up ports (toward the spines) get indexes 0.. for the adaptive next
    hop's per-port depth register: {port: index}."""
    if len(uplinks) > 256:
        raise ValueError("at most 256 up ports (r_qdepth)")
    return {int(port): i for i, port in enumerate(uplinks)}


def eg_up_entries(uplinks, routes):
    """Egress eg_up entries: (port, index, next-hop MAC) for every up port,
    the MAC taken from the routes that use that port."""
    idx = uplink_index(uplinks)
    macs = {}
    for _, _, hops in route_entries(routes):
        for port, mac in hops:
            macs.setdefault(int(port), mac)
    missing = [p for p in idx if p not in macs]
    if missing:
        raise ValueError("up port %d is in no route: its next-hop MAC is unknown" % missing[0])
    return [(port, i, macs[port]) for port, i in idx.items()]


def selector_entries(routes, uplinks=()):
    """The route table's LPM entries point at groups of the ECMP action
    selector; a group's members are (port, next-hop MAC) entries of the
    action profile, shared between groups; members on up ports carry the
    port's index (action fwd_up, for the adaptive next hop), others None
    (action fwd).
    -> ([(member, port, mac, up_index)], [(group, [member, ...])], [(addr, plen, group)])."""
    up = uplink_index(uplinks)
    members, groups, lpm = {}, {}, []
    for addr, plen, hops in route_entries(routes):
        if not hops:
            raise ValueError("route %s/%d has no next hop" % (addr, plen))
        if len(hops) > SEL_MAX_GROUP:
            raise ValueError("route %s/%d: %d next hops, a group holds %d" % (addr, plen, len(hops), SEL_MAX_GROUP))
        ids = tuple(members.setdefault((port, mac), len(members) + 1) for port, mac in hops)
        group = groups.setdefault(ids, len(groups) + 1)
        lpm.append((addr, plen, group))
    if len(members) > SEL_MEMBERS or len(groups) > SEL_GROUPS:
        raise ValueError("%d members, %d groups: the selector holds %d and %d"
                         % (len(members), len(groups), SEL_MEMBERS, SEL_GROUPS))
    return ([(m, port, mac, up.get(int(port))) for (port, mac), m in members.items()],
            [(g, list(ids)) for ids, g in groups.items()], lpm)


def run_entries(runs):
    """t_run: the run id (0..3, libhost/wire.h) each tenant's hosts are in,
    from {"TENANT": RUN}; a Canary frame of the tenant with another run id
    is dropped. Returns [(tenant, run)] sorted by tenant."""
    out = []
    for t, r in runs.items():
        t, r = int(t), int(r)
        if not 0 <= t <= 255:
            raise ValueError("tenant %d is not in 0..255" % t)
        if not 0 <= r <= 3:
            raise ValueError("run id %d of tenant %d is not in 0..3" % (r, t))
        out.append((t, r))
    return sorted(out)


def prune_entries(ports):
    """Egress pruning of multicast copies: (port, value, mask) of the ternary
    match on the children bitmap that keeps a copy on that port."""
    return [(dev, bit, bit) for dev, bit in port_onehot(ports)]


def setup(bfrt, cfg):  # pragma: no cover - needs the SDE
    """Write every table through bfrt_python."""
    p4 = bfrt.canary.pipe
    ig = p4.Ingress
    for dev_port, bit in port_onehot(cfg["ports"]):
        ig.port_onehot.add_with_set_onehot(ingress_port=dev_port, bit_=bit)
    for dev_port, value, mask in prune_entries(cfg["ports"]):
        p4.Egress.eg_prune.add_with_keep(egress_port=dev_port, children=value, children_mask=mask)
    ig.switch_addr.set_default_with_set_switch(addr=cfg["switch_addr"])
    for leader in cfg.get("leaders", []):
        ig.leader_local.add_with_set_root(dst=leader)
    for tenant, run in run_entries(cfg.get("runs", {})):
        ig.t_run.add_with_set_run(tenant=tenant, run=run)
    uplinks = cfg.get("uplinks", [])
    members, groups, lpm = selector_entries(cfg["routes"], uplinks)
    for member, port, mac, idx in members:
        if idx is None:
            ig.ecmp_members.entry_with_fwd(ACTION_MEMBER_ID=member, port=port, dmac=mac).push()
        else:
            ig.ecmp_members.entry_with_fwd_up(ACTION_MEMBER_ID=member, port=port, dmac=mac, idx=idx).push()
    for group, ids in groups:
        ig.ecmp_sel.entry(SELECTOR_GROUP_ID=group, MAX_GROUP_SIZE=SEL_MAX_GROUP, ACTION_MEMBER_ID=ids,
                          ACTION_MEMBER_STATUS=[True] * len(ids)).push()
    for addr, plen, group in lpm:
        ig.route.entry(route_ip=addr, route_ip_p_length=plen, SELECTOR_GROUP_ID=group).push()
    # adaptive next hop: up ports, their depth reports mirrored to the loopback port
    for port, idx, mac in eg_up_entries(uplinks, cfg["routes"]):
        p4.Egress.eg_up.add_with_set_up(egress_port=port, idx=idx, dmac=mac)
    if uplinks:
        bfrt.port.port.add(DEV_PORT=QPROBE_PORT, SPEED="BF_SPEED_100G", FEC="BF_FEC_TYP_NONE",
                           LOOPBACK_MODE="BF_LPBK_MAC_NEAR", PORT_ENABLE=True)
        bfrt.mirror.cfg.entry_with_normal(sid=QPROBE_SESSION, direction="EGRESS", session_enable=True,
                                          ucast_egress_port=QPROBE_PORT, ucast_egress_port_valid=True,
                                          max_pkt_len=64).push()
    # adaptive timeout (a program built with -DCANARY_ADAPTIVE_TIMEOUT): the
    # samples' loopback port and ingress mirror session, Q's start value
    if cfg.get("adaptive_timeout"):
        bfrt.port.port.add(DEV_PORT=ATO_PORT, SPEED="BF_SPEED_100G", FEC="BF_FEC_TYP_NONE",
                           LOOPBACK_MODE="BF_LPBK_MAC_NEAR", PORT_ENABLE=True)
        bfrt.mirror.cfg.entry_with_normal(sid=ATO_SESSION, direction="INGRESS", session_enable=True,
                                          ucast_egress_port=ATO_PORT, ucast_egress_port_valid=True,
                                          max_pkt_len=64).push()
        start = ato_start(cfg.get("timeout_ns", 1000))
        for i in range(ATO_ENTRIES):
            ig.r_ato.mod(REGISTER_INDEX=i, f1=start)
    pre = bfrt.pre
    node = 1
    for mgid, dev_ports in canary_mcast_groups(cfg["ports"]):
        pre.node.entry(multicast_node_id=node, multicast_rid=1, multicast_lag_id=[],
                       dev_port=dev_ports).push()
        pre.mgid.entry(mgid=mgid, multicast_node_id=[node], multicast_node_l1_xid_valid=[False],
                       multicast_node_l1_xid=[0]).push()
        node += 1
    pg = pktgen_config(cfg.get("timeout_ns", 1000), cfg.get("tick_ns", 1))
    bfrt.tf1.pktgen.app_cfg.entry_with_trigger_timer_periodic(
        app_id=pg["app_id"], timer_nanosec=pg["timer_nanosec"], app_enable=True,
        pkt_len=64, pkt_buffer_offset=0, pipe_local_source_port=PKTGEN_PORT,
        increment_source_port=False, batch_count_cfg=pg["batch_count_cfg"],
        packets_per_batch_cfg=pg["packets_per_batch_cfg"], ibg=pg["ibg"], ibg_jitter=0,
        ipg=pg["ipg"], ipg_jitter=0, batch_counter=0, pkt_counter=0, trigger_counter=0).push()


if __name__ == "__main__" and "bfrt" in globals():  # pragma: no cover
    with open(os.environ.get("CANARY_CONFIG", "canary.json")) as f:
        setup(globals()["bfrt"], json.load(f))
