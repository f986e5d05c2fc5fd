// SPDX-License-Identifier: MIT
/*
 * DOC: a static-tree leader that fell back to host-based reduction and then
 * gets the tree's broadcast, forced frame by frame on one leader.
 *
 * Rank 0 leads the one block of a static:1 allreduce among 4 hosts. Its
 * timer expires before the tree's result comes back: it falls back and asks
 * every host for its data (FALLBACK). Ranks 1 and 2 answer; rank 3's answer
 * is lost. Then the tree's broadcast (every host's data: counter == hosts)
 * reaches the leader. The leader's block is complete there, so its own
 * timer stops asking; rank 3, which also has the result from the tree,
 * asks nothing either. The leader used to keep waiting for rank 3's data
 * forever and answered the hosts that lack the result (their requests)
 * with FALLBACK again: the run never finished (found with one host down
 * and back under 1 % loss). The broadcast completes the fallback: the
 * leader sends the result to every host and answers requests with it.
 */
#include <string.h>

#include "libhost/canary_host.h"
#include "libhost/wire.h"
#include "lhmock.h"
#include "tap.h"

#define P 4
#define TENANT 1
#define N 2

static lh_time_t now_ps;
static uint64_t timer_cookie;
static lh_time_t timer_at;

/* what the leader sent since the last reset: per op, and the last RETX_DATA's data */
static unsigned sent_op[16], sent_to[16][P];
static int32_t last_data[N];

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	struct emu_canary_hdr h;
	unsigned n;

	(void)ctx;
	(void)handle;
	if (lh_wire_canary_parse(lhm_txbuf, len, &h, &n) != LH_WIRE_OK)
		return;
	unsigned op = h.flags & EMU_CANARY_OP_MASK;

	sent_op[op]++;
	if (h.dst >= 0x0a000001 && h.dst < 0x0a000001 + P)
		sent_to[op][h.dst - 0x0a000001]++;
	if (op == EMU_CANARY_OP_RETX_DATA && n == N)
		lh_wire_get_elems(last_data, lhm_txbuf + EMU_CANARY_DATA_OFF, N);
}

static lh_time_t t_now(void *ctx)
{
	(void)ctx;
	return now_ps;
}

static void t_timer(void *ctx, lh_time_t at, uint64_t cookie)
{
	(void)ctx;
	/* one block: the leader's block timer is the only one armed */
	timer_at = at;
	timer_cookie = cookie;
}

static const struct lh_transport_ops ops = {
	.frame_get = lhm_frame_get, .frame_send = t_frame_send, .now = t_now, .timer = t_timer,
	.tx_busy = lhm_tx_idle, .random = lhm_random,
};

/* rank r's input: element i is 10 * r + i + 1 */
static int32_t in_of(unsigned r, size_t i)
{
	return (int32_t)(10 * r + i + 1);
}

static void input(void *arg, size_t off, int32_t *out, size_t n)
{
	(void)arg;
	for (size_t i = 0; i < n; i++)
		out[i] = in_of(0, off + i);
}

static void reset_sent(void)
{
	memset(sent_op, 0, sizeof(sent_op));
	memset(sent_to, 0, sizeof(sent_to));
	memset(last_data, 0, sizeof(last_data));
}

/* a frame of block 0 to the leader: @op, attempt @a, from rank @from (children), @counter, data */
static void frame(struct lh_host *h, uint8_t op, unsigned a, uint32_t children, uint16_t counter, const int32_t *d)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 9 };
	uint8_t f[LH_FRAME_MAX];
	struct emu_canary_hdr ch = {
		.dst = 0x0a000001, .id = (uint32_t)TENANT << 24 | a, .counter = counter, .hosts = P,
		.children = children, .flags = op,
	};
	uint32_t len = lh_wire_canary_build(f, mac, mac, &ch, d, d ? N : 0);

	lh_host_rx(h, f, len);
}

static void data_of(unsigned r, int32_t *d)
{
	for (size_t i = 0; i < N; i++)
		d[i] = in_of(r, i);
}

int main(void)
{
	struct lh_transport t = { .ops = &ops, .rate_bps = 100000000000ULL, .mtu = 1500 };
	struct lh_peer peers[P];
	int32_t out[N] = { 0, 0 }, sum[N] = { 0, 0 }, d[N];

	plan(9);
	for (size_t i = 0; i < N; i++)
		for (unsigned r = 0; r < P; r++)
			sum[i] += in_of(r, i);
	for (unsigned i = 0; i < P; i++)
		peers[i] = (struct lh_peer){ .ipv4 = 0x0a000001 + i, .mac = { 2, 0, 0, 0, 0, (uint8_t)i } };
	struct lh_host *h = lh_host_create(&t, &peers[0]);
	struct lh_comm *c = lh_comm_create(h, peers, P, 0, TENANT);
	struct lh_ar_cfg cfg = {
		.algo = LH_ALGO_STATIC, .ntrees = 1, .elements = N, .rtt = 2 * LH_US, .max_failures = 3,
		.retx_timeout = 10 * LH_US, .input_block = input,
	};
	struct lh_req *r = lh_allreduce(c, &cfg, NULL, out, N);
	const struct lh_ar_stats *st = r ? lh_req_stats(r) : NULL;

	ok(r && sent_op[EMU_CANARY_OP_TREE_REDUCE] == 1 && timer_at > 0,
	   "the leader of the one block sends its data up the tree and arms its timer");
	if (!r)
		return done_testing();

	/* the tree is slow: the leader's timer expires, it falls back */
	reset_sent();
	now_ps = timer_at;
	lh_host_timer(h, timer_cookie);
	ok(st->fallbacks == 1 && sent_op[EMU_CANARY_OP_FALLBACK] == P - 1,
	   "its timer expires first: it falls back and asks the %d other hosts (FALLBACK %u, fallbacks %llu)", P - 1,
	   sent_op[EMU_CANARY_OP_FALLBACK], (unsigned long long)st->fallbacks);

	/* ranks 1 and 2 answer (attempt 1), rank 3's answer is lost */
	for (unsigned k = 1; k <= 2; k++) {
		data_of(k, d);
		frame(h, EMU_CANARY_F_BYPASS | EMU_CANARY_OP_FALLBACK, 1, k, 1, d);
	}
	ok(!lh_req_data_done(r), "ranks 1 and 2 send their data, rank 3's is lost: not complete");

	/* the tree's broadcast of attempt 0, every host's data */
	reset_sent();
	frame(h, EMU_CANARY_OP_TREE_BCAST, 0, 0, P, sum);
	ok(lh_req_data_done(r) && out[0] == sum[0] && out[1] == sum[1],
	   "the tree's broadcast arrives: the leader has the exact sum (%d, %d)", out[0], out[1]);
	is_int(sent_op[EMU_CANARY_OP_RETX_DATA], P - 1,
	       "...and, its fallback complete, sends the result to the %d other hosts", P - 1);
	ok(last_data[0] == sum[0] && last_data[1] == sum[1], "...the exact sum (%d, %d)", last_data[0], last_data[1]);

	/* rank 1 lacks the result (the broadcast to it was lost): it asks */
	reset_sent();
	now_ps += 20 * LH_US;
	frame(h, EMU_CANARY_F_BYPASS | EMU_CANARY_OP_RETX_REQ, 1, 1, 0, NULL);
	ok(sent_to[EMU_CANARY_OP_RETX_DATA][1] == 1 && sent_op[EMU_CANARY_OP_FALLBACK] == 0,
	   "a request of rank 1 gets the result, not FALLBACK again (RETX_DATA %u, FALLBACK %u)",
	   sent_to[EMU_CANARY_OP_RETX_DATA][1], sent_op[EMU_CANARY_OP_FALLBACK]);
	ok(last_data[0] == sum[0] && last_data[1] == sum[1], "...the exact sum (%d, %d)", last_data[0], last_data[1]);

	/* rank 3's late answer changes nothing */
	data_of(3, d);
	frame(h, EMU_CANARY_F_BYPASS | EMU_CANARY_OP_FALLBACK, 1, 3, 1, d);
	ok(out[0] == sum[0] && out[1] == sum[1] && st->errors == 0, "rank 3's late data is not added twice");
	lh_host_destroy(h);
	return done_testing();
}
