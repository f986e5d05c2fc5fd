// SPDX-License-Identifier: MIT
/*
 * DOC: fwd.c - the forwarding switch model. See fwd.h.
 */
#include "emu/switch/fwd.h"

#include <errno.h>

#include "libhost/wire.h"

/*
 * the ports of @n toward @f's destination and its flow hash; 0, -EINVAL or
 * -EHOSTUNREACH. Once per switch hop: the header's parse and the table's
 * lookup are inlined here (route.c's merlin path parses too).
 */
static __attribute__((flatten)) int fwd_mask(struct emu_node *n, const struct emu_frame *f, uint64_t *mask, uint64_t *hash)
{
	uint32_t dip;

	if (lh_wire_dst(f->data, f->len, &dip, hash) != LH_WIRE_OK)
		return -EINVAL;
	uint32_t host = emu_fabric_host_by_ip(emu_engine_fabric(n->eng), dip);

	if (host == EMU_NONE32)
		return -EHOSTUNREACH;
	*mask = emu_route(n, host);
	return *mask ? 0 : -EHOSTUNREACH;
}

int emu_fwd_port(struct emu_node *n, const struct emu_frame *f)
{
	uint64_t mask, hash;
	int err = fwd_mask(n, f, &mask, &hash);

	return err ? err : (int)emu_route_pick(n, mask, hash, emu_node_routing(n));
}

/* fwd_mask() for a frame to forward, counted in @st: a frame without a route is freed here */
static inline int fwd_lookup(struct emu_node *n, struct emu_frame *f, struct emu_fwd_stats *st, uint64_t *mask,
			     uint64_t *hash)
{
	int err = fwd_mask(n, f, mask, hash);

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

int emu_fwd_forward(struct emu_node *n, struct emu_frame *f, struct emu_fwd_stats *st)
{
	uint64_t mask, hash;
	int err = fwd_lookup(n, f, st, &mask, &hash);

	return err ? err : emu_send_pick(n, mask, hash, emu_node_routing(n), f);
}

/* the port to send @f on (the engine sends it), or a negative errno when sent or freed here */
static int fwd_route(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct emu_fwd_stats *st = &((struct emu_fwd_state *)emu_node_state(n))->st;
	uint64_t mask, hash;
	int err = fwd_lookup(n, f, st, &mask, &hash);

	(void)port;
	return err ? err : emu_route_next(n, mask, hash, emu_node_routing(n), f);
}

const struct emu_model_ops emu_fwd_ops = {
	.name = "fwd",
	.state_size = sizeof(struct emu_fwd_state),
	.route = fwd_route,
};
