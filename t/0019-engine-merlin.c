// SPDX-License-Identifier: MIT
/*
 * DOC: the merlin router model (--router merlin, emu/engine/xbar.h) on small
 * hand-built fabrics with forwarding switches and scripted hosts:
 *
 * - fair share: two inputs flooding one output get half of it each, even
 *   when one input carries two senders and the other one (per input, not
 *   per sender), under LRS and round robin;
 * - a quiet input's single frame waits at most one frame time per
 *   competing input when the output buffer holds one frame (the FIFO
 *   model makes it wait for the whole queue);
 * - head-of-line blocking: a frame for an idle output waits behind a frame
 *   of the same input for a congested output (the FIFO model does not);
 * - credits: an incast delivers everything, drops nothing, and no ingress
 *   buffer ever holds more than its size;
 * - timing: a frame reaches the next hop one latency after its first bit
 *   left under merlin (SST's links: cut-through), after its last bit under
 *   FIFO (store-and-forward);
 * - the same results with 1 and 3 workers.
 */
#include "helpers.h"
#include "libhost/wire.h"

#define FRAME 1500
#define MAXH 8
#define MAXS 3

/* a scripted host: at each step's time, queue its frames to one destination at once */
struct step {
	emu_time_t t;
	uint32_t dst;
	uint32_t count;
};

struct sh_cfg {
	struct step step[MAXS];
	unsigned nstep;
	emu_time_t w0, w1;		/* receive window for the share counts */
};

struct sh_state {
	const struct sh_cfg *cfg;
	uint64_t recv[MAXH];		/* frames received from each host */
	uint64_t win[MAXH];		/* ...of which in [w0, w1) */
	emu_time_t lat_max[MAXH];	/* largest queue-to-arrival time per source */
	uint64_t sent;
};

static void sh_send(struct emu_node *n, uint32_t dst)
{
	struct sh_state *s = emu_node_state(n);
	const struct emu_fabric *fab = emu_engine_fabric(n->eng);
	const struct emu_fab_node *me = emu_node_desc(n), *peer = &fab->nodes[fab->hosts[dst]];
	struct emu_frame *f = emu_frame_alloc_len(n, FRAME);
	emu_time_t now = emu_node_now(n);

	f->len = lh_wire_udp(f->data, peer->mac, me->mac, me->ipv4, peer->ipv4, 9000, 9000,
			      FRAME - EMU_UDP_PAYLOAD_OFF);
	uint8_t *p = f->data + EMU_UDP_PAYLOAD_OFF;

	emu_put32(p, me->index);
	emu_put32(p + 4, (uint32_t)(now >> 32));
	emu_put32(p + 8, (uint32_t)now);
	s->sent++;
	emu_send(n, 0, f);
}

static int sh_init(struct emu_node *n, void *arg)
{
	struct sh_state *s = emu_node_state(n);

	s->cfg = arg;
	for (unsigned i = 0; s->cfg && i < s->cfg->nstep; i++)
		emu_timer_at(n, s->cfg->step[i].t, i);
	return 0;
}

static void sh_timer(struct emu_node *n, uint64_t cookie)
{
	struct sh_state *s = emu_node_state(n);
	const struct step *st = &s->cfg->step[cookie];

	for (uint32_t k = 0; k < st->count; k++)
		sh_send(n, st->dst);
}

static void sh_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct sh_state *s = emu_node_state(n);
	const uint8_t *p = f->data + EMU_UDP_PAYLOAD_OFF;
	uint32_t src = emu_get32(p);
	emu_time_t sent = (emu_time_t)emu_get32(p + 4) << 32 | emu_get32(p + 8), now = emu_node_now(n);

	(void)port;
	if (src < MAXH) {
		s->recv[src]++;
		if (s->cfg && now >= s->cfg->w0 && now < s->cfg->w1)
			s->win[src]++;
		if (now - sent > s->lat_max[src])
			s->lat_max[src] = now - sent;
	}
	emu_frame_free(n, f);
}

static const struct emu_model_ops sh_ops = {
	.name = "scripted",
	.state_size = sizeof(struct sh_state),
	.init = sh_init,
	.rx = sh_rx,
	.timer = sh_timer,
};

#define G100 100000000000ULL
#define LAT (300 * EMU_NS)

/*
 * A fabric of @nsw switches in a line (S0 - S1 - ...) with @per[i] hosts on
 * switch i; host h's link runs at @rate[h] (0: 100G). Hosts are numbered in
 * switch order.
 */
static struct emu_fabric *line_fabric(unsigned nsw, const unsigned *per, const uint64_t *rate)
{
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t sw[4];
	unsigned h = 0;
	char name[16], err[256];

	for (unsigned i = 0; i < nsw; i++) {
		snprintf(name, sizeof(name), "S%u", i);
		sw[i] = emu_fabric_add_node(fab, EMU_NODE_SWITCH, name);
		if (i)
			emu_fabric_add_link(fab, sw[i - 1], -1, sw[i], -1, G100, LAT);
	}
	for (unsigned i = 0; i < nsw; i++)
		for (unsigned k = 0; k < per[i]; k++, h++) {
			snprintf(name, sizeof(name), "H%u", h);
			uint32_t id = emu_fabric_add_node(fab, EMU_NODE_HOST, name);

			emu_fabric_add_link(fab, id, -1, sw[i], -1, rate && rate[h] ? rate[h] : G100, LAT);
		}
	if (emu_fabric_finalize(fab, err, sizeof(err))) {
		diag("fabric: %s", err);
		exit(1);
	}
	return fab;
}

static struct emu_engine *plug(struct emu_fabric *fab, struct emu_engine_cfg *cfg, struct sh_cfg *hc)
{
	struct emu_engine *eng = t_engine(fab, cfg);

	for (uint32_t i = 0; i < fab->nnodes; i++) {
		const struct emu_fab_node *fn = &fab->nodes[i];

		if (fn->kind == EMU_NODE_SWITCH)
			emu_engine_set_model(eng, i, &emu_fwd_ops, NULL);
		else
			emu_engine_set_model(eng, i, &sh_ops, &hc[fn->index]);
	}
	return eng;
}

static struct sh_state *host(struct emu_engine *eng, const struct emu_fabric *fab, uint32_t h)
{
	return emu_node_state(emu_engine_node(eng, fab->hosts[h]));
}

static emu_time_t frame_time(uint64_t bps)
{
	return emu_tx_time(FRAME, bps);
}

static const char *model_name(const struct emu_engine_cfg *c)
{
	if (c->router == EMU_ROUTER_FIFO)
		return "fifo";
	return c->xbar_arb == EMU_XBAR_RR ? "merlin:rr" : "merlin:lrs";
}

/*
 * Fair share. S0 holds H0 (the target) and H1; S1 holds H2 and H3. H1
 * floods H0 through its own input of S0; H2 and H3 flood H0 through S0's
 * input from S1. Per-input arbitration gives each input half of H0's link:
 * H1 half, H2 + H3 half together.
 */
static void fair_share(enum emu_xbar_arb arb, unsigned workers, uint64_t out[3])
{
	static const unsigned per[] = { 2, 2 };
	struct emu_fabric *fab = line_fabric(2, per, NULL);
	struct emu_engine_cfg cfg = { .workers = workers, .seed = 1, .router = EMU_ROUTER_MERLIN, .xbar_arb = arb };
	struct sh_cfg hc[4] = { [0] = { .w0 = 40 * EMU_US, .w1 = 240 * EMU_US } };

	for (unsigned h = 1; h < 4; h++)
		hc[h] = (struct sh_cfg){ .step = { { .t = 0, .dst = 0, .count = 3000 } }, .nstep = 1 };
	struct emu_engine *eng = plug(fab, &cfg, hc);

	emu_engine_run(eng);
	struct sh_state *t = host(eng, fab, 0);
	uint64_t a = t->win[1], b = t->win[2] + t->win[3];
	double share = (double)a / (double)(a + b);

	ok(a + b > 1500 && share > 0.495 && share < 0.505,
	   "%s, %u workers: two inputs flooding one output get half each (quiet-side input %llu frames, "
	   "shared input %llu, share %.4f)", model_name(&cfg), workers, (unsigned long long)a, (unsigned long long)b, share);
	is_u64(t->recv[1] + t->recv[2] + t->recv[3], 9000, "%s, %u workers: every frame delivered", model_name(&cfg),
	       workers);
	out[0] = t->win[1];
	out[1] = t->win[2];
	out[2] = t->win[3];
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

/*
 * A quiet input. One switch: H1 and H2 (and H3 when @three) flood H0; at
 * 50 us, when the queues are long, H4 sends one frame to H0. Its wait at
 * the switch (its latency less the unloaded 2 latencies, + 2 frame times
 * under FIFO)
 * is at most one frame time per competing input under merlin with an output
 * buffer of one frame (2 KiB: what waits is then the crossbar's doing); under
 * FIFO it waits for the whole egress queue.
 */
static emu_time_t quiet(enum emu_router router, bool three, unsigned workers)
{
	static const unsigned per[] = { 5 };
	struct emu_fabric *fab = line_fabric(1, per, NULL);
	struct emu_engine_cfg cfg = { .workers = workers, .seed = 1, .router = router, .obuf_bytes = 2048 };
	struct sh_cfg hc[5];

	memset(hc, 0, sizeof(hc));
	unsigned ncomp = three ? 3 : 2;

	for (unsigned h = 1; h <= ncomp; h++)
		hc[h] = (struct sh_cfg){ .step = { { .t = 0, .dst = 0, .count = 1500 } }, .nstep = 1 };
	hc[4] = (struct sh_cfg){ .step = { { .t = 50 * EMU_US, .dst = 0, .count = 1 } }, .nstep = 1 };
	struct emu_engine *eng = plug(fab, &cfg, hc);

	emu_engine_run(eng);
	struct sh_state *t = host(eng, fab, 0);
	emu_time_t F = frame_time(G100), unloaded = (router == EMU_ROUTER_MERLIN ? 0 : 2 * F) + 2 * LAT;
	emu_time_t wait = t->lat_max[4] - unloaded;

	is_u64(t->recv[4], 1, "%s: the quiet frame arrived", model_name(&cfg));
	if (router == EMU_ROUTER_MERLIN)
		ok(wait <= ncomp * F, "%s, %u competing inputs, %u workers: the quiet frame waits %.1f frame times, "
		   "at most one per competing input", model_name(&cfg), ncomp, workers, (double)wait / (double)F);
	else
		ok(wait > 20 * F, "fifo, %u competing inputs: the quiet frame waits for the queue (%.1f frame times)",
		   ncomp, (double)wait / (double)F);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
	return wait;
}

/*
 * Head-of-line blocking. One switch; H0's link runs at 10G. H2 floods H0
 * from t = 0. At 20 us H1 queues one frame to H0, then one to H3 (whose
 * output is idle). Under merlin the second waits behind the first in H1's
 * input FIFO until H0's slow output takes it; under FIFO it leaves at once.
 */
static void hol(enum emu_router router)
{
	static const unsigned per[] = { 4 };
	static const uint64_t rate[] = { 10000000000ULL, 0, 0, 0 };
	struct emu_fabric *fab = line_fabric(1, per, rate);
	struct emu_engine_cfg cfg = { .workers = 1, .seed = 1, .router = router };
	struct sh_cfg hc[4];

	memset(hc, 0, sizeof(hc));

	hc[2] = (struct sh_cfg){ .step = { { .t = 0, .dst = 0, .count = 400 } }, .nstep = 1 };
	hc[1] = (struct sh_cfg){
		.step = { { .t = 20 * EMU_US, .dst = 0, .count = 1 }, { .t = 20 * EMU_US, .dst = 3, .count = 1 } },
		.nstep = 2,
	};
	struct emu_engine *eng = plug(fab, &cfg, hc);

	emu_engine_run(eng);
	emu_time_t F = frame_time(G100), slow = frame_time(10000000000ULL);
	/* the second frame leaves H1 one frame time after the first (and, under FIFO, takes two more) */
	emu_time_t unloaded = (router == EMU_ROUTER_MERLIN ? F : 3 * F) + 2 * LAT, lat = host(eng, fab, 3)->lat_max[1];

	is_u64(host(eng, fab, 3)->recv[1], 1, "%s: the frame for the idle output arrived", model_name(&cfg));
	if (router == EMU_ROUTER_MERLIN)
		ok(lat >= unloaded + F && lat <= unloaded + 2 * slow,
		   "merlin: head-of-line blocking: the frame for an idle output waited %.2f us behind one for a "
		   "congested output (unloaded %.2f us)", (double)lat / 1e6, (double)unloaded / 1e6);
	else
		is_u64(lat, unloaded, "fifo: no head-of-line blocking: the frame for an idle output is not delayed");
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

/*
 * Timing. S0 - S1 - S2 with H0 on S0 and H1 on S2; H0 sends @count frames
 * to H1 at once. Return the last one's latency; the first's must be 4
 * latencies (merlin: each hop delivers at the first bit; the crossbar adds
 * no latency) or 4 latencies and 4 frame times (FIFO).
 */
static emu_time_t timing(enum emu_router router, uint32_t count)
{
	static const unsigned per[] = { 1, 0, 1 };
	struct emu_fabric *fab = line_fabric(3, per, NULL);
	struct emu_engine_cfg cfg = { .workers = 1, .seed = 1, .router = router };
	struct sh_cfg hc[2];

	memset(hc, 0, sizeof(hc));
	hc[0] = (struct sh_cfg){ .step = { { .t = EMU_US, .dst = 1, .count = count } }, .nstep = 1 };
	struct emu_engine *eng = plug(fab, &cfg, hc);

	emu_engine_run(eng);
	emu_time_t lat = host(eng, fab, 1)->lat_max[0];

	is_u64(host(eng, fab, 1)->recv[0], count, "%s: %u frame(s) over 3 switches arrived", model_name(&cfg), count);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
	return lat;
}

/* Credits: 6 hosts flood one through one switch with small buffers; everything arrives, no buffer overflows. */
static void credits(enum emu_xbar_arb arb, unsigned workers)
{
	static const unsigned per[] = { 4, 3 };
	struct emu_fabric *fab = line_fabric(2, per, NULL);
	struct emu_engine_cfg cfg = {
		.workers = workers, .seed = 1, .router = EMU_ROUTER_MERLIN, .xbar_arb = arb, .buffer_bytes = 8192,
	};
	struct sh_cfg hc[7];

	memset(hc, 0, sizeof(hc));

	for (unsigned h = 1; h < 7; h++)
		hc[h] = (struct sh_cfg){ .step = { { .t = (h % 3) * EMU_US, .dst = 0, .count = 300 } }, .nstep = 1 };
	struct emu_engine *eng = plug(fab, &cfg, hc);

	emu_engine_run(eng);
	uint64_t recv = 0, drops = 0, peak_in = 0, stalls = 0;

	for (unsigned h = 1; h < 7; h++)
		recv += host(eng, fab, 0)->recv[h];
	for (uint32_t i = 0; i < fab->nnodes; i++) {
		struct emu_node *n = emu_engine_node(eng, i);

		for (unsigned p = 0; p < n->nports; p++) {
			const struct emu_port_stats ps = emu_port_stats(&n->ports[p]), *st = &ps;

			drops += st->drops_queue + st->drops_loss + st->drops_down + st->drops_mtu;
			stalls += st->credit_stalls;
			if (st->in_peak_bytes > peak_in)
				peak_in = st->in_peak_bytes;
			if (n->ports[p].credits[0] < 0 || n->ports[p].credits[0] > (int64_t)cfg.buffer_bytes)
				peak_in = UINT64_MAX;
		}
	}
	is_u64(recv, 6 * 300, "%s, %u workers, 8 KiB buffers: every frame delivered", model_name(&cfg), workers);
	is_u64(drops, 0, "%s: nothing dropped", model_name(&cfg));
	ok(peak_in <= cfg.buffer_bytes && peak_in > cfg.buffer_bytes / 2 && stalls > 0,
	   "%s: credits never exceeded: peak input buffer %llu of %llu, %llu credit stalls", model_name(&cfg),
	   (unsigned long long)peak_in, (unsigned long long)cfg.buffer_bytes, (unsigned long long)stalls);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

int main(void)
{
	uint64_t a[3], b[3];

	plan(2 * 4 + 1 + 2 * 5 + 1 + 2 * 2 + 3 * 3 + 4 + 4);
	fair_share(EMU_XBAR_LRS, 1, a);
	fair_share(EMU_XBAR_LRS, 3, b);
	ok(!memcmp(a, b, sizeof(a)), "merlin:lrs: the same frames in the window with 1 and 3 workers");
	fair_share(EMU_XBAR_RR, 1, a);
	fair_share(EMU_XBAR_RR, 2, b);
	quiet(EMU_ROUTER_MERLIN, false, 1);
	quiet(EMU_ROUTER_MERLIN, true, 1);
	ok(quiet(EMU_ROUTER_MERLIN, true, 3) == quiet(EMU_ROUTER_MERLIN, true, 1), "merlin: the quiet frame's wait is the same with 3 workers");
	quiet(EMU_ROUTER_FIFO, false, 1);
	hol(EMU_ROUTER_MERLIN);
	hol(EMU_ROUTER_FIFO);
	emu_time_t F = frame_time(G100);

	is_u64(timing(EMU_ROUTER_MERLIN, 1), 4 * LAT, "merlin: one frame over 3 switches takes 4 latencies (cut-through)");
	is_u64(timing(EMU_ROUTER_FIFO, 1), 4 * LAT + 4 * F,
	       "fifo: one frame over 3 switches takes 4 latencies and 4 frame times (store-and-forward)");
	/* back to back, the 10th leaves H0 9 frame times after the first; each hop's wire keeps pace */
	is_u64(timing(EMU_ROUTER_MERLIN, 10), 9 * F + 4 * LAT, "merlin: the 10th of a burst arrives 9 frame times later");
	is_u64(timing(EMU_ROUTER_FIFO, 10), 13 * F + 4 * LAT, "fifo: the 10th of a burst arrives 9 frame times later");
	credits(EMU_XBAR_LRS, 1);
	credits(EMU_XBAR_LRS, 2);
	credits(EMU_XBAR_RR, 1);
	return done_testing();
}
