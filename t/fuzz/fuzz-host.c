// SPDX-License-Identifier: MIT
/*
 * DOC: fuzz-host.c - the host receive path (libhost: lh_host_rx and what
 * it dispatches to, the Canary/static-tree and ring algorithms, the
 * completion barrier) on arbitrary frames, through a transport the
 * target controls.
 *
 * The input's first bytes set up one host: the algorithm, the
 * communicator size and this host's rank, elements per packet, the
 * allreduce size, failures before fallback, ring reliability, Canary's
 * sketch (probes, tail probes, second broadcasts). Then a program of
 * steps: deliver a frame (its bytes optionally shaped: the Canary
 * EtherType, this communicator's tenant, a sequence number of a real
 * block, a consistent counter, a whole block of elements, the sketch
 * after them; or an IPv4/UDP
 * frame to the ring port of this tenant), fire the earliest timer, tell
 * the host its NIC is ready, advance the clock. Frames the host sends are
 * dropped (their lengths are checked against the buffer).
 *
 * Properties: no crash, read or write out of bounds, leak or undefined
 * behaviour; a sent frame fits LH_FRAME_MAX; a sent Canary frame is of
 * this communicator's tenant and (but for the completion barrier's) has a
 * sequence number of this allreduce: blocks x (max_failures + 2); every
 * timer is armed at or after the current time.
 */
#include "libhost/canary_host.h"
#include "libhost/wire.h"
#include "t/fuzz/fuzz.h"

#define TIMERS 4096
#define TENANT 5

struct fake {
	lh_time_t now;
	bool busy;
	uint64_t rng;
	uint64_t sent;
	uint32_t seq_limit;	/* blocks x (max_failures + 2): the sequence numbers of the allreduce */
	unsigned ntimers;
	struct {
		lh_time_t at;
		uint64_t cookie;
	} tm[TIMERS];
	uint8_t buf[LH_FRAME_MAX];
};

static struct fake fk;

static uint8_t *t_frame_get(void *ctx, void **handle)
{
	(void)ctx;
	*handle = fk.buf;
	return fk.buf;
}

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	struct emu_canary_hdr h;
	unsigned n;

	(void)ctx;
	FUZZ_CHECK(handle == fk.buf && len <= LH_FRAME_MAX);
	/* every Canary frame it sends is of its tenant, with a sequence number of its allreduce */
	if (lh_wire_canary_parse(fk.buf, len, &h, &n) == LH_WIRE_OK) {
		FUZZ_CHECK(h.id >> 24 == TENANT);
		FUZZ_CHECK((h.flags & EMU_CANARY_OP_MASK) == EMU_CANARY_OP_DONE || (h.id & 0xffffff) < fk.seq_limit);
	}
	fk.sent++;
	fk.busy = true;
}

static lh_time_t t_now(void *ctx)
{
	(void)ctx;
	return fk.now;
}

static void t_timer(void *ctx, lh_time_t at, uint64_t cookie)
{
	(void)ctx;
	FUZZ_CHECK(at >= fk.now);
	if (fk.ntimers < TIMERS) {
		fk.tm[fk.ntimers].at = at;
		fk.tm[fk.ntimers++].cookie = cookie;
	}
}

static bool t_tx_busy(void *ctx)
{
	(void)ctx;
	return fk.busy;
}

static uint64_t t_random(void *ctx)
{
	(void)ctx;
	fk.rng ^= fk.rng << 13;
	fk.rng ^= fk.rng >> 7;
	fk.rng ^= fk.rng << 17;
	return fk.rng;
}

static const struct lh_transport_ops ops = {
	.frame_get = t_frame_get, .frame_send = t_frame_send, .now = t_now, .timer = t_timer,
	.tx_busy = t_tx_busy, .random = t_random,
};

/* fire the earliest pending timer (clock moves to it) */
static void fire_one(struct lh_host *h)
{
	unsigned best = 0;

	if (!fk.ntimers)
		return;
	for (unsigned i = 1; i < fk.ntimers; i++)
		if (fk.tm[i].at < fk.tm[best].at)
			best = i;
	uint64_t cookie = fk.tm[best].cookie;

	if (fk.tm[best].at > fk.now)
		fk.now = fk.tm[best].at;
	fk.tm[best] = fk.tm[--fk.ntimers];
	lh_host_timer(h, cookie);
}

static void input_fn(void *arg, size_t off, int32_t *out, size_t n)
{
	(void)arg;
	for (size_t i = 0; i < n; i++)
		out[i] = (int32_t)(off + i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned elems[4] = { 1, 2, 7, 256 };
	struct fuzz_in in = { data, size };
	uint8_t c0 = fz_u8(&in), c1 = fz_u8(&in), c2 = fz_u8(&in);
	unsigned P = 1 + c0 % 8, rank = (c0 >> 3) % P;
	struct lh_peer peers[8];
	struct lh_ar_cfg cfg = {
		.algo = (enum lh_algo)(c1 % 3),
		.elements = elems[(c1 >> 2) & 3],
		.ntrees = 1 + ((c1 >> 4) & 1),
		.rtt = 2 * LH_US,
		.switch_timeout = LH_US,
		.max_failures = (c1 >> 5) & 3,
		.reliable = c1 & 0x80,
		.window = c2 & 7,
		.noise = c2 & 8 ? 0.5 : 0,
		.input_block = input_fn,
	};

	/* the sketch (Canary only; fewer than the elements): c0's top bits, 0..3 */
	if (c0 >> 6 && cfg.elements > 3)
		cfg.sketch = c0 >> 6;
	size_t count = 1 + (c2 >> 4) * 7;
	struct lh_transport t = { .ops = &ops, .rate_bps = 100000000000ULL, .mtu = 1500 };

	memset(&fk, 0, offsetof(struct fake, tm));
	fk.rng = 0x9e3779b97f4a7c15ULL;
	for (unsigned i = 0; i < P; i++)
		peers[i] = (struct lh_peer){ .ipv4 = 0x0a000001 + i, .mac = { 2, 0, 0, 0, 0, (uint8_t)i } };
	struct lh_host *h = lh_host_create(&t, &peers[rank]);
	struct lh_comm *c = lh_comm_create(h, peers, P, rank, TENANT);
	int32_t *out = malloc(count * sizeof(int32_t));

	FUZZ_CHECK(h && c && out);
	/* a block holds elements - sketch of the data (the sketch rides after them) */
	unsigned per = cfg.algo == LH_ALGO_CANARY ? cfg.elements - cfg.sketch : cfg.elements;

	fk.seq_limit = (uint32_t)((count + per - 1) / per * (cfg.max_failures + 2));
	struct lh_req *r = lh_allreduce(c, &cfg, NULL, out, count);

	if (!r)
		goto out;
	for (unsigned step = 0; in.n && step < 256; step++) {
		uint8_t op = fz_u8(&in);

		switch (op & 3) {
		case 0:
		case 1: {
			uint8_t f[LH_FRAME_MAX];
			size_t len;
			const uint8_t *b = fz_chunk(&in, sizeof(f), &len);

			memcpy(f, b, len);
			if (op & 4 && len >= EMU_CANARY_DATA_OFF) {
				/* a plausible Canary frame of this communicator */
				size_t nblk = (count + per - 1) / per;
				uint32_t seq = emu_get32(f + EMU_CANARY_OFF + 4) % (uint32_t)(nblk * (cfg.max_failures + 3));

				emu_put16(f + 12, EMU_ETHERTYPE_CANARY);
				emu_put32(f + EMU_CANARY_OFF + 4, (uint32_t)TENANT << 24 | seq);
				if (op & 8) {
					emu_put16(f + EMU_CANARY_OFF + 10, (uint16_t)P);
					emu_put16(f + EMU_CANARY_OFF + 8, (uint16_t)(f[EMU_CANARY_OFF + 9] % (P + 1)));
				}
				if (op & 16) {
					size_t b0 = seq % nblk, n = count - b0 * per;

					if (n > per)
						n = per;
					if (op & 64 && cfg.algo == LH_ALGO_CANARY)
						n += cfg.sketch;	/* a reduce frame's sketch after the data */
					if (len < EMU_CANARY_DATA_OFF + 4 * n)
						len = EMU_CANARY_DATA_OFF + 4 * n;
					else
						len = EMU_CANARY_DATA_OFF + 4 * n;
				}
				if (op & 32)
					emu_put32(f + EMU_CANARY_OFF + 12, f[EMU_CANARY_OFF + 15] % (P + 1));
			} else if (op & 4 && len >= EMU_UDP_PAYLOAD_OFF + 1) {
				/* an IPv4/UDP frame to the ring port of this tenant */
				uint32_t plen = (uint32_t)(len - EMU_UDP_PAYLOAD_OFF);
				uint8_t keep[LH_FRAME_MAX];

				memcpy(keep, f + EMU_UDP_PAYLOAD_OFF, plen);
				lh_wire_udp(f, peers[0].mac, peers[rank].mac, peers[(rank + P - 1) % P].ipv4, peers[rank].ipv4,
					     7400, 7400, plen);
				memcpy(f + EMU_UDP_PAYLOAD_OFF, keep, plen);
				f[EMU_UDP_PAYLOAD_OFF] = TENANT;
			}
			lh_host_rx(h, f, (uint32_t)len);
			break;
		}
		case 2:
			fire_one(h);
			break;
		default:
			if (op & 4) {
				fk.now += (lh_time_t)(op >> 3) * 100 * LH_NS;
			} else {
				fk.busy = false;
				lh_host_tx_ready(h);
			}
			break;
		}
	}
	/* let the timers run a while (retransmissions, the barrier) */
	for (unsigned i = 0; i < 64 && fk.ntimers; i++) {
		fk.busy = false;
		lh_host_tx_ready(h);
		fire_one(h);
	}
	(void)lh_req_data_done(r);
	(void)lh_req_stats(r);
out:
	lh_host_destroy(h);
	free(out);
	return 0;
}
