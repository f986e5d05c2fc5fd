// SPDX-License-Identifier: MIT
/*
 * DOC: a communicator's second allreduce is not told done by a timer of
 * its first (libhost/host.c, the completion barrier's timer).
 *
 * Timers carry the communicator's slot, not the request: a request's
 * barrier timer (a host that has its result re-sends DONE to rank 0 until
 * the final DONE comes) can fire after the next allreduce on the same
 * communicator started. It must then not send DONE for the new request,
 * which does not have its result yet: rank 0 would count it, end the
 * barrier, stop sending (a ring leaves its last forwarded packets queued)
 * and this host would wait for ever. libcanarympi.so, which runs one
 * allreduce after another on a communicator, met exactly that.
 *
 * Rank 1 of 2, Canary, one block of 4 (led by rank 0): the first request
 * completes from a broadcast and passes the barrier; the second starts;
 * the first one's barrier timer fires: no DONE goes out. Once the second
 * has its result, its own DONE does.
 */
#include <string.h>

#include "libhost/canary_host.h"
#include "libhost/wire.h"
#include "lhmock.h"
#include "tap.h"

#define P 2
#define TENANT 5
#define E 4

static unsigned ndone;
static uint64_t cookies[64];
static unsigned ncookies;

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	struct emu_canary_hdr h;

	(void)ctx;
	(void)handle;
	if (lhm_sent_canary(len, &h) && (h.flags & EMU_CANARY_OP_MASK) == EMU_CANARY_OP_DONE)
		ndone++;
}

static void t_timer(void *ctx, lh_time_t at, uint64_t cookie)
{
	(void)ctx;
	(void)at;
	if (ncookies < 64)
		cookies[ncookies++] = cookie;
}

static const struct lh_transport_ops ops = {
	.frame_get = lhm_frame_get, .frame_send = t_frame_send, .now = lhm_now, .timer = t_timer,
	.tx_busy = lhm_tx_idle, .random = lhm_random,
};

static void frame(struct lh_host *h, uint8_t op, uint32_t seq, uint16_t counter, const int32_t *d, unsigned n)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 9 };
	uint8_t f[LH_FRAME_MAX];
	struct emu_canary_hdr ch = {
		.dst = 0x0a000002, .id = (uint32_t)TENANT << 24 | seq, .counter = counter, .hosts = P, .flags = op,
	};
	uint32_t len = lh_wire_canary_build(f, mac, mac, &ch, d, n);

	lh_host_rx(h, f, len);
}

int main(void)
{
	struct lh_transport t = { .ops = &ops, .rate_bps = 100000000000ULL, .mtu = 1500 };
	struct lh_peer peers[P];
	int32_t out[E] = { 0 };
	const int32_t sum[E] = { 1, 2, 3, 4 };

	plan(5);
	for (unsigned i = 0; i < P; i++)
		peers[i] = (struct lh_peer){ .ipv4 = 0x0a000001 + i, .mac = { 2, 0, 0, 0, 0, (uint8_t)i } };
	struct lh_host *h = lh_host_create(&t, &peers[1]);
	struct lh_comm *c = lh_comm_create(h, peers, P, 1, TENANT);
	struct lh_ar_cfg cfg = {
		.algo = LH_ALGO_CANARY, .elements = E, .rtt = 2 * LH_US, .switch_timeout = LH_US, .max_failures = 3,
		.input_block = lhm_input,
	};
	struct lh_req *r = lh_allreduce(c, &cfg, NULL, out, E);

	frame(h, EMU_CANARY_OP_BCAST, 0, P, sum, E);
	ok(r && lh_req_data_done(r) && ndone == 1 && out[3] == 4, "the first request has its result, says DONE");
	unsigned armed = ncookies;	/* ...and its barrier timer is among the timers armed so far */

	frame(h, EMU_CANARY_OP_DONE | EMU_CANARY_F_BYPASS, 0xffffff, P, NULL, 0);
	ok(lh_req_done(r), "the final DONE ends its barrier");
	r = lh_allreduce(c, &cfg, NULL, out, E);
	ok(r && !lh_req_data_done(r), "a second allreduce on the communicator starts");
	ndone = 0;
	for (unsigned i = 0; i < armed; i++)
		lh_host_timer(h, cookies[i]);
	is_int(ndone, 0, "the first request's timers fire: no DONE for the second, which has no result yet");
	frame(h, EMU_CANARY_OP_BCAST, 0, P, sum, E);
	ok(lh_req_data_done(r) && ndone == 1, "with its result, the second says DONE (%u)", ndone);
	lh_host_destroy(h);
	return done_testing();
}
