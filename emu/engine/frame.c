// SPDX-License-Identifier: MIT
/*
 * DOC: frame.c - chunked per-worker frame pools. See frame.h.
 */
#include "emu/engine/frame.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "emu/engine/util.h"

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

/*
 * Chunks are 2 MiB-aligned and advised as huge pages: frames are touched in
 * no particular order, and 4 KiB pages would cost a TLB miss per frame.
 */
static void *chunk_alloc(size_t bytes)
{
	void *c = NULL;

	if (posix_memalign(&c, 2u << 20, bytes))
		emu_die(ENOMEM);
#ifdef MADV_HUGEPAGE
	madvise(c, bytes, MADV_HUGEPAGE);
#endif
	return c;
}

void emu_pool_grow(struct emu_pool *p)
{
	struct emu_frame *c = chunk_alloc(EMU_POOL_CHUNK * sizeof(*c));

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
