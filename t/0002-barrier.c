// SPDX-License-Identifier: MIT
/*
 * DOC: the window barrier: N threads x K rounds; the serial section runs
 * exactly once per round, in the last thread to arrive, and its writes are
 * visible to every thread after the barrier. Run with more threads than
 * cores to exercise the futex path.
 */
#include <pthread.h>

#include "emu/engine/barrier.h"
#include "tap.h"

#define ROUNDS 2000

static struct emu_barrier bar;
static uint64_t serial_count;
static uint64_t round_value;
static _Atomic uint64_t mismatches;
static _Atomic uint64_t serial_seen;

static void serial(void *arg)
{
	(void)arg;
	serial_count++;
	round_value = serial_count * 3;
}

static void *worker(void *arg)
{
	(void)arg;
	for (uint64_t r = 1; r <= ROUNDS; r++) {
		if (emu_barrier_wait(&bar, serial, NULL))
			serial_seen++;
		if (round_value != r * 3)
			mismatches++;
		emu_barrier_wait(&bar, NULL, NULL);
	}
	return NULL;
}

static void run(unsigned n, unsigned spin)
{
	pthread_t th[16];

	serial_count = round_value = 0;
	mismatches = serial_seen = 0;
	emu_barrier_init(&bar, n, spin);
	for (unsigned i = 0; i < n; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (unsigned i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	is_u64(serial_count, ROUNDS, "%u threads (spin %u): serial section ran once per round", n, spin);
	is_u64(serial_seen, ROUNDS, "%u threads: exactly one thread per round was told it was serial", n);
	is_u64(mismatches, 0, "%u threads: every thread saw the serial write", n);
}

int main(void)
{
	plan(9);
	run(2, 100000);
	run(8, 0);
	run(16, 1000);
	return done_testing();
}
