// SPDX-License-Identifier: MIT
/*
 * DOC: a Canary leader fails a re-issued block only when data that was
 * sent is provably missing, and polls the hosts that have not asked
 * (libhost/canary.c, lead_proven and lead_poll); a polled host answers
 * only if its data has left it.
 *
 * One leader (rank 0 of 8, no sketch, fixed 10 us timeout) leads the one
 * block. Attempt 0 misses rank 7's data: the first request after a quiet
 * quarter timeout fails it (the paper's rule). Attempt 1 misses rank 7's
 * data again. Five requests (ranks 1-5) prove nothing: five askers, seven
 * contributions counted, all five may be among them. With two more
 * needed the leader polls ranks 6 and 7; rank 6 answers, rank 7 does not
 * (its data has not left it), and is polled again half a timeout later,
 * then after a timeout, two... No failure: when rank 7's data comes the
 * block completes. Run again with rank 7's request coming: seven askers,
 * seven contributions counted, so one asker's data is not here: the block
 * fails; its next attempt starts with nothing proven. Run a third time
 * with the seventh request right after the last contribution (not yet
 * quiet): the leader's own timer fails it a quarter timeout after that
 * contribution, with no further request.
 *
 * Then a host (rank 1 of 8): polled before its data has left it, or just
 * after (its request could overtake the data), it says nothing; polled a
 * quarter timeout later, it asks for the block at once, naming its
 * attempt; a re-issue held back is not answered for until it went out.
 */
#include <string.h>

#include "libhost/canary_host.h"
#include "libhost/wire.h"
#include "lhmock.h"
#include "tap.h"

#define P 8
#define TENANT 3
#define E 4
#define RTO (10 * LH_US)

static unsigned nfailure, nreq, nbcast;
static uint32_t req_to_mask, req_id;
static bool busy;

/* the timers asked for: the test fires them */
struct tmr {
	lh_time_t at;
	uint64_t cookie;
};
static struct tmr tmr[256];
static unsigned ntmr;

static void t_timer(void *ctx, lh_time_t at, uint64_t cookie)
{
	(void)ctx;
	if (ntmr < sizeof(tmr) / sizeof(tmr[0]))
		tmr[ntmr++] = (struct tmr){ at, cookie };
}

/* every timer due by now, in the order asked for */
static void fire(struct lh_host *h)
{
	for (unsigned i = 0; i < ntmr; i++)
		if (tmr[i].at <= lhm_now_ps) {
			uint64_t ck = tmr[i].cookie;

			memmove(&tmr[i], &tmr[i + 1], (ntmr - i - 1) * sizeof(tmr[0]));
			ntmr--;
			i--;
			lh_host_timer(h, ck);
		}
}

static bool t_busy(void *ctx)
{
	(void)ctx;
	return busy;
}

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	struct emu_canary_hdr h;

	(void)ctx;
	(void)handle;
	if (!lhm_sent_canary(len, &h))
		return;
	switch (h.flags & EMU_CANARY_OP_MASK) {
	case EMU_CANARY_OP_FAILURE:
		nfailure++;
		break;
	case EMU_CANARY_OP_RETX_REQ:
		nreq++;
		req_to_mask |= 1u << (h.dst - 0x0a000001);
		req_id = h.id;
		break;
	case EMU_CANARY_OP_BCAST:
		nbcast++;
		break;
	}
}

static const struct lh_transport_ops ops = {
	.frame_get = lhm_frame_get, .frame_send = t_frame_send, .now = lhm_now, .timer = t_timer,
	.tx_busy = t_busy, .random = lhm_random,
};

/* a frame about the block, attempt @a: @op with @counter and @children, @d: E elements or none */
static void frame(struct lh_host *h, unsigned a, uint8_t op, uint16_t counter, uint32_t children,
		  const int32_t *d)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 9 };
	uint8_t f[LH_FRAME_MAX];
	struct emu_canary_hdr ch = {
		.dst = 0x0a000001, .id = (uint32_t)TENANT << 24 | a, .counter = counter, .hosts = P,
		.children = children, .flags = op,
	};
	uint32_t len = lh_wire_canary_build(f, mac, mac, &ch, d, d ? E : 0);

	lh_host_rx(h, f, len);
}

/* the data of @n hosts: n times every rank's input (100 + i) */
static const int32_t *data(unsigned n)
{
	static int32_t d[E];

	for (unsigned i = 0; i < E; i++)
		d[i] = (int32_t)(n * (100 + i));
	return d;
}

struct run {
	struct lh_host *h;
	struct lh_req *r;
	const struct lh_ar_stats *st;
	int32_t out[E];
};

static void start(struct run *u, unsigned rank, struct lh_peer *peers)
{
	struct lh_transport t = { .ops = &ops, .rate_bps = 100000000000ULL, .mtu = 1500 };
	struct lh_ar_cfg cfg = {
		.algo = LH_ALGO_CANARY, .elements = E, .rtt = 2 * LH_US, .switch_timeout = LH_US,
		.retx_timeout = RTO, .max_failures = 3, .input_block = lhm_input,
	};

	lhm_now_ps = 0;
	ntmr = 0;
	nfailure = nreq = nbcast = 0;
	req_to_mask = 0;
	memset(u->out, 0, sizeof(u->out));
	u->h = lh_host_create(&t, &peers[rank]);
	struct lh_comm *c = lh_comm_create(u->h, peers, P, rank, TENANT);

	u->r = lh_allreduce(c, &cfg, NULL, u->out, E);
	u->st = u->r ? lh_req_stats(u->r) : NULL;
}

/* the leader through attempt 0's failure and attempt 1 short of rank 7, quiet, five requests */
static void to_polls(struct run *u)
{
	frame(u->h, 0, EMU_CANARY_OP_REDUCE, P - 2, 0, data(P - 2));
	lhm_now_ps += RTO;
	frame(u->h, 0, EMU_CANARY_OP_RETX_REQ, 0, 1, NULL);
	frame(u->h, 1, EMU_CANARY_OP_REDUCE, P - 2, 0, data(P - 2));
	lhm_now_ps += RTO;
	for (unsigned k = 1; k <= 5; k++)
		frame(u->h, 1, EMU_CANARY_OP_RETX_REQ, 0, k, NULL);
}

int main(void)
{
	struct lh_peer peers[P];
	struct run u;

	plan(28);
	for (unsigned i = 0; i < P; i++)
		peers[i] = (struct lh_peer){ .ipv4 = 0x0a000001 + i, .mac = { 2, 0, 0, 0, 0, (uint8_t)i } };

	/* rank 7 slow: waited for */
	busy = false;
	start(&u, 0, peers);
	ok(u.st != NULL, "a leader of one %d-element block among %d hosts", E, P);
	to_polls(&u);
	ok(u.st->failures == 1 && nfailure == P - 1,
	   "attempt 0 failed on the first quiet request, the paper's rule (%llu failures, %u FAILURE frames)",
	   (unsigned long long)u.st->failures, nfailure);
	ok(u.st->polls == 2 && nreq == 2 && req_to_mask == (1u << 6 | 1u << 7),
	   "attempt 1: five requests prove nothing, ranks 6 and 7 are polled (%llu polls, mask %#x)",
	   (unsigned long long)u.st->polls, req_to_mask);
	frame(u.h, 1, EMU_CANARY_OP_RETX_REQ, 0, 6, NULL);
	lhm_now_ps += RTO / 8;
	fire(u.h);
	is_int(nfailure, P - 1, "rank 6 answers: six askers, seven counted, still no failure");
	lhm_now_ps += RTO / 2 - RTO / 8;
	fire(u.h);
	is_u64(u.st->polls, 3, "half a timeout after the poll, rank 7 is polled again");
	/* each later round: the gap, and up to a quarter more (the back-off's jitter, lh_backoff) */
	lhm_now_ps += RTO;
	fire(u.h);
	is_u64(u.st->polls, 3, "...not a timeout after that (the jitter may add a quarter)");
	lhm_now_ps += RTO / 4;
	fire(u.h);
	is_u64(u.st->polls, 4, "...a timeout and a quarter after that, again");
	lhm_now_ps += 2 * RTO - RTO / 64;
	fire(u.h);
	is_u64(u.st->polls, 4, "...and then not before two timeouts (back-off)");
	lhm_now_ps += RTO / 2 + RTO / 64;
	fire(u.h);
	is_u64(u.st->polls, 5, "...two and a half timeouts after the last");
	lhm_now_ps += 5 * RTO;
	fire(u.h);
	is_u64(u.st->polls, 6, "...then five (four, jittered)");
	lhm_now_ps += 10 * RTO;
	fire(u.h);
	is_u64(u.st->polls, 7, "...then ten (eight, jittered)");
	lhm_now_ps += 10 * RTO;
	fire(u.h);
	is_u64(u.st->polls, 8, "...and ten from then on (capped at eight, jittered)");
	frame(u.h, 1, EMU_CANARY_OP_REDUCE, 1, 0, data(1));
	ok(lh_req_data_done(u.r) && u.out[0] == P * 100 && u.out[3] == P * 103 && nbcast >= 1,
	   "rank 7's data comes: exact (%d ... %d), broadcast", u.out[0], u.out[3]);
	is_u64(u.st->failures, 1, "the re-issue was never failed");
	lh_host_destroy(u.h);

	/* rank 7's data lost: its request proves it */
	start(&u, 0, peers);
	to_polls(&u);
	frame(u.h, 1, EMU_CANARY_OP_RETX_REQ, 0, 6, NULL);
	frame(u.h, 1, EMU_CANARY_OP_RETX_REQ, 0, 7, NULL);
	ok(u.st->failures == 2 && nfailure == 2 * (P - 1),
	   "rank 7 asks too: seven askers, seven counted, the re-issue fails (%llu failures)",
	   (unsigned long long)u.st->failures);
	frame(u.h, 2, EMU_CANARY_OP_REDUCE, P - 2, 0, data(P - 2));
	lhm_now_ps += RTO;
	for (unsigned k = 1; k <= 5; k++)
		frame(u.h, 2, EMU_CANARY_OP_RETX_REQ, 0, k, NULL);
	is_u64(u.st->failures, 2, "attempt 2 starts with nothing proven: five requests fail nothing");
	lh_host_destroy(u.h);

	/* proven while contributions still come: the leader's timer fails it once quiet */
	start(&u, 0, peers);
	frame(u.h, 0, EMU_CANARY_OP_REDUCE, P - 2, 0, data(P - 2));
	lhm_now_ps += RTO;
	frame(u.h, 0, EMU_CANARY_OP_RETX_REQ, 0, 1, NULL);
	frame(u.h, 1, EMU_CANARY_OP_REDUCE, P - 3, 0, data(P - 3));
	lhm_now_ps += RTO;
	frame(u.h, 1, EMU_CANARY_OP_REDUCE, 1, 0, data(1));	/* seven counted (the leader's too), rank 7 missing */
	for (unsigned k = 1; k <= 7; k++)
		frame(u.h, 1, EMU_CANARY_OP_RETX_REQ, 0, k, NULL);
	is_int(nfailure, P - 1, "seven askers right after a contribution: deferred, not failed yet");
	lhm_now_ps += RTO / 4 - 1;
	fire(u.h);
	is_int(nfailure, P - 1, "...nor just before a quarter timeout");
	lhm_now_ps += 1;
	fire(u.h);
	ok(u.st->failures == 2 && nfailure == 2 * (P - 1),
	   "...and failed by the leader's timer once quiet, with no further request (%llu failures)",
	   (unsigned long long)u.st->failures);
	is_u64(u.st->polls, 0, "nothing polled: proven without");
	lh_host_destroy(u.h);

	/* a host: answers a poll only once its data has left it a quarter timeout ago */
	busy = true;
	start(&u, 1, peers);
	lhm_now_ps += RTO;
	frame(u.h, 0, EMU_CANARY_OP_RETX_REQ, 0, 0, NULL);
	is_u64(u.st->retx_requests, 0, "rank 1, its data not sent yet: a poll gets no answer");
	busy = false;
	lh_host_tx_ready(u.h);
	frame(u.h, 0, EMU_CANARY_OP_RETX_REQ, 0, 0, NULL);
	ok(nreq == 0 && u.st->retx_requests == 0,
	   "its data only just sent: no answer (a request could overtake it and prove it missing)");
	lhm_now_ps += RTO / 4;
	frame(u.h, 0, EMU_CANARY_OP_RETX_REQ, 0, 0, NULL);
	ok(nreq == 1 && req_to_mask == 1u && req_id == ((uint32_t)TENANT << 24 | 0),
	   "a quarter timeout later: a poll gets its request for attempt 0, at once (%u requests)", nreq);
	frame(u.h, 0, EMU_CANARY_OP_RETX_REQ, 0, 5, NULL);
	is_int(nreq, 1, "a RETX_REQ that is not from the block's leader gets nothing");
	is_u64(u.st->retx_requests, 1, "the answer counts as a retransmission request");
	frame(u.h, 1, EMU_CANARY_OP_FAILURE, 3, 1, NULL);	/* re-issue held for 3 small frames */
	lhm_now_ps += RTO / 4;
	frame(u.h, 1, EMU_CANARY_OP_RETX_REQ, 0, 0, NULL);
	is_int(nreq, 1, "a re-issue held back: a poll for it gets no answer");
	fire(u.h);
	lh_host_tx_ready(u.h);
	frame(u.h, 1, EMU_CANARY_OP_RETX_REQ, 0, 0, NULL);
	is_int(nreq, 1, "its re-issue only just went out: no answer (the time is the re-issue's)");
	lhm_now_ps += RTO / 4;
	frame(u.h, 1, EMU_CANARY_OP_RETX_REQ, 0, 0, NULL);
	ok(nreq == 2 && req_id == ((uint32_t)TENANT << 24 | 1),
	   "once it went out and a quarter timeout passed: the answer names attempt 1");
	lh_host_destroy(u.h);
	return done_testing();
}
