// SPDX-License-Identifier: MIT
/*
 * DOC: the credits a link's ring holds when the link changes state
 * (port.c: a credit is applied only if of the link's generation). H1
 * sends to H0 at line rate, alone: its credits are plentiful, so those it
 * gets back wait in the ring of the switch port facing it (or, across
 * workers, its own) until the ring is full. The link H1-L0 goes down at
 * T1 with such credits in the ring and comes back at T2, when H1 starts
 * again from a full buffer's credit and every other host starts sending
 * to H0 too (an incast that fills the switch's ingress buffers). The
 * credits from before T1 must not add to H1's: if they did, H1 would send
 * more than the switch's ingress buffer holds. Checked: no ingress buffer
 * ever holds more than its size, and every frame is delivered or counted
 * lost on the link; on 1 and 2 workers.
 *
 * Then the credits a ring cannot hold as its 16-byte entries (port.c:
 * of another link generation, larger than a frame, or keyed by another
 * node than the ring's), as a peer process may send them: they wait
 * apart (rqx) and are applied one by one. A host X sends to a node Y
 * (a switch with a test model) that keeps every frame, with a buffer of
 * four frames; at init X's port gets, as from a channel, a credit of
 * 2 frames' bytes (larger than a frame), one of a frame keyed by X's
 * node, one of a frame of the next generation (never to be applied),
 * all due at once, and two of a frame, due at TMID and TFAR. X sends 4
 * frames (to about 490 ns), then the 3 the credits due then allow, then
 * 1 of the TMID credit (due when that head does not fit, about 850 ns),
 * then stalls with the TFAR credit still apart: that one has to become
 * an event to wake it, and X sends 1 more. So Y holds 9 frames at XEND:
 * 8 if a credit apart is lost when the port stalls, fewer if those due
 * are not applied, 10 if the other generation's is; and X's port has
 * waited for credit twice by then (before and after the TFAR credit; a
 * third time if the TMID credit was left apart once the first ones were
 * applied, so that only its event sent the frame).
 *
 * Last, the growth of a ring: it grows when applying the credits due
 * frees less than half of it (port.c, credq_full()), and no credit is
 * lost or counted twice on the way. A host A sends GN frames back to back to a
 * node B (a switch with a test model) over one long link (100 Gb/s,
 * 5 us, lossless, buffers of 256 KiB), on one worker: about 41
 * credits are on their way back at any time, and A has credit to spare,
 * so they wait in the ring of B's port until it is full. Full at 32, none
 * is due (32 frame times are under 5 us): it grows to 64; full at 64,
 * about 41 are not due (more than half): 128; full at 128, those 41 are
 * half or less: it stays at 128. From GT2 B keeps the frames it receives,
 * so A sends until its credit is spent: B then holds exactly
 * GBUF / GLEN frames if every credit of before came back once. At GT3 B
 * frees them and the rest flows. Checked: the ring's size at GT3, A's
 * frames reach B back to back until GT2 (A never waited for credit), the
 * frames B holds at GT3, no ingress buffer over its size, all GN frames
 * delivered.
 *
 * Last, the order of what stays in a ring: applying the credits due moves
 * those not due down to the ring's start (port.c, absorb_credits(), and
 * absorb_each() while credits wait apart too). A host P and a node Q (a
 * switch with a test model that keeps what it receives), 1 us apart,
 * with a buffer of four frames; at init P's port gets into Q's ring
 * four credits of a frame, in this order: due at OA, OC, OA2, OD (OA,
 * OA2 before OS; OC, OD long after). At OS P sends ON frames: 4 on its
 * buffer, then its head does not fit and the ring is applied: the OA and
 * OA2 credits send 2 more, and the OC and OD ones stay, moved to the
 * ring's first two places; the next head stalls P, and the two become
 * events. So Q receives 6 frames by OM, the 7th after OC and the 8th
 * after OD: a ring that kept the wrong entries applies a credit twice or
 * loses one (a 7th frame by OM, or no 8th). Once as it is, once with a
 * credit apart (of another generation, never applied) so that
 * absorb_each() does it.
 */
#include "helpers.h"
#include "emu/engine/port_internal.h"

#define T1 (30 * EMU_US)
#define T2 (40 * EMU_US)
#define TEND (80 * EMU_US)
#define BUF (16 * 1024)

static void run(unsigned workers)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=2,spines=1,hosts=8");
	struct emu_engine_cfg cfg = { .workers = workers, .buffer_bytes = BUF, .seed = 5 };
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct emu_trafgen_cfg tg1 = { .frame_bytes = 1500, .load = 1, .until = TEND, .dst_host = 0 };
	struct emu_trafgen_cfg tg = { .frame_bytes = 1500, .load = 1, .start = T2, .until = TEND, .dst_host = 0 };
	uint32_t link = t_link_between(fab, "H1", "L0");
	uint64_t sent = 0;

	t_plug(eng, fab, &tg);
	emu_engine_set_model(eng, fab->hosts[1], &emu_trafgen_ops, &tg1);
	ok(emu_engine_schedule_link(eng, link, T1, false) == 0 && emu_engine_schedule_link(eng, link, T2, true) == 0,
	   "%u workers: H1-L0 down at T1, up at T2", workers);
	emu_engine_run(eng);
	for (uint32_t h = 1; h < fab->nhosts; h++)
		sent += t_host_state(eng, fab, h)->sent;
	const struct emu_port_stats tot = t_port_totals(eng, fab);
	uint64_t lost = tot.drops_down, other = tot.drops_queue + tot.drops_loss + tot.drops_mtu;
	uint64_t peak_in = tot.in_peak_bytes;
	ok(peak_in <= BUF, "%u workers: peak ingress occupancy %llu <= buffer %u (no stale credit applied)", workers,
	   (unsigned long long)peak_in, BUF);
	ok(peak_in > BUF / 2, "%u workers: buffers did fill (backpressure)", workers);
	ok(lost > 0, "%u workers: frames were lost on the failed link (%llu)", workers, (unsigned long long)lost);
	is_u64(t_host_state(eng, fab, 0)->recv + lost + other, sent, "%u workers: delivered + lost = sent %llu", workers,
	       (unsigned long long)sent);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

#define XLEN 1500
#define XN 12
#define TMID (600 * EMU_NS)
#define TFAR (50 * EMU_US)
#define XEND (100 * EMU_US)

static int x_init(struct emu_node *n, void *arg)
{
	struct emu_port *p = &n->ports[0];
	uint32_t y = p->peer_node, x = n->id, gen = p->gen;
	const struct emu_ev cr[] = {
		{ .t = EMU_NS, .key = EMU_EV_KEY(y, 1), .arg = 2 * XLEN | (uint64_t)gen << 32 },	/* larger than a frame */
		{ .t = EMU_NS, .key = EMU_EV_KEY(x, 1 << 20), .arg = XLEN | (uint64_t)gen << 32 },	/* another node's key */
		{ .t = EMU_NS, .key = EMU_EV_KEY(y, 2), .arg = XLEN | (uint64_t)(gen + 1) << 32 },	/* another generation */
		{ .t = TMID, .key = EMU_EV_KEY(x, 1 << 21), .arg = XLEN | (uint64_t)gen << 32 },	/* due a little later */
		{ .t = TFAR, .key = EMU_EV_KEY(x, 1 << 22), .arg = XLEN | (uint64_t)gen << 32 },	/* due much later */
	};

	(void)arg;
	for (unsigned i = 0; i < sizeof(cr) / sizeof(cr[0]); i++) {
		struct emu_ev ev = cr[i];

		ev.node = x;
		ev.type = EMU_EV_CREDIT;
		ev.port = 0;
		emu_port_credit_in(n, &ev);
	}
	for (unsigned i = 0; i < XN; i++) {
		struct emu_frame *f = emu_frame_alloc(n);

		f->len = XLEN;
		memset(f->data, 0, XLEN);
		emu_send(n, 0, f);
	}
	return 0;
}

static const struct emu_model_ops x_ops = { .name = "x", .init = x_init };

struct yst {
	struct emu_frame *held[XN];
	unsigned nheld, at_end;
	uint64_t x_stalls;	/* X's port's credit stalls at XEND */
};

static const struct emu_port *xport;

static int y_init(struct emu_node *n, void *arg)
{
	(void)arg;
	emu_timer_at(n, XEND, 1);
	return 0;
}

static void y_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct yst *s = emu_node_state(n);

	(void)port;
	s->held[s->nheld++] = f;
}

/* at XEND: count, then let everything go */
static void y_timer(struct emu_node *n, uint64_t cookie)
{
	struct yst *s = emu_node_state(n);

	(void)cookie;
	s->at_end = s->nheld;
	s->x_stalls = xport->credit_stalls;
	while (s->nheld)
		emu_frame_free(n, s->held[--s->nheld]);
}

static const struct emu_model_ops y_ops = {
	.name = "y", .state_size = sizeof(struct yst), .init = y_init, .rx = y_rx, .timer = y_timer,
};

static void run_apart(void)
{
	struct emu_fabric *fab = emu_fabric_create();
	char err[128];
	uint32_t x = emu_fabric_add_node(fab, EMU_NODE_HOST, "X");
	uint32_t y = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "Y");

	emu_fabric_add_link(fab, x, 0, y, 0, 100000000000ULL, EMU_US);
	if (emu_fabric_finalize(fab, err, sizeof(err)))
		skip_all(err);
	struct emu_engine_cfg cfg = { .workers = 1, .no_pin = true, .buffer_bytes = 4 * XLEN, .tc_mode = EMU_TC_ONE };
	struct emu_engine *eng = t_engine(fab, &cfg);

	xport = &emu_engine_node(eng, x)->ports[0];
	emu_engine_set_model(eng, x, &x_ops, NULL);
	emu_engine_set_model(eng, y, &y_ops, NULL);
	emu_engine_run(eng);
	const struct yst *s = emu_node_state(emu_engine_node(eng, y));

	is_u64(s->at_end, 9,
	       "credits apart from the ring: 4 frames of buffer, 3 of the credits due, 1 of TMID's, 1 of TFAR's event");
	is_u64(s->x_stalls, 2, "...X waited for credit twice by then (for TFAR's, then for good)");
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

#define GLEN 1500
#define GLAT (5 * EMU_US)
#define GRATE 100000000000ULL
#define GBUF (256 * 1024)
#define GN 1200
#define GT2 (60 * EMU_US)
#define GT3 (200 * EMU_US)

struct gbst {
	struct emu_frame *held[GBUF / GLEN + 8];
	unsigned nheld, held_t3, rq_cap_t3, overflow;
	bool released;
	uint64_t recv, gaps_bad;
	emu_time_t last;
};

static int ga_init(struct emu_node *n, void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < GN; i++) {
		struct emu_frame *f = emu_frame_alloc(n);

		f->len = GLEN;
		memset(f->data, 0, GLEN);
		emu_send(n, 0, f);
	}
	return 0;
}

static void ga_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	(void)port;
	emu_frame_free(n, f);
}

static const struct emu_model_ops ga_ops = { .name = "ga", .init = ga_init, .rx = ga_rx };

static int gb_init(struct emu_node *n, void *arg)
{
	(void)arg;
	emu_timer_at(n, GT3, 1);
	return 0;
}

static void gb_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct gbst *s = emu_node_state(n);
	emu_time_t now = emu_node_now(n);

	(void)port;
	if (s->recv && now <= GT2 && now - s->last != emu_tx_time(GLEN, GRATE))
		s->gaps_bad++;
	s->recv++;
	s->last = now;
	if (now < GT2 || s->released) {
		emu_frame_free(n, f);
	} else if (s->nheld < sizeof(s->held) / sizeof(s->held[0])) {
		s->held[s->nheld++] = f;
	} else {
		s->overflow++;
		emu_frame_free(n, f);
	}
}

static void gb_timer(struct emu_node *n, uint64_t cookie)
{
	struct gbst *s = emu_node_state(n);

	(void)cookie;
	s->held_t3 = s->nheld;
	s->rq_cap_t3 = n->ports[0].rq_cap;
	s->released = true;
	while (s->nheld)
		emu_frame_free(n, s->held[--s->nheld]);
}

static const struct emu_model_ops gb_ops = {
	.name = "gb", .state_size = sizeof(struct gbst), .init = gb_init, .rx = gb_rx, .timer = gb_timer,
};

/* the growth case (see the top) */
static void run_grow(void)
{
	struct emu_fabric *fab = emu_fabric_create();
	char err[128];
	uint32_t a = emu_fabric_add_node(fab, EMU_NODE_HOST, "A");
	uint32_t b = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "B");

	emu_fabric_add_link(fab, a, 0, b, 0, GRATE, GLAT);
	if (emu_fabric_finalize(fab, err, sizeof(err)))
		skip_all(err);
	struct emu_engine_cfg cfg = { .workers = 1, .no_pin = true, .buffer_bytes = GBUF, .tc_mode = EMU_TC_ONE };
	struct emu_engine *eng = t_engine(fab, &cfg);

	emu_engine_set_model(eng, a, &ga_ops, NULL);
	emu_engine_set_model(eng, b, &gb_ops, NULL);
	emu_engine_run(eng);
	const struct gbst *s = emu_node_state(emu_engine_node(eng, b));
	struct emu_port_stats pb = emu_port_stats(&emu_engine_node(eng, b)->ports[0]);

	is_u64(s->rq_cap_t3, 128, "growth: B's ring grew past 32 and 64 (more than half not due when full), not past 128");
	is_u64(s->gaps_bad, 0, "...A's frames reach B back to back until GT2 (A never waited for credit)");
	is_u64(s->held_t3, GBUF / GLEN, "...B holds exactly buffer / frame frames at GT3: every credit came back once");
	is_u64(s->overflow, 0, "...B never held more than that");
	ok(pb.in_peak_bytes <= GBUF, "...B's ingress buffer peak %llu <= %u", (unsigned long long)pb.in_peak_bytes, GBUF);
	is_u64(s->recv, GN, "...all %u frames delivered", GN);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

#define OLEN 1500
#define ON 12
#define OA (100 * EMU_NS)
#define OA2 (200 * EMU_NS)
#define OS EMU_US
#define OM (10 * EMU_US)
#define OC (20 * EMU_US)
#define OD (30 * EMU_US)
#define OEND (50 * EMU_US)

static bool o_apart;

static int op_init(struct emu_node *n, void *arg)
{
	struct emu_port *p = &n->ports[0];
	uint32_t q = p->peer_node, gen = p->gen;
	const emu_time_t due[] = { OA, OC, OA2, OD };

	(void)arg;
	for (unsigned i = 0; i < 4u + o_apart; i++) {
		struct emu_ev ev = {
			.t = i < 4 ? due[i] : OA,
			.key = EMU_EV_KEY(q, 1 + i),
			.arg = OLEN | (uint64_t)(gen + (i == 4)) << 32,	/* the fifth: another generation, apart */
			.node = n->id,
			.type = EMU_EV_CREDIT,
			.port = 0,
		};

		emu_port_credit_in(n, &ev);
	}
	emu_timer_at(n, OS, 1);
	return 0;
}

static void op_timer(struct emu_node *n, uint64_t cookie)
{
	(void)cookie;
	for (unsigned i = 0; i < ON; i++) {
		struct emu_frame *f = emu_frame_alloc(n);

		f->len = OLEN;
		memset(f->data, 0, OLEN);
		emu_send(n, 0, f);
	}
}

static const struct emu_model_ops op_ops = { .name = "op", .init = op_init, .timer = op_timer };

struct oqst {
	struct emu_frame *held[ON];
	emu_time_t at[ON];
	unsigned nheld, by_om, at_end;
};

static int oq_init(struct emu_node *n, void *arg)
{
	(void)arg;
	emu_timer_at(n, OM, 1);
	emu_timer_at(n, OEND, 2);
	return 0;
}

static void oq_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct oqst *s = emu_node_state(n);

	(void)port;
	s->at[s->nheld] = emu_node_now(n);
	s->held[s->nheld++] = f;
}

static void oq_timer(struct emu_node *n, uint64_t cookie)
{
	struct oqst *s = emu_node_state(n);

	if (cookie == 1) {
		s->by_om = s->nheld;
		return;
	}
	s->at_end = s->nheld;
	while (s->nheld)
		emu_frame_free(n, s->held[--s->nheld]);
}

static const struct emu_model_ops oq_ops = {
	.name = "oq", .state_size = sizeof(struct oqst), .init = oq_init, .rx = oq_rx, .timer = oq_timer,
};

/* the order of what stays in a ring (see the top); @apart: with a credit apart (absorb_each()) */
static void run_order(bool apart)
{
	struct emu_fabric *fab = emu_fabric_create();
	char err[128];
	uint32_t p = emu_fabric_add_node(fab, EMU_NODE_HOST, "P");
	uint32_t q = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "Q");
	const char *how = apart ? "with a credit apart" : "ring only";

	emu_fabric_add_link(fab, p, 0, q, 0, 100000000000ULL, EMU_US);
	if (emu_fabric_finalize(fab, err, sizeof(err)))
		skip_all(err);
	struct emu_engine_cfg cfg = { .workers = 1, .no_pin = true, .buffer_bytes = 4 * OLEN, .tc_mode = EMU_TC_ONE };
	struct emu_engine *eng = t_engine(fab, &cfg);

	o_apart = apart;
	emu_engine_set_model(eng, p, &op_ops, NULL);
	emu_engine_set_model(eng, q, &oq_ops, NULL);
	emu_engine_run(eng);
	const struct oqst *s = emu_node_state(emu_engine_node(eng, q));

	is_u64(s->by_om, 6, "order, %s: 4 frames of buffer and 2 of the credits due at OS by OM", how);
	is_u64(s->at_end, 8, "...8 by the end (the OC and OD credits each once)");
	ok(s->at_end == 8 && s->at[6] > OC && s->at[6] < OD && s->at[7] > OD, "...the 7th after OC, the 8th after OD");
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

int main(void)
{
	plan(5 * 2 + 2 + 6 + 2 * 3);
	run(1);
	run(2);
	run_apart();
	run_grow();
	run_order(false);
	run_order(true);
	return done_testing();
}
