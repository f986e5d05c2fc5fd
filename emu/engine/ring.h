/* SPDX-License-Identifier: MIT */
/*
 * DOC: ring.h - single-producer/single-consumer lock-free ring of events.
 *
 * The ring carries struct emu_ev by value (a frame travels as the pointer
 * inside its event; frame bytes are never copied inside a process).
 * Capacity is a power of two. Producer and consumer indices live on
 * separate cache lines, each side keeps a cached copy of the other's index
 * and publishes its own with a store-release only once per batch
 * (emu_ring_enqueue_burst, emu_ring_publish), the DPDK rte_ring layout.
 *
 * Exactly one thread may enqueue and exactly one may dequeue. Enqueue makes
 * the event contents visible before the index (release); dequeue reads the
 * index with acquire. No other synchronisation is needed.
 *
 * head and tail are free-running uint32_t counters that wrap at 2^32: the
 * fill level tail - head, computed modulo 2^32, is exact across a wrap
 * because the two are never more than size (at most 2^30) apart, and a
 * slot is index & mask because size, a power of two, divides 2^32.
 */
#ifndef EMU_RING_H
#define EMU_RING_H

#include <stdalign.h>
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/engine/event.h"
#include "emu/engine/util.h"

struct emu_ring {
	/* set once at creation */
	uint32_t size;
	uint32_t mask;
	struct emu_ev *slot;
	/* producer */
	alignas(EMU_CACHELINE) _Atomic uint32_t tail;
	uint32_t prod_tail;	/* not yet published */
	uint32_t prod_head_cache;
	/* consumer */
	alignas(EMU_CACHELINE) _Atomic uint32_t head;
	uint32_t cons_tail_cache;
	alignas(EMU_CACHELINE) char pad;
};

/* emu_ring_create - ring of at least @count slots (rounded up to a power of
 * two). Return NULL when @count is 0 or too large. */
struct emu_ring *emu_ring_create(uint32_t count);
/* emu_ring_destroy - free the ring. Accepts NULL. */
void emu_ring_destroy(struct emu_ring *r);

/* emu_ring_publish - producer: make every enqueued event visible. */
static inline void emu_ring_publish(struct emu_ring *r)
{
	atomic_store_explicit(&r->tail, r->prod_tail, memory_order_release);
}

/*
 * emu_ring_enqueue - producer: add one event without publishing it.
 * Return 0, or -ENOBUFS when the ring is full (nothing added).
 */
static inline int emu_ring_enqueue(struct emu_ring *r, const struct emu_ev *ev)
{
	if (emu_unlikely(r->prod_tail - r->prod_head_cache == r->size)) {
		r->prod_head_cache = atomic_load_explicit(&r->head, memory_order_acquire);
		if (r->prod_tail - r->prod_head_cache == r->size) {
			emu_ring_publish(r);
			return -ENOBUFS;
		}
	}
	r->slot[r->prod_tail & r->mask] = *ev;
	r->prod_tail++;
	return 0;
}

/*
 * emu_ring_dequeue_burst - consumer: take up to @max events into @out.
 * Return the number taken (0 when empty).
 */
static inline uint32_t emu_ring_dequeue_burst(struct emu_ring *r, struct emu_ev *out, uint32_t max)
{
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t avail = r->cons_tail_cache - head;

	if (avail == 0) {
		r->cons_tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
		avail = r->cons_tail_cache - head;
		if (avail == 0)
			return 0;
	}
	if (avail > max)
		avail = max;
	for (uint32_t i = 0; i < avail; i++)
		out[i] = r->slot[(head + i) & r->mask];
	atomic_store_explicit(&r->head, head + avail, memory_order_release);
	return avail;
}

#endif /* EMU_RING_H */
