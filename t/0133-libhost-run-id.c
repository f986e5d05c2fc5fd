// SPDX-License-Identifier: MIT
/*
 * DOC: the run id on the wire (wire.h: bits 5..4 of the Canary flags byte,
 * byte 14 of the ring's header). Four hosts on a hand-driven network with
 * no switch (unicast by destination address, a broadcast to every other
 * host) run an allreduce as run k and every frame it sent is kept; then
 * new hosts run run k + 1 on other inputs, the same tenant and block ids,
 * and every frame of run k reaches them before their own.
 *  - With the two runs' ids differing, each of those frames is dropped and
 *    counted (lh_host_other_run: the number delivered), the frames the
 *    hosts send carry their run, and the result is the exact sum of run
 *    k + 1's inputs on every host: Canary and the ring.
 *  - The same with both runs' ids equal (what every run was before the
 *    run id): nothing is counted and a result differs -- so the first
 *    check can fail.
 */
#include <stdlib.h>
#include <string.h>

#include "libhost/canary_host.h"
#include "libhost/wire.h"
#include "tap.h"

#define P 4
#define TENANT 5
#define COUNT 1000	/* elements: 16 blocks of 64 */
#define MAXQ 100000
#define MAXT 4096

struct qframe {
	int to;		/* host index; -1: every host but the sender */
	int from;
	uint32_t len;
	uint8_t b[LH_FRAME_MAX];
};

struct tmr {
	int host;
	lh_time_t at;
	uint64_t cookie;
};

static struct qframe *q;	/* the network: frames in flight, in order */
static unsigned qhead, qtail;
static struct qframe *kept;	/* every frame of the run, kept */
static unsigned nkept;
static bool keep;
static struct tmr tmrs[MAXT];
static unsigned ntmr;
static lh_time_t now;
static struct lh_host *hosts[P];
static struct lh_peer peers[P];
static uint8_t txbuf[P][LH_FRAME_MAX];
static unsigned bad_run;	/* frames sent with another run than their host's */
static unsigned cur_run;

static int host_of(uint32_t ip)
{
	for (int i = 0; i < P; i++)
		if (peers[i].ipv4 == ip)
			return i;
	return -2;
}

static uint8_t *t_frame_get(void *ctx, void **handle)
{
	*handle = txbuf[(intptr_t)ctx];
	return txbuf[(intptr_t)ctx];
}

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	int from = (int)(intptr_t)ctx;
	const uint8_t *p = handle;
	struct emu_canary_hdr h;
	unsigned n;
	uint32_t dip;
	uint64_t hash;
	int to;

	if (lh_wire_canary_parse(p, len, &h, &n) == LH_WIRE_OK) {
		bad_run += h.run != cur_run;
		to = h.flags & EMU_CANARY_F_MULTICAST ? -1 : host_of(h.dst);
	} else if (lh_wire_dst(p, len, &dip, &hash) == LH_WIRE_OK) {
		if (lh_wire_udp_dport(p, len) == EMU_RING_PORT && len >= EMU_UDP_PAYLOAD_OFF + EMU_RING_HDR)
			bad_run += p[EMU_UDP_PAYLOAD_OFF + EMU_RING_RUN_OFF] != cur_run;
		to = host_of(dip);
	} else {
		return;
	}
	if (to == -2 || to == from || qtail >= MAXQ)
		return;
	struct qframe *f = &q[qtail++];

	f->to = to;
	f->from = from;
	f->len = len;
	memcpy(f->b, p, len);
	if (keep && nkept < MAXQ)
		kept[nkept++] = *f;
}

static lh_time_t t_now(void *ctx)
{
	(void)ctx;
	return now;
}

static void t_timer(void *ctx, lh_time_t at, uint64_t cookie)
{
	if (ntmr < MAXT)
		tmrs[ntmr++] = (struct tmr){ (int)(intptr_t)ctx, at, cookie };
}

static bool t_tx_busy(void *ctx)
{
	(void)ctx;
	return false;
}

static uint64_t t_random(void *ctx)
{
	return 0x9e3779b97f4a7c15ULL ^ (uint64_t)(intptr_t)ctx;
}

static const struct lh_transport_ops ops = {
	.frame_get = t_frame_get, .frame_send = t_frame_send, .now = t_now, .timer = t_timer,
	.tx_busy = t_tx_busy, .random = t_random,
};

static void deliver(const struct qframe *f)
{
	for (int i = 0; i < P; i++)
		if (f->to == i || (f->to == -1 && i != f->from))
			lh_host_rx(hosts[i], f->b, f->len);
}

/* the network until every host is done: frames first, then the earliest timer (1 us a hop) */
static bool drain(struct lh_req **req)
{
	for (unsigned steps = 0; steps < 1000000; steps++) {
		bool all = true;

		for (int i = 0; i < P; i++)
			all = all && lh_req_done(req[i]);
		if (all)
			return true;
		if (qhead < qtail) {
			now += LH_US;
			deliver(&q[qhead++]);
			continue;
		}
		if (!ntmr)
			return false;
		unsigned k = 0;

		for (unsigned j = 1; j < ntmr; j++)
			if (tmrs[j].at < tmrs[k].at)
				k = j;
		struct tmr t = tmrs[k];

		tmrs[k] = tmrs[--ntmr];
		if (t.at > now)
			now = t.at;
		lh_host_timer(hosts[t.host], t.cookie);
	}
	return false;
}

static int32_t input(unsigned seed, unsigned rank, size_t i)
{
	return (int32_t)(seed * 1000003u + rank * 7919u + (unsigned)i * 31u);
}

/*
 * run - one allreduce of @algo as run @run on new hosts, on inputs of
 * @seed; first, every frame of @stale (@nstale) reaches them. Return true
 * if every host finished with the exact sum; *@other gets the frames of
 * another run they dropped.
 */
static bool run(enum lh_algo algo, unsigned runid, unsigned seed, const struct qframe *stale, unsigned nstale,
		uint64_t *other)
{
	static int32_t in[P][COUNT], out[P][COUNT];
	struct lh_req *req[P];
	struct lh_ar_cfg cfg = {
		.algo = algo, .elements = 64, .ntrees = 1, .rtt = 4 * LH_US, .switch_timeout = LH_US,
		.max_failures = 2, .reliable = true,
	};
	bool exact = true;

	qhead = qtail = 0;
	ntmr = 0;
	cur_run = runid;
	for (int i = 0; i < P; i++) {
		struct lh_transport t = { .ops = &ops, .ctx = (void *)(intptr_t)i, .rate_bps = 10000000000ULL,
					  .mtu = 1500 };

		hosts[i] = lh_host_create(&t, &peers[i]);
		if (!hosts[i] || lh_host_set_run(hosts[i], runid))
			{ diag("host %d", i); exit(1); }
		for (size_t e = 0; e < COUNT; e++)
			in[i][e] = input(seed, (unsigned)i, e);
		memset(out[i], 0, sizeof(out[i]));
	}
	/* the stale frames are in flight before the new run's first */
	for (unsigned k = 0; k < nstale && qtail < MAXQ; k++)
		q[qtail++] = stale[k];
	for (int i = 0; i < P; i++) {
		struct lh_comm *c = lh_comm_create(hosts[i], peers, P, (unsigned)i, TENANT);

		req[i] = c ? lh_allreduce(c, &cfg, in[i], out[i], COUNT) : NULL;
		if (!req[i])
			{ diag("allreduce %d refused", i); exit(1); }
	}
	bool done = drain(req);

	*other = 0;
	for (int i = 0; i < P; i++) {
		*other += lh_host_other_run(hosts[i]);
		for (size_t e = 0; e < COUNT && exact; e++) {
			uint32_t sum = 0;

			for (unsigned r = 0; r < P; r++)
				sum += (uint32_t)input(seed, r, e);
			exact = out[i][e] == (int32_t)sum;
		}
	}
	for (int i = 0; i < P; i++)
		lh_host_destroy(hosts[i]);
	return done && exact;
}

int main(void)
{
	static const enum lh_algo algos[] = { LH_ALGO_CANARY, LH_ALGO_RING };
	uint64_t other;

	plan(9);
	q = calloc(MAXQ, sizeof(*q));
	kept = calloc(MAXQ, sizeof(*kept));
	if (!q || !kept)
		return 1;
	for (int i = 0; i < P; i++)
		peers[i] = (struct lh_peer){ .ipv4 = 0x0a000001u + (uint32_t)i, .mac = { 2, 0, 0, 0, 0, (uint8_t)i } };

	for (unsigned a = 0; a < 2; a++) {
		const char *name = lh_algo_name(algos[a]);
		unsigned stale;

		/* run k = 1: its frames kept */
		nkept = 0;
		keep = true;
		bad_run = 0;
		bool ok1 = run(algos[a], 1, 1, NULL, 0, &other);

		keep = false;
		stale = nkept;
		ok(ok1 && other == 0 && stale > 0 && bad_run == 0,
		   "%s, run 1: exact, %u frames sent, each with run id 1", name, stale);

		/* run k + 1 = 2, other inputs: every frame of run 1 delivered first */
		bad_run = 0;
		bool ok2 = run(algos[a], 2, 2, kept, stale, &other);
		uint64_t copies = 0;

		for (unsigned k = 0; k < stale; k++)
			copies += kept[k].to == -1 ? P - 1 : 1;
		ok(ok2 && bad_run == 0, "%s, run 2 after run 1's frames: exact on every host, its frames carry run id 2",
		   name);
		ok(other == copies, "%s, run 2: run 1's frames dropped and counted (%llu of %llu)", name,
		   (unsigned long long)other, (unsigned long long)copies);

		/* the control: run 1's frames again, to a run with the same id */
		bool ok3 = run(algos[a], 1, 3, kept, stale, &other);

		ok(!ok3 && other == 0, "%s, the same frames into a run of the same id: taken, a result differs "
		   "(what the run id prevents)", name);
	}

	/* lh_host_set_run refuses an id that does not fit the field */
	struct lh_transport t = { .ops = &ops, .ctx = 0, .rate_bps = 10000000000ULL, .mtu = 1500 };
	struct lh_host *h = lh_host_create(&t, &peers[0]);

	ok(h && lh_host_set_run(h, 4) < 0 && lh_host_set_run(h, 3) == 0, "lh_host_set_run: 0..3, 4 refused");
	lh_host_destroy(h);
	free(q);
	free(kept);
	return done_testing();
}
