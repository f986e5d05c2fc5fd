/* SPDX-License-Identifier: MIT */
/*
 * DOC: canary_sw.h - the switch: Canary aggregation pipeline (paper sec.
 * 3.6), the static-tree baseline, and plain forwarding for everything
 * else, on the engine's node ops.
 *
 * Canary (opcodes of wire.h):
 *  - REDUCE (a counter of 0 is malformed: it carries no contribution, so
 *    its elements must not reach a sum; likewise TREE_REDUCE): the id is
 *    hashed to a slot of the descriptor table. Empty slot:
 *    allocate (accumulator, counter, hosts, children bitmap, first-arrival
 *    time, leader address), arm the timeout, consume the frame. Same id,
 *    timeout not yet fired: accumulate, add the ingress port to the
 *    children, consume. Same id after the timeout: a straggler; add the
 *    port and forward it at once toward the leader. Different id: a
 *    collision; write this switch's address and the ingress port into the
 *    frame, set bypass, forward toward the leader. Bypass frames are
 *    forwarded untouched by every switch.
 *  - on timeout the accumulator and counter leave as one REDUCE toward the
 *    leader, the next hop chosen by the routing policy; the descriptor
 *    stays (for stragglers and the broadcast). The root (the switch the
 *    leader hangs off) also sends as soon as the counter reaches hosts - 1
 *    (every host but the leader, which never sends its own data).
 *  - BCAST (multicast flag): with a descriptor of that id, copy to every
 *    child port and free the descriptor's slot for any block, keeping its
 *    ports for a BCAST of the same id marked again (children bit 1,
 *    EMU_CANARY_BCAST_AGAIN), which is copied to them once more and frees
 *    the slot for good; without one (or a second BCAST not marked again),
 *    drop.
 *  - RESTORE addressed to this switch: copy the data (as a BCAST) to the
 *    ports of the bitmap it carries (ports 0..31); otherwise route toward
 *    the addressed switch.
 *  - anything else (retransmission, failure, fallback, background IPv4)
 *    is routed to its destination address.
 *  Timers: exact (a deadline per descriptor) or pktgen (a clock tick every
 *  pktgen_tick checks one slot, in table order, as Tofino's packet
 *  generator would: a descriptor may wait up to descriptors x tick more).
 *
 * Adaptive timeout (cfg->adaptive): instead of one fixed timeout, every
 * switch keeps one register per allreduce and role (the tenant field of
 * the block id, EMU_CANARY_TENANT_BITS: the blocks of one allreduce come
 * in from the same set of ports at a switch; and whether the block's
 * leader hangs off this switch, i.e. whether the switch is the block's
 * root) holding the current timeout Q, which starts at cfg->timeout. A new
 * descriptor takes the Q of its allreduce and role as its timeout (its
 * deadline is first arrival + Q). Q moves by the events the descriptor
 * table already sees:
 *
 *     a straggler (a contribution after the flush):  Q = min(Q + up, ceil)
 *     a completed block (its broadcast passed):      Q = max(Q - down, floor)
 *
 * In steady state up x (stragglers per block) = down: Q settles where a
 * block leaves down/up stragglers on average (1/4 by default), wherever
 * that is in the arrival spread. A straggler costs a frame on every link
 * from this switch to the leader, and where many blocks meet (the spines
 * of many small tenants spread over the leaves) a block whose Q fired
 * early leaves many: counting them, not blocks with at least one, is what
 * keeps those links free. The root role has its own register because the
 * same switch is a plain leaf for most blocks of an allreduce (one host of
 * it: nothing to wait for, Q falls to the floor) and the root for the few
 * its hosts lead, where the partial sums of the spines meet: one register
 * would keep the root at the leaf's floor and send every late partial sum
 * to the leader on its own. A root with the counter complete sends at
 * once, so a long root Q costs time only when a contribution is missing.
 * On a Tofino: one 512-entry register (Q - floor per allreduce and role,
 * one stateful ALU: read by every Canary frame, add or saturating
 * subtract when a straggler or a broadcast passes), no per-descriptor
 * state beyond the deadline, which the descriptor's state register keeps
 * instead of the first arrival (tofino.h counts it, hw/README.md places
 * it). A switch that fails loses its registers: Q restarts from
 * cfg->timeout.
 *
 * The hosts' part: a host sizes its window (and the timers sized with it)
 * for the time a block spends in the switches, which the switches now
 * learn. So every BCAST that frees a descriptor leaves with this switch's
 * Q (of the block's allreduce and role, before this block steps it down)
 * added to the frame's switch field, in ns, saturating at the ceiling
 * (and EMU_ATO_HINT_MAX): a host receives the sum of the Qs along its
 * branch of the tree (its leaf, the spine, the root), what the 3 x
 * timeout of the fixed-timeout window stands for (libhost/canary.c,
 * canary_size), but never more than one ceiling. The cap breaks a loop:
 * the window also keeps the hosts in step (a host cannot run further
 * ahead of the slowest than its window), so a window sized for 3 Qs near
 * the ceiling lets them drift apart, the switches learn the drift as
 * spread, and Q and window climb together (experiment 6 at 1 % noise:
 * 18 x the stragglers, -8 % goodput, measured on an earlier engine). The field
 * is 0 in a broadcast from the leader (and RESTORE's re-multicast starts
 * it at 0), and switches with a fixed timeout leave it alone, so their
 * hosts keep the window they computed. On a Tofino: the BCAST's read of
 * r_ato (after leader_local gives the role, as for a REDUCE), a saturating add to a header
 * field and a min with the ceiling (hw/canary.p4, hw/README.md).
 *
 * Failure: a switch that goes down loses its descriptors (counted in
 * wiped), their timeouts and the frames in its pipelines; one that comes
 * back starts empty, and the hosts recover the blocks it held through
 * their leaders (Canary: failure and re-issue; static trees: fallback).
 *
 * Static trees: TREE_REDUCE frames carry the tree in the switch-address
 * field; a switch waits for all its children in that tree (no timeout),
 * sends the sum to its parent port, and the root multicasts TREE_BCAST down
 * the tree's children ports.
 *
 * Recirculation: with more elements than fit one pass, every Canary frame
 * takes (passes - 1) extra trips through its ingress pipeline; a pipeline
 * processes pipe_gpps packets per ns, so when Canary traffic exceeds what
 * the recirculations leave, frames wait (holding their ingress buffer) and
 * the aggregation throughput drops accordingly.
 */
#ifndef EMU_CANARY_SW_H
#define EMU_CANARY_SW_H

#include <stdbool.h>
#include <stdint.h>

#include "emu/engine/engine.h"
#include "emu/switch/fwd.h"

/* adaptive timeout defaults: Q in [200 ns, 8 us], +128 ns per straggler, -32 ns per completed block */
#define EMU_ATO_FLOOR (200 * EMU_NS)
#define EMU_ATO_CEIL (8 * EMU_US)
#define EMU_ATO_UP (128 * EMU_NS)
#define EMU_ATO_DOWN (32 * EMU_NS)
/* the largest hint a broadcast's switch field carries (ns) */
#define EMU_ATO_HINT_MAX 65535u

enum emu_sw_timer {
	EMU_SW_TIMER_EXACT = 0,
	EMU_SW_TIMER_PKTGEN,
};

/* One static reduction tree, as configured on every switch before the run. */
struct emu_sw_tree_node {
	uint16_t parent;		/* port toward the root, EMU_PORT_NONE at the root */
	uint16_t nchildren;		/* children to wait for; 0: not in this tree */
	uint64_t children;		/* their ports */
};

struct emu_sw_trees {
	unsigned ntrees;
	uint32_t nswitches;
	struct emu_sw_tree_node *node;	/* [tree * nswitches + switch index] */
	uint32_t *root;			/* per tree: root switch node id */
};

struct emu_sw_cfg {
	uint32_t descriptors;		/* table entries */
	emu_time_t timeout;
	enum emu_sw_timer timer;
	emu_time_t pktgen_tick;
	unsigned passes;		/* pipeline passes per Canary frame */
	double pipe_gpps;		/* pipeline packets per ns (recirculation budget) */
	unsigned ports_per_pipe;
	const struct emu_sw_trees *trees;	/* static-tree baseline, or NULL */
	/*
	 * 0: a block's slot is a hash of its id over the whole table. K > 0:
	 * the table is split statically among K tenants and a block takes
	 * slot (tenant mod K) * (descriptors / K) + (sequence mod that): the
	 * paper's per-tenant partitioning (sec. 5.2, concurrent allreduces),
	 * collision-free while a tenant has fewer blocks in flight than slots.
	 * At most @descriptors (the switch refuses to start otherwise).
	 */
	unsigned partition;
	/* adaptive timeout (see above); timeout is the start value */
	bool adaptive;
	emu_time_t ato_floor, ato_ceil;	/* Q stays in [floor, ceil] */
	emu_time_t ato_up, ato_down;	/* steps of Q: per straggler, per completed block */
};

struct emu_sw_stats {
	struct emu_fwd_stats fwd;
	uint64_t reduce_rx;		/* REDUCE frames that reached the pipeline */
	uint64_t aggregated;		/* frames consumed into a descriptor */
	uint64_t allocated;		/* descriptors allocated */
	uint64_t freed;
	uint64_t peak;			/* highest table occupancy */
	double occ_integral;		/* occupancy x ps, for the mean */
	uint64_t collisions;
	uint64_t stragglers;
	uint64_t flushes;		/* accumulator sent on timeout */
	uint64_t early_flushes;		/* root: counter complete before the timeout */
	uint64_t tree_up;		/* static: sums sent to the parent */
	uint64_t bypassed;		/* bypass frames forwarded */
	uint64_t bcast_rx;
	uint64_t bcast_copies;
	uint64_t bcast_dropped;		/* broadcast without a descriptor (or a second one, not marked again) */
	uint64_t restores;		/* restoration frames applied here */
	uint64_t restore_copies;
	uint64_t malformed;		/* dropped: truncated/inconsistent */
	uint64_t tree_collisions;	/* static: slot held by another block */
	uint64_t reclaimed;		/* slots of abandoned blocks taken back */
	uint64_t wiped;			/* descriptors a failure of the switch erased */
	uint64_t recirc_delayed;	/* frames that waited for the pipeline */
	emu_time_t recirc_wait;		/* total pipeline waiting time */
	uint64_t pktgen_ticks;
	emu_time_t max_hold;		/* longest first-arrival-to-flush */
	uint64_t live;			/* descriptors in use now */
	emu_time_t occ_since;
	/* adaptive timeout */
	uint64_t ato_claims;		/* descriptors that took a timeout from Q */
	uint64_t ato_sum;		/* sum of those timeouts (mean = sum / claims) */
	emu_time_t ato_min, ato_max;	/* shortest and longest of them */
	uint64_t ato_samples;		/* completed blocks: Q stepped down */
	uint64_t ato_up;		/* stragglers: Q stepped up */
	uint64_t ato_root_claims;	/* descriptors of blocks led from here (root role) */
	uint64_t ato_root_sum;		/* sum of their timeouts */
};

extern const struct emu_model_ops emu_sw_ops;

/*
 * emu_sw_mem_estimate - the bytes a switch of @nports ports under @cfg
 * holds at least once @touched table slots were used (a descriptor and a
 * map entry each, kept for the run; accumulators of open descriptors and
 * frames not counted).
 */
uint64_t emu_sw_mem_estimate(const struct emu_sw_cfg *cfg, unsigned nports, uint64_t touched);

/* emu_sw_stats_of - the statistics of a switch node running emu_sw_ops. */
const struct emu_sw_stats *emu_sw_stats_of(struct emu_node *n);

/* emu_sw_slot - the table slot of block @id in a table of @n entries (hashed). */
static inline uint32_t emu_sw_slot(uint32_t id, uint32_t n)
{
	uint64_t h = (uint64_t)id * 0x9e3779b97f4a7c15ULL;

	return (uint32_t)(((h >> 32) * n) >> 32);
}

/* emu_sw_slot_cfg - the slot of block @id under @cfg's table layout. */
static inline uint32_t emu_sw_slot_cfg(const struct emu_sw_cfg *cfg, uint32_t id)
{
	if (!cfg->partition)
		return emu_sw_slot(id, cfg->descriptors);
	uint32_t share = cfg->descriptors / cfg->partition;

	if (!share)
		share = 1;
	return ((id >> 24) % cfg->partition) * share + (id & 0xffffff) % share;
}

#endif /* EMU_CANARY_SW_H */
