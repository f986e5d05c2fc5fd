// SPDX-License-Identifier: MIT
/*
 * DOC: lh_util.c - allocation that aborts on failure. See lh_util.h.
 */
#include "libhost/lh_util.h"

#include <stdio.h>
#include <stdlib.h>

/* out_of_memory - one line on stderr, then abort. Never returns. */
static _Noreturn void out_of_memory(size_t n)
{
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
