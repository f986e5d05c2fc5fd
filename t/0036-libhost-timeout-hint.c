// SPDX-License-Identifier: MIT
/*
 * DOC: a Canary host's window follows the switches' timeout hint
 * (libhost/canary.c, canary_size and canary_hint).
 *
 * One host (rank 1 of 4) of a 400-block allreduce, fed broadcasts by hand:
 *  - at the start its window is bandwidth x (base RTT + 3 switch timeouts),
 *    twice over, and it sends that many blocks;
 *  - broadcasts with a switch field of 0 (switches with a fixed timeout)
 *    leave the window and the retransmission timeout as they were;
 *  - broadcasts carrying 12 us (switches that learned to wait longer) move
 *    the time a block spends in the switches 1/8 of the way per broadcast,
 *    the window grows with it and the host sends the blocks it opens; the
 *    retransmission timeout grows with the window;
 *  - hints of 0.6 us shrink it below the start;
 *  - the largest hint the field holds bounds the window;
 *  - a window given in the configuration stays, hints or not.
 */
#include <string.h>

#include "libhost/canary_host.h"
#include "libhost/wire.h"
#include "lhmock.h"
#include "tap.h"

#define P 4
#define TENANT 5
#define E 256
#define NBLOCKS 400
#define RATE 100000000000ULL
#define RTT (2 * LH_US)
#define TIMEOUT (1 * LH_US)

static unsigned nreduce;

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	struct emu_canary_hdr h;
	unsigned n;

	(void)ctx;
	(void)handle;
	if (lh_wire_canary_parse(lhm_txbuf, len, &h, &n) == LH_WIRE_OK &&
	    (h.flags & EMU_CANARY_OP_MASK) == EMU_CANARY_OP_REDUCE)
		nreduce++;
}

/* the clock stands still: no block's round trip feeds the estimate, the timeout is its minimum */
static lh_time_t t_now(void *ctx)
{
	(void)ctx;
	return 0;
}

static const struct lh_transport_ops ops = {
	.frame_get = lhm_frame_get, .frame_send = t_frame_send, .now = t_now, .timer = lhm_timer_none,
	.tx_busy = lhm_tx_idle, .random = lhm_random,
};

static void input(void *arg, size_t off, int32_t *out, size_t n)
{
	(void)arg;
	for (size_t i = 0; i < n; i++)
		out[i] = (int32_t)(off + i);
}

/* a full frame's time at RATE, as the host computes it */
static const lh_time_t FT = (EMU_CANARY_DATA_OFF + 4 * E + 24) * 8 * 1000000000000ULL / RATE;

/* the window for @hold of switch time (the rule of canary_size) */
static unsigned window_for(lh_time_t hold)
{
	unsigned w = (unsigned)(2 * (RTT + hold) / FT) + 1;

	return w < 4 ? 4 : w;
}

/* the retransmission timeout's minimum for @hold with window @w */
static lh_time_t rto_for(lh_time_t hold, unsigned w)
{
	return 2 * (RTT + hold + (lh_time_t)w * FT);
}

/* the result of block @b (all of it, P hosts) as its broadcast, the switches' @hint_ns in the switch field */
static void bcast(struct lh_host *h, unsigned b, uint16_t hint_ns)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 9 };
	static int32_t d[E];
	uint8_t f[LH_FRAME_MAX];
	struct emu_canary_hdr ch = {
		.dst = 0x0a000001 + b % P, .id = (uint32_t)TENANT << 24 | b, .counter = P, .hosts = P,
		.swaddr = hint_ns, .flags = EMU_CANARY_F_MULTICAST | EMU_CANARY_OP_BCAST,
	};
	uint32_t len = lh_wire_canary_build(f, mac, mac, &ch, d, E);

	lh_host_rx(h, f, len);
}

struct host {
	struct lh_host *h;
	struct lh_req *r;
	const struct lh_ar_stats *st;
	unsigned next;		/* next block to complete (not led by rank 1) */
};

static int32_t out[NBLOCKS * E];

static void start(struct host *x, const struct lh_peer *peers, unsigned window)
{
	static const struct lh_transport t = { .ops = &ops, .rate_bps = RATE, .mtu = 1500 };
	struct lh_ar_cfg cfg = {
		.algo = LH_ALGO_CANARY, .elements = E, .rtt = RTT, .switch_timeout = TIMEOUT, .max_failures = 3,
		.window = window, .input_block = input,
	};

	nreduce = 0;
	x->h = lh_host_create(&t, &peers[1]);
	x->r = lh_allreduce(lh_comm_create(x->h, peers, P, 1, TENANT), &cfg, NULL, out, NBLOCKS * E);
	x->st = x->r ? lh_req_stats(x->r) : NULL;
	x->next = 0;
}

/* complete the next @n blocks rank 1 sent, each broadcast with @hint_ns; returns the hold the rule gives */
static lh_time_t complete(struct host *x, unsigned n, uint16_t hint_ns, lh_time_t hold)
{
	for (unsigned i = 0; i < n; i++) {
		if (x->next % P == 1)
			x->next++;
		bcast(x->h, x->next++, hint_ns);
		if (hint_ns)
			hold = (lh_time_t)((int64_t)hold + ((int64_t)hint_ns * 1000 - (int64_t)hold) / 8);
	}
	return hold;
}

int main(void)
{
	struct lh_peer peers[P];
	struct host x;
	lh_time_t hold = 3 * TIMEOUT;
	unsigned w0 = window_for(hold);

	plan(15);
	for (unsigned i = 0; i < P; i++)
		peers[i] = (struct lh_peer){ .ipv4 = 0x0a000001 + i, .mac = { 2, 0, 0, 0, 0, (uint8_t)i } };

	start(&x, peers, 0);
	ok(x.r && x.st->window == w0 && w0 > 100 && w0 < NBLOCKS / 2,
	   "start: window for base RTT + 3 x 1 us: %u blocks (expected %u)", x.r ? x.st->window : 0, w0);
	is_int(nreduce, w0, "...and that many blocks sent");
	ok(x.st->retx_timeout == rto_for(hold, w0), "...retransmission timeout 2 x (RTT + 3 us + window)");

	/* a fixed timeout: no hint */
	complete(&x, 20, 0, hold);
	ok(x.st->window == w0 && x.st->retx_timeout == rto_for(hold, w0),
	   "20 broadcasts without a hint (fixed timeout): window and timeout unchanged (%u)", x.st->window);
	is_int(nreduce, w0 + 20, "...20 more blocks sent, one per completed block");

	/* switches that learned 12 us along the branch */
	unsigned sent = nreduce;

	hold = complete(&x, 1, 12000, hold);
	ok(hold > 3 * TIMEOUT && x.st->window == window_for(hold) && x.st->window > w0,
	   "one broadcast with 12 us: the hold moves 1/8 of the way (%.3f us), window %u", (double)hold / 1e6,
	   x.st->window);
	ok(nreduce == sent + 1 + (x.st->window - w0), "...the host sends the completed block's successor and the %u "
	   "the window opened (%u sent)", x.st->window - w0, nreduce - sent);
	hold = complete(&x, 60, 12000, hold);
	ok(x.st->window == window_for(hold) && x.st->window + 2 >= window_for(12 * LH_US),
	   "60 more: window %u, near the one for 12 us (%u)", x.st->window, window_for(12 * LH_US));
	ok(x.st->retx_timeout == rto_for(hold, x.st->window), "...the retransmission timeout grew with it (%.3f us)",
	   (double)x.st->retx_timeout / 1e6);

	/* switches that learned to wait little: 0.6 us (3 x a 200 ns floor) */
	hold = complete(&x, 60, 600, hold);
	ok(x.st->window == window_for(hold) && x.st->window < w0 && x.st->window <= window_for(600 * LH_NS) + 2,
	   "60 broadcasts with 0.6 us: window shrinks to %u (for 0.6 us: %u)", x.st->window,
	   window_for(600 * LH_NS));
	ok(x.st->errors == 0, "no protocol error");
	lh_host_destroy(x.h);

	/* the largest hint the field holds bounds the window */
	start(&x, peers, 0);
	hold = complete(&x, 100, 65535, 3 * TIMEOUT);
	ok(x.st->window == window_for(hold) && x.st->window <= window_for(65535 * LH_NS),
	   "100 broadcasts with 65.535 us: window %u, at most %u", x.st->window, window_for(65535 * LH_NS));
	lh_host_destroy(x.h);

	/* a window given in the configuration stays; the timers still follow the hint */
	start(&x, peers, 50);
	is_int(nreduce, 50, "--window 50: 50 blocks sent");
	hold = complete(&x, 30, 12000, 3 * TIMEOUT);
	ok(x.st->window == 50 && nreduce == 80, "...30 broadcasts with 12 us: still 50, one block sent per completion");
	ok(x.st->retx_timeout == rto_for(hold, 50), "...the retransmission timeout follows the hint (%.3f us)",
	   (double)x.st->retx_timeout / 1e6);
	lh_host_destroy(x.h);
	return done_testing();
}
