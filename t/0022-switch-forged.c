// SPDX-License-Identifier: MIT
/*
 * DOC: the Canary switch fed forged frames, as a stranger could send them.
 *  - REDUCE and TREE_REDUCE frames with a counter of 0 (no host
 *    contribution): each is counted as malformed and dropped, and none of
 *    its elements reaches the sum the leader gets (before, such a frame
 *    opened or joined a descriptor and its elements were added without
 *    being counted).
 *  - TREE_REDUCE frames whose counters add up to more than their hosts:
 *    the one that would overflow is malformed (before, the root sent a
 *    TREE_BCAST with counter > hosts, a frame every host drops as
 *    malformed; found by the switch fuzz target).
 */
#include "script.h"

int main(void)
{
	struct emu_sw_cfg cfg = {
		.descriptors = 64, .timeout = 5 * EMU_US, .timer = EMU_SW_TIMER_EXACT, .passes = 1, .ports_per_pipe = 16,
	};
	struct emu_engine_cfg ec = { .workers = 1, .seed = 1 };
	struct script sc[3] = { { .ntx = 0 } };

	plan(10);

	/* Canary: H1 forges counter 0 first, then H1 and H2 contribute; leader H0 */
	struct emu_fabric *fab = star(3);
	uint32_t lip = fab->nodes[fab->hosts[0]].ipv4;

	sc[1].tx[0] = reduce_frame(0, lip, 7, 0, 3, 1000, 1000);
	sc[1].tx[1] = reduce_frame(100 * EMU_NS, lip, 7, 1, 3, 1, 10);
	sc[2].tx[0] = reduce_frame(200 * EMU_NS, lip, 7, 1, 3, 2, 20);
	sc[1].ntx = 2;
	sc[2].ntx = 1;
	struct emu_engine *eng = t_engine(fab, &ec);

	emu_engine_set_model(eng, 0, &emu_sw_ops, &cfg);
	for (unsigned i = 0; i < 3; i++)
		emu_engine_set_model(eng, 1 + i, &script_ops, &sc[i]);
	emu_engine_run(eng);
	struct script_state *L = emu_node_state(emu_engine_node(eng, 1));
	const struct emu_sw_stats *st = emu_sw_stats_of(emu_engine_node(eng, 0));

	is_int(st->malformed, 1, "a REDUCE with counter 0 is malformed");
	is_int(st->aggregated, 2, "...the two real ones are aggregated");
	is_int(L->nrx, 1, "the leader gets one frame");
	ok(L->nrx == 1 && L->rx[0].h.counter == 2 && L->rx[0].d0 == 3 && L->rx[0].d1 == 30,
	   "...counter 2, the exact sum of the real contributions (%d, %d)", L->nrx ? L->rx[0].d0 : -1,
	   L->nrx ? L->rx[0].d1 : -1);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);

	/* static tree: the root waits for its 3 children; a counter-0 frame is not one of them */
	fab = star(3);
	struct emu_sw_tree_node tn = { .parent = EMU_PORT_NONE, .nchildren = 3, .children = 7 };
	uint32_t root = 0;
	struct emu_sw_trees trees = { .ntrees = 1, .nswitches = 1, .node = &tn, .root = &root };

	cfg.trees = &trees;
	memset(sc, 0, sizeof(sc));
	for (unsigned i = 0; i < 3; i++) {
		sc[i].tx[sc[i].ntx++] = (struct script_frame){
			.at = 100 * EMU_NS, .nelem = 2, .data = { (int32_t)i + 1, 7 },
			.h = { .id = 3, .counter = 1, .hosts = 3, .flags = EMU_CANARY_OP_TREE_REDUCE },
		};
	}
	sc[0].tx[1] = sc[0].tx[0];
	sc[0].tx[1].at = 0;
	sc[0].tx[1].h.counter = 0;
	sc[0].tx[1].data[0] = 1000;
	sc[0].ntx = 2;
	eng = t_engine(fab, &ec);
	emu_engine_set_model(eng, 0, &emu_sw_ops, &cfg);
	for (unsigned i = 0; i < 3; i++)
		emu_engine_set_model(eng, 1 + i, &script_ops, &sc[i]);
	emu_engine_run(eng);
	st = emu_sw_stats_of(emu_engine_node(eng, 0));
	is_int(st->malformed, 1, "static tree: a TREE_REDUCE with counter 0 is malformed");
	is_int(st->aggregated, 3, "...the three children are aggregated");
	unsigned exact = 0;

	for (unsigned i = 0; i < 3; i++) {
		struct script_state *H = emu_node_state(emu_engine_node(eng, 1 + i));

		for (unsigned k = 0; k < H->nrx; k++)
			if ((H->rx[k].h.flags & EMU_CANARY_OP_MASK) == EMU_CANARY_OP_TREE_BCAST && H->rx[k].d0 == 6 &&
			    H->rx[k].d1 == 21 && H->rx[k].h.counter == 3)
				exact++;
	}
	is_int(exact, 3, "...and every child gets the exact sum (6, 21), counter 3");
	is_int(st->live, 0, "...and the table is empty at the end");
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);

	/* static tree: three children claim 1 contribution each of a 2-host block */
	fab = star(3);
	memset(sc, 0, sizeof(sc));
	for (unsigned i = 0; i < 3; i++)
		sc[i].tx[sc[i].ntx++] = (struct script_frame){
			.at = (emu_time_t)i * 100 * EMU_NS, .nelem = 2, .data = { 1, 1 },
			.h = { .id = 4, .counter = 1, .hosts = 2, .flags = EMU_CANARY_OP_TREE_REDUCE },
		};
	eng = t_engine(fab, &ec);
	emu_engine_set_model(eng, 0, &emu_sw_ops, &cfg);
	for (unsigned i = 0; i < 3; i++)
		emu_engine_set_model(eng, 1 + i, &script_ops, &sc[i]);
	emu_engine_run(eng);
	st = emu_sw_stats_of(emu_engine_node(eng, 0));
	unsigned got = 0;

	for (unsigned i = 0; i < 3; i++)
		got += ((struct script_state *)emu_node_state(emu_engine_node(eng, 1 + i)))->nrx;
	is_int(st->malformed, 1, "static tree: the contribution past the block's 2 hosts is malformed");
	is_int(got, 0, "...and no frame with counter > hosts leaves the switch");
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
	return done_testing();
}
