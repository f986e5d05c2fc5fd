// SPDX-License-Identifier: MIT
/*
 * DOC: frame.c - chunked per-worker frame pools. See frame.h.
 */
#include "frame.h"

#include <stdlib.h>

#include "util.h"

_Static_assert(offsetof(struct emu_frame, data) == 64, "frame header is one cache line");

void emu_pool_init(struct emu_pool *p)
{
	p->free = NULL;
	p->chunks = NULL;
	p->nchunks = p->cap_chunks = 0;
	p->allocated = 0;
	p->in_use = 0;
}

void emu_pool_fini(struct emu_pool *p)
{
	for (size_t i = 0; i < p->nchunks; i++)
		free(p->chunks[i]);
	free(p->chunks);
	emu_pool_init(p);
}

void emu_pool_grow(struct emu_pool *p)
{
	struct emu_frame *c = emu_xaligned(EMU_POOL_CHUNK * sizeof(*c));

	if (p->nchunks == p->cap_chunks) {
		p->cap_chunks = p->cap_chunks ? 2 * p->cap_chunks : 16;
		p->chunks = emu_xrealloc(p->chunks, p->cap_chunks * sizeof(*p->chunks));
	}
	p->chunks[p->nchunks++] = c;
	for (size_t i = 0; i < EMU_POOL_CHUNK; i++) {
		c[i].next = p->free;
		p->free = &c[i];
	}
	p->allocated += EMU_POOL_CHUNK;
}
