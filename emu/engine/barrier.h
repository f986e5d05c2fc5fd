/* SPDX-License-Identifier: MIT */
/*
 * DOC: barrier.h - the workers' window barrier.
 *
 * A sense-counting barrier: arrivals increment a counter; the last to
 * arrive runs an optional serial callback (while every other thread is
 * still held), then bumps the generation and wakes the others. Waiters
 * spin for a while (the common case with one pinned worker per core: a
 * window is microseconds) and then sleep on a futex, so oversubscribed
 * runs (--workers per-node) do not burn the cores they share.
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

struct emu_barrier {
	unsigned n;
	unsigned spin;
	alignas(EMU_CACHELINE) _Atomic unsigned count;
	alignas(EMU_CACHELINE) _Atomic uint32_t gen;
	_Atomic unsigned sleepers;
};

/* emu_barrier_init - barrier for @n threads; @spin iterations before sleeping. */
void emu_barrier_init(struct emu_barrier *b, unsigned n, unsigned spin);

/*
 * emu_barrier_wait - wait until all n threads arrived. The last one runs
 * @serial(@arg) first (if non-NULL). Return 1 in the thread that ran the
 * serial part, 0 in the others.
 */
int emu_barrier_wait(struct emu_barrier *b, void (*serial)(void *), void *arg);

#endif /* EMU_BARRIER_H */
