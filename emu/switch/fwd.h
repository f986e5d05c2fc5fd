/* SPDX-License-Identifier: MIT */
/*
 * DOC: fwd.h - the forwarding switch model: IPv4/Canary frames routed to
 * their destination host over the current routing snapshot, the next hop
 * chosen by the run's routing policy (adaptive, ecmp, leastloaded). It is
 * the switch of plain fabrics (engine tests, background-only runs) and the
 * forwarding stage of the Canary switch for everything it does not
 * aggregate.
 */
#ifndef EMU_FWD_H
#define EMU_FWD_H

#include <stdint.h>

#include "emu/engine/engine.h"

struct emu_fwd_stats {
	uint64_t forwarded;
	uint64_t no_route;
	uint64_t malformed;
};

struct emu_fwd_state {
	struct emu_fwd_stats st;
	struct emu_route_row row;	/* the route op's lookup (route.h), in the line it counts in */
};

extern const struct emu_model_ops emu_fwd_ops;

/*
 * emu_fwd_port - the egress port for @f at switch @n (routing policy
 * applied). Return the port, or -EHOSTUNREACH / -EINVAL (unroutable or
 * malformed; @f untouched).
 */
int emu_fwd_port(struct emu_node *n, const struct emu_frame *f);

/* emu_fwd_forward - route and send @f; count into @st. Frees @f on error. */
int emu_fwd_forward(struct emu_node *n, struct emu_frame *f, struct emu_fwd_stats *st);

/*
 * emu_fwd_route - the fwd model's route op (engine.h) for a model whose
 * @f is forwarded as it is, counted into @st: the port to send @f on, or a
 * negative errno when sent or freed here. Reads @f's route cache
 * (frame.h), which an earlier switch may have filled, and fills it.
 */
int emu_fwd_route(struct emu_node *n, struct emu_frame *f, struct emu_fwd_stats *st);

#endif /* EMU_FWD_H */
