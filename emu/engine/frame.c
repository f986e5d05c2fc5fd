// SPDX-License-Identifier: MIT
/*
 * DOC: frame.c - chunked per-worker frame pools. See frame.h.
 */
#include "emu/engine/frame.h"

#include <stdlib.h>
#include <sys/mman.h>

#include "emu/engine/util.h"

_Static_assert(offsetof(struct emu_frame, data) == 64, "frame header is one cache line");

const uint32_t emu_fclass_cap[EMU_FCLASS_N] = EMU_FCLASS_CAPS;

_Static_assert(EMU_FRAME_MAX == 2048 && EMU_FCLASS_MAX == EMU_FCLASS_N - 1, "the largest class is EMU_FRAME_MAX");

void emu_pool_init(struct emu_pool *p)
{
	memset(p, 0, sizeof(*p));
}

void emu_pool_fini(struct emu_pool *p)
{
	for (size_t i = 0; i < p->nchunks; i++)
		free(p->chunks[i]);
	free(p->chunks);
	while (p->nspare)
		free(p->spare[--p->nspare]);
	free(p->spare);
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
		emu_out_of_memory(bytes);	/* the run does not fit: exit 2, as any allocation */
#ifdef MADV_HUGEPAGE
	madvise(c, bytes, MADV_HUGEPAGE);
#endif
	return c;
}

#define CHUNK_BYTES (2u << 20)

/* carve a 2 MiB chunk into frames of class @cls */
void emu_pool_grow(struct emu_pool *p, unsigned cls)
{
	size_t size = sizeof(struct emu_frame) + emu_fclass_cap[cls];
	size_t nframes = CHUNK_BYTES / size;
	uint8_t *c = p->nspare ? p->spare[--p->nspare] : chunk_alloc(nframes * size);

	if (p->nchunks == p->cap_chunks) {
		p->cap_chunks = p->cap_chunks ? 2 * p->cap_chunks : 16;
		p->chunks = emu_xrealloc(p->chunks, p->cap_chunks * sizeof(*p->chunks));
	}
	p->chunks[p->nchunks++] = c;
	for (size_t i = 0; i < nframes; i++) {
		struct emu_frame *f = (struct emu_frame *)(c + i * size);

		f->cls = (uint8_t)cls;
		f->next = p->free[cls];
		p->free[cls] = f;
	}
	p->allocated += nframes;
	p->bytes += nframes * size;
}

void emu_pool_prefault(struct emu_pool *p, unsigned nchunks)
{
	p->spare = emu_xrealloc(p->spare, (p->nspare + nchunks) * sizeof(*p->spare));
	for (unsigned i = 0; i < nchunks; i++) {
		uint8_t *c = chunk_alloc(CHUNK_BYTES);

		for (size_t o = 0; o < CHUNK_BYTES; o += 4096)
			((volatile uint8_t *)c)[o] = 0;
		p->spare[p->nspare++] = c;
	}
}
