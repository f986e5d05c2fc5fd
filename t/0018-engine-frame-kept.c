// SPDX-License-Identifier: MIT
/*
 * DOC: frames whose payload is padding (struct emu_frame's kept): a
 * background frame of 1514 bytes on the wire keeps only its headers and
 * the 16 payload bytes libhost sets, so it waits in queues in a 128-byte
 * buffer; a Canary frame keeps every byte.
 *
 * Checks lh_frame_data_len() on libhost's frame kinds (a long background
 * frame, one too short to have padding, a Canary frame, a ring frame),
 * emu_pool_fit() moving a kept frame to the small class with its length
 * and its kept bytes intact, and the channel between processes carrying
 * only the kept bytes and rebuilding the same frame on the other side.
 */
#include <stdlib.h>
#include <string.h>

#include "emu/engine/chan.h"
#include "emu/engine/event.h"
#include "emu/engine/frame.h"
#include "libhost/canary_host.h"
#include "libhost/wire.h"
#include "tap.h"

static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 1 }, mac_b[6] = { 2, 0, 0, 0, 0, 2 };

static int any_node(void *arg, uint32_t node, uint32_t port)
{
	(void)arg;
	(void)node;
	(void)port;
	return 1;
}

static int sink_count;
static struct emu_frame *sink_frame;

static void sink(void *arg, const struct emu_ev *ev)
{
	(void)arg;
	sink_count++;
	sink_frame = ev->frame;
}

int main(void)
{
	uint8_t buf[EMU_FRAME_MAX];
	struct emu_pool pool;

	plan(17);
	emu_pool_init(&pool);

	/* libhost's frame kinds */
	uint32_t bg = lh_wire_udp(buf, mac_a, mac_b, 0x0a000001, 0x0a000002, 9000, 9000, 1472);

	is_int(bg, 1514, "a full background frame is 1514 bytes");
	is_int(lh_frame_data_len(buf, bg), EMU_UDP_PAYLOAD_OFF + 16, "...of which headers and 16 payload bytes are data");
	uint32_t bg_short = lh_wire_udp(buf, mac_a, mac_b, 0x0a000001, 0x0a000002, 9000, 9000, 16);

	is_int(lh_frame_data_len(buf, bg_short), bg_short, "a background frame of 16 payload bytes is all data");
	uint32_t ring = lh_wire_udp(buf, mac_a, mac_b, 0x0a000001, 0x0a000002, 7400, 7400, 1000);

	is_int(lh_frame_data_len(buf, ring), ring, "a ring frame (another UDP port) is all data");
	struct emu_canary_hdr h = { .dst = 0x0a000002, .id = 5, .counter = 1, .hosts = 2 };
	int32_t el[256] = { 0 };
	uint32_t can = lh_wire_canary_build(buf, mac_a, mac_b, &h, el, 256);

	is_int(lh_frame_data_len(buf, can), can, "a Canary frame is all data");

	/* a kept background frame moves to the smallest class */
	struct emu_frame *f = emu_pool_get(&pool);

	f->len = lh_wire_udp(f->data, mac_a, mac_b, 0x0a000001, 0x0a000002, 9000, 9000, 1472);
	memset(f->data + EMU_UDP_PAYLOAD_OFF, 0xab, 16);
	f->kept = lh_frame_data_len(f->data, f->len);
	f->hops = 3;
	memcpy(buf, f->data, f->kept);
	struct emu_frame *g = emu_pool_fit(&pool, f);

	is_int(g->cls, EMU_FCLASS_SMALL, "emu_pool_fit: a kept 1514-byte frame goes to the 128-byte class");
	is_int(g->len, 1514, "...its length on the wire is unchanged");
	is_int(emu_frame_bytes(g), EMU_UDP_PAYLOAD_OFF + 16, "...it holds its kept bytes");
	ok(!memcmp(g->data, buf, g->kept), "...which are intact");
	is_int(g->hops, 3, "...and so is its engine header");

	/* a frame with every byte kept stays where it fits */
	struct emu_frame *c = emu_pool_get(&pool);

	c->len = can;
	c = emu_pool_fit(&pool, c);
	is_int(c->cls, EMU_FCLASS_CANARY, "a Canary frame goes to the class that holds all its bytes");
	emu_pool_put(&pool, c);

	/* across processes: only the kept bytes travel, the frame is rebuilt alike */
	struct emu_chan *out = emu_chan_remote_create(0, 1, &pool), *in = emu_chan_remote_create(0, 1, &pool);
	struct emu_ev ev = { .t = 1000, .key = 1, .frame = g, .node = 1, .type = EMU_EV_FRAME, .port = 0 };

	out->ops->send(out, &ev);
	size_t n = emu_chan_remote_pending(out);

	is_int(n, 32 + 32 + 64, "the channel record carries the 58 kept bytes (padded to 64), not 1514");
	uint8_t *wire = malloc(n);

	emu_chan_remote_take(out, wire);
	is_int(emu_chan_remote_check(wire, n, 0, any_node, NULL), 1, "the receiver's check takes the record");
	emu_chan_remote_feed(in, wire, n);
	in->ops->drain(in, sink, NULL);
	is_int(sink_count, 1, "one frame rebuilt");
	ok(sink_frame && sink_frame->len == 1514 && sink_frame->kept == EMU_UDP_PAYLOAD_OFF + 16,
	   "...with its length and kept bytes");
	ok(sink_frame && !memcmp(sink_frame->data, buf, EMU_UDP_PAYLOAD_OFF + 16), "...and the same data");
	ok(sink_frame && sink_frame->cls == EMU_FCLASS_SMALL, "...in the small class");
	free(wire);
	if (sink_frame)
		emu_pool_put(&pool, sink_frame);
	emu_chan_destroy(out);
	emu_chan_destroy(in);
	emu_pool_fini(&pool);
	return done_testing();
}
