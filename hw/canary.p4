/* SPDX-License-Identifier: MIT */
/*
 * hw/canary.p4 - the Canary switch (paper sec. 3.6 and 4) for Tofino 1, TNA.
 *
 * Same behaviour and frame format as the emulator's switch (emu/switch/canary_sw.c,
 * libhost/wire.h): Ethernet, EtherType 0x88B5, the 19-byte Canary header in the
 * paper's field order, 32 x bit<32> elements (one pass, the paper's
 * prototype). IPv4 and Canary destinations are forwarded by LPM with ECMP
 * through an action selector, and moved to the least-loaded up port when
 * the chosen one is loaded (adaptive next hop, below).
 *
 * Descriptor registers, indexed by a CRC16 hash of id (N_DESC = 32768), each
 * read or written at most once per packet (one stateful ALU each):
 *   r_id        a pair: the block holding the slot (0: free), and the
 *               block last broadcast from it (for a BCAST marked again:
 *               children bit 1, which goes down the same ports once more)
 *   r_tstate    0 free, TS_FLUSHED flushed, else the first arrival time
 *               (the timeout and the flushed state in one register); its
 *               output is what the counter and the elements do (elem_op)
 *   r_leader, r_hosts (and the block's run id), r_children (ports 0..31)
 *   r_counter   contributions; CNT_DONE once the root sent the result
 *   r_e00..r_e31 the partial sums
 * 6 + 32 + the ECMP selector + 3 for the adaptive next hop = 42 stateful
 * ALUs of 48 (39 with -DCANARY_NO_ADAPTIVE, the paper's prototype figure),
 * what the emulator's tofino1 model reports for this configuration with
 * --routing adaptive (ecmp) (emu/switch/tofino.c).
 * Dependencies, one stage each (bf-p4c places the program in 12 of the 12
 * stages, 11 without the adaptive part; hw/README.md has the table):
 *   slot hash, r_id -> r_tstate, r_leader, r_hosts, r_children
 *   -> r_counter, the 32 elements and the route's selector (4 per stage)
 * Elements: one table per element keyed by elem_op (one logical table and
 * one stateful ALU each, so four fit a stage): ADD adds and returns the new
 * sums (the root's last contribution sends them), READ returns them (a timer
 * flush sends them), CLEAR zeroes them when a broadcast frees the
 * descriptor, so a new block starts from zero. A broadcast keeps the
 * children (read, not cleared) for a broadcast marked again; the first
 * REDUCE of the next block in the slot sets them instead of adding to them.
 * Timeouts: the packet generator's periodic app sends one clock packet per
 * tick; packet i of a batch checks slot i (packet_id), so with a batch of
 * N_DESC packets and an inter-packet gap g the table is swept every
 * N_DESC x g: a descriptor flushes between timeout and timeout + N_DESC x g
 * (32768 x 1 ns = 32.8 us; the same bound as the emulator's --timer pktgen).
 *
 * Adaptive timeout (the emulator's --timeout adaptive; off unless
 * -DCANARY_ADAPTIVE_TIMEOUT): r_ato holds Q - ATO_FLOOR_NS per allreduce
 * (the id's tenant byte) and role (whether the block's leader hangs off
 * this switch: leader_local, stage 0). Every Canary frame reads it in
 * stage 1 beside r_id, adding ato_base: a REDUCE gets now + Q - floor,
 * which r_tstate stores instead of the first arrival, and the clock
 * packet flushes once now - stored >= floor; a BCAST gets Q itself. A
 * straggler (tstate_reduce returns NONE) and a BCAST that frees a
 * descriptor each mirror a 2-byte sample (tenant, role, up or down) to
 * ATO_PORT, a second port in loopback; back in ingress the sample steps
 * r_ato (up: +ATO_UP_NS up to the ceiling, down: -ATO_DOWN_NS down to the
 * floor) and is dropped. The hosts' hint: that BCAST also leaves with this
 * switch's Q (before the step down) added to its switch field, saturating,
 * at most the ceiling; the hosts size their window for the sum along their
 * branch. One more stateful ALU, what the tofino1 model counts for
 * --timeout adaptive. Compiled (bf-p4c 9.13.4 + bfas) with
 * -DCANARY_NO_ADAPTIVE: 40 stateful ALUs in 12 of 12 stages. With the
 * adaptive next hop (43) bf-p4c needs 15 stages: it does not fit Tofino 1
 * (hw/README.md).
 */
#include <core.p4>
#include <tna.p4>

#define N_DESC 32768
#define TIMEOUT_NS 1000

/*
 * Adaptive next hop (the emulator's --routing adaptive, the default):
 * compiled in unless -DCANARY_NO_ADAPTIVE. Egress reports the dequeue
 * depth of every up port (in units of 8 cells of 80 B) to ingress through
 * an egress-to-egress mirror copy looped back by QPROBE_PORT (a port in
 * loopback mode), whenever it changed; ingress keeps the depth per up port
 * and the least-loaded up port. A frame routed to an up port whose depth is
 * above ADAPT_THRESH goes to the least-loaded up port instead.
 */
#define QPROBE_PORT 64
#define QPROBE_SESSION 1
#define ADAPT_THRESH 102        /* 50 % of 128 KiB in units of 8 x 80 B */

#ifdef CANARY_ADAPTIVE_TIMEOUT
/*
 * The emulator's defaults (emu/switch/canary_sw.h EMU_ATO_*): Q in
 * [200 ns, 8 us], +128 ns per straggler, -32 ns per completed block,
 * starting at TIMEOUT_NS. r_ato keeps Q - floor, so the floor is a
 * saturating subtract to 0. Every step and start value is a multiple of 4 ns:
 * now has bit 1 set (below), so the stored now + Q - floor keeps it and is
 * never 0 (free) or TS_FLUSHED.
 */
#define ATO_FLOOR_NS 200
#define ATO_SPAN_NS 7800        /* ceiling - floor */
#define ATO_UP_NS 128
#define ATO_DOWN_NS 32
#define ATO_PORT 66             /* a port in loopback: the samples come back into ingress */
#define ATO_SESSION 2
#define ATO_MIRROR 1            /* ingress mirror type of a sample */
#endif

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_CANARY = 0x88B5;

const bit<4> OP_REDUCE = 1;
const bit<4> OP_BCAST = 2;
const bit<4> OP_RESTORE = 3;

const bit<32> TS_FLUSHED = 1;
/*
 * r_id's answers. A dual-word stateful ALU of Tofino 1 can output a stored
 * word or its predicate, not a constant chosen by a condition: so r_id's
 * actions return the predicate, one-hot over the outcome of its two
 * comparisons, bit (cmplo + 2 x cmphi).
 * REDUCE: cmplo = (lo == 0), cmphi = (lo == id); id is never 0.
 */
const bit<4> ID_HELD = 1;       /* neither: another block holds the slot, a collision */
const bit<4> ID_NEW = 2;        /* the slot was free (or broadcast): taken */
const bit<4> ID_SAME = 4;       /* this block holds it */
/* BCAST: cmplo = (lo == id), cmphi = (hi == again_id: the id if marked again, else 0) */
const bit<4> ID_NONE = 1;       /* no descriptor: dropped */
const bit<4> ID_FIRST = 2;      /* the broadcast: slot freed, ports kept */
const bit<4> ID_AGAIN = 4;      /* marked again, the slot's last broadcast: its ports once more */
const bit<4> ID_BOTH = 8;       /* both: an unmarked BCAST of the slot's block (hi is 0 while lo is set): as ID_FIRST */
const bit<16> CNT_DONE = 0x8000;



const bit<2> ELEM_NONE = 0;
const bit<2> ELEM_ADD = 1;
const bit<2> ELEM_READ = 2;
const bit<2> ELEM_CLEAR = 3;

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

/* libhost/wire.h (struct emu_canary_hdr), the paper's field order; 19 bytes */
header canary_h {
    bit<32> dst;         /* IPv4 address of the block's leader */
    bit<32> id;          /* tenant (8) | sequence (24) */
    bit<16> counter;     /* host contributions in this packet */
    bit<16> hosts;       /* hosts in the reduction */
    bit<32> children;    /* collision: ingress port; restoration: port bitmap */
    bit<16> switch_addr; /* switch that saw the collision */
    bit<1>  bypass;
    bit<1>  multicast;
    bit<2>  run;         /* the run id, modulo 4 (wire.h) */
    bit<4>  opcode;
}

header data_h {
    bit<32> e00;
    bit<32> e01;
    bit<32> e02;
    bit<32> e03;
    bit<32> e04;
    bit<32> e05;
    bit<32> e06;
    bit<32> e07;
    bit<32> e08;
    bit<32> e09;
    bit<32> e10;
    bit<32> e11;
    bit<32> e12;
    bit<32> e13;
    bit<32> e14;
    bit<32> e15;
    bit<32> e16;
    bit<32> e17;
    bit<32> e18;
    bit<32> e19;
    bit<32> e20;
    bit<32> e21;
    bit<32> e22;
    bit<32> e23;
    bit<32> e24;
    bit<32> e25;
    bit<32> e26;
    bit<32> e27;
    bit<32> e28;
    bit<32> e29;
    bit<32> e30;
    bit<32> e31;
}

header ipv4_h {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

/* egress -> ingress: the queue depth of an up port (E2E mirror header, looped back) */
header qprobe_h {
    bit<16> port;
    bit<16> depth;
    bit<8>  idx;
}

/* r_id: the block holding a descriptor's slot (0: free) and the block last broadcast from it */
struct id_pair_t {
    bit<32> lo;
    bit<32> hi;
}

struct best_t {
    bit<16> depth;
    bit<16> port;
}

#ifdef CANARY_ADAPTIVE_TIMEOUT
/* ingress -> ingress through ATO_PORT: step r_ato of (tenant, root) up or down */
header ato_h {
    bit<8>  tenant;
    bit<1>  root;
    bit<1>  up;          /* 1: a straggler, 0: a completed block */
    bit<6>  pad;
}
#endif

/* ingress -> egress: the children bitmap of a multicast */
header bridge_h {
    bit<32> children;
}

struct headers_t {
    qprobe_h qprobe;
#ifdef CANARY_ADAPTIVE_TIMEOUT
    ato_h ato;
#endif
    bridge_h bridge;
    pktgen_timer_header_t timer;
    ethernet_h ethernet;
    canary_h canary;
    data_h data;
    ipv4_h ipv4;
}

struct ig_md_t {
    bit<15> slot;
    bit<32> onehot;
    bit<32> old_id;
    bit<4>  id_res;
    bit<32> again_id;    /* a BCAST marked again: its id, else 0 (set by the parser) */
    bit<1>  unreach;     /* no route */
    bit<16> cnt;
    bit<16> need;        /* the root is done when old_cnt >= need */
    bit<1>  is_root;
    bit<1>  is_timer;
    bit<2>  elem_op;     /* what the counter and the elements do: r_tstate's output */
    bit<32> children;
    bit<32> route_ip;
    bit<32> flow;        /* the selector's hash input */
    bit<1>  complete;    /* the root's last contribution */
    bit<32> now;         /* ns, never 0 or TS_FLUSHED */
    bit<16> hosts;
    bit<2>  desc_run;    /* r_hosts' run: a flushed descriptor's */
    bit<2>  run;         /* t_run: the run of this frame's tenant */
    bit<1>  run_check;   /* ...if the control plane set one */
    bit<16> this_switch;
    bit<1>  is_up;       /* routed to an up port */
    bit<8>  up_idx;
    bit<1>  over;        /* that port's reported depth is above ADAPT_THRESH */
#ifdef CANARY_ADAPTIVE_TIMEOUT
    bit<8>  ato_tenant;
    bit<32> deadline;    /* r_ato's read: a REDUCE now + Q - floor of its tenant and role, other frames Q */
    bit<32> ato_base;    /* r_ato's read adds it: a REDUCE now, else the floor */
    bit<1>  hinted;      /* this BCAST's switch field got the hint */
    bit<1>  ato_up;      /* the sample: a straggler (1) or a completed block (0) */
    MirrorId_t ato_sess;
#endif
}

parser IgParser(packet_in pkt, out headers_t hdr, out ig_md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        md.slot = 0;
        md.onehot = 0;
        md.old_id = 0;
        md.id_res = 0;
        md.again_id = 0;
        md.unreach = 0;
        md.cnt = 0;
        md.need = 0;
        md.is_root = 0;
        md.is_timer = 0;
        md.elem_op = ELEM_NONE;
        md.children = 0;
        md.route_ip = 0;
        md.flow = 0;
        md.complete = 0;
        md.now = 0;
        md.hosts = 0;
        md.desc_run = 0;
        md.run = 0;
        md.run_check = 0;
        md.this_switch = 0;
        md.is_up = 0;
        md.up_idx = 0;
        md.over = 0;
#ifdef CANARY_ADAPTIVE_TIMEOUT
        md.ato_tenant = 0;
        md.deadline = 0;
        md.ato_base = 0;
        md.hinted = 0;
        md.ato_up = 0;
        md.ato_sess = 0;
#endif
        transition select(ig_intr_md.ingress_port) {
            68: parse_timer;          /* pipe 0 packet generator */
            QPROBE_PORT: parse_qprobe;
#ifdef CANARY_ADAPTIVE_TIMEOUT
            ATO_PORT: parse_ato;
#endif
            default: parse_ethernet;
        }
    }
#ifdef CANARY_ADAPTIVE_TIMEOUT
    state parse_ato {
        pkt.extract(hdr.ato);
        transition accept;
    }
#endif
    state parse_qprobe {
        pkt.extract(hdr.qprobe);
        transition accept;
    }
    state parse_timer {
        pkt.extract(hdr.timer);
        md.is_timer = 1;
        transition accept;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_CANARY: parse_canary;
            ETHERTYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_canary {
        pkt.extract(hdr.canary);
#ifdef CANARY_ADAPTIVE_TIMEOUT
        md.ato_tenant = hdr.canary.id[31:24];
#endif
        transition select(hdr.canary.opcode, hdr.canary.children[1:1]) {
            (OP_BCAST, 1): parse_again;
            (OP_REDUCE, _): parse_data;
            (OP_BCAST, _): parse_data;
            (OP_RESTORE, _): parse_data;
            default: accept;
        }
    }
    state parse_again {
        /* a BCAST marked again (EMU_CANARY_BCAST_AGAIN): r_id's id_bcast compares hi with its id */
        md.again_id = hdr.canary.id;
        transition parse_data;
    }
    state parse_data {
        pkt.extract(hdr.data);
        transition accept;
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control Ingress(inout headers_t hdr, inout ig_md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Hash<bit<15>>(HashAlgorithm_t.CRC16) slot_hash;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) sel_hash;
    ActionProfile(4096) ecmp_members;
    ActionSelector(ecmp_members, sel_hash, SelectorMode_t.FAIR, 64, 1024) ecmp_sel;

    /* ---- tables filled by the control plane ---- */
    action set_onehot(bit<32> bit_) { md.onehot = bit_; }
    table port_onehot {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { set_onehot; NoAction; }
        size = 64;
        default_action = NoAction();
    }

#ifdef CANARY_ADAPTIVE_TIMEOUT
    /* ---- r_ato: Q - floor per (tenant, root); stage 1, indexed by the tenant and leader_local's role ---- */
    Register<bit<32>, bit<9>>(512, TIMEOUT_NS - ATO_FLOOR_NS) r_ato;
    /* a REDUCE: now + Q - floor (its deadline less the floor); other frames: Q (ato_base the floor) */
    RegisterAction<bit<32>, bit<9>, bit<32>>(r_ato) ato_read = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + md.ato_base; }
    };
    RegisterAction<bit<32>, bit<9>, bit<32>>(r_ato) ato_step_up = {      /* min(Q + up, ceiling) */
        void apply(inout bit<32> v) {
            if (v < ATO_SPAN_NS - ATO_UP_NS) { v = v + ATO_UP_NS; }
            else { v = ATO_SPAN_NS; }
        }
    };
    RegisterAction<bit<32>, bit<9>, bit<32>>(r_ato) ato_step_down = {    /* max(Q - down, floor) */
        void apply(inout bit<32> v) { v = v |-| ATO_DOWN_NS; }    /* saturating: one constant */
    };

#endif
    /*
     * The run each tenant's hosts are in (canary_cp.py set_run): a Canary
     * frame of the tenant with another run id is left over from an earlier
     * run, or replayed, and is dropped before it touches a descriptor.
     * A tenant without an entry is not checked (its hosts still drop such
     * frames: libhost counts them).
     */
    action set_run(bit<2> run) { md.run = run; md.run_check = 1; }
    table t_run {
        key = { hdr.canary.id[31:24] : exact @name("tenant"); }
        actions = { set_run; NoAction; }
        size = 256;
        default_action = NoAction();
    }

    action set_root() { md.is_root = 1; }
    table leader_local {          /* leaders hanging off this switch */
        key = { hdr.canary.dst : exact; }
        actions = { set_root; NoAction; }
        size = 256;
        default_action = NoAction();
    }

    /*
     * Routing, IPv4 and Canary destinations alike: LPM on the destination,
     * each entry an ECMP group of an action selector (up to 64 next hops,
     * 1024 groups); the selector hashes md.flow: the block id for Canary
     * frames (every frame of a block takes the same path), the addresses
     * for IPv4.
     */
    action fwd(PortId_t port, bit<48> dmac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
    }
    action fwd_up(PortId_t port, bit<48> dmac, bit<8> idx) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
        md.is_up = 1;
        md.up_idx = idx;
    }
    action unreachable() { md.unreach = 1; }
    table route {
        key = { md.route_ip : lpm; md.flow : selector; }
        actions = { fwd; fwd_up; unreachable; }
        implementation = ecmp_sel;
        size = 4096;
        default_action = unreachable();
    }

#ifndef CANARY_NO_ADAPTIVE
    /* ---- adaptive next hop: depth per up port, the least-loaded one ---- */
    Register<bit<16>, bit<8>>(256, 0) r_qdepth;
    RegisterAction<bit<16>, bit<8>, bit<16>>(r_qdepth) qdepth_set = {
        void apply(inout bit<16> v) { v = hdr.qprobe.depth; }
    };
    RegisterAction<bit<16>, bit<8>, bit<1>>(r_qdepth) qdepth_over = {    /* 1: above the threshold */
        void apply(inout bit<16> v, out bit<1> rv) {
            if (v > ADAPT_THRESH) { rv = 1; }
            else { rv = 0; }
        }
    };
    Register<best_t, bit<1>>(1, { 0xffff, 0 }) r_best;
    RegisterAction<best_t, bit<1>, bit<16>>(r_best) best_update = {    /* the reporting port, if least loaded */
        void apply(inout best_t v) {
            if (v.port == hdr.qprobe.port || hdr.qprobe.depth < v.depth) {
                v.depth = hdr.qprobe.depth;
                v.port = hdr.qprobe.port;
            }
        }
    };
    RegisterAction<best_t, bit<1>, bit<16>>(r_best) best_read = {
        void apply(inout best_t v, out bit<16> rv) { rv = v.port; }
    };
#endif

    action set_switch(bit<16> addr) { md.this_switch = addr; }
    table switch_addr {
        actions = { set_switch; }
        default_action = set_switch(0);
        size = 1;
    }

    /* ---- r_id: {lo: the block holding the slot (0: free), hi: the block last broadcast from it} ---- */
    Register<id_pair_t, bit<15>>(N_DESC, { 0, 0 }) r_id;
    RegisterAction<id_pair_t, bit<15>, bit<4>>(r_id) id_reduce = {    /* ID_NEW, ID_SAME or ID_HELD */
        void apply(inout id_pair_t v, out bit<4> rv) {
            rv = this.predicate(v.lo == 0, v.lo == hdr.canary.id);
            if (v.lo == 0) { v.lo = hdr.canary.id; v.hi = 0; }
        }
    };
    /*
     * A BCAST: lo == id frees the slot (ID_FIRST if marked again, ID_BOTH
     * if not: hi == 0 then);
     * else hi == again_id (the id if marked again, else 0) goes down the
     * first's ports once more (ID_AGAIN, which the caller takes only when
     * marked: unmarked, hi == 0 matches a slot never broadcast, and the
     * write of 0 to it changes nothing). One action for both, as
     * bf-p4c cannot place two of r_id's actions chosen by a header bit.
     */
    RegisterAction<id_pair_t, bit<15>, bit<4>>(r_id) id_bcast = {     /* ID_FIRST, ID_BOTH, ID_AGAIN or ID_NONE */
        void apply(inout id_pair_t v, out bit<4> rv) {
            rv = this.predicate(v.lo == hdr.canary.id, v.hi == md.again_id);
            if (v.lo == hdr.canary.id) { v.lo = 0; v.hi = hdr.canary.id; }
            else if (v.hi == md.again_id) { v.hi = 0; }
        }
    };
    RegisterAction<id_pair_t, bit<15>, bit<32>>(r_id) id_read = {
        void apply(inout id_pair_t v, out bit<32> rv) { rv = v.lo; }
    };

    /* ---- r_tstate: first arrival, or flushed; returns the element operation ---- */
    Register<bit<32>, bit<15>>(N_DESC, 0) r_tstate;
#ifdef CANARY_ADAPTIVE_TIMEOUT
    /*
     * now + Q - floor instead of the first arrival: the deadline less the
     * floor, as r_ato's read returned it (r_tstate's two PHV inputs:
     * md.deadline and md.now).
     */
    RegisterAction<bit<32>, bit<15>, bit<2>>(r_tstate) tstate_reduce = {    /* ADD; NONE: straggler */
        void apply(inout bit<32> v, out bit<2> rv) {
            if (v == 0) { v = md.deadline; rv = ELEM_ADD; }
            else if (v == TS_FLUSHED) { rv = ELEM_NONE; }
            else { rv = ELEM_ADD; }
        }
    };
    RegisterAction<bit<32>, bit<15>, bit<2>>(r_tstate) tstate_timer = {    /* open, deadline passed: READ */
        void apply(inout bit<32> v, out bit<2> rv) {
            /* now - (v + floor) >= 0, in wrapping 32-bit time */
            if (v != TS_FLUSHED && (int<32>)(md.now - v) >= ATO_FLOOR_NS) { v = TS_FLUSHED; rv = ELEM_READ; }
            else { rv = ELEM_NONE; }
        }
    };
#else
    RegisterAction<bit<32>, bit<15>, bit<2>>(r_tstate) tstate_reduce = {    /* ADD; NONE: straggler */
        void apply(inout bit<32> v, out bit<2> rv) {
            if (v == 0) { v = md.now; rv = ELEM_ADD; }
            else if (v == TS_FLUSHED) { rv = ELEM_NONE; }
            else { rv = ELEM_ADD; }
        }
    };
    RegisterAction<bit<32>, bit<15>, bit<2>>(r_tstate) tstate_timer = {    /* open and expired: flush, READ */
        void apply(inout bit<32> v, out bit<2> rv) {
            if (v != TS_FLUSHED && md.now - v >= TIMEOUT_NS) { v = TS_FLUSHED; rv = ELEM_READ; }
            else { rv = ELEM_NONE; }
        }
    };
#endif
    RegisterAction<bit<32>, bit<15>, bit<2>>(r_tstate) tstate_clear = {     /* freed: CLEAR */
        void apply(inout bit<32> v, out bit<2> rv) { v = 0; rv = ELEM_CLEAR; }
    };

    /* ---- r_leader, r_hosts ---- */
    Register<bit<32>, bit<15>>(N_DESC, 0) r_leader;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_leader) leader_set = {
        void apply(inout bit<32> v) { v = hdr.canary.dst; }
    };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_leader) leader_read = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };

    /* the hosts and, above them, the block's run (a flushed descriptor's frame carries it) */
    Register<bit<32>, bit<15>>(N_DESC, 0) r_hosts;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_hosts) hosts_set = {
        void apply(inout bit<32> v) { v = (bit<32>)(hdr.canary.run ++ hdr.canary.hosts); }
    };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_hosts) hosts_read = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };

    /* ---- r_children ---- */
    Register<bit<32>, bit<15>>(N_DESC, 0) r_children;
    /*
     * One call per branch, each a logical table of r_children's stage: a
     * REDUCE adds its port (the first of a new block sets it: the slot's
     * last block may have left its ports); a BCAST reads them, and keeps
     * them for a broadcast again (the next block's first REDUCE sets them).
     */
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_children) children_add = {
        void apply(inout bit<32> v) {
            if (md.id_res == ID_NEW) { v = md.onehot; }
            else { v = v | md.onehot; }
        }
    };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_children) children_read = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };

    /* ---- r_counter ---- */
    Register<bit<16>, bit<15>>(N_DESC, 0) r_counter;
    RegisterAction<bit<16>, bit<15>, bit<16>>(r_counter) counter_add = {
        void apply(inout bit<16> v) { v = v + hdr.canary.counter; }
    };
    /*
     * At the root: returns CNT_DONE exactly when this contribution completes
     * the block (every host but the leader is in), more for a late copy
     * after that (added into the spent sums and dropped: the leader already
     * has the result), less while the block fills up.
     */
    RegisterAction<bit<16>, bit<15>, bit<16>>(r_counter) counter_add_root = {
        void apply(inout bit<16> v, out bit<16> rv) {
            if (v < md.need) { v = v + hdr.canary.counter; }
            else if (v < CNT_DONE) { v = CNT_DONE; }
            else { v = v + hdr.canary.counter; }
            rv = v;
        }
    };
    RegisterAction<bit<16>, bit<15>, bit<16>>(r_counter) counter_take = {
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; v = 0; }
    };


    action c_add() { counter_add.execute(md.slot); }
    action c_add_root() { md.cnt = counter_add_root.execute(md.slot); }
    action c_read() { hdr.canary.counter = counter_take.execute(md.slot); }
    action c_clear() { counter_take.execute(md.slot); }
    table t_counter {
        key = { md.elem_op : exact; md.is_root : exact; }
        actions = { c_add; c_add_root; c_read; c_clear; NoAction; }
        const entries = {
            (ELEM_ADD, 0) : c_add();
            (ELEM_ADD, 1) : c_add_root();
            (ELEM_READ, 0) : c_read();
            (ELEM_READ, 1) : c_read();
            (ELEM_CLEAR, 0) : c_clear();
            (ELEM_CLEAR, 1) : c_clear();
        }
        size = 8;
        default_action = NoAction();
    }

    /* ---- the elements ---- */
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e00;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e00) add_e00 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e00; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e00) read_e00 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e00) clear_e00 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e01;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e01) add_e01 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e01; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e01) read_e01 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e01) clear_e01 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e02;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e02) add_e02 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e02; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e02) read_e02 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e02) clear_e02 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e03;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e03) add_e03 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e03; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e03) read_e03 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e03) clear_e03 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e04;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e04) add_e04 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e04; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e04) read_e04 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e04) clear_e04 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e05;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e05) add_e05 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e05; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e05) read_e05 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e05) clear_e05 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e06;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e06) add_e06 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e06; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e06) read_e06 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e06) clear_e06 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e07;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e07) add_e07 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e07; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e07) read_e07 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e07) clear_e07 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e08;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e08) add_e08 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e08; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e08) read_e08 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e08) clear_e08 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e09;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e09) add_e09 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e09; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e09) read_e09 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e09) clear_e09 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e10;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e10) add_e10 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e10; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e10) read_e10 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e10) clear_e10 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e11;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e11) add_e11 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e11; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e11) read_e11 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e11) clear_e11 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e12;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e12) add_e12 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e12; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e12) read_e12 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e12) clear_e12 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e13;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e13) add_e13 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e13; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e13) read_e13 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e13) clear_e13 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e14;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e14) add_e14 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e14; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e14) read_e14 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e14) clear_e14 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e15;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e15) add_e15 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e15; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e15) read_e15 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e15) clear_e15 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e16;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e16) add_e16 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e16; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e16) read_e16 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e16) clear_e16 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e17;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e17) add_e17 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e17; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e17) read_e17 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e17) clear_e17 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e18;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e18) add_e18 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e18; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e18) read_e18 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e18) clear_e18 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e19;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e19) add_e19 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e19; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e19) read_e19 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e19) clear_e19 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e20;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e20) add_e20 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e20; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e20) read_e20 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e20) clear_e20 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e21;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e21) add_e21 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e21; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e21) read_e21 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e21) clear_e21 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e22;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e22) add_e22 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e22; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e22) read_e22 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e22) clear_e22 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e23;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e23) add_e23 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e23; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e23) read_e23 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e23) clear_e23 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e24;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e24) add_e24 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e24; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e24) read_e24 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e24) clear_e24 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e25;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e25) add_e25 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e25; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e25) read_e25 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e25) clear_e25 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e26;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e26) add_e26 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e26; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e26) read_e26 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e26) clear_e26 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e27;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e27) add_e27 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e27; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e27) read_e27 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e27) clear_e27 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e28;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e28) add_e28 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e28; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e28) read_e28 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e28) clear_e28 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e29;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e29) add_e29 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e29; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e29) read_e29 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e29) clear_e29 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e30;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e30) add_e30 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e30; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e30) read_e30 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e30) clear_e30 = {
        void apply(inout bit<32> v) { v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e31;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e31) add_e31 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e31; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e31) read_e31 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e31) clear_e31 = {
        void apply(inout bit<32> v) { v = 0; } };


    /* one table per element: the operation is chosen by md.elem_op, one stateful ALU each */
    action a_add_e00() { hdr.data.e00 = add_e00.execute(md.slot); }
    action a_read_e00() { hdr.data.e00 = read_e00.execute(md.slot); }
    action a_clear_e00() { clear_e00.execute(md.slot); }
    table t_e00 {
        key = { md.elem_op : exact; }
        actions = { a_add_e00; a_read_e00; a_clear_e00; NoAction; }
        const entries = { ELEM_ADD : a_add_e00(); ELEM_READ : a_read_e00(); ELEM_CLEAR : a_clear_e00(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e01() { hdr.data.e01 = add_e01.execute(md.slot); }
    action a_read_e01() { hdr.data.e01 = read_e01.execute(md.slot); }
    action a_clear_e01() { clear_e01.execute(md.slot); }
    table t_e01 {
        key = { md.elem_op : exact; }
        actions = { a_add_e01; a_read_e01; a_clear_e01; NoAction; }
        const entries = { ELEM_ADD : a_add_e01(); ELEM_READ : a_read_e01(); ELEM_CLEAR : a_clear_e01(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e02() { hdr.data.e02 = add_e02.execute(md.slot); }
    action a_read_e02() { hdr.data.e02 = read_e02.execute(md.slot); }
    action a_clear_e02() { clear_e02.execute(md.slot); }
    table t_e02 {
        key = { md.elem_op : exact; }
        actions = { a_add_e02; a_read_e02; a_clear_e02; NoAction; }
        const entries = { ELEM_ADD : a_add_e02(); ELEM_READ : a_read_e02(); ELEM_CLEAR : a_clear_e02(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e03() { hdr.data.e03 = add_e03.execute(md.slot); }
    action a_read_e03() { hdr.data.e03 = read_e03.execute(md.slot); }
    action a_clear_e03() { clear_e03.execute(md.slot); }
    table t_e03 {
        key = { md.elem_op : exact; }
        actions = { a_add_e03; a_read_e03; a_clear_e03; NoAction; }
        const entries = { ELEM_ADD : a_add_e03(); ELEM_READ : a_read_e03(); ELEM_CLEAR : a_clear_e03(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e04() { hdr.data.e04 = add_e04.execute(md.slot); }
    action a_read_e04() { hdr.data.e04 = read_e04.execute(md.slot); }
    action a_clear_e04() { clear_e04.execute(md.slot); }
    table t_e04 {
        key = { md.elem_op : exact; }
        actions = { a_add_e04; a_read_e04; a_clear_e04; NoAction; }
        const entries = { ELEM_ADD : a_add_e04(); ELEM_READ : a_read_e04(); ELEM_CLEAR : a_clear_e04(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e05() { hdr.data.e05 = add_e05.execute(md.slot); }
    action a_read_e05() { hdr.data.e05 = read_e05.execute(md.slot); }
    action a_clear_e05() { clear_e05.execute(md.slot); }
    table t_e05 {
        key = { md.elem_op : exact; }
        actions = { a_add_e05; a_read_e05; a_clear_e05; NoAction; }
        const entries = { ELEM_ADD : a_add_e05(); ELEM_READ : a_read_e05(); ELEM_CLEAR : a_clear_e05(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e06() { hdr.data.e06 = add_e06.execute(md.slot); }
    action a_read_e06() { hdr.data.e06 = read_e06.execute(md.slot); }
    action a_clear_e06() { clear_e06.execute(md.slot); }
    table t_e06 {
        key = { md.elem_op : exact; }
        actions = { a_add_e06; a_read_e06; a_clear_e06; NoAction; }
        const entries = { ELEM_ADD : a_add_e06(); ELEM_READ : a_read_e06(); ELEM_CLEAR : a_clear_e06(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e07() { hdr.data.e07 = add_e07.execute(md.slot); }
    action a_read_e07() { hdr.data.e07 = read_e07.execute(md.slot); }
    action a_clear_e07() { clear_e07.execute(md.slot); }
    table t_e07 {
        key = { md.elem_op : exact; }
        actions = { a_add_e07; a_read_e07; a_clear_e07; NoAction; }
        const entries = { ELEM_ADD : a_add_e07(); ELEM_READ : a_read_e07(); ELEM_CLEAR : a_clear_e07(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e08() { hdr.data.e08 = add_e08.execute(md.slot); }
    action a_read_e08() { hdr.data.e08 = read_e08.execute(md.slot); }
    action a_clear_e08() { clear_e08.execute(md.slot); }
    table t_e08 {
        key = { md.elem_op : exact; }
        actions = { a_add_e08; a_read_e08; a_clear_e08; NoAction; }
        const entries = { ELEM_ADD : a_add_e08(); ELEM_READ : a_read_e08(); ELEM_CLEAR : a_clear_e08(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e09() { hdr.data.e09 = add_e09.execute(md.slot); }
    action a_read_e09() { hdr.data.e09 = read_e09.execute(md.slot); }
    action a_clear_e09() { clear_e09.execute(md.slot); }
    table t_e09 {
        key = { md.elem_op : exact; }
        actions = { a_add_e09; a_read_e09; a_clear_e09; NoAction; }
        const entries = { ELEM_ADD : a_add_e09(); ELEM_READ : a_read_e09(); ELEM_CLEAR : a_clear_e09(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e10() { hdr.data.e10 = add_e10.execute(md.slot); }
    action a_read_e10() { hdr.data.e10 = read_e10.execute(md.slot); }
    action a_clear_e10() { clear_e10.execute(md.slot); }
    table t_e10 {
        key = { md.elem_op : exact; }
        actions = { a_add_e10; a_read_e10; a_clear_e10; NoAction; }
        const entries = { ELEM_ADD : a_add_e10(); ELEM_READ : a_read_e10(); ELEM_CLEAR : a_clear_e10(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e11() { hdr.data.e11 = add_e11.execute(md.slot); }
    action a_read_e11() { hdr.data.e11 = read_e11.execute(md.slot); }
    action a_clear_e11() { clear_e11.execute(md.slot); }
    table t_e11 {
        key = { md.elem_op : exact; }
        actions = { a_add_e11; a_read_e11; a_clear_e11; NoAction; }
        const entries = { ELEM_ADD : a_add_e11(); ELEM_READ : a_read_e11(); ELEM_CLEAR : a_clear_e11(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e12() { hdr.data.e12 = add_e12.execute(md.slot); }
    action a_read_e12() { hdr.data.e12 = read_e12.execute(md.slot); }
    action a_clear_e12() { clear_e12.execute(md.slot); }
    table t_e12 {
        key = { md.elem_op : exact; }
        actions = { a_add_e12; a_read_e12; a_clear_e12; NoAction; }
        const entries = { ELEM_ADD : a_add_e12(); ELEM_READ : a_read_e12(); ELEM_CLEAR : a_clear_e12(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e13() { hdr.data.e13 = add_e13.execute(md.slot); }
    action a_read_e13() { hdr.data.e13 = read_e13.execute(md.slot); }
    action a_clear_e13() { clear_e13.execute(md.slot); }
    table t_e13 {
        key = { md.elem_op : exact; }
        actions = { a_add_e13; a_read_e13; a_clear_e13; NoAction; }
        const entries = { ELEM_ADD : a_add_e13(); ELEM_READ : a_read_e13(); ELEM_CLEAR : a_clear_e13(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e14() { hdr.data.e14 = add_e14.execute(md.slot); }
    action a_read_e14() { hdr.data.e14 = read_e14.execute(md.slot); }
    action a_clear_e14() { clear_e14.execute(md.slot); }
    table t_e14 {
        key = { md.elem_op : exact; }
        actions = { a_add_e14; a_read_e14; a_clear_e14; NoAction; }
        const entries = { ELEM_ADD : a_add_e14(); ELEM_READ : a_read_e14(); ELEM_CLEAR : a_clear_e14(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e15() { hdr.data.e15 = add_e15.execute(md.slot); }
    action a_read_e15() { hdr.data.e15 = read_e15.execute(md.slot); }
    action a_clear_e15() { clear_e15.execute(md.slot); }
    table t_e15 {
        key = { md.elem_op : exact; }
        actions = { a_add_e15; a_read_e15; a_clear_e15; NoAction; }
        const entries = { ELEM_ADD : a_add_e15(); ELEM_READ : a_read_e15(); ELEM_CLEAR : a_clear_e15(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e16() { hdr.data.e16 = add_e16.execute(md.slot); }
    action a_read_e16() { hdr.data.e16 = read_e16.execute(md.slot); }
    action a_clear_e16() { clear_e16.execute(md.slot); }
    table t_e16 {
        key = { md.elem_op : exact; }
        actions = { a_add_e16; a_read_e16; a_clear_e16; NoAction; }
        const entries = { ELEM_ADD : a_add_e16(); ELEM_READ : a_read_e16(); ELEM_CLEAR : a_clear_e16(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e17() { hdr.data.e17 = add_e17.execute(md.slot); }
    action a_read_e17() { hdr.data.e17 = read_e17.execute(md.slot); }
    action a_clear_e17() { clear_e17.execute(md.slot); }
    table t_e17 {
        key = { md.elem_op : exact; }
        actions = { a_add_e17; a_read_e17; a_clear_e17; NoAction; }
        const entries = { ELEM_ADD : a_add_e17(); ELEM_READ : a_read_e17(); ELEM_CLEAR : a_clear_e17(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e18() { hdr.data.e18 = add_e18.execute(md.slot); }
    action a_read_e18() { hdr.data.e18 = read_e18.execute(md.slot); }
    action a_clear_e18() { clear_e18.execute(md.slot); }
    table t_e18 {
        key = { md.elem_op : exact; }
        actions = { a_add_e18; a_read_e18; a_clear_e18; NoAction; }
        const entries = { ELEM_ADD : a_add_e18(); ELEM_READ : a_read_e18(); ELEM_CLEAR : a_clear_e18(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e19() { hdr.data.e19 = add_e19.execute(md.slot); }
    action a_read_e19() { hdr.data.e19 = read_e19.execute(md.slot); }
    action a_clear_e19() { clear_e19.execute(md.slot); }
    table t_e19 {
        key = { md.elem_op : exact; }
        actions = { a_add_e19; a_read_e19; a_clear_e19; NoAction; }
        const entries = { ELEM_ADD : a_add_e19(); ELEM_READ : a_read_e19(); ELEM_CLEAR : a_clear_e19(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e20() { hdr.data.e20 = add_e20.execute(md.slot); }
    action a_read_e20() { hdr.data.e20 = read_e20.execute(md.slot); }
    action a_clear_e20() { clear_e20.execute(md.slot); }
    table t_e20 {
        key = { md.elem_op : exact; }
        actions = { a_add_e20; a_read_e20; a_clear_e20; NoAction; }
        const entries = { ELEM_ADD : a_add_e20(); ELEM_READ : a_read_e20(); ELEM_CLEAR : a_clear_e20(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e21() { hdr.data.e21 = add_e21.execute(md.slot); }
    action a_read_e21() { hdr.data.e21 = read_e21.execute(md.slot); }
    action a_clear_e21() { clear_e21.execute(md.slot); }
    table t_e21 {
        key = { md.elem_op : exact; }
        actions = { a_add_e21; a_read_e21; a_clear_e21; NoAction; }
        const entries = { ELEM_ADD : a_add_e21(); ELEM_READ : a_read_e21(); ELEM_CLEAR : a_clear_e21(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e22() { hdr.data.e22 = add_e22.execute(md.slot); }
    action a_read_e22() { hdr.data.e22 = read_e22.execute(md.slot); }
    action a_clear_e22() { clear_e22.execute(md.slot); }
    table t_e22 {
        key = { md.elem_op : exact; }
        actions = { a_add_e22; a_read_e22; a_clear_e22; NoAction; }
        const entries = { ELEM_ADD : a_add_e22(); ELEM_READ : a_read_e22(); ELEM_CLEAR : a_clear_e22(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e23() { hdr.data.e23 = add_e23.execute(md.slot); }
    action a_read_e23() { hdr.data.e23 = read_e23.execute(md.slot); }
    action a_clear_e23() { clear_e23.execute(md.slot); }
    table t_e23 {
        key = { md.elem_op : exact; }
        actions = { a_add_e23; a_read_e23; a_clear_e23; NoAction; }
        const entries = { ELEM_ADD : a_add_e23(); ELEM_READ : a_read_e23(); ELEM_CLEAR : a_clear_e23(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e24() { hdr.data.e24 = add_e24.execute(md.slot); }
    action a_read_e24() { hdr.data.e24 = read_e24.execute(md.slot); }
    action a_clear_e24() { clear_e24.execute(md.slot); }
    table t_e24 {
        key = { md.elem_op : exact; }
        actions = { a_add_e24; a_read_e24; a_clear_e24; NoAction; }
        const entries = { ELEM_ADD : a_add_e24(); ELEM_READ : a_read_e24(); ELEM_CLEAR : a_clear_e24(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e25() { hdr.data.e25 = add_e25.execute(md.slot); }
    action a_read_e25() { hdr.data.e25 = read_e25.execute(md.slot); }
    action a_clear_e25() { clear_e25.execute(md.slot); }
    table t_e25 {
        key = { md.elem_op : exact; }
        actions = { a_add_e25; a_read_e25; a_clear_e25; NoAction; }
        const entries = { ELEM_ADD : a_add_e25(); ELEM_READ : a_read_e25(); ELEM_CLEAR : a_clear_e25(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e26() { hdr.data.e26 = add_e26.execute(md.slot); }
    action a_read_e26() { hdr.data.e26 = read_e26.execute(md.slot); }
    action a_clear_e26() { clear_e26.execute(md.slot); }
    table t_e26 {
        key = { md.elem_op : exact; }
        actions = { a_add_e26; a_read_e26; a_clear_e26; NoAction; }
        const entries = { ELEM_ADD : a_add_e26(); ELEM_READ : a_read_e26(); ELEM_CLEAR : a_clear_e26(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e27() { hdr.data.e27 = add_e27.execute(md.slot); }
    action a_read_e27() { hdr.data.e27 = read_e27.execute(md.slot); }
    action a_clear_e27() { clear_e27.execute(md.slot); }
    table t_e27 {
        key = { md.elem_op : exact; }
        actions = { a_add_e27; a_read_e27; a_clear_e27; NoAction; }
        const entries = { ELEM_ADD : a_add_e27(); ELEM_READ : a_read_e27(); ELEM_CLEAR : a_clear_e27(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e28() { hdr.data.e28 = add_e28.execute(md.slot); }
    action a_read_e28() { hdr.data.e28 = read_e28.execute(md.slot); }
    action a_clear_e28() { clear_e28.execute(md.slot); }
    table t_e28 {
        key = { md.elem_op : exact; }
        actions = { a_add_e28; a_read_e28; a_clear_e28; NoAction; }
        const entries = { ELEM_ADD : a_add_e28(); ELEM_READ : a_read_e28(); ELEM_CLEAR : a_clear_e28(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e29() { hdr.data.e29 = add_e29.execute(md.slot); }
    action a_read_e29() { hdr.data.e29 = read_e29.execute(md.slot); }
    action a_clear_e29() { clear_e29.execute(md.slot); }
    table t_e29 {
        key = { md.elem_op : exact; }
        actions = { a_add_e29; a_read_e29; a_clear_e29; NoAction; }
        const entries = { ELEM_ADD : a_add_e29(); ELEM_READ : a_read_e29(); ELEM_CLEAR : a_clear_e29(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e30() { hdr.data.e30 = add_e30.execute(md.slot); }
    action a_read_e30() { hdr.data.e30 = read_e30.execute(md.slot); }
    action a_clear_e30() { clear_e30.execute(md.slot); }
    table t_e30 {
        key = { md.elem_op : exact; }
        actions = { a_add_e30; a_read_e30; a_clear_e30; NoAction; }
        const entries = { ELEM_ADD : a_add_e30(); ELEM_READ : a_read_e30(); ELEM_CLEAR : a_clear_e30(); }
        size = 4;
        default_action = NoAction();
    }
    action a_add_e31() { hdr.data.e31 = add_e31.execute(md.slot); }
    action a_read_e31() { hdr.data.e31 = read_e31.execute(md.slot); }
    action a_clear_e31() { clear_e31.execute(md.slot); }
    table t_e31 {
        key = { md.elem_op : exact; }
        actions = { a_add_e31; a_read_e31; a_clear_e31; NoAction; }
        const entries = { ELEM_ADD : a_add_e31(); ELEM_READ : a_read_e31(); ELEM_CLEAR : a_clear_e31(); }
        size = 4;
        default_action = NoAction();
    }

    action prepare() {
        md.need = hdr.canary.hosts - hdr.canary.counter;
    }
    action prepare2() {
        md.need = md.need - 1;    /* hosts - counter - 1: a second stage, one operation each */
    }
#ifdef CANARY_ADAPTIVE_TIMEOUT
    /* each its own action (bf-p4c: one operation per field per stage) */
    action ato_cap() {            /* min (a mux bf-p4c selects as minu) */
        hdr.canary.switch_addr = hdr.canary.switch_addr > ATO_FLOOR_NS + ATO_SPAN_NS ?
                                 ATO_FLOOR_NS + ATO_SPAN_NS : hdr.canary.switch_addr;
    }
#endif

    apply {
        /* ns clock, bit 1 forced: 0 means free and 1 flushed in r_tstate */
        md.now = ig_prsr_md.global_tstamp[31:0] | 2;
#ifdef CANARY_ADAPTIVE_TIMEOUT
        if (hdr.canary.isValid() && hdr.canary.opcode == OP_REDUCE) {
            md.ato_base = ig_prsr_md.global_tstamp[31:0] | 2;    /* now, in the same stage */
        } else {
            md.ato_base = ATO_FLOOR_NS;    /* a BCAST reads Q itself, for its hint */
        }
#endif
        prepare();
        prepare2();
        switch_addr.apply();
        if (hdr.canary.isValid()) {
            t_run.apply();
        }
#ifdef CANARY_ADAPTIVE_TIMEOUT
        if (hdr.ato.isValid()) {
            /* a sample back from ATO_PORT: step Q (then dropped: neither Canary nor IPv4) */
            if (hdr.ato.up == 1) {
                ato_step_up.execute(hdr.ato.tenant ++ hdr.ato.root);
            } else {
                ato_step_down.execute(hdr.ato.tenant ++ hdr.ato.root);
            }
        } else if (hdr.canary.isValid()) {
            /* the role, then Q of this tenant and role, of every Canary frame: REDUCE and BCAST need them */
            leader_local.apply();
            md.deadline = ato_read.execute(md.ato_tenant ++ md.is_root);
        }
#endif
        if (md.is_timer == 1) {
            /* a clock packet: check slot packet_id; it becomes that descriptor's REDUCE frame if it flushes */
            md.slot = hdr.timer.packet_id[14:0];
            hdr.timer.setInvalid();
            hdr.ethernet.setValid();
            hdr.canary.setValid();
            hdr.data.setValid();
            md.old_id = id_read.execute(md.slot);
            if (md.old_id != 0) {
                md.elem_op = tstate_timer.execute(md.slot);    /* READ: open and expired */
                md.route_ip = leader_read.execute(md.slot);
                bit<32> hr = hosts_read.execute(md.slot);
                md.hosts = hr[15:0];
                md.desc_run = hr[17:16];
            }
        } else if (hdr.canary.isValid() && md.run_check == 1 && hdr.canary.run != md.run) {
            ig_dprsr_md.drop_ctl = 1;    /* a frame of another run: no descriptor sees it */
        } else if (hdr.canary.isValid() && hdr.canary.bypass == 0 && hdr.canary.opcode == OP_REDUCE) {
            port_onehot.apply();
#ifndef CANARY_ADAPTIVE_TIMEOUT
            leader_local.apply();
#endif
            md.slot = slot_hash.get({ hdr.canary.id });
            md.id_res = id_reduce.execute(md.slot);
            md.route_ip = hdr.canary.dst;
            if (md.id_res == ID_HELD) {
                /* collision: to the leader with this switch and the ingress port */
                hdr.canary.bypass = 1;
                hdr.canary.switch_addr = md.this_switch;
                hdr.canary.children = (bit<32>)ig_intr_md.ingress_port;
            } else {
                /* ADD; NONE if flushed: a straggler, forwarded at once, untouched */
                md.elem_op = tstate_reduce.execute(md.slot);
#ifdef CANARY_ADAPTIVE_TIMEOUT
                if (md.elem_op == ELEM_NONE) {
                    /* a straggler: Q of this tenant and role goes up */
                    ig_dprsr_md.mirror_type = ATO_MIRROR;
                    md.ato_sess = ATO_SESSION;
                    md.ato_up = 1;
                }
#endif
                /* every frame of a block carries the same leader and hosts */
                leader_set.execute(md.slot);
                hosts_set.execute(md.slot);
                children_add.execute(md.slot);
            }
        } else if (hdr.canary.isValid() && hdr.canary.bypass == 0 && hdr.canary.opcode == OP_BCAST) {
            md.slot = slot_hash.get({ hdr.canary.id });
            md.id_res = id_bcast.execute(md.slot);
            /* read whatever the answer: a BCAST without a descriptor is dropped below */
            md.children = children_read.execute(md.slot);
            if (md.id_res == ID_AGAIN && hdr.canary.children[1:1] == 1) {
                /* the leader's broadcast again: down the ports the first took, the slot free for good */
            } else if (md.id_res == ID_FIRST || md.id_res == ID_BOTH) {
                md.elem_op = tstate_clear.execute(md.slot);    /* CLEAR */
#ifdef CANARY_ADAPTIVE_TIMEOUT
                /* a completed block (the BCAST's dst is its leader: leader_local gave the role): down */
                ig_dprsr_md.mirror_type = ATO_MIRROR;
                md.ato_sess = ATO_SESSION;
                md.ato_up = 0;
                /* the hosts' hint: Q (before this step down) added to the switch field, at most the ceiling */
                hdr.canary.switch_addr = hdr.canary.switch_addr |+| md.deadline[15:0];
                md.hinted = 1;    /* capped below, a gateway of its own */
#endif
            } else {
                ig_dprsr_md.drop_ctl = 1;    /* no descriptor: dropped */
            }
        } else if (hdr.canary.isValid() && hdr.canary.bypass == 0 && hdr.canary.opcode == OP_RESTORE &&
                   hdr.canary.switch_addr == md.this_switch) {
            /* restoration: multicast the data to the bitmap it carries, as a broadcast */
            md.children = hdr.canary.children;
            hdr.canary.opcode = OP_BCAST;
            hdr.canary.multicast = 1;
            hdr.canary.children = 0;
            hdr.canary.switch_addr = 0;
        } else if (hdr.canary.isValid()) {
            md.route_ip = hdr.canary.dst;      /* bypass and control frames: routed */
        } else if (hdr.ipv4.isValid()) {
            md.route_ip = hdr.ipv4.dst_addr;
            md.flow = hdr.ipv4.src_addr ^ hdr.ipv4.dst_addr;
        } else {
            ig_dprsr_md.drop_ctl = 1;          /* neither Canary nor IPv4 */
        }

        /*
         * The counter and the 32 elements: ADD (reduce: add, return the new
         * sums), READ (timer flush: return the sums, take the counter),
         * CLEAR (freed by a broadcast: zero, so a new block starts from zero).
         */
#ifdef CANARY_ADAPTIVE_TIMEOUT
        if (md.hinted == 1) {
            ato_cap();    /* the hint: at most the ceiling */
        }
#endif
        t_counter.apply();
        t_e00.apply();
        t_e01.apply();
        t_e02.apply();
        t_e03.apply();
        t_e04.apply();
        t_e05.apply();
        t_e06.apply();
        t_e07.apply();
        t_e08.apply();
        t_e09.apply();
        t_e10.apply();
        t_e11.apply();
        t_e12.apply();
        t_e13.apply();
        t_e14.apply();
        t_e15.apply();
        t_e16.apply();
        t_e17.apply();
        t_e18.apply();
        t_e19.apply();
        t_e20.apply();
        t_e21.apply();
        t_e22.apply();
        t_e23.apply();
        t_e24.apply();
        t_e25.apply();
        t_e26.apply();
        t_e27.apply();
        t_e28.apply();
        t_e29.apply();
        t_e30.apply();
        t_e31.apply();

        if (md.is_timer == 1) {
            /* the flushed descriptor's REDUCE frame toward the leader */
            hdr.ethernet.src_addr = 0;
            hdr.ethernet.ether_type = ETHERTYPE_CANARY;
            hdr.canary.dst = md.route_ip;
            hdr.canary.id = md.old_id;
            hdr.canary.hosts = md.hosts;
            hdr.canary.children = 0;
            hdr.canary.switch_addr = 0;
            hdr.canary.bypass = 0;
            hdr.canary.multicast = 0;
            hdr.canary.run = md.desc_run;
            hdr.canary.opcode = OP_REDUCE;
        }
        if (md.cnt == CNT_DONE) {
            /* every host but the leader is in: the sums go to the leader */
            hdr.canary.counter = hdr.canary.hosts - 1;
        }
        if (md.is_timer == 1) {
            md.flow = md.old_id;               /* the same path for every frame of a block */
        } else if (hdr.canary.isValid()) {
            md.flow = hdr.canary.id;
        }

        /*
         * Multicast to the children bitmap: two shards of 16 ports. Shard 0
         * (ports 0..15) goes to MGID 1, shard 1 (ports 16..31) to MGID 2, at
         * most both in one pass (TNA has mcast_grp_a and mcast_grp_b); the
         * bitmap rides to egress in the bridged header and egress drops the
         * copies for ports that are not children. See hw/README.md for why
         * not 2^(p/s)*s groups.
         */
        if (md.children != 0) {
            hdr.bridge.setValid();
            hdr.bridge.children = md.children;
            if (md.children[15:0] != 0) { ig_tm_md.mcast_grp_a = 1; }
            if (md.children[31:16] != 0) { ig_tm_md.mcast_grp_b = 2; }
        } else {
            /* unicast: every frame that is not multicast */
            route.apply();
        }

#ifndef CANARY_NO_ADAPTIVE
        /* adaptive: a depth report updates the tables; a frame to a loaded up port moves */
        if (hdr.qprobe.isValid()) {
            qdepth_set.execute(hdr.qprobe.idx);
            best_update.execute(0);
        } else if (md.is_up == 1) {
            md.over = qdepth_over.execute(md.up_idx);
            if (md.over == 1) {
                ig_tm_md.ucast_egress_port = (PortId_t)best_read.execute(0);
            }
        }
#endif

        /* dropped: consumed into the descriptor, a clock packet that flushed nothing, no route */
        if (md.is_timer == 1 && md.elem_op != ELEM_READ) {
            ig_dprsr_md.drop_ctl = 1;
        } else if (md.elem_op == ELEM_ADD && md.cnt != CNT_DONE) {
            ig_dprsr_md.drop_ctl = 1;
        } else if (md.unreach == 1) {
            ig_dprsr_md.drop_ctl = 1;
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
#ifdef CANARY_ADAPTIVE_TIMEOUT
    Mirror() ato_mirror;
#endif
    apply {
#ifdef CANARY_ADAPTIVE_TIMEOUT
        if (ig_dprsr_md.mirror_type == ATO_MIRROR) {
            /* the sample: this header, then the frame (the session truncates it) */
            ato_mirror.emit<ato_h>(md.ato_sess, { md.ato_tenant, md.is_root, md.ato_up, 6w0 });
        }
#endif
        pkt.emit(hdr.bridge);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.canary);
        pkt.emit(hdr.data);
        pkt.emit(hdr.ipv4);
    }
}

struct eg_md_t {
    bit<8>  up_idx;
    bit<16> up_port;
    bit<32> depth;
    bit<16> bucket;
    MirrorId_t sess;
}

parser EgParser(packet_in pkt, out headers_t hdr, out eg_md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        md.up_idx = 0;
        md.up_port = 0;
        md.depth = 0;
        md.bucket = 0;
        md.sess = 0;
        transition select(eg_intr_md.egress_port) {
            QPROBE_PORT: parse_qprobe;    /* a depth report on its way back to ingress */
#ifdef CANARY_ADAPTIVE_TIMEOUT
            ATO_PORT: accept;             /* a timeout sample: passes untouched */
#endif
            default: parse_by_rid;
        }
    }
    state parse_qprobe {
        pkt.extract(hdr.qprobe);
        transition accept;
    }
    state parse_by_rid {
        /* multicast copies carry the bridged bitmap (the deparser emits it first) */
        transition select(eg_intr_md.egress_rid) {
            0: parse_ethernet_plain;
            default: parse_bridge;
        }
    }
    state parse_bridge {
        pkt.extract(hdr.bridge);
        transition parse_ethernet_plain;
    }
    state parse_ethernet_plain {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control Egress(inout headers_t hdr, inout eg_md_t md, in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    /*
     * One entry per port: (port, children with that port's bit set) keeps
     * the copy; anything else (a port that is not a child) is pruned.
     */
    action keep() { }
    action prune() { eg_dprsr_md.drop_ctl = 1; }
    table eg_prune {
        key = { eg_intr_md.egress_port : exact; hdr.bridge.children : ternary; }
        actions = { keep; prune; }
        size = 64;
        default_action = prune();
    }
#ifndef CANARY_NO_ADAPTIVE
    /* up ports: index and the next hop's MAC (a frame may have been moved here by ingress) */
    action set_up(bit<8> idx, bit<48> dmac) {
        md.up_idx = idx;
        hdr.ethernet.dst_addr = dmac;
    }
    table eg_up {
        key = { eg_intr_md.egress_port : exact; }
        actions = { set_up; NoAction; }
        size = 64;
        default_action = NoAction();
    }
    /* the last depth reported per up port: report only changes */
    Register<bit<16>, bit<8>>(256, 0) r_lastq;
    RegisterAction<bit<16>, bit<8>, bit<1>>(r_lastq) lastq_changed = {
        void apply(inout bit<16> v, out bit<1> rv) {
            if (v != md.bucket) { v = md.bucket; rv = 1; }
            else { rv = 0; }
        }
    };
#endif
    apply {
        if (hdr.qprobe.isValid()) {
            /* a depth report: out of the loopback port into ingress */
        } else {
            if (hdr.bridge.isValid()) {
                eg_prune.apply();
                hdr.bridge.setInvalid();
            }
#ifndef CANARY_NO_ADAPTIVE
            md.depth = (bit<32>)eg_intr_md.deq_qdepth;
            md.bucket = md.depth[18:3];
            md.up_port = (bit<16>)eg_intr_md.egress_port;
            if (eg_up.apply().hit) {
                if (lastq_changed.execute(md.up_idx) == 1) {
                    eg_dprsr_md.mirror_type = 1;
                    md.sess = QPROBE_SESSION;
                }
            }
#endif
        }
    }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
#ifndef CANARY_NO_ADAPTIVE
    Mirror() mirror;
#endif
    apply {
#ifndef CANARY_NO_ADAPTIVE
        if (eg_dprsr_md.mirror_type == 1) {
            /* the depth report: this header, then the (truncated) frame */
            mirror.emit<qprobe_h>(md.sess, { md.up_port, md.bucket, md.up_idx });
        }
#endif
        pkt.emit(hdr.qprobe);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.canary);
        pkt.emit(hdr.data);
        pkt.emit(hdr.ipv4);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;
Switch(pipe) main;
