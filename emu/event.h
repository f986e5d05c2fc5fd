/* SPDX-License-Identifier: MIT */
/*
 * DOC: event.h - the engine's event and the per-worker event heap.
 *
 * An event is 32 bytes: its time, a tie-break key, the destination node and
 * port, a type and a payload (a frame pointer or a 64-bit argument). Events
 * at one node are processed in (time, key) order, where key is
 * (source node << 40 | per-source sequence): a total order that does not
 * depend on how the fabric is partitioned over workers, which is what makes
 * runs deterministic (DESIGN §3). Scheduled link/node changes come from the
 * pseudo source EMU_SRC_CONTROL and sort after node-generated events of the
 * same picosecond.
 *
 * The heap is a plain binary min-heap on (t, key), owned by one worker.
 */
#ifndef EMU_EVENT_H
#define EMU_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "time.h"

struct emu_frame;

enum emu_ev_type {
	EMU_EV_FRAME = 1, /* frame arrives at (node, port) */
	EMU_EV_CREDIT,    /* arg = bytes | gen << 32, back to the sender */
	EMU_EV_TIMER,     /* a model timer, arg = cookie */
	EMU_EV_TXDONE,    /* the port's serializer is free again */
	EMU_EV_LINK,      /* scheduled link state: arg = 1 up, 0 down */
	EMU_EV_NODE,      /* scheduled node state: arg = 1 up, 0 down */
};

#define EMU_SRC_BITS 24
#define EMU_SEQ_BITS 40
#define EMU_SRC_CONTROL ((1u << EMU_SRC_BITS) - 1)
#define EMU_EV_KEY(src, seq) (((uint64_t)(src) << EMU_SEQ_BITS) | ((seq) & ((1ULL << EMU_SEQ_BITS) - 1)))

struct emu_ev {
	emu_time_t t;
	uint64_t key;
	union {
		struct emu_frame *frame;
		uint64_t arg;
	};
	uint32_t node;
	uint16_t type;
	uint16_t port;
};

_Static_assert(sizeof(struct emu_ev) == 32, "struct emu_ev must stay 32 bytes");

static inline bool emu_ev_before(const struct emu_ev *a, const struct emu_ev *b)
{
	return a->t < b->t || (a->t == b->t && a->key < b->key);
}

struct emu_heap {
	struct emu_ev *ev;
	size_t n;
	size_t cap;
};

void emu_heap_init(struct emu_heap *h);
void emu_heap_fini(struct emu_heap *h);
/* emu_heap_push - insert a copy of @ev. Cannot fail (grows or dies). */
void emu_heap_push(struct emu_heap *h, const struct emu_ev *ev);
/* emu_heap_pop - remove the smallest event into @out. Heap must be non-empty. */
void emu_heap_pop(struct emu_heap *h, struct emu_ev *out);

static inline emu_time_t emu_heap_min_time(const struct emu_heap *h)
{
	return h->n ? h->ev[0].t : EMU_TIME_INF;
}

#endif /* EMU_EVENT_H */
