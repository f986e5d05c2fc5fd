/* SPDX-License-Identifier: MIT */
/*
 * DOC: event.h - the engine's event and the per-worker event heap.
 *
 * An event is 32 bytes: its time, a tie-break key, the destination node and
 * port, a type and a payload (a frame pointer or a 64-bit argument). Events
 * at one node are processed in (time, key) order, where key is
 * (source node << 40 | per-source sequence): a total order that does not
 * depend on how the fabric is partitioned over workers, which is what makes
 * runs deterministic (engine.c, t/0013). Scheduled link/node changes come from the
 * pseudo source EMU_SRC_CONTROL and sort after node-generated events of the
 * same picosecond.
 *
 * struct emu_heap is a plain binary min-heap on (t, key). struct emu_evq,
 * the worker's event queue, is a timing wheel in front of it: simulated
 * time only moves forward, so events are appended (O(1)) to the wheel slot
 * of their EMU_EVQ_GRAIN_BITS of picoseconds when within the wheel's span,
 * or to a far-future heap otherwise. Only the current slot is ordered on
 * (t, key), sorted when the wheel reaches it: a slot of one chunk is
 * insertion-sorted in place and popped from its chunk; a larger slot is
 * copied into the current slot's array (one array for every slot, so it
 * stays in the cache) and mostly holds a few ascending runs, which are
 * merged (a slot in no order: merge sort, O(n log n) whatever number of
 * events share a time). Then pops are O(1); pushes at or before the
 * current slot are inserted in order (binary search, one move; a chunk
 * read in place is first copied into the array). A slot holds chunks
 * only while it has events; read, they go back to a free list, where the
 * next push into an empty slot takes the one emptied last, just read and
 * still in the cache (a slot's own memory would be a wheel's turn cold).
 * The (time, key) order of pops is exactly that of one big heap.
 */
#ifndef EMU_EVENT_H
#define EMU_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/engine/time.h"

struct emu_frame;

/* the two types that touch a port come first: one comparison tells them (prefetch_ahead) */
enum emu_ev_type {
	EMU_EV_FRAME = 1, /* frame arrives at (node, port) */
	EMU_EV_TXDONE,    /* the port's wire went idle: commit more queued frames, or tell the model */
	EMU_EV_CREDIT,    /* arg = bytes | gen << 32, back to the sender */
	EMU_EV_TIMER,     /* a model timer, arg = cookie */
	EMU_EV_LINK,      /* scheduled link state: arg = 1 up, 0 down */
	EMU_EV_NODE,      /* scheduled node state: arg = 1 up, 0 down */
	EMU_EV_XBAR,      /* merlin router: arbitrate again; arg = 0 for output port, 1 for input port */
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

/* emu_heap_init - a heap with room for 1024; a zeroed one works too (grows from 0) */
void emu_heap_init(struct emu_heap *h);
void emu_heap_fini(struct emu_heap *h);
/* emu_heap_push - insert a copy of @ev. Cannot fail (grows or dies). */
void emu_heap_push(struct emu_heap *h, const struct emu_ev *ev);
/* emu_heap_pop - remove the smallest event into @out. Heap must be non-empty. */
void emu_heap_pop(struct emu_heap *h, struct emu_ev *out);

/*
 * struct emu_evfifo - events kept in (t, key) order outside the queue: a
 * ring of cap (a power of two) that grows. For what arrives in order
 * anyway (a port's returning credits, a node's timers).
 */
struct emu_evfifo {
	struct emu_ev *ev;
	uint32_t head, n, cap;
};

static inline struct emu_ev *emu_evfifo_at(const struct emu_evfifo *f, uint32_t i)
{
	return &f->ev[(f->head + i) & (f->cap - 1)];
}

static inline void emu_evfifo_drop(struct emu_evfifo *f)
{
	f->head = (f->head + 1) & (f->cap - 1);
	f->n--;
}

/* emu_evfifo_push - append a copy of @ev (not before the tail). Cannot fail. */
void emu_evfifo_push(struct emu_evfifo *f, const struct emu_ev *ev);

#define EMU_EVQ_GRAIN_BITS 8	/* a slot is 256 ps */
#define EMU_EVQ_SLOTS 8192	/* the wheel spans about 2.1 us */

struct emu_evbucket {
	struct emu_ev *ev;
	uint32_t n;
	uint32_t cap;
};

/*
 * A wheel slot's events, in push order, in chunks of 1 KiB: a slot only
 * appends and is read once, when the wheel reaches it, so it needs no
 * contiguous array (which would grow by copies), and emptied chunks are
 * reused hot, last emptied first.
 */
#define EMU_EVCHUNK_N 31
#define EMU_EVCHUNK_SIZE 1024	/* a chunk's size and its alignment */

struct emu_evchunk {
	union {
		struct {
			struct emu_evchunk *prev;	/* the slot's earlier chunk (full), or NULL */
			uint32_t base;			/* events in the slot's earlier chunks */
		};
		/* while the current slot's one chunk is read in place: the smallest event */
		struct emu_ev lead;
	};
	struct emu_ev ev[EMU_EVCHUNK_N];
};

_Static_assert(sizeof(struct emu_evchunk) == EMU_EVCHUNK_SIZE, "an event chunk fills its alignment");

/*
 * A wheel slot: where its next event goes, in its last chunk; NULL when
 * the slot is empty. A push touches the slot's word and the line it
 * writes, not the chunk's header. Chunks are EMU_EVCHUNK_SIZE-aligned,
 * so the tail of a full chunk, like NULL, is on a boundary: the push's
 * one test sends both to the slow path.
 */
struct emu_evslot {
	struct emu_ev *tail;
};

/* room after @tail in its chunk: not on a chunk's boundary (full, or no chunk) */
static inline bool emu_evslot_room(const struct emu_ev *tail)
{
	return (uintptr_t)tail % EMU_EVCHUNK_SIZE != 0;
}

/* the last chunk of the slot whose tail is @tail (not NULL) */
static inline struct emu_evchunk *emu_evslot_chunk(const struct emu_ev *tail)
{
	return (struct emu_evchunk *)(((uintptr_t)tail - 1) & ~(uintptr_t)(EMU_EVCHUNK_SIZE - 1));
}

/* the events in the last chunk of the slot whose tail is @tail (not NULL) */
static inline uint32_t emu_evslot_last_n(const struct emu_ev *tail)
{
	return (uint32_t)(tail - emu_evslot_chunk(tail)->ev);
}

struct emu_evq {
	/*
	 * The current slot's events not yet popped, [next, stop) of now.ev,
	 * sorted by (t, key): a pop reads and moves one pointer.
	 */
	const struct emu_ev *next;
	const struct emu_ev *stop;
	uint64_t cur;			/* current slot number (t >> GRAIN_BITS) */
	emu_time_t wheel_t;		/* the wheel's first picosecond: (cur + 1) << GRAIN_BITS */
	uint32_t nused;			/* wheel slots with events (a push into one counts nothing) */
	struct emu_evslot *slot;	/* EMU_EVQ_SLOTS */
	struct emu_evbucket now;	/* the current slot's array (its n unused: stop) */
	/*
	 * A current slot of one chunk is sorted and read in place: next and
	 * stop point into the chunk (held), not into now; a push into the
	 * current slot first copies what is left into now.
	 */
	struct emu_evchunk *held;
	struct emu_evbucket tmp;	/* scratch for sorting a crowded slot */
	uint32_t *cnt;			/* scratch for counting a crowded slot's sources */
	uint32_t ncnt;			/* its size */
	uint64_t nbysrc;		/* crowded slots counted by source (a statistic, for t/0017) */
	struct emu_heap far;		/* events with slot >= cur + SLOTS */
	uint64_t used[EMU_EVQ_SLOTS / 64];	/* non-empty wheel slots */
	struct emu_evchunk *spare;	/* emptied chunks (through prev), last emptied first */
	uint32_t nspare;		/* chunks in spare */
	uint32_t nchunks;		/* chunks in wheel slots */
};

/* emptied chunks kept beyond those in use: a crowded instant does not pin its memory */
#define EMU_EVCHUNK_SPARE 256

void emu_evq_init(struct emu_evq *q);
void emu_evq_fini(struct emu_evq *q);

void emu_evq_push_slow(struct emu_evq *q, const struct emu_ev *ev);
bool emu_evq_pop_slow(struct emu_evq *q, emu_time_t end, struct emu_ev *out);

/* time @t is in one of the wheel's slots after the current one (cur < slot < cur + SLOTS) */
static inline bool emu_evq_in_wheel(const struct emu_evq *q, emu_time_t t)
{
	return t - q->wheel_t < (emu_time_t)(EMU_EVQ_SLOTS - 1) << EMU_EVQ_GRAIN_BITS;
}

/* emu_evq_push - queue a copy of @ev (at or after the last popped time). Cannot fail. */
static inline __attribute__((always_inline)) void emu_evq_push(struct emu_evq *q, const struct emu_ev *ev)
{
	/* the common case inline: a later slot of the wheel whose chunk has room */
	if (__builtin_expect(emu_evq_in_wheel(q, ev->t), 1)) {
		struct emu_evslot *s = &q->slot[(ev->t >> EMU_EVQ_GRAIN_BITS) & (EMU_EVQ_SLOTS - 1)];
		struct emu_ev *e = s->tail;

		if (__builtin_expect(emu_evslot_room(e), 1)) {	/* it has a chunk: marked used */
			*e = *ev;
			s->tail = e + 1;
			return;
		}
	}
	emu_evq_push_slow(q, ev);
}

/*
 * emu_evq_reserve - the slot for an event at @t in the common case of
 * emu_evq_push() (a later slot of the wheel whose chunk has room), to be
 * filled in by the caller at once; NULL otherwise (then emu_evq_push()).
 */
static inline struct emu_ev *emu_evq_reserve(struct emu_evq *q, emu_time_t t)
{
	if (__builtin_expect(emu_evq_in_wheel(q, t), 1)) {
		struct emu_evslot *s = &q->slot[(t >> EMU_EVQ_GRAIN_BITS) & (EMU_EVQ_SLOTS - 1)];
		struct emu_ev *e = s->tail;

		if (__builtin_expect(emu_evslot_room(e), 1)) {
			s->tail = e + 1;
			return e;
		}
	}
	return NULL;
}

/*
 * emu_evq_pop_before - pop the smallest event into @out if its time is
 * before @end. Return true if one was popped.
 */
static inline bool emu_evq_pop_before(struct emu_evq *q, emu_time_t end, struct emu_ev *out)
{
	const struct emu_ev *e = q->next;

	if (__builtin_expect(e < q->stop, 1)) {
		if (e->t >= end)
			return false;
		*out = *e;
		q->next = e + 1;
		return true;
	}
	return emu_evq_pop_slow(q, end, out);
}

/*
 * emu_evq_next - emu_evq_pop_before() without the copy: the smallest event
 * if its time is before @end (in the queue's own array, or in @spare),
 * else NULL. Valid only until the next push: read what is needed first.
 */
static inline const struct emu_ev *emu_evq_next(struct emu_evq *q, emu_time_t end, struct emu_ev *spare)
{
	const struct emu_ev *e = q->next;

	if (__builtin_expect(e < q->stop, 1)) {
		if (e->t >= end)
			return NULL;
		q->next = e + 1;
		return e;
	}
	return emu_evq_pop_slow(q, end, spare) ? spare : NULL;
}

/* emu_evq_left - the events left in the current slot (after the one last popped) */
static inline uint32_t emu_evq_left(const struct emu_evq *q)
{
	return (uint32_t)(q->stop - q->next);
}

/*
 * emu_evq_ahead - the event @i (below emu_evq_left()) places after the next
 * one in the current slot: what will run soon, to prefetch what it
 * touches. A later push may still come before it.
 */
static inline const struct emu_ev *emu_evq_ahead(const struct emu_evq *q, uint32_t i)
{
	return q->next + i;
}

/* emu_evq_min_time - time of the smallest event, EMU_TIME_INF if empty. */
emu_time_t emu_evq_min_time(const struct emu_evq *q);

#endif /* EMU_EVENT_H */
