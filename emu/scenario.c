// SPDX-License-Identifier: MIT
/*
 * DOC: scenario.c - build, run and measure one scenario. See scenario.h.
 */
#include "emu/scenario.h"
#include "emu/dist/dist.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/switch/fwd.h"
#include "emu/host/host_model.h"
#include "emu/pcap.h"
#include "emu/engine/rng.h"
#include "emu/engine/xbar.h"
#include "topologies/topo.h"
#include "emu/units.h"
#include "emu/engine/util.h"
#include "libhost/wire.h"

#define CWIN 65536

struct tenant {
	unsigned id;
	unsigned P;
	struct lh_peer *peers;
	uint32_t *hosts;	/* host index per rank */
	uint64_t seed;
	int32_t *a;		/* per rank */
	int32_t *c;		/* CWIN */
	int64_t *cpre;		/* prefix sums of c over two periods */
	uint32_t asum;
	int32_t *b;		/* b(i) for every element, when it fits */
	uint8_t *e;		/* the expected sum of every element, with b: in wire order (big-endian), as results come */
	size_t nb;
};

/*
 * A host's configuration, on a line of its own (s->hc is line-aligned):
 * the fields a block's steps read end emu_host_cfg and share a line with
 * the tenant's pointer.
 */
struct hctx {
	struct emu_host_cfg cfg;
	struct tenant *t;
} __attribute__((aligned(64)));

_Static_assert(offsetof(struct hctx, cfg.role) / 64 == offsetof(struct hctx, t) / 64 &&
	       offsetof(struct hctx, cfg.resume) / 64 == offsetof(struct hctx, t) / 64,
	       "hctx: a block's fields and the tenant in one line");

bool emu_scenario_can_lose(const struct emu_scn_cfg *cfg, const struct emu_fabric *fab)
{
	if (cfg->loss > 0 || cfg->lossy || cfg->nfail || cfg->ndrop || cfg->nattach)
		return true;
	for (uint32_t i = 0; fab && i < fab->nlinks; i++)
		if (fab->links[i].loss[0] > 0 || fab->links[i].loss[1] > 0)
			return true;
	return false;
}

unsigned emu_scenario_sketch(const struct emu_scn_cfg *cfg, const struct emu_fabric *fab)
{
	if (cfg->sketch != EMU_SCN_SKETCH_AUTO)
		return cfg->sketch;
	/* beside real hosts: their default (canary-allreduce(1) --sketch 0; libcanarympi has no sketch) */
	if (cfg->nattach)
		return 0;
	return emu_scenario_can_lose(cfg, fab) ? LH_SKETCH_LOSSY(cfg->elements) : 0;
}

void emu_scenario_defaults(struct emu_scn_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->series_every = EMU_US;
	c->topology = "fattree2:leaves=32,spines=32,hosts=32";
	c->algo = LH_ALGO_CANARY;
	c->ntrees = 1;
	c->hosts_pct = 50;
	c->size_bytes = 4u << 20;
	c->elements = 256;
	c->concurrent = 1;
	c->background = true;
	c->bg_msg = 64 * 1024;
	c->bg_load = 1;
	c->timeout = 1 * EMU_US;
	c->ato_floor = EMU_ATO_FLOOR;
	c->ato_ceil = EMU_ATO_CEIL;
	c->timer = EMU_SW_TIMER_EXACT;
	c->pktgen_tick = 1 * EMU_NS;
	c->routing = EMU_ROUTE_ADAPTIVE;
	c->profile = "tofino1";
	c->seed = 1;
	c->max_failures = 3;
	c->sketch = EMU_SCN_SKETCH_AUTO;
	c->priority = EMU_TC_RECOVERY;
	c->limit = 100 * EMU_MS;
	c->stall = 5 * EMU_MS;
	c->attach_hold = 2 * EMU_S;
	for (unsigned i = 0; i < EMU_SCN_MAX_ATTACH; i++) {
		c->attach[i].poll = 20 * EMU_US;
		c->attach[i].quiet = 1 * EMU_S;
		c->attach[i].queue_max = 1u << 20;
	}
}

int emu_timeout_adaptive_parse(const char *s, struct emu_scn_cfg *cfg)
{
	emu_time_t lo = EMU_ATO_FLOOR, hi = EMU_ATO_CEIL;

	if (*s) {
		char buf[64], *dash;

		if (*s != ':' || strlen(s + 1) >= sizeof(buf))
			return -EINVAL;
		strcpy(buf, s + 1);
		dash = strchr(buf, '-');
		if (!dash)
			return -EINVAL;
		*dash = 0;
		if (emu_parse_time(buf, &lo) || emu_parse_time(dash + 1, &hi))
			return -EINVAL;
	}
	if (lo == 0 || lo + EMU_ATO_UP > hi)
		return -EINVAL;
	cfg->timeout_adaptive = true;
	cfg->ato_floor = lo;
	cfg->ato_ceil = hi;
	return 0;
}

int emu_fail_parse(const char *s, struct emu_fail *f)
{
	char buf[128], *at, *dash, *slash;

	memset(f, 0, sizeof(*f));
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	if (!strncmp(buf, "switch:", 7) || !strncmp(buf, "node:", 5))
		f->is_node = true;
	else if (strncmp(buf, "link:", 5))
		return -EINVAL;
	char *what = strchr(buf, ':') + 1;

	at = strchr(what, '@');
	if (!at)
		return -EINVAL;
	*at++ = '\0';
	dash = strchr(at, '-');
	if (dash)
		*dash++ = '\0';
	if (emu_parse_time(at, &f->down))
		return -EINVAL;
	f->up = EMU_TIME_INF;
	if (dash && (emu_parse_time(dash, &f->up) || f->up <= f->down))
		return -EINVAL;
	f->port = -1;
	if (!f->is_node) {
		slash = strchr(what, '/');
		if (!slash)
			return -EINVAL;
		*slash++ = '\0';
		uint64_t p;

		if (emu_parse_u64(slash, &p) || p > 0xfffe)
			return -EINVAL;
		f->port = (int)p;
	}
	if (!*what || strlen(what) >= EMU_NAME_MAX)
		return -EINVAL;
	strcpy(f->node, what);
	return 0;
}

int emu_drop_parse(const char *s, struct emu_drop *d)
{
	char buf[128];
	uint64_t v;

	memset(d, 0, sizeof(*d));
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	char *hash = strchr(buf, '#'), *slash = strchr(buf, '/');

	if (!hash || !slash || slash > hash)
		return -EINVAL;
	*hash = '\0';
	*slash = '\0';
	if (emu_parse_u64(hash + 1, &d->nth) || d->nth == 0 || emu_parse_u64(slash + 1, &v) || v > 0xfffe ||
	    !*buf || strlen(buf) >= EMU_NAME_MAX)
		return -EINVAL;
	d->port = (unsigned)v;
	strcpy(d->node, buf);
	return 0;
}

/* ---------- inputs and expected sums ---------- */

static int32_t small(uint64_t h)
{
	return (int32_t)(h >> 43) - (1 << 20);
}

static int32_t tb_hash(const struct tenant *t, size_t i)
{
	return small(emu_hash64(t->seed ^ (0xb5ULL << 56) ^ i));
}

static inline int32_t tb(const struct tenant *t, size_t i)
{
	return i < t->nb ? t->b[i] : tb_hash(t, i);
}

static int32_t input_of(const struct tenant *t, unsigned rank, size_t i)
{
	return (int32_t)((uint32_t)t->a[rank] + (uint32_t)tb(t, i) + (uint32_t)t->c[(rank + i) & (CWIN - 1)]);
}

static int32_t expected(const struct tenant *t, size_t i)
{
	size_t lo = i & (CWIN - 1);
	int64_t w;

	/* sum of c[(lo + r) mod CWIN] for r < P, over a doubled prefix table */
	if (t->P <= CWIN)
		w = t->cpre[lo + t->P] - t->cpre[lo];
	else
		w = 0;
	return (int32_t)(t->asum + (uint32_t)t->P * (uint32_t)tb(t, i) + (uint32_t)w);
}

EMU_ELEM_CLONES static void host_input(const struct emu_host_cfg *c, size_t off, int32_t *out, size_t n)
{
	const struct tenant *t = ((const struct hctx *)c)->t;

	if (!t->b) {
		for (size_t k = 0; k < n; k++)
			out[k] = input_of(t, c->rank, off + k);
		return;
	}
	/* the same sum as input_of(), from the tables, in runs where c does not wrap */
	uint32_t ar = (uint32_t)t->a[c->rank];

	for (size_t k = 0; k < n;) {
		size_t j = (c->rank + off + k) & (CWIN - 1), run = n - k < CWIN - j ? n - k : CWIN - j;
		const uint32_t *b = (const uint32_t *)t->b + off + k, *cw = (const uint32_t *)t->c + j;
		int32_t *o = out + k;

		for (size_t i = 0; i < run; i++)
			o[i] = (int32_t)(ar + b[i] + cw[i]);
		k += run;
	}
}

EMU_ELEM_CLONES static void host_check(const struct emu_host_cfg *c, void *state, size_t off, const int32_t *d, size_t n)
{
	const struct tenant *t = ((const struct hctx *)c)->t;
	struct emu_host_state *s = state;
	uint32_t bad = 0;

	if (t->e) {
		const uint8_t *e = t->e + 4 * off;

		for (size_t k = 0; k < n; k++)
			bad += (uint32_t)d[k] != emu_get32(e + 4 * k);
	} else
		for (size_t k = 0; k < n; k++)
			bad += d[k] != expected(t, off + k);
	s->mismatches += bad;
}

/*
 * input_run - @run inputs ar + b[i] + cw[i] in wire order at @o: the frame
 * is no table, so no check for overlap; four vectors a step
 */
static inline void input_run(uint8_t *restrict o, const uint32_t *restrict b, const uint32_t *restrict cw, uint32_t ar,
			     size_t run)
{
#pragma GCC unroll 4
	for (size_t i = 0; i < run; i++)
		emu_put32(o + 4 * i, ar + b[i] + cw[i]);
}

/* input_run() of @n (a multiple of 64) inputs: no remainder, eight AVX2 vectors a step */
static inline void input_blocks(uint8_t *restrict o, const uint32_t *restrict b, const uint32_t *restrict cw,
				uint32_t ar, size_t n)
{
	for (size_t i = 0; i < n; i += 64) {
#pragma GCC unroll 8
		for (unsigned k = 0; k < 64; k++)
			emu_put32(o + 4 * (i + k), ar + b[i + k] + cw[i + k]);
	}
}

/* host_input_wire() in runs where c does not wrap (a table b), or element by element */
EMU_ELEM_CLONES static void host_input_wire_runs(const struct emu_host_cfg *c, size_t off, uint8_t *p, size_t n)
{
	const struct tenant *t = ((const struct hctx *)c)->t;

	if (!t->b) {
		for (size_t k = 0; k < n; k++)
			emu_put32(p + 4 * k, (uint32_t)input_of(t, c->rank, off + k));
		return;
	}
	uint32_t ar = (uint32_t)t->a[c->rank];

	for (size_t k = 0; k < n;) {
		size_t j = (c->rank + off + k) & (CWIN - 1), run = n - k < CWIN - j ? n - k : CWIN - j;

		input_run(p + 4 * k, (const uint32_t *)t->b + off + k, (const uint32_t *)t->c + j, ar, run);
		k += run;
	}
}

/*
 * host_input() in wire order, written straight into a frame: a block of 64
 * elements or a multiple whose c does not wrap by input_blocks() (the runs'
 * loops spend about a hundred instructions a block on their set-up and
 * remainders), any other by host_input_wire_runs()
 */
EMU_ELEM_CLONES static void host_input_wire(const struct emu_host_cfg *c, size_t off, uint8_t *p, size_t n)
{
	const struct tenant *t = ((const struct hctx *)c)->t;
	size_t j = (c->rank + off) & (CWIN - 1);

	if (!t->b || n % 64 || n > CWIN - j) {
		host_input_wire_runs(c, off, p, n);
		return;
	}
	input_blocks(p, (const uint32_t *)t->b + off, (const uint32_t *)t->c + j, (uint32_t)t->a[c->rank], n);
}

/* host_check() of a result in wire order, straight from its frame */
EMU_ELEM_CLONES static void host_check_wire(const struct emu_host_cfg *c, void *state, size_t off, const uint8_t *p,
					    size_t n)
{
	const struct tenant *t = ((const struct hctx *)c)->t;
	struct emu_host_state *s = state;
	uint32_t bad = 0;

	if (t->e) {
		const uint8_t *e = t->e + 4 * off;

		if (!lh_wire_elems_differ(p, e, n))
			return;
		/* byte for byte: no conversion; count the wrong elements */
		for (size_t k = 0; k < n; k++) {
			uint32_t x, y;

			memcpy(&x, p + 4 * k, 4);
			memcpy(&y, e + 4 * k, 4);
			bad += x != y;
		}
	} else
		for (size_t k = 0; k < n; k++)
			bad += (int32_t)emu_get32(p + 4 * k) != expected(t, off + k);
	s->mismatches += bad;
}

static void tenant_init(struct tenant *t, uint64_t seed, size_t count, bool table, bool wrong)
{
	struct emu_rng rng;

	t->seed = emu_hash64(seed * 0x9e3779b97f4a7c15ULL + t->id + 1);
	emu_rng_init(&rng, t->seed, 7);
	t->a = emu_xmalloc(t->P * sizeof(int32_t));
	t->c = emu_xmalloc(CWIN * sizeof(int32_t));
	t->cpre = emu_xmalloc((2 * CWIN + 1) * sizeof(int64_t));
	t->asum = 0;
	for (unsigned r = 0; r < t->P; r++) {
		t->a[r] = small(emu_rng_next(&rng));
		t->asum += (uint32_t)t->a[r];
	}
	for (unsigned k = 0; k < CWIN; k++)
		t->c[k] = small(emu_rng_next(&rng));
	t->cpre[0] = 0;
	for (unsigned k = 0; k < 2 * CWIN; k++)
		t->cpre[k + 1] = t->cpre[k] + t->c[k & (CWIN - 1)];
	t->nb = 0;
	t->b = NULL;
	t->e = NULL;
	if (table) {
		t->b = emu_xmalloc(count * sizeof(int32_t));
		for (size_t i = 0; i < count; i++)
			t->b[i] = tb_hash(t, i);
		t->nb = count;
		t->e = emu_xmalloc(count * sizeof(int32_t));
		for (size_t i = 0; i < count; i++)
			emu_put32(t->e + 4 * i, (uint32_t)expected(t, i));
	}
	if (wrong)
		t->a[0] = (int32_t)((uint32_t)t->a[0] + 1);	/* after the sums: they miss it */
}

/* ---------- static trees ---------- */

/*
 * Tree k of tenant t: root = a top-level switch drawn by the seed; every
 * participant's switch climbs to the root along the lowest-numbered
 * shortest-path port, and the union of those paths is the tree.
 */
static int build_trees(const struct emu_fabric *fab, struct tenant *ten, unsigned ntenants, unsigned ntrees,
		       uint64_t seed, struct emu_sw_trees *tr, char *err, size_t errlen)
{
	struct emu_routes *rt = emu_routes_compute(fab, NULL, NULL, 0);
	uint16_t top = 0;
	uint32_t ntop = 0, *tops;
	struct emu_rng rng;

	for (uint32_t s = 0; s < fab->nswitches; s++)
		if (fab->nodes[fab->switches[s]].level > top)
			top = fab->nodes[fab->switches[s]].level;
	tops = emu_xmalloc(fab->nswitches * sizeof(*tops));
	for (uint32_t s = 0; s < fab->nswitches; s++)
		if (fab->nodes[fab->switches[s]].level == top)
			tops[ntop++] = fab->switches[s];
	tr->ntrees = ntenants * ntrees;
	tr->nswitches = fab->nswitches;
	tr->node = emu_xcalloc((size_t)tr->ntrees * fab->nswitches, sizeof(*tr->node));
	tr->root = emu_xcalloc(tr->ntrees, sizeof(*tr->root));
	emu_rng_init(&rng, seed, 0x7eee);
	for (unsigned t = 0; t < ntenants; t++) {
		for (unsigned k = 0; k < ntrees; k++) {
			unsigned id = t * ntrees + k;
			/* distinct roots while there are enough top switches */
			uint32_t pick = (uint32_t)emu_rng_below(&rng, ntop);

			if (ntrees <= ntop)
				for (unsigned j = 0; j < k; j++)
					if (tr->root[t * ntrees + j] == tops[pick]) {
						pick = (pick + 1) % ntop;
						j = (unsigned)-1;
					}
			uint32_t root = tops[pick];
			struct emu_sw_tree_node *base = &tr->node[(size_t)id * fab->nswitches];

			tr->root[id] = root;
			base[fab->nodes[root].index].parent = EMU_PORT_NONE;
			for (unsigned r = 0; r < ten[t].P; r++) {
				uint32_t h = ten[t].hosts[r];
				uint32_t sw = fab->attach_node[h];
				struct emu_sw_tree_node *tn = &base[fab->nodes[sw].index];

				tn->children |= 1ULL << fab->attach_port[h];
				while (sw != root) {
					uint64_t mask = emu_routes_mask_sw(rt, fab, sw, root);

					if (!mask) {
						snprintf(err, errlen, "static trees: %s cannot reach root %s",
							 fab->nodes[sw].name, fab->nodes[root].name);
						free(tops);
						emu_routes_destroy(rt);
						return -EINVAL;
					}
					unsigned p = (unsigned)__builtin_ctzll(mask);
					const struct emu_fab_port *fp = emu_fabric_port(fab, sw, p);
					struct emu_sw_tree_node *cur = &base[fab->nodes[sw].index];
					struct emu_sw_tree_node *up = &base[fab->nodes[fp->peer_node].index];

					cur->parent = (uint16_t)p;
					up->children |= 1ULL << fp->peer_port;
					sw = fp->peer_node;
				}
			}
			for (uint32_t s = 0; s < fab->nswitches; s++)
				base[s].nchildren = (uint16_t)__builtin_popcountll(base[s].children);
		}
	}
	free(tops);
	emu_routes_destroy(rt);
	return 0;
}

/* ---------- the run ---------- */

/*
 * pktgen_lag - how much later than its deadline a switch may flush a
 * descriptor: with --timer pktgen the clock packet reaches a slot once per
 * revolution of the table (descriptors x tick), so up to one revolution.
 * The hosts add it to the switch timeout they size their window and
 * retransmission timeout with (a flush a revolution late is not a loss).
 */
static emu_time_t pktgen_lag(const struct emu_scn_cfg *cfg, uint32_t descriptors)
{
	return cfg->timer == EMU_SW_TIMER_PKTGEN ? (emu_time_t)descriptors * cfg->pktgen_tick : 0;
}

static emu_time_t base_rtt(const struct emu_fabric *fab, unsigned elements)
{
	/* host - leaf - (spine | agg - core - agg) - leaf - host, there and back */
	unsigned maxlevel = 1;

	for (uint32_t s = 0; s < fab->nswitches; s++)
		if (fab->nodes[fab->switches[s]].level > maxlevel)
			maxlevel = fab->nodes[fab->switches[s]].level;
	unsigned hops = 2 * maxlevel;
	const struct emu_fab_link *l = &fab->links[0];
	emu_time_t ft = emu_tx_time(EMU_CANARY_DATA_OFF + 4 * elements, l->rate_bps[0]);

	return 2 * hops * (l->latency[0] + ft);
}

static uint32_t find_port_link(const struct emu_fabric *fab, uint32_t node, int port)
{
	if (port < 0 || (unsigned)port >= fab->nodes[node].nports)
		return EMU_NONE32;
	return emu_fabric_port(fab, node, (unsigned)port)->link;
}

/* ---------- per-node records: what the report needs from each node ---------- */

/*
 * The results are computed from plain records of every host, switch and
 * directed link. A single process fills them all; in a distributed run
 * every rank fills those of its own nodes and sends them to rank 0
 * (recs_gather), so the report is computed from identical inputs in the
 * same order either way.
 */
struct host_rec {
	uint8_t has_req, data_done, done, attached, pad[4];
	struct lh_ar_wait wait;		/* not done: what it waits for */
	uint64_t delivered;
	uint64_t mismatches;
	uint64_t bg_bytes;
	uint64_t bg_wire_offered;
	uint64_t bg_wire_sent;
	uint64_t other_run;		/* frames of another run dropped (lh_host_other_run) */
	struct lh_ar_stats st;
};

struct port_rec {
	uint64_t busy_ps, tx_frames, drops_queue, drops_loss, drops_down;
};

struct recs {
	struct host_rec *host;		/* by host index */
	struct emu_sw_stats *sw;	/* by switch index */
	struct port_rec *port;		/* by directed link, 2 * link + side */
	uint32_t nhost, nsw, nport;
};

static struct recs *recs_new(const struct emu_fabric *fab)
{
	struct recs *r = emu_xcalloc(1, sizeof(*r));

	r->nhost = fab->nhosts;
	r->nsw = fab->nswitches;
	r->nport = 2 * fab->nlinks;
	r->host = emu_xcalloc(r->nhost + 1, sizeof(*r->host));
	r->sw = emu_xcalloc(r->nsw + 1, sizeof(*r->sw));
	r->port = emu_xcalloc(r->nport + 1, sizeof(*r->port));
	return r;
}

static void recs_free(struct recs *r)
{
	if (!r)
		return;
	free(r->host);
	free(r->sw);
	free(r->port);
	free(r);
}

static void recs_fill(struct recs *r, struct emu_engine *eng, const struct emu_fabric *fab)
{
	for (uint32_t i = 0; i < fab->nhosts; i++) {
		if (!emu_engine_node_local(eng, fab->hosts[i]))
			continue;
		struct emu_host_state *s = emu_node_state(emu_engine_node(eng, fab->hosts[i]));
		struct host_rec *h = &r->host[i];

		if (!s)
			continue;
		h->delivered = s->delivered;
		h->mismatches = s->mismatches;
		h->attached = s->attached;
		if (s->req) {
			h->has_req = 1;
			h->data_done = lh_req_data_done(s->req);
			h->done = lh_req_done(s->req);
			h->st = *lh_req_stats(s->req);
			lh_req_wait(s->req, &h->wait);
		}
		if (s->lh) {
			const struct lh_bg_stats *bs = lh_host_bg_stats(s->lh);

			h->bg_bytes = bs->bytes_sent;
			h->bg_wire_offered = bs->wire_bytes_offered;
			h->bg_wire_sent = bs->wire_bytes_sent;
			h->other_run = lh_host_other_run(s->lh);
		}
	}
	for (uint32_t i = 0; i < fab->nswitches; i++)
		if (emu_engine_node_local(eng, fab->switches[i]))
			r->sw[i] = *emu_sw_stats_of(emu_engine_node(eng, fab->switches[i]));
	for (uint32_t i = 0; i < fab->nlinks; i++)
		for (int d = 0; d < 2; d++) {
			const struct emu_fab_link *l = &fab->links[i];

			if (!emu_engine_node_local(eng, l->node[d]))
				continue;
			const struct emu_port *ps = &emu_engine_node(eng, l->node[d])->ports[l->port[d]];

			r->port[2 * i + d] = (struct port_rec){
				.busy_ps = ps->busy_ps, .tx_frames = ps->tx_frames, .drops_queue = ps->drops_queue,
				.drops_loss = ps->drops_loss, .drops_down = ps->drops_down,
			};
		}
}

/* RESULT payload: this header, then (u32 index, record) for hosts, switches, ports. */
struct recs_hdr {
	uint32_t nhost, nsw, nport, pad;
	uint64_t events, queue_events, frame_hops, pool_frames, cross_events, spilled, peak_rss;
	emu_time_t last_event;
	uint64_t msgs, bytes, rejected;
};

/*
 * Append the non-zero records of @base (@n of @size bytes) to @buf at *@o
 * as (u32 index, record); return how many. Records of other ranks' nodes are
 * zero on this rank, and zero records need no sending.
 */
static uint32_t pack_recs(uint8_t *buf, size_t *o, const void *base, uint32_t n, size_t size)
{
	static const uint8_t zero[sizeof(struct emu_sw_stats) > sizeof(struct host_rec) ?
				  sizeof(struct emu_sw_stats) : sizeof(struct host_rec)];
	uint32_t count = 0;

	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *rec = (const uint8_t *)base + (size_t)i * size;

		if (!memcmp(rec, zero, size))
			continue;
		memcpy(buf + *o, &i, 4);
		memcpy(buf + *o + 4, rec, size);
		*o += 4 + size;
		count++;
	}
	return count;
}

/* Copy @count (index, record) pairs at @p + *@o into @base; -1 if an index is out of range. */
static int unpack_recs(const uint8_t *p, size_t *o, uint32_t count, void *base, uint32_t n, size_t size)
{
	for (uint32_t k = 0; k < count; k++, *o += 4 + size) {
		uint32_t i;

		memcpy(&i, p + *o, 4);
		if (i >= n)
			return -1;
		memcpy((uint8_t *)base + (size_t)i * size, p + *o + 4, size);
	}
	return 0;
}

/*
 * recs_merge - check one rank's RESULT payload (@p, @len bytes) to its end
 * and copy its records into @r; its header goes to @h. Return 0, or -1 if
 * it is malformed (@r may then hold some of its records).
 */
static int recs_merge(struct recs *r, const uint8_t *p, size_t len, struct recs_hdr *h)
{
	size_t hs = 4 + sizeof(struct host_rec), ss = 4 + sizeof(struct emu_sw_stats), ps = 4 + sizeof(struct port_rec);
	size_t o = sizeof(*h);

	if (len < sizeof(*h))
		return -1;
	memcpy(h, p, sizeof(*h));
	if (h->nhost > r->nhost || h->nsw > r->nsw || h->nport > r->nport ||
	    len != sizeof(*h) + h->nhost * hs + h->nsw * ss + h->nport * ps)
		return -1;
	if (unpack_recs(p, &o, h->nhost, r->host, r->nhost, sizeof(*r->host)) ||
	    unpack_recs(p, &o, h->nsw, r->sw, r->nsw, sizeof(*r->sw)) ||
	    unpack_recs(p, &o, h->nport, r->port, r->nport, sizeof(*r->port)))
		return -1;
	return 0;
}

int emu_scenario_check_result(const void *p, size_t len, uint32_t nhost, uint32_t nsw, uint32_t nport)
{
	struct recs r = {
		.nhost = nhost, .nsw = nsw, .nport = nport,
		.host = emu_xcalloc(nhost + 1, sizeof(*r.host)),
		.sw = emu_xcalloc(nsw + 1, sizeof(*r.sw)),
		.port = emu_xcalloc(nport + 1, sizeof(*r.port)),
	};
	struct recs_hdr h;
	int rc = recs_merge(&r, p, len, &h);

	free(r.host);
	free(r.sw);
	free(r.port);
	return rc;
}

static int recs_gather(struct emu_dist *d, struct recs *r, struct emu_run_stats *run,
		       uint64_t *peak_rss, struct emu_scn_result *res, const struct emu_dist_stats *before,
		       char *err, size_t errlen)
{
	struct emu_dist_stats now;

	emu_dist_stats(d, &now);
	unsigned P = emu_dist_nranks(d), me = emu_dist_rank(d);
	size_t hs = 4 + sizeof(struct host_rec), ss = 4 + sizeof(struct emu_sw_stats), ps = 4 + sizeof(struct port_rec);

	if (me != 0) {
		struct recs_hdr h = {
			.events = run->events, .queue_events = run->queue_events, .frame_hops = run->frame_hops,
			.pool_frames = run->pool_frames,
			.cross_events = run->cross_events, .spilled = run->spilled, .peak_rss = *peak_rss,
			.last_event = run->last_event, .msgs = now.msgs_sent - before->msgs_sent,
			.bytes = now.bytes_sent - before->bytes_sent, .rejected = now.rejected + now.auth_rejected,
		};
		size_t cap = sizeof(h) + r->nhost * hs + r->nsw * ss + r->nport * ps, o = sizeof(h);
		uint8_t *buf = emu_xmalloc(cap);
		h.nhost = pack_recs(buf, &o, r->host, r->nhost, sizeof(*r->host));
		h.nsw = pack_recs(buf, &o, r->sw, r->nsw, sizeof(*r->sw));
		h.nport = pack_recs(buf, &o, r->port, r->nport, sizeof(*r->port));
		memcpy(buf, &h, sizeof(h));
		int rc = emu_dist_gather(d, buf, o, NULL, NULL);

		free(buf);
		if (rc)
			snprintf(err, errlen, "distributed run failed: %s", emu_dist_error(d));
		return rc;
	}
	void *parts[EMU_DIST_MAX_RANKS];
	size_t lens[EMU_DIST_MAX_RANKS];

	if (emu_dist_gather(d, NULL, 0, parts, lens)) {
		snprintf(err, errlen, "distributed run failed: %s", emu_dist_error(d));
		return -1;
	}
	int rc = 0;

	res->dist_ranks = P;
	res->dist_windows = now.windows - before->windows;
	res->dist_msgs = now.msgs_sent - before->msgs_sent;
	res->dist_bytes = now.bytes_sent - before->bytes_sent;
	res->dist_rejected = now.rejected + now.auth_rejected;
	for (unsigned q = 1; q < P; q++) {
		struct recs_hdr h;

		if (recs_merge(r, parts[q], lens[q], &h)) {
			rc = -1;
			break;
		}
		run->events += h.events;
		run->queue_events += h.queue_events;
		run->frame_hops += h.frame_hops;
		run->pool_frames += h.pool_frames;
		run->cross_events += h.cross_events;
		run->spilled += h.spilled;
		*peak_rss += h.peak_rss;
		if (h.last_event > run->last_event)
			run->last_event = h.last_event;
		res->dist_msgs += h.msgs;
		res->dist_bytes += h.bytes;
		res->dist_rejected += h.rejected;
	}
	for (unsigned q = 1; q < P; q++)
		free(parts[q]);
	if (rc) {
		snprintf(err, errlen, "distributed run failed: a rank sent malformed results");
		return -1;
	}
	if (!run->stopped || run->emulated == 0)
		run->emulated = run->last_event;
	run->workers = emu_dist_wbase(d, P);
	run->frame_hops_per_s = run->wall_ns ? (double)run->frame_hops * 1e9 / (double)run->wall_ns : 0;
	return 0;
}

/* The engine's progress, as result elements delivered (the caller's cfg->progress). */
struct scn_progress {
	const struct emu_scn_cfg *cfg;
	struct emu_engine *eng;
	const struct emu_fabric *fab;
	const uint32_t *ar;	/* host indexes: the allreduce hosts first */
	uint32_t nar;
};

/*
 * scn_progress - sum what this process's allreduce hosts hold of their
 * result. The engine calls it between windows, with every worker waiting
 * at the barrier, so the host states hold still.
 */
static void scn_progress(void *ctx, emu_time_t now, uint64_t hosts_done, uint64_t hosts)
{
	const struct scn_progress *p = ctx;
	uint64_t got = 0, want = 0;

	(void)hosts_done;
	(void)hosts;
	if (!p->eng)
		return;
	for (uint32_t i = 0; i < p->nar; i++) {
		uint32_t node = p->fab->hosts[p->ar[i]];
		const struct emu_host_state *s;

		if (!emu_engine_node_local(p->eng, node) || !(s = emu_node_state(emu_engine_node(p->eng, node))))
			continue;
		uint64_t count = p->cfg->size_bytes / 4, have = s->delivered;
		uint64_t P = p->nar / (p->cfg->concurrent ? p->cfg->concurrent : 1);

		/*
		 * The ring delivers nothing in its first half (reduce-scatter):
		 * count the data it received in both halves instead, 2(P - 1)/P of
		 * the count in all, so an estimate comes from the start.
		 */
		if (p->cfg->algo == LH_ALGO_RING && s->req && P > 1) {
			uint64_t work = lh_req_stats(s->req)->frames_recv * p->cfg->elements * P / (2 * (P - 1));

			have = work > have ? work : have;
		}
		got += have < count ? have : count;
		want += count;
	}
	p->cfg->progress(p->cfg->progress_ctx, now, got, want);
}

/* describe_links - each directed link's ends (link i, direction d is 2i + d), rates and latencies */
static void describe_links(const struct emu_fabric *fab, struct emu_scn_result *res)
{
	res->links = emu_xcalloc(2 * (size_t)fab->nlinks + 1, sizeof(*res->links));
	res->rate_min_bps = res->latency_min = UINT64_MAX;
	for (uint32_t i = 0; i < fab->nlinks; i++)
		for (int d = 0; d < 2; d++) {
			const struct emu_fab_link *l = &fab->links[i];
			struct emu_scn_link *e = &res->links[2 * i + d];

			snprintf(e->from, sizeof(e->from), "%s/%d", fab->nodes[l->node[d]].name, (int)l->port[d]);
			snprintf(e->to, sizeof(e->to), "%s/%d", fab->nodes[l->node[!d]].name, (int)l->port[!d]);
			res->rate_min_bps = l->rate_bps[d] < res->rate_min_bps ? l->rate_bps[d] : res->rate_min_bps;
			res->rate_max_bps = l->rate_bps[d] > res->rate_max_bps ? l->rate_bps[d] : res->rate_max_bps;
			res->latency_min = l->latency[d] < res->latency_min ? l->latency[d] : res->latency_min;
			res->latency_max = l->latency[d] > res->latency_max ? l->latency[d] : res->latency_max;
		}
}

int emu_scenario_check_blocks(const struct emu_scn_cfg *cfg, char *err, size_t errlen)
{
	/* a Canary block carries elements - K of the data (AUTO: the caller has not resolved it) */
	unsigned k = cfg->algo == LH_ALGO_CANARY && cfg->sketch != EMU_SCN_SKETCH_AUTO && cfg->sketch < cfg->elements
			     ? cfg->sketch : 0;

	if (cfg->algo != LH_ALGO_RING && cfg->elements) {
		unsigned data = cfg->elements - k;
		uint64_t nblocks = (cfg->size_bytes / 4 + data - 1) / data;
		uint64_t room = LH_BLOCK_IDS / (cfg->max_failures + 2ULL);

		if (nblocks > room) {
			uint64_t maxf = LH_BLOCK_IDS / nblocks;
			int o = snprintf(err, errlen,
					 "--size: %llu bytes are %llu blocks of %u elements%s; with --max-failures %u at most "
					 "%llu bytes fit (block ids are 24 bits, a block needs max-failures + 2)",
					 (unsigned long long)cfg->size_bytes, (unsigned long long)nblocks, data,
					 k ? " (beside the sketch)" : "", cfg->max_failures,
					 (unsigned long long)(room * data * 4));

			if (maxf >= 2 && o > 0 && (size_t)o < errlen)
				snprintf(err + o, errlen - (size_t)o, "; or --max-failures at most %llu",
					 (unsigned long long)(maxf - 2));
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * check_memory - what the run will allocate at least in this process,
 * against what is available: the hosts' allreduce state (libhost's own
 * count: per block, per led block, the ring's copies under loss), the
 * input and expected-sum tables, the switches (their router state under
 * --router merlin, and a descriptor for each slot
 * the blocks touch on the leaves that must see them, at least half the
 * smaller of table and blocks: hashing collides), the engine's nodes,
 * ports and routing tables (one more per distinct failure time). Frames
 * and events in flight come on top (the lossless buffers alone can hold
 * --buffer per port). With ranks, each holds about its share of the
 * hosts and switches but all of the fabric. A --pcap capture holds at
 * most EMU_PCAP_MEM (it spills the rest to disk). Sets res->mem_estimate; on
 * -ENOMEM @err says what the run needs, what is available, and what to
 * reduce for the largest part.
 */
static int check_memory(const struct emu_scn_cfg *cfg, const struct emu_fabric *fab, uint32_t nar,
			uint32_t descriptors, struct emu_scn_result *res, char *err, size_t errlen)
{
	unsigned K = cfg->concurrent, ranks = cfg->dist ? emu_dist_nranks(cfg->dist) : 1;
	uint64_t count = cfg->size_bytes / 4;
	struct lh_ar_cfg ar = {
		.algo = cfg->algo, .elements = cfg->elements, .ntrees = cfg->ntrees,
		.sketch = cfg->algo == LH_ALGO_CANARY ? cfg->sketch : 0,
		.reliable = emu_scenario_can_lose(cfg, fab),
	};
	/* parts: allreduce state, input tables, switches, engine */
	uint64_t part[4] = { 0 };

	for (unsigned t = 0; t < K; t++) {
		uint32_t P = (uint32_t)((uint64_t)nar * (t + 1) / K - (uint64_t)nar * t / K);

		part[0] += (uint64_t)P * lh_allreduce_mem(&ar, P, count);
	}
	part[0] = part[0] / ranks + (uint64_t)fab->nhosts / ranks * sizeof(struct emu_host_state);
	if ((uint64_t)cfg->size_bytes * K <= (256ULL << 20))
		part[1] = 2 * cfg->size_bytes * K;
	struct emu_sw_cfg sc = { .descriptors = descriptors, .ports_per_pipe = 16 };

	for (uint32_t s = 0; s < fab->nswitches; s++) {
		unsigned np = fab->nodes[fab->switches[s]].nports;

		part[2] += emu_sw_mem_estimate(&sc, np, 0);
		if (cfg->router == EMU_ROUTER_MERLIN)
			part[2] += emu_xbar_mem_estimate(np);
	}
	if (cfg->algo != LH_ALGO_RING) {
		uint64_t nblocks = (count + cfg->elements - ar.sketch - 1) / (cfg->elements - ar.sketch);
		uint64_t touched = (nblocks < descriptors ? nblocks : descriptors) / 2;
		uint32_t per_leaf = 1, leaves;

		for (uint32_t h = 0; h < fab->nhosts; h++)
			per_leaf = fab->nodes[fab->attach_node[h]].nports > per_leaf ? fab->nodes[fab->attach_node[h]].nports
										     : per_leaf;
		leaves = (nar + per_leaf - 1) / per_leaf;
		part[2] += leaves * (emu_sw_mem_estimate(&sc, 0, touched) - emu_sw_mem_estimate(&sc, 0, 0));
	}
	part[2] /= ranks;
	{
		emu_time_t times[2 * EMU_SCN_MAX_FAIL];
		unsigned nt = 0;

		for (unsigned i = 0; i < cfg->nfail; i++)
			for (int e = 0; e < 2; e++) {
				emu_time_t t = e ? cfg->fail[i].up : cfg->fail[i].down;
				bool seen = t == EMU_TIME_INF;

				for (unsigned j = 0; j < nt && !seen; j++)
					seen = times[j] == t;
				if (!seen)
					times[nt++] = t;
			}
		part[3] = emu_engine_mem_estimate(fab, 1 + nt);
	}
	uint64_t cap = cfg->pcap ? EMU_PCAP_MEM : 0;
	uint64_t need = part[0] + part[1] + part[2] + part[3] + cap;
	const char *what = "given";
	uint64_t avail = cfg->mem_available ? cfg->mem_available : emu_mem_available(&what);

	res->mem_estimate = need;
	emu_mem_estimate_set(need);
	if (need <= avail)
		return 0;
	static const char *const reduce[4] = {
		"--size or --hosts (each allreduce host keeps per-block state)",
		"--size or --concurrent (each allreduce's inputs and sums are tabulated)",
		"--descriptors or the fabric",
		"the fabric or the number of --fail times (a routing table each)",
	};
	unsigned big = 0;
	char a[4][32], sz[32], av[32], capt[64] = "";

	for (unsigned i = 1; i < 4; i++)
		if (part[i] > part[big])
			big = i;
	for (unsigned i = 0; i < 4; i++)
		emu_fmt_size(part[i], a[i], sizeof(a[i]));
	if (cap) {
		snprintf(capt, sizeof(capt), ", --pcap buffers ");
		emu_fmt_size(cap, capt + strlen(capt), sizeof(capt) - strlen(capt));
	}
	snprintf(err, errlen,
		 "the run needs at least %s of memory (allreduce state %s for %u hosts%s, input tables %s, switches %s, "
		 "fabric and routing %s%s; frames in flight come on top) but only %s are available (%s); reduce %s",
		 emu_fmt_size(need, sz, sizeof(sz)), a[0], nar,
		 cfg->algo == LH_ALGO_RING && ar.reliable ? " (the ring keeps what it sent under loss or failures)" : "",
		 a[1], a[2], a[3], capt, emu_fmt_size(avail, av, sizeof(av)), what, reduce[big]);
	return -ENOMEM;
}


/*
 * One scenario run, as the phases of emu_scenario_run(): the state every
 * phase shares. Each phase returns 0, or a negative errno with the message
 * in err; scn_free() releases whatever the phases built, whichever failed.
 */
struct scn {
	const struct emu_scn_cfg *cfg;
	struct emu_scn_result *res;
	char *err;
	size_t errlen;

	struct emu_fabric *fab;
	struct emu_engine *eng;
	uint32_t descriptors;	/* per switch, from --descriptors or the profile */

	/* placement */
	uint32_t nh, nar, nbg;	/* hosts of the fabric, in allreduces, background */
	unsigned K;		/* tenants */
	uint32_t *order;	/* host indexes: the allreduce hosts first, then background */
	struct lh_peer *allpeers, *bgpeers;
	struct tenant *ten;

	/* programs */
	struct emu_sw_trees trees;
	struct emu_sw_cfg swcfg;
	struct lh_ar_cfg ar;	/* the allreduce configuration... */
	struct lh_ar_cfg *arv;	/* ...per tenant (tree ids of tenant t start at t * ntrees) */
	struct hctx *hc;	/* by host index */
	struct scn_progress prog;

	struct emu_pcap *pcap;
	struct emu_series *series;
	struct emu_dist_stats dstats;
	struct recs *recs;

	struct emu_attach_cfg *att;	/* cfg->nattach, with their interfaces open */
	emu_time_t hold;		/* with --attach: every allreduce host sends from here on */
};

/* scn_check_cfg - the options that need no fabric to check */
static int scn_check_cfg(struct scn *s)
{
	const struct emu_scn_cfg *cfg = s->cfg;

	s->res->prof = emu_tofino_profile_get(cfg->profile ? cfg->profile : "tofino1");
	if (!s->res->prof) {
		snprintf(s->err, s->errlen, "--profile: unknown profile '%s' (tofino1, tofino2, unbounded)", cfg->profile);
		return -EINVAL;
	}
	if (cfg->elements < 1 || cfg->elements > EMU_CANARY_MAX_ELEMENTS) {
		snprintf(s->err, s->errlen, "--elements: %u is not in [1, %d]", cfg->elements, EMU_CANARY_MAX_ELEMENTS);
		return -EINVAL;
	}
	if (cfg->sketch > LH_SKETCH_MAX || (cfg->sketch && cfg->sketch >= cfg->elements)) {
		snprintf(s->err, s->errlen, "--sketch: %u must be at most %d and below --elements (%u)", cfg->sketch,
			 LH_SKETCH_MAX, cfg->elements);
		return -EINVAL;
	}
	if (cfg->size_bytes < 4 || cfg->size_bytes % 4) {
		snprintf(s->err, s->errlen, "--size: %llu bytes is not a positive multiple of 4 (int32 elements)",
			 (unsigned long long)cfg->size_bytes);
		return -EINVAL;
	}
	if (cfg->concurrent < 1 || cfg->concurrent > 255) {
		snprintf(s->err, s->errlen, "--concurrent: %u is not in [1, 255]", cfg->concurrent);
		return -EINVAL;
	}
	if (emu_scenario_check_blocks(cfg, s->err, s->errlen))
		return -EINVAL;
	if (cfg->xbar_bps && cfg->router != EMU_ROUTER_MERLIN) {
		snprintf(s->err, s->errlen, "--xbar-bw: the crossbar is part of --router merlin");
		return -EINVAL;
	}
	if (cfg->obuf_bytes && cfg->router != EMU_ROUTER_MERLIN) {
		snprintf(s->err, s->errlen, "--obuf: output buffers are part of --router merlin");
		return -EINVAL;
	}
	if (cfg->adaptive_threshold > 0 && cfg->router != EMU_ROUTER_MERLIN) {
		snprintf(s->err, s->errlen, "--adaptive-threshold: part of --router merlin (fifo: half of --buffer)");
		return -EINVAL;
	}
	if (!(cfg->bg_load > 0 && cfg->bg_load <= 1)) {
		snprintf(s->err, s->errlen, "--bg-load: %g is not in (0, 1]", cfg->bg_load);
		return -EINVAL;
	}
	if (cfg->algo == LH_ALGO_STATIC && (cfg->ntrees < 1 || cfg->ntrees > 64)) {
		snprintf(s->err, s->errlen, "--algo static:N: N = %u is not in [1, 64]", cfg->ntrees);
		return -EINVAL;
	}
	return 0;
}

/* set_rates - every link at @bps, both directions (--rate) */
static void set_rates(struct emu_fabric *fab, uint64_t bps)
{
	for (uint32_t i = 0; i < fab->nlinks; i++)
		fab->links[i].rate_bps[0] = fab->links[i].rate_bps[1] = bps;
}

/*
 * check_mtu - every link carries the algorithm's largest frame: a Canary
 * (or static tree) packet, 19 header bytes and 4 per element after the
 * Ethernet header, or a ring packet in UDP (IPv4 20, UDP 8, ring header
 * 16). A frame larger than a link's MTU would be dropped there: refuse,
 * naming the smallest MTU that works and the elements that fit.
 */
static int check_mtu(const struct emu_scn_cfg *cfg, const struct emu_fabric *fab, char *err, size_t errlen)
{
	uint32_t hdr = cfg->algo == LH_ALGO_RING ? EMU_IPV4_HLEN + EMU_UDP_HLEN + 16 : EMU_CANARY_HLEN;
	uint32_t need = hdr + 4 * cfg->elements;

	for (uint32_t i = 0; i < fab->nlinks; i++) {
		const struct emu_fab_link *l = &fab->links[i];
		char where[300] = "";

		if (l->mtu >= need)
			continue;
		if (l->line)
			snprintf(where, sizeof(where), " (%s:%u)", cfg->topology, l->line);
		snprintf(err, errlen,
			 "--elements %u: %s frames need an MTU of at least %u bytes, but link %s-%s has %u%s; "
			 "use an mtu of %u or more, or --elements %u or fewer",
			 cfg->elements, cfg->algo == LH_ALGO_RING ? "ring" : "Canary", need,
			 fab->nodes[l->node[0]].name, fab->nodes[l->node[1]].name, l->mtu, where, need,
			 l->mtu > hdr + 4 ? (l->mtu - hdr) / 4 : 1);
		return -EINVAL;
	}
	return 0;
}

/*
 * check_retx - a retransmission timeout shorter than one data frame's time
 * on the slowest link re-sends before the first copy can have left: the
 * hosts retransmit millions of times and the run livelocks. Refuse it,
 * naming that frame time.
 */
static int check_retx(const struct emu_scn_cfg *cfg, const struct emu_fabric *fab, char *err, size_t errlen)
{
	uint32_t bytes = cfg->algo == LH_ALGO_RING ? EMU_UDP_PAYLOAD_OFF + 16 + 4 * cfg->elements
						   : EMU_CANARY_DATA_OFF + 4 * cfg->elements;
	uint64_t slowest = UINT64_MAX;

	if (!cfg->retx_timeout)
		return 0;
	for (uint32_t i = 0; i < fab->nlinks; i++)
		for (int d = 0; d < 2; d++)
			slowest = fab->links[i].rate_bps[d] < slowest ? fab->links[i].rate_bps[d] : slowest;
	emu_time_t ft = emu_tx_time(bytes, slowest);

	if (cfg->retx_timeout >= ft)
		return 0;
	char t[32], f[32];

	snprintf(err, errlen,
		 "--retx-timeout: %s is shorter than one %s data frame (%u bytes) takes on a %g Gb/s link (%s); "
		 "use at least that", emu_fmt_time(cfg->retx_timeout, t, sizeof(t)),
		 cfg->algo == LH_ALGO_RING ? "ring" : "Canary", bytes, (double)slowest / 1e9, emu_fmt_time(ft, f, sizeof(f)));
	return -EINVAL;
}

/*
 * scn_build - load the fabric and size the switch program against the
 * profile. Returns 1 when the run ends here with success (--resources).
 */
static int scn_build(struct scn *s)
{
	const struct emu_scn_cfg *cfg = s->cfg;
	struct emu_scn_result *res = s->res;
	unsigned maxports = 0;

	s->fab = emu_topo_load(cfg->topology, s->err, s->errlen);
	if (!s->fab)
		return -EINVAL;
	if (cfg->rate_bps)
		set_rates(s->fab, cfg->rate_bps);
	if (check_mtu(cfg, s->fab, s->err, s->errlen) || check_retx(cfg, s->fab, s->err, s->errlen))
		return -EINVAL;
	snprintf(res->topology, sizeof(res->topology), "%s", s->fab->spec[0] ? s->fab->spec : cfg->topology);
	if (cfg->algo == LH_ALGO_STATIC)
		snprintf(res->algo, sizeof(res->algo), "static:%u", cfg->ntrees);
	else
		snprintf(res->algo, sizeof(res->algo), "%s", lh_algo_name(cfg->algo));

	for (uint32_t i = 0; i < s->fab->nswitches; i++)
		if (s->fab->nodes[s->fab->switches[i]].nports > maxports)
			maxports = s->fab->nodes[s->fab->switches[i]].nports;
	s->descriptors = cfg->descriptors ? cfg->descriptors : res->prof->max_descriptors;
	if (res->prof->unbounded && !cfg->descriptors)
		s->descriptors = 32768;
	if (cfg->table_per_tenant && s->descriptors < cfg->concurrent) {
		snprintf(s->err, s->errlen,
			 "--table per-tenant: %u descriptors cannot give each of the %u tenants (--concurrent) "
			 "a slot; use --descriptors %u or more", s->descriptors, cfg->concurrent, cfg->concurrent);
		return -EINVAL;
	}
	emu_tofino_need_ato(res->prof, cfg->elements, s->descriptors, maxports, cfg->shards,
			cfg->routing != EMU_ROUTE_ECMP, cfg->timeout_adaptive, &res->need);
	if (cfg->resources_only)
		return res->need.fits ? 1 : -ENOSPC;
	if (!res->need.fits && cfg->algo != LH_ALGO_RING) {
		snprintf(s->err, s->errlen, "the switch program does not fit %s: %s", res->prof->name, res->need.why);
		return -ENOSPC;
	}
	return 0;
}

/* scn_check_hosts - how many allreduce hosts, checked against the fabric and the tenants */
static int scn_check_hosts(struct scn *s)
{
	const struct emu_scn_cfg *cfg = s->cfg;
	uint32_t nh = s->fab->nhosts;
	uint32_t nar = cfg->hosts ? cfg->hosts : (uint32_t)llround(cfg->hosts_pct / 100.0 * nh);

	if (nar > nh) {
		snprintf(s->err, s->errlen, "--hosts: %u allreduce hosts but the fabric has %u", nar, nh);
		return -EINVAL;
	}
	if (nar < 2) {
		snprintf(s->err, s->errlen, "--hosts: %u allreduce host%s of the fabric's %u; an allreduce needs at least 2",
			 nar, nar == 1 ? "" : "s", nh);
		return -EINVAL;
	}
	if (nar < 2 * cfg->concurrent) {
		snprintf(s->err, s->errlen, "--concurrent: %u tenants of at least 2 hosts need %u allreduce hosts (have %u)",
			 cfg->concurrent, 2 * cfg->concurrent, nar);
		return -EINVAL;
	}
	if (nar / cfg->concurrent > 0xffff) {
		snprintf(s->err, s->errlen, "--hosts: at most 65535 hosts per allreduce");
		return -EINVAL;
	}
	s->nh = nh;
	s->nar = nar;
	s->K = cfg->concurrent;
	return 0;
}

/*
 * scn_place - which host does what: a seeded shuffle of the hosts; the
 * first nar are split into K tenants (ranks in host order, as a scheduler
 * hands them out), the rest send background traffic.
 */
static int scn_place(struct scn *s)
{
	const struct emu_scn_cfg *cfg = s->cfg;
	uint32_t nh, nar;
	struct emu_rng rng;
	int rc = scn_check_hosts(s);

	if (!rc)
		rc = check_memory(cfg, s->fab, s->nar, s->descriptors, s->res, s->err, s->errlen);
	if (rc)
		return rc;
	nh = s->nh;
	nar = s->nar;
	s->order = emu_xmalloc(nh * sizeof(*s->order));
	for (uint32_t i = 0; i < nh; i++)
		s->order[i] = i;
	emu_rng_init(&rng, cfg->seed, 0x9ace);
	for (uint32_t i = nh - 1; i > 0; i--) {
		uint32_t j = (uint32_t)emu_rng_below(&rng, i + 1), tmp = s->order[i];

		s->order[i] = s->order[j];
		s->order[j] = tmp;
	}
	/* --attach: the attached hosts first (in --attach's order), then the others by the seed */
	for (unsigned a = 0, k = 0; a < cfg->nattach; a++) {
		uint32_t node = emu_fabric_find(s->fab, cfg->attach[a].node);

		if (node == EMU_NONE32 || s->fab->nodes[node].kind != EMU_NODE_HOST)
			continue;	/* scn_attach() says so */
		for (uint32_t i = k; i < nh; i++)
			if (s->order[i] == s->fab->nodes[node].index) {
				uint32_t tmp = s->order[k];

				s->order[k++] = s->order[i];
				s->order[i] = tmp;
				break;
			}
	}
	s->allpeers = emu_xmalloc(nh * sizeof(*s->allpeers));
	for (uint32_t i = 0; i < nh; i++) {
		const struct emu_fab_node *n = &s->fab->nodes[s->fab->hosts[i]];

		s->allpeers[i].ipv4 = n->ipv4;
		memcpy(s->allpeers[i].mac, n->mac, 6);
	}
	s->ten = emu_xcalloc(s->K, sizeof(*s->ten));
	for (unsigned t = 0; t < s->K; t++) {
		uint32_t lo = (uint32_t)((uint64_t)nar * t / s->K), hi = (uint32_t)((uint64_t)nar * (t + 1) / s->K);
		struct tenant *T = &s->ten[t];

		T->id = t;
		T->P = hi - lo;
		T->hosts = emu_xmalloc(T->P * sizeof(uint32_t));
		memcpy(T->hosts, s->order + lo, T->P * sizeof(uint32_t));
		for (unsigned i = 1; i < T->P; i++)
			for (unsigned j = i; j > 0 && T->hosts[j - 1] > T->hosts[j]; j--) {
				uint32_t tmp = T->hosts[j];

				T->hosts[j] = T->hosts[j - 1];
				T->hosts[j - 1] = tmp;
			}
		T->peers = emu_xmalloc(T->P * sizeof(*T->peers));
		for (unsigned r = 0; r < T->P; r++)
			T->peers[r] = s->allpeers[T->hosts[r]];
		/* tabulate b() unless that would take more than 256 MiB */
		tenant_init(T, cfg->seed, cfg->size_bytes / 4, (uint64_t)cfg->size_bytes * s->K <= (256ULL << 20),
			    cfg->wrong_input);
	}
	s->nbg = cfg->background ? nh - nar : 0;
	if (s->nbg == 1)
		s->nbg = 0;	/* one host cannot send to another background host */
	s->bgpeers = emu_xmalloc((s->nbg + 1) * sizeof(*s->bgpeers));
	for (uint32_t i = 0; i < s->nbg; i++)
		s->bgpeers[i] = s->allpeers[s->order[nar + i]];
	s->res->hosts_total = nh;
	s->res->ar_hosts = nar;
	s->res->bg_hosts = s->nbg;
	return 0;
}

/*
 * write_peers - cfg->attach_peers: the peer table (RANK IPV4 MAC lines, as
 * canary-allreduce --peers reads it) of every tenant with an attached
 * host; FILE for one tenant, FILE.T for tenant T of several.
 */
static int write_peers(struct scn *s)
{
	const struct emu_scn_cfg *cfg = s->cfg;

	for (unsigned t = 0; t < s->K; t++) {
		bool has = false;
		char path[4096], ip[20];
		FILE *f;

		for (unsigned i = 0; i < s->res->nattached; i++)
			has = has || s->res->attached[i].tenant == t;
		if (!has)
			continue;
		if (s->K == 1)
			snprintf(path, sizeof(path), "%s", cfg->attach_peers);
		else
			snprintf(path, sizeof(path), "%s.%u", cfg->attach_peers, t);
		f = fopen(path, "w");
		if (!f) {
			snprintf(s->err, s->errlen, "--attach-peers: %s: %s", path, strerror(errno));
			return -EINVAL;
		}
		fprintf(f, "# canary-emu: tenant %u, %u hosts: RANK IPV4 MAC\n", t, s->ten[t].P);
		for (unsigned i = 0; i < s->res->nattached; i++)
			if (s->res->attached[i].tenant == t) {
				const struct emu_fab_node *fn = &s->fab->nodes[emu_fabric_find(s->fab, s->res->attached[i].node)];
				const struct emu_fab_port *fp = &s->fab->ports[fn->port0];

				/* the real hosts pace at this without --rate (a veth says 10 Gb/s) */
				fprintf(f, "# rate %llu\n", (unsigned long long)s->fab->links[fp->link].rate_bps[fp->side]);
				break;
			}
		fprintf(f, "# run %u\n", cfg->run_id);	/* the run id the real hosts' frames carry (--run-id) */
		for (unsigned r = 0; r < s->ten[t].P; r++) {
			const uint8_t *m = s->ten[t].peers[r].mac;

			fprintf(f, "%u %s %02x:%02x:%02x:%02x:%02x:%02x\n", r, emu_ipv4_str(s->ten[t].peers[r].ipv4, ip),
				m[0], m[1], m[2], m[3], m[4], m[5]);
		}
		if (fclose(f)) {
			snprintf(s->err, s->errlen, "--attach-peers: %s: %s", path, strerror(errno));
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * scn_attach - the attached hosts (--attach): each must be a host of an
 * allreduce; open its interface and say which rank it is (the process
 * on the other side needs it).
 */
static int scn_attach(struct scn *s)
{
	const struct emu_scn_cfg *cfg = s->cfg;
	char why[256];

	if (!cfg->nattach)
		return 0;
	s->att = emu_xcalloc(cfg->nattach, sizeof(*s->att));
	for (unsigned i = 0; i < cfg->nattach; i++) {
		const struct emu_attach_cfg *a = &cfg->attach[i];
		uint32_t node = emu_fabric_find(s->fab, a->node);
		struct emu_scn_attached *ra = &s->res->attached[i];
		bool found = false;

		if (node == EMU_NONE32 || s->fab->nodes[node].kind != EMU_NODE_HOST) {
			snprintf(s->err, s->errlen, "--attach: '%s' is not a host of the fabric", a->node);
			return -EINVAL;
		}
		for (unsigned k = 0; k < i; k++)
			if (!strcmp(cfg->attach[k].node, a->node) || !strcmp(cfg->attach[k].ifname, a->ifname)) {
				snprintf(s->err, s->errlen, "--attach: %s=%s repeats a host or an interface", a->node,
					 a->ifname);
				return -EINVAL;
			}
		for (unsigned t = 0; t < s->K && !found; t++)
			for (unsigned r = 0; r < s->ten[t].P && !found; r++)
				if (s->ten[t].hosts[r] == s->fab->nodes[node].index)
					found = true, ra->tenant = t, ra->rank = r;
		if (!found) {
			snprintf(s->err, s->errlen, "--attach: %s is not in an allreduce: the attached hosts take part "
				 "first, then others by --seed, so --hosts must be at least the %u attached (times "
				 "--concurrent)", a->node, cfg->nattach);
			return -EINVAL;
		}
		s->att[i] = *a;
		s->att[i].algo = (int)cfg->algo;
		s->att[i].run = cfg->run_id;
		s->att[i].ntrees = cfg->algo == LH_ALGO_STATIC ? cfg->ntrees : 0;
		s->att[i].tree_base = ra->tenant * cfg->ntrees;	/* as scn_configure()'s tree_base */
		s->att[i].afp = lh_afp_open(a->ifname, 0, why, sizeof(why));
		if (!s->att[i].afp) {
			snprintf(s->err, s->errlen, "--attach: %s=%s: %s", a->node, a->ifname, why);
			return -EINVAL;
		}
		snprintf(ra->node, sizeof(ra->node), "%s", a->node);
		snprintf(ra->ifname, sizeof(ra->ifname), "%s", a->ifname);
		s->res->nattached = i + 1;
	}
	if (cfg->attach_peers && write_peers(s))
		return -EINVAL;
	/* last: who reads this may start the real hosts now (the interfaces are open, the tables written) */
	for (unsigned i = 0; i < cfg->nattach; i++) {
		const struct emu_scn_attached *ra = &s->res->attached[i];

		fprintf(stderr, "canary-emu: %s is attached to %s: rank %u of %u, tenant %u\n", ra->node, ra->ifname,
			ra->rank, s->ten[ra->tenant].P, ra->tenant);
	}
	return 0;
}

/* program_attached - the attached hosts' model; every allreduce host holds its sends until attach_hold */
static void program_attached(struct scn *s)
{
	const struct emu_scn_cfg *cfg = s->cfg;

	if (!cfg->nattach)
		return;
	s->hold = cfg->attach_hold;
	for (uint32_t i = 0; i < s->nh; i++)
		s->hc[i].cfg.hold = s->hold;
	emu_engine_set_stall_origin(s->eng, s->hold);	/* the hold is not a stall */
	for (unsigned i = 0; i < cfg->nattach; i++)
		emu_engine_set_model(s->eng, emu_fabric_find(s->fab, s->att[i].node), &emu_attach_ops, &s->att[i]);
}

/*
 * scn_tally_attached - the attached hosts' counters. A run that fell
 * behind real time failed, whatever its allreduces' rows say: it says so
 * (replacing the reason scn_tally_allreduces() gave).
 */
static void scn_tally_attached(struct scn *s)
{
	struct emu_scn_result *res = s->res;
	const struct emu_run_stats *run = &res->run;
	uint64_t rate = 0;
	bool refused = false;

	for (uint32_t i = 0; i < s->fab->nlinks; i++)
		rate = s->fab->links[i].rate_bps[0] > rate ? s->fab->links[i].rate_bps[0] : rate;
	for (unsigned i = 0; i < res->nattached; i++) {
		const struct emu_attach_state *as =
			emu_node_state(emu_engine_node(s->eng, emu_fabric_find(s->fab, s->att[i].node)));

		if (as) {
			res->attached[i].st = as->st;
			res->other_run += as->st.in_other_run;
		}
		if (as && as->st.algo_refused && !refused && as->st.trees_differ) {
			refused = true;
			res->exact = false;
			snprintf(res->stuck, sizeof(res->stuck),
				 "%s (%s) sends block %u up static tree %u, the emulator runs %s and puts it on tree %u: "
				 "refused at that frame (give the real hosts and canary-emu the same static:N, and the "
				 "same tenant)", s->att[i].node, s->att[i].ifname, as->st.tree_block, as->st.tree_seen,
				 res->algo, as->st.tree_want);
		} else if (as && as->st.algo_refused && !refused) {
			refused = true;
			res->exact = false;
			snprintf(res->stuck, sizeof(res->stuck),
				 "%s (%s) sends %s frames, the emulator runs %s: refused at its first frame (give the real "
				 "hosts and canary-emu the same algorithm)", s->att[i].node, s->att[i].ifname,
				 lh_algo_name((enum lh_algo)as->st.algo_seen), res->algo);
		}
	}
	if (!run->lag_exceeded)
		return;
	res->exact = false;	/* the run was cut short: the real hosts cannot have finished */
	emu_scn_lag_message(res->stuck, sizeof(res->stuck), run, s->cfg->lag_max_ns, rate);
}

void emu_scn_lag_message(char *buf, size_t len, const struct emu_run_stats *run, uint64_t lag_max_ns, uint64_t rate)
{
	if (!(run->pace > 0 && run->pace < 1)) {
		/* no measured pace below real time to scale --rate by (the lag came at once, not over a stretch) */
		snprintf(buf, len, "fell %.1f ms behind real time (--max-lag %.1f ms) at %.3f s; lower --rate or raise --max-lag",
			 (double)run->final_lag_ns / 1e6, (double)lag_max_ns / 1e6, (double)run->emulated / 1e12);
		return;
	}
	snprintf(buf, len,
		 "fell %.1f ms behind real time (--max-lag %.1f ms) at %.3f s: it kept %.0f%% of real time, so "
		 "it sustains links of about %.0f Mb/s here; lower --rate", (double)run->final_lag_ns / 1e6,
		 (double)lag_max_ns / 1e6, (double)run->emulated / 1e12, 100 * run->pace, (double)rate * run->pace / 1e6);
}

/* the engine's cfg.sample: a row of the time series */
static void scn_sample(void *ctx, emu_time_t t)
{
	struct scn *s = ctx;

	if (s->series)
		emu_series_sample(s->series, t);
}

/* scn_engine - the engine over the fabric, with its loss, failures and forced drops scheduled */
static int scn_engine(struct scn *s)
{
	const struct emu_scn_cfg *cfg = s->cfg;
	struct emu_fabric *fab = s->fab;
	struct emu_engine_cfg ecfg = {
		.workers = cfg->workers, .per_node = cfg->per_node, .lossy = cfg->lossy || (cfg->loss > 0 && !cfg->lossless),
		.tc_mode = cfg->priority,
		.seed = cfg->seed, .clock = cfg->clock, .dilation = cfg->dilation, .end = cfg->limit,
		.lag_bound_ns = cfg->lag_bound_ns,
		.routing = cfg->routing, .buffer_bytes = cfg->buffer_bytes,
		.commit_bytes = cfg->commit_bytes, .commit_idle = cfg->commit_idle, .no_ahead = cfg->no_ahead,
		.router = cfg->router, .xbar_arb = cfg->xbar_arb, .xbar_bps = cfg->xbar_bps,
		.obuf_bytes = cfg->obuf_bytes, .adaptive_threshold = cfg->adaptive_threshold,
		.progress = cfg->progress ? scn_progress : NULL, .progress_ctx = &s->prog, .stall = cfg->stall,
		.dist = cfg->dist, .pin_offset = cfg->pin_offset, .lag_max_ns = cfg->lag_max_ns,
		.spin_ns = cfg->nattach ? 30000 : 0,
		.sample_every = cfg->series ? cfg->series_every : 0, .sample = scn_sample, .sample_ctx = s,
	};

	s->prog = (struct scn_progress){ .cfg = cfg, .fab = fab, .ar = s->order, .nar = s->nar };
	if (cfg->loss > 0)
		for (uint32_t i = 0; i < fab->nlinks; i++)
			fab->links[i].loss[0] = fab->links[i].loss[1] = cfg->loss;
	s->eng = emu_engine_create(fab, &ecfg, s->err, s->errlen);
	if (!s->eng)
		return -EINVAL;
	s->prog.eng = s->eng;
	s->res->xbar_bps = emu_engine_xbar_bps(s->eng);
	for (unsigned i = 0; i < cfg->nfail; i++) {
		const struct emu_fail *f = &cfg->fail[i];
		uint32_t node = emu_fabric_find(fab, f->node), link;

		if (node == EMU_NONE32) {
			snprintf(s->err, s->errlen, "--fail: no node named '%s'", f->node);
			return -EINVAL;
		}
		if (f->is_node) {
			emu_engine_schedule_node(s->eng, node, f->down, false);
			if (f->up != EMU_TIME_INF)
				emu_engine_schedule_node(s->eng, node, f->up, true);
			continue;
		}
		link = find_port_link(fab, node, f->port);
		if (link == EMU_NONE32) {
			snprintf(s->err, s->errlen, "--fail: %s has no link on port %d", f->node, f->port);
			return -EINVAL;
		}
		emu_engine_schedule_link(s->eng, link, f->down, false);
		if (f->up != EMU_TIME_INF)
			emu_engine_schedule_link(s->eng, link, f->up, true);
	}
	for (unsigned i = 0; i < cfg->ndrop; i++) {
		const struct emu_drop *dr = &cfg->drop[i];
		uint32_t node = emu_fabric_find(fab, dr->node);

		if (node == EMU_NONE32 || emu_engine_drop_nth(s->eng, node, dr->port, dr->nth)) {
			snprintf(s->err, s->errlen, "--drop: %s has no linked port %u", dr->node, dr->port);
			return -EINVAL;
		}
		for (unsigned j = 0; j < i; j++)
			if (cfg->drop[j].port == dr->port && emu_fabric_find(fab, cfg->drop[j].node) == node) {
				/* the engine keeps one frame number per port: a second would replace the first */
				snprintf(s->err, s->errlen, "--drop: %s/%u is given twice (one lost frame per port)",
					 dr->node, dr->port);
				return -EINVAL;
			}
	}
	return 0;
}

/* scn_configure - the switch program's and the allreduce's configuration */
static int scn_configure(struct scn *s)
{
	const struct emu_scn_cfg *cfg = s->cfg;
	const struct emu_scn_result *res = s->res;

	if (cfg->algo == LH_ALGO_STATIC &&
	    build_trees(s->fab, s->ten, s->K, cfg->ntrees, cfg->seed, &s->trees, s->err, s->errlen))
		return -EINVAL;
	s->swcfg = (struct emu_sw_cfg){
		.descriptors = s->descriptors, .timeout = cfg->timeout, .timer = cfg->timer,
		.pktgen_tick = cfg->pktgen_tick, .passes = res->need.passes, .pipe_gpps = res->prof->pipe_gpps,
		.ports_per_pipe = res->prof->ports_per_pipe, .trees = cfg->algo == LH_ALGO_STATIC ? &s->trees : NULL,
		.partition = cfg->table_per_tenant ? s->K : 0,
		.adaptive = cfg->timeout_adaptive, .ato_floor = cfg->ato_floor, .ato_ceil = cfg->ato_ceil,
		.ato_up = EMU_ATO_UP, .ato_down = EMU_ATO_DOWN,
	};
	s->ar = (struct lh_ar_cfg){
		.algo = cfg->algo, .elements = cfg->elements, .ntrees = cfg->ntrees, .window = cfg->window,
		.rtt = base_rtt(s->fab, cfg->elements),
		.switch_timeout = cfg->algo == LH_ALGO_CANARY ? cfg->timeout + pktgen_lag(cfg, s->descriptors) : 0,
		.retx_timeout = cfg->retx_timeout, .max_failures = cfg->max_failures, .noise = cfg->noise,
		.sketch = cfg->algo == LH_ALGO_CANARY ? cfg->sketch : 0,
		.noise_delay = 1 * LH_US, .reliable = emu_scenario_can_lose(cfg, s->fab),
	};
	s->res->sketch = s->ar.sketch;
	s->arv = emu_xcalloc(s->K, sizeof(*s->arv));
	for (unsigned t = 0; t < s->K; t++) {
		s->arv[t] = s->ar;
		s->arv[t].tree_base = t * cfg->ntrees;
	}
	return 0;
}

/* scn_program_hosts - every host's role and configuration, then every node's model */
static void scn_program_hosts(struct scn *s)
{
	const struct emu_scn_cfg *cfg = s->cfg;
	const struct emu_fabric *fab = s->fab;

	s->hc = emu_xaligned(s->nh * sizeof(*s->hc));
	for (unsigned t = 0; t < s->K; t++)
		for (unsigned r = 0; r < s->ten[t].P; r++) {
			struct hctx *h = &s->hc[s->ten[t].hosts[r]];

			h->t = &s->ten[t];
			h->cfg.role = EMU_HOST_ALLREDUCE;
			h->cfg.peers = s->ten[t].peers;
			h->cfg.npeers = s->ten[t].P;
			h->cfg.rank = r;
			h->cfg.tenant = t;
			h->cfg.run = cfg->run_id;
			h->cfg.ar = &s->arv[t];
			h->cfg.count = cfg->size_bytes / 4;
			h->cfg.input = host_input;
			h->cfg.check = host_check;
			h->cfg.input_wire = host_input_wire;
			h->cfg.check_wire = host_check_wire;
		}
	for (uint32_t i = 0; i < s->nbg; i++) {
		struct hctx *h = &s->hc[s->order[s->nar + i]];

		h->cfg.role = EMU_HOST_BACKGROUND;
		h->cfg.bg_peers = s->bgpeers;
		h->cfg.nbg = s->nbg;
		h->cfg.bg_msg = cfg->bg_msg;
		h->cfg.bg_load = cfg->bg_load;
		h->cfg.bg_volume = cfg->bg_volume;
		h->cfg.bg_me = i;
		h->cfg.bg_pattern = cfg->bg_pattern;
		h->cfg.bg_seed = emu_hash64(cfg->seed ^ 0xbacc);
	}
	/* hosts that go down and come back resume their timers (host_model.h) */
	for (unsigned i = 0; i < cfg->nfail; i++) {
		uint32_t node = emu_fabric_find(fab, cfg->fail[i].node);

		if (cfg->fail[i].is_node && cfg->fail[i].up != EMU_TIME_INF && fab->nodes[node].kind == EMU_NODE_HOST)
			s->hc[fab->nodes[node].index].cfg.resume = true;
	}
	for (uint32_t i = 0; i < fab->nnodes; i++) {
		const struct emu_fab_node *n = &fab->nodes[i];

		if (n->kind == EMU_NODE_SWITCH)
			emu_engine_set_model(s->eng, i, &emu_sw_ops, &s->swcfg);
		else
			emu_engine_set_model(s->eng, i, &emu_host_ops, &s->hc[n->index].cfg);
	}
	program_attached(s);
	emu_engine_expect_done(s->eng, s->nar);
}

/*
 * start_at - --start-at: the hold ends at that wall-clock instant
 * (CLOCK_REALTIME), emulated time 0 being now on the run's clock; the real
 * hosts given the same instant start with the emulated ones.
 */
static int start_at(struct scn *s)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t rt = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec, mono = emu_wall_ns();

	if (s->cfg->start_at_ns <= rt) {
		snprintf(s->err, s->errlen, "--start-at: the instant was %.3f s ago when the fabric was ready",
			 (double)(rt - s->cfg->start_at_ns) / 1e9);
		return -EINVAL;
	}
	s->hold = (emu_time_t)(s->cfg->start_at_ns - rt) * EMU_NS;	/* fits: canary-emu's --start-at bounds it */
	for (uint32_t i = 0; i < s->nh; i++)
		s->hc[i].cfg.hold = s->hold;
	emu_engine_set_stall_origin(s->eng, s->hold);
	emu_engine_set_wall_origin(s->eng, mono);
	return 0;
}

/* scn_execute - run the engine (with the capture open), then gather every node's records */
static int scn_execute(struct scn *s)
{
	const struct emu_scn_cfg *cfg = s->cfg;
	struct emu_scn_result *res = s->res;
	int erc;

	if (cfg->nattach && cfg->start_at_ns && start_at(s))
		return -EINVAL;
	if (cfg->pcap) {
		s->pcap = emu_pcap_open(s->eng, cfg->pcap, cfg->pcap_links, s->err, s->errlen);
		if (!s->pcap)
			return -EINVAL;
	}
	if (cfg->series) {
		char title[256];

		snprintf(title, sizeof(title), "canary-emu %s, %s, seed %llu", res->algo, res->topology,
			 (unsigned long long)cfg->seed);
		s->series = emu_series_open(cfg->series, cfg->series_every, title, s->eng, s->fab, cfg->series_links,
					    s->err, s->errlen);
		if (!s->series)
			return -EINVAL;
	}
	if (cfg->dist) {
		emu_dist_begin_run(cfg->dist);
		emu_dist_stats(cfg->dist, &s->dstats);
	}
	erc = emu_engine_run(s->eng);
	emu_pcap_close(s->pcap, erc == 0, res->write_err, sizeof(res->write_err));
	s->pcap = NULL;
	if (s->series) {
		char werr[256];

		if (emu_series_close(s->series, emu_engine_stats(s->eng)->emulated, &res->series, werr, sizeof(werr)) &&
		    !res->write_err[0])
			snprintf(res->write_err, sizeof(res->write_err), "%s", werr);
		s->series = NULL;
	}
	if (erc == -EPIPE && cfg->dist) {
		snprintf(s->err, s->errlen, "distributed run failed: %s", emu_engine_error(s->eng));
		emu_dist_abort(cfg->dist, emu_engine_error(s->eng));
		return -EPIPE;
	}
	if (erc) {
		snprintf(s->err, s->errlen, "a node failed to start (%s)", strerror(erc < 0 ? -erc : erc));
		return -EINVAL;
	}
	s->recs = recs_new(s->fab);
	recs_fill(s->recs, s->eng, s->fab);
	res->run = *emu_engine_stats(s->eng);
	res->peak_rss = emu_peak_rss();
	if (cfg->dist && recs_gather(cfg->dist, s->recs, &res->run, &res->peak_rss, res, &s->dstats, s->err, s->errlen))
		return -EPIPE;
	return 0;
}

/* tally_host - add one host's record to its allreduce's results */
static void tally_host(const struct emu_scn_cfg *cfg, lh_time_t hold, const struct host_rec *h,
		       struct emu_scn_ar *a, uint64_t *nonleader_frames, uint64_t *nonleader)
{
	const struct lh_ar_stats *st = h->has_req ? &h->st : NULL;

	if (h->attached)
		return;		/* a real process checks its own result */
	if (!st || !h->data_done || h->delivered != cfg->size_bytes / 4) {
		a->finished = false;
		a->unfinished_hosts++;
	}
	if (st && !h->data_done && a->nwait < EMU_SCN_WAIT)
		a->wait[a->nwait++].w = h->wait;	/* named by the caller */
	a->mismatches += h->mismatches;
	if (!st)
		return;
	/* with real hosts, nothing is sent before the hold: that is the start */
	lh_time_t start = cfg->nattach && st->start < hold ? hold : st->start;

	if (h->data_done && st->data_done - start > a->runtime)
		a->runtime = st->data_done - start;
	if (h->done && st->done - start > a->barrier)
		a->barrier = st->done - start;
	a->leader_frames += st->leader_frames_recv;
	a->retransmissions += st->retx_requests + st->nacks;
	a->failures += st->failures;
	a->reissues += st->reissues;
	a->fallbacks += st->fallbacks;
	a->recoveries += st->recoveries;
	a->recovered += st->recovered;
	a->retx_deferred += st->retx_deferred;
	a->probes += st->probes;
	a->recovered_late += st->recovered_late;
	a->rebroadcasts += st->rebroadcasts;
	a->resends += st->retx_served;
	a->restorations += st->restorations_sent;
	a->collisions_seen += st->collisions_seen;
	a->duplicates += st->duplicates;
	a->noise_delays += st->noise_delays;
	a->polls += st->polls;
	a->nacks += st->nacks;
	a->errors += st->errors;
	if (st->window_max > a->window)
		a->window = st->window_max;	/* hosts of a fixed timeout: all the same, their only window */
	a->window_sum += st->window_sum;
	a->window_n += st->window_n;
	a->retx_timeout = st->retx_timeout;
	if (st->blocks_led < (cfg->size_bytes / 4 + cfg->elements - 1) / cfg->elements) {
		*nonleader_frames += st->frames_sent;
		(*nonleader)++;
	}
}

static int cmp_time(const void *a, const void *b)
{
	emu_time_t x = *(const emu_time_t *)a, y = *(const emu_time_t *)b;

	return x < y ? -1 : x > y;
}

/* nearest_rank - the @p-th percentile (0 < p <= 100) of the sorted @v[0..n), n > 0 */
static emu_time_t nearest_rank(const emu_time_t *v, unsigned n, unsigned p)
{
	unsigned k = (unsigned)(((uint64_t)p * n + 99) / 100);

	return v[k ? k - 1 : 0];
}

/*
 * tally_completion - the distribution of tenant @t's hosts' completion
 * times (start to the whole result) and its last hosts, slowest first
 * (ties: the lower rank first)
 */
static void tally_completion(const struct scn *s, unsigned t, struct emu_scn_ar *a)
{
	const struct tenant *T = &s->ten[t];
	emu_time_t *v = emu_xcalloc(T->P ? T->P : 1, sizeof(*v));
	unsigned n = 0;

	for (unsigned r = 0; r < T->P; r++) {
		const struct host_rec *h = &s->recs->host[T->hosts[r]];
		lh_time_t start;

		if (h->attached || !h->has_req || !h->data_done)
			continue;
		start = s->cfg->nattach && h->st.start < s->hold ? s->hold : h->st.start;
		v[n++] = h->st.data_done - start;
		/* insert among the slowest, kept sorted (slowest first) */
		unsigned k = a->nlast < EMU_SCN_LAST ? a->nlast++ : EMU_SCN_LAST;

		while (k > 0 && a->last[k - 1].t < v[n - 1]) {
			if (k < EMU_SCN_LAST)
				a->last[k] = a->last[k - 1];
			k--;
		}
		if (k < EMU_SCN_LAST) {
			snprintf(a->last[k].host, sizeof(a->last[k].host), "%s",
				 s->fab->nodes[s->fab->hosts[T->hosts[r]]].name);
			a->last[k].t = v[n - 1];
		}
	}
	a->done_hosts = n;
	if (n) {
		qsort(v, n, sizeof(*v), cmp_time);
		a->done_min = v[0];
		a->done_p50 = nearest_rank(v, n, 50);
		a->done_p99 = nearest_rank(v, n, 99);
		a->done_max = v[n - 1];
	}
	free(v);
}

/* wait_name - the host of tenant @t's rank @r, and the host it waits on, in @w */
static void wait_name(const struct scn *s, unsigned t, unsigned r, struct emu_scn_wait *w)
{
	const struct tenant *T = &s->ten[t];

	snprintf(w->host, sizeof(w->host), "%s", s->fab->nodes[s->fab->hosts[T->hosts[r]]].name);
	w->peer[0] = 0;
	if (w->w.peer < T->P)
		snprintf(w->peer, sizeof(w->peer), "%s", s->fab->nodes[s->fab->hosts[T->hosts[w->w.peer]]].name);
}

size_t emu_scn_wait_describe(char *buf, size_t len, const struct emu_scn_wait *w)
{
	const struct lh_ar_wait *x = &w->w;
	const char *peer = w->peer[0] ? w->peer : "?";
	char since[64] = "";
	int n;

	if (x->since)
		snprintf(since, sizeof(since), ", the last at %.3f us", (double)x->since / 1e6);
	switch (x->what) {
	case LH_WAIT_SEND:
		n = snprintf(buf, len, "%s: %u blocks left, block %u not sent yet", w->host, x->blocks_left, x->block);
		break;
	case LH_WAIT_RESULT:
	case LH_WAIT_FALLBACK:
		if (x->tries)
			snprintf(since, sizeof(since), " (%u requests, the last at %.3f us)", x->tries,
				 (double)x->since / 1e6);
		else
			snprintf(since, sizeof(since), " (sent at %.3f us)", (double)x->since / 1e6);
		n = snprintf(buf, len, "%s: %u blocks left, waits for block %u's result from its leader %s%s%s",
			     w->host, x->blocks_left, x->block, peer,
			     x->what == LH_WAIT_FALLBACK ? ", its data sent for the fallback" : "", since);
		break;
	case LH_WAIT_REISSUE:
		n = snprintf(buf, len, "%s: %u blocks left, block %u failed, its re-issue held back", w->host,
			     x->blocks_left, x->block);
		break;
	case LH_WAIT_CONTRIB:
		n = snprintf(buf, len, "%s: %u blocks left, leads block %u: %u contributions counted%s%s "
			     "(%u rounds%s)", w->host, x->blocks_left, x->block, x->count,
			     w->peer[0] ? ", missing " : "", w->peer, x->tries, since);
		break;
	case LH_WAIT_PULL:
		n = snprintf(buf, len, "%s: %u blocks left, leads block %u's fallback: %u ranks counted, waits for "
			     "%s's data%s", w->host, x->blocks_left, x->block, x->count, peer, since);
		break;
	case LH_WAIT_RING:
		n = snprintf(buf, len, "%s: %u result packets left, waits for step %u's packets from %s (%u NACKs "
			     "since progress)", w->host, x->blocks_left, x->block, peer, x->tries);
		break;
	case LH_WAIT_BARRIER:
		n = snprintf(buf, len, "%s: has the result, waits for the completion barrier's DONE from %s",
			     w->host, peer);
		break;
	default:
		n = snprintf(buf, len, "%s: %s", w->host, lh_wait_name(x->what));
		break;
	}
	return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len;
}

/* scn_tally_allreduces - each tenant's results, exactness, goodput, and why a run is stuck */
static void scn_tally_allreduces(struct scn *s, emu_time_t T)
{
	const struct emu_scn_cfg *cfg = s->cfg;
	struct emu_scn_result *res = s->res;

	res->nar = s->K;
	res->ar = emu_xcalloc(s->K, sizeof(*res->ar));
	res->exact = true;
	for (unsigned t = 0; t < s->K; t++) {
		struct emu_scn_ar *a = &res->ar[t];
		uint64_t nonleader_frames = 0, nonleader = 0;

		a->tenant = t;
		a->hosts = s->ten[t].P;
		a->size_bytes = cfg->size_bytes;
		a->finished = true;
		for (unsigned r = 0; r < s->ten[t].P; r++) {
			unsigned nw = a->nwait;

			tally_host(cfg, s->hold, &s->recs->host[s->ten[t].hosts[r]], a, &nonleader_frames,
				   &nonleader);
			if (a->nwait > nw)
				wait_name(s, t, r, &a->wait[nw]);
		}
		a->frames_per_host = nonleader ? nonleader_frames / nonleader : 0;
		tally_completion(s, t, a);
		a->exact = a->finished && a->mismatches == 0;
		if (!a->exact)
			res->exact = false;
		a->goodput_gbps = a->runtime ? (double)cfg->size_bytes * 8 / ((double)a->runtime / 1000.0) : 0;
		if (a->runtime > res->runtime)
			res->runtime = a->runtime;
		res->goodput_gbps += a->goodput_gbps / s->K;
		if (a->finished || res->stuck[0])
			continue;
		size_t n;

		if (res->run.stalled)
			n = (size_t)snprintf(res->stuck, sizeof(res->stuck),
					     "allreduce %u: %llu of %u hosts without their whole result; no block completed "
					     "since %.3f us (stopped at %.3f us, --stall %.3f us, longest host timeout %.3f us)",
					     t, (unsigned long long)a->unfinished_hosts, a->hosts,
					     (double)res->run.last_progress / 1e6, (double)T / 1e6, (double)cfg->stall / 1e6,
					     (double)res->run.wait_max / 1e6);
		else
			n = (size_t)snprintf(res->stuck, sizeof(res->stuck),
					     "allreduce %u: %llu of %u hosts without their whole result at %.3f us (limit %.3f us)",
					     t, (unsigned long long)a->unfinished_hosts, a->hosts, (double)T / 1e6,
					     (double)cfg->limit / 1e6);
		for (unsigned k = 0; k < a->nwait && n < sizeof(res->stuck); k++) {
			n += (size_t)snprintf(res->stuck + n, sizeof(res->stuck) - n, "; ");
			if (n < sizeof(res->stuck))
				n += emu_scn_wait_describe(res->stuck + n, sizeof(res->stuck) - n, &a->wait[k]);
		}
		if (a->unfinished_hosts > a->nwait && n < sizeof(res->stuck))
			snprintf(res->stuck + n, sizeof(res->stuck) - n, "; ...");
	}
}

/* sw_add - add one switch's counters to the fabric's */
static void sw_add(struct emu_sw_stats *sum, const struct emu_sw_stats *st)
{
	sum->fwd.forwarded += st->fwd.forwarded;
	sum->fwd.no_route += st->fwd.no_route;
	sum->fwd.malformed += st->fwd.malformed;
	sum->reduce_rx += st->reduce_rx;
	sum->aggregated += st->aggregated;
	sum->allocated += st->allocated;
	sum->freed += st->freed;
	sum->collisions += st->collisions;
	sum->stragglers += st->stragglers;
	sum->flushes += st->flushes;
	sum->early_flushes += st->early_flushes;
	sum->tree_up += st->tree_up;
	sum->bypassed += st->bypassed;
	sum->bcast_rx += st->bcast_rx;
	sum->bcast_copies += st->bcast_copies;
	sum->bcast_dropped += st->bcast_dropped;
	sum->restores += st->restores;
	sum->restore_copies += st->restore_copies;
	sum->malformed += st->malformed;
	sum->tree_collisions += st->tree_collisions;
	sum->reclaimed += st->reclaimed;
	sum->recirc_delayed += st->recirc_delayed;
	sum->recirc_wait += st->recirc_wait;
	sum->pktgen_ticks += st->pktgen_ticks;
	sum->live += st->live;
	sum->ato_samples += st->ato_samples;
	sum->ato_up += st->ato_up;
	sum->ato_root_claims += st->ato_root_claims;
	sum->ato_root_sum += st->ato_root_sum;
	if (st->max_hold > sum->max_hold)
		sum->max_hold = st->max_hold;
}

/* scn_tally_switches - the switches' counters, descriptor occupancy and adaptive timeouts per level */
static void scn_tally_switches(struct scn *s, emu_time_t T)
{
	const struct emu_fabric *fab = s->fab;
	struct emu_scn_result *res = s->res;
	double occ = 0, ato_level_sum[4] = { 0 };
	uint64_t ato_level_n[4] = { 0 };

	for (uint32_t i = 0; i < fab->nswitches; i++) {
		const struct emu_sw_stats *st = &s->recs->sw[i];

		sw_add(&res->sw, st);
		if (st->ato_claims) {
			unsigned lv = fab->nodes[fab->switches[i]].level;

			lv = lv > 3 ? 3 : lv;
			if (!res->sw.ato_claims || st->ato_min < res->sw.ato_min)
				res->sw.ato_min = st->ato_min;
			if (st->ato_max > res->sw.ato_max)
				res->sw.ato_max = st->ato_max;
			res->sw.ato_claims += st->ato_claims;
			res->sw.ato_sum += st->ato_sum;
			ato_level_sum[lv] += (double)st->ato_sum;
			ato_level_n[lv] += st->ato_claims;
		}
		if (st->peak > res->desc_peak)
			res->desc_peak = st->peak;
		occ += (st->occ_integral + (double)st->live * (double)(T - st->occ_since)) / (double)T;
	}
	res->sw.peak = res->desc_peak;
	for (unsigned lv = 0; lv < 4; lv++)
		res->ato_mean_level[lv] = ato_level_n[lv] ? ato_level_sum[lv] / (double)ato_level_n[lv] : 0;
	res->ato_mean_root = res->sw.ato_root_claims ? (double)res->sw.ato_root_sum / (double)res->sw.ato_root_claims : 0;
	res->desc_mean = fab->nswitches ? occ / fab->nswitches : 0;
}

/*
 * scn_tally_bg_load - the background's offered and carried load: wire time
 * of what arrived (or, back to back, 1) and of what was sent, over the
 * emulated time, as a share of each background host's line rate, averaged
 * over those hosts.
 */
static void scn_tally_bg_load(struct scn *s, emu_time_t T)
{
	struct emu_scn_result *res = s->res;
	double off = 0, car = 0;

	for (uint32_t i = 0; i < s->nbg; i++) {
		uint32_t h = s->order[s->nar + i];
		const struct emu_fab_node *fn = &s->fab->nodes[s->fab->hosts[h]];
		const struct emu_fab_port *fp = &s->fab->ports[fn->port0];
		double ps_per_byte = 8e12 / (double)s->fab->links[fp->link].rate_bps[fp->side];

		off += s->cfg->bg_load < 1 ? (double)s->recs->host[h].bg_wire_offered * ps_per_byte / (double)T : 1;
		car += (double)s->recs->host[h].bg_wire_sent * ps_per_byte / (double)T;
	}
	res->bg_offered = s->nbg ? off / s->nbg : 0;
	res->bg_carried = s->nbg ? car / s->nbg : 0;
}

/* scn_tally_links - utilization of every directed link, drops, and the background's bytes */
static void scn_tally_links(struct scn *s, emu_time_t T)
{
	struct emu_scn_result *res = s->res;
	uint32_t busy = 0;
	double sum = 0, sumbusy = 0;

	res->nlinks = 2 * s->fab->nlinks;
	res->link_util = emu_xcalloc(res->nlinks + 1, sizeof(double));
	describe_links(s->fab, res);
	for (uint32_t i = 0; i < res->nlinks; i++) {
		const struct port_rec *ps = &s->recs->port[i];
		double u = (double)ps->busy_ps / (double)T;

		res->link_util[i] = u;
		sum += u;
		if (ps->tx_frames) {
			busy++;
			sumbusy += u;
		}
		res->drops_queue += ps->drops_queue;
		res->drops_loss += ps->drops_loss;
		res->drops_down += ps->drops_down;
	}
	res->util_mean = sum / res->nlinks;
	res->util_mean_busy = busy ? sumbusy / busy : 0;
	for (uint32_t i = 0; i < s->nbg; i++)
		res->bg_bytes += s->recs->host[s->order[s->nar + i]].bg_bytes;
	for (uint32_t i = 0; i < s->recs->nhost; i++)
		res->other_run += s->recs->host[i].other_run;
	scn_tally_bg_load(s, T);
}

/* scn_free - release what the phases built */
static void scn_free(struct scn *s)
{
	emu_pcap_close(s->pcap, false, NULL, 0);
	emu_series_close(s->series, 0, NULL, s->err, s->errlen);
	recs_free(s->recs);
	emu_engine_destroy(s->eng);
	if (s->ten)
		for (unsigned t = 0; t < s->K; t++) {
			free(s->ten[t].peers);
			free(s->ten[t].hosts);
			free(s->ten[t].a);
			free(s->ten[t].c);
			free(s->ten[t].cpre);
			free(s->ten[t].b);
			free(s->ten[t].e);
		}
	free(s->ten);
	free(s->hc);
	free(s->arv);
	free(s->allpeers);
	free(s->bgpeers);
	free(s->order);
	free(s->trees.node);
	free(s->trees.root);
	for (unsigned i = 0; s->att && i < s->cfg->nattach; i++)
		lh_afp_close(s->att[i].afp);
	free(s->att);
	emu_fabric_destroy(s->fab);
}

int emu_scenario_run(const struct emu_scn_cfg *cfg, struct emu_scn_result *res, char *err, size_t errlen)
{
	struct scn s = { .cfg = cfg, .res = res, .err = err, .errlen = errlen };
	struct emu_scn_cfg eff;
	emu_time_t T;
	int rc;

	memset(res, 0, sizeof(*res));
	res->seed = cfg->seed;
	res->run_id = cfg->run_id;
	res->size_bytes = cfg->size_bytes;
	if (cfg->sketch == EMU_SCN_SKETCH_AUTO) {
		/* canary-emu resolves it first (its report names K); other callers get it here */
		struct emu_fabric *fab = emu_topo_load(cfg->topology, err, errlen);

		if (!fab)
			return -EINVAL;
		eff = *cfg;
		eff.sketch = emu_scenario_sketch(cfg, fab);
		emu_fabric_destroy(fab);
		s.cfg = &eff;
	}
	if ((rc = scn_check_cfg(&s)))
		return rc;
	if ((rc = scn_build(&s)) ||
	    (rc = scn_place(&s)) ||
	    (cfg->check_only && (rc = 1)) ||
	    (rc = scn_attach(&s)) ||
	    (rc = scn_engine(&s)) ||
	    (rc = scn_configure(&s)))
		goto out;
	scn_program_hosts(&s);
	if ((rc = scn_execute(&s)))
		goto out;
	if (cfg->dist && emu_dist_rank(cfg->dist) != 0) {
		res->partial = true;	/* rank 0 has the report */
		goto out;
	}
	T = res->run.emulated ? res->run.emulated : 1;
	scn_tally_allreduces(&s, T);
	scn_tally_attached(&s);
	scn_tally_switches(&s, T);
	scn_tally_links(&s, T);
out:
	scn_free(&s);
	return rc > 0 ? 0 : rc;
}

void emu_scenario_result_fini(struct emu_scn_result *res)
{
	free(res->ar);
	free(res->link_util);
	free(res->links);
	res->ar = NULL;
	res->link_util = NULL;
	res->links = NULL;
}
