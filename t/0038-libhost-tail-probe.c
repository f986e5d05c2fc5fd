// SPDX-License-Identifier: MIT
/*
 * DOC: a Canary host with the sketch arms its tail timer once it has sent
 * its last block, also when the allreduce's last block is one it leads
 * (libhost/canary.c, canary_pull and tail_arm).
 *
 * One host (rank 1 of 4, window 2, sketch 4) fed broadcasts by hand on a
 * clock the test moves. Every broadcast but that of the last block it
 * sends comes back; nothing comes after it. The host's first request for
 * that block must be the tail probe (RETX_REQ, counter 3, probe_gap after
 * the last result), not its retransmission timeout's request (counter 0,
 * later). Two runs: the allreduce's last block led by another rank (the
 * host sends it last), and led by the host itself (it skips it: its last
 * block sent is the one before, and its pull reaches the end of the
 * blocks by skipping, not by sending). Then, the first run again, every
 * request the host makes for that block until its timeout's: after its
 * first and second probes the tail timer probes it again (counter 3) at
 * every tick, the ticks backing off (doubling), so a host whose broadcast
 * and probes were lost, or came before the leader would answer, does not
 * wait for its retransmission timeout (fixed at 200 us in this run).
 */
#include <string.h>

#include "libhost/canary_host.h"
#include "libhost/wire.h"
#include "lhmock.h"
#include "tap.h"

#define P 4
#define RANK 1
#define TENANT 5
#define E 64
#define K 4
#define RATE 100000000000ULL
#define TIMERS 256

static lh_time_t now;
static struct timer {
	lh_time_t at;
	uint64_t cookie;
} tm[TIMERS];
static unsigned ntm;
static unsigned nidle, nlive;	/* timers lh_host_timer_idle() calls idle / not, before any fires */
static struct {
	uint32_t seq;		/* RETX_REQ seen: block id of the first one... */
	int counter;		/* ...its counter, -1: none yet */
	lh_time_t at;
} req;
/* with all_reqs: every RETX_REQ until the first with counter 0 (the timeout's), or 16 */
static bool all_reqs;
static struct req_rec {
	int counter;
	lh_time_t at;
} reqs[16];
static unsigned nreqs;

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	struct emu_canary_hdr h;
	unsigned n;

	(void)ctx;
	(void)handle;
	if (lh_wire_canary_parse(lhm_txbuf, len, &h, &n) != LH_WIRE_OK ||
	    (h.flags & EMU_CANARY_OP_MASK) != EMU_CANARY_OP_RETX_REQ)
		return;
	if (all_reqs && nreqs < 16)
		reqs[nreqs++] = (struct req_rec){ h.counter, now };
	if (req.counter < 0 && (!all_reqs || h.counter == 0 || nreqs == 16)) {
		req.seq = h.id & 0xffffff;
		req.counter = h.counter;
		req.at = now;
	}
}

static lh_time_t t_now(void *ctx)
{
	(void)ctx;
	return now;
}

static void t_timer(void *ctx, lh_time_t at, uint64_t cookie)
{
	(void)ctx;
	if (ntm < TIMERS)
		tm[ntm++] = (struct timer){ at, cookie };
}

static const struct lh_transport_ops ops = {
	.frame_get = lhm_frame_get, .frame_send = t_frame_send, .now = t_now, .timer = t_timer,
	.tx_busy = lhm_tx_idle, .random = lhm_random,
};

static void input(void *arg, size_t off, int32_t *out, size_t n)
{
	(void)arg;
	for (size_t i = 0; i < n; i++)
		out[i] = (int32_t)(off + i);
}

/* the result of block @b as its broadcast */
static void bcast(struct lh_host *h, unsigned b)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 9 };
	static int32_t d[E - K];
	uint8_t f[LH_FRAME_MAX];
	struct emu_canary_hdr ch = {
		.dst = 0x0a000001 + b % P, .id = (uint32_t)TENANT << 24 | b, .counter = P, .hosts = P,
		.flags = EMU_CANARY_F_MULTICAST | EMU_CANARY_OP_BCAST,
	};
	uint32_t len = lh_wire_canary_build(f, mac, mac, &ch, d, E - K);

	lh_host_rx(h, f, len);
}

/* fire timers in time order until the host sends a request (or none is left) */
static void run_timers(struct lh_host *h)
{
	while (ntm && req.counter < 0) {
		unsigned best = 0;

		for (unsigned i = 1; i < ntm; i++)
			if (tm[i].at < tm[best].at)
				best = i;
		uint64_t cookie = tm[best].cookie;

		if (tm[best].at > now)
			now = tm[best].at;
		tm[best] = tm[--ntm];
		lh_host_timer(h, cookie);
	}
}

/*
 * An allreduce of @nblocks blocks; every block rank RANK sends is broadcast
 * back 5 us after the previous one (block round trips of about 10 us:
 * the timeout, twice that and more, comes well after probe_gap) but the last: which block is asked for
 * first, with which counter? Returns the last block sent.
 */
static unsigned tail(unsigned nblocks, const struct lh_peer *peers, lh_time_t retx_timeout)
{
	static const struct lh_transport t = { .ops = &ops, .rate_bps = RATE, .mtu = 1500 };
	static int32_t out[64 * (E - K)];
	struct lh_ar_cfg cfg = {
		.algo = LH_ALGO_CANARY, .elements = E, .rtt = 2 * LH_US, .switch_timeout = LH_US, .max_failures = 3,
		.window = 2, .sketch = K, .input_block = input, .retx_timeout = retx_timeout,
	};
	unsigned last = nblocks - 1;

	if (last % P == RANK)
		last--;
	now = 0;
	ntm = 0;
	req.counter = -1;
	struct lh_host *h = lh_host_create(&t, &peers[RANK]);
	struct lh_req *r = lh_allreduce(lh_comm_create(h, peers, P, RANK, TENANT), &cfg, NULL, out,
					(size_t)nblocks * (E - K));

	if (!r) {
		lh_host_destroy(h);
		return 0;
	}
	for (unsigned b = 0; b < last; b++) {
		if (b % P == RANK)
			continue;
		now += 5 * LH_US;
		bcast(h, b);
	}
	nidle = nlive = 0;
	for (unsigned i = 0; i < ntm; i++) {
		if (lh_host_timer_idle(h, tm[i].cookie))
			nidle++;
		else
			nlive++;
	}
	run_timers(h);
	lh_host_destroy(h);
	return last;
}

int main(void)
{
	struct lh_peer peers[P];

	plan(14);
	for (unsigned i = 0; i < P; i++)
		peers[i] = (struct lh_peer){ .ipv4 = 0x0a000001 + i, .mac = { 2, 0, 0, 0, 0, (uint8_t)i } };

	/* 11 blocks: the last (10) is rank 2's; rank 1 sends it last */
	unsigned last = tail(11, peers, 0);

	is_int(last, 10, "11 blocks: the host sends block 10 last");
	is_int(nidle, 7, "...the timers of the 7 blocks broadcast back (0, 2-4, 6-8) are idle");
	/* the tail timer was armed again when a block came back after the last was sent: only block timers are idle */
	is_int(nlive, 3, "...block 10's and the two tail timers are not");
	is_int(req.seq, last, "...its first request is for the block whose broadcast never came");
	is_int(req.counter, 3, "...a tail probe (counter 3), not the timeout's request");

	/* 10 blocks: the last (9) is rank 1's own; it sends block 8 last */
	last = tail(10, peers, 0);
	is_int(last, 8, "10 blocks, the last led by the host: it sends block 8 last");
	is_int(nidle, 6, "...the timers of the 6 blocks broadcast back (0, 2-4, 6, 7) are idle");
	is_int(nlive, 2, "...block 8's and the tail timer are not");
	is_int(req.seq, last, "...its first request is for block 8");
	is_int(req.counter, 3, "...a tail probe (counter 3), not the timeout's request");

	/* the first run again, every request until the timeout's */
	all_reqs = true;
	nreqs = 0;
	last = tail(11, peers, 200 * LH_US);
	unsigned ntail = 0;
	bool backoff = true;

	while (ntail < nreqs && reqs[ntail].counter == 3)
		ntail++;
	/* twice, with each tick's jitter of up to a quarter more (lh_backoff): a ratio in [2 / 1.25, 2 x 1.25] */
	for (unsigned i = 3; i < ntail; i++) {
		lh_time_t g = reqs[i].at - reqs[i - 1].at, p = reqs[i - 1].at - reqs[i - 2].at;

		if (5 * g < 8 * p || 2 * g > 5 * p)
			backoff = false;
	}
	for (unsigned i = 0; i < nreqs; i++)
		diag("request %u: counter %d at %.1f us", i, reqs[i].counter, (double)reqs[i].at / LH_US);
	ok(ntail >= 4, "...%u tail probes (counter 3) for it before any other request", ntail);
	ok(backoff, "...from the third on, each tick twice as far from the previous (jittered: 1.6-2.5x)");
	ok(nreqs > ntail && reqs[ntail].counter == 0, "...then the timeout's request (counter 0)");
	ok(ntail >= 4 && reqs[2].at - reqs[1].at == reqs[1].at - reqs[0].at,
	   "...no back-off before the first two probes are out: the third a probe gap after the second");
	return done_testing();
}
