// SPDX-License-Identifier: MIT
/*
 * DOC: a host hands the application a block's result, not the data of
 * the next block it sends, when a frame it sends on receiving that result
 * lets the next block out at once (libhost/canary.c: a result is read into
 * the scratch buffer send_block builds frames in).
 *
 * A result that comes back probes the blocks sent probe_gap or more before
 * it that are still missing (probe_late). A probe is a control frame: sent
 * at once if the link is idle, and if the link is idle again right after
 * it (a real link's clock runs on while send() does: libcanarympi and
 * canary-allreduce over veth pairs on a busy machine), the host pulls its
 * next block and builds it in the scratch buffer the result was read into.
 * The result handed to the application was then the host's own data of
 * that later block: with --sketch 16 over veth pairs, mpi-check found
 * whole blocks of 240 wrong at 65536 elements on 4 ranks, each rank's
 * wrong block holding its own input of the block a window (23 blocks)
 * later. The emulator's NIC is busy for a frame's time after any send, so
 * no emulated run met it.
 *
 * One host (rank 1 of 4, sketch 4, window 2) on a link that is never busy,
 * fed broadcasts by hand on a clock the test moves: blocks 0 and 2 leave
 * at 0; block 2's result comes at 20 us, block 3 leaves; block 3's result
 * at 25 us probes block 0 (sent 20 us, more than probe_gap = 10 us, before
 * block 3), and the probe lets block 4 out. Every result the host delivers
 * must be the broadcast's.
 *
 * The same with a static tree's leader (rank 0 of 4, static:1, window 1)
 * that fell back and then gets the tree's broadcast: it sends the result
 * to every host first (lh_lead_result), and the first of those lets out
 * block 1, queued while the link was busy (its leader asked for its data:
 * FALLBACK). Block 0's result must still be the broadcast's.
 */
#include <string.h>

#include "libhost/canary_host.h"
#include "libhost/wire.h"
#include "lhmock.h"
#include "tap.h"

#define P 4
#define RANK 1
#define TENANT 5
#define E 16
#define K 4
#define D (E - K)
#define NB 8

/* frames the host sent while @during was set: probes (RETX_REQ, counter 1) and data (REDUCE, FALLBACK), by block */
static bool during, busy;
static int probed = -1, reduced = -1, direct = -1;

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	struct emu_canary_hdr h;
	unsigned n, op;

	(void)ctx;
	(void)handle;
	if (!during || lh_wire_canary_parse(lhm_txbuf, len, &h, &n) != LH_WIRE_OK)
		return;
	op = h.flags & EMU_CANARY_OP_MASK;
	if (op == EMU_CANARY_OP_RETX_REQ && h.counter == 1)
		probed = (int)(h.id & 0xffffff);
	else if (op == EMU_CANARY_OP_REDUCE)
		reduced = (int)(h.id & 0xffffff);
	else if (op == EMU_CANARY_OP_FALLBACK && n)
		direct = (int)(h.id & 0xffffff);
}

static bool t_busy(void *ctx)
{
	(void)ctx;
	return busy;
}

/* the last timer armed */
static lh_time_t timer_at;
static uint64_t timer_cookie;

static void t_timer(void *ctx, lh_time_t at, uint64_t cookie)
{
	(void)ctx;
	timer_at = at;
	timer_cookie = cookie;
}

static const struct lh_transport_ops ops = {
	.frame_get = lhm_frame_get, .frame_send = t_frame_send, .now = lhm_now, .timer = t_timer,
	.tx_busy = t_busy, .random = lhm_random,
};

/* the sum the broadcast of block @b carries: unlike any host's input (100 + index) */
static int32_t sum_of(unsigned b, unsigned i)
{
	return 1000000 * (int32_t)(b + 1) + (int32_t)i;
}

/*
 * a frame @op with sequence @b (block b of attempt 0, or with nblocks
 * added, of attempt 1: FALLBACK's children) from rank @from; @n elements,
 * the sums of block @b
 */
static void frame(struct lh_host *h, uint8_t op, unsigned b, unsigned from, uint16_t counter, unsigned n)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 9 };
	int32_t d[D];
	uint8_t f[LH_FRAME_MAX];
	struct emu_canary_hdr ch = {
		.dst = 0x0a000001 + from, .id = (uint32_t)TENANT << 24 | b, .counter = counter, .hosts = P,
		.children = (op & EMU_CANARY_OP_MASK) == EMU_CANARY_OP_FALLBACK ? 1 : 0, .flags = op,
	};

	for (unsigned i = 0; i < n; i++)
		d[i] = sum_of(b, i);
	lh_host_rx(h, f, lh_wire_canary_build(f, mac, mac, &ch, d, n));
}

static void bcast(struct lh_host *h, unsigned b)
{
	frame(h, EMU_CANARY_F_MULTICAST | EMU_CANARY_OP_BCAST, b, b % P, P, D);
}

/* block @b of @out is its broadcast's sum */
static bool block_ok(const int32_t *out, unsigned b)
{
	for (unsigned i = 0; i < D; i++)
		if (out[b * D + i] != sum_of(b, i))
			return false;
	return true;
}

static const struct lh_transport t = { .ops = &ops, .rate_bps = 100000000000ULL, .mtu = 1500 };
static struct lh_peer peers[P];

/* a static tree's leader that fell back gets the tree's broadcast; its next block leaves meanwhile */
static void tree_leader(void)
{
	static int32_t out[2 * D];
	struct lh_ar_cfg cfg = {
		.algo = LH_ALGO_STATIC, .ntrees = 1, .elements = D, .rtt = 2 * LH_US, .max_failures = 3,
		.window = 1, .retx_timeout = 10 * LH_US, .input_block = lhm_input,
	};

	lhm_now_ps = 0;
	busy = false;
	for (unsigned i = 0; i < 2 * D; i++)
		out[i] = -1;
	struct lh_host *h = lh_host_create(&t, &peers[0]);
	struct lh_req *r = lh_allreduce(lh_comm_create(h, peers, P, 0, TENANT), &cfg, NULL, out, 2 * D);
	const struct lh_ar_stats *st = r ? lh_req_stats(r) : NULL;

	if (!r) {
		ok(0, "lh_allreduce takes the static tree's request");
		lh_host_destroy(h);
		return;
	}
	/* block 0's timer (the only one: window 1) expires: the leader falls back */
	lhm_now_ps = timer_at;
	lh_host_timer(h, timer_cookie);
	/* the link busy: block 1's leader asks for its data (FALLBACK, attempt 1: id 1 + 2 blocks), it waits */
	busy = true;
	frame(h, EMU_CANARY_F_BYPASS | EMU_CANARY_OP_FALLBACK, 1 + 2, 1, 0, 0);
	busy = false;
	during = true;
	frame(h, EMU_CANARY_OP_TREE_BCAST, 0, 0, P, D);
	during = false;
	ok(st->fallbacks == 2 && direct == 1 + 2,
	   "static tree: the leader fell back; its result's sends let out block 1's data, queued on its leader's "
	   "FALLBACK (fallbacks %llu, block id sent %d)", (unsigned long long)st->fallbacks, direct);
	ok(block_ok(out, 0), "...the tree's broadcast completes block 0 with its sum, although the result's sends let "
	   "block 1's data out (out[0] = %d)", out[0]);
	lh_host_destroy(h);
}

int main(void)
{
	static int32_t out[NB * D];
	struct lh_ar_cfg cfg = {
		.algo = LH_ALGO_CANARY, .elements = E, .rtt = 2 * LH_US, .switch_timeout = LH_US, .max_failures = 3,
		.window = 2, .sketch = K, .input_block = lhm_input, .retx_timeout = 1000 * LH_US,
	};

	plan(7);
	for (unsigned i = 0; i < P; i++)
		peers[i] = (struct lh_peer){ .ipv4 = 0x0a000001 + i, .mac = { 2, 0, 0, 0, 0, (uint8_t)i } };
	for (unsigned i = 0; i < NB * D; i++)
		out[i] = -1;
	lhm_now_ps = 0;
	struct lh_host *h = lh_host_create(&t, &peers[RANK]);
	struct lh_req *r = lh_allreduce(lh_comm_create(h, peers, P, RANK, TENANT), &cfg, NULL, out, NB * D);

	if (!r) {
		ok(0, "lh_allreduce takes the request");
		return done_testing();
	}
	lhm_now_ps = 20 * LH_US;
	bcast(h, 2);
	ok(block_ok(out, 2), "block 2's result is its broadcast's");

	lhm_now_ps = 25 * LH_US;
	during = true;
	bcast(h, 3);
	during = false;
	is_int(probed, 0, "block 3's result probes block 0, sent probe_gap before it");
	is_int(reduced, 4, "...and the probe lets block 4 out at once (the link is idle)");
	ok(block_ok(out, 3), "block 3's result is its broadcast's, not the host's own data of block 4 (out[%u] = %d)",
	   3 * D, out[3 * D]);

	/* the rest, block 0 last: every block delivered is its broadcast's */
	for (unsigned b = 4; b < NB; b++)
		if (b % P != RANK)
			bcast(h, b);
	bcast(h, 0);
	bool all = true;

	for (unsigned b = 0; b < NB; b++)
		if (b % P != RANK)
			all = all && block_ok(out, b);
	ok(all, "every block this host sent has its broadcast's sum");
	lh_host_destroy(h);
	tree_leader();
	return done_testing();
}
