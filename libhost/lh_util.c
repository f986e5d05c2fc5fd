// SPDX-License-Identifier: MIT
/*
 * DOC: lh_util.c - allocation that aborts (or calls the handler of
 * lh_set_out_of_memory()) on failure. See lh_util.h.
 */
#include "libhost/lh_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libhost/canary_host.h"

static void (*oom_fn)(size_t);

void lh_set_out_of_memory(void (*fn)(size_t bytes))
{
	oom_fn = fn;
}

/* out_of_memory - the handler, or one line on stderr; then abort. Never returns. */
static _Noreturn void out_of_memory(size_t n)
{
	if (oom_fn)
		oom_fn(n);
	fprintf(stderr, "libcanaryhost: out of memory (%zu bytes)\n", n);
	abort();
}

void *lh_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		out_of_memory(n);
	return p;
}

void *lh_xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)	/* calloc refuses a product that overflows: say the size it could not have */
		out_of_memory(nmemb && size > SIZE_MAX / nmemb ? SIZE_MAX : nmemb * size);
	return p;
}

void *lh_xzalloc_lines(size_t n)
{
	size_t m = n ? (n + 63) & ~(size_t)63 : 64;	/* aligned_alloc: a multiple of the alignment */
	void *p = m >= n ? aligned_alloc(64, m) : NULL;

	if (!p)
		out_of_memory(n);
	return memset(p, 0, m);
}

void *lh_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		out_of_memory(n);
	return q;
}

static inline int tmr_less(const struct lh_tmr *a, const struct lh_tmr *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

void lh_theap_push(struct lh_theap *h, uint64_t at, uint64_t cookie)
{
	struct lh_tmr x = { .at = at, .seq = h->seq++, .cookie = cookie };
	size_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 64;
		h->v = lh_xrealloc(h->v, h->cap * sizeof(*h->v));
	}
	i = h->n++;
	while (i && tmr_less(&x, &h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = x;
}

struct lh_tmr lh_theap_pop(struct lh_theap *h)
{
	struct lh_tmr top = h->v[0], x = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && tmr_less(&h->v[c + 1], &h->v[c]))
			c++;
		if (!tmr_less(&h->v[c], &x))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = x;
	return top;
}

void lh_theap_free(struct lh_theap *h)
{
	free(h->v);
	*h = (struct lh_theap){ 0 };
}
