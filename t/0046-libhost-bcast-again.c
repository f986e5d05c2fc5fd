// SPDX-License-Identifier: MIT
/*
 * DOC: a Canary leader with the sketch sends a block's broadcast again
 * once, marked again, also when requests (counter 0), not probes, made it
 * send it (libhost/canary.c, lead_again).
 *
 * One leader (rank 0 of 4, sketch 1) completes block 0 from one REDUCE of
 * the three other hosts and broadcasts it. Past its broadcast wait, two
 * hosts' retransmission requests (counter 0) reach it: the second makes it
 * send the broadcast again (P / 2 = 2 of them), and each request still
 * gets a unicast copy. A first probe (counter 1) right after it crossed
 * it: nothing is sent. One that comes past the quiet period must not make
 * it broadcast a third time, unmarked (every switch drops a second
 * broadcast of an id without the mark: one frame on the leader's link for
 * nothing); it gets a unicast copy.
 */
#include <string.h>

#include "libhost/canary_host.h"
#include "libhost/wire.h"
#include "lhmock.h"
#include "tap.h"

#define P 4
#define TENANT 3
#define E 4
#define K 1

static unsigned nframes, nbcast, nagain, nplain, ncopy;

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	struct emu_canary_hdr h;

	(void)ctx;
	(void)handle;
	nframes++;
	if (!lhm_sent_canary(len, &h))
		return;
	switch (h.flags & EMU_CANARY_OP_MASK) {
	case EMU_CANARY_OP_BCAST:
		nbcast++;
		if (nbcast > 1) {
			if (h.children & EMU_CANARY_BCAST_AGAIN)
				nagain++;
			else
				nplain++;
		}
		break;
	case EMU_CANARY_OP_RETX_DATA:
		ncopy++;
		break;
	}
}

static const struct lh_transport_ops ops = {
	.frame_get = lhm_frame_get, .frame_send = t_frame_send, .now = lhm_now, .timer = lhm_timer_none,
	.tx_busy = lhm_tx_idle, .random = lhm_random,
};

/* a frame about block 0 (led by rank 0): @op with @counter and @children */
static void frame(struct lh_host *h, uint8_t op, uint16_t counter, uint32_t children, const int32_t *d, unsigned n)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 9 };
	uint8_t f[LH_FRAME_MAX];
	struct emu_canary_hdr ch = {
		.dst = 0x0a000001, .id = (uint32_t)TENANT << 24 | 0, .counter = counter, .hosts = P,
		.children = children, .flags = op,
	};
	uint32_t len = lh_wire_canary_build(f, mac, mac, &ch, d, n);

	lh_host_rx(h, f, len);
}

int main(void)
{
	struct lh_transport t = { .ops = &ops, .rate_bps = 100000000000ULL, .mtu = 1500 };
	struct lh_peer peers[P];
	int32_t out[E - K] = { 0 };

	plan(8);
	for (unsigned i = 0; i < P; i++)
		peers[i] = (struct lh_peer){ .ipv4 = 0x0a000001 + i, .mac = { 2, 0, 0, 0, 0, (uint8_t)i } };
	struct lh_host *h = lh_host_create(&t, &peers[0]);
	struct lh_comm *c = lh_comm_create(h, peers, P, 0, TENANT);
	struct lh_ar_cfg cfg = {
		.algo = LH_ALGO_CANARY, .elements = E, .sketch = K, .rtt = 2 * LH_US, .switch_timeout = LH_US,
		.max_failures = 3, .input_block = lhm_input,
	};
	struct lh_req *r = lh_allreduce(c, &cfg, NULL, out, E - K);
	const struct lh_ar_stats *st = r ? lh_req_stats(r) : NULL;

	ok(h && c && st, "a leader of one %d-element block among %d hosts, sketch %d", E - K, P, K);
	/* ranks 1-3 reduced together: three times the input, sketch sum 2 + 3 + 4 */
	int32_t red[E] = { 300, 303, 306, 2 + 3 + 4 };

	frame(h, EMU_CANARY_OP_REDUCE, P - 1, 0, red, E);
	ok(lh_req_data_done(r) && out[0] == 400 && out[1] == 404 && out[2] == 408 && nbcast == 1,
	   "the block completes with the exact sum (%d %d %d) and is broadcast once", out[0], out[1], out[2]);
	lhm_now_ps += 50 * LH_US;	/* past the broadcast wait */
	frame(h, EMU_CANARY_OP_RETX_REQ, 0, 1, NULL, 0);
	ok(nbcast == 1 && ncopy == 1, "the first request: a unicast copy, no broadcast (copies %u)", ncopy);
	frame(h, EMU_CANARY_OP_RETX_REQ, 0, 2, NULL, 0);
	ok(nagain == 1 && nplain == 0 && ncopy == 2,
	   "the second request: the broadcast again, marked (%u marked, %u not), and a unicast copy", nagain, nplain);
	unsigned before = nframes;

	frame(h, EMU_CANARY_OP_RETX_REQ, 1, 3, NULL, 0);
	is_int(nframes - before, 0, "a first probe right after it (it crossed it): nothing sent");
	lhm_now_ps += 50 * LH_US;	/* past the quiet period after it */
	frame(h, EMU_CANARY_OP_RETX_REQ, 1, 3, NULL, 0);
	is_int(nplain, 0, "a first probe after it: no unmarked broadcast, which every switch would drop");
	is_int(ncopy, 3, "...but a unicast copy to its host");
	is_u64(st->rebroadcasts, 1, "one broadcast again counted");
	lh_host_destroy(h);
	return done_testing();
}
