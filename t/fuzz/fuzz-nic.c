// SPDX-License-Identifier: MIT
/*
 * DOC: fuzz-nic.c - the receive path of a real interface, as
 * canary-allreduce and canary-emu --attach run it: the AF_PACKET receive
 * ring (libhost/afpacket.c: every slot header the kernel writes is read
 * with its offsets and lengths unchecked by anyone else), then the
 * EtherType filter and lh_host_rx() of a host with a running allreduce.
 *
 * The input fills a ring of 8 slots of 256 to 4096 bytes, in memory
 * (lh_afp_mem): per slot a status word (ready or not), the TPACKET_V2
 * header's lengths and MAC offset, the packet type of its sockaddr_ll,
 * then frame bytes written where the header says (optionally a plausible
 * Canary frame of the host's tenant). The first bytes choose the host's
 * algorithm, communicator size and rank, and the slot size. lh_afp_rx()
 * drains the ring twice (the second drain must find nothing: the slots
 * went back to the kernel).
 *
 * Properties: no crash, out-of-bounds access, leak or undefined
 * behaviour; every frame handed on lies inside its slot, after the
 * header, 14..LH_FRAME_MAX bytes long; every slot consumed is counted
 * exactly once (passed, bad or own) and returned to the kernel; the ready
 * slots are taken in ring order up to the first one not ready; a ready
 * slot whose frame is well placed is passed on; a sent frame fits
 * LH_FRAME_MAX; the host (run id 0) counts every Canary or ring frame of
 * another run id it was handed, once, and no other frame (the corpus
 * replays a host's own frames, again and again, and frames of another
 * run: what a capture replayed onto an attached interface delivers).
 */
#include <linux/if_packet.h>

#include "libhost/afpacket.h"
#include "libhost/canary_host.h"
#include "libhost/wire.h"
#include "t/fuzz/fuzz.h"

#define SLOTS 8
#define TENANT 3

struct fake {
	lh_time_t now;
	const uint8_t *slot_lo, *slot_hi;	/* the ring */
	unsigned slot_size;
	uint64_t passed;
	uint64_t other_run;			/* Canary and ring frames of another run passed on */
	uint8_t buf[LH_FRAME_MAX];		/* last: the rest is reset per input */
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
	(void)ctx;
	FUZZ_CHECK(handle == fk.buf && len <= LH_FRAME_MAX);
}

static lh_time_t t_now(void *ctx)
{
	(void)ctx;
	return fk.now;
}

static void t_timer(void *ctx, lh_time_t at, uint64_t cookie)
{
	(void)ctx;
	(void)cookie;
	FUZZ_CHECK(at >= fk.now);
}

static bool t_tx_busy(void *ctx)
{
	(void)ctx;
	return false;
}

static uint64_t t_random(void *ctx)
{
	(void)ctx;
	return 0x9e3779b97f4a7c15ULL;
}

static const struct lh_transport_ops ops = {
	.frame_get = t_frame_get, .frame_send = t_frame_send, .now = t_now, .timer = t_timer,
	.tx_busy = t_tx_busy, .random = t_random,
};

/* what canary-allreduce does with a frame from the ring */
static void on_frame(void *arg, const uint8_t *f, uint32_t len)
{
	struct lh_host *h = arg;
	size_t off = (size_t)(f - fk.slot_lo) % fk.slot_size;

	FUZZ_CHECK(f >= fk.slot_lo && f + len <= fk.slot_hi);
	FUZZ_CHECK(off >= sizeof(struct tpacket2_hdr) && off + len <= fk.slot_size);
	FUZZ_CHECK(len >= EMU_ETH_HLEN && len <= LH_FRAME_MAX);
	fk.passed++;
	uint16_t type = lh_wire_ethertype(f, len);

	if (type == EMU_ETHERTYPE_CANARY || type == EMU_ETHERTYPE_IPV4)
		lh_host_rx(h, f, len);
	struct emu_canary_hdr ch;
	unsigned n;

	if (lh_wire_canary_parse(f, len, &ch, &n) == LH_WIRE_OK)
		fk.other_run += ch.run != 0;
	else if (type == EMU_ETHERTYPE_IPV4 && lh_wire_udp_dport(f, len) == EMU_RING_PORT &&
		 len >= EMU_UDP_PAYLOAD_OFF + EMU_RING_HDR)
		fk.other_run += f[EMU_UDP_PAYLOAD_OFF + EMU_RING_RUN_OFF] != 0;
}

static void input_fn(void *arg, size_t off, int32_t *out, size_t n)
{
	(void)arg;
	for (size_t i = 0; i < n; i++)
		out[i] = (int32_t)(off + i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned sizes[4] = { 256, 1024, 2048, 4096 };
	struct fuzz_in in = { data, size };
	uint8_t c0 = fz_u8(&in), c1 = fz_u8(&in);
	unsigned P = 2 + c0 % 7, rank = (c0 >> 3) % P, ssz = sizes[c1 & 3];
	struct lh_peer peers[8];
	struct lh_ar_cfg cfg = {
		.algo = (enum lh_algo)((c1 >> 2) % 3), .elements = 64, .ntrees = 1, .rtt = 2 * LH_US,
		.switch_timeout = LH_US, .max_failures = 2, .reliable = true, .input_block = input_fn,
	};
	struct lh_transport t = { .ops = &ops, .rate_bps = 100000000000ULL, .mtu = 1500 };
	uint8_t *ring = calloc(SLOTS, ssz);
	bool expect[SLOTS] = { false };

	FUZZ_CHECK(ring);
	memset(&fk, 0, offsetof(struct fake, buf));
	fk.slot_lo = ring;
	fk.slot_hi = ring + (size_t)SLOTS * ssz;
	fk.slot_size = ssz;
	for (unsigned i = 0; i < P; i++)
		peers[i] = (struct lh_peer){ .ipv4 = 0x0a000001 + i, .mac = { 2, 0, 0, 0, 0, (uint8_t)i } };
	for (unsigned s = 0; s < SLOTS && in.n; s++) {
		struct tpacket2_hdr *h = (void *)(ring + (size_t)s * ssz);
		uint8_t flags = fz_u8(&in);
		size_t len;
		const uint8_t *b;
		uint16_t mac = fz_u16(&in);

		h->tp_status = flags & 1 ? TP_STATUS_USER : TP_STATUS_KERNEL;
		if (flags & 2)		/* a well-placed frame: the kernel's usual offset */
			mac = (uint16_t)(TPACKET_ALIGN(sizeof(struct tpacket2_hdr)) + sizeof(struct sockaddr_ll) + 2);
		h->tp_mac = mac;
		h->tp_net = (uint16_t)(mac + EMU_ETH_HLEN);
		b = fz_chunk(&in, LH_FRAME_MAX + 64, &len);
		h->tp_len = h->tp_snaplen = (uint32_t)len;
		if (flags & 4)
			h->tp_len = (uint32_t)fz_u16(&in);
		if (flags & 8)
			h->tp_snaplen = (uint32_t)fz_u16(&in) << (flags >> 6);
		struct sockaddr_ll *sll = (void *)((uint8_t *)h + TPACKET_ALIGN(sizeof(struct tpacket2_hdr)));

		sll->sll_pkttype = flags & 16 ? PACKET_OUTGOING : PACKET_HOST;
		if ((size_t)mac < ssz) {
			size_t room = ssz - mac, n = len < room ? len : room;

			memcpy((uint8_t *)h + mac, b, n);
			if (flags & 32 && n >= EMU_CANARY_DATA_OFF) {	/* a plausible Canary frame of this tenant */
				uint8_t *f = (uint8_t *)h + mac;

				emu_put16(f + 12, EMU_ETHERTYPE_CANARY);
				f[EMU_CANARY_OFF + 4] = TENANT;
			}
		}
		/* the receive path must pass this one on */
		expect[s] = (flags & 1) && !(flags & 16) && (flags & 2) && !(flags & 12) && len >= EMU_ETH_HLEN &&
			    len <= LH_FRAME_MAX && (size_t)mac + len <= ssz;
	}

	/* the drain takes the ready slots in ring order, up to the first one not ready */
	unsigned run = 0, must = 0;

	while (run < SLOTS && ((struct tpacket2_hdr *)(ring + (size_t)run * ssz))->tp_status & TP_STATUS_USER)
		must += expect[run++];

	struct lh_host *host = lh_host_create(&t, &peers[rank]);
	struct lh_comm *c = lh_comm_create(host, peers, P, rank, TENANT);
	struct lh_afp *a = lh_afp_mem(ring, SLOTS, ssz);

	FUZZ_CHECK(host && c && a);
	(void)lh_allreduce(c, &cfg, NULL, NULL, 1000);
	size_t n1 = lh_afp_rx(a, on_frame, host, SLOTS);
	const struct lh_afp_stats *st = lh_afp_stats(a);

	FUZZ_CHECK(n1 == run);
	FUZZ_CHECK(st->rx_frames + st->rx_bad + st->rx_own == n1);
	FUZZ_CHECK(st->rx_frames == fk.passed && st->rx_frames >= must);
	for (unsigned i = 0; i < n1; i++)
		FUZZ_CHECK(((struct tpacket2_hdr *)(ring + (size_t)i * ssz))->tp_status == TP_STATUS_KERNEL);
	FUZZ_CHECK(lh_afp_rx(a, on_frame, host, SLOTS) == 0);
	FUZZ_CHECK(lh_host_other_run(host) == fk.other_run);
	lh_afp_close(a);
	lh_host_destroy(host);
	free(ring);
	return 0;
}
