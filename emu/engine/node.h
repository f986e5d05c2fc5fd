/* SPDX-License-Identifier: MIT */
/*
 * DOC: node.h - what a model asks of its node (node.c): its clock and
 * state, frames from the worker's pool, the run's stop, completion and
 * progress, the switch pipeline's hold and the open-loop promise. Called
 * on the node's worker only. Included by engine.h, which defines the
 * structures.
 */
#ifndef EMU_NODE_H
#define EMU_NODE_H

#include "emu/engine/engine.h"

emu_time_t emu_node_now(const struct emu_node *n);
static inline void *emu_node_state(const struct emu_node *n) { return n->state; }
static inline struct emu_rng *emu_node_rng(struct emu_node *n) { return &n->rng; }
static inline const struct emu_fab_node *emu_node_desc(const struct emu_node *n) { return n->fn; }
enum emu_routing emu_node_routing(const struct emu_node *n);
uint64_t emu_node_buffer(const struct emu_node *n);

/* emu_frame_alloc - a fresh frame from this worker's pool. Cannot fail. */
struct emu_frame *emu_frame_alloc(struct emu_node *n);
/*
 * emu_frame_alloc_len - a fresh frame whose buffer holds at least @len
 * (<= EMU_FRAME_MAX) bytes: for a model that knows the length beforehand
 * (saves emu_send() moving it to a smaller buffer).
 */
struct emu_frame *emu_frame_alloc_len(struct emu_node *n, uint32_t len);
/* emu_frame_clone - a copy of @f (bytes and length). Cannot fail. */
struct emu_frame *emu_frame_clone(struct emu_node *n, const struct emu_frame *f);

/*
 * emu_stop - ask the run to end. The run stops at now + the smallest link
 * latency, a point that does not depend on the partitioning.
 */
void emu_stop(struct emu_node *n);

/*
 * emu_node_done - count one completion (e.g. a host finished its
 * allreduce). When emu_engine_expect_done()'s count is reached, the run
 * stops one lookahead after the latest completion (a point independent of
 * the partitioning).
 */
void emu_node_done(struct emu_node *n);

/* emu_node_progress - something useful happened (feeds the stall watchdog). */
void emu_node_progress(struct emu_node *n);

/*
 * emu_node_waits - @n armed a timer @delay ahead that may bring progress
 * when it fires (a retransmission timeout, backed off): the watchdog
 * waits at least twice the longest such delay before calling a run
 * stuck, so a run that only waits on a timeout is not stopped.
 */
void emu_node_waits(struct emu_node *n, emu_time_t delay);

/*
 * emu_node_hold_until - frames @n sends from now until the end of the
 * current callback (or the next call) start on the wire at @t at the
 * earliest (0: no hold). For a switch whose pipeline delays a frame it
 * has already decided about (canary_sw.c's recirculation). Only where
 * emu_node_can_hold() (the FIFO egress model).
 */
void emu_node_hold_until(struct emu_node *n, emu_time_t t);
static inline bool emu_node_can_hold(const struct emu_node *n)
{
	return !n->xb;
}

/*
 * emu_node_open_loop - what @n sends never depends on the frames it
 * receives (a background source): receiving a frame changes nothing its
 * transmit path reads, and posts nothing but the ingress buffer's credit.
 * It must free what it receives at once. The engine may then run the
 * node's transmit wakes ahead of the frames it receives (port.c,
 * "Open-loop sources"); results are as if it did not. Call it from
 * ops->init.
 */
void emu_node_open_loop(struct emu_node *n);

#endif /* EMU_NODE_H */
