/* SPDX-License-Identifier: MIT */
/*
 * DOC: chan.h - the channel between two partitions.
 *
 * A channel carries events from one worker (the producer) to another (the
 * consumer), one direction. The engine only uses this interface, so the
 * in-process ring (chan_ring.c, this file's first implementation) and a
 * transport between processes (ZeroMQ, later) are interchangeable:
 *
 *   send()  producer, during a window: queue one event. Never blocks and
 *           never fails (a full ring spills into an overflow list).
 *   flush() producer, at the end of its window: make everything sent
 *           visible to drain().
 *   drain() consumer, after the window barrier (so after every flush()):
 *           hand every event sent so far to @sink, in any order (the
 *           consumer's heap orders them). Return how many.
 *
 * Events are processed in the window after the one that sent them, because
 * every event crossing partitions is at least one link latency (the
 * lookahead) in the future.
 */
#ifndef EMU_CHAN_H
#define EMU_CHAN_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

struct emu_chan;

typedef void (*emu_chan_sink)(void *arg, const struct emu_ev *ev);

struct emu_chan_ops {
	const char *name;
	void (*send)(struct emu_chan *c, const struct emu_ev *ev);
	void (*flush)(struct emu_chan *c);
	size_t (*drain)(struct emu_chan *c, emu_chan_sink sink, void *arg);
	void (*destroy)(struct emu_chan *c);
};

struct emu_chan {
	const struct emu_chan_ops *ops;
	uint32_t from;		/* producer worker */
	uint32_t to;		/* consumer worker */
	uint64_t sent;		/* producer-side count */
	uint64_t spilled;	/* events that did not fit the ring */
};

/* emu_chan_ring_create - in-process channel over an SPSC ring of @slots. */
struct emu_chan *emu_chan_ring_create(uint32_t from, uint32_t to, uint32_t slots);

static inline void emu_chan_destroy(struct emu_chan *c)
{
	if (c)
		c->ops->destroy(c);
}

#endif /* EMU_CHAN_H */
