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

#include "emu/engine/event.h"

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

/*
 * The channel to or from a worker of another process (chan_remote.c).
 * send() serializes the event (and the frame's bytes, giving the frame
 * back to @pool) into a byte buffer that the window exchange (dist.c)
 * ships; on the receiving side the exchange hands the bytes to the
 * channel (emu_chan_remote_feed) and drain() rebuilds events and frames
 * from @pool. Records are 8-byte aligned; see chan_remote.c.
 */
struct emu_pool;
struct emu_chan *emu_chan_remote_create(uint32_t from, uint32_t to, struct emu_pool *pool);
/* producer side: bytes queued since the last take, and the earliest event time */
size_t emu_chan_remote_pending(const struct emu_chan *c);
uint64_t emu_chan_remote_min_time(const struct emu_chan *c);
/* copy the queued bytes to @buf (emu_chan_remote_pending() of them) and reset */
void emu_chan_remote_take(struct emu_chan *c, uint8_t *buf);
/*
 * emu_chan_remote_check - walk @len bytes of records from a peer and check
 * every bound: @ok_node(@arg, node, port) says whether the destination is
 * one the receiving worker owns; every time must be >= @not_before.
 * Return the number of events, or -1 if anything is malformed.
 */
long emu_chan_remote_check(const uint8_t *p, size_t len, uint64_t not_before,
			   int (*ok_node)(void *arg, uint32_t node, uint32_t port), void *arg);
/* consumer side: the next drain() reads these (checked) bytes; they must stay valid until then */
void emu_chan_remote_feed(struct emu_chan *c, const uint8_t *p, size_t len);

static inline void emu_chan_destroy(struct emu_chan *c)
{
	if (c)
		c->ops->destroy(c);
}

#endif /* EMU_CHAN_H */
