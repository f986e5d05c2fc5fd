/* SPDX-License-Identifier: MIT */
/*
 * DOC: rng.h - per-node random streams.
 *
 * xoshiro256** seeded through splitmix64 from (run seed, stream id). Every
 * node owns one stream, so what a node draws never depends on which worker
 * runs it or on what other nodes do: the basis of deterministic runs.
 */
#ifndef EMU_RNG_H
#define EMU_RNG_H

#include <stdint.h>

struct emu_rng {
	uint64_t s[4];
};

static inline uint64_t emu_rng_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* emu_rng_init - seed stream @stream of run @seed. Cannot fail. */
static inline void emu_rng_init(struct emu_rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed * 0xd1342543de82ef95ULL + stream * 0x9e3779b97f4a7c15ULL + 1;

	for (int i = 0; i < 4; i++)
		r->s[i] = emu_rng_splitmix(&x);
}

static inline uint64_t emu_rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* emu_rng_next - 64 uniformly random bits. */
static inline uint64_t emu_rng_next(struct emu_rng *r)
{
	uint64_t *s = r->s;
	uint64_t res = emu_rng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = emu_rng_rotl(s[3], 45);
	return res;
}

/* emu_rng_below - uniform integer in [0, n) (n > 0), without modulo bias
 * worth caring about (Lemire's multiply-shift). */
static inline uint64_t emu_rng_below(struct emu_rng *r, uint64_t n)
{
	return (uint64_t)(((__uint128_t)emu_rng_next(r) * n) >> 64);
}

/* emu_rng_double - uniform in [0, 1). */
static inline double emu_rng_double(struct emu_rng *r)
{
	return (double)(emu_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

#endif /* EMU_RNG_H */
