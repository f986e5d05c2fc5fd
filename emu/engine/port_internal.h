/* SPDX-License-Identifier: MIT */
/*
 * DOC: port_internal.h - the per-frame data path (port.c) as the worker
 * loop (engine.c) calls it: one event of each kind in, and the timer and
 * credit hand-offs. port.c owns ports, serializers, credits and node
 * timers; engine.c owns workers, windows and channels and reaches ports
 * only through these calls. Both share the structures of
 * engine_internal.h. What models call is in port.h.
 */
#ifndef EMU_PORT_INTERNAL_H
#define EMU_PORT_INTERNAL_H

#include "emu/engine/engine_internal.h"

/* emu_port_arrive - frame @f arrives at @n's port @pi (EMU_EV_FRAME) */
void emu_port_arrive(struct emu_node *n, unsigned pi, struct emu_frame *f);
/* emu_port_credit - a credit event (EMU_EV_CREDIT) for @n's port @pi */
void emu_port_credit(struct emu_node *n, unsigned pi, uint64_t arg);
/* emu_port_credit_in - a credit event for @n's port from a channel: queue it or keep it an event */
void emu_port_credit_in(struct emu_node *n, const struct emu_ev *ev);
/* emu_port_txdone - @pi's wire went idle (EMU_EV_TXDONE, the port's wake): commit, or tell the model */
void emu_port_txdone(struct emu_node *n, unsigned pi);
/* emu_port_link - scheduled link state change of @pi (EMU_EV_LINK) */
void emu_port_link(struct emu_node *n, unsigned pi, bool up);
/* emu_port_ingress_release - give back the ingress buffer @f holds (a credit upstream), if any */
void emu_port_ingress_release(struct emu_node *n, struct emu_frame *f);
/* emu_port_enqueue - put @f (class @c) on @port's egress queue and commit what fits the port's window */
void emu_port_enqueue(struct emu_node *n, unsigned port, struct emu_frame *f, unsigned c);
/* emu_port_queued_at - emu_port_queued() of port @p at @now (its node's time): for a loop over ports */
uint64_t emu_port_queued_at(struct emu_port *p, emu_time_t now);
/*
 * emu_port_bytes - bytes queued on @p and committed ahead of its wire, as
 * its ring of committed-ahead records last settled them (emu_port_queued_at()
 * settles it first; with the ring empty nothing is to be settled)
 */
static inline uint64_t emu_port_bytes(const struct emu_port *p)
{
	return p->qbytes + p->cbytes_tc[0] + p->cbytes_tc[1];
}
/* emu_post - give @ev its (source, sequence) key and queue it locally or on @chan */
void emu_post(struct emu_node *n, struct emu_ev *ev, struct emu_chan *chan);
/* emu_port_ahead - run the transmit wake an open-loop node armed in the event just processed, if it can be */
void emu_port_ahead(struct emu_worker *w, emu_time_t end);
/* emu_port_ahead_window - at a window's start (ending at @end): run the wakes emu_port_ahead() kept for it */
void emu_port_ahead_window(struct emu_worker *w, emu_time_t end);
/*
 * emu_port_refresh - choose the variant of each of @n's ports (the fast
 * path or the full one: struct emu_port's fast) from what it depends on:
 * at the start of a run, and when the node's state or a setting of its
 * ports changes (a port's link state refreshes it in emu_port_link()).
 */
void emu_port_refresh(struct emu_node *n);
/* emu_timer_fired - the wake of @n's earliest timer popped: drop it (and idle ones after it), wake the next */
void emu_timer_fired(struct emu_node *n);

#endif /* EMU_PORT_INTERNAL_H */
