/* SPDX-License-Identifier: MIT */
/*
 * DOC: lh_rng.h - seeded random streams.
 *
 * xoshiro256** seeded through splitmix64 from (run seed, stream id). The
 * emulator gives every node one stream (emu/engine/rng.h wraps this one),
 * so what a node draws never depends on which worker runs it or on what
 * other nodes do: the basis of deterministic runs. canary-allreduce draws
 * the emulator's inputs from the same stream, so both add up to one sum.
 */
#ifndef LH_RNG_H
#define LH_RNG_H

#include <stdint.h>

struct lh_rng {
	uint64_t s[4];
};

static inline uint64_t lh_rng_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* lh_rng_init - seed stream @stream of run @seed. Cannot fail. */
static inline void lh_rng_init(struct lh_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed * 0xd1342543de82ef95ULL + stream * 0x9e3779b97f4a7c15ULL + 1;

	for (int i = 0; i < 4; i++)
		r->s[i] = lh_rng_splitmix(&x);
}

static inline uint64_t lh_rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* lh_rng_next - 64 uniformly random bits. */
static inline uint64_t lh_rng_next(struct lh_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = lh_rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = lh_rng_rotl(s[3], 45);
	return res;
}

/* lh_rng_below - uniform integer in [0, n) (n > 0), without modulo bias
 * worth caring about (Lemire's multiply-shift). */
static inline uint64_t lh_rng_below(struct lh_rng *r, uint64_t n)
{
	return (uint64_t)(((__uint128_t)lh_rng_next(r) * n) >> 64);
}

/* lh_rng_double - uniform in [0, 1). */
static inline double lh_rng_double(struct lh_rng *r)
{
	return (double)(lh_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

#endif /* LH_RNG_H */
