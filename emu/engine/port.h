/* SPDX-License-Identifier: MIT */
/*
 * DOC: port.h - the data path as models call it (port.c): send a frame,
 * free one, arm a timer, and what a port's state says (wire time, link,
 * busy, queued bytes). Called on the node's worker only. Included by
 * engine.h, which defines the structures; the worker loop's side of
 * port.c is port_internal.h.
 */
#ifndef EMU_PORT_H
#define EMU_PORT_H

#include "emu/engine/engine.h"

/* emu_frame_free - release @f (and the ingress buffer space it holds). */
void emu_frame_free(struct emu_node *n, struct emu_frame *f);

/*
 * emu_send - queue @f on @port for transmission. The engine owns it from
 * here. Return 0; or -ENETDOWN (link down), -ENOBUFS (lossy queue full),
 * -EMSGSIZE (over the MTU), -EINVAL (no such port): then @f was freed and
 * the drop counted.
 */
int emu_send(struct emu_node *n, unsigned port, struct emu_frame *f);

/*
 * emu_send_copies - emu_send() a copy of @f (emu_frame_clone()) on each
 * port of @ports in ascending order, @f itself on the last; free @f if
 * @ports is empty. Each frame sent has xin EMU_PORT_NONE: one the node
 * made (under merlin it waits in its output's own FIFO). A copy that
 * cannot be sent is dropped and counted as emu_send() does.
 */
void emu_send_copies(struct emu_node *n, struct emu_frame *f, uint64_t ports);

/* emu_timer_at - fire ops->timer(@cookie) at @t (>= now). */
void emu_timer_at(struct emu_node *n, emu_time_t t, uint64_t cookie);

/* emu_port_tx_time - wire time of a @bytes frame on @port (padded: emu_wire_bytes; exact, no division at 100G etc.). */
static inline emu_time_t emu_port_tx_time(const struct emu_node *n, unsigned port, uint32_t bytes)
{
	const struct emu_port *p = &n->ports[port];

	return p->ps_per_byte ? (emu_time_t)emu_wire_bytes(bytes) * p->ps_per_byte : emu_tx_time(bytes, p->rate_bps);
}

/* emu_port_up - is @port's link up (and connected)? */
static inline bool emu_port_up(const struct emu_node *n, unsigned port)
{
	const struct emu_port *p = &n->ports[port];

	return p->connected && p->up;
}

/* emu_port_busy - is @port's serializer busy or its queue non-empty? */
static inline bool emu_port_busy(const struct emu_node *n, unsigned port)
{
	const struct emu_port *p = &n->ports[port];

	return p->qframes || p->busy_until > emu_node_now(n);
}

/*
 * emu_port_queued - bytes queued on @port that have not started on the
 * wire by now: those waiting and those committed with a later start.
 */
uint64_t emu_port_queued(struct emu_node *n, unsigned port);

#endif /* EMU_PORT_H */
