// SPDX-License-Identifier: MIT
/*
 * DOC: lh_util.c - allocation that aborts (or calls the handler of
 * lh_set_out_of_memory()) on failure. See lh_util.h.
 */
#include "libhost/lh_util.h"

#include <stdio.h>
#include <stdlib.h>

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

	if (!p)
		out_of_memory(nmemb * size);
	return p;
}

void *lh_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		out_of_memory(n);
	return q;
}
