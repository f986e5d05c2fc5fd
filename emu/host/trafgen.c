// SPDX-License-Identifier: MIT
/*
 * DOC: trafgen.c - uniform/incast traffic generator host. See trafgen.h.
 *
 * Payload: source host index (4) | sequence (8) | send time (8), then
 * padding up to the frame size that is not stored (the frame's kept).
 */
#include "emu/host/trafgen.h"

#include <errno.h>

#include "emu/engine/fabric.h"
#include "emu/engine/util.h"
#include "libhost/wire.h"

#define TG_PORT 9000
#define TG_DATA 20	/* payload bytes that carry data */

static void tg_send(struct emu_node *n)
{
	struct emu_trafgen_state *s = emu_node_state(n);
	const struct emu_trafgen_cfg *c = s->cfg;
	const struct emu_fabric *fab = emu_engine_fabric(n->eng);
	uint32_t dst = c->dst_host;
	emu_time_t now = emu_node_now(n);

	if (dst == EMU_NONE32) {
		if (fab->nhosts < 2)
			return;
		dst = (uint32_t)emu_rng_below(emu_node_rng(n), fab->nhosts - 1);
		if (dst >= s->index)
			dst++;
	}
	uint32_t dip = emu_host_ipv4(dst);	/* computed: no random node's line read */
	uint8_t dmac[6];

	emu_host_mac(dst, dmac);
	/* only the headers and TG_DATA bytes of payload are data: the rest is padding no one reads */
	struct emu_frame *f = emu_frame_alloc_len(n, EMU_UDP_PAYLOAD_OFF + TG_DATA);

	f->len = lh_wire_udp_tmpl_put(f->data, &s->udp, dmac, dip);
	f->kept = EMU_UDP_PAYLOAD_OFF + TG_DATA;
	uint8_t *p = f->data + EMU_UDP_PAYLOAD_OFF;

	emu_put32(p, s->index);
	emu_put32(p + 4, (uint32_t)(s->sent >> 32));
	emu_put32(p + 8, (uint32_t)s->sent);
	emu_put32(p + 12, (uint32_t)(now >> 32));
	emu_put32(p + 16, (uint32_t)now);
	s->sent++;
	/* what the first switch would parse (fwd.c's route cache): the destination and the flow hash */
	emu_frame_route_set(f, dst, emu_hash64(lh_wire_flow_hash(dip, s->ipv4, (uint32_t)TG_PORT << 16 | TG_PORT)));
	if (emu_send(n, 0, f))
		s->send_fail++;
}

static void tg_next(struct emu_node *n)
{
	struct emu_trafgen_state *s = emu_node_state(n);
	const struct emu_trafgen_cfg *c = s->cfg;
	emu_time_t now = emu_node_now(n);

	if (c->count && s->sent >= c->count)
		return;
	if (c->until && now >= c->until)
		return;
	tg_send(n);
	emu_timer_at(n, now + s->gap, 0);
}

static int tg_init(struct emu_node *n, void *arg)
{
	struct emu_trafgen_state *s = emu_node_state(n);
	const struct emu_fab_node *me = emu_node_desc(n);

	s->cfg = arg;
	if (s->cfg->frame_bytes < EMU_UDP_PAYLOAD_OFF + TG_DATA || s->cfg->frame_bytes > EMU_FRAME_MAX ||
	    !(s->cfg->load > 0 && s->cfg->load <= 1))
		return -EINVAL;
	/* what every frame of this host repeats: its gap (a port's rate is fixed), its index and address, its headers */
	s->gap = (emu_time_t)((double)emu_port_tx_time(n, 0, s->cfg->frame_bytes) / s->cfg->load);
	s->index = me->index;
	s->ipv4 = me->ipv4;
	lh_wire_udp_tmpl_init(&s->udp, me->mac, me->ipv4, TG_PORT, TG_PORT, s->cfg->frame_bytes - EMU_UDP_PAYLOAD_OFF);
	if (s->cfg->dst_host == me->index)
		return 0;	/* the incast target only receives */
	/* hosts are not phase-locked: each starts at a random point of its first gap */
	emu_timer_at(n, s->cfg->start + (s->cfg->jitter ? emu_rng_below(emu_node_rng(n), s->gap) : 0), 0);
	return 0;
}

static void tg_timer(struct emu_node *n, uint64_t cookie)
{
	(void)cookie;
	tg_next(n);
}

static void tg_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct emu_trafgen_state *s = emu_node_state(n);
	uint32_t sip, dip;
	emu_time_t now = emu_node_now(n);

	(void)port;
	if (lh_wire_ipv4(f->data, f->len, &sip, &dip) != LH_WIRE_OK || dip != s->ipv4 ||
	    f->len < EMU_UDP_PAYLOAD_OFF + TG_DATA) {
		s->bad++;
		emu_frame_free(n, f);
		return;
	}
	const uint8_t *p = f->data + EMU_UDP_PAYLOAD_OFF;
	uint64_t src = emu_get32(p);
	uint64_t seq = (uint64_t)emu_get32(p + 4) << 32 | emu_get32(p + 8);
	emu_time_t sent = (emu_time_t)emu_get32(p + 12) << 32 | emu_get32(p + 16);

	s->recv++;
	s->recv_bytes += f->len;
	s->lat_sum += now - sent;
	s->last_rx = now;
	s->hash = emu_hash64(s->hash ^ now) ^ emu_hash64(src << 40 ^ seq);
	emu_frame_free(n, f);
}

const struct emu_model_ops emu_trafgen_ops = {
	.name = "trafgen",
	.state_size = sizeof(struct emu_trafgen_state),
	.init = tg_init,
	.rx = tg_rx,
	.timer = tg_timer,
};
