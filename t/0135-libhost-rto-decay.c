// SPDX-License-Identifier: MIT
/*
 * DOC: the adaptive retransmission timeout forgets a slow block
 * (libhost/canary_internal.h, lh_rtt_sample and rto_compute): it is at least
 * twice the slowest recent block round trip, and that maximum now comes
 * down again as shorter blocks come back.
 *
 * A static tree's result comes only once the last host has sent the
 * block, so a block that waited for a host stalled on its own backed-off
 * timeout is a round trip as long as that timeout. The maximum never came
 * down: one such block held the timeout at its ceiling, 64 floors, for
 * the rest of the run, and every lost block waited that long (2 % loss,
 * 16 KiB drop-tail buffers: static:4 at 6x the ring's time, t/0140).
 *
 * Here: blocks of a fifth of the floor, then one of 64 floors: the
 * timeout is at its ceiling, and stays there for the next 10 short
 * blocks (a slow block still counts while queues may be building); after
 * 400 short ones it is back under 2 floors.
 */
#include "libhost/canary_internal.h"
#include "tap.h"

#define FLOOR (10 * LH_US)

int main(void)
{
	struct canary c = { .adaptive = true, .rto_min = FLOOR };
	struct lh_req r = { .st = { .retx_timeout = FLOOR } };

	plan(4);
	for (unsigned i = 0; i < 100; i++)
		lh_rtt_sample(&c, FLOOR / 5);
	is_u64(rto_compute(&c, &r), FLOOR, "short blocks: the timeout is its floor (%.1f us)", (double)rto_compute(&c, &r) / LH_US);
	lh_rtt_sample(&c, 64 * FLOOR);
	is_u64(rto_compute(&c, &r), LH_RTO_MAX * FLOOR, "one block of 64 floors: the ceiling (%.1f us)",
	       (double)rto_compute(&c, &r) / LH_US);
	for (unsigned i = 0; i < 10; i++)
		lh_rtt_sample(&c, FLOOR / 5);
	is_u64(rto_compute(&c, &r), LH_RTO_MAX * FLOOR, "...still, after 10 short blocks (%.1f us)", (double)rto_compute(&c, &r) / LH_US);
	for (unsigned i = 10; i < 400; i++)
		lh_rtt_sample(&c, FLOOR / 5);
	ok(rto_compute(&c, &r) < 2 * FLOOR, "...and under 2 floors after 400 (%.1f us; it stayed at the ceiling before)",
	   (double)rto_compute(&c, &r) / LH_US);
	return done_testing();
}
