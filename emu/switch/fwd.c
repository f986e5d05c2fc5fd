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

/*
 * the ports of @n toward @f's destination host (*@dst); its flow hash's
 * mixed value is in f->rhash then. 0, -EINVAL or -EHOSTUNREACH. Once per
 * switch hop: the table's lookup is inlined here; the header is parsed
 * only when the frame's route cache does not hold it (fwd_fill()).
 */
static inline __attribute__((always_inline)) int fwd_mask(struct emu_node *n, struct emu_frame *f, uint64_t *mask,
							  uint32_t *dst)
{
	uint32_t host = f->rdst;

	if (emu_unlikely(host == EMU_RDST_NONE)) {
		int64_t r = fwd_fill(n, f);

		if (r < 0)
			return (int)r;
		host = (uint32_t)r;
	}
	*dst = host;
	*mask = emu_route(n, host);
	return *mask ? 0 : -EHOSTUNREACH;
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

/* fwd_mask() for a frame to forward, counted in @st: a frame without a route is freed here */
static inline int fwd_lookup(struct emu_node *n, struct emu_frame *f, struct emu_fwd_stats *st, uint64_t *mask,
			     uint32_t *dst)
{
	int err = fwd_mask(n, f, mask, dst);

	if (err) {
		if (err == -EINVAL)
			st->malformed++;
		else
			st->no_route++;
		emu_frame_free(n, f);
		return err;
	}
	st->forwarded++;
	return 0;
}

/* emu_fwd_route(), inline in emu_fwd_forward() and the fwd model's route op */
static inline __attribute__((always_inline)) int route_st(struct emu_node *n, struct emu_frame *f,
							  struct emu_fwd_stats *st)
{
	uint64_t mask = 0;
	uint32_t dst = 0;
	int err = fwd_lookup(n, f, st, &mask, &dst);

	return err ? err : emu_route_next(n, mask, dst, f->rhash, emu_node_routing(n), f);
}

int emu_fwd_forward(struct emu_node *n, struct emu_frame *f, struct emu_fwd_stats *st)
{
	int out = route_st(n, f, st);

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
	return route_st(n, f, st);
}

/* the port to send @f on (the engine sends it), or a negative errno when sent or freed here */
static int fwd_route(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	(void)port;
	return route_st(n, f, &((struct emu_fwd_state *)emu_node_state(n))->st);
}

const struct emu_model_ops emu_fwd_ops = {
	.name = "fwd",
	.state_size = sizeof(struct emu_fwd_state),
	.route = fwd_route,
};
