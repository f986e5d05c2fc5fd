// SPDX-License-Identifier: MIT
/*
 * DOC: route.c - all-pairs shortest paths between switches by one BFS per
 * destination switch (O(switches x links)); a host is routed through its
 * attachment switch. See route.h. Also the models' routing calls of
 * engine.h (emu_route, emu_route_sw, emu_route_pick): the table's ports
 * toward a destination and the choice among them, which reads the ports'
 * queues (emu_port_queued(), port.c).
 */
#include "emu/engine/route.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/engine/engine_internal.h"
#include "emu/engine/fabric.h"
#include "emu/engine/port_internal.h"
#include "emu/engine/util.h"
#include "emu/engine/xbar.h"
#include "libhost/wire.h"

struct emu_routes *emu_routes_compute(const struct emu_fabric *fab, const uint8_t *link_up,
				      const uint8_t *node_up, uint64_t version)
{
	struct emu_routes *r = emu_xcalloc(1, sizeof(*r));
	uint32_t nsw = fab->nswitches;

	r->nsw = nsw;
	r->version = version;
	r->mask = emu_xcalloc((size_t)nsw * nsw + 1, sizeof(uint64_t));
	r->link_up = emu_xmalloc(fab->nlinks + 1);
	r->node_up = emu_xmalloc(fab->nnodes + 1);
	if (link_up)
		memcpy(r->link_up, link_up, fab->nlinks);
	else
		memset(r->link_up, 1, fab->nlinks);
	if (node_up)
		memcpy(r->node_up, node_up, fab->nnodes);
	else
		memset(r->node_up, 1, fab->nnodes);

	uint32_t *dist = emu_xmalloc((nsw + 1) * sizeof(uint32_t));
	uint32_t *queue = emu_xmalloc((nsw + 1) * sizeof(uint32_t));

	for (uint32_t d = 0; d < nsw; d++) {
		uint32_t dnode = fab->switches[d];
		uint32_t qh = 0, qt = 0;

		for (uint32_t i = 0; i < nsw; i++)
			dist[i] = UINT32_MAX;
		if (!r->node_up[dnode])
			continue;
		dist[d] = 0;
		queue[qt++] = d;
		while (qh < qt) {
			uint32_t v = queue[qh++];
			const struct emu_fab_node *n = &fab->nodes[fab->switches[v]];

			for (uint32_t p = 0; p < n->nports; p++) {
				const struct emu_fab_port *fp = &fab->ports[n->port0 + p];

				if (fp->link == EMU_NONE32 || !r->link_up[fp->link])
					continue;
				const struct emu_fab_node *m = &fab->nodes[fp->peer_node];

				if (m->kind != EMU_NODE_SWITCH || !r->node_up[fp->peer_node] || dist[m->index] != UINT32_MAX)
					continue;
				dist[m->index] = dist[v] + 1;
				queue[qt++] = m->index;
			}
		}
		for (uint32_t s = 0; s < nsw; s++) {
			if (s == d || dist[s] == UINT32_MAX)
				continue;
			const struct emu_fab_node *n = &fab->nodes[fab->switches[s]];
			uint64_t m = 0;

			for (uint32_t p = 0; p < n->nports; p++) {
				const struct emu_fab_port *fp = &fab->ports[n->port0 + p];

				if (fp->link == EMU_NONE32 || !r->link_up[fp->link])
					continue;
				const struct emu_fab_node *peer = &fab->nodes[fp->peer_node];

				if (peer->kind == EMU_NODE_SWITCH && dist[peer->index] + 1 == dist[s])
					m |= 1ULL << p;
			}
			r->mask[(size_t)s * nsw + d] = m;
		}
	}
	free(dist);
	free(queue);
	return r;
}

void emu_routes_destroy(struct emu_routes *r)
{
	if (!r)
		return;
	free(r->mask);
	free(r->link_up);
	free(r->node_up);
	free(r);
}

uint64_t emu_routes_mask_sw(const struct emu_routes *r, const struct emu_fabric *fab, uint32_t sw, uint32_t dst)
{
	return r->mask[(size_t)fab->nodes[sw].index * r->nsw + fab->nodes[dst].index];
}

uint64_t emu_routes_mask(const struct emu_routes *r, const struct emu_fabric *fab, uint32_t sw, uint32_t dst_host)
{
	uint32_t att = fab->attach_route[dst_host], s = fab->nodes[sw].index;

	if (att >> 16 == s)
		return 1ULL << (att & 0xffff);
	return r->mask[(size_t)s * r->nsw + (att >> 16)];
}

int emu_routing_parse(const char *s, enum emu_routing *out)
{
	if (!strcmp(s, "adaptive"))
		*out = EMU_ROUTE_ADAPTIVE;
	else if (!strcmp(s, "ecmp"))
		*out = EMU_ROUTE_ECMP;
	else if (!strcmp(s, "leastloaded"))
		*out = EMU_ROUTE_LEASTLOADED;
	else
		return -EINVAL;
	return 0;
}

const char *emu_routing_name(enum emu_routing r)
{
	switch (r) {
	case EMU_ROUTE_ADAPTIVE: return "adaptive";
	case EMU_ROUTE_ECMP: return "ecmp";
	case EMU_ROUTE_LEASTLOADED: return "leastloaded";
	}
	return "?";
}

/* ---- the models' routing calls (engine.h), on the node's worker ---- */

/*
 * The current snapshot, as rcu_dereference() reads it (a dependent load
 * of what rcu_assign_pointer() published) but inline: liburcu's is a
 * call into the library unless its LGPL inline code is compiled in.
 */
static inline struct emu_routes *routes_now(const struct emu_node *n)
{
	return __atomic_load_n(&n->eng->routes, __ATOMIC_CONSUME);
}

uint64_t emu_route(struct emu_node *n, uint32_t dst_host)
{
	struct emu_routes *r = routes_now(n);

	if (n->host)
		return 1;
	return emu_routes_mask(r, n->eng->fab, n->id, dst_host);
}

bool emu_route_row_ok(const struct emu_node *n, const struct emu_route_row *c)
{
	return ~routes_now(n)->version == c->nver;
}

bool emu_route_row_fill(struct emu_node *n, struct emu_route_row *c)
{
	const struct emu_routes *r = routes_now(n);
	const struct emu_fabric *fab = n->eng->fab;

	if (n->host)	/* emu_route() is 1 for a host: no row */
		return false;
	c->index = fab->nodes[n->id].index;
	c->mask = r->mask + (size_t)c->index * r->nsw;
	c->attach = fab->attach_route;
	c->nver = ~r->version;
	return true;
}

uint64_t emu_route_sw(struct emu_node *n, uint32_t dst_sw)
{
	struct emu_routes *r = routes_now(n);

	if (n->host)
		return 1;
	if (dst_sw == n->id)
		return 0;
	return emu_routes_mask_sw(r, n->eng->fab, n->id, dst_sw);
}

/*
 * The bytes this node has waiting for port @p: its egress queue (under
 * merlin, the output buffer: emu_send_pick() routes on it, xbar.c).
 */
static inline uint64_t port_occupancy(struct emu_node *n, unsigned pi)
{
	/* under merlin nothing is committed ahead (commit_ps 0) */
	return n->xb ? n->ports[pi].qbytes : emu_port_queued(n, pi);
}

/*
 * The port of @mask with the least queued bytes; ties go to the first in
 * hash rotation order from @def: the ports above it in ascending order,
 * then those below. Out of line: the common case of route_pick() saves
 * no registers for the loop.
 */
static __attribute__((noinline)) unsigned least_queued(struct emu_node *n, uint64_t mask, unsigned def)
{
	/* read once: what a port's count writes (its committed-ahead ring) does not change them */
	struct emu_port *ports = n->ports;
	emu_time_t now = n->w->now;
	bool xb = n->xb != NULL;
	unsigned best = def;
	uint64_t bestq = port_occupancy(n, def);
	uint64_t m = mask & ~(1ULL << def);

	/* rotated right by def: bit i is port (def + i) % 64, so ascending bits are the rotation order */
	for (m = m >> def | m << (-def & 63); m; m &= m - 1) {
		unsigned p = ((unsigned)__builtin_ctzll(m) + def) & 63;
		uint64_t q = xb ? ports[p].qbytes : emu_port_queued_at(&ports[p], now);

		if (q < bestq) {
			best = p;
			bestq = q;
		}
	}
	return best;
}

/* route_pick() past the hash's port @def: the adaptive policy's look at its queue, else the least queued */
static __attribute__((noinline)) unsigned pick_queued(struct emu_node *n, uint64_t mask, unsigned def,
						      enum emu_routing policy)
{
	if (policy == EMU_ROUTE_ADAPTIVE && port_occupancy(n, def) * 2 <= n->eng->cfg.buffer_bytes)
		return def;
	return least_queued(n, mask, def);
}

/* route_pick() for a mask that is not one run of contiguous bits */
static __attribute__((noinline)) unsigned pick_sparse(struct emu_node *n, uint64_t mask, uint64_t rhash,
						      enum emu_routing policy)
{
	unsigned def = emu_nth_bit(mask, (unsigned)(rhash % emu_mask_count(mask)));

	if (policy == EMU_ROUTE_ECMP)
		return def;
	return pick_queued(n, mask, def, policy);
}

/*
 * emu_route_pick() with the flow hash's mixed value @rhash (emu_hash64()),
 * inline in emu_route_next() (once per switch hop). Its common case, a run
 * of contiguous ports (emu_mask_count()) and, adaptive, a default port
 * with nothing committed ahead, saves no registers: the rest are tail
 * calls (a sparse mask, the queue's committed-ahead ring settled, the
 * least-queued loop).
 */
static inline __attribute__((always_inline)) unsigned route_pick(struct emu_node *n, uint64_t mask, uint64_t rhash,
								   enum emu_routing policy)
{
	unsigned lo = (unsigned)__builtin_ctzll(mask);
	uint64_t m = mask >> lo;

	if (emu_unlikely(m & (m + 1)))
		return pick_sparse(n, mask, rhash, policy);
	if (m == 1)
		return lo;
	unsigned def = lo + (unsigned)(rhash % (64 - (unsigned)__builtin_clzll(m)));	/* emu_nth_bit() */

	if (policy == EMU_ROUTE_ECMP)
		return def;
	if (policy == EMU_ROUTE_ADAPTIVE && !n->xb) {
		const struct emu_port *p = &n->ports[def];

		/* port_occupancy() when the committed-ahead ring is empty (nothing to settle) */
		if (!p->cq_n && emu_port_bytes(p) * 2 <= n->eng->cfg.buffer_bytes)
			return def;
	}
	return pick_queued(n, mask, def, policy);
}

unsigned emu_route_pick(struct emu_node *n, uint64_t mask, uint64_t hash, enum emu_routing policy)
{
	return route_pick(n, mask, emu_hash64(hash), policy);
}

unsigned emu_route_pick_mixed(struct emu_node *n, uint64_t mask, uint64_t rhash, enum emu_routing policy)
{
	return route_pick(n, mask, rhash, policy);
}

/*
 * merlin with a choice of ports: the natural port now, topo_fattree's
 * destination rule (emu_xbar_natural(): destination host @dst, the hash
 * only for a frame with none), the choice when the crossbar sees the
 * frame at the head of its queue. The frame moves to its smallest buffer
 * here, so that what emu_send() keeps is this frame with its mask
 * (emu_pool_fit() copies the header only up to cls). Out of line: the
 * route op's FIFO path saves no registers for it.
 */
static __attribute__((noinline)) int send_merlin(struct emu_node *n, uint64_t mask, uint32_t dst, uint64_t rhash, enum emu_routing policy,
		       struct emu_frame *f)
{
	uint16_t in = f->xin;
	unsigned natural = emu_xbar_natural(n, mask, dst, rhash);

	f = emu_pool_fit(&n->w->pool, f);
	f->xin = in;
	f->xmask = mask;
	f->xpol = (uint8_t)policy;
	return emu_send(n, natural, f);
}

int emu_send_pick(struct emu_node *n, uint64_t mask, uint64_t hash, enum emu_routing policy, struct emu_frame *f)
{
	if (!n->xb || !(mask & (mask - 1)))
		return emu_send(n, emu_route_pick(n, mask, hash, policy), f);
	uint32_t dip, dst = EMU_NONE32;
	uint64_t fh;

	if (lh_wire_dst(f->data, f->len, &dip, &fh) == LH_WIRE_OK)
		dst = emu_fabric_host_by_ip(n->eng->fab, dip);
	return send_merlin(n, mask, dst, emu_hash64(hash), policy, f);
}

/* emu_route_next() under merlin with a choice of ports: a tail call, so that the FIFO path saves no registers */
static __attribute__((noinline)) int next_merlin(struct emu_node *n, uint64_t mask, uint32_t dst, uint64_t rhash,
						 enum emu_routing policy, struct emu_frame *f)
{
	int err = send_merlin(n, mask, dst, rhash, policy, f);

	return err ? err : -EINPROGRESS;
}

int emu_route_next(struct emu_node *n, uint64_t mask, uint32_t dst, uint64_t rhash, enum emu_routing policy,
		   struct emu_frame *f)
{
	if (!n->xb || !(mask & (mask - 1)))
		return (int)route_pick(n, mask, rhash, policy);
	return next_merlin(n, mask, dst, rhash, policy, f);
}
