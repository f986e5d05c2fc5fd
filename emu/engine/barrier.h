/* SPDX-License-Identifier: MIT */
/*
 * DOC: barrier.h - the workers' window barrier.
 *
 * A generation-counting barrier: arrivals increment a counter; the last to
 * arrive runs an optional serial callback (while every other thread is
 * still held), then bumps the generation and wakes the others. Waiters
 * spin briefly and then sleep on a futex, so that a worker whose partner
 * is descheduled (a busy machine, or more workers than cores) gives its
 * core away instead of burning it.
 *
 * The spin is bounded twice: by @spin iterations (0: never spin) and by a
 * time budget between EMU_BARRIER_SPIN_MIN_NS and EMU_BARRIER_SPIN_MAX_NS
 * that adapts to how long waits turn out to be. A wait that ends within
 * the largest budget (arrivals close together: pinned workers on free
 * cores) doubles the budget; a longer one (a partner that lost its core
 * for a time slice, where spinning only takes the core from whoever could
 * use it) halves it. A sleeper still measures its wait, so the budget
 * grows back when the machine quietens.
 *
 * Every participant calls emu_barrier_wait() once per phase; the
 * callback's writes are visible to all of them when they return
 * (the generation is published with release, read with acquire).
 */
#ifndef EMU_BARRIER_H
#define EMU_BARRIER_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "emu/engine/util.h"

#define EMU_BARRIER_SPIN_MIN_NS 1000u	/* the budget never drops below (a probe) */
#define EMU_BARRIER_SPIN_MAX_NS 64000u	/* nor above: ~2 % of a default-run window (~3 ms) */

struct emu_barrier {
	unsigned n;
	unsigned spin;
	alignas(EMU_CACHELINE) _Atomic unsigned count;
	alignas(EMU_CACHELINE) _Atomic uint32_t gen;
	_Atomic unsigned sleepers;
	alignas(EMU_CACHELINE) _Atomic uint32_t spin_ns;	/* the adaptive time budget */
	_Atomic uint64_t sleeps;	/* waits that ended asleep (tests, profiles) */
};

/* emu_barrier_init - barrier for @n threads; at most @spin iterations before sleeping. */
void emu_barrier_init(struct emu_barrier *b, unsigned n, unsigned spin);

/*
 * emu_barrier_wait - wait until all n threads arrived. The last one runs
 * @serial(@arg) first (if non-NULL). Return 1 in the thread that ran the
 * serial part, 0 in the others. Every thread's writes before its call are
 * visible to every thread after the call returns.
 */
int emu_barrier_wait(struct emu_barrier *b, void (*serial)(void *), void *arg);

#endif /* EMU_BARRIER_H */
