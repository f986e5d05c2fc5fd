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
#include <unistd.h>

void emu_die_at(const char *file, const char *func, int line, int err)
{
	fprintf(stderr, "canary-emu: fatal: %s:%s@%d: %s\n", file, func, line,
		strerror(err < 0 ? -err : err));
	abort();
}

static _Atomic uint64_t mem_estimate;

void emu_mem_estimate_set(uint64_t bytes)
{
	mem_estimate = bytes;
}

void emu_out_of_memory(size_t n)
{
	char line[400];
	unsigned long long peak = emu_peak_rss() >> 20, est = mem_estimate >> 20;
	/* far past what the run's size needs: it grew while the run went on, which --size does not explain */
	int len = est && peak > 2 * est + 256
			  ? snprintf(line, sizeof(line),
				     "canary-emu: out of memory (allocating %zu bytes, peak RSS %llu MiB, about %llu MiB "
				     "estimated for the run): memory grew while the run went on (frames or "
				     "retransmissions queued faster than they drained); --stall or --time-limit end "
				     "such a run sooner\n", n, peak, est)
			  : snprintf(line, sizeof(line),
				     "canary-emu: out of memory (allocating %zu bytes, peak RSS %llu MiB): the run does "
				     "not fit this machine's memory; reduce --size, --hosts, --concurrent or the "
				     "fabric\n", n, peak);

	if (len > 0) {
		ssize_t w = write(2, line, (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);

		(void)w;	/* nothing else to tell */
	}
	/* the rows of the runs that finished, unless another thread holds stdout */
	if (ftrylockfile(stdout) == 0) {
		fflush(stdout);
		funlockfile(stdout);
	}
	_exit(2);
}

void *emu_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		emu_out_of_memory(n);
	return p;
}

void *emu_xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		emu_out_of_memory(nmemb && size > SIZE_MAX / nmemb ? SIZE_MAX : nmemb * size);
	return p;
}

void *emu_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		emu_out_of_memory(n);
	return q;
}

void *emu_xaligned(size_t n)
{
	void *p = NULL;

	n = (n + EMU_CACHELINE - 1) & ~(size_t)(EMU_CACHELINE - 1);
	if (posix_memalign(&p, EMU_CACHELINE, n ? n : EMU_CACHELINE))
		emu_out_of_memory(n);
	memset(p, 0, n);
	return p;
}

/* a "Key: N kB" line of @path, in bytes; 0 if absent */
static uint64_t kb_field(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	char buf[256];
	size_t klen = strlen(key);
	uint64_t v = 0;

	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, key, klen) && buf[klen] == ':') {
			v = strtoull(buf + klen + 1, NULL, 10) * 1024;
			break;
		}
	fclose(f);
	return v;
}

uint64_t emu_mem_available(const char **what)
{
	uint64_t avail = kb_field("/proc/meminfo", "MemAvailable");
	const char *w = "MemAvailable";
	struct rlimit rl;

	if (!avail) {
		avail = UINT64_MAX;
		w = "unknown";
	}
	if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY) {
		uint64_t vm = kb_field("/proc/self/status", "VmSize");
		uint64_t left = rl.rlim_cur > vm ? rl.rlim_cur - vm : 0;

		if (left < avail) {
			avail = left;
			w = "ulimit -v";
		}
	}
	if (what)
		*what = w;
	return avail;
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
