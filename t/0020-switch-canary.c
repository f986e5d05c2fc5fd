// SPDX-License-Identifier: MIT
/*
 * DOC: the Canary switch pipeline on one switch with scripted hosts:
 * full aggregation, timeout flush + straggler, collision + bypass, the
 * broadcast freeing descriptors, the pktgen timer's bound, malformed
 * frames, the static-tree switch waiting for all its children, and under
 * the merlin router every broadcast copy in its output's own FIFO.
 */
#include <math.h>

#include "emu/switch/tofino.h"
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

static void run_star_router(struct run *r, unsigned k, struct emu_sw_cfg *cfg, enum emu_router router)
{
	struct emu_engine_cfg ec = { .workers = 1, .seed = 1, .router = router };

	r->eng = t_engine(r->fab, &ec);
	emu_engine_set_model(r->eng, 0, &emu_sw_ops, cfg);
	for (unsigned i = 0; i < k; i++)
		emu_engine_set_model(r->eng, 1 + i, &script_ops, &r->sc[i]);
	emu_engine_run(r->eng);
}

static void run_star(struct run *r, unsigned k, struct emu_sw_cfg *cfg)
{
	run_star_router(r, k, cfg, EMU_ROUTER_FIFO);
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

/*
 * Three hosts of a star of four send block 11 (one element pair each);
 * the leader H0 broadcasts its result (42, 43) at 10 us and again, not
 * marked, at 20 us.
 */
static void bcast_script(struct run *r)
{
	r->fab = star(4);
	uint32_t lip = r->fab->nodes[r->fab->hosts[0]].ipv4;

	for (unsigned i = 1; i < 4; i++) {
		r->sc[i].tx[0] = reduce_frame(0, lip, 11, 1, 4, 1, 1);
		r->sc[i].ntx = 1;
	}
	r->sc[0].tx[0] = (struct script_frame){
		.at = 10 * EMU_US, .nelem = 2, .data = { 42, 43 },
		.h = { .dst = lip, .id = 11, .counter = 4, .hosts = 4, .flags = EMU_CANARY_F_MULTICAST | EMU_CANARY_OP_BCAST },
	};
	r->sc[0].tx[1] = r->sc[0].tx[0];
	r->sc[0].tx[1].at = 20 * EMU_US;
	r->sc[0].ntx = 2;
}

/* broadcasts of block 11's result that reached H1..H3 */
static unsigned bcasts_got(struct run *r)
{
	unsigned n = 0;

	for (unsigned i = 1; i < 4; i++)
		for (unsigned k = 0; k < host(r, i)->nrx; k++)
			if ((host(r, i)->rx[k].h.flags & EMU_CANARY_OP_MASK) == EMU_CANARY_OP_BCAST &&
			    host(r, i)->rx[k].d0 == 42)
				n++;
	return n;
}

int main(void)
{
	struct run r = { 0 };
	struct emu_sw_cfg c;

	plan(46);

	/* 1. full aggregation: 4 hosts + leader H0 (5 hosts), all send at 0 */
	r.fab = star(5);
	uint32_t lip = r.fab->nodes[r.fab->hosts[0]].ipv4;

	for (unsigned i = 1; i < 5; i++) {
		r.sc[i].tx[0] = reduce_frame(0, lip, 7, 1, 5, (int32_t)i, -(int32_t)(10 * i));
		r.sc[i].ntx = 1;
	}
	c = swc(1024, 1 * EMU_US);
	run_star(&r, 5, &c);
	struct script_state *L = host(&r, 0);

	is_int(L->nrx, 1, "full aggregation: the leader gets one frame");
	ok(L->nrx == 1 && L->rx[0].h.counter == 4 && L->rx[0].h.hosts == 5, "...with counter 4 = every host but the leader");
	ok(L->nrx == 1 && L->rx[0].d0 == 1 + 2 + 3 + 4 && L->rx[0].d1 == -100, "...and the exact element-wise sum");
	ok(L->nrx == 1 && L->rx[0].t < 1 * EMU_US, "...before the timeout (the root sends when the count is complete)");
	is_int(sw(&r)->aggregated, 4, "four frames consumed into the descriptor");
	done(&r);

	/* 2. timeout flush with a late host: straggler forwarded */
	r.fab = star(5);
	lip = r.fab->nodes[r.fab->hosts[0]].ipv4;
	for (unsigned i = 1; i < 5; i++) {
		r.sc[i].tx[0] = reduce_frame(i == 4 ? 5 * EMU_US : 0, lip, 9, 1, 5, 100, (int32_t)i);
		r.sc[i].ntx = 1;
	}
	c = swc(1024, 1 * EMU_US);
	run_star(&r, 5, &c);
	L = host(&r, 0);
	is_int(L->nrx, 2, "late host: the leader gets two frames");
	ok(L->nrx == 2 && L->rx[0].h.counter == 3 && L->rx[0].t >= 1 * EMU_US && L->rx[0].t < 2 * EMU_US,
	   "...the timeout flush (counter 3) about 1 us after the first arrival");
	ok(L->nrx == 2 && L->rx[1].h.counter == 1 && L->rx[1].t > 5 * EMU_US, "...then the straggler, forwarded at once");
	ok(L->nrx == 2 && L->rx[0].d0 + L->rx[1].d0 == 400 && L->rx[0].d1 + L->rx[1].d1 == 10,
	   "...and together they hold the exact sum");
	is_int(sw(&r)->stragglers, 1, "one straggler counted");
	is_int(sw(&r)->flushes, 1, "one timeout flush counted");
	done(&r);

	/* 3. collision: a table of one entry, two blocks */
	r.fab = star(3);
	lip = r.fab->nodes[r.fab->hosts[0]].ipv4;
	r.sc[1].tx[0] = reduce_frame(0, lip, 100, 1, 3, 1, 1);
	r.sc[2].tx[0] = reduce_frame(100 * EMU_NS, lip, 200, 1, 3, 2, 2);
	r.sc[1].ntx = r.sc[2].ntx = 1;
	c = swc(1, 5 * EMU_US);
	run_star(&r, 3, &c);
	L = host(&r, 0);
	is_int(sw(&r)->collisions, 1, "table of 1: the second block collides");
	struct got *byp = NULL;

	for (unsigned i = 0; i < L->nrx; i++)
		if (L->rx[i].h.id == 200)
			byp = &L->rx[i];
	ok(byp && (byp->h.flags & EMU_CANARY_F_BYPASS), "the colliding frame reaches the leader with the bypass bit");
	ok(byp && byp->h.swaddr == r.fab->nodes[0].swaddr && byp->h.children == 2,
	   "...carrying the switch address and its ingress port (2)");
	ok(byp && byp->t < 5 * EMU_US, "...at once, not after the timeout");
	done(&r);

	/* 4. broadcast frees the descriptor and reaches every child; a second finds none */
	bcast_script(&r);
	c = swc(1024, 1 * EMU_US);
	run_star(&r, 4, &c);
	is_int(bcasts_got(&r), 3, "broadcast: every child gets the result exactly once");
	is_int(sw(&r)->live, 0, "broadcast: the table is empty at the end");
	is_int(sw(&r)->bcast_dropped, 1, "a second broadcast, not marked again, is dropped");
	done(&r);

	/*
	 * 4b. "again": after the broadcast (and a plain second one, dropped)
	 * a broadcast with EMU_CANARY_BCAST_AGAIN goes down the same ports
	 * once more; a second "again" finds nothing. A reduce frame of the
	 * same id after the broadcast opens a new descriptor.
	 */
	bcast_script(&r);
	lip = r.fab->nodes[r.fab->hosts[0]].ipv4;
	r.sc[0].tx[2] = r.sc[0].tx[0];
	r.sc[0].tx[2].at = 30 * EMU_US;
	r.sc[0].tx[2].h.children = EMU_CANARY_BCAST_AGAIN;
	r.sc[0].tx[3] = r.sc[0].tx[2];
	r.sc[0].tx[3].at = 40 * EMU_US;
	r.sc[0].ntx = 4;
	r.sc[1].tx[1] = reduce_frame(50 * EMU_US, lip, 11, 1, 4, 1, 1);
	r.sc[1].ntx = 2;
	c = swc(1024, 1 * EMU_US);
	run_star(&r, 4, &c);
	is_int(bcasts_got(&r), 6, "again: every child gets the result twice (the broadcast and the one again)");
	is_int(sw(&r)->bcast_dropped, 2, "...the plain second broadcast and the second again are dropped");
	is_int(sw(&r)->allocated, 2, "...a reduce frame of the id after them opens a new descriptor");
	is_int(host(&r, 0)->nrx, 2, "...which reaches the leader: the first sum and that frame");
	done(&r);

	/*
	 * 4c. a table of one slot: after block 11's broadcast, block 12 takes
	 * the slot at once (no collision), and block 11's broadcast again then
	 * finds another block there and is dropped.
	 */
	bcast_script(&r);
	lip = r.fab->nodes[r.fab->hosts[0]].ipv4;
	r.sc[0].ntx = 1;
	r.sc[2].tx[1] = reduce_frame(15 * EMU_US, lip, 12, 1, 4, 5, 5);
	r.sc[2].ntx = 2;
	r.sc[0].tx[1] = r.sc[0].tx[0];
	r.sc[0].tx[1].at = 30 * EMU_US;
	r.sc[0].tx[1].h.children = EMU_CANARY_BCAST_AGAIN;
	r.sc[0].ntx = 2;
	c = swc(1, 1 * EMU_US);
	run_star(&r, 4, &c);
	is_int(sw(&r)->collisions, 0, "table of 1: a block takes a broadcast block's slot, no collision");
	is_int(sw(&r)->allocated, 2, "...a descriptor each");
	is_int(bcasts_got(&r), 3, "...and block 11's broadcast again finds block 12 there: the children got it once");
	is_int(sw(&r)->bcast_dropped, 1, "...the again dropped");
	done(&r);

	/* 5. pktgen: a flush within [timeout, timeout + table x tick] */
	r.fab = star(3);
	lip = r.fab->nodes[r.fab->hosts[0]].ipv4;
	r.sc[1].tx[0] = reduce_frame(3 * EMU_US, lip, 77, 1, 3, 5, 5);
	r.sc[1].ntx = 1;
	c = swc(64, 1 * EMU_US);
	c.timer = EMU_SW_TIMER_PKTGEN;
	c.pktgen_tick = 20 * EMU_NS;
	run_star(&r, 3, &c);
	L = host(&r, 0);
	emu_time_t ft = emu_tx_time(EMU_CANARY_DATA_OFF + 8, EMU_DEFAULT_RATE_BPS);
	emu_time_t arrive = 3 * EMU_US + ft + EMU_DEFAULT_LATENCY;	/* at the switch */
	emu_time_t hop = ft + EMU_DEFAULT_LATENCY;

	ok(L->nrx == 1 && L->rx[0].t >= arrive + 1 * EMU_US + hop, "pktgen: not before the timeout");
	ok(L->nrx == 1 && L->rx[0].t <= arrive + 1 * EMU_US + 64 * 20 * EMU_NS + hop,
	   "pktgen: within timeout + 64 slots x 20 ns (flushed %.3f us after arrival)",
	   L->nrx ? (double)(L->rx[0].t - hop - arrive) / 1e6 : -1.0);
	ok(sw(&r)->pktgen_ticks >= 1, "pktgen: clock packets checked the table (%llu)",
	   (unsigned long long)sw(&r)->pktgen_ticks);
	done(&r);

	/* 6. malformed frames are counted and dropped */
	r.fab = star(2);
	lip = r.fab->nodes[r.fab->hosts[0]].ipv4;
	r.sc[1].tx[0] = reduce_frame(0, lip, 1, 1, 2, 1, 1);
	r.sc[1].tx[0].raw_len = 20;	/* truncated header */
	r.sc[1].tx[1] = reduce_frame(100 * EMU_NS, lip, 2, 1, 2, 1, 1);
	r.sc[1].tx[1].h.flags = 0;	/* opcode 0 */
	r.sc[1].tx[2] = reduce_frame(200 * EMU_NS, lip, 3, 5, 2, 1, 1);	/* counter > hosts */
	r.sc[1].tx[3] = reduce_frame(300 * EMU_NS, lip, 4, 1, 2, 1, 1);
	r.sc[1].tx[3].raw_len = EMU_CANARY_DATA_OFF + 6;	/* half an element */
	r.sc[1].tx[4] = reduce_frame(400 * EMU_NS, lip, 5, 1, 0, 1, 1);	/* hosts 0 */
	r.sc[1].ntx = 5;
	c = swc(16, 1 * EMU_US);
	run_star(&r, 2, &c);
	is_int(sw(&r)->malformed, 5, "five malformed frames counted");
	is_int(host(&r, 0)->nrx, 0, "...and none forwarded");
	is_int(sw(&r)->allocated, 0, "...and none allocated a descriptor");
	done(&r);

	/* 7. static tree: the switch waits for all its children, no timeout */
	r.fab = star(3);
	struct emu_sw_tree_node tn = { .parent = EMU_PORT_NONE, .nchildren = 3, .children = 7 };
	uint32_t root = 0;
	struct emu_sw_trees trees = { .ntrees = 1, .nswitches = 1, .node = &tn, .root = &root };

	for (unsigned i = 0; i < 3; i++) {
		r.sc[i].tx[0] = (struct script_frame){
			.at = i == 2 ? 100 * EMU_US : 0, .nelem = 2, .data = { (int32_t)i + 1, 7 },
			.h = { .id = 3, .counter = 1, .hosts = 3, .swaddr = 0, .flags = EMU_CANARY_OP_TREE_REDUCE },
		};
		r.sc[i].ntx = 1;
	}
	c = swc(16, 1 * EMU_US);
	c.trees = &trees;
	run_star(&r, 3, &c);
	bool all = true, late = true;

	for (unsigned i = 0; i < 3; i++) {
		struct script_state *h = host(&r, i);

		all = all && h->nrx == 1 && h->rx[0].h.counter == 3 && h->rx[0].d0 == 6 && h->rx[0].d1 == 21 &&
		      (h->rx[0].h.flags & EMU_CANARY_OP_MASK) == EMU_CANARY_OP_TREE_BCAST;
		late = late && h->nrx == 1 && h->rx[0].t > 100 * EMU_US;
	}
	ok(all, "static tree: every child gets the sum once (counter 3)");
	ok(late, "static tree: nothing leaves before the last child (no timeout at 1 us)");
	is_int(sw(&r)->live, 0, "static tree: descriptor freed");
	is_int(sw(&r)->aggregated, 3, "static tree: three frames aggregated");
	done(&r);

	/*
	 * 7. merlin: a broadcast copy the switch makes waits in its output's
	 * own FIFO, never in the FIFO of the input the broadcast came in on.
	 * H1..H3 open block 11; at 10 us H0 and H2 each send 60 bypassed
	 * frames to H1, and H0 then its broadcast: H0's input FIFO holds
	 * frames for the congested H1 when the broadcast arrives. H2's and
	 * H3's outputs are idle, so their copies leave together; a copy queued
	 * behind H0's frames (the last one, H3's, used to be: the arriving
	 * frame itself) would wait for them to cross to H1 (0.2 us here).
	 */
	for (int router = EMU_ROUTER_FIFO; router <= EMU_ROUTER_MERLIN; router++) {
		const char *rname = router == EMU_ROUTER_MERLIN ? "merlin" : "fifo";

		bcast_script(&r);
		uint32_t h1ip = r.fab->nodes[r.fab->hosts[1]].ipv4;
		struct script_frame byp1 = {
			.at = 10 * EMU_US, .nelem = 8,
			.h = { .dst = h1ip, .id = 99, .counter = 1, .hosts = 4,
			       .flags = EMU_CANARY_OP_REDUCE | EMU_CANARY_F_BYPASS },
		};
		struct script_frame bc = r.sc[0].tx[0];

		for (unsigned k = 0; k < 60; k++)
			r.sc[0].tx[k] = r.sc[2].tx[1 + k] = byp1;
		r.sc[0].tx[60] = bc;
		r.sc[0].ntx = 61;
		r.sc[2].ntx = 61;
		c = swc(1024, 1 * EMU_US);
		run_star_router(&r, 4, &c, (enum emu_router)router);
		emu_time_t t2 = 0, t3 = 0;

		for (unsigned i = 2; i < 4; i++)
			for (unsigned k = 0; k < host(&r, i)->nrx; k++)
				if ((host(&r, i)->rx[k].h.flags & EMU_CANARY_OP_MASK) == EMU_CANARY_OP_BCAST)
					*(i == 2 ? &t2 : &t3) = host(&r, i)->rx[k].t;
		ok(t2 > 10 * EMU_US && t3 > 10 * EMU_US, "%s: H2 and H3 get the broadcast", rname);
		ok(t3 <= t2 + 10 * EMU_NS && t2 <= t3 + 10 * EMU_NS,
		   "%s: ...at the same time, no copy behind H0's frames for H1 (H2 at %.3f us, H3 at %.3f us)", rname,
		   (double)t2 / EMU_US, (double)t3 / EMU_US);
		is_int(sw(&r)->bcast_copies, 3, "%s: three copies", rname);
		done(&r);
	}

	/* resource model: the paper's prototype */
	struct emu_tofino_need need;

	emu_tofino_need(emu_tofino_profile_get("tofino1"), 32, 32768, 32, 0, false, &need);
	ok(need.salu == 39 && need.fits, "tofino1, 32 elements, 32K descriptors, 32 ports, ECMP: 39 stateful ALUs (hw/canary.p4 -DCANARY_NO_ADAPTIVE)");
	ok(need.stages == 11, "... in 11 of 12 stages, as bf-p4c placed hw/canary.p4 (%u)", need.stages);
	ok(fabs(100.0 * need.salu / 48 - 81.25) < 0.01, "...= 81.25 %% of 48, the paper's prototype");
	emu_tofino_need(emu_tofino_profile_get("tofino1"), 32, 32768, 32, 0, true, &need);
	ok(need.salu == 42 && need.stages == 12 && need.fits,
	   "with adaptive routing (hw/canary.p4's default build): 42 stateful ALUs in 12 stages (%u, %u)", need.salu,
	   need.stages);
	return done_testing();
}
