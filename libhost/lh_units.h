/* SPDX-License-Identifier: MIT */
/*
 * DOC: lh_units.h - parse quantities with units: times (ps ns us ms s, to
 * picoseconds), rates (bps Kbps Mbps Gbps Tbps, or K M G T), sizes (B KiB
 * MiB GiB, K M G = powers of 1024, KB MB GB = powers of 1000; a bare
 * number is bytes), probabilities ("0.01" or "1%"), plain non-negative
 * integers.
 *
 * Every parser takes the whole string: trailing garbage is an error, and
 * so are leading white space, signs, hexadecimal, "inf" and "nan". A time
 * or a rate needs its unit ("100" is refused: 100 what?). Return
 * 0, or -EINVAL. Programs on the library (canary-allreduce) and the
 * emulator (emu/units.h) read their options with these; libc only.
 */
#ifndef LH_UNITS_H
#define LH_UNITS_H

#include <stdint.h>

/*
 * The link rates lh_parse_rate accepts: 1 Mb/s to 100 Tb/s, the range the
 * emulator's model represents (EMU_RATE_RANGE, emu/engine/time.h: above
 * ~670 Tb/s the smallest frame would take less than its 1 ps).
 */
#define LH_RATE_MIN_BPS 1000000ULL
#define LH_RATE_MAX_BPS 100000000000000ULL
#define LH_RATE_RANGE "1Mbps..100Tbps"

int lh_parse_time(const char *s, uint64_t *ps);
/* lh_parse_rate - refuses a rate without its unit or outside LH_RATE_RANGE */
int lh_parse_rate(const char *s, uint64_t *bps);
int lh_parse_size(const char *s, uint64_t *bytes);
int lh_parse_prob(const char *s, double *p);
int lh_parse_u64(const char *s, uint64_t *v);
/*
 * lh_parse_epoch - a wall-clock instant: seconds since the Unix epoch
 * (CLOCK_REALTIME), with up to 9 decimals ("1764230000", "1764230000.25",
 * what `date +%s.%N` prints), to nanoseconds
 */
int lh_parse_epoch(const char *s, uint64_t *ns);

#endif /* LH_UNITS_H */
