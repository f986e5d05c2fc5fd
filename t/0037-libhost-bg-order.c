// SPDX-License-Identifier: MIT
/*
 * DOC: the uniform background pattern sends message k of every host to its
 * successor in round k's random cyclic order (LH_BG_UNIFORM): checked
 * against the order built in full, by the Fisher-Yates shuffle libhost
 * documents (the same hash chain, the whole array shuffled and searched).
 *
 * A host sends one-frame messages to a transport that records where each
 * goes; for every host of small groups (n = 2, 3, 5, 17: every way the
 * host's position can end, including last, whose successor wraps to
 * position 0) and for a few hosts of large ones (past libhost's on-stack
 * scratch of 1024 steps), over many rounds and two seeds. Twice: with the
 * host's own walk through the steps, and with the hosts sharing peer tables
 * (lh_host_share_peers), where a round's order is built in full once per
 * thread when asked for a second time among the last 16 rounds asked for
 * (one host asks for each round once, so these runs take the walk, the
 * first request's path, with the shared path's bookkeeping). Then hosts
 * of one group sending in turn, up to a round apart, so that rounds are
 * built, read again, evicted and built again, the tables growing from 17
 * entries to 1500.
 */
#include <stdlib.h>
#include <string.h>

#include "libhost/canary_host.h"
#include "libhost/lh_util.h"
#include "libhost/wire.h"
#include "lhmock.h"
#include "tap.h"

#define NMAX 2000

static struct lh_peer peers[NMAX];
static unsigned dest[64];	/* the peer index of each frame sent */
static unsigned nsent, nbad_dst, limit;

static uint8_t *t_frame_get(void *ctx, void **handle)
{
	static uint8_t buf[LH_FRAME_MAX];

	(void)ctx;
	*handle = buf;
	return buf;
}

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	uint32_t dip;
	uint64_t hash;

	(void)ctx;
	if (lh_wire_dst(handle, len, &dip, &hash) != LH_WIRE_OK || dip < peers[0].ipv4 ||
	    dip - peers[0].ipv4 >= NMAX || nsent >= 64) {
		nbad_dst++;
		return;
	}
	dest[nsent++] = dip - peers[0].ipv4;
}

static lh_time_t t_now(void *ctx)
{
	(void)ctx;
	return 0;
}

static bool t_tx_busy(void *ctx)
{
	(void)ctx;
	return nsent >= limit;
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

/* the successor of @me in round @round's order, from the whole order */
static unsigned reference(uint64_t seed, uint64_t round, unsigned n, unsigned me)
{
	uint64_t x = lh_hash64(seed ^ round * 0x9e3779b97f4a7c15ULL);
	unsigned *perm = malloc(n * sizeof(*perm)), pos = n, next;

	for (unsigned i = 0; i < n; i++)
		perm[i] = i;
	for (unsigned i = n - 1; i > 0; i--) {
		x = lh_hash64(x + i);
		unsigned j = (unsigned)(((__uint128_t)x * (i + 1)) >> 64), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (unsigned i = 0; i < n; i++)
		if (perm[i] == me)
			pos = i;
	next = perm[(pos + 1) % n];
	free(perm);
	return next;
}

/*
 * @rounds messages of host @me among @n (sharing peer tables if @share):
 * how many went elsewhere than the reference says
 */
static unsigned run(unsigned n, unsigned me, uint64_t seed, unsigned rounds, bool share)
{
	struct lh_transport t = { .ops = &ops, .rate_bps = 100000000000ULL, .mtu = 1500 };
	struct lh_host *h = lh_host_create(&t, &peers[me]);
	unsigned wrong = 0;

	if (share)
		lh_host_share_peers(h);

	nsent = 0;
	limit = rounds;
	lh_host_background(h, peers, n, me, LH_BG_UNIFORM, seed, 1, 0);	/* one-byte messages: a frame each */
	wrong += nsent != rounds;
	for (unsigned k = 0; k < nsent; k++)
		wrong += dest[k] != reference(seed, k + 1, n, me);
	lh_host_destroy(h);
	return wrong;
}

/*
 * @nh hosts of a group of @n sharing peer tables send in turn: at step k,
 * host i sends unless (k + i) % 3 == 0, so their rounds differ (by up to
 * one); every message is checked. Return how many went elsewhere than the reference.
 */
static unsigned run_turns(unsigned n, unsigned nh, uint64_t seed, unsigned steps)
{
	struct lh_transport t = { .ops = &ops, .rate_bps = 100000000000ULL, .mtu = 1500 };
	struct lh_host *h[8];
	unsigned round[8] = { 0 }, wrong = 0;

	limit = nsent = 0;	/* busy: nothing goes out until asked */
	for (unsigned i = 0; i < nh; i++) {
		h[i] = lh_host_create(&t, &peers[i * 3]);
		lh_host_share_peers(h[i]);
		lh_host_background(h[i], peers, n, i * 3, LH_BG_UNIFORM, seed, 1, 0);
	}
	for (unsigned k = 0; k < steps; k++)
		for (unsigned i = 0; i < nh; i++) {
			if ((k + i) % 3 == 0)
				continue;
			nsent = 0;
			limit = 1;
			lh_host_tx_ready(h[i]);
			wrong += nsent != 1 || dest[0] != reference(seed, ++round[i], n, i * 3);
			limit = 0;
		}
	for (unsigned i = 0; i < nh; i++)
		lh_host_destroy(h[i]);
	return wrong;
}

int main(void)
{
	static const unsigned small[] = { 2, 3, 5, 17 };
	static const unsigned large[] = { 100, 1023, 1024, 1025, 2000 };
	static const uint64_t seeds[] = { 1, 0x5eed5eed12345ULL };

	plan(21);
	for (unsigned i = 0; i < NMAX; i++)
		peers[i] = (struct lh_peer){ .ipv4 = 0x0a000001 + i, .mac = { 2, 0, 0, 0, (uint8_t)(i >> 8), (uint8_t)i } };
	for (int share = 0; share < 2; share++) {
		const char *how = share ? "shared orders" : "own walk";

		for (unsigned s = 0; s < 4; s++) {
			unsigned n = small[s], wrong = 0, hosts = 0;

			for (unsigned si = 0; si < 2; si++)
				for (unsigned me = 0; me < n; me++, hosts++)
					wrong += run(n, me, seeds[si], 64, share);
			is_int(wrong, 0, "%s, n = %u: %u hosts x 64 rounds each go to their successor in the round's order",
			       how, n, hosts);
		}
		for (unsigned s = 0; s < 5; s++) {
			unsigned n = large[s], wrong = 0;
			unsigned mes[] = { 0, 1, n / 2, n - 2, n - 1 };

			for (unsigned si = 0; si < 2; si++)
				for (unsigned m = 0; m < 5; m++)
					wrong += run(n, mes[m], seeds[si], 24, share);
			is_int(wrong, 0, "%s, n = %u: 5 hosts x 24 rounds go to their successor in the round's order", how,
			       n);
		}
	}
	is_int(run_turns(17, 6, seeds[0], 60), 0, "shared orders, 6 hosts of 17 in turn: each message to its successor");
	is_int(run_turns(1500, 8, seeds[1], 40), 0, "shared orders, 8 hosts of 1500 in turn: each message to its successor");
	is_int(nbad_dst, 0, "every frame went to one of the hosts");
	return done_testing();
}
