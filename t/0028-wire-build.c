// SPDX-License-Identifier: MIT
/*
 * DOC: the frame builders and the element sum of libhost/wire.c against
 * plain references:
 *  - lh_wire_udp()'s IPv4 checksum, summed from the field values, is the
 *    one recomputed from the header's bytes (lh_wire_ipv4_dscp() with DSCP
 *    0 sums the 16-bit words it reads) and verifies (the header's ones'
 *    complement sum is 0xffff), for addresses and lengths across their
 *    range, carries included; lh_wire_udp_dscp() writes the bytes
 *    lh_wire_udp() and then lh_wire_ipv4_dscp() write, for every DSCP;
 *    lh_wire_udp_tmpl_put() from a template writes lh_wire_udp()'s headers
 *    and length, and nothing after them;
 *  - lh_wire_add_elems() is the wrapping int32 sum element by element, and
 *    lh_wire_put_elems() / lh_wire_get_elems() the big-endian copies, for
 *    every length from 0 to 300 (their 32-element steps, the tail and
 *    both) at two offsets from an aligned address, touching nothing past n;
 *  - lh_wire_canary_build() with no data writes n zero elements, and with
 *    none (n = 0) leaves the bytes after the header alone.
 */
#include <string.h>

#include "libhost/wire.h"
#include "tap.h"

#define NMAX 300

static uint64_t x = 0x9e3779b97f4a7c15ULL;

static uint32_t next32(void)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return (uint32_t)(x >> 16);
}

/* the ones' complement sum of the IPv4 header's ten 16-bit words */
static uint32_t hdr_sum(const uint8_t *ip)
{
	uint32_t s = 0;

	for (unsigned i = 0; i < EMU_IPV4_HLEN; i += 2)
		s += emu_get16(ip + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

int main(void)
{
	static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 1 }, mac_b[6] = { 2, 0, 0, 0, 0, 2 };
	uint8_t f[LH_WIRE_MAX], g[LH_WIRE_MAX];
	unsigned differ = 0, unverified = 0, cases = 0, dscp_differ = 0, tmpl_differ = 0;

	plan(9);
	for (unsigned i = 0; i < 20000; i++) {
		uint32_t sip = next32(), dip = next32(), payload = next32() % 1473;

		if (i < 4) {	/* the extremes: every word 0 or 0xffff */
			sip = i & 1 ? 0xffffffffu : 0;
			dip = i & 2 ? 0xffffffffu : 0;
		}
		lh_wire_udp(f, mac_a, mac_b, sip, dip, (uint16_t)next32(), (uint16_t)next32(), payload);
		memcpy(g, f, EMU_UDP_PAYLOAD_OFF);
		lh_wire_ipv4_dscp(g, 0);
		differ += memcmp(f, g, EMU_UDP_PAYLOAD_OFF) != 0;
		unverified += hdr_sum(f + EMU_ETH_HLEN) != 0xffff;
		cases++;

		unsigned dscp = i % 64;
		uint16_t sport = (uint16_t)next32(), dport = (uint16_t)next32();

		lh_wire_udp(f, mac_a, mac_b, sip, dip, sport, dport, payload);
		lh_wire_ipv4_dscp(f, dscp);
		lh_wire_udp_dscp(g, mac_a, mac_b, sip, dip, sport, dport, payload, dscp);
		dscp_differ += memcmp(f, g, EMU_UDP_PAYLOAD_OFF) != 0;

		/* a template from one source toward this destination (and one of the extremes') */
		struct lh_wire_udp_tmpl t;
		uint8_t dmac[6] = { 2, 0, (uint8_t)i, (uint8_t)(i >> 8), 0xff, 0 };
		uint32_t dip2 = i & 1 ? 0xffffffffu : dip;

		lh_wire_udp_tmpl_init(&t, mac_b, sip, sport, dport, payload);
		for (int k = 0; k < 2; k++) {
			uint32_t d = k ? dip2 : dip;
			uint32_t n1 = lh_wire_udp(f, dmac, mac_b, sip, d, sport, dport, payload);

			memset(g, 0x5a, EMU_UDP_PAYLOAD_OFF + 1);
			tmpl_differ += lh_wire_udp_tmpl_put(g, &t, dmac, d) != n1 ||
				       memcmp(f, g, EMU_UDP_PAYLOAD_OFF) != 0 || g[EMU_UDP_PAYLOAD_OFF] != 0x5a;
		}
	}
	is_int(differ, 0, "lh_wire_udp: the checksum from the field values is the one summed from the header (%u headers)",
	       cases);
	is_int(unverified, 0, "...and the header verifies (its ones' complement sum is 0xffff)");
	is_int(dscp_differ, 0, "lh_wire_udp_dscp: the bytes of lh_wire_udp and lh_wire_ipv4_dscp, DSCP 0-63");
	is_int(tmpl_differ, 0, "lh_wire_udp_tmpl_put: the bytes and length of lh_wire_udp, nothing after the headers");

	static int32_t acc[NMAX + 8], ref[NMAX + 8];
	static uint8_t wire[4 * NMAX + 8];
	static uint8_t out[4 * NMAX + 8], out_ref[4 * NMAX + 8];
	unsigned wrong = 0, put_wrong = 0, get_wrong = 0;

	for (unsigned off = 0; off < 8; off += 5)
		for (size_t n = 0; n <= NMAX; n++) {
			for (size_t k = 0; k < NMAX + 8; k++)
				acc[k] = ref[k] = (int32_t)next32();
			for (size_t k = 0; k < sizeof(wire); k++)
				wire[k] = (uint8_t)next32();
			for (size_t k = 0; k < n; k++)
				ref[off + k] = (int32_t)((uint32_t)ref[off + k] + emu_get32(wire + off + 4 * k));
			lh_wire_add_elems(acc + off, wire + off, n);
			wrong += memcmp(acc, ref, sizeof(acc)) != 0;

			memset(out, 0x5a, sizeof(out));
			memset(out_ref, 0x5a, sizeof(out_ref));
			for (size_t k = 0; k < n; k++)
				emu_put32(out_ref + off + 4 * k, (uint32_t)acc[off + k]);
			lh_wire_put_elems(out + off, acc + off, n);
			put_wrong += memcmp(out, out_ref, sizeof(out)) != 0;

			for (size_t k = 0; k < NMAX + 8; k++)
				acc[k] = ref[k] = (int32_t)next32();
			for (size_t k = 0; k < n; k++)
				ref[off + k] = (int32_t)emu_get32(wire + off + 4 * k);
			lh_wire_get_elems(acc + off, wire + off, n);
			get_wrong += memcmp(acc, ref, sizeof(acc)) != 0;
		}
	is_int(wrong, 0, "lh_wire_add_elems: the wrapping sum for 0-%d elements at offsets 0 and 5, nothing else written",
	       NMAX);
	is_int(put_wrong, 0, "lh_wire_put_elems: big-endian, 0-%d elements at offsets 0 and 5, nothing else written", NMAX);
	is_int(get_wrong, 0, "lh_wire_get_elems: host order, 0-%d elements at offsets 0 and 5, nothing else written", NMAX);

	struct emu_canary_hdr h = { .dst = 0x0a000001, .id = 7, .counter = 1, .hosts = 2, .flags = EMU_CANARY_OP_REDUCE };
	uint32_t len;
	int zeros = 1;

	memset(f, 0xa5, sizeof(f));
	len = lh_wire_canary_build(f, mac_a, mac_b, &h, NULL, 3);
	for (uint32_t k = EMU_CANARY_DATA_OFF; k < len; k++)
		zeros &= f[k] == 0;
	ok(len == EMU_CANARY_DATA_OFF + 12 && zeros && f[len] == 0xa5, "lh_wire_canary_build: no data, 3 elements: zeros");
	memset(f, 0xa5, sizeof(f));
	len = lh_wire_canary_build(f, mac_a, mac_b, &h, NULL, 0);
	ok(len == EMU_CANARY_DATA_OFF && f[len] == 0xa5 && f[len + 1] == 0xa5,
	   "...no element: the header alone, the bytes after it untouched");
	return done_testing();
}
