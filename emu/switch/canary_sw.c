// SPDX-License-Identifier: MIT
/*
 * DOC: canary_sw.c - the switch model. See canary_sw.h for the behaviour.
 *
 * The descriptor table models the switch's registers: a fixed number of
 * slots indexed by a hash of the block id. In the emulator only the slots
 * a run has touched exist (struct desc_map: an open-addressing map from
 * slot to descriptor, descriptors in stable slabs), since a 4 MiB
 * allreduce touches 4096 of a Tofino's 32768 slots and a 3-level k=32 fat
 * tree has 1280 switches; a slot never touched reads as FREE. The
 * accumulators of open descriptors come from a per-switch free list so that
 * a 32K-entry table of 256-element descriptors does not cost 32 MiB per
 * switch in the emulator. A descriptor is OPEN from its first packet until
 * its timeout, FLUSHED (kept for stragglers and the broadcast, accumulator
 * released) until the broadcast frees it, SENT after that (free for any
 * block; its ports kept for a broadcast marked again, see D_SENT). A
 * FLUSHED descriptor whose block was abandoned (re-issued under a new id after a failure) would hold its
 * slot forever; a new block that collides with a FLUSHED descriptor older
 * than EMU_SW_RECLAIM takes the slot over (counted as a reclaim).
 */
#include "emu/switch/canary_sw.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "emu/engine/util.h"
#include "libhost/wire.h"

#define EMU_SW_RECLAIM (1 * EMU_MS)

/*
 * D_SENT: the broadcast passed and freed the slot (any block takes it, as
 * D_FREE), but the children stay for a broadcast of the same id marked
 * again (EMU_CANARY_BCAST_AGAIN): the leader's, when many hosts still ask
 * for a result. It is copied down the same ports again and the slot is
 * D_FREE for good; a second broadcast not so marked is dropped, as before. Were
 * the descriptor gone, a broadcast lost on a link below a switch it had
 * passed (a leaf's uplink to a spine: every host behind that spine) could
 * only be made up for by a unicast per host from the leader's link.
 */
enum { D_FREE = 0, D_OPEN, D_FLUSHED, D_SENT };

#define T_DESC (1ULL << 60)
#define T_PKTGEN (2ULL << 60)
#define T_PIPE (3ULL << 60)
#define T_HOLD (4ULL << 60)
#define T_KIND(c) ((c) & (0xfULL << 60))

struct desc {
	uint32_t id;
	uint32_t leader;
	uint32_t gen;
	uint16_t counter;
	uint16_t hosts;
	uint16_t nelem;
	uint16_t arrived;	/* static trees: children heard from */
	uint8_t state;
	uint8_t run;		/* the block's run (wire.h): a frame of another run is another block */
	uint64_t children;
	emu_time_t ts;		/* first arrival */
	emu_time_t deadline;	/* Canary: flush at (first arrival + timeout) */
	int32_t *acc;
	struct emu_frame *held;	/* static trees: frames waiting for this slot */
};

/* holds - is @d's block the one of @h (its id, of its run)? */
static inline bool holds(const struct desc *d, const struct emu_canary_hdr *h)
{
	return d->id == h->id && d->run == h->run;
}

/* slot -> descriptor, for the slots touched so far (never removed: gen persists) */
/* a map entry: its key and value in one 16-byte entry, so a lookup reads one line */
struct desc_ent {
	uint32_t key;		/* slot + 1; 0: empty */
	struct desc *val;
};

struct desc_map {
	struct desc_ent *e;
	void *spare;		/* unused: sizeof(struct sw_state) stays what the memory estimate counts */
	uint32_t cap;		/* a power of two */
	uint32_t n;
	struct desc **slab;	/* DESC_SLAB descriptors each */
	uint32_t nslab;
};

#define DESC_SLAB 256

struct pipeq {
	emu_time_t busy;
	struct emu_fifo q;	/* the frames waiting for their passes */
};

/*
 * Line 0 (a node's state starts on a line) holds what a Canary frame's
 * steps read: the configuration, the descriptor map, the pipeline; the
 * counters follow (the forwarded frames' and the descriptors' first).
 */
struct sw_state {
	const struct emu_sw_cfg *cfg;
	struct desc_map table;
	uint32_t pass;		/* recirculation: a pass's time (ps), from cfg->pipe_gpps (0: longer, computed per frame) */
	bool recirc;		/* Canary frames take cfg->passes passes (passes > 1, pipe_gpps > 0) */
	bool ticking;
	struct pipeq *pipe;
	struct emu_sw_stats st;
	int32_t **accfree;
	uint32_t naccfree;
	uint32_t capaccfree;
	uint32_t nacc;
	unsigned npipes;
	/* pktgen */
	uint64_t *openmap;
	uint32_t open;
	uint32_t my_index;
	uint64_t tick_k;	/* tick number of the armed clock packet */
	uint32_t tick_gen;
	/* adaptive timeout: Q per allreduce (tenant field of the id) and role, or NULL */
	emu_time_t *ato;
};

_Static_assert(offsetof(struct sw_state, pipe) < 64, "sw_state: line 0");
_Static_assert(sizeof(struct desc) == 64, "a descriptor is one line (its slab starts on one)");
_Static_assert(sizeof(struct sw_state) == 432, "sw_state: the size the memory estimate counts");

#define ATO_KEYS (2u << EMU_CANARY_TENANT_BITS)

/* The register of block @id (allreduce and role: @root, this switch is the block's root). */
static inline uint32_t ato_key(uint32_t id, bool root)
{
	return (id >> (32 - EMU_CANARY_TENANT_BITS)) << 1 | (root ? 1u : 0u);
}

static void sw_handle(struct emu_node *n, struct emu_frame *f, unsigned port);

const struct emu_sw_stats *emu_sw_stats_of(struct emu_node *n)
{
	return &((struct sw_state *)emu_node_state(n))->st;
}

/* ---------- the descriptor table ---------- */

static inline uint32_t map_pos(const struct desc_map *m, uint32_t slot)
{
	return (uint32_t)((slot + 1) * 0x9e3779b1u) & (m->cap - 1);
}

/* the descriptor of @slot, NULL if the slot was never touched (it is FREE) */
static inline struct desc *desc_find(const struct sw_state *s, uint32_t slot)
{
	const struct desc_map *m = &s->table;

	for (uint32_t i = map_pos(m, slot);; i = (i + 1) & (m->cap - 1)) {
		if (m->e[i].key == slot + 1)
			return m->e[i].val;
		if (!m->e[i].key)
			return NULL;
	}
}

static void map_insert(struct desc_map *m, uint32_t slot, struct desc *d)
{
	uint32_t i = map_pos(m, slot);

	while (m->e[i].key)
		i = (i + 1) & (m->cap - 1);
	m->e[i].key = slot + 1;
	m->e[i].val = d;
	m->n++;
}

/* desc_at() of a slot never touched: a FREE descriptor made for it */
static __attribute__((noinline)) struct desc *desc_new(struct sw_state *s, uint32_t slot)
{
	struct desc_map *m = &s->table;
	struct desc *d;

	if (2 * (m->n + 1) > m->cap) {
		struct desc_map old = *m;

		m->cap *= 2;
		m->e = emu_xcalloc(m->cap, sizeof(*m->e));
		m->n = 0;
		for (uint32_t i = 0; i < old.cap; i++)
			if (old.e[i].key)
				map_insert(m, old.e[i].key - 1, old.e[i].val);
		free(old.e);
	}
	if (m->n % DESC_SLAB == 0) {
		m->slab = emu_xrealloc(m->slab, (m->nslab + 1) * sizeof(*m->slab));
		m->slab[m->nslab++] = emu_xaligned(DESC_SLAB * sizeof(struct desc));
	}
	d = &m->slab[m->n / DESC_SLAB][m->n % DESC_SLAB];
	map_insert(m, slot, d);
	return d;
}

/* the descriptor of @slot, created FREE if never touched; its address is stable */
static inline struct desc *desc_at(struct sw_state *s, uint32_t slot)
{
	struct desc *d = desc_find(s, slot);

	return d ? d : desc_new(s, slot);
}

/* ---------- small helpers ---------- */

static int32_t *acc_get(struct sw_state *s)
{
	if (s->naccfree)
		return s->accfree[--s->naccfree];
	s->nacc++;
	return emu_xmalloc(EMU_CANARY_MAX_ELEMENTS * sizeof(int32_t));
}

static void acc_put(struct sw_state *s, int32_t *a)
{
	if (!a)
		return;
	if (s->naccfree == s->capaccfree) {
		s->capaccfree = s->capaccfree ? 2 * s->capaccfree : 64;
		s->accfree = emu_xrealloc(s->accfree, s->capaccfree * sizeof(*s->accfree));
	}
	s->accfree[s->naccfree++] = a;
}

static void occ_update(struct sw_state *s, emu_time_t now, int delta)
{
	s->st.occ_integral += (double)s->st.live * (double)(now - s->st.occ_since);
	s->st.occ_since = now;
	s->st.live = (uint64_t)((int64_t)s->st.live + delta);
	if (s->st.live > s->st.peak)
		s->st.peak = s->st.live;
}

static void set_open(struct sw_state *s, uint32_t slot, bool on)
{
	uint64_t bit = 1ULL << (slot % 64);

	if (on) {
		s->openmap[slot / 64] |= bit;
		s->open++;
	} else if (s->openmap[slot / 64] & bit) {
		s->openmap[slot / 64] &= ~bit;
		s->open--;
	}
}

static void desc_free(struct emu_node *n, struct sw_state *s, struct desc *d, uint32_t slot)
{
	set_open(s, slot, false);
	acc_put(s, d->acc);
	d->acc = NULL;
	d->state = D_FREE;
	s->st.freed++;
	occ_update(s, emu_node_now(n), -1);
}

/* Send @f toward IPv4 destination in its header, by the routing policy. */
static void route_out(struct emu_node *n, struct sw_state *s, struct emu_frame *f)
{
	emu_fwd_forward(n, f, &s->st.fwd);
}

/* Copy @f to every port of @ports (the last copy is @f itself; under merlin each its output's own FIFO). */
static void multicast(struct emu_node *n, struct emu_frame *f, uint64_t ports, uint64_t *count)
{
	*count += (uint64_t)__builtin_popcountll(ports);
	emu_send_copies(n, f, ports);
}

static bool is_root(struct emu_node *n, uint32_t leader_ip)
{
	const struct emu_fabric *fab = emu_engine_fabric(n->eng);
	uint32_t h = emu_fabric_host_by_ip(fab, leader_ip);

	return h != EMU_NONE32 && fab->attach_node[h] == n->id;
}

/* ---------- Canary: flush, timers ---------- */

static void flush(struct emu_node *n, struct sw_state *s, struct desc *d, uint32_t slot, bool early)
{
	struct emu_frame *f = emu_frame_alloc_len(n, EMU_CANARY_DATA_OFF + 4 * d->nelem);
	const struct emu_fab_node *me = emu_node_desc(n);
	struct emu_canary_hdr h = {
		.dst = d->leader, .id = d->id, .counter = d->counter, .hosts = d->hosts,
		.flags = EMU_CANARY_OP_REDUCE, .run = d->run,
	};
	static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	emu_time_t now = emu_node_now(n);

	f->len = lh_wire_canary_build(f->data, bcast_mac, me->mac, &h, d->acc, d->nelem);
	d->state = D_FLUSHED;
	set_open(s, slot, false);
	acc_put(s, d->acc);
	d->acc = NULL;
	if (early)
		s->st.early_flushes++;
	else
		s->st.flushes++;
	if (now - d->ts > s->st.max_hold)
		s->st.max_hold = now - d->ts;
	route_out(n, s, f);
}

static uint64_t slot_tick(struct sw_state *s, uint64_t from_k, uint32_t slot)
{
	uint32_t N = s->cfg->descriptors;
	uint64_t k = from_k + (slot + N - (uint32_t)(from_k % N)) % N;

	return k;
}

/* Arm the clock packet for the first OPEN slot at or after tick @from_k. */
static void pktgen_arm(struct emu_node *n, struct sw_state *s, uint64_t from_k)
{
	uint32_t N = s->cfg->descriptors, words = (N + 63) / 64;
	uint32_t start = (uint32_t)(from_k % N);

	if (!s->open) {
		s->ticking = false;
		return;
	}
	/* first open slot at or after start, wrapping */
	uint32_t best = UINT32_MAX;

	for (uint32_t k = 0; k <= words && best == UINT32_MAX; k++) {
		uint32_t w = (start / 64 + k) % words;
		uint64_t bits = s->openmap[w];

		if (k == 0)
			bits &= ~0ULL << (start % 64);
		if (bits)
			best = w * 64 + (uint32_t)__builtin_ctzll(bits);
		else if (k == words && (start % 64)) {
			bits = s->openmap[start / 64] & ((1ULL << (start % 64)) - 1);
			if (bits)
				best = (start / 64) * 64 + (uint32_t)__builtin_ctzll(bits);
		}
	}
	if (best == UINT32_MAX) {
		s->ticking = false;
		return;
	}
	s->tick_k = slot_tick(s, from_k, best);
	s->ticking = true;
	s->tick_gen++;
	emu_timer_at(n, s->tick_k * s->cfg->pktgen_tick, T_PKTGEN | s->tick_gen);
}

static void timer_for(struct emu_node *n, struct sw_state *s, struct desc *d, uint32_t slot)
{
	if (s->cfg->timer == EMU_SW_TIMER_EXACT) {
		emu_timer_at(n, d->deadline, T_DESC | (uint64_t)(d->gen & 0x0fffffff) << 32 | slot);
		return;
	}
	emu_time_t now = emu_node_now(n);
	uint64_t k0 = (now + s->cfg->pktgen_tick - 1) / s->cfg->pktgen_tick;
	uint64_t k = slot_tick(s, k0, slot);

	if (!s->ticking || k < s->tick_k)
		pktgen_arm(n, s, k0);
}

static void pktgen_tick(struct emu_node *n, struct sw_state *s)
{
	uint32_t slot = (uint32_t)(s->tick_k % s->cfg->descriptors);
	struct desc *d = desc_find(s, slot);
	emu_time_t now = emu_node_now(n);

	s->st.pktgen_ticks++;
	if (d && d->state == D_OPEN && now >= d->deadline)
		flush(n, s, d, slot, false);
	pktgen_arm(n, s, s->tick_k + 1);
}

/* ---------- Canary: the adaptive timeout (rule in canary_sw.h) ---------- */

static void ato_reset(struct sw_state *s)
{
	emu_time_t q = s->cfg->timeout;

	if (q < s->cfg->ato_floor)
		q = s->cfg->ato_floor;
	if (q > s->cfg->ato_ceil)
		q = s->cfg->ato_ceil;
	for (uint32_t k = 0; k < ATO_KEYS; k++)
		s->ato[k] = q;
}

/* The timeout of a new descriptor of block @id, root here if @root (a read of Q). */
static emu_time_t ato_claim(struct sw_state *s, uint32_t id, bool root)
{
	if (!s->ato)
		return s->cfg->timeout;
	emu_time_t q = s->ato[ato_key(id, root)];

	if (!s->st.ato_claims || q < s->st.ato_min)
		s->st.ato_min = q;
	if (q > s->st.ato_max)
		s->st.ato_max = q;
	s->st.ato_claims++;
	s->st.ato_sum += q;
	if (root) {
		s->st.ato_root_claims++;
		s->st.ato_root_sum += q;
	}
	return q;
}

/*
 * A straggler of block @id (root here if @root) passed: Q one step up. On
 * the switch a saturating add (the register holds Q - floor; the ceiling
 * is a compare in the same stateful ALU).
 */
static void ato_straggler(struct sw_state *s, uint32_t id, bool root)
{
	if (!s->ato)
		return;
	const struct emu_sw_cfg *c = s->cfg;
	emu_time_t *q = &s->ato[ato_key(id, root)];

	s->st.ato_up++;
	*q = c->ato_ceil - *q > c->ato_up ? *q + c->ato_up : c->ato_ceil;
}

/*
 * Block @id (root here if @root) completed here (its broadcast passed): Q
 * one step down, to the floor at most (on the switch the subtraction
 * saturates at 0).
 */
static void ato_complete(struct sw_state *s, uint32_t id, bool root)
{
	if (!s->ato)
		return;
	const struct emu_sw_cfg *c = s->cfg;
	emu_time_t *q = &s->ato[ato_key(id, root)];

	s->st.ato_samples++;
	*q = *q - c->ato_floor > c->ato_down ? *q - c->ato_down : c->ato_floor;
}

/*
 * ato_hint - the hosts' part of the adaptive timeout (rule in canary_sw.h):
 * a broadcast of block @id (root here if @root) leaves with this switch's Q
 * added to its switch field, in ns, at most the ceiling (and 65535). Q as
 * it was before the block steps it down: on the switch a read of r_ato in
 * the broadcast's own pass, the step comes later with the loopback sample.
 */
static void ato_hint(struct sw_state *s, struct emu_frame *f, struct emu_canary_hdr *h, uint32_t id, bool root)
{
	if (!s->ato)
		return;
	uint64_t v = h->swaddr + s->ato[ato_key(id, root)] / EMU_NS, cap = s->cfg->ato_ceil / EMU_NS;

	if (cap > EMU_ATO_HINT_MAX)
		cap = EMU_ATO_HINT_MAX;
	h->swaddr = (uint16_t)(v < cap ? v : cap);
	lh_wire_canary_write_hdr(f->data, h);
}

/* ---------- Canary: the pipeline ---------- */

static void canary_reduce(struct emu_node *n, struct sw_state *s, struct emu_frame *f, unsigned port,
			  struct emu_canary_hdr *h, unsigned nelem)
{
	uint32_t slot = emu_sw_slot_cfg(s->cfg, h->id);
	struct desc *d = desc_at(s, slot);
	emu_time_t now = emu_node_now(n);

	s->st.reduce_rx++;
	if (h->counter == 0) {
		/* no contribution: its elements must not reach a sum */
		s->st.malformed++;
		emu_frame_free(n, f);
		return;
	}
	if (d->state == D_SENT)
		d->state = D_FREE;	/* a new block, or a straggler after the broadcast: a new descriptor */
	if (d->state != D_FREE && !holds(d, h) && d->state == D_FLUSHED && now - d->ts > EMU_SW_RECLAIM) {
		s->st.reclaimed++;
		desc_free(n, s, d, slot);	/* abandoned block: reclaim */
	}
	if (d->state == D_FREE) {
		d->id = h->id;
		d->run = h->run;
		d->leader = h->dst;
		d->counter = h->counter;
		d->hosts = h->hosts;
		d->nelem = (uint16_t)nelem;
		d->children = 1ULL << port;
		d->ts = now;
		d->deadline = now + ato_claim(s, h->id, s->ato && is_root(n, d->leader));
		d->gen++;
		d->state = D_OPEN;
		d->acc = acc_get(s);
		lh_wire_get_elems(d->acc, f->data + EMU_CANARY_DATA_OFF, nelem);
		set_open(s, slot, true);
		s->st.allocated++;
		s->st.aggregated++;
		occ_update(s, now, +1);
		emu_frame_free(n, f);
		if (d->counter + 1 >= d->hosts && is_root(n, d->leader))
			flush(n, s, d, slot, true);
		else
			timer_for(n, s, d, slot);
		return;
	}
	if (holds(d, h)) {
		d->children |= 1ULL << port;
		if (d->state == D_OPEN && nelem == d->nelem && d->counter + h->counter <= d->hosts) {
			lh_wire_add_elems(d->acc, f->data + EMU_CANARY_DATA_OFF, nelem);
			d->counter = (uint16_t)(d->counter + h->counter);
			s->st.aggregated++;
			emu_frame_free(n, f);
			if (d->counter + 1 >= d->hosts && is_root(n, d->leader))
				flush(n, s, d, slot, true);
			return;
		}
		if (d->state == D_OPEN) {
			/* inconsistent with the descriptor: do not poison the sum */
			s->st.malformed++;
			emu_frame_free(n, f);
			return;
		}
		/* timeout already fired: a straggler goes on at once */
		s->st.stragglers++;
		ato_straggler(s, d->id, s->ato && is_root(n, d->leader));
		route_out(n, s, f);
		return;
	}
	/* another block holds the slot: collision, bypass to the leader */
	s->st.collisions++;
	h->swaddr = emu_node_desc(n)->swaddr;
	h->children = port;
	h->flags |= EMU_CANARY_F_BYPASS;
	lh_wire_canary_write_hdr(f->data, h);
	route_out(n, s, f);
}

static void canary_bcast(struct emu_node *n, struct sw_state *s, struct emu_frame *f, struct emu_canary_hdr *h)
{
	uint32_t slot = emu_sw_slot_cfg(s->cfg, h->id);
	struct desc *d = desc_at(s, slot);

	s->st.bcast_rx++;
	if (d->state == D_FREE || !holds(d, h)) {
		s->st.bcast_dropped++;
		emu_frame_free(n, f);
		return;
	}
	uint64_t children = d->children;
	bool root = s->ato && is_root(n, d->leader);

	if (d->state == D_SENT) {
		if (!(h->children & EMU_CANARY_BCAST_AGAIN)) {
			/* a second broadcast that goes only where the first did not */
			s->st.bcast_dropped++;
			emu_frame_free(n, f);
			return;
		}
		/* the leader's broadcast again: down the same ports once more (no hint: hw/canary.p4 adds none) */
		d->state = D_FREE;
		multicast(n, f, children, &s->st.bcast_copies);
		return;
	}
	ato_hint(s, f, h, d->id, root);
	ato_complete(s, d->id, root);
	desc_free(n, s, d, slot);
	d->state = D_SENT;
	multicast(n, f, children, &s->st.bcast_copies);
}

static void canary_restore(struct emu_node *n, struct sw_state *s, struct emu_frame *f, struct emu_canary_hdr *h)
{
	const struct emu_fabric *fab = emu_engine_fabric(n->eng);

	if (h->swaddr != emu_node_desc(n)->swaddr) {
		if (h->swaddr >= fab->nswitches) {
			s->st.malformed++;
			emu_frame_free(n, f);
			return;
		}
		uint64_t mask = emu_route_sw(n, fab->switches[h->swaddr]);

		if (!mask) {
			s->st.fwd.no_route++;
			emu_frame_free(n, f);
			return;
		}
		s->st.fwd.forwarded++;
		emu_send_pick(n, mask, h->id, emu_node_routing(n), f);
		return;
	}
	uint64_t ports = h->children;

	s->st.restores++;
	h->flags = EMU_CANARY_F_MULTICAST | EMU_CANARY_OP_BCAST;
	h->children = 0;
	h->swaddr = 0;
	lh_wire_canary_write_hdr(f->data, h);
	multicast(n, f, ports, &s->st.restore_copies);
}

/* ---------- static trees ---------- */

static const struct emu_sw_tree_node *tree_node(struct sw_state *s, unsigned tree)
{
	const struct emu_sw_trees *t = s->cfg->trees;

	if (!t || tree >= t->ntrees)
		return NULL;
	const struct emu_sw_tree_node *tn = &t->node[(size_t)tree * t->nswitches + s->my_index];

	return tn->nchildren ? tn : NULL;
}

static uint32_t tree_slot(struct sw_state *s, uint32_t id, unsigned tree)
{
	uint32_t share = s->cfg->descriptors / s->cfg->trees->ntrees;

	if (share == 0)
		share = 1;
	return (uint32_t)(((uint64_t)tree * share + (id & 0xffffff) % share) % s->cfg->descriptors);
}

static void tree_reduce(struct emu_node *n, struct sw_state *s, struct emu_frame *f, struct emu_canary_hdr *h,
			unsigned nelem);

/* Replay frames that waited for a slot. */
static void tree_release_held(struct emu_node *n, struct sw_state *s, struct emu_frame *held)
{
	while (held) {
		struct emu_frame *next = held->next;
		struct emu_canary_hdr hh;
		unsigned ne;

		held->next = NULL;
		if (lh_wire_canary_parse(held->data, held->len, &hh, &ne) == LH_WIRE_OK)
			tree_reduce(n, s, held, &hh, ne);
		else
			emu_frame_free(n, held);
		held = next;
	}
}

/*
 * A static-tree block that never completed here (a contribution was lost;
 * the hosts recovered it without the tree) would hold its slot forever:
 * after EMU_SW_RECLAIM the slot is freed for the blocks waiting on it.
 */
static void tree_reclaim(struct emu_node *n, struct sw_state *s, struct desc *d, uint32_t slot)
{
	struct emu_frame *held = d->held;

	d->held = NULL;
	s->st.reclaimed++;
	desc_free(n, s, d, slot);
	tree_release_held(n, s, held);
}

static void tree_complete(struct emu_node *n, struct sw_state *s, struct desc *d, uint32_t slot,
			  const struct emu_sw_tree_node *tn, unsigned tree)
{
	struct emu_frame *f = emu_frame_alloc_len(n, EMU_CANARY_DATA_OFF + 4 * d->nelem);
	const struct emu_fab_node *me = emu_node_desc(n);
	static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	bool root = tn->parent == EMU_PORT_NONE;
	struct emu_canary_hdr h = {
		.dst = d->leader, .id = d->id, .counter = d->counter, .hosts = d->hosts, .swaddr = (uint16_t)tree,
		.flags = root ? (EMU_CANARY_F_MULTICAST | EMU_CANARY_OP_TREE_BCAST) : EMU_CANARY_OP_TREE_REDUCE,
		.run = d->run,
	};

	f->len = lh_wire_canary_build(f->data, bcast_mac, me->mac, &h, d->acc, d->nelem);
	struct emu_frame *held = d->held;

	d->held = NULL;
	desc_free(n, s, d, slot);
	if (root) {
		s->st.bcast_rx++;
		multicast(n, f, tn->children, &s->st.bcast_copies);
	} else {
		s->st.tree_up++;
		emu_send(n, tn->parent, f);
	}
	/* frames of a later block that waited for this slot */
	tree_release_held(n, s, held);
}

static void tree_reduce(struct emu_node *n, struct sw_state *s, struct emu_frame *f, struct emu_canary_hdr *h,
			unsigned nelem)
{
	unsigned tree = h->swaddr;
	const struct emu_sw_tree_node *tn = tree_node(s, tree);

	if (!tn || h->counter == 0) {
		s->st.malformed++;
		emu_frame_free(n, f);
		return;
	}
	uint32_t slot = tree_slot(s, h->id, tree);
	struct desc *d = desc_at(s, slot);
	emu_time_t now = emu_node_now(n);

	s->st.reduce_rx++;
	if (d->state == D_SENT)
		d->state = D_FREE;	/* a Canary block's, broadcast */
	if (d->state != D_FREE && !holds(d, h) && now - d->ts > EMU_SW_RECLAIM)
		tree_reclaim(n, s, d, slot);	/* its block was recovered by the hosts */
	if (d->state != D_FREE && !holds(d, h)) {
		/* the previous block of this slot is not done here yet: wait
		 * (and look again when it would be abandoned) */
		s->st.tree_collisions++;
		f->next = NULL;
		struct emu_frame **pp = &d->held;

		if (!*pp)
			emu_timer_at(n, d->ts + EMU_SW_RECLAIM + 1, T_HOLD | (uint64_t)(d->gen & 0x0fffffff) << 32 | slot);
		while (*pp)
			pp = &(*pp)->next;
		*pp = f;
		return;
	}
	if (d->state == D_FREE) {
		d->gen++;
		d->id = h->id;
		d->run = h->run;
		d->leader = h->dst;
		d->counter = 0;
		d->hosts = h->hosts;
		d->nelem = (uint16_t)nelem;
		d->arrived = 0;
		d->ts = now;
		d->state = D_OPEN;
		d->held = NULL;
		d->acc = acc_get(s);
		memset(d->acc, 0, nelem * sizeof(int32_t));
		s->st.allocated++;
		occ_update(s, now, +1);
	} else if (d->state != D_OPEN || nelem != d->nelem || d->counter + h->counter > d->hosts) {
		/*
		 * inconsistent with the block: its sum would not be a valid
		 * frame; or the slot holds a Canary block of the same id whose
		 * sum is gone (flushed): only a forged frame gets here
		 */
		s->st.malformed++;
		emu_frame_free(n, f);
		return;
	}
	lh_wire_add_elems(d->acc, f->data + EMU_CANARY_DATA_OFF, nelem);
	d->counter = (uint16_t)(d->counter + h->counter);
	d->arrived++;
	s->st.aggregated++;
	emu_frame_free(n, f);
	if (d->arrived >= tn->nchildren)
		tree_complete(n, s, d, slot, tn, tree);
}

static void tree_bcast(struct emu_node *n, struct sw_state *s, struct emu_frame *f, struct emu_canary_hdr *h)
{
	const struct emu_sw_tree_node *tn = tree_node(s, h->swaddr);

	s->st.bcast_rx++;
	if (!tn) {
		s->st.bcast_dropped++;
		emu_frame_free(n, f);
		return;
	}
	multicast(n, f, tn->children, &s->st.bcast_copies);
}

/* ---------- dispatch ---------- */

static void sw_handle(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct sw_state *s = emu_node_state(n);
	struct emu_canary_hdr h;
	unsigned nelem;
	enum lh_wire_err e = lh_wire_canary_parse(f->data, f->len, &h, &nelem);

	if (e != LH_WIRE_OK) {
		s->st.malformed++;
		emu_frame_free(n, f);
		return;
	}
	if (h.flags & EMU_CANARY_F_BYPASS) {
		s->st.bypassed++;
		route_out(n, s, f);
		return;
	}
	switch (h.flags & EMU_CANARY_OP_MASK) {
	case EMU_CANARY_OP_REDUCE:
		canary_reduce(n, s, f, port, &h, nelem);
		break;
	case EMU_CANARY_OP_BCAST:
		canary_bcast(n, s, f, &h);
		break;
	case EMU_CANARY_OP_RESTORE:
		canary_restore(n, s, f, &h);
		break;
	case EMU_CANARY_OP_TREE_REDUCE:
		tree_reduce(n, s, f, &h, nelem);
		break;
	case EMU_CANARY_OP_TREE_BCAST:
		tree_bcast(n, s, f, &h);
		break;
	default:
		route_out(n, s, f);
		break;
	}
}

/* Frames that touch every element register: these take every pass. */
static bool needs_passes(const struct emu_frame *f)
{
	if (f->len < EMU_CANARY_DATA_OFF)
		return false;
	uint8_t flags = f->data[EMU_CANARY_FLAGS_OFF];

	switch (flags & EMU_CANARY_OP_MASK) {
	case EMU_CANARY_OP_REDUCE:
		return !(flags & EMU_CANARY_F_BYPASS);
	case EMU_CANARY_OP_BCAST:
	case EMU_CANARY_OP_RESTORE:
	case EMU_CANARY_OP_TREE_REDUCE:
	case EMU_CANARY_OP_TREE_BCAST:
		return true;
	default:
		return false;
	}
}

/* a pipeline pass's time (ps): one packet at pipe_gpps packets per ns */
static emu_time_t pass_time(const struct emu_sw_cfg *cfg)
{
	return (emu_time_t)(1000.0 / cfg->pipe_gpps + 0.5);
}

static void sw_recirc(struct emu_node *n, struct sw_state *s, struct emu_frame *f, unsigned port);

/*
 * A frame at the switch: any other than Canary's forwarded, a Canary frame
 * handled or, when it recirculates, through sw_recirc() (out of line: the
 * common paths save no registers).
 */
static void sw_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct sw_state *s = emu_node_state(n);

	if (lh_wire_ethertype(f->data, f->len) != EMU_ETHERTYPE_CANARY) {
		route_out(n, s, f);
		return;
	}
	if (!s->recirc || !needs_passes(f)) {
		sw_handle(n, f, port);
		return;
	}
	sw_recirc(n, s, f, port);
}

/*
 * The route op: a frame other than Canary's is forwarded as the fwd model
 * does (by the route cache an earlier switch filled, not its header: the
 * engine sends it on), a Canary frame handled by sw_rx() (its route cache
 * cleared first, as the engine does before rx: the switch may rewrite it).
 */
static __attribute__((noinline)) int sw_route_fwd(struct emu_node *n, struct emu_frame *f)
{
	return emu_fwd_route(n, f, &((struct sw_state *)emu_node_state(n))->st.fwd);
}

static __attribute__((noinline)) int sw_route_canary(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct sw_state *s = emu_node_state(n);

	f->rdst = EMU_RDST_NONE;
	if (!s->recirc || !needs_passes(f))
		sw_handle(n, f, port);
	else
		sw_recirc(n, s, f, port);
	return -EINPROGRESS;
}

/*
 * Each kind in a function of its own, reached by a tail call: a frame's
 * route saves only the registers its kind needs.
 */
static int sw_route(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	if (lh_wire_ethertype(f->data, f->len) != EMU_ETHERTYPE_CANARY)
		return sw_route_fwd(n, f);
	return sw_route_canary(n, f, port);
}

/* Recirculation: Canary frames occupy their pipeline for every pass. */
static __attribute__((noinline)) void sw_recirc(struct emu_node *n, struct sw_state *s, struct emu_frame *f,
						unsigned port)
{
	struct pipeq *q = &s->pipe[port / s->cfg->ports_per_pipe];
	emu_time_t now = emu_node_now(n);
	emu_time_t pass = s->pass ? s->pass : pass_time(s->cfg);
	emu_time_t start = q->busy > now ? q->busy : now;
	emu_time_t done = start + (s->cfg->passes - 1) * pass;

	/* the frame occupies the pipeline for every pass; the extra passes
	 * add their latency, and a busy pipeline adds queueing */
	q->busy = start + s->cfg->passes * pass;
	if (start > now)
		s->st.recirc_delayed++;
	s->st.recirc_wait += done - now;
	if (emu_node_can_hold(n) && !q->q.head && start - now <= s->cfg->passes * pass) {
		/*
		 * The FIFO model, when the pipeline holds the frame back by
		 * at most one frame's passes and no earlier frame waits in it
		 * as an event (deciding this one now would put it ahead of
		 * that one: the pipeline is FIFO): the frame is decided on arrival,
		 * and what it sends leaves when its passes are done (no event
		 * of its own: the pipeline delays the frame's departure; the
		 * switch's state is at most two frames' passes, a few
		 * nanoseconds, ahead). Behind a longer pipeline queue it waits
		 * for its turn (the timer below), so the descriptors see the
		 * frames when the pipeline does.
		 */
		emu_node_hold_until(n, done);
		sw_handle(n, f, port);
		emu_node_hold_until(n, 0);
		return;
	}
	f->user = port;
	f->t_sent = done;
	emu_fifo_push(&q->q, f);
	emu_timer_at(n, done, T_PIPE | (uint64_t)(q - s->pipe));
}

static void sw_timer(struct emu_node *n, uint64_t cookie)
{
	struct sw_state *s = emu_node_state(n);

	switch (T_KIND(cookie)) {
	case T_DESC: {
		uint32_t slot = (uint32_t)cookie;
		uint32_t gen = (uint32_t)(cookie >> 32) & 0x0fffffff;
		struct desc *d = desc_at(s, slot);

		if (d->state == D_OPEN && (d->gen & 0x0fffffff) == gen)
			flush(n, s, d, slot, false);
		break;
	}
	case T_PKTGEN:
		if ((uint32_t)cookie == s->tick_gen && s->ticking)
			pktgen_tick(n, s);
		break;
	case T_HOLD: {
		uint32_t slot = (uint32_t)cookie;
		struct desc *d = desc_at(s, slot);

		if (d->state != D_FREE && d->state != D_SENT &&
		    (d->gen & 0x0fffffff) == ((uint32_t)(cookie >> 32) & 0x0fffffff) && d->held &&
		    emu_node_now(n) - d->ts > EMU_SW_RECLAIM)
			tree_reclaim(n, s, d, slot);
		break;
	}
	case T_PIPE: {
		struct pipeq *q = &s->pipe[cookie & 0xffff];
		struct emu_frame *f = q->q.head;

		/*
		 * Every frame in the pipeline has its own timer, in order; one
		 * whose frame a failure erased finds a later frame (or none) at
		 * the head, whose own timer is still to come.
		 */
		if (!f || f->t_sent > emu_node_now(n))
			break;
		emu_fifo_pop(&q->q);
		sw_handle(n, f, (unsigned)f->user);
		break;
	}
	default:
		break;
	}
}

static int sw_init(struct emu_node *n, void *arg)
{
	struct sw_state *s = emu_node_state(n);
	const struct emu_sw_cfg *cfg = arg;

	/* per-tenant partitioning needs a slot per tenant: emu_sw_slot_cfg() stays in the table */
	if (!cfg || !cfg->descriptors || (cfg->timer == EMU_SW_TIMER_PKTGEN && !cfg->pktgen_tick) ||
	    cfg->partition > cfg->descriptors)
		return -EINVAL;
	s->cfg = cfg;
	s->table.cap = 64;
	s->table.e = emu_xcalloc(s->table.cap, sizeof(*s->table.e));
	s->openmap = emu_xcalloc((cfg->descriptors + 63) / 64, sizeof(uint64_t));
	s->npipes = (n->nports + cfg->ports_per_pipe - 1) / (cfg->ports_per_pipe ? cfg->ports_per_pipe : 1);
	if (!cfg->ports_per_pipe)
		return -EINVAL;
	s->pipe = emu_xcalloc(s->npipes + 1, sizeof(*s->pipe));
	s->my_index = emu_node_desc(n)->index;
	s->recirc = cfg->passes > 1 && cfg->pipe_gpps > 0;
	if (s->recirc && pass_time(cfg) <= UINT32_MAX)
		s->pass = (uint32_t)pass_time(cfg);
	if (cfg->adaptive) {
		if (!cfg->ato_floor || cfg->ato_floor + cfg->ato_up > cfg->ato_ceil)
			return -EINVAL;
		s->ato = emu_xcalloc(ATO_KEYS, sizeof(*s->ato));
		ato_reset(s);
	}
	return 0;
}

/*
 * Switch failure: the registers are lost, with the descriptors and their
 * timeouts (a timer that comes due while the switch is down is dropped;
 * one that comes due after its return finds its descriptor freed or taken
 * by a later block of another generation, and does nothing). The blocks it
 * held are recovered by the hosts: their requests reach the leaders, which
 * fail and re-issue them (Canary) or fall back (static trees). A switch
 * that returns starts with an empty table and empty pipelines.
 */
static void sw_state_change(struct emu_node *n, bool up)
{
	struct sw_state *s = emu_node_state(n);

	if (up)
		return;
	for (uint32_t i = 0; i < s->table.cap; i++) {
		if (!s->table.e[i].key)
			continue;
		struct desc *d = s->table.e[i].val;

		while (d->held) {
			struct emu_frame *f = d->held;

			d->held = f->next;
			emu_frame_free(n, f);
		}
		if (d->state == D_SENT)
			d->state = D_FREE;
		if (d->state != D_FREE) {
			s->st.wiped++;
			desc_free(n, s, d, s->table.e[i].key - 1);
		}
	}
	/* the pipelines empty: a frame that comes after the return does not wait for the lost ones */
	for (unsigned p = 0; p < s->npipes; p++) {
		while (s->pipe[p].q.head)
			emu_frame_free(n, emu_fifo_pop(&s->pipe[p].q));
		s->pipe[p].busy = 0;
	}
	s->ticking = false;
	s->tick_gen++;
	if (s->ato)
		ato_reset(s);	/* the registers are lost */
}

static void sw_fini(struct emu_node *n)
{
	struct sw_state *s = emu_node_state(n);

	if (!s->cfg)
		return;
	for (uint32_t k = 0; k < s->table.nslab; k++) {
		for (uint32_t i = 0; i < DESC_SLAB; i++)
			free(s->table.slab[k][i].acc);
		free(s->table.slab[k]);
	}
	free(s->table.slab);
	free(s->table.e);
	for (uint32_t i = 0; i < s->naccfree; i++)
		free(s->accfree[i]);
	free(s->accfree);
	free(s->openmap);
	free(s->pipe);
	free(s->ato);
	s->ato = NULL;
	memset(&s->table, 0, sizeof(s->table));
	s->accfree = NULL;
	s->naccfree = 0;
}

uint64_t emu_sw_mem_estimate(const struct emu_sw_cfg *cfg, unsigned nports, uint64_t touched)
{
	unsigned ppp = cfg->ports_per_pipe ? cfg->ports_per_pipe : 1;
	uint64_t cap = 64;

	while (2 * touched > cap)
		cap *= 2;
	return sizeof(struct sw_state) + (cfg->descriptors + 63) / 64 * sizeof(uint64_t) +
	       ((nports + ppp - 1) / ppp + 1) * sizeof(struct pipeq) + cap * (sizeof(uint32_t) + sizeof(struct desc *)) +
	       touched * sizeof(struct desc);
}

const struct emu_model_ops emu_sw_ops = {
	.name = "canary-switch",
	.state_size = sizeof(struct sw_state),
	.init = sw_init,
	.rx = sw_rx,
	.route = sw_route,
	.timer = sw_timer,
	.state = sw_state_change,
	.fini = sw_fini,
};
