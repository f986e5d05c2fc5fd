/* SPDX-License-Identifier: MIT */
/*
 * DOC: lh_units.h - parse quantities with units: times (ps ns us ms s, to
 * picoseconds), rates (bps Kbps Mbps Gbps Tbps, or bare K M G T), sizes
 * (B KiB MiB GiB, K M G = powers of 1024, KB MB GB = powers of 1000),
 * probabilities ("0.01" or "1%"), plain non-negative integers.
 *
 * Every parser takes the whole string: trailing garbage is an error, and
 * so are leading white space, signs, hexadecimal, "inf" and "nan". Return
 * 0, or -EINVAL. Programs on the library (canary-allreduce) and the
 * emulator (emu/units.h) read their options with these; libc only.
 */
#ifndef LH_UNITS_H
#define LH_UNITS_H

#include <stdint.h>

int lh_parse_time(const char *s, uint64_t *ps);
int lh_parse_rate(const char *s, uint64_t *bps);
int lh_parse_size(const char *s, uint64_t *bytes);
int lh_parse_prob(const char *s, double *p);
int lh_parse_u64(const char *s, uint64_t *v);

#endif /* LH_UNITS_H */
