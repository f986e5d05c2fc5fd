// SPDX-License-Identifier: MIT
/*
 * DOC: wire.c - build and parse frames. See wire.h.
 */
#include "libhost/wire.h"

#include <string.h>


static const char *const wire_err_str[LH_WIRE_NERR] = {
	[LH_WIRE_OK] = "ok",
	[LH_WIRE_TRUNCATED] = "truncated",
	[LH_WIRE_BAD_TYPE] = "unknown ethertype or protocol",
	[LH_WIRE_BAD_OPCODE] = "unknown Canary opcode",
	[LH_WIRE_BAD_LENGTH] = "Canary data is not whole elements",
	[LH_WIRE_BAD_COUNTER] = "Canary counter exceeds hosts",
	[LH_WIRE_BAD_IPV4] = "malformed IPv4 header",
};

const char *lh_wire_strerror(enum lh_wire_err e)
{
	return (unsigned)e < LH_WIRE_NERR ? wire_err_str[e] : "?";
}

void lh_wire_eth(uint8_t *p, const uint8_t dst[6], const uint8_t src[6], uint16_t type)
{
	memcpy(p, dst, 6);
	memcpy(p + 6, src, 6);
	emu_put16(p + 12, type);
}

/*
 * The Internet checksum (RFC 1071) of an IPv4 header without options: the
 * ones' complement of the ones' complement sum of its 16-bit words, summed
 * here as five 32-bit words with the carries folded at the end (RFC 1071
 * sec. 2: (C) parallel summation, and deferred carries).
 */
static uint16_t ip_checksum(const uint8_t *h)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < EMU_IPV4_HLEN; i += 4)
		sum += emu_get32(h + i);
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* the IPv4 header's 16-bit words of a UDP frame, summed, but those of the destination address */
static inline uint32_t udp_sum(uint8_t tos, uint32_t iplen, uint32_t sip)
{
	return (0x4500u | tos) + (iplen & 0xffff) + 0x4000u + (64u << 8 | EMU_IPPROTO_UDP) + (sip >> 16) + (sip & 0xffff);
}

/* lh_wire_udp_dscp(), inlined in both builders */
static inline uint32_t udp_build(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], uint32_t sip, uint32_t dip,
				 uint16_t sport, uint16_t dport, uint32_t payload_len, unsigned dscp)
{
	uint8_t tos = (uint8_t)(dscp << 2);
	uint8_t *ip = p + EMU_ETH_HLEN, *udp = p + EMU_UDP_OFF;
	uint32_t iplen = EMU_IPV4_HLEN + EMU_UDP_HLEN + payload_len;

	lh_wire_eth(p, dmac, smac, EMU_ETHERTYPE_IPV4);
	ip[0] = 0x45;
	ip[1] = tos;
	emu_put16(ip + 2, (uint16_t)iplen);
	emu_put16(ip + 4, 0);
	emu_put16(ip + 6, 0x4000);	/* DF */
	ip[8] = 64;
	ip[9] = EMU_IPPROTO_UDP;
	emu_put32(ip + 12, sip);
	emu_put32(ip + 16, dip);
	/* ip_checksum() of the words just written, summed from their values (the header is not read back) */
	emu_put16(ip + 10, lh_wire_ip_csum(udp_sum(tos, iplen, sip) + (dip >> 16) + (dip & 0xffff)));
	emu_put16(udp, sport);
	emu_put16(udp + 2, dport);
	emu_put16(udp + 4, (uint16_t)(EMU_UDP_HLEN + payload_len));
	emu_put16(udp + 6, 0);
	return EMU_ETH_HLEN + iplen;
}

uint32_t lh_wire_udp(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], uint32_t sip, uint32_t dip,
		      uint16_t sport, uint16_t dport, uint32_t payload_len)
{
	return udp_build(p, dmac, smac, sip, dip, sport, dport, payload_len, 0);
}

uint32_t lh_wire_udp_dscp(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], uint32_t sip, uint32_t dip,
			   uint16_t sport, uint16_t dport, uint32_t payload_len, unsigned dscp)
{
	return udp_build(p, dmac, smac, sip, dip, sport, dport, payload_len, dscp);
}

void lh_wire_udp_tmpl_init(struct lh_wire_udp_tmpl *t, const uint8_t smac[6], uint32_t sip, uint16_t sport,
			   uint16_t dport, uint32_t payload_len)
{
	static const uint8_t zero[6];

	t->len = udp_build(t->hdr, zero, smac, sip, 0, sport, dport, payload_len, 0);
	t->sum = udp_sum(0, EMU_IPV4_HLEN + EMU_UDP_HLEN + payload_len, sip);
}

void lh_wire_ipv4_dscp(uint8_t *p, unsigned dscp)
{
	uint8_t *ip = p + EMU_ETH_HLEN;

	ip[1] = (uint8_t)(dscp << 2 | (ip[1] & 3));
	emu_put16(ip + 10, 0);
	emu_put16(ip + 10, ip_checksum(ip));
}

void lh_wire_canary_write_hdr(uint8_t *p, const struct emu_canary_hdr *h)
{
	uint8_t *c = p + EMU_CANARY_OFF;

	emu_put32(c, h->dst);
	emu_put32(c + 4, h->id);
	emu_put16(c + 8, h->counter);
	emu_put16(c + 10, h->hosts);
	emu_put32(c + 12, h->children);
	emu_put16(c + 16, h->swaddr);
	c[18] = (uint8_t)((h->flags & ~EMU_CANARY_RUN_MASK) | (h->run << EMU_CANARY_RUN_SHIFT & EMU_CANARY_RUN_MASK));
}

EMU_ELEM_CLONES void lh_wire_put_elems(uint8_t *restrict d, const int32_t *restrict src, size_t n)
{
	size_t i = 0;

	/* 32 elements a step, as lh_wire_add_elems() */
	for (; i + 32 <= n; i += 32) {
		uint8_t *o = d + 4 * i;
		const int32_t *s = src + i;

#pragma GCC unroll 4
		for (unsigned j = 0; j < 32; j++)
			emu_put32(o + 4 * j, (uint32_t)s[j]);
	}
	for (; i < n; i++)
		emu_put32(d + 4 * i, (uint32_t)src[i]);
}

EMU_ELEM_CLONES void lh_wire_get_elems(int32_t *restrict dst, const uint8_t *restrict p, size_t n)
{
	size_t i = 0;

	/* 32 elements a step, as lh_wire_add_elems() */
	for (; i + 32 <= n; i += 32) {
		int32_t *o = dst + i;
		const uint8_t *q = p + 4 * i;

#pragma GCC unroll 4
		for (unsigned j = 0; j < 32; j++)
			o[j] = (int32_t)emu_get32(q + 4 * j);
	}
	for (; i < n; i++)
		dst[i] = (int32_t)emu_get32(p + 4 * i);
}

EMU_ELEM_CLONES void lh_wire_add_elems(int32_t *restrict acc, const uint8_t *restrict p, size_t n)
{
	size_t i = 0;

	/*
	 * 32 elements a step, the inner loop's vectors unrolled: four AVX2 vectors
	 * with no loop test between them (the pragma on a plain loop over n did not
	 * survive the link-time optimization)
	 */
	for (; i + 32 <= n; i += 32) {
		int32_t *a = acc + i;
		const uint8_t *q = p + 4 * i;

#pragma GCC unroll 4
		for (unsigned j = 0; j < 32; j++)
			a[j] = (int32_t)((uint32_t)a[j] + emu_get32(q + 4 * j));
	}
	for (; i < n; i++)
		acc[i] = (int32_t)((uint32_t)acc[i] + emu_get32(p + 4 * i));
}

/* GCC's vector extension (AVX2 in the clone), read from any address as any type */
typedef uint32_t emu_v8u32 __attribute__((vector_size(32), aligned(1), may_alias));

EMU_ELEM_CLONES bool lh_wire_elems_differ(const uint8_t *a, const uint8_t *b, size_t n)
{
	emu_v8u32 acc = { 0 };
	size_t k = 0;
	uint32_t d = 0;

	/* eight vectors a step: mostly loads, xors and ors */
	for (; k + 64 <= n; k += 64) {
		const emu_v8u32 *x = (const emu_v8u32 *)(a + 4 * k), *y = (const emu_v8u32 *)(b + 4 * k);

		acc |= (x[0] ^ y[0]) | (x[1] ^ y[1]) | (x[2] ^ y[2]) | (x[3] ^ y[3]) | (x[4] ^ y[4]) | (x[5] ^ y[5]) |
		       (x[6] ^ y[6]) | (x[7] ^ y[7]);
	}
	for (unsigned j = 0; j < 8; j++)
		d |= acc[j];
	for (; k < n; k++) {
		uint32_t x, y;

		memcpy(&x, a + 4 * k, 4);
		memcpy(&y, b + 4 * k, 4);
		d |= x ^ y;
	}
	return d != 0;
}

uint32_t lh_wire_canary_build(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6],
			       const struct emu_canary_hdr *h, const int32_t *data, unsigned nelem)
{
	lh_wire_eth(p, dmac, smac, EMU_ETHERTYPE_CANARY);
	lh_wire_canary_write_hdr(p, h);
	uint8_t *d = p + EMU_CANARY_DATA_OFF;

	if (data)
		lh_wire_put_elems(d, data, nelem);
	else if (nelem)	/* 0: the caller writes the elements itself (no call for nothing) */
		memset(d, 0, 4 * (size_t)nelem);
	return EMU_CANARY_DATA_OFF + 4 * nelem;
}

enum lh_wire_err lh_wire_canary_parse(const uint8_t *p, uint32_t len, struct emu_canary_hdr *h, unsigned *nelem)
{
	const uint8_t *c = p + EMU_CANARY_OFF;

	if (len < EMU_CANARY_DATA_OFF)
		return LH_WIRE_TRUNCATED;
	if (lh_wire_ethertype(p, len) != EMU_ETHERTYPE_CANARY)
		return LH_WIRE_BAD_TYPE;
	h->dst = emu_get32(c);
	h->id = emu_get32(c + 4);
	h->counter = emu_get16(c + 8);
	h->hosts = emu_get16(c + 10);
	h->children = emu_get32(c + 12);
	h->swaddr = emu_get16(c + 16);
	h->flags = c[18] & (uint8_t)~EMU_CANARY_RUN_MASK;
	h->run = (uint8_t)((c[18] & EMU_CANARY_RUN_MASK) >> EMU_CANARY_RUN_SHIFT);
	unsigned op = h->flags & EMU_CANARY_OP_MASK;

	if (op == 0 || op > EMU_CANARY_OP_MAX)
		return LH_WIRE_BAD_OPCODE;
	uint32_t dlen = len - EMU_CANARY_DATA_OFF;

	if (dlen % 4 || dlen / 4 > EMU_CANARY_MAX_ELEMENTS)
		return LH_WIRE_BAD_LENGTH;
	if (h->hosts == 0 || h->counter > h->hosts)
		return LH_WIRE_BAD_COUNTER;
	*nelem = dlen / 4;
	return LH_WIRE_OK;
}

enum lh_wire_err lh_wire_dst(const uint8_t *p, uint32_t len, uint32_t *dip, uint64_t *hash)
{
	uint16_t type = lh_wire_ethertype(p, len);

	if (len < EMU_ETH_HLEN)
		return LH_WIRE_TRUNCATED;
	if (type == EMU_ETHERTYPE_CANARY) {
		if (len < EMU_CANARY_DATA_OFF)
			return LH_WIRE_TRUNCATED;
		*dip = emu_get32(p + EMU_CANARY_OFF);
		*hash = *dip;	/* the paper: default up port by hash of the destination */
		return LH_WIRE_OK;
	}
	if (type == EMU_ETHERTYPE_IPV4) {
		uint32_t sip;
		enum lh_wire_err e = lh_wire_ipv4(p, len, &sip, dip);

		if (e)
			return e;
		*hash = lh_wire_flow_hash(*dip, sip, len >= EMU_UDP_PAYLOAD_OFF ? emu_get32(p + EMU_UDP_OFF) : 0);
		return LH_WIRE_OK;
	}
	return LH_WIRE_BAD_TYPE;
}
