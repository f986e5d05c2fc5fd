// SPDX-License-Identifier: MIT
/*
 * DOC: barrier.c - spin-then-futex barrier with a serial section and an
 * adaptive spin budget (barrier.h says why).
 */
#include "emu/engine/barrier.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void emu_barrier_init(struct emu_barrier *b, unsigned n, unsigned spin)
{
	b->n = n;
	b->spin = spin;
	atomic_init(&b->count, 0);
	atomic_init(&b->gen, 0);
	atomic_init(&b->sleepers, 0);
	atomic_init(&b->spin_ns, EMU_BARRIER_SPIN_MAX_NS);
	atomic_init(&b->sleeps, 0);
}

/*
 * A wait of @waited ns is over: a short one says spinning pays (double the
 * budget), a long one that it does not (halve it). Racing updates may lose
 * one another; the budget only steers, correctness does not depend on it.
 */
static void adapt(struct emu_barrier *b, uint64_t waited)
{
	uint32_t s = atomic_load_explicit(&b->spin_ns, memory_order_relaxed);

	if (waited <= EMU_BARRIER_SPIN_MAX_NS)
		s = s >= EMU_BARRIER_SPIN_MAX_NS / 2 ? EMU_BARRIER_SPIN_MAX_NS : 2 * s;
	else
		s = s <= 2 * EMU_BARRIER_SPIN_MIN_NS ? EMU_BARRIER_SPIN_MIN_NS : s / 2;
	atomic_store_explicit(&b->spin_ns, s, memory_order_relaxed);
}

/*
 * The sleeper count and the generation are a Dekker pair, both seq_cst: a
 * waiter raises sleepers, then reads gen; the last arrival writes gen, then
 * reads sleepers. One of them sees the other's write, so either the waiter
 * sees the new generation or the last arrival wakes it (and FUTEX_WAIT
 * itself returns at once if gen already moved).
 */
static void sleep_until(struct emu_barrier *b, uint32_t gen)
{
	atomic_fetch_add_explicit(&b->sleepers, 1, memory_order_seq_cst);
	atomic_fetch_add_explicit(&b->sleeps, 1, memory_order_relaxed);
	while (atomic_load_explicit(&b->gen, memory_order_seq_cst) == gen)
		futex_wait(&b->gen, gen);
	atomic_fetch_sub_explicit(&b->sleepers, 1, memory_order_relaxed);
}

int emu_barrier_wait(struct emu_barrier *b, void (*serial)(void *), void *arg)
{
	uint32_t gen = atomic_load_explicit(&b->gen, memory_order_acquire);

	/* the arrivals' acq_rel increments form one release sequence: the last sees all writes before them */
	if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) + 1 == b->n) {
		if (serial)
			serial(arg);
		atomic_store_explicit(&b->count, 0, memory_order_relaxed);
		atomic_store_explicit(&b->gen, gen + 1, memory_order_seq_cst);
		if (atomic_load_explicit(&b->sleepers, memory_order_seq_cst))
			futex_wake_all(&b->gen);
		return 1;
	}
	if (!b->spin) {
		sleep_until(b, gen);
		return 0;
	}

	uint64_t t0 = now_ns();
	uint32_t budget = atomic_load_explicit(&b->spin_ns, memory_order_relaxed);

	for (unsigned i = 0; i < b->spin; i++) {
		if (atomic_load_explicit(&b->gen, memory_order_acquire) != gen) {
			adapt(b, now_ns() - t0);
			return 0;
		}
		emu_cpu_relax();
		/* a clock read costs ~50 ns in a VM, 32 pauses ~1 us */
		if ((i & 31) == 31 && now_ns() - t0 >= budget)
			break;
	}
	sleep_until(b, gen);
	adapt(b, now_ns() - t0);
	return 0;
}
