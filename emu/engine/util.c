// SPDX-License-Identifier: MIT
/*
 * DOC: util.c - die, allocation, clocks. See util.h.
 */
#include "emu/engine/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

void emu_die_at(const char *file, const char *func, int line, int err)
{
	fprintf(stderr, "canary-emu: fatal: %s:%s@%d: %s\n", file, func, line,
		strerror(err < 0 ? -err : err));
	abort();
}

void *emu_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		emu_die(ENOMEM);
	return p;
}

void *emu_xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		emu_die(ENOMEM);
	return p;
}

void *emu_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		emu_die(ENOMEM);
	return q;
}

void *emu_xaligned(size_t n)
{
	void *p = NULL;

	n = (n + EMU_CACHELINE - 1) & ~(size_t)(EMU_CACHELINE - 1);
	if (posix_memalign(&p, EMU_CACHELINE, n ? n : EMU_CACHELINE))
		emu_die(ENOMEM);
	memset(p, 0, n);
	return p;
}

uint64_t emu_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t emu_peak_rss(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)ru.ru_maxrss * 1024;
}
