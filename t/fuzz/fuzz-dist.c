// SPDX-License-Identifier: MIT
/*
 * DOC: fuzz-dist.c - the validators of the distributed protocol's
 * messages (emu/dist/): the message header, the HELLO and WELCOME of the
 * join, the event records of a WINDOW (emu_chan_remote_check, then the
 * channel rebuilding events and frames from the checked bytes), and the
 * RESULT records rank 0 merges.
 *
 * The first byte picks the message, the next ones the receiver's view of
 * the session (ranks, its rank, workers, fabric size); the rest is the
 * message. Properties: no crash, out-of-bounds access, leak or undefined
 * behaviour; a WINDOW's records that pass the check are rebuilt to exactly
 * the events the check counted, each within the bounds it was checked
 * against.
 */
#include "emu/dist/dist.h"
#include "emu/engine/chan.h"
#include "emu/engine/frame.h"
#include "emu/scenario.h"
#include "t/fuzz/fuzz.h"

struct bounds {
	uint32_t nodes;
	uint16_t ports;
	uint64_t not_before;
	long events;
	struct emu_pool *pool;
};

static int ok_node(void *arg, uint32_t node, uint32_t port)
{
	const struct bounds *b = arg;

	return node < b->nodes && port < b->ports;
}

static void sink(void *arg, const struct emu_ev *ev)
{
	struct bounds *b = arg;

	FUZZ_CHECK(ev->node < b->nodes && ev->port < b->ports && ev->t >= b->not_before);
	FUZZ_CHECK(ev->type == EMU_EV_FRAME || ev->type == EMU_EV_CREDIT);
	if (ev->type == EMU_EV_FRAME) {
		FUZZ_CHECK(ev->frame->len <= EMU_FRAME_MAX);
		emu_pool_put(b->pool, ev->frame);
	}
	b->events++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint8_t sel = fz_u8(&in), a = fz_u8(&in), b = fz_u8(&in);
	unsigned nranks = 1 + a % EMU_DIST_MAX_RANKS, self = b % nranks;
	/* an exact-size copy, so ASan sees any read past the message */
	size_t len = in.n;
	uint8_t *msg = malloc(len ? len : 1);

	FUZZ_CHECK(msg);
	memcpy(msg, in.p, len);
	switch (sel % 5) {
	case 0: {
		struct emu_dist_hdr h;

		memset(&h, 0, sizeof(h));
		memcpy(&h, msg, len < sizeof(h) ? len : sizeof(h));
		const char *why = emu_dist_check_header(&h, len, 0x1234, nranks, self);

		if (!why) {
			FUZZ_CHECK(len >= sizeof(h) && h.len == len - sizeof(h) && h.rank < nranks);
			FUZZ_CHECK(h.type == EMU_DIST_HELLO ? h.rank != 0 : h.run_id == 0x1234 && h.rank != self);
		}
		break;
	}
	case 1:
	case 2: {
		/* join messages: the size the protocol wants when asked (sel bit 3), else as given */
		size_t want = sel % 5 == 1 ? EMU_DIST_HELLO_BYTES : EMU_DIST_WELCOME_BYTES;
		size_t n = sel & 8 ? want : len;
		uint8_t *p = calloc(1, n ? n : 1);

		FUZZ_CHECK(p);
		memcpy(p, msg, len < n ? len : n);
		if (sel % 5 == 1)
			(void)emu_dist_check_hello(p, n, nranks, 0x5eed);
		else
			(void)emu_dist_check_welcome(p, n, nranks, self, 1 + (b >> 6));
		free(p);
		break;
	}
	case 3: {
		struct emu_pool pool;
		struct bounds bd = { .nodes = 1 + a, .ports = (uint16_t)(1 + b % 64), .not_before = (uint64_t)(sel >> 3) << 20 };
		long n = emu_chan_remote_check(msg, len, bd.not_before, ok_node, &bd);

		if (n < 0)
			break;
		emu_pool_init(&pool);
		bd.pool = &pool;
		struct emu_chan *c = emu_chan_remote_create(0, 1, &pool);

		emu_chan_remote_feed(c, msg, len);
		size_t got = c->ops->drain(c, sink, &bd);

		FUZZ_CHECK((long)got == n && bd.events == n);
		emu_chan_destroy(c);
		emu_pool_fini(&pool);
		break;
	}
	default:
		(void)emu_scenario_check_result(msg, len, 1 + a % 16, 1 + b % 8, 2 * (1 + (sel >> 3)));
		break;
	}
	free(msg);
	return 0;
}
