// SPDX-License-Identifier: MIT
/*
 * DOC: the default worker count: the free cores are the allowed ones less
 * the runnable tasks of others, at least one; /proc/loadavg's runnable
 * field is read, and a bad line is refused; with a busy thread on every
 * core, one core is free.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "emu/engine/cores.h"
#include "tap.h"

static _Atomic int stop;

static void *busy(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		;
	return NULL;
}

int main(void)
{
	unsigned r = 0;
	cpu_set_t cs;
	unsigned allowed = sched_getaffinity(0, sizeof(cs), &cs) == 0 ? (unsigned)CPU_COUNT(&cs) : 1;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nbusy = online > 0 ? (unsigned)online : 1;
	pthread_t th[256];

	plan(14);
	is_u64(emu_cores_pick(2, 2, 0), 2, "quiet 2-core machine: 2");
	is_u64(emu_cores_pick(2, 2, 1), 1, "one busy task: 1");
	is_u64(emu_cores_pick(2, 2, 4), 1, "four busy tasks on 2 cores: still 1");
	is_u64(emu_cores_pick(64, 64, 10), 54, "64 cores, 10 busy: 54");
	is_u64(emu_cores_pick(8, 64, 10), 8, "an affinity of 8 on a 64-core machine with 10 busy: 8");
	is_u64(emu_cores_pick(8, 16, 12), 4, "an affinity of 8 on a 16-core machine with 12 busy: 4");
	is_u64(emu_cores_pick(0, 4, 1), 3, "affinity unknown: the machine's cores less the busy");

	ok(emu_cores_parse_loadavg("0.50 0.40 0.30 3/120 4567\n", &r) == 0 && r == 3, "loadavg: 3 runnable");
	ok(emu_cores_parse_loadavg("13.11 8.95 4.10 17/812 20431", &r) == 0 && r == 17, "loadavg: 17 runnable");
	is_int(emu_cores_parse_loadavg("0.50 0.40 0.30", &r), -EINVAL, "loadavg without the runnable field: -EINVAL");
	is_int(emu_cores_parse_loadavg("", &r), -EINVAL, "empty loadavg: -EINVAL");

	r = emu_cores_free();
	ok(r >= 1 && r <= allowed, "free cores now: %u, between 1 and the %u allowed", r, allowed);

	/* a runnable thread on every core: nothing is free but the one we always take */
	if (nbusy > 256)
		nbusy = 256;
	for (unsigned i = 0; i < nbusy; i++)
		pthread_create(&th[i], NULL, busy, NULL);
	nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	r = emu_cores_free();
	atomic_store(&stop, 1);
	for (unsigned i = 0; i < nbusy; i++)
		pthread_join(th[i], NULL);
	is_u64(r, 1, "with %u busy threads on %ld cores: 1 free", nbusy, online);
	r = emu_cores_free();
	ok(r >= 1 && r <= allowed, "and after they stopped: %u (1..%u)", r, allowed);
	return done_testing();
}
