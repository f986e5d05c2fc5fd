// SPDX-License-Identifier: MIT
/*
 * DOC: fwd.c - the forwarding switch model. See fwd.h.
 */
#include "emu/switch/fwd.h"

#include <errno.h>

#include "libhost/wire.h"

int emu_fwd_port(struct emu_node *n, const struct emu_frame *f)
{
	uint32_t dip;
	uint64_t hash;

	if (lh_wire_dst(f->data, f->len, &dip, &hash) != LH_WIRE_OK)
		return -EINVAL;
	uint32_t host = emu_fabric_host_by_ip(emu_engine_fabric(n->eng), dip);

	if (host == EMU_NONE32)
		return -EHOSTUNREACH;
	uint64_t mask = emu_route(n, host);

	if (!mask)
		return -EHOSTUNREACH;
	return (int)emu_route_pick(n, mask, hash, emu_node_routing(n));
}

int emu_fwd_forward(struct emu_node *n, struct emu_frame *f, struct emu_fwd_stats *st)
{
	int port = emu_fwd_port(n, f);

	if (port < 0) {
		if (port == -EINVAL)
			st->malformed++;
		else
			st->no_route++;
		emu_frame_free(n, f);
		return port;
	}
	st->forwarded++;
	return emu_send(n, (unsigned)port, f);
}

static void fwd_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct emu_fwd_state *s = emu_node_state(n);

	(void)port;
	emu_fwd_forward(n, f, &s->st);
}

const struct emu_model_ops emu_fwd_ops = {
	.name = "fwd",
	.state_size = sizeof(struct emu_fwd_state),
	.rx = fwd_rx,
};
