// SPDX-License-Identifier: MIT
/*
 * DOC: the SPSC ring: two threads pass millions of events; none lost, none
 * duplicated, order kept. Also the channel's overflow path.
 */
#include <pthread.h>
#include <sched.h>

#include "emu/engine/chan.h"
#include "emu/engine/ring.h"
#include "tap.h"

#define ITEMS (2u * 1000 * 1000)

/*
 * wait - a spinning thread gives its core away after a while: on a busy
 * machine the other thread may not be running, and spinning until the
 * scheduler preempts us would cost a whole time slice per ring-full.
 */
static void wait(unsigned *spins)
{
	if (++*spins < 64) {
		emu_cpu_relax();
	} else {
		*spins = 0;
		sched_yield();
	}
}

static struct emu_ring *ring;

static void *producer(void *arg)
{
	(void)arg;
	struct emu_ev ev = { .type = EMU_EV_TIMER };
	unsigned spins = 0;

	for (uint64_t i = 0; i < ITEMS; i++) {
		ev.key = i;
		ev.arg = i * 7 + 1;
		while (emu_ring_enqueue(ring, &ev))
			wait(&spins);
		if ((i & 31) == 31)
			emu_ring_publish(ring);
	}
	emu_ring_publish(ring);
	return NULL;
}

struct cons_result {
	uint64_t got, out_of_order, bad_payload;
};

static void *consumer(void *arg)
{
	struct cons_result *r = arg;
	struct emu_ev buf[128];
	uint64_t expect = 0;
	unsigned spins = 0;

	while (expect < ITEMS) {
		uint32_t n = emu_ring_dequeue_burst(ring, buf, 128);

		if (!n) {
			wait(&spins);
			continue;
		}
		for (uint32_t i = 0; i < n; i++) {
			if (buf[i].key != expect)
				r->out_of_order++;
			if (buf[i].arg != buf[i].key * 7 + 1)
				r->bad_payload++;
			expect = buf[i].key + 1;
			r->got++;
		}
	}
	return NULL;
}

static uint64_t drained;
static uint64_t drained_sum;

static void sink(void *arg, const struct emu_ev *ev)
{
	(void)arg;
	drained++;
	drained_sum += ev->key;
}

int main(void)
{
	pthread_t p, c;
	struct cons_result r = { 0 };

	plan(9);
	ring = emu_ring_create(1024);
	ok(ring && ring->size == 1024, "ring of 1024 slots");
	ok(emu_ring_create(0) == NULL, "a ring of 0 slots is refused");
	pthread_create(&c, NULL, consumer, &r);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	is_u64(r.got, ITEMS, "consumer got every item (%u)", ITEMS);
	is_u64(r.out_of_order, 0, "none out of order, lost or duplicated");
	is_u64(r.bad_payload, 0, "payloads intact");
	struct emu_ev tmp;

	is_u64(emu_ring_dequeue_burst(ring, &tmp, 1), 0, "ring empty afterwards");
	emu_ring_destroy(ring);

	/* channel: 8 slots, 1000 events in one window spill and still all arrive */
	struct emu_chan *ch = emu_chan_ring_create(0, 1, 8);
	uint64_t want = 0;

	for (uint64_t i = 0; i < 1000; i++) {
		struct emu_ev ev = { .key = i };

		ch->ops->send(ch, &ev);
		want += i;
	}
	ch->ops->flush(ch);
	size_t n = ch->ops->drain(ch, sink, NULL);

	ok(n == 1000 && drained == 1000, "channel delivered 1000 of 1000 through an 8-slot ring");
	is_u64(drained_sum, want, "each exactly once");
	ok(ch->spilled == 992, "992 spilled to the overflow list (got %llu)", (unsigned long long)ch->spilled);
	emu_chan_destroy(ch);
	return done_testing();
}
