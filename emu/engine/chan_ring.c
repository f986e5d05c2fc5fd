// SPDX-License-Identifier: MIT
/*
 * DOC: chan_ring.c - the in-process channel: an SPSC ring of events plus an
 * overflow list for windows that send more than the ring holds. The
 * overflow list is written by the producer during a window and read by the
 * consumer only after the window barrier, so it needs no atomics.
 */
#include <stdlib.h>

#include "emu/engine/chan.h"
#include "emu/engine/ring.h"
#include "emu/engine/util.h"

struct chan_ring {
	struct emu_chan chan;
	struct emu_ring *ring;
	struct emu_ev *ovf;
	size_t novf;
	size_t capovf;
};

static void cr_send(struct emu_chan *c, const struct emu_ev *ev)
{
	struct chan_ring *cr = (struct chan_ring *)c;

	c->sent++;
	if (emu_likely(emu_ring_enqueue(cr->ring, ev) == 0))
		return;
	if (cr->novf == cr->capovf) {
		cr->capovf = cr->capovf ? 2 * cr->capovf : 1024;
		cr->ovf = emu_xrealloc(cr->ovf, cr->capovf * sizeof(*cr->ovf));
	}
	cr->ovf[cr->novf++] = *ev;
	c->spilled++;
}

static void cr_flush(struct emu_chan *c)
{
	emu_ring_publish(((struct chan_ring *)c)->ring);
}

static size_t cr_drain(struct emu_chan *c, emu_chan_sink sink, void *arg)
{
	struct chan_ring *cr = (struct chan_ring *)c;
	struct emu_ev buf[64];
	size_t total = 0;
	uint32_t n;

	while ((n = emu_ring_dequeue_burst(cr->ring, buf, 64)) > 0) {
		for (uint32_t i = 0; i < n; i++)
			sink(arg, &buf[i]);
		total += n;
	}
	for (size_t i = 0; i < cr->novf; i++)
		sink(arg, &cr->ovf[i]);
	total += cr->novf;
	cr->novf = 0;
	return total;
}

static void cr_destroy(struct emu_chan *c)
{
	struct chan_ring *cr = (struct chan_ring *)c;

	emu_ring_destroy(cr->ring);
	free(cr->ovf);
	free(cr);
}

static const struct emu_chan_ops chan_ring_ops = {
	.name = "ring",
	.send = cr_send,
	.flush = cr_flush,
	.drain = cr_drain,
	.destroy = cr_destroy,
};

struct emu_chan *emu_chan_ring_create(uint32_t from, uint32_t to, uint32_t slots)
{
	struct chan_ring *cr = emu_xaligned(sizeof(*cr));

	cr->ring = emu_ring_create(slots);
	if (!cr->ring) {
		free(cr);
		return NULL;
	}
	cr->chan.ops = &chan_ring_ops;
	cr->chan.from = from;
	cr->chan.to = to;
	return &cr->chan;
}
