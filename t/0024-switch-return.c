// SPDX-License-Identifier: MIT
/*
 * DOC: a switch that goes down and comes back. Its registers are lost:
 * the descriptors it held (whose timeouts would come due while it is
 * down) are erased and counted, and the blocks they held are recovered by
 * the hosts through their leaders. On one switch with scripted hosts:
 *  - Canary: a descriptor whose timeout falls in the down time is erased
 *    and never flushed; after the return the same block opens a new
 *    descriptor that flushes one timeout after its own first arrival;
 *    a timer of the erased descriptor that comes due after the return
 *    does not flush the new one early.
 *  - Recirculation: the frames in the pipeline are lost with the switch;
 *    a frame that arrives after the return neither waits for them nor is
 *    taken out early by the timer of a lost one (it was: the pipeline
 *    kept its busy time and a lost frame's timer took the new frame out);
 *    and it is FIFO: a frame that could be decided on arrival (FIFO
 *    model, held back by at most its own passes) waits for an earlier
 *    frame still waiting in it.
 *  - Static tree: the partial sum is erased; a block after the return
 *    aggregates all its children and nothing of before.
 * And whole runs (canary, static:1, static:2, pktgen timer) with a leaf
 * or a spine down across the first timeouts: every allreduce finishes
 * exact, through the leaders' recovery.
 */
#include "emu/scenario.h"
#include "script.h"

static struct emu_sw_cfg swc(uint32_t desc, emu_time_t timeout)
{
	struct emu_sw_cfg c = {
		.descriptors = desc, .timeout = timeout, .timer = EMU_SW_TIMER_EXACT, .passes = 1, .ports_per_pipe = 16,
	};
	return c;
}

struct run {
	struct emu_fabric *fab;
	struct emu_engine *eng;
	struct script sc[8];
};

/* run the star with S0 down over [@down, @up) (no failure if @up == 0) */
static void run_star(struct run *r, unsigned k, struct emu_sw_cfg *cfg, emu_time_t down, emu_time_t up)
{
	struct emu_engine_cfg ec = { .workers = 1, .seed = 1 };

	r->eng = t_engine(r->fab, &ec);
	emu_engine_set_model(r->eng, 0, &emu_sw_ops, cfg);
	for (unsigned i = 0; i < k; i++)
		emu_engine_set_model(r->eng, 1 + i, &script_ops, &r->sc[i]);
	if (up) {
		emu_engine_schedule_node(r->eng, 0, down, false);
		emu_engine_schedule_node(r->eng, 0, up, true);
	}
	emu_engine_run(r->eng);
}

static struct script_state *host(struct run *r, unsigned i)
{
	return emu_node_state(emu_engine_node(r->eng, 1 + i));
}

static const struct emu_sw_stats *sw(struct run *r)
{
	return emu_sw_stats_of(emu_engine_node(r->eng, 0));
}

static void done(struct run *r)
{
	emu_engine_destroy(r->eng);
	emu_fabric_destroy(r->fab);
	memset(r, 0, sizeof(*r));
}

/* a switch whose recirculation pipeline is slow: 3 passes of 1 us each, descriptor timeout @timeout */
static struct emu_sw_cfg slow_pipe(emu_time_t timeout)
{
	struct emu_sw_cfg c = swc(1024, timeout);

	c.passes = 3;
	c.pipe_gpps = 0.001;	/* a pass takes 1 us */
	return c;
}

/*
 * Pipeline order: 3 passes of 1 us, timeout 5 us. Blocks 5 (H1, 0 us) and
 * 6 (H2, 0.5 us) fill the pipeline; H3's contribution F to block 9 (1 us,
 * arriving ~1.3 us) waits as an event until its passes end at ~8.3 us; H4's
 * contribution L to block 9 (6.5 us, arriving ~6.8 us) comes behind it,
 * its passes ending at ~11.3 us. The pipeline is FIFO: L is decided after
 * F, so the sum of both leaves no earlier than L's passes end. Return the
 * leader's receive time of block 9's sum (0: not received whole).
 */
static emu_time_t pipeline_order(void)
{
	struct run r = { 0 };
	struct emu_sw_cfg c = slow_pipe(5 * EMU_US);
	emu_time_t t = 0;

	r.fab = star(5);
	uint32_t lip = r.fab->nodes[r.fab->hosts[0]].ipv4;

	r.sc[1].tx[0] = reduce_frame(0, lip, 5, 1, 2, 1, 1);
	r.sc[2].tx[0] = reduce_frame(500 * EMU_NS, lip, 6, 1, 2, 1, 1);
	r.sc[3].tx[0] = reduce_frame(1000 * EMU_NS, lip, 9, 1, 3, 5, 50);	/* block 9: the leader and H3, H4 */
	r.sc[4].tx[0] = reduce_frame(6500 * EMU_NS, lip, 9, 1, 3, 6, 60);
	r.sc[1].ntx = r.sc[2].ntx = r.sc[3].ntx = r.sc[4].ntx = 1;
	run_star(&r, 5, &c, 0, 0);
	struct script_state *L = host(&r, 0);

	for (unsigned i = 0; i < L->nrx; i++)
		if (L->rx[i].h.id == 9 && L->rx[i].h.counter == 2 && L->rx[i].d0 == 11 && L->rx[i].d1 == 110)
			t = L->rx[i].t;
	done(&r);
	return t;
}

/* the leader's receive time of block 9 sent by H2 at 1.1 us through a slow 3-pass pipeline */
static emu_time_t pipeline_case(bool fail, uint64_t *wiped)
{
	struct run r = { 0 };
	struct emu_sw_cfg c = slow_pipe(1 * EMU_US);
	emu_time_t t = 0;

	r.fab = star(3);
	uint32_t lip = r.fab->nodes[r.fab->hosts[0]].ipv4;

	if (fail) {
		/* in the pipeline (until about 2.3 us) when the switch fails at 0.5 us */
		r.sc[1].tx[0] = reduce_frame(0, lip, 7, 1, 2, 1, 1);
		r.sc[1].ntx = 1;
	}
	r.sc[2].tx[0] = reduce_frame(1100 * EMU_NS, lip, 9, 1, 2, 5, 6);
	r.sc[2].ntx = 1;
	run_star(&r, 3, &c, 500 * EMU_NS, fail ? 1 * EMU_US : 0);
	struct script_state *L = host(&r, 0);

	for (unsigned i = 0; i < L->nrx; i++)
		if (L->rx[i].h.id == 9 && L->rx[i].d0 == 5)
			t = L->rx[i].t;
	*wiped = sw(&r)->wiped;
	done(&r);
	return t;
}

static bool scn(enum lh_algo algo, unsigned ntrees, const char *topo, const char *fail, bool pktgen)
{
	struct emu_scn_cfg c;
	struct emu_scn_result r;
	char err[256];

	emu_scenario_defaults(&c);
	c.topology = topo;
	c.hosts = 8;
	c.size_bytes = 64 * 1024;
	c.elements = 64;
	c.background = false;
	c.workers = 1;
	c.limit = 20 * EMU_MS;
	c.algo = algo;
	c.ntrees = ntrees;
	if (emu_fail_parse(fail, &c.fail[0])) {
		diag("bad test setup: %s", fail);
		return false;
	}
	c.nfail = 1;
	if (pktgen) {
		c.timer = EMU_SW_TIMER_PKTGEN;
		c.pktgen_tick = 10 * EMU_NS;
	}
	if (emu_scenario_run(&c, &r, err, sizeof(err))) {
		diag("%s: %s", fail, err);
		return false;
	}
	const struct emu_scn_ar *a = &r.ar[0];
	bool good = r.exact && a->retransmissions > 0;

	diag("%s%s, %s: exact %d, runtime %.1f us, retx %llu, failures %llu, fallbacks %llu, drops down %llu%s%s", r.algo,
	     pktgen ? " (pktgen)" : "", fail, r.exact, (double)r.runtime / 1e6, (unsigned long long)a->retransmissions,
	     (unsigned long long)a->failures, (unsigned long long)a->fallbacks, (unsigned long long)r.drops_down,
	     r.exact ? "" : ": ", r.exact ? "" : r.stuck);
	ok(good, "%s%s, --fail %s: exact, the lost blocks recovered through the leaders (%llu requests)", r.algo,
	   pktgen ? " --timer pktgen" : "", fail, (unsigned long long)a->retransmissions);
	emu_scenario_result_fini(&r);
	return good;
}

int main(void)
{
	struct run r = { 0 };
	struct emu_sw_cfg c;

	plan(18);

	/* 1. a descriptor whose timeout comes due while the switch is down */
	r.fab = star(5);
	uint32_t lip = r.fab->nodes[r.fab->hosts[0]].ipv4;

	for (unsigned i = 1; i < 5; i++) {
		r.sc[i].tx[0] = reduce_frame(i <= 2 ? 0 : 3 * EMU_US, lip, 7, 1, 5, (int32_t)i, 10 * (int32_t)i);
		r.sc[i].ntx = 1;
	}
	c = swc(1024, 1 * EMU_US);
	run_star(&r, 5, &c, 800 * EMU_NS, 2 * EMU_US);
	struct script_state *L = host(&r, 0);

	is_u64(sw(&r)->wiped, 1, "Canary: the open descriptor (timeout due at about 1.3 us) is erased at 0.8 us");
	is_int(L->nrx, 1, "...the leader gets one frame of the block");
	ok(L->nrx == 1 && L->rx[0].h.counter == 2 && L->rx[0].d0 == 3 + 4 && L->rx[0].d1 == 70,
	   "...with the two contributions sent after the return only (counter %u, %d)", L->nrx ? L->rx[0].h.counter : 0,
	   L->nrx ? L->rx[0].d0 : 0);
	ok(L->nrx == 1 && L->rx[0].t > 4 * EMU_US && L->rx[0].t < 5 * EMU_US,
	   "...flushed one timeout after their arrival (%.3f us)", L->nrx ? (double)L->rx[0].t / 1e6 : 0.0);
	is_u64(sw(&r)->flushes, 1, "...one timeout flush: the erased descriptor's never happened");
	done(&r);

	/* 2. the erased descriptor's timer comes due after the return, on a new descriptor in its slot */
	r.fab = star(5);
	lip = r.fab->nodes[r.fab->hosts[0]].ipv4;
	r.sc[1].tx[0] = reduce_frame(0, lip, 7, 1, 5, 1, 1);	/* opens at ~0.31 us, due ~2.31 us */
	r.sc[2].tx[0] = reduce_frame(1200 * EMU_NS, lip, 7, 1, 5, 2, 2);	/* arrives ~1.51 us, after the return */
	r.sc[1].ntx = r.sc[2].ntx = 1;
	c = swc(1024, 2 * EMU_US);
	run_star(&r, 5, &c, 500 * EMU_NS, 1 * EMU_US);
	L = host(&r, 0);
	ok(L->nrx == 1 && L->rx[0].h.counter == 1 && L->rx[0].d0 == 2,
	   "Canary, down 0.5-1 us: the new descriptor holds only the contribution after the return");
	ok(L->nrx == 1 && L->rx[0].t > 3500 * EMU_NS && L->rx[0].t < 4 * EMU_US,
	   "...and flushes one timeout after its own arrival (%.3f us), not at the erased one's (2.3 us)",
	   L->nrx ? (double)L->rx[0].t / 1e6 : 0.0);
	done(&r);

	/* 3. recirculation: the lost pipeline neither delays nor hurries a frame after the return */
	uint64_t w0, w1;
	emu_time_t t0 = pipeline_case(false, &w0), t1 = pipeline_case(true, &w1);

	ok(t0 > 3 * EMU_US && t0 < 4 * EMU_US, "3 passes of 1 us: the frame sent at 1.1 us reaches the leader at %.3f us",
	   (double)t0 / 1e6);
	ok(t1 == t0, "a frame lost in the pipeline with the switch (down 0.5-1 us): the next one still takes %.3f us "
	   "(took %.3f)", (double)t0 / 1e6, (double)t1 / 1e6);

	emu_time_t to = pipeline_order();

	ok(to > 11300 * EMU_NS && to < 12 * EMU_US,
	   "pipeline order: a contribution arriving behind one that waits in the pipeline is decided after it: "
	   "the sum of both reaches the leader at %.3f us, after the later one's passes (11.3 us)", (double)to / 1e6);

	/* 4. static tree: the partial sum is erased; the block after the return is whole */
	r.fab = star(4);
	struct emu_sw_tree_node tn = { .parent = EMU_PORT_NONE, .nchildren = 4, .children = 15 };
	uint32_t root = 0;
	struct emu_sw_trees trees = { .ntrees = 1, .nswitches = 1, .node = &tn, .root = &root };

	for (unsigned i = 0; i < 4; i++) {
		unsigned n = 0;

		if (i < 2)	/* block 3 from two children, then the switch fails */
			r.sc[i].tx[n++] = (struct script_frame){
				.at = 0, .nelem = 2, .data = { 100, 100 },
				.h = { .id = 3, .counter = 1, .hosts = 4, .flags = EMU_CANARY_OP_TREE_REDUCE },
			};
		r.sc[i].tx[n++] = (struct script_frame){
			.at = 3 * EMU_US, .nelem = 2, .data = { (int32_t)i + 1, 7 },
			.h = { .id = 3, .counter = 1, .hosts = 4, .flags = EMU_CANARY_OP_TREE_REDUCE },
		};
		r.sc[i].ntx = n;
	}
	c = swc(16, 1 * EMU_US);
	c.trees = &trees;
	run_star(&r, 4, &c, 1 * EMU_US, 2 * EMU_US);
	bool all = true;

	for (unsigned i = 0; i < 4; i++) {
		struct script_state *h = host(&r, i);

		all = all && h->nrx == 1 && h->rx[0].h.counter == 4 && h->rx[0].d0 == 10 && h->rx[0].d1 == 28;
	}
	is_u64(sw(&r)->wiped, 1, "static tree: the partial sum of two children is erased");
	ok(all, "...the block sent again by all four after the return: every child gets their sum only");
	is_u64(sw(&r)->live, 0, "...descriptor freed");
	done(&r);

	/* 5. whole runs: a leaf or a spine down across the first timeouts, back later */
	const char *two = "fattree2:leaves=2,spines=2,hosts=4";

	scn(LH_ALGO_CANARY, 0, two, "switch:L0@2us-6us", false);
	scn(LH_ALGO_CANARY, 0, two, "switch:S0@2us-5us", false);
	scn(LH_ALGO_CANARY, 0, two, "switch:L1@2us-6us", true);
	scn(LH_ALGO_STATIC, 1, two, "switch:L0@2us-6us", false);
	scn(LH_ALGO_STATIC, 2, two, "switch:S1@1us-4us", false);
	return done_testing();
}
