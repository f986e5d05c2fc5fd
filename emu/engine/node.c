// SPDX-License-Identifier: MIT
/*
 * DOC: node.c - what a model asks of its node (node.h): the clock, frames
 * from the worker's pool, the run's stop, completion and progress, the
 * pipeline hold and the open-loop promise. Sends, frees and timers are the
 * data path's (port.c).
 */
#include "emu/engine/engine_internal.h"

#include <string.h>

emu_time_t emu_node_now(const struct emu_node *n)
{
	return n->w->now;
}

enum emu_routing emu_node_routing(const struct emu_node *n)
{
	return n->eng->cfg.routing;
}

uint64_t emu_node_buffer(const struct emu_node *n)
{
	return n->eng->cfg.buffer_bytes;
}

struct emu_frame *emu_frame_alloc(struct emu_node *n)
{
	return emu_pool_get(&n->w->pool);
}

struct emu_frame *emu_frame_alloc_len(struct emu_node *n, uint32_t len)
{
	return emu_pool_get_class(&n->w->pool, emu_fclass(len));
}

struct emu_frame *emu_frame_clone(struct emu_node *n, const struct emu_frame *f)
{
	uint32_t bytes = emu_frame_bytes(f);
	struct emu_frame *c = emu_pool_get_class(&n->w->pool, emu_fclass(bytes));

	c->len = f->len;
	c->kept = f->kept;
	c->user = f->user;
	memcpy(c->data, f->data, bytes);
	return c;
}

void emu_stop(struct emu_node *n)
{
	if (n->w->now < n->w->stop_req)
		n->w->stop_req = n->w->now;
}

void emu_node_progress(struct emu_node *n)
{
	if (n->w->now >= n->w->progress_t)
		n->w->progress_t = n->w->now + 1;	/* 0 stays "none yet" */
}

void emu_node_waits(struct emu_node *n, emu_time_t delay)
{
	if (delay > n->w->wait_max)
		n->w->wait_max = delay;
}

void emu_node_done(struct emu_node *n)
{
	struct emu_worker *w = n->w;

	w->done++;
	if (w->now > w->done_max)
		w->done_max = w->now;
}

void emu_node_hold_until(struct emu_node *n, emu_time_t t)
{
	n->w->hold = t;
}

/*
 * A node whose transmit wakes may run ahead of the frames it receives:
 * see "Open-loop sources" in port.c for when they do.
 */
void emu_node_open_loop(struct emu_node *n)
{
	const struct emu_engine *eng = n->eng;

	n->open_loop = n->ops->timer_idle != NULL && !eng->cfg.no_ahead;
	if (eng->cfg.lossy)
		return;
	/*
	 * Lossless: the peer's port toward the node must never wait for the
	 * node's credits, so that the credit a received frame gives back
	 * (whose sequence number the wake run ahead takes first) is never
	 * what the peer waits for when a frame of the node arrives with it.
	 * What the peer can have outstanding: the frames on the wire and
	 * committed (a round trip of the link and the commit window) and two
	 * frames more.
	 */
	for (unsigned i = 0; i < n->nports; i++) {
		const struct emu_port *p = &n->ports[i];
		uint64_t rtt = 2 * (uint64_t)p->latency + p->commit_ps;
		uint64_t bytes = (uint64_t)((double)rtt * (double)p->rate_bps / 8e12) + 2 * (uint64_t)p->mtu_frame;

		if (eng->cfg.buffer_bytes < bytes)
			n->open_loop = false;
	}
}
