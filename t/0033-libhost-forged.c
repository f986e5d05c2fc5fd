// SPDX-License-Identifier: MIT
/*
 * DOC: Canary hosts fed forged frames, as a stranger on the network could
 * send them.
 *  - A leader gets REDUCE frames with a counter of 0 (no host
 *    contribution): each is refused and counted as an error; none adds its
 *    elements to the sum and none is recorded as a collision (one entry
 *    per frame grew the leader's list without bound, and each entry cost
 *    a pass over the list when the block completed). The real
 *    contributions still give the exact sum and one restoration per
 *    switch that saw a collision.
 *  - A host gets a FAILURE naming attempt 1000 of a block (leaders stop at
 *    max_failures + 1): refused, and nothing is sent under an id outside
 *    the allreduce's sequence numbers; the real FAILURE (attempt 1) still
 *    makes it re-issue the block under attempt 1.
 *  - A request whose blocks' attempts need more ids than LH_BLOCK_IDS is
 *    refused, one that needs them all is taken: a block's index, and so
 *    its sequence number, stays below 2^24 (the hosts compute its leader
 *    and its block in 32-bit arithmetic).
 */
#include <stdlib.h>
#include <string.h>

#include "libhost/canary_host.h"
#include "libhost/wire.h"
#include "lhmock.h"
#include "tap.h"

#define P 4
#define TENANT 3

static unsigned nsent, nrestore;
static uint32_t max_seq;	/* highest sequence number sent (but the barrier's) */

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	struct emu_canary_hdr h;

	(void)ctx;
	(void)handle;
	nsent++;
	if (!lhm_sent_canary(len, &h))
		return;
	if ((h.flags & EMU_CANARY_OP_MASK) == EMU_CANARY_OP_RESTORE)
		nrestore++;
	if ((h.flags & EMU_CANARY_OP_MASK) != EMU_CANARY_OP_DONE && (h.id & 0xffffff) > max_seq)
		max_seq = h.id & 0xffffff;
}

static const struct lh_transport_ops ops = {
	.frame_get = lhm_frame_get, .frame_send = t_frame_send, .now = lhm_now, .timer = lhm_timer_none,
	.tx_busy = lhm_tx_idle, .random = lhm_random,
};

/* a frame about block 0 (led by rank 0): @op with @counter, @children and @sw */
static void frame(struct lh_host *h, uint8_t op, uint16_t counter, uint16_t sw, uint32_t children, int32_t a,
		  int32_t b)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 9 };
	uint8_t f[LH_FRAME_MAX];
	struct emu_canary_hdr ch = {
		.dst = 0x0a000001, .id = (uint32_t)TENANT << 24 | 0, .counter = counter, .hosts = P,
		.children = children, .swaddr = sw, .flags = op,
	};
	int32_t d[2] = { a, b };
	uint32_t len = lh_wire_canary_build(f, mac, mac, &ch, d, 2);

	lh_host_rx(h, f, len);
}

/* a REDUCE of block 0 with @counter, bypassed at switch @sw port @port */
static void reduce(struct lh_host *h, uint16_t counter, uint16_t sw, uint32_t port, int32_t a, int32_t b)
{
	frame(h, EMU_CANARY_F_BYPASS | EMU_CANARY_OP_REDUCE, counter, sw, port, a, b);
}

int main(void)
{
	struct lh_transport t = { .ops = &ops, .rate_bps = 100000000000ULL, .mtu = 1500 };
	struct lh_peer peers[P];
	int32_t out[2] = { 0, 0 };

	plan(13);
	for (unsigned i = 0; i < P; i++)
		peers[i] = (struct lh_peer){ .ipv4 = 0x0a000001 + i, .mac = { 2, 0, 0, 0, 0, (uint8_t)i } };
	struct lh_host *h = lh_host_create(&t, &peers[0]);
	struct lh_comm *c = lh_comm_create(h, peers, P, 0, TENANT);
	struct lh_ar_cfg cfg = {
		.algo = LH_ALGO_CANARY, .elements = 2, .rtt = 2 * LH_US, .switch_timeout = LH_US, .max_failures = 3,
		.input_block = lhm_input,
	};
	struct lh_req *r = lh_allreduce(c, &cfg, NULL, out, 2);

	ok(h && c && r, "a leader of one 2-element block among 4 hosts");
	for (unsigned i = 0; i < 10000; i++)
		reduce(h, 0, (uint16_t)(i % 7), i % 32, 1000, 1000);
	const struct lh_ar_stats *st = lh_req_stats(r);

	is_u64(st->collisions_seen, 0, "10000 forged bypass frames with counter 0: no collision recorded");
	is_u64(st->errors, 10000, "...each refused and counted as an error");
	ok(!lh_req_data_done(r), "...and the block is not complete");
	/* the three real contributions, bypassed at switch 1 (ports 2, 5) and switch 0 (port 0) */
	reduce(h, 1, 1, 2, 1, 10);
	reduce(h, 1, 1, 5, 2, 20);
	reduce(h, 1, 0, 0, 3, 30);
	ok(lh_req_data_done(r) && out[0] == 100 + 1 + 2 + 3 && out[1] == 101 + 10 + 20 + 30,
	   "the real contributions give the exact sum (%d, %d), nothing of the forged ones", out[0], out[1]);
	is_u64(st->collisions_seen, 3, "three collisions recorded: the real bypassed frames");
	is_int(nrestore, 2, "one restoration for switch 1 and one for switch 0 (port 0)");
	lh_host_destroy(h);

	/* rank 1: block 0 (its leader is rank 0), max_failures 3, one block: sequence numbers 0..4 */
	h = lh_host_create(&t, &peers[1]);
	c = lh_comm_create(h, peers, P, 1, TENANT);
	r = lh_allreduce(c, &cfg, NULL, out, 2);
	st = r ? lh_req_stats(r) : NULL;
	ok(r && max_seq == 0, "rank 1 sends block 0 under attempt 0 (sequence 0)");
	frame(h, EMU_CANARY_OP_FAILURE, 0, 0, 1000, 0, 0);
	ok(st && st->errors == 1 && st->reissues == 0, "a FAILURE naming attempt 1000 is refused (errors %llu)",
	   st ? (unsigned long long)st->errors : 0ULL);
	is_int(max_seq, 0, "...and nothing is sent under another sequence number");
	frame(h, EMU_CANARY_OP_FAILURE, 0, 0, 1, 0, 0);
	ok(st && st->reissues == 1 && max_seq == 1, "the real FAILURE (attempt 1) re-issues the block as sequence 1");
	lh_host_destroy(h);

	/* 253 re-issues: 255 ids a block, LH_BLOCK_IDS = 255 x 65793 */
	size_t nb = LH_BLOCK_IDS / 255;
	int32_t *big = calloc(2 * (nb + 1), sizeof(*big));

	cfg.max_failures = 253;
	h = lh_host_create(&t, &peers[1]);
	c = lh_comm_create(h, peers, P, 1, TENANT + 1);
	ok(!lh_allreduce(c, &cfg, NULL, big, 2 * (nb + 1)), "%zu blocks of 255 attempts (more than 2^24 - 1 ids): refused",
	   nb + 1);
	ok(lh_allreduce(c, &cfg, NULL, big, 2 * nb) != NULL, "%zu blocks (2^24 - 1 ids exactly): taken", nb);
	lh_host_destroy(h);
	free(big);
	return done_testing();
}
