// SPDX-License-Identifier: MIT
/*
 * DOC: the fast variant of a port (one class, or two) still tests the MTU
 * and the class. H0 - S0 - H1, MTU 1500 to S0 and 1000 from S0 (the
 * forwarding switch sends with its route op, the arrival's inline
 * emu_send()). While the run goes, on fast ports, H0 sends frames of
 * 1514 (its largest), 1515 (too large: -EMSGSIZE, drops_mtu), 1014 and
 * 1015 bytes, and one of class 1 under two classes; S0 drops the two
 * that exceed its 1014 (drops_mtu) and forwards the rest; H1 receives
 * them in order, each with the class it was sent with. And the queue's
 * high-water mark counts the frames committed ahead that have not
 * started, not those that have: H0 sends 100 B three times (the last
 * two committed ahead: 200), later, its wire idle, 1000 B (1000: the
 * committed ones have all started), then 1000 B and 500 B (1500).
 * emu_send_copies(), under one class and two: S0 - H0..H3, H0 sends
 * 300 B of class 1 (recovery DSCP), 200 B, 100 B and 400 B of class 0;
 * S0 (rx) sends the first two on ports 1-3, the third on none (freed)
 * and the fourth on 1 and 9 (no such port: the last, the frame itself,
 * dropped). H1 gets 300, 200, 400 B, H2 and H3 300 and 200 B, each with
 * its class and its bytes; S0's ingress buffer is all given back and no
 * frame is left allocated.
 */
#include <errno.h>

#include "emu/engine/engine_internal.h"
#include "helpers.h"
#include "libhost/wire.h"

#define MAXF 8

struct st {
	uint32_t len[MAXF];
	uint8_t tc[MAXF];
	unsigned n;
	int rc[MAXF];
	unsigned nsent;
	uint8_t variant;	/* of H0's port when it sent */
};

static const uint32_t sizes[] = { 1514, 1515, 1014, 1015, 60, 200 };

static int snd_init(struct emu_node *n, void *arg)
{
	(void)arg;
	if (emu_node_desc(n)->index == 0)
		emu_timer_at(n, EMU_NS, 0);	/* during the run: the ports' variants are set */
	return 0;
}

static void snd_timer(struct emu_node *n, uint64_t cookie)
{
	struct st *s = emu_node_state(n);
	const struct emu_fabric *fab = emu_engine_fabric(n->eng);
	const struct emu_fab_node *me = emu_node_desc(n), *peer = &fab->nodes[fab->hosts[1]];

	(void)cookie;
	s->variant = n->ports[0].variant;
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct emu_frame *f = emu_frame_alloc(n);
		/* the last one of class 1 under two classes (EMU_TC_RECOVERY: its DSCP) */
		unsigned dscp = i == sizeof(sizes) / sizeof(sizes[0]) - 1 ? EMU_DSCP_RECOVERY : 0;

		f->len = lh_wire_udp_dscp(f->data, peer->mac, me->mac, me->ipv4, peer->ipv4, 1, 1,
					  sizes[i] - EMU_UDP_PAYLOAD_OFF, dscp);
		s->rc[s->nsent++] = emu_send(n, 0, f);
	}
}

static const uint32_t burst[][3] = { { 100, 100, 100 }, { 1000, 0, 0 }, { 1000, 500, 0 } };

/* the bursts above: the first at 1 ns, the other two at 10 us; the peak after each */
static void peak_timer(struct emu_node *n, uint64_t cookie)
{
	struct st *s = emu_node_state(n);
	const struct emu_fabric *fab = emu_engine_fabric(n->eng);
	const struct emu_fab_node *me = emu_node_desc(n), *peer = &fab->nodes[fab->hosts[1]];

	for (uint64_t b = cookie; b < (cookie ? 3 : 1); b++) {
		for (unsigned i = 0; i < 3 && burst[b][i]; i++) {
			struct emu_frame *f = emu_frame_alloc(n);

			f->len = lh_wire_udp(f->data, peer->mac, me->mac, me->ipv4, peer->ipv4, 1, 1,
					     burst[b][i] - EMU_UDP_PAYLOAD_OFF);
			s->rc[s->nsent++] = emu_send(n, 0, f);
		}
		s->len[b] = (uint32_t)n->ports[0].q_peak_bytes;
	}
	if (!cookie)
		emu_timer_at(n, 10 * EMU_US, 1);
}

static void rec_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct st *s = emu_node_state(n);

	(void)port;
	if (s->n < MAXF) {
		s->len[s->n] = f->len;
		s->tc[s->n++] = f->tc;
	}
	emu_frame_free(n, f);
}

static const struct emu_model_ops sender_ops = {
	.name = "sender", .state_size = sizeof(struct st), .init = snd_init, .rx = rec_rx, .timer = snd_timer,
};

static const struct emu_model_ops peak_ops = {
	.name = "peak", .state_size = sizeof(struct st), .init = snd_init, .rx = rec_rx, .timer = peak_timer,
};

static struct emu_fabric *line(void)
{
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t s0 = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "S0");
	uint32_t h0 = emu_fabric_add_node(fab, EMU_NODE_HOST, "H0");
	uint32_t h1 = emu_fabric_add_node(fab, EMU_NODE_HOST, "H1");
	char err[128];

	emu_fabric_add_link(fab, h0, 0, s0, 0, 100000000000ULL, 100 * EMU_NS);
	fab->links[emu_fabric_add_link(fab, h1, 0, s0, 1, 100000000000ULL, 100 * EMU_NS)].mtu = 1000;
	if (emu_fabric_finalize(fab, err, sizeof(err))) {
		diag("%s", err);
		exit(1);
	}
	return fab;
}

static void run(enum emu_tc_mode mode)
{
	struct emu_fabric *fab = line();
	uint32_t s0 = emu_fabric_find(fab, "S0"), h0 = emu_fabric_find(fab, "H0"), h1 = emu_fabric_find(fab, "H1");
	const char *m = emu_tc_mode_names[mode];
	struct emu_engine_cfg cfg = { .workers = 1, .tc_mode = mode };
	struct emu_engine *eng = t_engine(fab, &cfg);

	emu_engine_set_model(eng, s0, &emu_fwd_ops, NULL);
	emu_engine_set_model(eng, h0, &sender_ops, NULL);
	emu_engine_set_model(eng, h1, &sender_ops, NULL);
	emu_engine_run(eng);

	struct emu_node *nh0 = emu_engine_node(eng, h0), *ns0 = emu_engine_node(eng, s0);
	const struct st *snd = emu_node_state(nh0), *rcv = emu_node_state(emu_engine_node(eng, h1));
	unsigned fast = mode == EMU_TC_ONE ? EMU_PORT_FAST_ONE : EMU_PORT_FAST_TC;

	ok(snd->variant == fast && ns0->ports[1].variant == fast, "%s: H0's and S0's ports are fast (%u, %u)", m,
	   snd->variant, ns0->ports[1].variant);
	ok(snd->nsent == 6 && snd->rc[0] == 0 && snd->rc[1] == -EMSGSIZE && snd->rc[2] == 0 && snd->rc[3] == 0 &&
		   snd->rc[4] == 0 && snd->rc[5] == 0,
	   "%s: H0 sends 1514 B, not 1515 B (-EMSGSIZE): %d %d %d %d %d %d", m, snd->rc[0], snd->rc[1], snd->rc[2],
	   snd->rc[3], snd->rc[4], snd->rc[5]);

	struct emu_port_stats p0 = emu_port_stats(&nh0->ports[0]), p1 = emu_port_stats(&ns0->ports[1]);

	ok(p0.drops_mtu == 1 && p0.tx_frames == 5, "%s: H0's port: 1 MTU drop, 5 frames sent (%llu, %llu)", m,
	   (unsigned long long)p0.drops_mtu, (unsigned long long)p0.tx_frames);
	ok(p1.drops_mtu == 2 && p1.tx_frames == 3, "%s: S0's port to H1: 2 MTU drops, 3 frames sent (%llu, %llu)", m,
	   (unsigned long long)p1.drops_mtu, (unsigned long long)p1.tx_frames);
	ok(rcv->n == 3 && rcv->len[0] == 1014 && rcv->len[1] == 60 && rcv->len[2] == 200,
	   "%s: H1 receives 1014, 60, 200 B (%u frames: %u %u %u)", m, rcv->n, rcv->len[0], rcv->len[1], rcv->len[2]);
	unsigned tc_last = mode == EMU_TC_ONE ? 0 : 1;

	ok(rcv->n == 3 && rcv->tc[0] == 0 && rcv->tc[1] == 0 && rcv->tc[2] == tc_last,
	   "%s: the classes H1 sees: 0 0 %u (%u %u %u)", m, tc_last, rcv->tc[0], rcv->tc[1], rcv->tc[2]);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

static void run_peak(void)
{
	struct emu_fabric *fab = line();
	uint32_t s0 = emu_fabric_find(fab, "S0"), h0 = emu_fabric_find(fab, "H0"), h1 = emu_fabric_find(fab, "H1");
	struct emu_engine_cfg cfg = { .workers = 1 };
	struct emu_engine *eng = t_engine(fab, &cfg);

	emu_engine_set_model(eng, s0, &emu_fwd_ops, NULL);
	emu_engine_set_model(eng, h0, &peak_ops, NULL);
	emu_engine_set_model(eng, h1, &peak_ops, NULL);
	emu_engine_run(eng);

	const struct st *snd = emu_node_state(emu_engine_node(eng, h0));
	const struct st *rcv = emu_node_state(emu_engine_node(eng, h1));

	ok(snd->nsent == 6 && !snd->rc[0] && !snd->rc[5] && rcv->n == 6 &&
		   emu_engine_node(eng, h0)->ports[0].variant == EMU_PORT_FAST_ONE,
	   "peak: 6 frames sent and received on a fast port (%u, %u)", snd->nsent, rcv->n);
	ok(snd->len[0] == 200 && snd->len[1] == 1000 && snd->len[2] == 1500,
	   "peak: the queue's high-water mark after each burst 200 1000 1500 (%u %u %u)", snd->len[0], snd->len[1],
	   snd->len[2]);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

/* emu_send_copies(): H0 sends these to S0 (the first of class 1 under two classes) */
static const uint32_t csizes[] = { 300, 200, 100, 400 };

#define CMAX 4

struct cst {
	uint32_t len[CMAX];
	uint8_t tc[CMAX];
	uint64_t sum[CMAX];
	unsigned n;
	int rc[CMAX];
};

static void c_send(struct emu_node *n, uint64_t cookie)
{
	struct cst *s = emu_node_state(n);
	const struct emu_fabric *fab = emu_engine_fabric(n->eng);
	const struct emu_fab_node *me = emu_node_desc(n), *peer = &fab->nodes[fab->hosts[1]];

	(void)cookie;
	for (unsigned i = 0; i < CMAX; i++) {
		struct emu_frame *f = emu_frame_alloc(n);

		f->len = lh_wire_udp_dscp(f->data, peer->mac, me->mac, me->ipv4, peer->ipv4, 1, 1,
					  csizes[i] - EMU_UDP_PAYLOAD_OFF, i ? 0 : EMU_DSCP_RECOVERY);
		for (uint32_t b = EMU_UDP_PAYLOAD_OFF; b < f->len; b++)
			f->data[b] = (uint8_t)(b * 7 + i);
		s->rc[i] = emu_send(n, 0, f);
	}
}

static void c_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct cst *s = emu_node_state(n);
	uint64_t h = 1469598103934665603ULL;

	(void)port;
	for (uint32_t b = 0; b < f->len; b++)
		h = (h ^ f->data[b]) * 1099511628211ULL;
	if (s->n < CMAX) {
		s->len[s->n] = f->len;
		s->tc[s->n] = f->tc;
		s->sum[s->n++] = h;
	}
	emu_frame_free(n, f);
}

static void mc_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	(void)port;
	emu_send_copies(n, f, f->len == 100 ? 0 : f->len == 400 ? 1ULL << 1 | 1ULL << 9 : 0xeULL);
}

static const struct emu_model_ops c_host_ops = {
	.name = "c-host", .state_size = sizeof(struct cst), .init = snd_init, .rx = c_rx, .timer = c_send,
};

static const struct emu_model_ops mc_ops = { .name = "mc", .rx = mc_rx };

static void run_copies(enum emu_tc_mode mode)
{
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t s0 = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "S0"), h[4];
	const char *m = emu_tc_mode_names[mode];
	char err[128];

	for (unsigned i = 0; i < 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "H%u", i);
		h[i] = emu_fabric_add_node(fab, EMU_NODE_HOST, name);
		emu_fabric_add_link(fab, h[i], 0, s0, i, 100000000000ULL, 100 * EMU_NS);
	}
	if (emu_fabric_finalize(fab, err, sizeof(err))) {
		diag("%s", err);
		exit(1);
	}
	struct emu_engine_cfg cfg = { .workers = 1, .tc_mode = mode };
	struct emu_engine *eng = t_engine(fab, &cfg);

	emu_engine_set_model(eng, s0, &mc_ops, NULL);
	for (unsigned i = 0; i < 4; i++)
		emu_engine_set_model(eng, h[i], &c_host_ops, NULL);
	emu_engine_run(eng);

	struct emu_node *ns0 = emu_engine_node(eng, s0);
	const struct cst *snd = emu_node_state(emu_engine_node(eng, h[0]));
	const struct cst *r[3];
	unsigned c1 = mode == EMU_TC_ONE ? 0 : 1;

	for (unsigned i = 0; i < 3; i++)
		r[i] = emu_node_state(emu_engine_node(eng, h[i + 1]));
	ok(!snd->rc[0] && !snd->rc[1] && !snd->rc[2] && !snd->rc[3] && ns0->ports[1].variant != EMU_PORT_FULL,
	   "copies %s: H0 sent 4 frames, S0's ports are fast (%u)", m, ns0->ports[1].variant);
	ok(r[0]->n == 3 && r[0]->len[0] == 300 && r[0]->len[1] == 200 && r[0]->len[2] == 400 && r[1]->n == 2 &&
		   r[1]->len[0] == 300 && r[1]->len[1] == 200 && r[2]->n == 2 && r[2]->len[0] == 300 &&
		   r[2]->len[1] == 200,
	   "copies %s: H1 gets 300 200 400 B, H2 and H3 300 200 B (%u %u %u frames)", m, r[0]->n, r[1]->n, r[2]->n);
	ok(r[0]->tc[0] == c1 && r[1]->tc[0] == c1 && r[2]->tc[0] == c1 && !r[0]->tc[1] && !r[1]->tc[1] &&
		   !r[2]->tc[1] && !r[0]->tc[2],
	   "copies %s: each copy of the class-%u frame is of class %u, the others of 0 (%u %u %u, %u %u %u)", m, c1,
	   c1, r[0]->tc[0], r[1]->tc[0], r[2]->tc[0], r[0]->tc[1], r[1]->tc[1], r[2]->tc[1]);
	ok(r[0]->sum[0] == r[1]->sum[0] && r[1]->sum[0] == r[2]->sum[0] && r[0]->sum[1] == r[1]->sum[1] &&
		   r[1]->sum[1] == r[2]->sum[1] && r[0]->sum[0] != r[0]->sum[1],
	   "copies %s: the copies' bytes are the frame's", m);

	struct emu_port_stats p0 = emu_port_stats(&ns0->ports[0]);

	ok(ns0->ports[0].in_bytes == 0 && p0.rx_frames == 4 && ns0->w->pool.in_use == 0,
	   "copies %s: S0's ingress buffer given back (%llu B held), no frame left (%lld)", m,
	   (unsigned long long)ns0->ports[0].in_bytes, (long long)ns0->w->pool.in_use);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

int main(void)
{
	plan(24);
	run(EMU_TC_ONE);
	run(EMU_TC_RECOVERY);
	run_peak();
	run_copies(EMU_TC_ONE);
	run_copies(EMU_TC_RECOVERY);
	return done_testing();
}
