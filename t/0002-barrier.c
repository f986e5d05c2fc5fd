// SPDX-License-Identifier: MIT
/*
 * DOC: the window barrier: N threads x K rounds; the serial section runs
 * exactly once per round, in the last thread to arrive, its writes are
 * visible to every thread after the barrier, and no thread leaves a round
 * before every thread arrived in it. Run with more threads than cores to
 * exercise the futex path, and with one thread that sleeps before it
 * arrives (a partner that lost its core): the others must stop spinning
 * and sleep too, and the spin budget must fall and grow back.
 */
#include <pthread.h>
#include <time.h>

#include "emu/engine/barrier.h"
#include "tap.h"

#define ROUNDS 2000
#define SLEEPY_ROUNDS 20
#define SLEEPY_NS 4000000L	/* thread 0 naps this long before each arrival */

static struct emu_barrier bar;
static uint64_t serial_count;
static uint64_t round_value;
static unsigned nthreads;
static uint64_t rounds;
static _Atomic uint64_t mismatches;
static _Atomic uint64_t serial_seen;
static _Atomic uint64_t arrived;
static _Atomic uint64_t early;
static int sleepy;
static _Atomic uint64_t waiter_cpu_ns;
static uint32_t max_budget, min_budget;	/* the spin budget's extremes a waiter (thread 1) saw after a round */

static void serial(void *arg)
{
	(void)arg;
	serial_count++;
	round_value = serial_count * 3;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* arrive once: every thread counts itself in, and after the barrier all n must be in */
static int arrive(unsigned id, uint64_t phase, void (*fn)(void *))
{
	int r;

	if (sleepy && id == 0)
		nanosleep(&(struct timespec){ .tv_nsec = SLEEPY_NS }, NULL);
	arrived++;
	r = emu_barrier_wait(&bar, fn, NULL);
	if (arrived < phase * nthreads)
		early++;
	return r;
}

static void *worker(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	uint64_t c0 = cpu_ns();

	for (uint64_t r = 1; r <= rounds; r++) {
		if (arrive(id, 2 * r - 1, serial))
			serial_seen++;
		if (round_value != r * 3)
			mismatches++;
		arrive(id, 2 * r, NULL);
		if (id == 1) {
			uint32_t b = atomic_load(&bar.spin_ns);

			max_budget = b > max_budget ? b : max_budget;
			min_budget = b < min_budget ? b : min_budget;
		}
	}
	if (id != 0)
		waiter_cpu_ns += cpu_ns() - c0;
	return NULL;
}

/* k rounds of n threads on the barrier as it is */
static void go(unsigned n, uint64_t k)
{
	pthread_t th[16];

	serial_count = round_value = 0;
	mismatches = serial_seen = arrived = early = waiter_cpu_ns = 0;
	max_budget = 0;
	min_budget = UINT32_MAX;
	nthreads = n;
	rounds = k;
	for (unsigned i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i);
	for (unsigned i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	is_u64(serial_count, k, "%u threads (spin %u%s): serial section ran once per round", n, bar.spin,
	       sleepy ? ", one sleepy" : "");
	is_u64(serial_seen, k, "%u threads: exactly one thread per round was told it was serial", n);
	is_u64(mismatches, 0, "%u threads: every thread saw the serial write", n);
	is_u64(early, 0, "%u threads: nobody left a phase before all %u arrived", n, n);
}

static void run(unsigned n, unsigned spin, uint64_t k)
{
	emu_barrier_init(&bar, n, spin);
	go(n, k);
}

int main(void)
{
	plan(4 * 5 + 4);
	run(2, 100000, ROUNDS);
	run(8, 0, ROUNDS);
	run(16, 1000, ROUNDS);

	/* a partner that naps: the others must sleep, not spin, however many iterations they may spin */
	sleepy = 1;
	run(3, 1u << 30, SLEEPY_ROUNDS);
	ok(atomic_load(&bar.sleeps) >= SLEEPY_ROUNDS,
	   "beside a sleeping partner the waiters slept (%llu sleeps in %d rounds)",
	   (unsigned long long)atomic_load(&bar.sleeps), SLEEPY_ROUNDS);
	/* two waiters, each waits about 2 SLEEPY_NS per round: spinning it out would cost them that in CPU */
	ok(waiter_cpu_ns < 2 * 2 * SLEEPY_ROUNDS * (uint64_t)SLEEPY_NS / 4,
	   "waiters used %.1f ms of CPU while the partner slept %.0f ms", waiter_cpu_ns / 1e6,
	   2 * SLEEPY_ROUNDS * SLEEPY_NS / 1e6);
	is_u64(min_budget, EMU_BARRIER_SPIN_MIN_NS, "long waits shrank the spin budget to its floor");

	/* from the floor, prompt partners grow it back (a quiet machine spins again) */
	sleepy = 0;
	emu_barrier_init(&bar, 2, 100000);
	atomic_store(&bar.spin_ns, EMU_BARRIER_SPIN_MIN_NS);
	go(2, ROUNDS);
	ok(max_budget > EMU_BARRIER_SPIN_MIN_NS, "short waits grew the budget again (to %u ns)", max_budget);
	return done_testing();
}
