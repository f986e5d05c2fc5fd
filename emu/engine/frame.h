/* SPDX-License-Identifier: MIT */
/*
 * DOC: frame.h - a frame in the emulator and the per-worker frame pool.
 *
 * A frame is the real bytes on the wire (Ethernet header first, network
 * byte order) behind a small engine header. Frames come from per-worker
 * pools carved out of large chunks: no malloc per frame on the hot path.
 * A frame freed by another worker than the one that allocated it simply
 * joins the freeing worker's free list; chunks are only returned when the
 * engine is destroyed.
 *
 * The wire format itself (Ethernet, IPv4/UDP, the Canary header) is the
 * business of wire.h; this file only knows "len bytes".
 */
#ifndef EMU_FRAME_H
#define EMU_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "emu/engine/time.h"

/* Largest frame (Ethernet header + payload, no FCS) the emulator carries. */
#define EMU_FRAME_MAX 2048
#define EMU_PORT_NONE 0xffffu

struct emu_frame {
	struct emu_frame *next;	/* pool free list / egress queue link */
	emu_time_t t_sent;	/* when the frame left its last port */
	uint64_t user;		/* free for the model (e.g. creation time) */
	uint32_t len;		/* bytes in data[] */
	uint32_t gen;		/* generation of the link it travels on */
	uint16_t in_port;	/* ingress port whose buffer it holds, or EMU_PORT_NONE */
	uint16_t hops;		/* links traversed so far */
	uint8_t tc;		/* traffic class of its egress queue (engine) */
	uint8_t in_tc;		/* class of the ingress buffer it holds */
	uint8_t pad_[2];
	uint8_t pad2_[24];
	uint8_t data[EMU_FRAME_MAX];
};

struct emu_pool {
	struct emu_frame *free;
	void **chunks;
	size_t nchunks;
	size_t cap_chunks;
	uint64_t allocated;	/* frames carved so far */
	uint64_t in_use;	/* alloc - free through this pool (may go negative per pool) */
};

/* frames per chunk: 2112 B x 993 fits one 2 MiB huge page */
#define EMU_POOL_CHUNK 993

void emu_pool_init(struct emu_pool *p);
/* emu_pool_fini - free every chunk this pool carved. Frames must not be in use. */
void emu_pool_fini(struct emu_pool *p);
/* emu_pool_grow - carve a new chunk onto the free list. Cannot fail. */
void emu_pool_grow(struct emu_pool *p);

/* emu_pool_get - a frame with len 0, in_port EMU_PORT_NONE. Cannot fail. */
static inline struct emu_frame *emu_pool_get(struct emu_pool *p)
{
	if (__builtin_expect(!p->free, 0))
		emu_pool_grow(p);
	struct emu_frame *f = p->free;

	p->free = f->next;
	f->next = NULL;
	f->len = 0;
	f->in_port = EMU_PORT_NONE;
	f->hops = 0;
	f->user = 0;
	p->in_use++;
	return f;
}

static inline void emu_pool_put(struct emu_pool *p, struct emu_frame *f)
{
	f->next = p->free;
	p->free = f;
	p->in_use--;
}

#endif /* EMU_FRAME_H */
