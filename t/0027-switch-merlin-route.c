// SPDX-License-Identifier: MIT
/*
 * DOC: where and on what the merlin router (--router merlin, emu/engine/xbar.h)
 * routes, as SST/Merlin's hr_router does on a fat tree: a frame with a choice
 * of ports (emu_send_pick) is routed when it reaches the head of its input
 * queue, on the output buffers' free bytes of its class then.
 *
 * One switch; its hosts A and B send, Q and the candidates P0, P1, P2 (1G
 * links, so that their output buffers fill) receive. A frame flagged
 * "anycast" may leave on any of P0..P2; its natural port is topo_fattree's
 * destination rule's, the (dst % 3)-th of them (dst the host index): P1
 * for a frame addressed to P1; its flow hash would name P2. Output
 * buffers of 8000 bytes; frames of 1500.
 *
 * - the natural port: frames addressed to A, B, Q (indices 0, 1, 2) at idle
 *   buffers leave on P0, P1, P2, whatever the flow hash;
 * - the decision is taken at the head of the queue: a frame stuck behind
 *   others at A's input sees the buffers of its own time, not of its
 *   arrival (both ways: P1 loaded at arrival and drained at the head, and
 *   the reverse);
 * - the threshold: P1 kept while its free bytes are >= the threshold x the
 *   buffer (0.5 and 0.25), else the port with the most free bytes, ties to
 *   the natural port, then to the lower port;
 * - output buffers are never exceeded under an incast of anycast frames;
 * - the same results with 1 and 2 workers.
 */
#include "helpers.h"
#include "libhost/wire.h"

#define FRAME 1500
#define OBUF 8000
#define NH 6
#define MAXS 4

enum { A, B, Q, P0, P1, P2 };

struct step {
	emu_time_t t;
	uint32_t dst;		/* host index; anycast: its address (the frame may leave on any of P0..P2) */
	uint32_t count;
	bool any;
};

struct rh_cfg {
	struct step step[MAXS];
	unsigned nstep;
};

struct rh_state {
	const struct rh_cfg *cfg;
	uint64_t recv;
	uint64_t any;		/* anycast frames received */
};

static void rh_send(struct emu_node *n, uint32_t dst, bool any)
{
	const struct emu_fabric *fab = emu_engine_fabric(n->eng);
	const struct emu_fab_node *me = emu_node_desc(n), *peer = &fab->nodes[fab->hosts[dst]];
	struct emu_frame *f = emu_frame_alloc_len(n, FRAME);

	f->len = lh_wire_udp(f->data, peer->mac, me->mac, me->ipv4, peer->ipv4, 9000, 9000,
			      FRAME - EMU_UDP_PAYLOAD_OFF);
	emu_put32(f->data + EMU_UDP_PAYLOAD_OFF, any);
	emu_send(n, 0, f);
}

static int rh_init(struct emu_node *n, void *arg)
{
	struct rh_state *s = emu_node_state(n);

	s->cfg = arg;
	for (unsigned i = 0; s->cfg && i < s->cfg->nstep; i++)
		emu_timer_at(n, s->cfg->step[i].t, i);
	return 0;
}

static void rh_timer(struct emu_node *n, uint64_t cookie)
{
	struct rh_state *s = emu_node_state(n);
	const struct step *st = &s->cfg->step[cookie];

	for (uint32_t k = 0; k < st->count; k++)
		rh_send(n, st->dst, st->any);
}

static void rh_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct rh_state *s = emu_node_state(n);

	(void)port;
	s->recv++;
	s->any += emu_get32(f->data + EMU_UDP_PAYLOAD_OFF) != 0;
	emu_frame_free(n, f);
}

static const struct emu_model_ops rh_ops = {
	.name = "receiver",
	.state_size = sizeof(struct rh_state),
	.init = rh_init,
	.rx = rh_rx,
	.timer = rh_timer,
};

/*
 * the switch: anycast frames to any of P0..P2 by emu_send_pick, the rest by
 * the route table. The natural port is the destination's (topo_fattree's
 * rule on a leaf: the (dst % 3)-th of P0..P2), not the flow hash's: the
 * hash given names P2.
 */
struct rs_state {
	struct emu_fwd_stats st;
	uint64_t mask;
	uint64_t hash;		/* a flow hash whose port (emu_route_pick, ecmp) is P2's */
};

static void rs_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct rs_state *s = emu_node_state(n);
	const struct emu_fabric *fab = emu_engine_fabric(n->eng);

	(void)port;
	if (!s->mask) {
		for (uint32_t h = P0; h <= P2; h++)
			s->mask |= emu_route(n, h);
		unsigned want = (unsigned)__builtin_ctzll(emu_route(n, P2));

		while (emu_route_pick(n, s->mask, s->hash, EMU_ROUTE_ECMP) != want)
			s->hash++;
		(void)fab;
	}
	if (emu_get32(f->data + EMU_UDP_PAYLOAD_OFF))
		emu_send_pick(n, s->mask, s->hash, EMU_ROUTE_ADAPTIVE, f);
	else
		emu_fwd_forward(n, f, &s->st);
}

static const struct emu_model_ops rs_ops = {
	.name = "anycast",
	.state_size = sizeof(struct rs_state),
	.rx = rs_rx,
};

#define G100 100000000000ULL
#define G1 1000000000ULL
#define LAT (100 * EMU_NS)

static struct emu_fabric *star(void)
{
	static const uint64_t rate[NH] = { G100, G100, G1, G1, G1, G1 };
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t sw = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "S0");
	char name[16], err[256];

	for (unsigned h = 0; h < NH; h++) {
		snprintf(name, sizeof(name), "H%u", h);
		uint32_t id = emu_fabric_add_node(fab, EMU_NODE_HOST, name);

		emu_fabric_add_link(fab, id, -1, sw, -1, rate[h], LAT);
	}
	if (emu_fabric_finalize(fab, err, sizeof(err))) {
		diag("fabric: %s", err);
		exit(1);
	}
	return fab;
}

/* the anycast frames each of P0, P1, P2 received (@got), and the switch's highest output buffer (@peak) */
struct outcome {
	uint64_t got[3];
	uint64_t recv;
	uint64_t peak;
};

static struct outcome run(struct rh_cfg *hc, double thresh, unsigned workers)
{
	struct emu_fabric *fab = star();
	struct emu_engine_cfg cfg = {
		.workers = workers, .seed = 1, .router = EMU_ROUTER_MERLIN, .obuf_bytes = OBUF,
		.adaptive_threshold = thresh,
	};
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct outcome o;

	memset(&o, 0, sizeof(o));

	for (uint32_t i = 0; i < fab->nnodes; i++) {
		const struct emu_fab_node *fn = &fab->nodes[i];

		if (fn->kind == EMU_NODE_SWITCH)
			emu_engine_set_model(eng, i, &rs_ops, NULL);
		else
			emu_engine_set_model(eng, i, &rh_ops, &hc[fn->index]);
	}
	emu_engine_run(eng);
	for (unsigned h = 0; h < NH; h++) {
		const struct rh_state *s = emu_node_state(emu_engine_node(eng, fab->hosts[h]));

		if (h >= P0)
			o.got[h - P0] = s->any;
		o.recv += s->recv;
	}
	for (uint32_t i = 0; i < fab->nnodes; i++) {
		struct emu_node *n = emu_engine_node(eng, i);

		if (fab->nodes[i].kind != EMU_NODE_SWITCH)
			continue;
		for (unsigned p = 0; p < n->nports; p++)
			if (n->ports[p].q_peak_bytes > o.peak)
				o.peak = n->ports[p].q_peak_bytes;
	}
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
	return o;
}

/* which of P0..P2 took the single anycast frame: 0..2, or -1 */
static int took(const struct outcome *o)
{
	for (int i = 0; i < 3; i++)
		if (o->got[i] == 1 && o->got[(i + 1) % 3] + o->got[(i + 2) % 3] == 0)
			return i;
	return -1;
}

/*
 * Head of the queue. A queues 7 frames for Q, then the anycast frame X.
 * Q's output buffer takes 5 after the one on its wire: the 7th waits at the
 * head of A's input until Q's wire is done with its first (12 us at 1G),
 * and X behind it. @late: B loads P1 at 5 us (after X arrived, before it
 * reaches the head), else at 0 (at X's arrival P1's buffer holds 3 frames,
 * at its head 2). Return the port X took.
 */
static int head_case(bool late, unsigned workers, struct outcome *out)
{
	struct rh_cfg hc[NH];

	memset(hc, 0, sizeof(hc));
	hc[A] = (struct rh_cfg){ .step = { { .t = 1 * EMU_US, .dst = Q, .count = 7 },
					   { .t = 1 * EMU_US, .dst = P1, .count = 1, .any = true } }, .nstep = 2 };
	hc[B] = (struct rh_cfg){ .step = { { .t = late ? 5 * EMU_US : 0, .dst = P1, .count = 4 } }, .nstep = 1 };
	*out = run(hc, 0, workers);
	return took(out);
}

/*
 * Threshold and ties. B fills P0, P1, P2's buffers with @load[i] frames
 * each (one more goes on the wire), then at 3 us A sends X. Return the
 * port X took.
 */
static int load_case(const unsigned load[3], double thresh, unsigned workers, struct outcome *out)
{
	struct rh_cfg hc[NH];

	memset(hc, 0, sizeof(hc));
	hc[A] = (struct rh_cfg){ .step = { { .t = 3 * EMU_US, .dst = P1, .count = 1, .any = true } }, .nstep = 1 };
	for (unsigned i = 0; i < 3; i++)
		if (load[i])
			hc[B].step[hc[B].nstep++] = (struct step){ .t = 0, .dst = P0 + i, .count = load[i] + 1 };
	*out = run(hc, thresh, workers);
	return took(out);
}

/* Natural port: X addressed to host @dst at 3 us, every buffer idle. Return the port X took. */
static int dest_case(uint32_t dst, unsigned workers, struct outcome *out)
{
	struct rh_cfg hc[NH];

	memset(hc, 0, sizeof(hc));
	hc[A] = (struct rh_cfg){ .step = { { .t = 3 * EMU_US, .dst = dst, .count = 1, .any = true } }, .nstep = 1 };
	*out = run(hc, 0, workers);
	return took(out);
}

static const char *pname(int i)
{
	return i == 0 ? "P0" : i == 1 ? "P1" : i == 2 ? "P2" : "none";
}

static void cases(unsigned workers, struct outcome all[12])
{
	int k;

	for (uint32_t d = A; d <= Q; d++) {
		k = dest_case(d, workers, &all[9 + d]);
		is_int(k, (int)d, "%u workers: idle buffers: X addressed to host %u leaves on its destination's natural "
		       "port %s, not the hash's P2 (took %s)", workers, d, pname((int)d), pname(k));
	}

	k = head_case(false, workers, &all[0]);
	is_int(k, 1, "%u workers: P1 loaded when X arrives, drained to 2 frames (5000 B free of 8000) when it reaches "
	       "the head of its input queue: X keeps its natural port P1 (took %s)", workers, pname(k));
	k = head_case(true, workers, &all[1]);
	is_int(k, 0, "%u workers: P1 idle when X arrives, 3 frames (3500 B free) when it reaches the head: X leaves on "
	       "P0, the lower of the two idle ports (took %s)", workers, pname(k));

	static const unsigned l_keep[3] = { 0, 2, 0 }, l_div[3] = { 0, 3, 0 }, l_tie[3] = { 3, 3, 3 },
			      l_most[3] = { 2, 3, 1 }, l_full[3] = { 0, 5, 3 };

	k = load_case(l_keep, 0, workers, &all[2]);
	is_int(k, 1, "%u workers: threshold 0.5: P1 with 5000 of 8000 B free is kept (took %s)", workers, pname(k));
	k = load_case(l_div, 0, workers, &all[3]);
	is_int(k, 0, "%u workers: threshold 0.5: P1 with 3500 B free is left for the lower of the idle ports (took %s)",
	       workers, pname(k));
	k = load_case(l_div, 0.25, workers, &all[4]);
	is_int(k, 1, "%u workers: threshold 0.25: P1 with 3500 B free is kept (took %s)", workers, pname(k));
	k = load_case(l_tie, 0, workers, &all[5]);
	is_int(k, 1, "%u workers: all three with 3500 B free: ties go to the natural port P1 (took %s)", workers,
	       pname(k));
	k = load_case(l_most, 0, workers, &all[6]);
	is_int(k, 2, "%u workers: P1 3500, P0 5000, P2 6500 B free: the most free, P2, not the first above the "
	       "threshold (took %s)", workers, pname(k));
	k = load_case(l_full, 0, workers, &all[7]);
	is_int(k, 0, "%u workers: P1 full (500 B free), P2 3500, P0 idle: P0 (took %s)", workers, pname(k));
}

/* An incast: A and B each send 60 anycast frames at once; every output buffer stays within its 8000 bytes. */
static void incast(unsigned workers, struct outcome *o)
{
	struct rh_cfg hc[NH];

	memset(hc, 0, sizeof(hc));
	hc[A] = (struct rh_cfg){ .step = { { .t = 0, .dst = P1, .count = 60, .any = true } }, .nstep = 1 };
	hc[B] = (struct rh_cfg){ .step = { { .t = 0, .dst = P1, .count = 60, .any = true }, { .t = 0, .dst = Q, .count = 20 } },
				 .nstep = 2 };
	*o = run(hc, 0, workers);
	ok(o->recv == 140 && o->got[0] + o->got[1] + o->got[2] == 120 && o->got[0] && o->got[1] && o->got[2],
	   "%u workers: an anycast incast of 120 frames: all delivered, spread over P0/P1/P2 (%llu/%llu/%llu)", workers,
	   (unsigned long long)o->got[0], (unsigned long long)o->got[1], (unsigned long long)o->got[2]);
	ok(o->peak <= OBUF && o->peak > OBUF - FRAME,
	   "%u workers: output buffers filled and never exceeded: peak %llu of %d B", workers,
	   (unsigned long long)o->peak, OBUF);
}

int main(void)
{
	struct outcome w1[12], w2[12];

	plan(2 * (3 + 8 + 2) + 1);
	cases(1, w1);
	incast(1, &w1[8]);
	cases(2, w2);
	incast(2, &w2[8]);
	ok(!memcmp(w1, w2, sizeof(w1)), "the same outcomes with 1 and 2 workers");
	return done_testing();
}
