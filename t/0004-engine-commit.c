// SPDX-License-Identifier: MIT
/*
 * DOC: the data path's commitment of queued frames to the wire (port.c),
 * each case forced on a hand-built fabric: hosts H0..H4 around one switch
 * S0 that forwards on the destination and records, at every frame it
 * queues, the bytes its egress port holds that have not started
 * (emu_port_queued()).
 *
 * - One traffic class: the arrival time of every frame at its destination
 *   and every queue reading are the same whether frames are committed
 *   only when the wire is idle (the old rule), 4 KB ahead, or 1 MB ahead:
 *   commitment changes when the engine decides, not what happens. A
 *   backlog is built by two senders into one port; with a 4 KB window
 *   the switch's port is woken about once per 4 KB of backlog instead of
 *   once per frame (queue events fall).
 * - The same under lossless credits with a 4 KB buffer, where H0's frames
 *   to a fast and a slow port give buffer back out of order (the credit
 *   ring is kept in time order) and H0 waits for credit again and again.
 * - Two classes: a frame of the higher class that reaches the backlog
 *   waits behind at most the window (plus the frame on the wire), and
 *   goes first when frames are committed only when the wire is idle.
 * - A second frame of the higher class 1 us after the first: the port
 *   commits only when its wire is idle for a while (EMU_COMMIT_QUIET),
 *   so this one is served in exact strict priority even 1 MB ahead.
 * - emu_node_hold_until(): a frame sent under a hold starts no earlier.
 */
#include "helpers.h"
#include "libhost/wire.h"

#define BYTES 1000
#define NFR 20
#define MAXREC 256

struct hst {
	emu_time_t arr[MAXREC];	/* arrivals at this host, in order */
	uint32_t src[MAXREC];
	unsigned narr;
};

struct plan {
	unsigned nsend[5];	/* frames each host sends at t = 0 */
	unsigned dst[5][2];	/* ...alternating over these hosts */
	int hi_at;		/* H1 sends one higher-class frame to H3 at hi_at ns (-1: none) */
	emu_time_t hold;	/* S0 holds what it forwards by this much */
};

struct swst {
	uint64_t q[MAXREC];
	unsigned nq;
};

static const struct plan *cur;
static int run_second;	/* H1 sends a second higher-class frame at this many ns (0: none) */

static void send_to(struct emu_node *n, unsigned dsthost, bool hi)
{
	const struct emu_fabric *fab = emu_engine_fabric(n->eng);
	const struct emu_fab_node *me = emu_node_desc(n), *peer = &fab->nodes[fab->hosts[dsthost]];
	struct emu_frame *f = emu_frame_alloc(n);

	f->len = lh_wire_udp(f->data, peer->mac, me->mac, me->ipv4, peer->ipv4, 1, 1, BYTES - EMU_UDP_PAYLOAD_OFF);
	if (hi)
		f->data[EMU_ETH_HLEN + 1] = EMU_DSCP_RECOVERY << 2;
	emu_send(n, 0, f);
}

static int h_init(struct emu_node *n, void *arg)
{
	unsigned me = emu_node_desc(n)->index;

	(void)arg;
	for (unsigned i = 0; i < cur->nsend[me]; i++)
		send_to(n, cur->dst[me][i & 1], false);
	if (me == 1 && cur->hi_at >= 0)
		emu_timer_at(n, (emu_time_t)cur->hi_at * EMU_NS, 1);
	if (me == 1 && run_second)
		emu_timer_at(n, (emu_time_t)run_second * EMU_NS, 2);
	return 0;
}

static void h_timer(struct emu_node *n, uint64_t cookie)
{
	(void)cookie;
	send_to(n, 3, true);
}

static void h_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct hst *s = emu_node_state(n);
	uint32_t sip = emu_get32(f->data + EMU_ETH_HLEN + 12);

	(void)port;
	if (s->narr < MAXREC) {
		s->arr[s->narr] = emu_node_now(n);
		s->src[s->narr++] = sip;
	}
	emu_frame_free(n, f);
}

static const struct emu_model_ops h_ops = {
	.name = "h", .state_size = sizeof(struct hst), .init = h_init, .rx = h_rx, .timer = h_timer,
};

static void s_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct swst *s = emu_node_state(n);
	const struct emu_fabric *fab = emu_engine_fabric(n->eng);
	uint32_t h = emu_fabric_host_by_ip(fab, emu_get32(f->data + EMU_ETH_HLEN + 16));
	unsigned out = h;	/* host i hangs on port i */

	(void)port;
	if (cur->hold)
		emu_node_hold_until(n, emu_node_now(n) + cur->hold);
	emu_send(n, out, f);
	emu_node_hold_until(n, 0);
	if (s->nq < MAXREC)
		s->q[s->nq++] = emu_port_queued(n, out);
}

static const struct emu_model_ops s_ops = {
	.name = "s", .state_size = sizeof(struct swst), .rx = s_rx,
};

struct outcome {
	struct hst h[5];
	struct swst s;
	uint64_t qevents, hops;
};

static void run(const struct plan *pl, const struct emu_engine_cfg *base, struct outcome *o)
{
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t sw = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "S0");
	uint32_t h[5];
	char err[128];

	for (unsigned i = 0; i < 5; i++) {
		char name[8];

		snprintf(name, sizeof(name), "H%u", i);
		h[i] = emu_fabric_add_node(fab, EMU_NODE_HOST, name);
		/* H4 behind a 10 Gb/s link: a slow port beside a fast one */
		emu_fabric_add_link(fab, h[i], 0, sw, (int)i, i == 4 ? 10000000000ULL : 100000000000ULL, 300 * EMU_NS);
	}
	if (emu_fabric_finalize(fab, err, sizeof(err)))
		skip_all(err);
	struct emu_engine_cfg cfg = *base;
	struct emu_engine *eng = t_engine(fab, &cfg);

	cur = pl;
	emu_engine_set_model(eng, sw, &s_ops, NULL);
	for (unsigned i = 0; i < 5; i++)
		emu_engine_set_model(eng, h[i], &h_ops, NULL);
	emu_engine_run(eng);
	for (unsigned i = 0; i < 5; i++)
		o->h[i] = *(struct hst *)emu_node_state(emu_engine_node(eng, h[i]));
	o->s = *(struct swst *)emu_node_state(emu_engine_node(eng, sw));
	o->qevents = emu_engine_stats(eng)->queue_events;
	o->hops = emu_engine_stats(eng)->frame_hops;
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

static bool same(const struct outcome *a, const struct outcome *b)
{
	for (unsigned i = 0; i < 5; i++) {
		if (a->h[i].narr != b->h[i].narr)
			return false;
		for (unsigned k = 0; k < a->h[i].narr; k++)
			if (a->h[i].arr[k] != b->h[i].arr[k] || a->h[i].src[k] != b->h[i].src[k])
				return false;
	}
	if (a->s.nq != b->s.nq)
		return false;
	for (unsigned k = 0; k < a->s.nq; k++)
		if (a->s.q[k] != b->s.q[k])
			return false;
	return true;
}

static uint64_t qmax(const struct outcome *o)
{
	uint64_t m = 0;

	for (unsigned k = 0; k < o->s.nq; k++)
		m = o->s.q[k] > m ? o->s.q[k] : m;
	return m;
}

/* the wait of H1's higher-class frame at S0: arrival at H3 minus its arrival at S0, less its own hop */
static emu_time_t hi_wait(const struct outcome *o, const struct plan *pl, emu_time_t ft)
{
	const struct hst *d = &o->h[3];

	for (unsigned k = 0; k < d->narr; k++) {
		/* H1 sends exactly one frame: the one source seen once */
		unsigned same_src = 0;

		for (unsigned j = 0; j < d->narr; j++)
			same_src += d->src[j] == d->src[k];
		if (same_src == 1) {
			emu_time_t at_sw = (emu_time_t)pl->hi_at * EMU_NS + ft + 300 * EMU_NS;

			return d->arr[k] - at_sw - ft - 300 * EMU_NS;
		}
	}
	return EMU_TIME_INF;
}

/* run @pl committing only when idle, 4 KB and 1 MB ahead */
static void three(const struct plan *pl, const struct emu_engine_cfg *base, struct outcome o[3])
{
	struct emu_engine_cfg c = *base;

	c.commit_idle = true;
	run(pl, &c, &o[0]);
	c.commit_idle = false;
	c.commit_bytes = 4000;
	run(pl, &c, &o[1]);
	c.commit_bytes = 1 << 20;
	run(pl, &c, &o[2]);
}

/* the wait of H1's second higher-class frame (sent at run_second) at S0 */
static emu_time_t hi_wait2(const struct outcome *o, emu_time_t ft)
{
	const struct hst *d = &o->h[3];
	unsigned seen = 0;

	for (unsigned k = 0; k < d->narr; k++) {
		unsigned same_src = 0;

		for (unsigned j = 0; j < d->narr; j++)
			same_src += d->src[j] == d->src[k];
		if (same_src == 2 && ++seen == 2)
			return d->arr[k] - ((emu_time_t)run_second * EMU_NS + ft + 300 * EMU_NS) - ft - 300 * EMU_NS;
	}
	return EMU_TIME_INF;
}

int main(void)
{
	plan(12);
	emu_time_t ft = emu_tx_time(BYTES, 100000000000ULL);
	struct emu_engine_cfg lossy = { .workers = 1, .no_pin = true, .lossy = true, .buffer_bytes = 1 << 20,
					.tc_mode = EMU_TC_ONE };
	static struct outcome o[3], o0;

	/* one class, two senders into one port: a backlog of 20 frames */
	struct plan pl = { .nsend = { NFR, 0, NFR, 0, 0 }, .dst = { { 3, 3 }, { 0 }, { 3, 3 } }, .hi_at = -1 };

	three(&pl, &lossy, o);
	ok(o[0].h[3].narr == 2 * NFR && qmax(&o[0]) >= 8 * BYTES, "one class: %u frames arrive, the backlog reaches %llu B",
	   o[0].h[3].narr, (unsigned long long)qmax(&o[0]));
	ok(same(&o[0], &o[1]) && same(&o[0], &o[2]),
	   "...every arrival and every queue reading the same committed when idle, 4 KB or 1 MB ahead");
	ok(o[1].qevents < o[0].qevents && o[2].qevents < o[1].qevents,
	   "...queue events %llu (idle), %llu (4 KB), %llu (1 MB) for %llu frame-hops", (unsigned long long)o[0].qevents,
	   (unsigned long long)o[1].qevents, (unsigned long long)o[2].qevents, (unsigned long long)o[0].hops);

	/* lossless, 4 KB buffers: H0 alternates a fast and a slow port and waits for credit */
	struct plan pc = { .nsend = { NFR, 0, NFR, 0, 0 }, .dst = { { 3, 4 }, { 0 }, { 4, 3 } }, .hi_at = -1 };
	struct emu_engine_cfg cl = { .workers = 1, .no_pin = true, .buffer_bytes = 4096, .tc_mode = EMU_TC_ONE };

	three(&pc, &cl, o);
	ok(o[0].h[3].narr == NFR && o[0].h[4].narr == NFR,
	   "credits: every frame arrives (%u at the fast, %u at the slow host)", o[0].h[3].narr, o[0].h[4].narr);
	ok(same(&o[0], &o[1]) && same(&o[0], &o[2]), "...at the same times committed when idle, 4 KB or 1 MB ahead");

	/* two classes: H1's recovery-class frame reaches S0 while the backlog is long */
	struct plan ph = { .nsend = { NFR, 0, NFR, 0, 0 }, .dst = { { 3, 3 }, { 0 }, { 3, 3 } }, .hi_at = 1500 };
	struct emu_engine_cfg c2 = lossy;

	c2.tc_mode = EMU_TC_RECOVERY;
	three(&ph, &c2, o);
	emu_time_t w0 = hi_wait(&o[0], &ph, ft), w1 = hi_wait(&o[1], &ph, ft), w2 = hi_wait(&o[2], &ph, ft);
	emu_time_t win = emu_tx_time(4000, 100000000000ULL);

	ok(w0 <= ft, "priority, committed when idle: the higher class waits %.1f ns, at most the frame on the wire",
	   (double)w0 / 1e3);
	ok(w1 >= w0 && w1 <= win + ft, "...4 KB ahead: %.1f ns, at most the window (%.1f ns) and the frame on the wire",
	   (double)w1 / 1e3, (double)win / 1e3);
	ok(w2 > 10 * ft, "...1 MB ahead: %.1f ns, behind the backlog", (double)w2 / 1e3);

	/* a second higher-class frame 1 us after the first: the port commits only when idle now */
	struct plan ph2 = ph;

	ph2.hi_at = 500;	/* early: the backlog behind it comes later */
	c2.commit_idle = false;
	c2.commit_bytes = 1 << 20;
	run_second = 1500;
	run(&ph2, &c2, &o0);
	emu_time_t w3 = hi_wait2(&o0, ft);

	run_second = 0;

	ok(w3 <= ft, "...one 1 us after another, 1 MB ahead: %.1f ns, exact strict priority for a while", (double)w3 / 1e3);

	/* the switch holds what it forwards by 1 us */
	struct plan pd = { .nsend = { 1, 0, 0, 0, 0 }, .dst = { { 3, 3 } }, .hi_at = -1, .hold = 1000 * EMU_NS };

	run(&pd, &lossy, &o0);
	is_u64(o0.h[3].narr, 1, "hold: the frame arrives");
	is_u64(o0.h[3].arr[0], 2 * (ft + 300 * EMU_NS) + 1000 * EMU_NS, "...one hold later than without");
	is_u64(o0.s.q[0], BYTES, "...and counts as queued while held");
	return done_testing();
}
