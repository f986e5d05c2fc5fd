/* SPDX-License-Identifier: MIT */
/*
 * DOC: rng.h - per-node random streams: the emulator's names for libhost's
 * streams (libhost/lh_rng.h), which canary-allreduce shares to draw the
 * same inputs. Every node owns one stream, so what a node draws never
 * depends on which worker runs it or on what other nodes do: the basis of
 * deterministic runs.
 */
#ifndef EMU_RNG_H
#define EMU_RNG_H

#include <stdint.h>

#include "libhost/lh_rng.h"

struct emu_rng {
	struct lh_rng lh;
};

/* emu_rng_init - seed stream @stream of run @seed. Cannot fail. */
static inline void emu_rng_init(struct emu_rng *r, uint64_t seed, uint64_t stream)
{
	lh_rng_init(&r->lh, seed, stream);
}

/* emu_rng_next - 64 uniformly random bits. */
static inline uint64_t emu_rng_next(struct emu_rng *r)
{
	return lh_rng_next(&r->lh);
}

/* emu_rng_below - uniform integer in [0, n) (n > 0) */
static inline uint64_t emu_rng_below(struct emu_rng *r, uint64_t n)
{
	return lh_rng_below(&r->lh, n);
}

/* emu_rng_double - uniform in [0, 1). */
static inline double emu_rng_double(struct emu_rng *r)
{
	return lh_rng_double(&r->lh);
}

#endif /* EMU_RNG_H */
