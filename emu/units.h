/* SPDX-License-Identifier: MIT */
/*
 * DOC: units.h - parse and print quantities with units: times (ps ns us ms
 * s), rates (bps Kbps Mbps Gbps Tbps, or K M G T), sizes (B KiB MiB GiB,
 * K M G = powers of 1024; a bare number is bytes), probabilities ("0.01" or
 * "1%").
 *
 * Every parser takes the whole string: trailing garbage is an error. A
 * time or a rate needs its unit ("100" is refused: 100 what?); a rate lies
 * in the model's range (EMU_RATE_RANGE, engine/time.h). Return 0, or
 * -EINVAL. The parsers are libhost's (libhost/lh_units.h),
 * which canary-allreduce shares; the emulator calls them by these names.
 */
#ifndef EMU_UNITS_H
#define EMU_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "emu/engine/time.h"
#include "libhost/lh_units.h"

_Static_assert(EMU_RATE_MIN_BPS == LH_RATE_MIN_BPS && EMU_RATE_MAX_BPS == LH_RATE_MAX_BPS,
	       "emu_parse_rate (lh_parse_rate) accepts the rates the model represents");

static inline int emu_parse_time(const char *s, emu_time_t *out) { return lh_parse_time(s, out); }
static inline int emu_parse_rate(const char *s, uint64_t *bps) { return lh_parse_rate(s, bps); }
static inline int emu_parse_size(const char *s, uint64_t *bytes) { return lh_parse_size(s, bytes); }
static inline int emu_parse_prob(const char *s, double *p) { return lh_parse_prob(s, p); }
static inline int emu_parse_u64(const char *s, uint64_t *v) { return lh_parse_u64(s, v); }

/* emu_fmt_time - "1.234 us" style, into @buf of @len bytes. */
const char *emu_fmt_time(emu_time_t t, char *buf, size_t len);
/* emu_fmt_size - "4 MiB" / "1.5 KiB" style. */
const char *emu_fmt_size(uint64_t bytes, char *buf, size_t len);

#endif /* EMU_UNITS_H */
