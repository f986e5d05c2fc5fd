/* SPDX-License-Identifier: MIT */
/*
 * DOC: time.h - virtual time.
 *
 * Virtual time is an unsigned 64-bit count of picoseconds: 100 Gb/s is
 * exactly 80 ps per byte, and 2^64 ps is about 213 days of emulated time.
 * EMU_TIME_INF marks "never".
 */
#ifndef EMU_TIME_H
#define EMU_TIME_H

#include <stdint.h>

typedef uint64_t emu_time_t;

#define EMU_TIME_INF UINT64_MAX
#define EMU_PS ((emu_time_t)1)
#define EMU_NS ((emu_time_t)1000)
#define EMU_US ((emu_time_t)1000000)
#define EMU_MS ((emu_time_t)1000000000)
#define EMU_S ((emu_time_t)1000000000000)

/* Framing overhead on the wire per frame: preamble+SFD 8, FCS 4, IFG 12. */
#define EMU_WIRE_OVERHEAD 24
/* The shortest Ethernet frame without its FCS: a shorter one is padded to it on the wire. */
#define EMU_ETH_MIN 60

/* emu_wire_bytes - what a frame of @bytes (without FCS) occupies on the wire, padding and overhead included */
static inline uint32_t emu_wire_bytes(uint32_t bytes)
{
	return (bytes < EMU_ETH_MIN ? EMU_ETH_MIN : bytes) + EMU_WIRE_OVERHEAD;
}

/*
 * The link rates the model represents: from 1 Mb/s (a 2 KiB frame takes
 * 16 ms) to 100 Tb/s (the smallest frame still takes 6 ps; above ~670 Tb/s
 * it would take less than the model's 1 ps, and times computed per frame
 * round to 0). emu_parse_rate and the fabric refuse the others.
 */
#define EMU_RATE_MIN_BPS 1000000ULL
#define EMU_RATE_MAX_BPS 100000000000000ULL
#define EMU_RATE_RANGE "1Mbps..100Tbps"

/*
 * emu_tx_time - serialization time of a frame of @bytes (without FCS and
 * framing overhead; padded to the 60-byte minimum) on a link of @rate_bps
 * bits per second. Exact for any rate that divides 8e12 bits; rounded up
 * otherwise.
 */
static inline emu_time_t emu_tx_time(uint32_t bytes, uint64_t rate_bps)
{
	__uint128_t bits_ps = (__uint128_t)emu_wire_bytes(bytes) * 8 * EMU_S;

	return (emu_time_t)((bits_ps + rate_bps - 1) / rate_bps);
}

#endif /* EMU_TIME_H */
