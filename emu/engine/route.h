/* SPDX-License-Identifier: MIT */
/*
 * DOC: route.h - shortest-path (up/down on fat trees) routing tables and
 * the next-hop policies.
 *
 * A struct emu_routes is an immutable snapshot: for every switch s and every
 * destination switch d, the set of ports of s on a shortest path to d, over
 * the links and switches that are up. A host is reached through the switch
 * it hangs off. On a fat tree going up there are several such ports (the
 * policy chooses); going down there is exactly one (deterministic).
 *
 * The engine publishes the current snapshot with rcu_assign_pointer(); the
 * workers read it inside their QSBR read side (every event handler runs
 * inside it; quiescent states are reported at window boundaries). A control
 * thread computes a new snapshot when links or switches fail or recover and
 * frees the old one after synchronize_rcu().
 */
#ifndef EMU_ROUTE_H
#define EMU_ROUTE_H

#include <stdbool.h>
#include <stdint.h>

struct emu_fabric;
struct emu_frame;
struct emu_node;

struct emu_routes {
	uint32_t nsw;
	uint64_t *mask;		/* [s * nsw + d] */
	uint8_t *link_up;	/* per link, the state this snapshot was built for */
	uint8_t *node_up;	/* per node */
	uint64_t version;	/* unique within an engine: a struct emu_route_row tells its snapshot by it */
};

enum emu_routing {
	EMU_ROUTE_ADAPTIVE = 0,	/* hash default; if its queue > 50 % buffer, least queued */
	EMU_ROUTE_ECMP,		/* hash only */
	EMU_ROUTE_LEASTLOADED,	/* least queued bytes, ties by hash order */
};

/*
 * emu_routes_compute - tables for @fab with the given link and node states
 * (NULL: all up). Cannot fail.
 */
struct emu_routes *emu_routes_compute(const struct emu_fabric *fab, const uint8_t *link_up,
				      const uint8_t *node_up, uint64_t version);
/* emu_routes_destroy - free. Accepts NULL. */
void emu_routes_destroy(struct emu_routes *r);

/*
 * emu_routes_mask - ports of switch node @sw toward host index @dst_host
 * (0 if unreachable).
 */
uint64_t emu_routes_mask(const struct emu_routes *r, const struct emu_fabric *fab, uint32_t sw, uint32_t dst_host);

/* emu_routes_mask_sw - ports of switch node @sw toward switch node @dst. */
uint64_t emu_routes_mask_sw(const struct emu_routes *r, const struct emu_fabric *fab, uint32_t sw, uint32_t dst);

/*
 * struct emu_route_row - what a switch's lookup in the current snapshot
 * reads (emu_routes_mask()), kept by a model in its state so that a hop
 * reads its own line, not the fabric's node array and the snapshot's
 * header: the switch's row of masks, its index among the switches and the
 * hosts' attachment words. Valid while the snapshot it was taken from is
 * the current one (@nver, its version's complement: a zeroed row is of
 * none). emu_route_row_ok() tells, emu_route_row_fill() takes it anew
 * (route.c), emu_route_row_mask() looks a destination host up in it.
 */
struct emu_route_row {
	uint64_t nver;
	const uint64_t *mask;		/* the switch's row: [d], d a switch index */
	const uint32_t *attach;		/* fab->attach_route */
	uint32_t index;			/* the switch's index */
};

/* emu_route_row_mask - emu_route()'s mask toward host index @dst_host, from a valid @c */
static inline uint64_t emu_route_row_mask(const struct emu_route_row *c, uint32_t dst_host)
{
	uint32_t att = c->attach[dst_host];

	if (att >> 16 == c->index)
		return 1ULL << (att & 0xffff);
	return c->mask[att >> 16];
}

int emu_routing_parse(const char *s, enum emu_routing *out);
const char *emu_routing_name(enum emu_routing r);

/* ---- the routing choice, called by models on the node's worker (engine.h includes this) ---- */

/*
 * emu_route - ports of switch @n on a shortest path to host index @dst_host
 * under the current routing snapshot (RCU read side). 0: unreachable.
 */
uint64_t emu_route(struct emu_node *n, uint32_t dst_host);
/* emu_route_sw - the same toward switch node @dst_sw. */
uint64_t emu_route_sw(struct emu_node *n, uint32_t dst_sw);
/* emu_route_row_ok - is @c of the current snapshot (struct emu_route_row)? */
bool emu_route_row_ok(const struct emu_node *n, const struct emu_route_row *c);
/* emu_route_row_fill - @c taken from the current snapshot for switch @n; false for a host (none: emu_route()) */
bool emu_route_row_fill(struct emu_node *n, struct emu_route_row *c);

/*
 * emu_route_pick - choose one port of @mask (non-zero) under @policy with
 * flow hash @hash: adaptive (hash default, least-queued when the default's
 * queue is above half the buffer), ecmp (hash), leastloaded.
 */
unsigned emu_route_pick(struct emu_node *n, uint64_t mask, uint64_t hash, enum emu_routing policy);
/* emu_route_pick_mixed - the same with the flow hash's mixed value @rhash (emu_hash64(@hash)) */
unsigned emu_route_pick_mixed(struct emu_node *n, uint64_t mask, uint64_t rhash, enum emu_routing policy);

/*
 * emu_send_pick - emu_send() @f on a port of @mask (non-zero) chosen under
 * @policy with flow hash @hash. FIFO router: emu_route_pick() now. Merlin
 * router: the natural port is the destination host's (xbar.h; @hash only
 * for a frame with none); a frame that came in on a port is routed when it
 * reaches the head of its input queue, on the output buffers' occupancy
 * then; one the switch made, now (xbar.h). Return as emu_send().
 */
int emu_send_pick(struct emu_node *n, uint64_t mask, uint64_t hash, enum emu_routing policy, struct emu_frame *f);

/*
 * emu_route_next - emu_send_pick() for a model's route op (engine.h), for
 * @f to destination host index @dst with the flow hash's mixed value
 * @rhash (emu_hash64() of emu_send_pick()'s @hash): the port of @mask to
 * send @f on, which the caller sends it on (the FIFO router, or one port
 * in @mask); or -EINPROGRESS when it sent @f itself (merlin with a choice
 * of ports: the crossbar chooses), emu_send()'s error when that failed.
 */
int emu_route_next(struct emu_node *n, uint64_t mask, uint32_t dst, uint64_t rhash, enum emu_routing policy,
		   struct emu_frame *f);

#endif /* EMU_ROUTE_H */
