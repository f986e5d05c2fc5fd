/* SPDX-License-Identifier: MIT */
/*
 * DOC: util.h - what every emu/ module needs: die on broken invariants,
 * allocation that cannot fail, cache-line alignment, branch hints.
 *
 * A failed pthread call or a corrupt structure is a bug, not an error to
 * return: emu_die() prints file, function and line and aborts (liburcu's
 * urcu_die). Allocation failure is not a bug but a run too large for the
 * machine: emu_out_of_memory() says so in one line and exits with status 2
 * (no abort, no core); scenarios are checked against the memory available
 * before they allocate (emu_mem_available()).
 */
#ifndef EMU_UTIL_H
#define EMU_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define EMU_CACHELINE 64
#define emu_likely(x) __builtin_expect(!!(x), 1)
#define emu_unlikely(x) __builtin_expect(!!(x), 0)
#define EMU_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * emu_popcount64 - bits set in @x. Without a popcount instruction in the
 * target (-mpopcnt), __builtin_popcountll() is a call into libgcc; this is
 * a dozen inline instructions instead.
 */
static inline unsigned emu_popcount64(uint64_t x)
{
#ifdef __POPCNT__
	return (unsigned)__builtin_popcountll(x);
#else
	x -= (x >> 1) & 0x5555555555555555ULL;
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (unsigned)((x * 0x0101010101010101ULL) >> 56);
#endif
}

/*
 * emu_mask_count, emu_nth_bit - the bits set in @mask (not 0), and the
 * @k-th of them (from 0, @k below their count). A switch's ports toward a
 * destination are most often one run of contiguous bits (its up ports):
 * counted and indexed at once, else bit by bit.
 */
static inline unsigned emu_mask_count(uint64_t mask)
{
	uint64_t m = mask >> __builtin_ctzll(mask);

	return m & (m + 1) ? emu_popcount64(mask) : 64 - (unsigned)__builtin_clzll(m);
}

static inline unsigned emu_nth_bit(uint64_t mask, unsigned k)
{
	unsigned lo = (unsigned)__builtin_ctzll(mask);
	uint64_t m = mask >> lo;

	if (!(m & (m + 1)))
		return lo + k;
	while (k--)
		mask &= mask - 1;
	return (unsigned)__builtin_ctzll(mask);
}

/* emu_cpu_relax - hint to the core that we are spinning. */
static inline void emu_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

#define emu_die(err) emu_die_at(__FILE__, __func__, __LINE__, (err))
_Noreturn void emu_die_at(const char *file, const char *func, int line, int err);

/*
 * emu_out_of_memory - an allocation of @n bytes failed: one line on stderr
 * (the size, the peak RSS, what to reduce), what the report printed so far
 * flushed if no other thread is writing it, then _exit(2). Also libhost's
 * handler (lh_set_out_of_memory). Never returns.
 */
_Noreturn void emu_out_of_memory(size_t n);
/* emu_mem_estimate_set - what the run is expected to need (0: unknown), for emu_out_of_memory()'s message */
void emu_mem_estimate_set(uint64_t bytes);
/* emu_xmalloc - malloc; emu_out_of_memory() on failure. Never returns NULL. */
void *emu_xmalloc(size_t n);
/* emu_xcalloc - zeroed; emu_out_of_memory() on failure or overflow. */
void *emu_xcalloc(size_t nmemb, size_t size);
/* emu_xrealloc - realloc; emu_out_of_memory() on failure. */
void *emu_xrealloc(void *p, size_t n);

/*
 * emu_mem_available - the bytes this process can still allocate: the
 * smaller of MemAvailable (/proc/meminfo) and what the address-space limit
 * (RLIMIT_AS, ulimit -v) leaves above the current size; UINT64_MAX if
 * neither is known. *@what (if not NULL) names the one that bounds it:
 * "MemAvailable", "ulimit -v" or "unknown".
 */
uint64_t emu_mem_available(const char **what);
/* emu_xaligned - zeroed memory aligned to a cache line; free with free(). */
void *emu_xaligned(size_t n);

/* emu_wall_ns - CLOCK_MONOTONIC in nanoseconds. */
uint64_t emu_wall_ns(void);
/* emu_peak_rss - peak resident set size of the process, in bytes. */
uint64_t emu_peak_rss(void);

/* emu_hash64 - a fast 64-bit mixer (splitmix64 finaliser). */
static inline uint64_t emu_hash64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

#endif /* EMU_UTIL_H */
