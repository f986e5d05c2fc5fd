// SPDX-License-Identifier: MIT
/*
 * DOC: event.c - binary min-heap of events on (time, key). See event.h.
 */
#include "event.h"

#include <stdlib.h>

#include "util.h"

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
		h->cap *= 2;
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
