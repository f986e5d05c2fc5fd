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
#include <string.h>

#include "emu/engine/time.h"

/* Largest frame (Ethernet header + payload, no FCS) the emulator carries. */
#define EMU_FRAME_MAX 2048
#define EMU_PORT_NONE 0xffffu

/*
 * Size classes: a frame's buffer holds EMU_FCLASS_CAP(cls) bytes. A 33-byte
 * DONE frame needs no 2 KiB buffer: frames are allocated at the largest
 * class (the model does not know its length yet) and moved to the smallest
 * class that fits when they are queued for the wire (emu_send), so what
 * waits in queues and travels on links is as small as it can be. A frame
 * whose payload is padding no one reads (kept) needs room for its headers
 * only, whatever its length on the wire.
 */
enum { EMU_FCLASS_SMALL, EMU_FCLASS_CANARY, EMU_FCLASS_MTU, EMU_FCLASS_MAX, EMU_FCLASS_N };
#define EMU_FCLASS_CAPS { 128, 1088, 1536, EMU_FRAME_MAX }

struct emu_frame {
	struct emu_frame *next;	/* pool free list / egress queue link */
	emu_time_t t_sent;	/* when the frame left its last port */
	uint64_t user;		/* free for the model (e.g. creation time) */
	uint32_t len;		/* bytes on the wire */
	uint32_t gen;		/* generation of the link it travels on */
	uint16_t in_port;	/* ingress port whose buffer it holds, or EMU_PORT_NONE */
	uint16_t hops;		/* links traversed so far */
	uint8_t tc;		/* traffic class of its egress queue (engine) */
	uint8_t in_tc;		/* class of the ingress buffer it holds */
	/*
	 * 0: data[] holds all len bytes. Else only the first kept bytes are
	 * data; the rest of len is padding that no receiver reads (background
	 * traffic's payload), so the frame is stored in a class that holds
	 * kept bytes (emu_pool_fit) and a capture writes zeros for it.
	 */
	uint16_t kept;
	/*
	 * The route cache: what a forwarding switch's lookup parsed out of the
	 * bytes, for the next switches (emu_frame_route_set). rdst is the
	 * destination host's index, or EMU_RDST_NONE: not known (a fresh frame,
	 * one handed to a model's rx, or a host index rdst cannot hold); rhash
	 * the flow hash's mixed value (emu_hash64). Valid only while no one
	 * may have written the bytes since it was set.
	 */
	uint64_t rhash;
	uint16_t rdst;
	uint8_t cls;		/* size class of its buffer (pool) */
	uint8_t xpol;		/* merlin router: the routing policy of xmask (enum emu_routing) */
	uint16_t xin;		/* merlin router: the input port it arrived on, or EMU_PORT_NONE */
	uint16_t xout;		/* merlin router: the output port it waits for (until routed: the natural one) */
	uint64_t xmask;		/* merlin router: ports to choose from at the head of the input queue; 0: routed */
	uint8_t data[];		/* EMU_FCLASS_CAP(cls) bytes */
};

/* rdst's "not known"; a host index at or above it is not cached */
#define EMU_RDST_NONE 0xffffu
_Static_assert(EMU_FRAME_MAX <= UINT16_MAX, "kept (at most a buffer's bytes) fits 16 bits");

/*
 * emu_frame_route_set - cache @f's destination host index @dst and flow
 * hash's mixed value @rhash (see rdst); a @dst rdst cannot hold is not.
 */
static inline void emu_frame_route_set(struct emu_frame *f, uint32_t dst, uint64_t rhash)
{
	if (dst < EMU_RDST_NONE) {
		f->rdst = (uint16_t)dst;
		f->rhash = rhash;
	}
}

/* emu_frame_bytes - how many bytes of @f's data[] are data (see kept) */
static inline uint32_t emu_frame_bytes(const struct emu_frame *f)
{
	return f->kept && f->kept < f->len ? f->kept : f->len;
}

extern const uint32_t emu_fclass_cap[EMU_FCLASS_N];

struct emu_pool {
	struct emu_frame *free[EMU_FCLASS_N];
	void **chunks;
	size_t nchunks;
	size_t cap_chunks;
	uint64_t allocated;	/* frames carved so far */
	uint64_t bytes;		/* bytes of chunks carved so far */
	uint64_t in_use;	/* alloc - free through this pool (may go negative per pool) */
	void **spare;		/* chunks faulted in ahead (emu_pool_prefault), taken by emu_pool_grow */
	size_t nspare;
};

void emu_pool_init(struct emu_pool *p);
void emu_pool_fini(struct emu_pool *p);
void emu_pool_grow(struct emu_pool *p, unsigned cls);

/*
 * emu_pool_prefault - fault in @nchunks chunks now, for emu_pool_grow to
 * carve later. Real time: a fresh chunk's first touch (a 2 MiB huge page
 * zeroed, on a virtual machine backed by the host then) stalled a window
 * 1-6 ms; done before the run starts it costs nothing.
 */
void emu_pool_prefault(struct emu_pool *p, unsigned nchunks);

/* emu_fclass - the smallest class whose buffer holds @len bytes */
static inline unsigned emu_fclass(uint32_t len)
{
	unsigned c = EMU_FCLASS_SMALL;

	while (c < EMU_FCLASS_MAX && emu_fclass_cap[c] < len)
		c++;
	return c;
}

/* emu_pool_get_class - a frame whose buffer is of class @cls */
static inline struct emu_frame *emu_pool_get_class(struct emu_pool *p, unsigned cls)
{
	if (__builtin_expect(!p->free[cls], 0))
		emu_pool_grow(p, cls);
	struct emu_frame *f = p->free[cls];

	p->free[cls] = f->next;
	f->next = NULL;
	f->len = 0;
	f->kept = 0;
	f->rdst = EMU_RDST_NONE;
	f->in_port = EMU_PORT_NONE;
	f->xin = EMU_PORT_NONE;
	f->xmask = 0;
	f->hops = 0;
	f->user = 0;
	p->in_use++;
	return f;
}

/* emu_pool_get - a frame of the largest class (EMU_FRAME_MAX bytes) */
static inline struct emu_frame *emu_pool_get(struct emu_pool *p)
{
	return emu_pool_get_class(p, EMU_FCLASS_MAX);
}

static inline void emu_pool_put(struct emu_pool *p, struct emu_frame *f)
{
	f->next = p->free[f->cls];
	p->free[f->cls] = f;
	p->in_use--;
}

/*
 * emu_pool_fit - @f, or a copy in the smallest class that holds its bytes
 * (then @f goes back to @p). The engine header travels with the bytes.
 */
static inline struct emu_frame *emu_pool_fit(struct emu_pool *p, struct emu_frame *f)
{
	uint32_t bytes = emu_frame_bytes(f);

	/* the common case: already in the smallest class that holds it */
	if (f->cls == EMU_FCLASS_SMALL || bytes > emu_fclass_cap[f->cls - 1])
		return f;
	struct emu_frame *c = emu_pool_get_class(p, emu_fclass(bytes));

	memcpy(c, f, offsetof(struct emu_frame, cls));
	c->next = NULL;
	memcpy(c->data, f->data, bytes);
	emu_pool_put(p, f);
	return c;
}

/* struct emu_fifo - frames in a queue of their own, linked through next (a zeroed one is empty) */
struct emu_fifo {
	struct emu_frame *head, *tail;
};

/* emu_fifo_push - append @f to @q */
static inline void emu_fifo_push(struct emu_fifo *q, struct emu_frame *f)
{
	f->next = NULL;
	if (q->tail)
		q->tail->next = f;
	else
		q->head = f;
	q->tail = f;
}

/* emu_fifo_pop - take the first frame of @q (not empty) */
static inline struct emu_frame *emu_fifo_pop(struct emu_fifo *q)
{
	struct emu_frame *f = q->head;

	q->head = f->next;
	if (!q->head)
		q->tail = NULL;
	f->next = NULL;
	return f;
}

#endif /* EMU_FRAME_H */
