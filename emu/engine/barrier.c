// SPDX-License-Identifier: MIT
/*
 * DOC: barrier.c - spin-then-futex barrier with a serial section.
 */
#include "emu/engine/barrier.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

static void futex_wait(_Atomic uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *addr)
{
	syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
}

void emu_barrier_init(struct emu_barrier *b, unsigned n, unsigned spin)
{
	b->n = n;
	b->spin = spin;
	atomic_init(&b->count, 0);
	atomic_init(&b->gen, 0);
	atomic_init(&b->sleepers, 0);
}

int emu_barrier_wait(struct emu_barrier *b, void (*serial)(void *), void *arg)
{
	uint32_t gen = atomic_load_explicit(&b->gen, memory_order_acquire);

	if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) + 1 == b->n) {
		if (serial)
			serial(arg);
		atomic_store_explicit(&b->count, 0, memory_order_relaxed);
		atomic_store_explicit(&b->gen, gen + 1, memory_order_seq_cst);
		if (atomic_load_explicit(&b->sleepers, memory_order_seq_cst))
			futex_wake_all(&b->gen);
		return 1;
	}
	for (unsigned i = 0; i < b->spin; i++) {
		if (atomic_load_explicit(&b->gen, memory_order_acquire) != gen)
			return 0;
		emu_cpu_relax();
	}
	atomic_fetch_add_explicit(&b->sleepers, 1, memory_order_seq_cst);
	while (atomic_load_explicit(&b->gen, memory_order_seq_cst) == gen)
		futex_wait(&b->gen, gen);
	atomic_fetch_sub_explicit(&b->sleepers, 1, memory_order_relaxed);
	return 0;
}
