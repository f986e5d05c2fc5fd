/* SPDX-License-Identifier: MIT */
/*
 * DOC: lh_util.h - libhost's own small helpers, so that the library stands
 * alone (it links with nothing but libc): allocation that cannot fail and
 * a 64-bit mixer.
 *
 * libhost has no error path for memory: a host without memory for its
 * request state cannot take part in the allreduce, and the peers would
 * wait for it forever. The allocators print one line to stderr and abort,
 * or call the handler set with lh_set_out_of_memory() (the emulator's
 * prints what to reduce and exits).
 */
#ifndef LH_UTIL_H
#define LH_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* lh_xmalloc - malloc(@n) (at least one byte); aborts on failure, never returns NULL. */
void *lh_xmalloc(size_t n);
/* lh_xcalloc - zeroed array of @nmemb x @size; aborts on failure or overflow. */
void *lh_xcalloc(size_t nmemb, size_t size);
/* lh_xrealloc - resize @p to @n bytes; aborts on failure. */
void *lh_xrealloc(void *p, size_t n);
/*
 * lh_xzalloc_lines - @n zeroed bytes starting on a 64-byte cache line (for
 * a struct laid out by the lines its per-frame steps read); free() frees
 * it; aborts on failure.
 */
void *lh_xzalloc_lines(size_t n);

/*
 * lh_hash64 - the splitmix64 finaliser. Background peers are drawn with it,
 * so it must stay this function: the emulator's regression digests depend
 * on the order it gives.
 */
static inline uint64_t lh_hash64(uint64_t x)
{
	x = (x ^ x >> 30) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ x >> 27) * 0x94d049bb133111ebULL;
	return x ^ x >> 31;
}

/*
 * lh_ln - the natural logarithm of @x > 0, to about 1e-15, without libm
 * (the library needs nothing but libc): @x = m * 2^e with m in [1, 2), and
 * ln m = 2 atanh((m - 1) / (m + 1)) by its series.
 */
static inline double lh_ln(double x)
{
	union { double d; uint64_t u; } v = { .d = x };
	int e = (int)((v.u >> 52) & 0x7ff) - 1023;

	v.u = (v.u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
	double z = (v.d - 1) / (v.d + 1), z2 = z * z, t = z, s = 0;

	for (int k = 1; k < 60; k += 2) {
		s += t / k;
		t *= z2;
	}
	return 2 * s + e * 0.69314718055994530942;
}

/*
 * struct lh_theap - timers in a binary heap on (at, seq): the earliest
 * first, and timers armed for the same time in the order they were armed.
 * Zero-initialised it is empty. A transport that keeps its own timers (a
 * real interface's, a host that may be down) uses it.
 */
struct lh_tmr {
	uint64_t at;
	uint64_t seq;
	uint64_t cookie;
};

struct lh_theap {
	struct lh_tmr *v;	/* v[0] is the earliest when n > 0 */
	size_t n, cap;
	uint64_t seq;
};

/* lh_theap_push - arm a timer at @at carrying @cookie */
void lh_theap_push(struct lh_theap *h, uint64_t at, uint64_t cookie);
/* lh_theap_pop - take the earliest timer; @h must not be empty */
struct lh_tmr lh_theap_pop(struct lh_theap *h);
/* lh_theap_free - release the heap's array; it is empty again */
void lh_theap_free(struct lh_theap *h);

#endif /* LH_UTIL_H */
