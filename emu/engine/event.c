// SPDX-License-Identifier: MIT
/*
 * DOC: event.c - the worker's event queue: a timing wheel of chunked slots in
 * front of a far-future binary heap, popping in (time, key) order; and the
 * small FIFOs of events kept outside it. See event.h.
 */
#include "emu/engine/event.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/engine/frame.h"
#include "emu/engine/util.h"

void emu_heap_init(struct emu_heap *h)
{
	h->cap = 1024;
	h->n = 0;
	h->ev = emu_xmalloc(h->cap * sizeof(*h->ev));
}

void emu_heap_fini(struct emu_heap *h)
{
	free(h->ev);
	h->ev = NULL;
	h->n = h->cap = 0;
}

void emu_heap_push(struct emu_heap *h, const struct emu_ev *ev)
{
	if (emu_unlikely(h->n == h->cap)) {
		h->cap = h->cap ? 2 * h->cap : 16;
		h->ev = emu_xrealloc(h->ev, h->cap * sizeof(*h->ev));
	}
	struct emu_ev *a = h->ev;
	size_t i = h->n++;

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!emu_ev_before(ev, &a[parent]))
			break;
		a[i] = a[parent];
		i = parent;
	}
	a[i] = *ev;
}

void emu_heap_pop(struct emu_heap *h, struct emu_ev *out)
{
	struct emu_ev *a = h->ev;
	size_t n = --h->n;
	struct emu_ev last = a[n];
	size_t i = 0;

	*out = a[0];
	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && emu_ev_before(&a[c + 1], &a[c]))
			c++;
		if (!emu_ev_before(&a[c], &last))
			break;
		a[i] = a[c];
		i = c;
	}
	a[i] = last;
}

void emu_evfifo_push(struct emu_evfifo *f, const struct emu_ev *ev)
{
	if (emu_unlikely(f->n == f->cap)) {
		uint32_t cap = f->cap ? 2 * f->cap : 16;
		struct emu_ev *a = emu_xmalloc(cap * sizeof(*a));

		for (uint32_t i = 0; i < f->n; i++)
			a[i] = *emu_evfifo_at(f, i);
		free(f->ev);
		f->ev = a;
		f->cap = cap;
		f->head = 0;
	}
	*emu_evfifo_at(f, f->n++) = *ev;
}

/* ---------- timing wheel ---------- */

/*
 * The current slot's array and the sort's scratch keep one event before
 * their first, the smallest there is (time 0, key 0): an insertion stops
 * there without testing the index.
 */
static void bucket_grow(struct emu_evbucket *b, uint32_t cap, bool keep)
{
	struct emu_ev *a = b->ev ? b->ev - 1 : NULL;
	size_t size = ((size_t)cap + 1) * sizeof(*a);

	if (keep) {
		a = emu_xrealloc(a, size);
	} else {
		free(a);
		a = emu_xmalloc(size);
	}
	a[0] = (struct emu_ev){ .t = 0, .key = 0 };
	b->ev = a + 1;
	b->cap = cap;
}

static inline void bucket_reserve(struct emu_evbucket *b, uint32_t want)
{
	if (emu_unlikely(want > b->cap))
		bucket_grow(b, want > 2 * b->cap ? (want > 32 ? want : 32) : 2 * b->cap, true);
}

static void bucket_free(struct emu_evbucket *b)
{
	if (b->ev)
		free(b->ev - 1);
	b->ev = NULL;
	b->cap = b->n = 0;
}

/* the current slot's number, and the wheel's first picosecond after it */
static void set_cur(struct emu_evq *q, uint64_t sl)
{
	q->cur = sl;
	q->wheel_t = (sl + 1) << EMU_EVQ_GRAIN_BITS;
}

void emu_evq_init(struct emu_evq *q)
{
	memset(q, 0, sizeof(*q));
	set_cur(q, 0);
	emu_heap_init(&q->far);
	q->slot = emu_xcalloc(EMU_EVQ_SLOTS, sizeof(*q->slot));	/* every slot empty: tail NULL */
	bucket_grow(&q->now, 32, false);	/* next and stop always point into an array */
	q->next = q->stop = q->now.ev;
}

static void chunks_free(struct emu_evchunk *c)
{
	while (c) {
		struct emu_evchunk *prev = c->prev;

		free(c);
		c = prev;
	}
}

void emu_evq_fini(struct emu_evq *q)
{
	emu_heap_fini(&q->far);
	free(q->held);
	q->held = NULL;
	q->next = q->stop = NULL;
	bucket_free(&q->now);
	bucket_free(&q->tmp);
	free(q->cnt);
	q->cnt = NULL;
	q->ncnt = 0;
	if (q->slot)
		for (unsigned i = 0; i < EMU_EVQ_SLOTS; i++)
			if (q->slot[i].tail)
				chunks_free(emu_evslot_chunk(q->slot[i].tail));
	free(q->slot);
	q->slot = NULL;
	chunks_free(q->spare);
	q->spare = NULL;
	q->nspare = q->nchunks = 0;
}

/* a new chunk, aligned to its size (event.h: a slot's tail tells a full chunk) */
static struct emu_evchunk *chunk_new(void)
{
	void *c = NULL;

	if (posix_memalign(&c, EMU_EVCHUNK_SIZE, sizeof(struct emu_evchunk)))
		emu_out_of_memory(sizeof(struct emu_evchunk));
	return c;
}

static inline void wheel_add(struct emu_evq *q, uint64_t sl, const struct emu_ev *ev)
{
	unsigned i = (unsigned)(sl & (EMU_EVQ_SLOTS - 1));
	struct emu_evslot *s = &q->slot[i];

	if (!emu_evslot_room(s->tail)) {
		struct emu_evchunk *c = q->spare;	/* the hottest emptied chunk */
		struct emu_evchunk *last = s->tail ? emu_evslot_chunk(s->tail) : NULL;	/* full */

		if (c) {
			q->spare = c->prev;
			q->nspare--;
		} else {
			c = chunk_new();
		}
		q->nchunks++;
		q->nused += !last;
		c->prev = last;
		c->base = last ? last->base + EMU_EVCHUNK_N : 0;
		s->tail = c->ev;
		q->used[i / 64] |= 1ULL << (i % 64);
	}
	*s->tail++ = *ev;
}

/* an emptied chunk to the free list, which keeps at most EMU_EVCHUNK_SPARE beyond those in use */
static void chunk_put(struct emu_evq *q, struct emu_evchunk *c)
{
	if (q->nspare < q->nchunks + EMU_EVCHUNK_SPARE) {
		c->prev = q->spare;
		q->spare = c;
		q->nspare++;
	} else {
		free(c);
	}
}

/*
 * The held chunk back to the free list, the events left in it (from
 * next) into the queue's own array, now.
 */
static void unhold(struct emu_evq *q)
{
	struct emu_evchunk *c = q->held;
	uint32_t left = emu_evq_left(q);

	q->held = NULL;
	bucket_reserve(&q->now, left + 1);
	memcpy(q->now.ev, q->next, (size_t)left * sizeof(c->ev[0]));
	q->next = q->now.ev;
	q->stop = q->now.ev + left;
	q->nchunks--;
	chunk_put(q, c);
}

/* insert @ev into the current slot, keeping (t, key) order */
static void now_insert(struct emu_evq *q, const struct emu_ev *ev)
{
	struct emu_evbucket *b = &q->now;

	if (q->held)
		unhold(q);

	uint32_t head = (uint32_t)(q->next - b->ev), n = (uint32_t)(q->stop - b->ev);

	if (head == n)
		head = n = 0;
	bucket_reserve(b, n + 1);
	/* the first event after @ev (binary search), then one move of the rest */
	uint32_t lo = head, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (emu_ev_before(ev, &b->ev[mid]))
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo < n)
		memmove(&b->ev[lo + 1], &b->ev[lo], (size_t)(n - lo) * sizeof(*b->ev));
	b->ev[lo] = *ev;
	q->next = b->ev + head;
	q->stop = b->ev + n + 1;
}

void emu_evq_push_slow(struct emu_evq *q, const struct emu_ev *ev)
{
	uint64_t sl = ev->t >> EMU_EVQ_GRAIN_BITS;

	if (sl <= q->cur)
		now_insert(q, ev);
	else if (sl < q->cur + EMU_EVQ_SLOTS)
		wheel_add(q, sl, ev);
	else
		emu_heap_push(&q->far, ev);
}

/* Slot number of the first non-empty wheel slot after cur (wheel not empty). */
static uint64_t next_used(const struct emu_evq *q)
{
	unsigned start = (unsigned)((q->cur + 1) & (EMU_EVQ_SLOTS - 1));
	unsigned w = start / 64;
	uint64_t bits = q->used[w] & (~0ULL << (start % 64));

	for (unsigned k = 0; k <= EMU_EVQ_SLOTS / 64; k++) {
		if (bits) {
			unsigned i = w * 64 + (unsigned)__builtin_ctzll(bits);
			uint64_t d = (i - start) & (EMU_EVQ_SLOTS - 1);

			return q->cur + 1 + d;
		}
		w = (w + 1) % (EMU_EVQ_SLOTS / 64);
		bits = q->used[w];
	}
	emu_die(EINVAL);
}

/* Move far events whose slot entered the wheel's span. */
static void pull_far(struct emu_evq *q)
{
	struct emu_ev ev;

	while (q->far.n && (q->far.ev[0].t >> EMU_EVQ_GRAIN_BITS) < q->cur + EMU_EVQ_SLOTS) {
		emu_heap_pop(&q->far, &ev);
		if ((ev.t >> EMU_EVQ_GRAIN_BITS) <= q->cur)
			now_insert(q, &ev);
		else
			wheel_add(q, ev.t >> EMU_EVQ_GRAIN_BITS, &ev);
	}
}

/* insertion sort of a[0..n) on (t, key): the common case, a few events */
static void isort(struct emu_ev *a, uint32_t n)
{
	for (uint32_t k = 1; k < n; k++) {
		if (!emu_ev_before(&a[k], &a[k - 1]))
			continue;	/* in place: the common case */
		struct emu_ev x = a[k];
		uint32_t j = k;

		do {
			a[j] = a[j - 1];
			j--;
		} while (j > 0 && emu_ev_before(&x, &a[j - 1]));
		a[j] = x;
	}
}

/* half an event, 16 bytes: what one SSE register holds */
typedef uint64_t ev_half __attribute__((vector_size(16)));
_Static_assert(sizeof(struct emu_ev) == 2 * sizeof(ev_half), "an event is two halves");

/*
 * Insertion sort of a slot of a few events (one chunk) in place on
 * (t, key): a[-1] is the smallest event there is and ends every search.
 */
static inline void sort_small(struct emu_ev *a, uint32_t n)
{
	for (struct emu_ev *e = a + 1, *end = a + n; e < end; e++) {
		if (!emu_ev_before(e, e - 1))
			continue;	/* in place: the common case */
		emu_time_t t = e->t;
		uint64_t key = e->key;
		/* the event in two vector registers (as a struct, GCC keeps it on the stack) */
		ev_half lo, hi;
		struct emu_ev *p = e;

		__builtin_memcpy(&lo, e, sizeof(lo));
		__builtin_memcpy(&hi, (const char *)e + sizeof(lo), sizeof(hi));
		do {
			*p = p[-1];
			p--;
		} while (t < p[-1].t || (t == p[-1].t && key < p[-1].key));
		__builtin_memcpy(p, &lo, sizeof(lo));
		__builtin_memcpy((char *)p + sizeof(lo), &hi, sizeof(hi));
	}
}

/*
 * emu_ev_before() as one 128-bit comparison (the key's borrow into the
 * time's): no branch on a tie of times, which a crowded slot's merges
 * mostly meet (lock-step sources); where ties are rare (a small slot's
 * insertion) the two comparisons are cheaper
 */
static inline bool before_tied(const struct emu_ev *a, const struct emu_ev *b)
{
	__extension__ typedef unsigned __int128 u128;

	return ((u128)a->t << 64 | a->key) < ((u128)b->t << 64 | b->key);
}

/*
 * merge the ascending src[lo..mid) and src[mid..hi) into dst[lo..hi)
 * (stable: ties keep src's order); @bykey (a constant): every event has
 * the same time, the keys alone order them
 */
static inline __attribute__((always_inline)) void merge2(const struct emu_ev *src, struct emu_ev *dst, uint32_t lo,
							 uint32_t mid, uint32_t hi, bool bykey)
{
	const struct emu_ev *i = src + lo, *j = src + mid, *ie = j, *je = src + hi;
	struct emu_ev *k = dst + lo;

	if (i < ie && j < je)
		for (;;) {
			if (bykey ? j->key < i->key : before_tied(j, i)) {
				*k++ = *j++;
				if (j == je)
					break;
			} else {
				*k++ = *i++;
				if (i == ie)
					break;
			}
		}
	/* what is left of one run, in one copy */
	if (i < ie)
		memcpy(k, i, (size_t)(ie - i) * sizeof(*k));
	else if (j < je)
		memcpy(k, j, (size_t)(je - j) * sizeof(*k));
}

#define SORT_RUN 16	/* runs sorted by insertion before merging (unordered slots) */
#define SMALL_MAX EMU_EVCHUNK_N	/* a slot of at most this many (one chunk): sorted and read in place */
#define NATURAL_RUNS 32	/* a slot with more ascending runs is sorted from scratch */
#define BYSRC_RUNS 4	/* a slot of one time and at least this many runs: counted by source */
#define BYSRC_SPREAD 4	/* ... if its sources span at most this many per event */

/*
 * Merge the ascending runs of src[0..n) that start at run[0..nrun) (run[nrun]
 * = n) pairwise, again and again, into one. Return the array that holds the
 * result: @src or @dst.
 */
static inline __attribute__((always_inline)) struct emu_ev *merge_runs(struct emu_ev *src, struct emu_ev *dst,
								       uint32_t *run, uint32_t nrun, bool bykey)
{
	while (nrun > 1) {
		uint32_t out = 0;

		for (uint32_t r = 0; r < nrun; r += 2) {
			uint32_t lo = run[r], mid = run[r + 1], hi = r + 2 <= nrun ? run[r + 2] : mid;

			merge2(src, dst, lo, mid, hi, bykey);	/* a last run alone (hi = mid): copied */
			run[out++] = lo;
		}
		run[out] = run[nrun];
		nrun = out;
		struct emu_ev *x = src;

		src = dst;
		dst = x;
	}
	return src;
}

/*
 * Sort src[0..n), events of one time whose sources (the key's node part)
 * are @s0 to @s0 + @ns - 1, into dst[0..n) by key: a stable counting sort
 * on the source, each event moved once. A node's keys grow with each event
 * it makes, so a source's events, pushed in that order, are in order
 * already; a last pass checks it (an event made again from an older key, a
 * credit given back when a link changes state, would not be) and sorts
 * what is not by insertion.
 */
static void sort_bysrc(struct emu_evq *q, const struct emu_ev *src, struct emu_ev *dst, uint32_t n, uint64_t s0,
		       uint32_t ns)
{
	if (ns + 1 > q->ncnt) {
		free(q->cnt);
		q->ncnt = ns + 1 > 2 * q->ncnt ? ns + 1 : 2 * q->ncnt;
		q->cnt = emu_xmalloc(q->ncnt * sizeof(*q->cnt));
	}
	uint32_t *cnt = q->cnt;
	uint64_t k0 = s0 << EMU_SEQ_BITS;

	memset(cnt, 0, (ns + 1) * sizeof(*cnt));
	for (uint32_t k = 0; k < n; k++)
		cnt[((src[k].key - k0) >> EMU_SEQ_BITS) + 1]++;
	for (uint32_t s = 1; s < ns; s++)
		cnt[s] += cnt[s - 1];	/* cnt[s]: where source s0 + s starts */
	for (uint32_t k = 0; k < n; k++)
		dst[cnt[(src[k].key - k0) >> EMU_SEQ_BITS]++] = src[k];
	q->nbysrc++;
	for (uint32_t k = 1; k < n; k++)
		if (emu_unlikely(dst[k].key < dst[k - 1].key)) {
			isort(dst, n);	/* moves only what is out of order */
			break;
		}
}

/*
 * Sort the current slot (q->now, more than SMALL_MAX events) on (t, key).
 * A slot mostly holds a few ascending runs (events pushed by the same
 * instant's work come in key order): find them and merge them. Lock-step traffic
 * (every host starting at the same picosecond) puts thousands in one, in
 * many runs: when they share one time they are counted into place by
 * source (sort_bysrc()); else, beyond NATURAL_RUNS, insertion sort on runs
 * of SORT_RUN, then bottom-up merges, so the cost stays O(n log n). The
 * sorts go through q->tmp, which then becomes the current array (no copy
 * back).
 */
static void sort_now(struct emu_evq *q, uint32_t n)
{
	struct emu_ev *a = q->now.ev;
	uint32_t run[NATURAL_RUNS + 2];
	uint32_t nrun = 1, k;
	/*
	 * A run's times do not decrease: all events are the first one's when
	 * every run starts and ends with it. Then a run's keys increase, so
	 * the runs' first and last keys hold the smallest and largest.
	 */
	emu_time_t t0 = a[0].t, tdiff = a[n - 1].t ^ t0;
	uint64_t kmin = a[0].key, kmax = a[n - 1].key;

	run[0] = 0;
	for (k = 1; k < n; k++) {
		if (!before_tied(&a[k], &a[k - 1]))
			continue;
		tdiff |= (a[k].t ^ t0) | (a[k - 1].t ^ t0);
		kmin = a[k].key < kmin ? a[k].key : kmin;
		kmax = a[k - 1].key > kmax ? a[k - 1].key : kmax;
		if (nrun < NATURAL_RUNS)
			run[nrun] = k;
		if (++nrun > NATURAL_RUNS && tdiff)
			break;	/* no order to speak of, and not one time */
	}
	if (nrun == 1)
		return;
	bucket_reserve(&q->tmp, n);
	if (!tdiff && nrun >= BYSRC_RUNS &&
	    (kmax >> EMU_SEQ_BITS) - (kmin >> EMU_SEQ_BITS) < (uint64_t)n * BYSRC_SPREAD) {
		sort_bysrc(q, a, q->tmp.ev, n, kmin >> EMU_SEQ_BITS,
			   (uint32_t)((kmax >> EMU_SEQ_BITS) - (kmin >> EMU_SEQ_BITS) + 1));
		goto swap;
	}
	if (nrun > NATURAL_RUNS) {
		for (uint32_t i = 0; i < n; i += SORT_RUN)
			isort(a + i, n - i < SORT_RUN ? n - i : SORT_RUN);
		struct emu_ev *src = a, *dst = q->tmp.ev;

		for (uint32_t w = SORT_RUN; w < n; w *= 2) {
			for (uint32_t lo = 0; lo < n; lo += 2 * w) {
				uint32_t mid = lo + w < n ? lo + w : n;
				uint32_t hi = lo + 2 * w < n ? lo + 2 * w : n;

				merge2(src, dst, lo, mid, hi, false);
			}
			struct emu_ev *x = src;

			src = dst;
			dst = x;
		}
		if (src != a)
			goto swap;
		return;
	}
	run[nrun] = n;
	/* events that share one time (lock-step sources) are merged on their keys alone */
	if ((tdiff ? merge_runs(a, q->tmp.ev, run, nrun, false) : merge_runs(a, q->tmp.ev, run, nrun, true)) == a)
		return;
swap:;
	/* the sorted events are in q->tmp: make it the current array */
	struct emu_evbucket t = q->tmp;

	q->tmp.ev = q->now.ev;
	q->tmp.cap = q->now.cap;
	q->now.ev = t.ev;
	q->now.cap = t.cap;
}

/* The current slot is empty: make wheel slot @sl, the next that has events (next_used()), the current one. */
static void advance(struct emu_evq *q, uint64_t sl)
{
	set_cur(q, sl);
	unsigned i = (unsigned)(q->cur & (EMU_EVQ_SLOTS - 1));
	struct emu_evchunk *c = emu_evslot_chunk(q->slot[i].tail);
	uint32_t cn = emu_evslot_last_n(q->slot[i].tail), n = c->base + cn;

	q->used[i / 64] &= ~(1ULL << (i % 64));
	q->slot[i].tail = NULL;
	q->nused--;
	if (n <= SMALL_MAX) {
		/* one chunk: sorted and read in place, given back when the next slot is taken */
		c->lead = (struct emu_ev){ .t = 0, .key = 0 };
		sort_small(c->ev, n);
		q->held = c;
		q->next = c->ev;
		q->stop = c->ev + n;
		pull_far(q);
		return;
	}
	/* the slot's chunks into the current array, in push order */
	if (n > q->now.cap)	/* read to the end: nothing to keep */
		bucket_grow(&q->now, n > 2 * q->now.cap ? n : 2 * q->now.cap, false);
	/*
	 * The chunks go back to the free list as they are read, while it
	 * keeps at most EMU_EVCHUNK_SPARE beyond the chunks in use: after a
	 * crowded instant, first the spare ones go, then those just read
	 * that do not fit.
	 */
	uint32_t k = c->base / EMU_EVCHUNK_N + 1;	/* the slot's chunks */
	uint32_t keep = (q->nchunks -= k) + EMU_EVCHUNK_SPARE;

	while (q->nspare && q->nspare + k > keep) {
		struct emu_evchunk *x = q->spare;

		q->spare = x->prev;
		q->nspare--;
		free(x);
	}
	for (struct emu_evchunk *next; c; c = next, cn = EMU_EVCHUNK_N) {
		next = c->prev;
		memcpy(q->now.ev + c->base, c->ev, cn * sizeof(c->ev[0]));
		chunk_put(q, c);
	}
	sort_now(q, n);
	q->next = q->now.ev;
	q->stop = q->now.ev + n;
	pull_far(q);
}

emu_time_t emu_evq_min_time(const struct emu_evq *q)
{
	if (q->next < q->stop)
		return q->next->t;
	if (q->nused) {
		const struct emu_evslot *s = &q->slot[next_used(q) & (EMU_EVQ_SLOTS - 1)];
		uint32_t cn = emu_evslot_last_n(s->tail);
		emu_time_t m = EMU_TIME_INF;

		for (const struct emu_evchunk *c = emu_evslot_chunk(s->tail); c; c = c->prev, cn = EMU_EVCHUNK_N)
			for (uint32_t k = 0; k < cn; k++)
				if (c->ev[k].t < m)
					m = c->ev[k].t;
		return m;
	}
	return q->far.n ? q->far.ev[0].t : EMU_TIME_INF;
}

bool emu_evq_pop_slow(struct emu_evq *q, emu_time_t end, struct emu_ev *out)
{
	if (q->next == q->stop) {
		if (q->held) {	/* read to the end: nothing to copy */
			struct emu_evchunk *c = q->held;

			q->held = NULL;
			q->next = q->stop = q->now.ev;
			q->nchunks--;
			chunk_put(q, c);
		}
		if (!q->nused && !q->far.n)
			return false;
		/*
		 * Move to the next slot only if it starts before @end. Moving
		 * early is harmless: later pushes at or before the current slot
		 * are inserted in order.
		 */
		uint64_t sl;

		if (q->nused) {
			sl = next_used(q);
			if ((sl << EMU_EVQ_GRAIN_BITS) >= end)
				return false;
		} else {
			if (q->far.ev[0].t >= end)
				return false;
			/* the wheel is empty: it starts again at the far heap's first slot */
			set_cur(q, (q->far.ev[0].t >> EMU_EVQ_GRAIN_BITS) - 1);
			pull_far(q);
			sl = next_used(q);
		}
		advance(q, sl);
	}
	if (q->next->t >= end)
		return false;
	*out = *q->next++;
	return true;
}
