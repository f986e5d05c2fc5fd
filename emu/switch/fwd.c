// SPDX-License-Identifier: MIT
/*
 * DOC: fwd.c - the forwarding switch model. See fwd.h.
 */
#include "emu/switch/fwd.h"

#include <errno.h>

#include "libhost/wire.h"

/* @f's destination host (*@dst) and flow hash, parsed out of its header; 0, -EINVAL or -EHOSTUNREACH */
static int fwd_parse(struct emu_node *n, const struct emu_frame *f, uint32_t *dst, uint64_t *hash)
{
	uint32_t dip;

	if (lh_wire_dst(f->data, f->len, &dip, hash) != LH_WIRE_OK)
		return -EINVAL;
	*dst = emu_fabric_host_by_ip(emu_engine_fabric(n->eng), dip);
	return *dst == EMU_NONE32 ? -EHOSTUNREACH : 0;
}

/*
 * fill @f's route cache (@f is on its way out: its bytes are as they will
 * leave): its flow hash's mixed value into rhash, its destination host
 * into rdst if it fits. The destination host, or -EINVAL or -EHOSTUNREACH.
 * Out of line: the route op's common case saves no registers for it.
 */
static __attribute__((noinline, flatten)) int64_t fwd_fill(struct emu_node *n, struct emu_frame *f)
{
	uint32_t dst;
	uint64_t hash;
	int err = fwd_parse(n, f, &dst, &hash);

	if (err)
		return err;
	f->rhash = emu_hash64(hash);
	emu_frame_route_set(f, dst, f->rhash);
	return dst;
}

int emu_fwd_port(struct emu_node *n, const struct emu_frame *f)
{
	uint32_t dst;
	uint64_t hash;
	int err = fwd_parse(n, f, &dst, &hash);

	if (err)
		return err;
	uint64_t mask = emu_route(n, dst);

	return mask ? (int)emu_route_pick(n, mask, hash, emu_node_routing(n)) : -EHOSTUNREACH;
}

/* a frame without a route (@err: -EINVAL or -EHOSTUNREACH), counted in @st and freed; @err */
static __attribute__((noinline)) int fwd_drop(struct emu_node *n, struct emu_frame *f, struct emu_fwd_stats *st,
					      int err)
{
	if (err == -EINVAL)
		st->malformed++;
	else
		st->no_route++;
	emu_frame_free(n, f);
	return err;
}

/* a switch's lookup taken anew (its snapshot changed, or the first), then route_to() with it */
static int route_row_fill(struct emu_node *n, struct emu_frame *f, struct emu_fwd_stats *st,
			  struct emu_route_row *row, uint32_t dst);

/*
 * the ports toward destination host @dst (with @row, a switch's lookup
 * kept, when not NULL: a constant), then the port (route_st())
 */
static inline __attribute__((always_inline)) int route_to(struct emu_node *n, struct emu_frame *f,
							  struct emu_fwd_stats *st, struct emu_route_row *row,
							  uint32_t dst)
{
	uint64_t mask;

	if (row) {
		if (emu_unlikely(!emu_route_row_ok(n, row)))
			return route_row_fill(n, f, st, row, dst);
		mask = emu_route_row_mask(row, dst);
	} else {
		mask = emu_route(n, dst);
	}
	if (emu_unlikely(!mask))
		return fwd_drop(n, f, st, -EHOSTUNREACH);
	st->forwarded++;
	return emu_route_next(n, mask, dst, f->rhash, emu_node_routing(n), f);
}

static __attribute__((noinline, flatten)) int route_row_fill(struct emu_node *n, struct emu_frame *f,
							     struct emu_fwd_stats *st, struct emu_route_row *row,
							     uint32_t dst)
{
	if (!emu_route_row_fill(n, row))
		return route_to(n, f, st, NULL, dst);	/* a host: no row */
	return route_to(n, f, st, row, dst);
}

/* route_st() for a frame whose route cache is empty: its header parsed (fwd_fill()) */
static __attribute__((noinline, flatten)) int route_fill(struct emu_node *n, struct emu_frame *f,
							 struct emu_fwd_stats *st, struct emu_route_row *row)
{
	int64_t r = fwd_fill(n, f);

	if (r < 0)
		return fwd_drop(n, f, st, (int)r);
	return route_to(n, f, st, row, (uint32_t)r);
}

/*
 * emu_fwd_route(), inline in emu_fwd_forward() and the fwd model's route
 * op (with its @row, else NULL): the ports toward @f's destination host,
 * then the port, its flow hash's mixed value in f->rhash. The header is
 * parsed only when the frame's route cache does not hold it
 * (route_fill()). Every call on the way is a tail call (the parse, a
 * drop, the row taken anew, merlin's send, the least-queued loop), so the
 * common path saves no registers.
 */
static inline __attribute__((always_inline)) int route_st(struct emu_node *n, struct emu_frame *f,
							  struct emu_fwd_stats *st, struct emu_route_row *row)
{
	uint32_t host = f->rdst;

	if (emu_unlikely(host == EMU_RDST_NONE))
		return route_fill(n, f, st, row);
	return route_to(n, f, st, row, host);
}

int emu_fwd_forward(struct emu_node *n, struct emu_frame *f, struct emu_fwd_stats *st)
{
	int out = route_st(n, f, st, NULL);

	if (out >= 0)
		return emu_send(n, (unsigned)out, f);
	return out == -EINPROGRESS ? 0 : out;
}

/*
 * Flattened: the Canary switch's route op calls it for every frame it
 * forwards, and the table's lookup and the pick (route.c) are then inlined
 * here as they are in fwd_route(), not two calls a hop.
 */
__attribute__((flatten)) int emu_fwd_route(struct emu_node *n, struct emu_frame *f, struct emu_fwd_stats *st)
{
	return route_st(n, f, st, NULL);
}

/* the port to send @f on (the engine sends it), or a negative errno when sent or freed here */
static int fwd_route(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct emu_fwd_state *s = emu_node_state(n);

	(void)port;
	return route_st(n, f, &s->st, &s->row);
}

const struct emu_model_ops emu_fwd_ops = {
	.name = "fwd",
	.state_size = sizeof(struct emu_fwd_state),
	.route = fwd_route,
};
