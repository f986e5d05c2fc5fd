/* SPDX-License-Identifier: MIT */
/*
 * DOC: helpers.h - small helpers shared by the engine tests: build a fabric
 * from a generator spec, plug the forwarding switch and the traffic
 * generator everywhere, find links.
 */
#ifndef T_HELPERS_H
#define T_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/engine/engine.h"
#include "emu/switch/fwd.h"
#include "emu/host/trafgen.h"
#include "emu/engine/util.h"
#include "topologies/topo.h"
#include "tap.h"

static inline struct emu_fabric *t_fabric(const char *spec)
{
	char err[256];
	struct emu_fabric *fab = emu_topo_from_spec(spec, err, sizeof(err));

	if (!fab) {
		diag("topology %s: %s", spec, err);
		exit(1);
	}
	return fab;
}

static inline struct emu_engine *t_engine(struct emu_fabric *fab, const struct emu_engine_cfg *cfg)
{
	char err[256];
	struct emu_engine *eng = emu_engine_create(fab, cfg, err, sizeof(err));

	if (!eng) {
		diag("engine: %s", err);
		exit(1);
	}
	return eng;
}

/* fwd on every switch, trafgen(@tg) on every host */
static inline void t_plug(struct emu_engine *eng, const struct emu_fabric *fab, struct emu_trafgen_cfg *tg)
{
	for (uint32_t i = 0; i < fab->nnodes; i++)
		emu_engine_set_model(eng, i, fab->nodes[i].kind == EMU_NODE_SWITCH ? &emu_fwd_ops : &emu_trafgen_ops,
				     fab->nodes[i].kind == EMU_NODE_SWITCH ? NULL : tg);
}

static inline uint32_t t_link_between(const struct emu_fabric *fab, const char *a, const char *b)
{
	uint32_t na = emu_fabric_find(fab, a), nb = emu_fabric_find(fab, b);

	for (uint32_t i = 0; i < fab->nlinks; i++) {
		const struct emu_fab_link *l = &fab->links[i];

		if ((l->node[0] == na && l->node[1] == nb) || (l->node[0] == nb && l->node[1] == na))
			return i;
	}
	diag("no link %s-%s", a, b);
	exit(1);
}

static inline struct emu_trafgen_state *t_host_state(struct emu_engine *eng, const struct emu_fabric *fab, uint32_t h)
{
	return emu_node_state(emu_engine_node(eng, fab->hosts[h]));
}

/*
 * t_port_totals - every port's counters of the run summed (frames, bytes,
 * busy time, drops, credit stalls), the peaks (q_peak_bytes,
 * in_peak_bytes) the largest of any port
 */
static inline struct emu_port_stats t_port_totals(struct emu_engine *eng, const struct emu_fabric *fab)
{
	struct emu_port_stats t = { 0 };

	for (uint32_t i = 0; i < fab->nnodes; i++) {
		struct emu_node *n = emu_engine_node(eng, i);

		for (unsigned p = 0; p < n->nports; p++) {
			const struct emu_port_stats st = emu_port_stats(&n->ports[p]);

			t.tx_frames += st.tx_frames;
			t.tx_bytes += st.tx_bytes;
			t.rx_frames += st.rx_frames;
			t.rx_bytes += st.rx_bytes;
			t.busy_ps += st.busy_ps;
			t.drops_queue += st.drops_queue;
			t.drops_loss += st.drops_loss;
			t.drops_down += st.drops_down;
			t.drops_mtu += st.drops_mtu;
			t.credit_stalls += st.credit_stalls;
			if (st.q_peak_bytes > t.q_peak_bytes)
				t.q_peak_bytes = st.q_peak_bytes;
			if (st.in_peak_bytes > t.in_peak_bytes)
				t.in_peak_bytes = st.in_peak_bytes;
		}
	}
	return t;
}

#endif /* T_HELPERS_H */
