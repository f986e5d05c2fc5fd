/* SPDX-License-Identifier: MIT */
/*
 * hw/canary.p4 - the Canary switch (paper sec. 3.6 and 4) for Tofino 1, TNA.
 *
 * Same behaviour and frame format as the emulator's switch (emu/canary_sw.c,
 * emu/wire.h): Ethernet, EtherType 0x88B5, the 19-byte Canary header in the
 * paper's field order, 32 x bit<32> elements (one pass, the paper's
 * prototype). IPv4 is forwarded by LPM with ECMP through an action selector.
 *
 * Descriptor registers, indexed by a CRC16 hash of id (N_DESC = 32768):
 *   r_id, r_ts (first arrival), r_state (FREE/OPEN/FLUSHED), r_leader,
 *   r_hosts, r_counter, r_children (ports 0..31) + 32 element registers:
 *   39 stateful ALUs of 48, the figure of the emulator's tofino1 model.
 * Stage placement (4 stateful ALUs per stage):
 *   stage 0  port one-hot (exact), slot hash, is-root lookup, pktgen slot
 *   stage 1  r_id, r_ts
 *   stage 2  r_state, r_leader, r_hosts
 *   stage 3  r_counter, r_children
 *   stage 4..11  r_e00..r_e31, four per stage
 * Timeouts: the packet generator's periodic app sends one clock packet per
 * tick; packet i of a batch checks slot i (packet_id), so with a batch of
 * N_DESC packets and an inter-packet gap g the table is swept every
 * N_DESC x g: a descriptor flushes between timeout and timeout + N_DESC x g
 * (32768 x 1 ns = 32.8 us; the same bound as the emulator's --timer pktgen).
 *
 * NOT COMPILED WITH bf-p4c IN THIS REPOSITORY'S CI: see hw/README.md for
 * what was checked and how to build it.
 */
#include <core.p4>
#include <tna.p4>

#define N_DESC 32768
#define TIMEOUT_NS 1000

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_CANARY = 0x88B5;

const bit<6> OP_REDUCE = 1;
const bit<6> OP_BCAST = 2;
const bit<6> OP_RESTORE = 3;

const bit<8> ST_FREE = 0;
const bit<8> ST_OPEN = 1;
const bit<8> ST_FLUSHED = 2;

/* what r_id said */
const bit<8> ID_NEW = 1;
const bit<8> ID_SAME = 2;
const bit<8> ID_OTHER = 3;

const bit<2> ELEM_NONE = 0;
const bit<2> ELEM_ADD = 1;
const bit<2> ELEM_TAKE = 2;

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

/* DESIGN section 5, the paper's field order; 19 bytes */
header canary_h {
    bit<32> dst;         /* IPv4 address of the block's leader */
    bit<32> id;          /* tenant (8) | sequence (24) */
    bit<16> counter;     /* host contributions in this packet */
    bit<16> hosts;       /* hosts in the reduction */
    bit<32> children;    /* collision: ingress port; restoration: port bitmap */
    bit<16> switch_addr; /* switch that saw the collision */
    bit<1>  bypass;
    bit<1>  multicast;
    bit<6>  opcode;
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

/* ingress -> egress: the children bitmap of a multicast */
header bridge_h {
    bit<32> children;
}

struct headers_t {
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
    bit<8>  id_res;
    bit<8>  state;
    bit<1>  expired;
    bit<1>  is_root;
    bit<1>  is_timer;
    bit<1>  flush;
    bit<2>  elem_op;
    bit<16> counter;
    bit<16> hosts;
    bit<32> children;
    bit<32> route_ip;
    bit<32> now;
}

parser IgParser(packet_in pkt, out headers_t hdr, out ig_md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        md = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
        transition select(ig_intr_md.ingress_port) {
            68: parse_timer;          /* pipe 0 packet generator */
            default: parse_ethernet;
        }
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
        transition select(hdr.canary.opcode) {
            OP_REDUCE: parse_data;
            OP_BCAST: parse_data;
            OP_RESTORE: parse_data;
            default: accept;
        }
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
    Hash<bit<16>>(HashAlgorithm_t.CRC16) ecmp_hash;
    ActionProfile(1024) ecmp_profile;
    ActionSelector(ecmp_profile, ecmp_hash, SelectorMode_t.FAIR, 64, 256) ecmp_sel;

    /* ---- stage 0: tables filled by the control plane ---- */
    action set_onehot(bit<32> bit_) { md.onehot = bit_; }
    table port_onehot {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { set_onehot; NoAction; }
        size = 64;
        default_action = NoAction();
    }

    action set_root() { md.is_root = 1; }
    table leader_local {          /* leaders hanging off this switch */
        key = { hdr.canary.dst : exact; }
        actions = { set_root; NoAction; }
        size = 256;
        default_action = NoAction();
    }

    action fwd(PortId_t port, bit<48> dmac) {
        ig_tm_md.ucast_egress_port = port;
        hdr.ethernet.dst_addr = dmac;
    }
    action unreachable() { ig_dprsr_md.drop_ctl = 1; }
    table route {                 /* IPv4 and Canary destinations alike */
        key = { md.route_ip : lpm; }
        actions = { fwd; unreachable; }
        implementation = ecmp_sel;
        size = 4096;
        default_action = unreachable();
    }

    /*
     * Multicast to the children bitmap: two shards of 16 ports. Shard 0
     * (ports 0..15) goes to MGID 1, shard 1 (ports 16..31) to MGID 2, at
     * most both in one pass (TNA has mcast_grp_a and mcast_grp_b); the
     * bitmap rides to egress in the bridged header and egress drops the
     * copies for ports that are not children. See hw/README.md for why
     * not 2^(p/s)*s groups.
     */
    action shard_groups() {
        hdr.bridge.setValid();
        hdr.bridge.children = md.children;
        ig_tm_md.mcast_grp_a = (md.children[15:0] != 0) ? 16w1 : 16w0;
        ig_tm_md.mcast_grp_b = (md.children[31:16] != 0) ? 16w2 : 16w0;
    }

    bit<16> this_switch = 0;
    action set_switch(bit<16> addr) { this_switch = addr; }
    table switch_addr {
        actions = { set_switch; }
        default_action = set_switch(0);
        size = 1;
    }

    /* ---- stage 1: id and first-arrival time ---- */
    Register<bit<32>, bit<15>>(N_DESC, 0) r_id;
    RegisterAction<bit<32>, bit<15>, bit<8>>(r_id) id_reduce = {
        void apply(inout bit<32> v, out bit<8> rv) {
            if (v == 0) { v = hdr.canary.id; rv = ID_NEW; }
            else if (v == hdr.canary.id) { rv = ID_SAME; }
            else { rv = ID_OTHER; }
        }
    };
    RegisterAction<bit<32>, bit<15>, bit<8>>(r_id) id_free = {
        void apply(inout bit<32> v, out bit<8> rv) {
            if (v == hdr.canary.id) { v = 0; rv = ID_SAME; } else { rv = ID_OTHER; }
        }
    };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_id) id_read = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };

    Register<bit<32>, bit<15>>(N_DESC, 0) r_ts;
    RegisterAction<bit<32>, bit<15>, bit<1>>(r_ts) ts_set = {
        void apply(inout bit<32> v, out bit<1> rv) { v = md.now; rv = 0; }
    };
    RegisterAction<bit<32>, bit<15>, bit<1>>(r_ts) ts_expired = {
        void apply(inout bit<32> v, out bit<1> rv) {
            if (md.now - v >= TIMEOUT_NS) { rv = 1; } else { rv = 0; }
        }
    };

    /* ---- stage 2: state, leader, hosts ---- */
    Register<bit<8>, bit<15>>(N_DESC, ST_FREE) r_state;
    RegisterAction<bit<8>, bit<15>, bit<8>>(r_state) state_open = {
        void apply(inout bit<8> v, out bit<8> rv) { v = ST_OPEN; rv = ST_OPEN; }
    };
    RegisterAction<bit<8>, bit<15>, bit<8>>(r_state) state_read = {
        void apply(inout bit<8> v, out bit<8> rv) { rv = v; }
    };
    RegisterAction<bit<8>, bit<15>, bit<8>>(r_state) state_timer = {
        void apply(inout bit<8> v, out bit<8> rv) {
            if (v == ST_OPEN && md.expired == 1) { v = ST_FLUSHED; rv = ST_FLUSHED; } else { rv = v; }
        }
    };
    RegisterAction<bit<8>, bit<15>, bit<8>>(r_state) state_clear = {
        void apply(inout bit<8> v, out bit<8> rv) { rv = v; v = ST_FREE; }
    };
    RegisterAction<bit<8>, bit<15>, bit<8>>(r_state) state_flushed = {
        void apply(inout bit<8> v, out bit<8> rv) { v = ST_FLUSHED; rv = ST_FLUSHED; }
    };

    Register<bit<32>, bit<15>>(N_DESC, 0) r_leader;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_leader) leader_set = {
        void apply(inout bit<32> v, out bit<32> rv) { v = hdr.canary.dst; rv = v; }
    };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_leader) leader_read = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };

    Register<bit<16>, bit<15>>(N_DESC, 0) r_hosts;
    RegisterAction<bit<16>, bit<15>, bit<16>>(r_hosts) hosts_set = {
        void apply(inout bit<16> v, out bit<16> rv) { v = hdr.canary.hosts; rv = v; }
    };
    RegisterAction<bit<16>, bit<15>, bit<16>>(r_hosts) hosts_read = {
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; }
    };

    /* ---- stage 3: counter and children ---- */
    Register<bit<16>, bit<15>>(N_DESC, 0) r_counter;
    RegisterAction<bit<16>, bit<15>, bit<16>>(r_counter) counter_add = {
        void apply(inout bit<16> v, out bit<16> rv) { v = v + hdr.canary.counter; rv = v; }
    };
    RegisterAction<bit<16>, bit<15>, bit<16>>(r_counter) counter_take = {
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; v = 0; }
    };

    Register<bit<32>, bit<15>>(N_DESC, 0) r_children;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_children) children_or = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v | md.onehot; rv = v; }
    };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_children) children_take = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; v = 0; }
    };

    /* ---- stages 4..11: the elements ---- */
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e00;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e00) add_e00 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e00; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e00) take_e00 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e00; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e01;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e01) add_e01 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e01; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e01) take_e01 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e01; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e02;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e02) add_e02 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e02; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e02) take_e02 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e02; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e03;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e03) add_e03 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e03; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e03) take_e03 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e03; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e04;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e04) add_e04 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e04; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e04) take_e04 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e04; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e05;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e05) add_e05 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e05; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e05) take_e05 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e05; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e06;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e06) add_e06 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e06; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e06) take_e06 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e06; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e07;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e07) add_e07 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e07; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e07) take_e07 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e07; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e08;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e08) add_e08 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e08; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e08) take_e08 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e08; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e09;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e09) add_e09 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e09; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e09) take_e09 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e09; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e10;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e10) add_e10 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e10; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e10) take_e10 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e10; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e11;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e11) add_e11 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e11; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e11) take_e11 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e11; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e12;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e12) add_e12 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e12; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e12) take_e12 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e12; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e13;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e13) add_e13 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e13; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e13) take_e13 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e13; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e14;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e14) add_e14 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e14; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e14) take_e14 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e14; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e15;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e15) add_e15 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e15; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e15) take_e15 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e15; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e16;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e16) add_e16 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e16; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e16) take_e16 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e16; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e17;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e17) add_e17 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e17; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e17) take_e17 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e17; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e18;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e18) add_e18 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e18; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e18) take_e18 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e18; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e19;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e19) add_e19 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e19; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e19) take_e19 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e19; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e20;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e20) add_e20 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e20; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e20) take_e20 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e20; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e21;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e21) add_e21 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e21; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e21) take_e21 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e21; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e22;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e22) add_e22 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e22; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e22) take_e22 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e22; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e23;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e23) add_e23 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e23; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e23) take_e23 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e23; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e24;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e24) add_e24 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e24; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e24) take_e24 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e24; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e25;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e25) add_e25 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e25; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e25) take_e25 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e25; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e26;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e26) add_e26 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e26; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e26) take_e26 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e26; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e27;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e27) add_e27 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e27; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e27) take_e27 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e27; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e28;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e28) add_e28 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e28; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e28) take_e28 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e28; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e29;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e29) add_e29 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e29; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e29) take_e29 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e29; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e30;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e30) add_e30 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e30; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e30) take_e30 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e30; v = 0; } };
    Register<bit<32>, bit<15>>(N_DESC, 0) r_e31;
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e31) add_e31 = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + hdr.data.e31; rv = v; } };
    RegisterAction<bit<32>, bit<15>, bit<32>>(r_e31) take_e31 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v + hdr.data.e31; v = 0; } };

    action to_leader() {
        md.route_ip = hdr.canary.dst;
    }

    apply {
        md.now = ig_prsr_md.global_tstamp[31:0];
        switch_addr.apply();
        if (md.is_timer == 1) {
            /* a clock packet: check slot packet_id; flush it if expired */
            md.slot = hdr.timer.packet_id[14:0];
            bit<32> id = id_read.execute(md.slot);
            md.expired = ts_expired.execute(md.slot);
            md.state = state_timer.execute(md.slot);
            if (md.state == ST_FLUSHED && md.expired == 1 && id != 0) {
                hdr.ethernet.setValid();
                hdr.canary.setValid();
                hdr.data.setValid();
                hdr.ethernet.ether_type = ETHERTYPE_CANARY;
                hdr.canary.id = id;
                hdr.canary.dst = leader_read.execute(md.slot);
                hdr.canary.hosts = hosts_read.execute(md.slot);
                hdr.canary.counter = counter_take.execute(md.slot);
                hdr.canary.opcode = OP_REDUCE;
                hdr.timer.setInvalid();
                md.elem_op = ELEM_TAKE;
                md.flush = 1;
            } else {
                ig_dprsr_md.drop_ctl = 1;
            }
        } else if (hdr.canary.isValid() && hdr.canary.bypass == 0 && hdr.canary.opcode == OP_REDUCE) {
            port_onehot.apply();
            leader_local.apply();
            md.slot = slot_hash.get({ hdr.canary.id });
            md.id_res = id_reduce.execute(md.slot);
            if (md.id_res == ID_OTHER) {
                /* collision: to the leader with this switch and the ingress port */
                hdr.canary.bypass = 1;
                hdr.canary.switch_addr = this_switch;
                hdr.canary.children = (bit<32>)ig_intr_md.ingress_port;
                md.flush = 1;
            } else if (md.id_res == ID_NEW) {
                ts_set.execute(md.slot);
                md.state = state_open.execute(md.slot);
                leader_set.execute(md.slot);
                md.hosts = hosts_set.execute(md.slot);
            } else {
                md.state = state_read.execute(md.slot);
                md.hosts = hdr.canary.hosts;
            }
            if (md.id_res != ID_OTHER) {
                md.children = children_or.execute(md.slot);
                if (md.state == ST_FLUSHED) {
                    md.flush = 1;     /* straggler: forward at once, untouched */
                } else {
                    md.counter = counter_add.execute(md.slot);
                    md.elem_op = ELEM_ADD;
                    /* the root sends when every host but the leader is in */
                    if (md.is_root == 1 && md.counter + 1 >= md.hosts) {
                        md.elem_op = ELEM_TAKE;
                        state_flushed.execute(md.slot);
                        hdr.canary.counter = md.counter;
                        md.flush = 1;
                    }
                }
            }
        } else if (hdr.canary.isValid() && hdr.canary.bypass == 0 && hdr.canary.opcode == OP_BCAST) {
            md.slot = slot_hash.get({ hdr.canary.id });
            md.id_res = id_free.execute(md.slot);
            if (md.id_res == ID_SAME) {
                state_clear.execute(md.slot);
                md.children = children_take.execute(md.slot);
                shard_groups();
            } else {
                ig_dprsr_md.drop_ctl = 1;    /* no descriptor: dropped */
            }
        } else if (hdr.canary.isValid() && hdr.canary.bypass == 0 && hdr.canary.opcode == OP_RESTORE &&
                   hdr.canary.switch_addr == this_switch) {
            /* restoration: multicast the data to the bitmap it carries, as a broadcast */
            md.children = hdr.canary.children;
            hdr.canary.opcode = OP_BCAST;
            hdr.canary.multicast = 1;
            hdr.canary.children = 0;
            hdr.canary.switch_addr = 0;
            shard_groups();
        } else if (hdr.canary.isValid()) {
            md.flush = 1;                      /* bypass and control frames: routed */
        } else if (hdr.ipv4.isValid()) {
            md.route_ip = hdr.ipv4.dst_addr;
            route.apply();
        }

        /* the elements: add (reduce) or add-and-clear (flush) */
        if (md.elem_op == ELEM_ADD) hdr.data.e00 = add_e00.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e00 = take_e00.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e01 = add_e01.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e01 = take_e01.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e02 = add_e02.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e02 = take_e02.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e03 = add_e03.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e03 = take_e03.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e04 = add_e04.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e04 = take_e04.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e05 = add_e05.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e05 = take_e05.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e06 = add_e06.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e06 = take_e06.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e07 = add_e07.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e07 = take_e07.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e08 = add_e08.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e08 = take_e08.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e09 = add_e09.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e09 = take_e09.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e10 = add_e10.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e10 = take_e10.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e11 = add_e11.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e11 = take_e11.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e12 = add_e12.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e12 = take_e12.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e13 = add_e13.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e13 = take_e13.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e14 = add_e14.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e14 = take_e14.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e15 = add_e15.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e15 = take_e15.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e16 = add_e16.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e16 = take_e16.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e17 = add_e17.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e17 = take_e17.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e18 = add_e18.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e18 = take_e18.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e19 = add_e19.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e19 = take_e19.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e20 = add_e20.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e20 = take_e20.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e21 = add_e21.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e21 = take_e21.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e22 = add_e22.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e22 = take_e22.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e23 = add_e23.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e23 = take_e23.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e24 = add_e24.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e24 = take_e24.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e25 = add_e25.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e25 = take_e25.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e26 = add_e26.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e26 = take_e26.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e27 = add_e27.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e27 = take_e27.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e28 = add_e28.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e28 = take_e28.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e29 = add_e29.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e29 = take_e29.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e30 = add_e30.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e30 = take_e30.execute(md.slot);
        if (md.elem_op == ELEM_ADD) hdr.data.e31 = add_e31.execute(md.slot);
        else if (md.elem_op == ELEM_TAKE) hdr.data.e31 = take_e31.execute(md.slot);

        if (md.flush == 1) {
            to_leader();
            route.apply();
        } else if (md.elem_op == ELEM_ADD) {
            ig_dprsr_md.drop_ctl = 1;          /* consumed into the descriptor */
        }
    }
}

control IgDeparser(packet_out pkt, inout headers_t hdr, in ig_md_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(hdr.bridge);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.canary);
        pkt.emit(hdr.data);
        pkt.emit(hdr.ipv4);
    }
}

struct eg_md_t {
    bit<32> onehot;
}

parser EgParser(packet_in pkt, out headers_t hdr, out eg_md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        md.onehot = 0;
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
    action set_onehot(bit<32> bit_) { md.onehot = bit_; }
    table eg_port_onehot {
        key = { eg_intr_md.egress_port : exact; }
        actions = { set_onehot; NoAction; }
        size = 64;
        default_action = NoAction();
    }
    apply {
        if (hdr.bridge.isValid()) {
            eg_port_onehot.apply();
            if ((hdr.bridge.children & md.onehot) == 0) {
                eg_dprsr_md.drop_ctl = 1;     /* not a child of this block */
            }
            hdr.bridge.setInvalid();
        }
    }
}

control EgDeparser(packet_out pkt, inout headers_t hdr, in eg_md_t md,
                   in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.canary);
        pkt.emit(hdr.data);
        pkt.emit(hdr.ipv4);
    }
}

Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;
Switch(pipe) main;
