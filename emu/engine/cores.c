// SPDX-License-Identifier: MIT
/*
 * DOC: cores.c - the free cores: CPU affinity less the runnable tasks of
 * other processes (cores.h says how they are counted).
 */
#include "emu/engine/cores.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define SAMPLES 3
#define SAMPLE_GAP_NS 1000000L

unsigned emu_cores_pick(unsigned allowed, unsigned online, unsigned others)
{
	unsigned n = online > others ? online - others : 0;

	if (allowed && allowed < n)
		n = allowed;
	return n ? n : 1;
}

int emu_cores_parse_loadavg(const char *text, unsigned *running)
{
	double l1, l5, l15;
	unsigned r, total;

	if (sscanf(text, "%lf %lf %lf %u/%u", &l1, &l5, &l15, &r, &total) != 5)
		return -EINVAL;
	*running = r;
	return 0;
}

/* runnable tasks now, the reader included; 0 if unknown */
static unsigned runnable(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	char buf[128];
	unsigned r = 0;

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f) || emu_cores_parse_loadavg(buf, &r))
		r = 0;
	fclose(f);
	return r;
}

unsigned emu_cores_free(void)
{
	cpu_set_t cs;
	unsigned allowed = sched_getaffinity(0, sizeof(cs), &cs) == 0 ? (unsigned)CPU_COUNT(&cs) : 0;
	long onl = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned online = onl > 0 ? (unsigned)onl : (allowed ? allowed : 1);
	unsigned least = ~0u;

	for (int i = 0; i < SAMPLES; i++) {
		unsigned r = runnable();

		if (!r)
			return emu_cores_pick(allowed, online, 0);
		if (r < least)
			least = r;
		if (i + 1 < SAMPLES)
			nanosleep(&(struct timespec){ .tv_nsec = SAMPLE_GAP_NS }, NULL);
	}
	/* the reader is one of the runnable tasks */
	return emu_cores_pick(allowed, online, least - 1);
}
