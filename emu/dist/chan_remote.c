// SPDX-License-Identifier: MIT
/*
 * DOC: chan_remote.c - the channel to and from a worker in another process.
 *
 * The producer serializes every event into a byte buffer; dist.c carries
 * the buffers of a window in one ZeroMQ message per pair of ranks; the
 * consumer rebuilds the events. A record (little-endian, 8-byte aligned):
 *
 *   u64 t, u64 key, u64 arg, u32 node, u16 type, u16 port     (32 bytes)
 *   FRAME only: u64 t_sent, u64 user, u32 len, u32 gen, u16 hops,
 *               u8 traffic class, 1 byte zero, u32 kept, then the
 *               frame's data bytes
 *               (len, or kept when 0 < kept < len) padded to 8  (32 + bytes)
 *
 * Frames are copied out and given back to the producer's pool at send(),
 * and drawn from the consumer's pool at drain(), so no pointer ever
 * crosses a process. Received bytes are checked in full
 * (emu_chan_remote_check) before any is used.
 */
#include <stdlib.h>
#include <string.h>

#include "emu/engine/chan.h"
#include "emu/engine/engine.h"
#include "emu/engine/frame.h"
#include "emu/engine/util.h"

struct rec {
	uint64_t t;
	uint64_t key;
	uint64_t arg;
	uint32_t node;
	uint16_t type;
	uint16_t port;
};

struct frec {
	uint64_t t_sent;
	uint64_t user;
	uint32_t len;
	uint32_t gen;
	uint16_t hops;
	uint8_t tc;	/* the class it was sent in: its ingress buffer's (port.c) */
	uint8_t pad;
	uint32_t kept;
};

/* bytes of data a frame record carries */
static uint32_t frec_bytes(const struct frec *fr)
{
	return fr->kept && fr->kept < fr->len ? fr->kept : fr->len;
}

_Static_assert(sizeof(struct rec) == 32 && sizeof(struct frec) == 32, "record layout");

struct chan_remote {
	struct emu_chan chan;
	struct emu_pool *pool;
	uint8_t *buf;
	size_t len;
	size_t cap;
	uint64_t min_t;
	const uint8_t *in;
	size_t inlen;
};

#define PAD8(n) (((n) + 7) & ~(size_t)7)

static void rm_send(struct emu_chan *c, const struct emu_ev *ev)
{
	struct chan_remote *cr = (struct chan_remote *)c;
	size_t need = sizeof(struct rec);

	if (ev->type == EMU_EV_FRAME)
		need += sizeof(struct frec) + PAD8(emu_frame_bytes(ev->frame));
	if (cr->len + need > cr->cap) {
		cr->cap = cr->cap ? 2 * cr->cap : 65536;
		while (cr->len + need > cr->cap)
			cr->cap *= 2;
		cr->buf = emu_xrealloc(cr->buf, cr->cap);
	}
	uint8_t *p = cr->buf + cr->len;
	struct rec r = {
		.t = ev->t, .key = ev->key, .arg = ev->type == EMU_EV_FRAME ? 0 : ev->arg,
		.node = ev->node, .type = ev->type, .port = ev->port,
	};

	memcpy(p, &r, sizeof(r));
	p += sizeof(r);
	if (ev->type == EMU_EV_FRAME) {
		struct emu_frame *f = ev->frame;
		struct frec fr = {
			.t_sent = f->t_sent, .user = f->user, .len = f->len, .gen = f->gen, .hops = f->hops, .tc = f->tc,
			.kept = f->kept,
		};
		uint32_t bytes = emu_frame_bytes(f);

		memcpy(p, &fr, sizeof(fr));
		p += sizeof(fr);
		memcpy(p, f->data, bytes);
		memset(p + bytes, 0, PAD8(bytes) - bytes);
		emu_pool_put(cr->pool, f);
	}
	cr->len += need;
	if (ev->t < cr->min_t)
		cr->min_t = ev->t;
	c->sent++;
}

static void rm_flush(struct emu_chan *c)
{
	(void)c;
}

static size_t rm_drain(struct emu_chan *c, emu_chan_sink sink, void *arg)
{
	struct chan_remote *cr = (struct chan_remote *)c;
	const uint8_t *p = cr->in, *end = cr->in + cr->inlen;
	size_t n = 0;

	while (p < end) {
		struct rec r;
		struct emu_ev ev;

		memcpy(&r, p, sizeof(r));
		p += sizeof(r);
		ev.t = r.t;
		ev.key = r.key;
		ev.node = r.node;
		ev.type = r.type;
		ev.port = r.port;
		if (r.type == EMU_EV_FRAME) {
			struct frec fr;

			memcpy(&fr, p, sizeof(fr));
			p += sizeof(fr);
			uint32_t bytes = frec_bytes(&fr);
			struct emu_frame *f = emu_pool_get_class(cr->pool, emu_fclass(bytes));

			f->t_sent = fr.t_sent;
			f->user = fr.user;
			f->len = fr.len;
			f->kept = fr.kept;
			f->gen = fr.gen;
			f->hops = fr.hops;
			f->tc = fr.tc;
			memcpy(f->data, p, bytes);
			p += PAD8(bytes);
			ev.frame = f;
		} else {
			ev.arg = r.arg;
		}
		sink(arg, &ev);
		n++;
	}
	cr->in = NULL;
	cr->inlen = 0;
	return n;
}

static void rm_destroy(struct emu_chan *c)
{
	struct chan_remote *cr = (struct chan_remote *)c;

	free(cr->buf);
	free(cr);
}

static const struct emu_chan_ops chan_remote_ops = {
	.name = "remote",
	.send = rm_send,
	.flush = rm_flush,
	.drain = rm_drain,
	.destroy = rm_destroy,
};

struct emu_chan *emu_chan_remote_create(uint32_t from, uint32_t to, struct emu_pool *pool)
{
	struct chan_remote *cr = emu_xcalloc(1, sizeof(*cr));

	cr->chan.ops = &chan_remote_ops;
	cr->chan.from = from;
	cr->chan.to = to;
	cr->pool = pool;
	cr->min_t = UINT64_MAX;
	return &cr->chan;
}

size_t emu_chan_remote_pending(const struct emu_chan *c)
{
	return ((const struct chan_remote *)c)->len;
}

uint64_t emu_chan_remote_min_time(const struct emu_chan *c)
{
	return ((const struct chan_remote *)c)->min_t;
}

void emu_chan_remote_take(struct emu_chan *c, uint8_t *buf)
{
	struct chan_remote *cr = (struct chan_remote *)c;

	if (cr->len)
		memcpy(buf, cr->buf, cr->len);
	cr->len = 0;
	cr->min_t = UINT64_MAX;
}

long emu_chan_remote_check(const uint8_t *p, size_t len, uint64_t not_before,
			   int (*ok_node)(void *arg, uint32_t node, uint32_t port), void *arg)
{
	const uint8_t *end = p + len;
	long n = 0;

	if (len % 8)
		return -1;
	while (p < end) {
		struct rec r;

		if ((size_t)(end - p) < sizeof(r))
			return -1;
		memcpy(&r, p, sizeof(r));
		p += sizeof(r);
		if (r.t < not_before || !ok_node(arg, r.node, r.port))
			return -1;
		if (r.type == EMU_EV_FRAME) {
			struct frec fr;

			if ((size_t)(end - p) < sizeof(fr))
				return -1;
			memcpy(&fr, p, sizeof(fr));
			p += sizeof(fr);
			if (fr.len > EMU_FRAME_MAX || fr.tc >= EMU_TC_N || (size_t)(end - p) < PAD8(frec_bytes(&fr)))
				return -1;
			p += PAD8(frec_bytes(&fr));
		} else if (r.type != EMU_EV_CREDIT) {
			return -1;	/* only frames and credits cross links */
		}
		n++;
	}
	return n;
}

void emu_chan_remote_feed(struct emu_chan *c, const uint8_t *p, size_t len)
{
	struct chan_remote *cr = (struct chan_remote *)c;

	cr->in = p;
	cr->inlen = len;
}
