// SPDX-License-Identifier: MIT
/*
 * DOC: the worker's event queue (emu/engine/event.c) pops in exactly
 * (time, key) order whatever the push pattern.
 *
 * A slot of the timing wheel is sorted when the wheel reaches it: a few
 * ascending runs are merged, a slot in no order is sorted from scratch.
 * Each case pushes events in a pattern that forces one of these paths (one
 * run, two runs, many runs, thousands at one picosecond, far-future events,
 * pushes into the current slot while it is being popped) and checks every
 * popped event against a reference sort of the same events, with the
 * popped count. The events' payload carries their push index so that a
 * pop that loses or duplicates an event is caught, not only one out of order.
 * A slot keeps its events in chunks of EMU_EVCHUNK_N: the earliest time of
 * the queue (what the engine's windows are computed from) is checked with
 * the smallest event in a slot's first, middle and last chunk. A crowded
 * slot whose events share one time is counted into place by source
 * (q->nbysrc counts those): checked with a source whose events were pushed
 * out of key order, and against sources too far apart and a late time,
 * which take the merges instead.
 */
#include <stdlib.h>
#include <string.h>

#include "emu/engine/event.h"
#include "emu/engine/rng.h"
#include "tap.h"

#define MAXEV 20000

static struct emu_ev pushed[MAXEV], want[MAXEV];
static unsigned npushed;

static int cmp_ev(const void *a, const void *b)
{
	const struct emu_ev *x = a, *y = b;

	if (emu_ev_before(x, y))
		return -1;
	return emu_ev_before(y, x);
}

static void push(struct emu_evq *q, emu_time_t t, uint32_t src, uint64_t seq)
{
	struct emu_ev ev = {
		.t = t,
		.key = EMU_EV_KEY(src, seq),
		.arg = npushed,
		.node = src,
		.type = EMU_EV_TIMER,
	};

	pushed[npushed++] = ev;
	emu_evq_push(q, &ev);
}

/*
 * Pop everything in windows of @win ps (as the engine does), pushing
 * @inject events per pop after the popped time (into the current
 * slot) while the budget lasts; check the order against a sort of all
 * pushed events.
 */
static void drain_check(struct emu_evq *q, const char *name, emu_time_t win, unsigned inject, struct emu_rng *rng)
{
	unsigned npop = 0, bad = 0, budget = inject ? 2000 : 0;
	emu_time_t end = win;
	struct emu_ev ev;
	static struct emu_ev got[MAXEV];

	while (emu_evq_min_time(q) != EMU_TIME_INF) {
		if (!emu_evq_pop_before(q, end, &ev)) {
			end += win;
			continue;
		}
		if (npop < MAXEV)
			got[npop] = ev;
		npop++;
		for (unsigned k = 0; k < inject && budget; k++, budget--)
			push(q, ev.t + 1 + emu_rng_next(rng) % 300, 900000 + (uint32_t)(emu_rng_next(rng) % 7), npushed);
	}
	memcpy(want, pushed, npushed * sizeof(*want));
	qsort(want, npushed, sizeof(*want), cmp_ev);
	is_int(npop, npushed, "%s: every pushed event popped once", name);
	for (unsigned i = 0; i < npop && i < npushed; i++)
		bad += got[i].t != want[i].t || got[i].key != want[i].key || got[i].arg != want[i].arg;
	is_int(bad, 0, "%s: popped in (time, key) order", name);
	npushed = 0;
}

int main(void)
{
	struct emu_evq q;
	struct emu_rng rng;

	plan(52);
	emu_rng_init(&rng, 17, 0);
	emu_evq_init(&q);

	/* one ascending run per slot */
	for (unsigned i = 0; i < 3000; i++)
		push(&q, 1000 + i * 7, i % 50, i);
	drain_check(&q, "in order", 10000, 0, &rng);

	/* two runs in every slot: the second interleaves with the first */
	for (unsigned i = 0; i < 2000; i++)
		push(&q, 20000 + (i / 40) * 256 + (i % 40), 10 + i % 40, i);
	for (unsigned i = 0; i < 2000; i++)
		push(&q, 20000 + (i / 40) * 256 + (i % 40), 5 + i % 40, 5000 + i);
	drain_check(&q, "two runs per slot", 10000, 0, &rng);

	/* a few runs of different lengths at a few instants (lock-step hosts) */
	for (unsigned r = 0; r < 12; r++)
		for (unsigned i = 0; i < 3 + r * 5; i++)
			push(&q, 2000000 + (i % 3) * 64, 100 + r * 3 + i, r * 100 + i);
	drain_check(&q, "a dozen runs in one slot", 3000, 0, &rng);

	/* interleaved runs at one picosecond: merged on their keys alone */
	for (unsigned r = 0; r < 5; r++)
		for (unsigned i = 0; i < 40; i++)
			push(&q, 2500000, 200 + i * 5 + r, r * 100 + i);
	drain_check(&q, "five interleaved runs at one instant", 3000, 0, &rng);

	/* the same but one a picosecond later with the smallest key, pushed first */
	push(&q, 2600001, 1, 999);
	for (unsigned r = 0; r < 5; r++)
		for (unsigned i = 0; i < 40; i++)
			push(&q, 2600000, 200 + i * 5 + r, r * 100 + i);
	drain_check(&q, "interleaved runs at one instant and one a picosecond later", 3000, 0, &rng);

	/* thousands at one picosecond in no order: counted by source */
	uint64_t nbysrc = q.nbysrc;

	for (unsigned i = 0; i < 5000; i++)
		push(&q, 4000000, (uint32_t)(emu_rng_next(&rng) % 4096), i);
	drain_check(&q, "5000 at one instant, random sources", 1000, 0, &rng);
	is_int(q.nbysrc - nbysrc, 1, "... counted by source");

	/*
	 * One instant, seven interleaved runs: counted by source, where two
	 * sources' events were pushed out of key order (one's last is its
	 * smallest, the other's descend), which the count alone would keep;
	 * neither the first nor the last event pushed is of the smallest or
	 * the largest source
	 */
	nbysrc = q.nbysrc;
	for (unsigned i = 0; i < 360; i++)
		push(&q, 4200000, 300 + (i + 30) % 60, (i + 30) % 60 == 7 && i >= 300 ? 1 : (i + 30) % 60 == 11 ? 1000 - i : i);
	drain_check(&q, "one instant, a source's events out of key order", 1000, 0, &rng);
	is_int(q.nbysrc - nbysrc, 1, "... counted by source");

	/* the same with the sources too far apart to count (spread over 4 a event): merged */
	nbysrc = q.nbysrc;
	for (unsigned i = 0; i < 360; i++)
		push(&q, 4300000, 300 + (i % 60) * 100, i);
	drain_check(&q, "one instant, sources far apart", 1000, 0, &rng);
	is_int(q.nbysrc - nbysrc, 0, "... merged, not counted");

	/*
	 * 40 runs at one instant but for one event, a picosecond later, that
	 * ends a run (over 32 runs: sorted from scratch); and 6 runs but for
	 * one, a picosecond earlier, that starts a run (merged)
	 */
	nbysrc = q.nbysrc;
	for (unsigned i = 0; i < 400; i++)
		push(&q, 4400000 + (i == 199), 300 + i % 40, i);
	drain_check(&q, "40 runs at one instant but one event ending a run", 1000, 0, &rng);
	for (unsigned i = 0; i < 240; i++)
		push(&q, 4460000 - (i == 120), 300 + i % 40, i);
	drain_check(&q, "6 runs at one instant but one, a picosecond earlier, starting a run", 1000, 0, &rng);
	is_int(q.nbysrc - nbysrc, 0, "... sorted or merged, not counted");

	/* crowded instants do not pin their chunks once read: two, 1 us apart */
	unsigned half = MAXEV / 2, per = (half + EMU_EVCHUNK_N - 1) / EMU_EVCHUNK_N;

	for (unsigned i = 0; i < MAXEV; i++)
		push(&q, i < half ? 4500000 : 5500000, (uint32_t)(emu_rng_next(&rng) % 4096), i);
	is_int(q.nchunks, 2 * per, "%u events at each of two instants fill %u chunks each", half, per);
	drain_check(&q, "two crowded instants", 1000, 0, &rng);
	ok(q.nchunks == 0 && q.nspare <= EMU_EVCHUNK_SPARE && q.nspare > 0,
	   "then %u chunks in use, %u kept spare (at most %u, some)", q.nchunks, q.nspare, EMU_EVCHUNK_SPARE);
	unsigned nfree = 0;

	for (const struct emu_evchunk *c = q.spare; c; c = c->prev)
		nfree++;
	is_int(nfree, q.nspare, "the free list holds as many chunks as counted");

	/* random times over several wheel spans (far heap) */
	for (unsigned i = 0; i < 8000; i++)
		push(&q, 6000000 + emu_rng_next(&rng) % 20000000, (uint32_t)(emu_rng_next(&rng) % 300), i);
	drain_check(&q, "random over ten wheel spans", 50000, 0, &rng);

	/* pushes into the slot being popped */
	for (unsigned i = 0; i < 1000; i++)
		push(&q, 40000000 + emu_rng_next(&rng) % 100000, (uint32_t)(emu_rng_next(&rng) % 64), i);
	drain_check(&q, "pushes into the current slot", 700, 2, &rng);

	/* many runs (above the natural-merge limit) of small sizes in one slot */
	for (unsigned i = 0; i < 600; i++)
		push(&q, 50000000 + (emu_rng_next(&rng) % 4), (uint32_t)(i % 40 ? 1000 - i : 5), i);
	drain_check(&q, "descending sources", 100, 0, &rng);

	/* 17 events, just over the insertion-sort size, reversed */
	for (unsigned i = 0; i < 17; i++)
		push(&q, 60000000, 17 - i, i);
	drain_check(&q, "17 reversed", 100, 0, &rng);

	/* the earliest event in the oldest, a middle and the newest chunk of a slot */
	for (unsigned where = 0; where < 3; where++) {
		/* within the wheel's span of the last slot popped (60 us) */
		emu_time_t base = (61000000 + where * 100000) & ~(emu_time_t)255;	/* a slot's start */
		unsigned n = 3 * EMU_EVCHUNK_N + 5, at = where == 0 ? 0 : where == 1 ? EMU_EVCHUNK_N + 3 : n - 1;

		for (unsigned i = 0; i < n; i++)
			push(&q, base + (i == at ? 10 : 20 + i % 200), i, i);
		const struct emu_evslot *s = &q.slot[(base >> EMU_EVQ_GRAIN_BITS) & (EMU_EVQ_SLOTS - 1)];

		is_int(s->tail ? emu_evslot_chunk(s->tail)->base + emu_evslot_last_n(s->tail) : 0, n,
		       "the slot's %u events are in the wheel", n);
		is_int(q.nused, 1, "in one slot of it");
		is_int(emu_evq_min_time(&q), base + 10, "earliest time found in chunk %u of a slot's %u", at / EMU_EVCHUNK_N, n / EMU_EVCHUNK_N + 1);
		drain_check(&q, "a slot of four chunks", 1000, 0, &rng);
	}

	emu_evq_fini(&q);
	return done_testing();
}
