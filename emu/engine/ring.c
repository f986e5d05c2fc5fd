// SPDX-License-Identifier: MIT
/*
 * DOC: ring.c - creation and destruction of SPSC rings. See ring.h.
 */
#include "emu/engine/ring.h"

#include <stdlib.h>

struct emu_ring *emu_ring_create(uint32_t count)
{
	uint32_t size = 1;

	if (count == 0 || count > (1u << 30))
		return NULL;
	while (size < count)
		size <<= 1;
	struct emu_ring *r = emu_xaligned(sizeof(*r));

	r->size = size;
	r->mask = size - 1;
	r->slot = emu_xaligned((size_t)size * sizeof(struct emu_ev));
	atomic_init(&r->tail, 0);
	atomic_init(&r->head, 0);
	return r;
}

void emu_ring_destroy(struct emu_ring *r)
{
	if (!r)
		return;
	free(r->slot);
	free(r);
}
