// SPDX-License-Identifier: MIT
/*
 * DOC: lh_host_frame_len() bounds what libhost writes into the buffer a
 * transport hands out (the emulator sizes its frame buffers by it).
 *
 * The transport fills every buffer with a marker before libhost gets it,
 * records lh_host_frame_len() in frame_get and checks at frame_send that
 * the frame's data (lh_frame_data_len) fits in it and that no byte past it
 * was written. Frames of every kind a host sends at the start: Canary and
 * static-tree blocks (with and without a sketch), ring chunks and
 * background traffic; and outside frame_get the hint is LH_FRAME_MAX.
 */
#include <string.h>

#include "libhost/canary_host.h"
#include "libhost/wire.h"
#include "lhmock.h"
#include "tap.h"

#define P 4
#define MARK 0xee

static struct lh_host *cur;
static uint8_t txbuf[LH_FRAME_MAX];
static uint32_t hint;
static unsigned nsent, nbad_fit, nbad_tail, nlimit;
static unsigned busy_after;	/* the NIC says busy after this many frames */

static uint8_t *t_frame_get(void *ctx, void **handle)
{
	(void)ctx;
	hint = lh_host_frame_len(cur);
	memset(txbuf, MARK, sizeof(txbuf));
	*handle = txbuf;
	return txbuf;
}

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	(void)ctx;
	(void)handle;
	nsent++;
	nbad_fit += lh_frame_data_len(txbuf, len) > hint;
	for (uint32_t i = hint; i < LH_FRAME_MAX; i++)
		if (txbuf[i] != MARK) {
			nbad_tail++;
			break;
		}
	nlimit += hint < LH_FRAME_MAX;
}

static lh_time_t t_now(void *ctx)
{
	(void)ctx;
	return 0;
}

static bool t_tx_busy(void *ctx)
{
	(void)ctx;
	return nsent >= busy_after;
}

static uint64_t t_random(void *ctx)
{
	(void)ctx;
	return 7;
}

static const struct lh_transport_ops ops = {
	.frame_get = t_frame_get, .frame_send = t_frame_send, .now = t_now, .timer = lhm_timer_none,
	.tx_busy = t_tx_busy, .random = t_random,
};

static void input(void *arg, size_t off, int32_t *out, size_t n)
{
	(void)arg;
	for (size_t i = 0; i < n; i++)
		out[i] = (int32_t)(off + i);
}

static struct lh_peer peers[P];

static void run(const char *name, enum lh_algo algo, unsigned elements, unsigned sketch, bool bg)
{
	struct lh_transport t = { .ops = &ops, .rate_bps = 100000000000ULL, .mtu = 1500 };
	static int32_t out[4096];

	nsent = nbad_fit = nbad_tail = nlimit = 0;
	busy_after = 40;
	cur = lh_host_create(&t, &peers[1]);
	if (bg) {
		lh_host_background(cur, peers, P, 1, LH_BG_UNIFORM, 1, 1 << 20, 0);
		lh_host_tx_ready(cur);
	} else {
		struct lh_comm *c = lh_comm_create(cur, peers, P, 1, 1);
		struct lh_ar_cfg cfg = {
			.algo = algo, .elements = elements, .ntrees = algo == LH_ALGO_STATIC ? 2 : 0,
			.rtt = 2 * LH_US, .switch_timeout = LH_US, .max_failures = 3, .sketch = sketch,
			.input_block = input,
		};

		lh_allreduce(c, &cfg, NULL, out, 4096);
	}
	ok(nsent > 0 && nlimit == nsent, "%s: %u frames sent, each from a buffer sized by lh_host_frame_len()", name,
	   nsent);
	is_int(nbad_fit, 0, "%s: every frame's data fits the size", name);
	is_int(nbad_tail, 0, "%s: no byte past the size was written", name);
	lh_host_destroy(cur);
}

int main(void)
{
	plan(16);
	for (unsigned i = 0; i < P; i++)
		peers[i] = (struct lh_peer){ .ipv4 = 0x0a000001 + i, .mac = { 2, 0, 0, 0, 0, (uint8_t)i } };
	run("canary, 256 elements", LH_ALGO_CANARY, 256, 0, false);
	run("canary, 64 elements with a sketch of 16", LH_ALGO_CANARY, 64, 16, false);
	run("static trees", LH_ALGO_STATIC, 128, 0, false);
	run("ring", LH_ALGO_RING, 256, 0, false);
	run("background", LH_ALGO_CANARY, 0, 0, true);
	struct lh_transport t = { .ops = &ops, .rate_bps = 100000000000ULL, .mtu = 1500 };

	cur = lh_host_create(&t, &peers[0]);
	ok(cur && lh_host_frame_len(cur) == LH_FRAME_MAX, "outside frame_get the size is LH_FRAME_MAX");
	lh_host_destroy(cur);
	return done_testing();
}
