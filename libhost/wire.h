/* SPDX-License-Identifier: MIT */
/*
 * DOC: wire.h - the bytes on the wire: the one definition of every frame
 * format the emulator carries. Switch, hosts, pcap writer,
 * tests and hw/ all follow this file.
 *
 *   Ethernet II: dst MAC 6 | src MAC 6 | EtherType 2
 *   Canary (EtherType 0x88B5, IEEE local experimental), 19 bytes, the
 *   paper's field order, network byte order:
 *     destination 4   IPv4 address of the block's leader (routed like IP)
 *     id          4   tenant (high EMU_CANARY_TENANT_BITS) | sequence
 *     counter     2   host contributions reduced into this packet
 *     hosts       2   hosts in the reduction
 *     children    4   ingress port of a collision / port bitmap (restoration)
 *     switch      2   address of the switch that saw a collision
 *     flags       1   bit 7 bypass, bit 6 multicast, bits 5..4 run, bits 3..0 opcode
 *   then the data: elements x int32, big-endian.
 *   Background traffic and the ring: Ethernet | IPv4 (20, no options) |
 *   UDP (8) | payload.
 *
 * Parsing is bounds-checked: a truncated or inconsistent frame is rejected
 * with a reason code, never read past its end.
 *
 * Everything works on plain byte buffers (no emulator type), so libhost,
 * a real-NIC transport and the pcap tools share it. Builders need a buffer
 * of at least LH_WIRE_MAX bytes and return the frame length. The
 * functions carry libhost's prefix (lh_wire_); the format's constants and
 * struct emu_canary_hdr keep the EMU_/emu_ names the switches and hw/ share.
 */
#ifndef LH_WIRE_H
#define LH_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


#define LH_WIRE_MAX 2048
#define EMU_ETH_HLEN 14
#define EMU_ETHERTYPE_IPV4 0x0800
#define EMU_ETHERTYPE_CANARY 0x88B5
#define EMU_DSCP_COLLECTIVE 46		/* IPv4 DSCP of collective (ring) frames: their traffic class */
#define EMU_DSCP_RECOVERY 48		/* IPv4 DSCP of a ring's recovery frames (NACK, resent data; CS6) */
#define EMU_IPV4_HLEN 20
#define EMU_UDP_HLEN 8
#define EMU_UDP_OFF (EMU_ETH_HLEN + EMU_IPV4_HLEN)
#define EMU_UDP_PAYLOAD_OFF (EMU_UDP_OFF + EMU_UDP_HLEN)
#define EMU_IPPROTO_UDP 17
/* the ring's frames: UDP to this port, a 16-byte header whose byte 14 is the run (below) */
#define EMU_RING_PORT 7400
#define EMU_RING_HDR 16
#define EMU_RING_RUN_OFF 14

#define EMU_CANARY_HLEN 19
#define EMU_CANARY_OFF EMU_ETH_HLEN
#define EMU_CANARY_DATA_OFF (EMU_ETH_HLEN + EMU_CANARY_HLEN)
#define EMU_CANARY_FLAGS_OFF (EMU_CANARY_OFF + 18)	/* the flags byte: bypass, multicast, run, opcode */
#define EMU_CANARY_MAX_ELEMENTS 256
#define EMU_CANARY_TENANT_BITS 8

#define EMU_CANARY_F_BYPASS 0x80
#define EMU_CANARY_F_MULTICAST 0x40
#define EMU_CANARY_OP_MASK 0x0f
/*
 * The run (epoch): which run of the emulator a frame belongs to, modulo
 * EMU_CANARY_RUNS, in bits 5..4 of the flags byte (the header keeps its
 * size). A host drops and counts a frame of another run; a switch's
 * descriptor holds one block of one run. Consecutive runs always differ.
 */
#define EMU_CANARY_RUN_SHIFT 4
#define EMU_CANARY_RUN_MASK 0x30
#define EMU_CANARY_RUNS 4

/* BCAST: bits of the children field */
#define EMU_CANARY_BCAST_NOSAMPLE 1u	/* keep the block's round trip out of the hosts' RTT estimate */
#define EMU_CANARY_BCAST_AGAIN 2u	/* also down the ports of switches a broadcast of this id passed */

enum emu_canary_op {
	EMU_CANARY_OP_REDUCE = 1,	/* host/switch -> leader: partial sum */
	EMU_CANARY_OP_BCAST = 2,	/* leader -> hosts, multicast along the tree */
	EMU_CANARY_OP_RESTORE = 3,	/* leader -> switch: multicast to a port bitmap */
	EMU_CANARY_OP_RETX_REQ = 4,	/* host -> leader: block missing; leader -> host: a poll (sent it?) */
	EMU_CANARY_OP_RETX_DATA = 5,	/* leader -> host: the reduced block, unicast */
	EMU_CANARY_OP_FAILURE = 6,	/* leader -> hosts: block failed, re-issue */
	EMU_CANARY_OP_FALLBACK = 7,	/* leader -> host: send your data (pulled); host -> leader: the data */
	EMU_CANARY_OP_DONE = 8,		/* completion barrier */
	EMU_CANARY_OP_TREE_REDUCE = 9,	/* static tree: child -> parent, tree in switch field */
	EMU_CANARY_OP_TREE_BCAST = 10,	/* static tree: root -> leaves */
	EMU_CANARY_OP_RECOVER = 11,	/* leader -> host: send your data of this attempt directly */
	EMU_CANARY_OP_MAX = 11,
};

/*
 * emu_canary_recovery - is a Canary frame with these flags part of the
 * recovery (a request, a resend, a failure, a fallback's or a sketch's
 * direct exchange, a poll), rather than the reduction and broadcast
 * themselves? These travel in the recovery traffic class (--priority).
 */
#define EMU_CANARY_RECOVERY_OPS                                                                   \
	(1ULL << EMU_CANARY_OP_RETX_REQ | 1ULL << EMU_CANARY_OP_RETX_DATA | 1ULL << EMU_CANARY_OP_FAILURE | \
	 1ULL << EMU_CANARY_OP_FALLBACK | 1ULL << EMU_CANARY_OP_RECOVER)

static inline bool emu_canary_recovery(uint8_t flags)
{
	return EMU_CANARY_RECOVERY_OPS >> (flags & EMU_CANARY_OP_MASK) & 1;
}

struct emu_canary_hdr {
	uint32_t dst;
	uint32_t id;
	uint16_t counter;
	uint16_t hosts;
	uint32_t children;
	uint16_t swaddr;
	uint8_t flags;		/* bypass, multicast, opcode (the run's bits are in run) */
	uint8_t run;		/* 0 .. EMU_CANARY_RUNS - 1 */
};

enum lh_wire_err {
	LH_WIRE_OK = 0,
	LH_WIRE_TRUNCATED,	/* shorter than its headers say */
	LH_WIRE_BAD_TYPE,	/* unknown EtherType / not UDP */
	LH_WIRE_BAD_OPCODE,	/* Canary opcode 0 or unknown */
	LH_WIRE_BAD_LENGTH,	/* Canary data not a whole number of int32 */
	LH_WIRE_BAD_COUNTER,	/* counter > hosts, or hosts == 0 */
	LH_WIRE_BAD_IPV4,	/* version/IHL/length wrong */
	LH_WIRE_NERR,
};

const char *lh_wire_strerror(enum lh_wire_err e);

/* network byte order loads and stores (unaligned-safe) */
static inline void emu_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline uint16_t emu_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline void emu_put32(uint8_t *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	__builtin_memcpy(p, &v, 4);
}
static inline uint32_t emu_get32(const uint8_t *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline uint16_t lh_wire_ethertype(const uint8_t *p, uint32_t len)
{
	return len >= EMU_ETH_HLEN ? emu_get16(p + 12) : 0;
}

/* lh_wire_eth - write the Ethernet header. */
void lh_wire_eth(uint8_t *p, const uint8_t dst[6], const uint8_t src[6], uint16_t type);

/*
 * lh_wire_udp - build Ethernet/IPv4/UDP with @payload_len bytes of payload
 * (left for the caller to fill at data + EMU_UDP_PAYLOAD_OFF). The IPv4
 * header checksum is computed; the UDP checksum is 0 (allowed over IPv4).
 */
uint32_t lh_wire_udp(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], uint32_t sip, uint32_t dip,
		      uint16_t sport, uint16_t dport, uint32_t payload_len);
/* lh_wire_udp_dscp - lh_wire_udp() with the IPv4 DSCP @dscp (as lh_wire_ipv4_dscp() after it) */
uint32_t lh_wire_udp_dscp(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6], uint32_t sip, uint32_t dip,
			   uint16_t sport, uint16_t dport, uint32_t payload_len, unsigned dscp);

/*
 * lh_wire_udp_tmpl - the headers lh_wire_udp() writes for frames of one
 * source, ports and payload length to changing destinations: set once
 * (lh_wire_udp_tmpl_init), then each frame copies them and writes its
 * destination MAC and address and the IPv4 checksum from @sum (the same
 * bytes as lh_wire_udp()).
 */
struct lh_wire_udp_tmpl {
	uint8_t hdr[EMU_UDP_PAYLOAD_OFF];
	uint32_t len;	/* the frame's length */
	uint32_t sum;	/* the IPv4 header's 16-bit words summed, without the destination address */
};

void lh_wire_udp_tmpl_init(struct lh_wire_udp_tmpl *t, const uint8_t smac[6], uint32_t sip, uint16_t sport,
			   uint16_t dport, uint32_t payload_len);

/* lh_wire_ip_csum - the IPv4 checksum from the sum of its 16-bit words (two folds: the sum of ten words < 2^20) */
static inline uint16_t lh_wire_ip_csum(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* lh_wire_udp_tmpl_put - lh_wire_udp() into @p from template @t toward @dmac, @dip; returns the frame's length */
static inline uint32_t lh_wire_udp_tmpl_put(uint8_t *p, const struct lh_wire_udp_tmpl *t, const uint8_t dmac[6],
					    uint32_t dip)
{
	__builtin_memcpy(p, t->hdr, EMU_UDP_PAYLOAD_OFF);
	__builtin_memcpy(p, dmac, 6);
	emu_put32(p + EMU_ETH_HLEN + 16, dip);
	emu_put16(p + EMU_ETH_HLEN + 10, lh_wire_ip_csum(t->sum + (dip >> 16) + (dip & 0xffff)));
	return t->len;
}

/* lh_wire_ipv4 - parse IPv4; fill source/destination. Inline: each router and receiver of a frame asks. */
static inline enum lh_wire_err lh_wire_ipv4(const uint8_t *p, uint32_t len, uint32_t *sip, uint32_t *dip)
{
	const uint8_t *ip = p + EMU_ETH_HLEN;

	if (len < EMU_ETH_HLEN + EMU_IPV4_HLEN)
		return LH_WIRE_TRUNCATED;
	if (lh_wire_ethertype(p, len) != EMU_ETHERTYPE_IPV4)
		return LH_WIRE_BAD_TYPE;
	if (ip[0] != 0x45)
		return LH_WIRE_BAD_IPV4;
	uint32_t iplen = emu_get16(ip + 2);

	if (iplen < EMU_IPV4_HLEN || EMU_ETH_HLEN + iplen > len)
		return LH_WIRE_TRUNCATED;
	*sip = emu_get32(ip + 12);
	*dip = emu_get32(ip + 16);
	return LH_WIRE_OK;
}

/* lh_wire_ipv4_dscp - set the DSCP of the IPv4 header after Ethernet (checksum updated). */
void lh_wire_ipv4_dscp(uint8_t *p, unsigned dscp);
/* lh_wire_udp_dport - UDP destination port of an IPv4/UDP frame, or -1. Inline: asked of each IPv4 frame. */
static inline int lh_wire_udp_dport(const uint8_t *p, uint32_t len)
{
	uint32_t sip, dip;

	if (lh_wire_ipv4(p, len, &sip, &dip) != LH_WIRE_OK || len < EMU_UDP_PAYLOAD_OFF ||
	    p[EMU_ETH_HLEN + 9] != EMU_IPPROTO_UDP)
		return -1;
	return emu_get16(p + EMU_UDP_OFF + 2);
}

/*
 * lh_wire_canary_build - Ethernet + Canary header + @nelem elements from
 * @data (host order; NULL: zeros).
 */
uint32_t lh_wire_canary_build(uint8_t *p, const uint8_t dmac[6], const uint8_t smac[6],
			       const struct emu_canary_hdr *h, const int32_t *data, unsigned nelem);

/*
 * lh_wire_canary_parse - validate and decode the Canary header; @nelem gets
 * the element count. Checks length, opcode, counter <= hosts.
 */
enum lh_wire_err lh_wire_canary_parse(const uint8_t *p, uint32_t len, struct emu_canary_hdr *h, unsigned *nelem);

/* lh_wire_canary_write_hdr - rewrite the header of a Canary frame in place. */
void lh_wire_canary_write_hdr(uint8_t *p, const struct emu_canary_hdr *h);

/* lh_wire_elem - element @i of the Canary frame at @p, in host order */
static inline int32_t lh_wire_elem(const uint8_t *p, unsigned i)
{
	return (int32_t)emu_get32(p + EMU_CANARY_DATA_OFF + 4 * i);
}

/*
 * Element vectors on the wire (big-endian int32) and in host order; the
 * buffers must not overlap. Built for AVX2 too where the compiler can
 * (picked at load time), since a frame carries up to 256 elements.
 */
/*
 * EMU_ELEM_CLONES - on a loop over elements: an AVX2 clone where GCC can
 * make one, picked at load time. The ifunc resolver that picks it runs
 * before ThreadSanitizer is set up (a crash), so not under sanitizers.
 */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && \
	!defined(__SANITIZE_ADDRESS__)
#define EMU_ELEM_CLONES __attribute__((target_clones("default", "avx2")))
#else
#define EMU_ELEM_CLONES
#endif

/* lh_wire_put_elems - @n elements of @src to the wire at @d */
void lh_wire_put_elems(uint8_t *restrict d, const int32_t *restrict src, size_t n);
/* lh_wire_get_elems - @n elements from the wire at @p into @dst */
void lh_wire_get_elems(int32_t *restrict dst, const uint8_t *restrict p, size_t n);
/* lh_wire_add_elems - @acc[i] += element i at @p (wrapping int32 sum) */
void lh_wire_add_elems(int32_t *restrict acc, const uint8_t *restrict p, size_t n);
/*
 * lh_wire_elems_differ - do the @n elements (32-bit words) at @a and @b
 * differ anywhere? Exact: the or of every pair's xor, not a digest.
 */
bool lh_wire_elems_differ(const uint8_t *a, const uint8_t *b, size_t n);


/*
 * lh_wire_dst - the IPv4 address a frame is routed to (IPv4 destination or
 * Canary destination) and a flow hash for multipath. Return LH_WIRE_OK or
 * why the frame cannot be routed.
 */
enum lh_wire_err lh_wire_dst(const uint8_t *p, uint32_t len, uint32_t *dip, uint64_t *hash);

/*
 * lh_wire_flow_hash - lh_wire_dst()'s flow hash of an IPv4 frame to @dip
 * from @sip whose UDP ports are @ports (source port << 16 | destination
 * port, as they are on the wire; 0 for a frame too short for them)
 */
static inline uint64_t lh_wire_flow_hash(uint32_t dip, uint32_t sip, uint32_t ports)
{
	return (uint64_t)dip << 32 ^ sip ^ (uint64_t)ports << 7;
}

#endif /* LH_WIRE_H */
