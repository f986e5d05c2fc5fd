// SPDX-License-Identifier: MIT
/*
 * DOC: engine.c - partitioning, workers, conservative windows and the
 * control thread. The per-frame data path is port.c; pacing by the wall
 * clock and the real-time scheduler are realtime.c.
 *
 * Window loop of every worker (W = window start, L = lookahead):
 *
 *   drain incoming channels into the heap; publish the heap's minimum
 *   barrier  -- serial section: W = global minimum (skips empty time),
 *               apply due control actions (publish routes via the control
 *               thread), decide stop, E = min(W + L, next action, stop)
 *   [wall clock: sleep until wall0 + (W - emu0) * dilation]
 *   process every local event with t < E; flush outgoing channels
 *   rcu_quiescent_state(); barrier
 *
 * Real time (the wall clock with one worker, no other process) needs no
 * lookahead: the serial section waits until the next event is due or an
 * outside input (emu_node_watch: an attached interface) wakes it, then
 * plans a window of every event due by the wall clock's now (x the
 * dilation); an input's wake runs at the emulated time it was seen. The
 * worker runs the window in stretches of at most L, back to plan as soon
 * as a node asked to stop or completed, so the run's end and results are
 * those of lookahead windows. See emu_rt_plan() (realtime.c).
 *
 * L is the smallest link latency of the fabric. Every event that crosses
 * partitions is at least one latency in the future, so it lands in a later
 * window. A stop requested at T (emu_stop) ends the run at T + L: every
 * worker has then processed exactly the events before T + L, whatever the
 * partitioning.
 *
 * Workers are RCU QSBR readers: online while processing, offline while they
 * wait at barriers, so the control thread's synchronize_rcu() never waits
 * for a worker that waits for it.
 */
#include "emu/engine/port_internal.h"
#include "emu/engine/realtime.h"
#include "emu/engine/xbar.h"
#include "emu/dist/dist.h"

#include <errno.h>
#include <hwloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <urcu-qsbr.h>

/* ---------- partitioning ---------- */

struct group {
	uint32_t id;
	uint64_t weight;
};

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Keep each switch with the hosts that hang off it (fab->nodes[].group);
 * spread the groups greedily by weight (a switch weighs its port count, a
 * host 1) over the workers, heaviest first. Deterministic.
 *
 * When there are too few groups for the workers (fewer than two per
 * worker: 64 workers on the paper's fabric would each get one leaf with its
 * 32 hosts or one spine alone, half of them nearly idle), every node is its
 * own group: switches are placed first, then each host goes to its
 * switch's worker while that worker stays within an even share of the
 * total weight, else to the least-loaded worker. Locality is given up only
 * where balance needs it. A host weighs one switch port: on the paper's
 * fabric (first 100 us of the default run, 64 workers) that gave 52x
 * balance with 63 % of events crossing, against 46x and 62 % when a host
 * weighed two (bench/projection.sh).
 */
static void partition(struct emu_engine *eng)
{
	const struct emu_fabric *fab = eng->fab;
	uint32_t nn = fab->nnodes;

	unsigned nw = eng->wtotal;

	if (nw == nn) {
		for (uint32_t i = 0; i < nn; i++)
			eng->part[i] = i;
		return;
	}
	struct group *g = emu_xcalloc(nn, sizeof(*g));
	uint64_t *load = emu_xcalloc(nw, sizeof(*load));
	uint32_t *gw = emu_xmalloc(nn * sizeof(*gw));

	memset(gw, 0xff, nn * sizeof(*gw));

	uint32_t ngroups = 0;
	bool split;

	for (uint32_t i = 0; i < nn; i++) {
		g[i].id = i;
		ngroups += fab->nodes[i].group == i;
	}
	split = ngroups < 2 * nw;
	for (uint32_t i = 0; i < nn; i++) {
		const struct emu_fab_node *n = &fab->nodes[i];
		bool host = n->kind == EMU_NODE_HOST;

		g[split ? i : n->group].weight += host ? 1 : n->nports;
	}
	qsort(g, nn, sizeof(*g), group_cmp);
	uint64_t total = 0, cap;

	for (uint32_t i = 0; i < nn; i++)
		total += g[i].weight;
	cap = (total + nw - 1) / nw;
	for (uint32_t i = 0; i < nn && g[i].weight; i++) {
		const struct emu_fab_node *n = &fab->nodes[g[i].id];
		unsigned best = 0;

		if (split && n->kind == EMU_NODE_HOST && n->group != g[i].id) {
			uint32_t home = gw[n->group];

			if (home < nw && load[home] + g[i].weight <= cap) {
				load[home] += g[i].weight;
				gw[g[i].id] = home;
				continue;
			}
		}
		for (unsigned w = 1; w < nw; w++)
			if (load[w] < load[best])
				best = w;
		load[best] += g[i].weight;
		gw[g[i].id] = best;
	}
	for (uint32_t i = 0; i < nn; i++)
		eng->part[i] = gw[split ? i : fab->nodes[i].group];
	free(g);
	free(load);
	free(gw);
}

/* ---------- creation ---------- */

static struct emu_chan *find_chan(struct emu_chan **v, uint32_t n, uint32_t from, uint32_t to)
{
	for (uint32_t k = 0; k < n; k++)
		if (v[k]->from == from && v[k]->to == to)
			return v[k];
	return NULL;
}

static void push_chan(struct emu_chan ***v, uint32_t *n, struct emu_chan *c)
{
	if ((*n & (*n - 1)) == 0)
		*v = emu_xrealloc(*v, (*n ? 2 * *n : 1) * sizeof(**v));
	(*v)[(*n)++] = c;
}

/*
 * A link between this process and another: @ep of @n (local if @here) leads
 * to a node of another rank. Channels are per (global) worker pair.
 */
static void add_remote(struct emu_engine *eng, struct emu_node *n, struct emu_port *ep, bool here)
{
	uint32_t from = eng->part[n->id], to = eng->part[ep->peer_node];

	if (here) {
		struct emu_chan *c = find_chan(eng->rout, eng->nrout, from, to);

		if (!c) {
			c = emu_chan_remote_create(from, to, &n->w->pool);
			push_chan(&eng->rout, &eng->nrout, c);
			push_chan(&n->w->out, &n->w->nout, c);
		}
		ep->chan = c;
	} else if (!find_chan(eng->rin, eng->nrin, from, to)) {
		struct emu_worker *w = &eng->workers[to - eng->wbase];
		struct emu_chan *c = emu_chan_remote_create(from, to, &w->pool);

		push_chan(&eng->rin, &eng->nrin, c);
		push_chan(&w->rin, &w->nrin, c);
	}
}

static unsigned available_pus(hwloc_topology_t topo)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int n = -1;

	if (set && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0)
		n = hwloc_bitmap_weight(set);
	hwloc_bitmap_free(set);
	if (n <= 0)
		n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	return n > 0 ? (unsigned)n : 1;
}

/* the merlin router on every switch this process runs; the crossbar rate defaults from the fastest link */
/*
 * How far ahead a FIFO port commits queued frames to its wire (port.c):
 * cfg.commit_bytes of its wire time, whatever the traffic classes (so that
 * a run without frames of the higher class is the same run with one class
 * or two); none under merlin (merlin_init() sets 0: its crossbar refills a
 * small output buffer as frames leave it).
 */
static uint32_t commit_window(const struct emu_engine *eng, const struct emu_port *ep)
{
	if (eng->cfg.commit_idle)
		return 0;
	emu_time_t t = emu_tx_time((uint32_t)eng->cfg.commit_bytes, ep->rate_bps);

	return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static void merlin_init(struct emu_engine *eng)
{
	const struct emu_fabric *fab = eng->fab;
	uint64_t bps = eng->cfg.xbar_bps;

	if (!bps) {
		for (uint32_t i = 0; i < fab->nlinks; i++)
			for (int d = 0; d < 2; d++)
				if (fab->links[i].rate_bps[d] > bps)
					bps = fab->links[i].rate_bps[d];
		bps = (uint64_t)((double)bps * EMU_XBAR_SPEEDUP);
		eng->cfg.xbar_bps = bps;
	}
	for (uint32_t i = 0; i < fab->nnodes; i++)
		if (fab->nodes[i].kind == EMU_NODE_SWITCH && emu_engine_node_local(eng, i)) {
			struct emu_node *n = &eng->nodes[i];

			n->xb = emu_xbar_create(n, &eng->cfg, bps);
			for (unsigned p = 0; p < n->nports; p++)
				n->ports[p].commit_ps = 0;
		}
}

uint64_t emu_engine_xbar_bps(const struct emu_engine *eng)
{
	return eng->cfg.router == EMU_ROUTER_MERLIN ? eng->cfg.xbar_bps : 0;
}

/*
 * engine_counts - the configuration's defaults, the machine's topology and
 * the number of workers (this process's, of all ranks). Return 0, or -1
 * with the reason in @err.
 */
static int engine_counts(struct emu_engine *eng, const struct emu_engine_cfg *cfg, char *err, size_t errlen)
{
	const struct emu_fabric *fab = eng->fab;
	hwloc_topology_t topo;

	eng->cfg = *cfg;
	if (!eng->cfg.buffer_bytes)
		eng->cfg.buffer_bytes = emu_default_buffer(eng->cfg.router);
	if (!eng->cfg.commit_bytes)
		eng->cfg.commit_bytes = EMU_DEFAULT_COMMIT;
	if (eng->cfg.commit_bytes > UINT32_MAX)
		eng->cfg.commit_bytes = UINT32_MAX;
	if (!eng->cfg.lag_bound_ns)
		eng->cfg.lag_bound_ns = EMU_LAG_BOUND_NS;
	if (eng->cfg.buffer_bytes < EMU_FRAME_MAX) {
		snprintf(err, errlen, "--buffer: %llu bytes is less than the largest frame (%d)",
			 (unsigned long long)eng->cfg.buffer_bytes, EMU_FRAME_MAX);
		return -1;
	}
	if (hwloc_topology_init(&topo) || hwloc_topology_load(topo)) {
		snprintf(err, errlen, "hwloc cannot read the machine topology");
		return -1;
	}
	eng->hwtopo = topo;
	if (cfg->per_node)
		eng->nworkers = fab->nnodes;
	else if (cfg->workers)
		eng->nworkers = cfg->workers;
	else
		eng->nworkers = available_pus(topo);
	if (eng->nworkers > fab->nnodes)
		eng->nworkers = fab->nnodes;
	eng->wtotal = eng->nworkers;
	if (cfg->dist) {
		unsigned r = emu_dist_rank(cfg->dist);

		eng->dist = cfg->dist;
		eng->wbase = emu_dist_wbase(cfg->dist, r);
		eng->nworkers = emu_dist_wbase(cfg->dist, r + 1) - eng->wbase;
		eng->wtotal = emu_dist_wbase(cfg->dist, emu_dist_nranks(cfg->dist));
		if (eng->wtotal > fab->nnodes || cfg->per_node) {
			snprintf(err, errlen, "--workers: %u workers over all ranks but the fabric has only %u nodes%s",
				 eng->wtotal, fab->nnodes, cfg->per_node ? " (per-node is not available across processes)" : "");
			return -1;
		}
	}
	if (eng->nworkers > 4096 && !cfg->per_node) {
		snprintf(err, errlen, "--workers: %u is too many", eng->nworkers);
		return -1;
	}
	return 0;
}

/* engine_workers - the node and port arrays, the partition, the workers and the nodes each runs */
static void engine_workers(struct emu_engine *eng)
{
	const struct emu_fabric *fab = eng->fab;

	/* nodes and ports */
	eng->nodes = emu_xaligned(fab->nnodes * sizeof(*eng->nodes));
	eng->ports = emu_xaligned((fab->nports + 1) * sizeof(*eng->ports));
	eng->part = emu_xcalloc(fab->nnodes, sizeof(*eng->part));
	partition(eng);
	eng->workers = emu_xaligned(eng->nworkers * sizeof(*eng->workers));
	for (unsigned i = 0; i < eng->nworkers; i++) {
		struct emu_worker *w = &eng->workers[i];

		w->id = i;
		w->eng = eng;
		emu_evq_init(&w->q);
		w->later_min = EMU_TIME_INF;
		emu_pool_init(&w->pool);
		w->stop_req = EMU_TIME_INF;
	}
	for (uint32_t i = 0; i < fab->nnodes; i++) {
		if (!emu_engine_node_local(eng, i))
			continue;
		struct emu_worker *w = &eng->workers[eng->part[i] - eng->wbase];

		if ((w->nnodes & (w->nnodes - 1)) == 0)
			w->nodes = emu_xrealloc(w->nodes, (w->nnodes ? 2 * w->nnodes : 1) * sizeof(uint32_t));
		w->nodes[w->nnodes++] = i;
	}
}

/* engine_nodes - every node and every connected port from the fabric's description */
static void engine_nodes(struct emu_engine *eng)
{
	const struct emu_fabric *fab = eng->fab;

	for (uint32_t i = 0; i < fab->nnodes; i++) {
		const struct emu_fab_node *fn = &fab->nodes[i];
		struct emu_node *n = &eng->nodes[i];

		n->id = i;
		n->key = EMU_EV_KEY(i, 0);
		n->nports = fn->nports;
		n->up = true;
		n->w = emu_engine_node_local(eng, i) ? &eng->workers[eng->part[i] - eng->wbase] : NULL;
		n->eng = eng;
		n->fn = fn;
		n->host = fn->kind == EMU_NODE_HOST;
		n->ports = &eng->ports[fn->port0];
		emu_rng_init(&n->rng, eng->cfg.seed, i);
		for (unsigned p = 0; p < fn->nports; p++) {
			const struct emu_fab_port *fp = &fab->ports[fn->port0 + p];
			struct emu_port *ep = &n->ports[p];

			if (fp->link == EMU_NONE32)
				continue;
			const struct emu_fab_link *l = &fab->links[fp->link];
			int d = fp->side;

			ep->connected = true;
			ep->up = true;
			ep->rate_bps = l->rate_bps[d];
			ep->ps_per_byte = (8 * EMU_S) % ep->rate_bps ? 0 : 8 * EMU_S / ep->rate_bps;
			ep->latency = ep->tx_latency = l->latency[d];
			ep->mtu_frame = (uint16_t)(l->mtu + 14);
			ep->loss_thresh = l->loss[d] >= 1 ? UINT64_MAX : (uint64_t)(l->loss[d] * 18446744073709551616.0);
			if (ep->loss_thresh)
				ep->rare |= EMU_PORT_RARE_LOSS;
			ep->peer_node = fp->peer_node;
			ep->peer_port = fp->peer_port;
			ep->peer_evtype = EMU_EV_FRAME;
			ep->peer = &eng->ports[fab->nodes[fp->peer_node].port0 + fp->peer_port];
			for (unsigned c = 0; c < EMU_TC_N; c++)
				ep->credits[c] = (int64_t)eng->cfg.buffer_bytes;
			ep->commit_ps = commit_window(eng, ep);
		}
	}

}

/* engine_channels - one channel per ordered pair of workers joined by a link (or to another rank) */
static void engine_channels(struct emu_engine *eng)
{
	const struct emu_fabric *fab = eng->fab;
	uint32_t nw = eng->nworkers;
	uint32_t slots = nw <= 64 ? 16384 : 1024;

	for (uint32_t i = 0; i < fab->nnodes; i++) {
		struct emu_node *n = &eng->nodes[i];

		for (unsigned p = 0; p < n->nports; p++) {
			struct emu_port *ep = &n->ports[p];

			if (!ep->connected || eng->part[ep->peer_node] == eng->part[i])
				continue;
			bool here = emu_engine_node_local(eng, i), there = emu_engine_node_local(eng, ep->peer_node);

			if (!here && !there)
				continue;
			if (!here || !there) {
				add_remote(eng, n, ep, here);
				continue;
			}
			struct emu_worker *from = n->w, *to = &eng->workers[eng->part[ep->peer_node] - eng->wbase];
			struct emu_chan *c = NULL;

			for (uint32_t k = 0; k < from->nout; k++)
				if (from->out[k]->to == to->id + eng->wbase)
					c = from->out[k];
			if (!c) {
				c = emu_chan_ring_create(from->id + eng->wbase, to->id + eng->wbase, slots);
				if ((from->nout & (from->nout - 1)) == 0)
					from->out = emu_xrealloc(from->out, (from->nout ? 2 * from->nout : 1) * sizeof(*from->out));
				from->out[from->nout++] = c;
				if ((to->nin & (to->nin - 1)) == 0)
					to->in = emu_xrealloc(to->in, (to->nin ? 2 * to->nin : 1) * sizeof(*to->in));
				to->in[to->nin++] = c;
			}
			ep->chan = c;
		}
	}
}

struct emu_engine *emu_engine_create(const struct emu_fabric *fab, const struct emu_engine_cfg *cfg,
				     char *err, size_t errlen)
{
	if (!fab->finalized) {
		snprintf(err, errlen, "fabric not finalized");
		return NULL;
	}
	struct emu_engine *eng = emu_xcalloc(1, sizeof(*eng));

	eng->fab = fab;
	if (engine_counts(eng, cfg, err, errlen))
		goto err;
	eng->lookahead = fab->min_latency;
	engine_workers(eng);
	engine_nodes(eng);
	if (eng->cfg.router == EMU_ROUTER_MERLIN)
		merlin_init(eng);
	engine_channels(eng);
	eng->routes = emu_routes_compute(fab, NULL, NULL, 0);
	eng->st.workers = eng->nworkers;
	pthread_mutex_init(&eng->ctl_lock, NULL);
	pthread_cond_init(&eng->ctl_cond, NULL);
	return eng;
err:
	if (eng->hwtopo)
		hwloc_topology_destroy(eng->hwtopo);
	free(eng);
	return NULL;
}

void emu_engine_set_model(struct emu_engine *eng, uint32_t node, const struct emu_model_ops *ops, void *arg)
{
	eng->nodes[node].ops = ops;
	eng->nodes[node].arg = arg;
}

void emu_engine_set_tap(struct emu_engine *eng, emu_tap_fn fn, void *ctx)
{
	eng->tap = fn;
	eng->tap_ctx = ctx;
}

int emu_engine_tap_port(struct emu_engine *eng, uint32_t node, unsigned port)
{
	if (node >= eng->fab->nnodes || port >= eng->nodes[node].nports || !eng->nodes[node].ports[port].connected)
		return -EINVAL;
	eng->nodes[node].ports[port].rare |= EMU_PORT_RARE_TAP;
	return 0;
}

int emu_engine_drop_nth(struct emu_engine *eng, uint32_t node, unsigned port, uint64_t n)
{
	if (node >= eng->fab->nnodes || port >= eng->nodes[node].nports || !eng->nodes[node].ports[port].connected ||
	    n == 0)
		return -EINVAL;
	eng->nodes[node].ports[port].drop_nth = n;
	if (n)
		eng->nodes[node].ports[port].rare |= EMU_PORT_RARE_LOSS;
	return 0;
}

unsigned emu_engine_workers(const struct emu_engine *eng)
{
	return eng->nworkers;
}

void emu_engine_set_wall_origin(struct emu_engine *eng, uint64_t wall_ns)
{
	eng->wall_origin = wall_ns;
}

void emu_engine_set_stall_origin(struct emu_engine *eng, emu_time_t t)
{
	eng->stall_origin = t;
}

void emu_engine_expect_done(struct emu_engine *eng, uint64_t count)
{
	eng->expect_done = count;
}

static int add_action(struct emu_engine *eng, bool is_node, uint32_t id, emu_time_t t, bool up)
{
	if (eng->ran)
		return -EINVAL;
	if (eng->nact == eng->capact) {
		eng->capact = eng->capact ? 2 * eng->capact : 16;
		eng->act = emu_xrealloc(eng->act, eng->capact * sizeof(*eng->act));
	}
	eng->act[eng->nact] = (struct emu_ctl_action){
		.t = t, .seq = (uint32_t)eng->nact, .id = id, .is_node = is_node, .up = up,
	};
	eng->nact++;
	return 0;
}

int emu_engine_schedule_link(struct emu_engine *eng, uint32_t link, emu_time_t t, bool up)
{
	if (link >= eng->fab->nlinks)
		return -EINVAL;
	return add_action(eng, false, link, t, up);
}

int emu_engine_schedule_node(struct emu_engine *eng, uint32_t node, emu_time_t t, bool up)
{
	if (node >= eng->fab->nnodes)
		return -EINVAL;
	return add_action(eng, true, node, t, up);
}

static int act_cmp(const void *a, const void *b)
{
	const struct emu_ctl_action *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void push_ctl_event(struct emu_engine *eng, uint32_t node, uint16_t type, uint16_t port,
			   emu_time_t t, bool up, uint64_t *seq)
{
	struct emu_ev ev = {
		.t = t,
		.key = EMU_EV_KEY(EMU_SRC_CONTROL, (*seq)++),
		.arg = up,
		.node = node,
		.type = type,
		.port = port,
	};
	/* the key is taken either way: every rank numbers these events alike */
	if (emu_engine_node_local(eng, node))
		emu_evq_push(&eng->workers[eng->part[node] - eng->wbase].q, &ev);
}

/*
 * Turn the schedule into node events (both ends of every affected link get
 * EMU_EV_LINK at exactly t) and precompute one routing snapshot per distinct
 * action time, so that the control thread only publishes mid-run.
 */
static void prepare_schedule(struct emu_engine *eng)
{
	const struct emu_fabric *fab = eng->fab;
	uint8_t *link_up = emu_xmalloc(fab->nlinks + 1);
	uint8_t *node_up = emu_xmalloc(fab->nnodes + 1);
	uint64_t seq = 0;

	memset(link_up, 1, fab->nlinks);
	memset(node_up, 1, fab->nnodes);
	if (eng->nact)
		qsort(eng->act, eng->nact, sizeof(*eng->act), act_cmp);
	eng->snapshots = emu_xcalloc(eng->nact + 1, sizeof(*eng->snapshots));
	for (size_t i = 0; i < eng->nact; i++) {
		const struct emu_ctl_action *a = &eng->act[i];

		if (a->is_node) {
			const struct emu_fab_node *fn = &fab->nodes[a->id];

			node_up[a->id] = a->up;
			push_ctl_event(eng, a->id, EMU_EV_NODE, 0, a->t, a->up, &seq);
			for (unsigned p = 0; p < fn->nports; p++) {
				const struct emu_fab_port *fp = &fab->ports[fn->port0 + p];

				if (fp->link == EMU_NONE32)
					continue;
				bool lup = a->up && link_up[fp->link] && node_up[fp->peer_node];

				push_ctl_event(eng, a->id, EMU_EV_LINK, (uint16_t)p, a->t, lup, &seq);
				push_ctl_event(eng, fp->peer_node, EMU_EV_LINK, fp->peer_port, a->t, lup, &seq);
			}
		} else {
			const struct emu_fab_link *l = &fab->links[a->id];
			bool lup = a->up && node_up[l->node[0]] && node_up[l->node[1]];

			link_up[a->id] = a->up;
			for (int s = 0; s < 2; s++)
				push_ctl_event(eng, l->node[s], EMU_EV_LINK, (uint16_t)l->port[s], a->t, lup, &seq);
		}
		if (i + 1 == eng->nact || eng->act[i + 1].t != a->t) {
			eng->snapshots[eng->nsnap] = emu_routes_compute(fab, link_up, node_up, eng->nsnap + 1);
			eng->nsnap++;
		}
	}
	free(link_up);
	free(node_up);
}

/* ---------- the control thread ---------- */

static void *ctl_main(void *arg)
{
	struct emu_engine *eng = arg;

	pthread_mutex_lock(&eng->ctl_lock);
	for (;;) {
		while (!eng->ctl_publish && !eng->ctl_quit)
			pthread_cond_wait(&eng->ctl_cond, &eng->ctl_lock);
		if (!eng->ctl_publish)
			break;
		struct emu_routes *next = eng->ctl_publish;
		struct emu_routes *old = eng->routes;

		rcu_assign_pointer(eng->routes, next);
		eng->ctl_publish = NULL;
		pthread_cond_broadcast(&eng->ctl_cond);
		pthread_mutex_unlock(&eng->ctl_lock);
		/* wait until no worker can still hold the old tables */
		synchronize_rcu();
		emu_routes_destroy(old);
		pthread_mutex_lock(&eng->ctl_lock);
	}
	pthread_mutex_unlock(&eng->ctl_lock);
	return NULL;
}

/* Serial section: hand @r to the control thread and wait until it is published. */
static void ctl_publish(struct emu_engine *eng, struct emu_routes *r)
{
	pthread_mutex_lock(&eng->ctl_lock);
	eng->ctl_publish = r;
	pthread_cond_broadcast(&eng->ctl_cond);
	while (eng->ctl_publish)
		pthread_cond_wait(&eng->ctl_cond, &eng->ctl_lock);
	pthread_mutex_unlock(&eng->ctl_lock);
}

/* ---------- windows ---------- */

/* ---------- the exchange with other processes (dist.h) ---------- */

struct blk {
	uint32_t from;
	uint32_t to;
	uint32_t nbytes;
	uint32_t nevents;
};

static size_t dist_out(void *arg, unsigned q, uint8_t *buf, size_t cap)
{
	struct emu_engine *eng = arg;
	size_t n = 0;

	for (uint32_t k = 0; k < eng->nrout; k++) {
		struct emu_chan *c = eng->rout[k];
		size_t len = emu_chan_remote_pending(c);

		if (!len || emu_dist_rank_of(eng->dist, c->to) != q)
			continue;
		if (buf) {
			struct blk b = { .from = c->from, .to = c->to, .nbytes = (uint32_t)len };

			if (n + sizeof(b) + len > cap)
				emu_die(EOVERFLOW);
			memcpy(buf + n, &b, sizeof(b));
			emu_chan_remote_take(c, buf + n + sizeof(b));
		}
		n += sizeof(struct blk) + len;
	}
	return n;
}

struct okarg {
	const struct emu_engine *eng;
	uint32_t to;
};

static int ok_node(void *arg, uint32_t node, uint32_t port)
{
	const struct okarg *o = arg;

	return node < o->eng->fab->nnodes && o->eng->part[node] == o->to && port < o->eng->nodes[node].nports;
}

/*
 * Check a peer's window payload to its end (blocks of records for our
 * workers, from workers of rank @q, each channel at most once), then hand
 * the blocks to the channels. Anything wrong: refuse the whole message.
 */
static bool dist_in(void *arg, unsigned q, const uint8_t *p, size_t len)
{
	struct emu_engine *eng = arg;
	struct emu_chan *seen[64];
	unsigned nseen = 0;

	for (int pass = 0; pass < 2; pass++) {
		size_t o = 0;

		while (o < len) {
			struct blk b;

			if (len - o < sizeof(b))
				return false;
			memcpy(&b, p + o, sizeof(b));
			o += sizeof(b);
			if (b.nbytes > len - o)
				return false;
			struct emu_chan *c = find_chan(eng->rin, eng->nrin, b.from, b.to);

			if (pass == 0) {
				struct okarg oa = { eng, b.to };

				if (!c || emu_dist_rank_of(eng->dist, b.from) != q ||
				    emu_chan_remote_check(p + o, b.nbytes, eng->win_end, ok_node, &oa) < 0)
					return false;
				for (unsigned i = 0; i < nseen; i++)
					if (seen[i] == c)
						return false;
				if (nseen == 64)
					return false;
				seen[nseen++] = c;
			} else {
				emu_chan_remote_feed(c, p + o, b.nbytes);
			}
			o += b.nbytes;
		}
	}
	return true;
}

/* how long without progress is stuck: the stall limit, or twice the longest wait announced */
static emu_time_t stall_limit(const struct emu_engine *eng)
{
	emu_time_t w = 2 * eng->st.wait_max;

	return w > eng->cfg.stall ? w : eng->cfg.stall;
}

/* This process's part of the window's reduction; consumes the workers' reports. */
static void local_sum(struct emu_engine *eng, struct emu_dist_sum *s)
{
	*s = (struct emu_dist_sum){ .next = EMU_TIME_INF, .stop_req = EMU_TIME_INF };
	for (unsigned i = 0; i < eng->nworkers; i++) {
		struct emu_worker *w = &eng->workers[i];

		if (w->init_rc)
			s->failed = 1;
		if (w->next_local < s->next)
			s->next = w->next_local;
		if (w->done) {
			s->done += w->done;
			w->done = 0;
			if (w->done_max > s->done_max)
				s->done_max = w->done_max;
		}
		if (w->stop_req < s->stop_req)
			s->stop_req = w->stop_req;
		w->stop_req = EMU_TIME_INF;
		if (w->progress_t > s->progress)
			s->progress = w->progress_t;
		if (w->wait_max > s->wait)
			s->wait = w->wait_max;
	}
	/* events in flight to other processes are pending too */
	for (uint32_t k = 0; k < eng->nrout; k++) {
		emu_time_t t = emu_chan_remote_min_time(eng->rout[k]);

		if (t < s->next)
			s->next = t;
	}
}

/* add the window just processed to the critical path (its busiest worker) */
static void window_work(struct emu_engine *eng)
{
	uint64_t max = 0;

	for (unsigned i = 0; i < eng->nworkers; i++) {
		struct emu_worker *w = &eng->workers[i];
		uint64_t d = w->events - w->events_mark;

		w->events_mark = w->events;
		if (d > max)
			max = d;
	}
	eng->st.events_critical += max;
}

/* plan_window's first phase: this process's sums, exchanged with the other ranks; false: the run ends */
static bool window_sums(struct emu_engine *eng, struct emu_dist_sum *sum)
{
	local_sum(eng, sum);
	window_work(eng);
	if (eng->dist && emu_dist_exchange(eng->dist, sum, dist_out, dist_out, dist_in, eng)) {
		snprintf(eng->err, sizeof(eng->err), "%s", emu_dist_error(eng->dist));
		eng->dist_failed = true;
		eng->done = true;
		return false;
	}
	if (sum->failed) {
		eng->done = true;
		if (eng->dist)
			snprintf(eng->err, sizeof(eng->err), "a node failed to start");
		return false;
	}
	return true;
}

/* what the nodes reported: completions and stop requests */
static void window_reports(struct emu_engine *eng, const struct emu_dist_sum *sum)
{
	if (sum->done) {
		eng->ndone += sum->done;
		if (sum->done_max > eng->st.last_done)
			eng->st.last_done = sum->done_max;
	}
	if (sum->stop_req != EMU_TIME_INF) {
		emu_time_t s = sum->stop_req + eng->lookahead;

		if (s < eng->stop_at)
			eng->stop_at = s;
		eng->st.stopped = true;
	}
}

/* the stall watchdog; true: the run ends, stalled */
static bool window_watchdog(struct emu_engine *eng, const struct emu_dist_sum *sum, emu_time_t next)
{
	/*
	 * watchdog: nothing moved for cfg.stall of emulated time, nor for
	 * twice the longest timer a node waits on (a backed-off retransmission
	 * timeout longer than the stall limit is waiting, not stuck). Windows
	 * are cut at the deadline so that when it stops does not depend on
	 * where windows fall (they depend on the event set, not on the
	 * results).
	 */
	if (sum->wait > eng->st.wait_max)
		eng->st.wait_max = sum->wait;
	if (eng->cfg.stall && eng->expect_done && next != EMU_TIME_INF) {
		if (sum->progress && sum->progress - 1 > eng->st.last_progress)
			eng->st.last_progress = sum->progress - 1;
		if (!eng->stall_armed) {
			eng->stall_armed = true;
			eng->st.last_progress = next > eng->stall_origin ? next : eng->stall_origin;
		}
		emu_time_t deadline = eng->st.last_progress + stall_limit(eng);

		if (next >= deadline && eng->ndone < eng->expect_done) {
			eng->st.stalled = true;
			eng->st.stopped = true;
			eng->done = true;
			eng->st.emulated = deadline;
			return true;
		}
	}
	return false;
}

/* the run's end: every completion happened, or a stop, the time limit or nothing left; true: it ends */
static bool window_stop(struct emu_engine *eng, emu_time_t next)
{
	/* every expected completion happened: stop one lookahead after the last */
	if (eng->expect_done && eng->ndone >= eng->expect_done && eng->st.last_done + eng->lookahead < eng->stop_at) {
		eng->stop_at = eng->st.last_done + eng->lookahead;
		eng->st.stopped = true;
	}
	if (next == EMU_TIME_INF || next >= eng->stop_at) {
		eng->done = true;
		if (eng->stop_at != EMU_TIME_INF && next != EMU_TIME_INF) {
			/* cfg.end reached (or a stop): the emulation covered [0, stop_at] on every rank */
			eng->st.emulated = eng->stop_at;
			eng->st.stopped = true;
		}
		return true;
	}
	return false;
}

/* the end of a lookahead window starting at @next (EMU_TIME_INF past the clock's range) */
emu_time_t emu_lookahead_end(const struct emu_engine *eng, emu_time_t next)
{
	emu_time_t end = next + eng->lookahead;

	return end < next ? EMU_TIME_INF : end;
}

/* cfg.sample: the samples due by @next, then the window's end cut at the next one */
static __attribute__((noinline)) emu_time_t window_sample(struct emu_engine *eng, emu_time_t next, emu_time_t end)
{
	emu_time_t every = eng->cfg.sample_every;

	if (!eng->sample_next)
		eng->sample_next = every;
	while (eng->sample_next <= next && eng->sample_next != EMU_TIME_INF) {
		eng->cfg.sample(eng->cfg.sample_ctx, eng->sample_next);
		eng->sample_next = eng->sample_next + every > eng->sample_next ? eng->sample_next + every : EMU_TIME_INF;
	}
	return eng->sample_next < end ? eng->sample_next : end;
}

/* the next window [next, end): routing changes due at @next published, @end cut where it must */
void emu_window_bounds(struct emu_engine *eng, emu_time_t next, emu_time_t end)
{
	/* routing changes due at this instant become visible before anything at it runs */
	while (eng->next_act < eng->nact && eng->act[eng->next_act].t <= next) {
		emu_time_t t = eng->act[eng->next_act].t;

		while (eng->next_act < eng->nact && eng->act[eng->next_act].t == t)
			eng->next_act++;
		ctl_publish(eng, eng->snapshots[eng->next_snap]);
		eng->snapshots[eng->next_snap++] = NULL;
	}
	if (eng->next_act < eng->nact && eng->act[eng->next_act].t < end)
		end = eng->act[eng->next_act].t;
	if (eng->stop_at < end)
		end = eng->stop_at;
	if (eng->stall_armed && eng->ndone < eng->expect_done && eng->st.last_progress + stall_limit(eng) < end)
		end = eng->st.last_progress + stall_limit(eng);
	if (eng->cfg.sample_every)
		end = window_sample(eng, next, end);
	eng->win_start = next;
	eng->win_end = end;
	eng->st.windows++;
	if (eng->cfg.progress && (eng->st.windows & 255) == 0) {
		uint64_t now = emu_wall_ns();

		if (now - eng->last_progress > 100000000) {
			eng->last_progress = now;
			eng->cfg.progress(eng->cfg.progress_ctx, next, eng->ndone, eng->expect_done);
		}
	}
}

/* ---------- the wall clock ---------- */

/*
 * plan_window - the serial section of the window barrier: gather what the
 * workers (and the other ranks) report, decide whether the run ends, and
 * plan the next window, in phases.
 */
static void plan_window(void *arg)
{
	struct emu_engine *eng = arg;
	struct emu_dist_sum sum;

	if (!window_sums(eng, &sum))
		return;
	emu_time_t next = sum.next;

	window_reports(eng, &sum);
	if (window_watchdog(eng, &sum, next) || window_stop(eng, next))
		return;
	if (eng->realtime) {
		emu_rt_plan(eng, next);
		return;
	}
	emu_window_bounds(eng, next, emu_lookahead_end(eng, next));
	emu_rt_window_pace(eng, next);
}

static void sink_evq(void *arg, const struct emu_ev *ev)
{
	struct emu_worker *w = arg;

	if (ev->type == EMU_EV_CREDIT)
		emu_port_credit_in(&w->eng->nodes[ev->node], ev);
	else
		emu_evq_push(&w->q, ev);
}

/*
 * clip_busy - utilization is busy time within the run, [0, emulated]: a
 * frame still being serialized when the run ended counted its whole
 * serialization time, so a link busy to the end showed a utilization above
 * 1 (1.0036 over 29 us: one 1.3 KB frame). A serializer takes a frame
 * only when idle, so the busy intervals do not overlap and only the last
 * one can reach past the end: take off what lies beyond it. The end is
 * the same on every rank when the run was stopped (done, --stall,
 * cfg.end); a run that ran dry ends at this rank's last event, which a
 * distributed run's report (the latest over all ranks) never precedes.
 */
static void clip_busy(struct emu_engine *eng)
{
	emu_time_t end = eng->st.emulated;

	for (uint32_t i = 0; i < eng->fab->nnodes; i++) {
		struct emu_node *n = &eng->nodes[i];

		if (!emu_engine_node_local(eng, i))
			continue;
		for (unsigned p = 0; p < n->nports; p++) {
			struct emu_port *ep = &n->ports[p];

			if (ep->busy_until > end) {
				emu_time_t over = ep->busy_until - end;

				ep->busy_ps -= over < ep->busy_ps ? over : ep->busy_ps;
			}
		}
	}
}

uint64_t emu_engine_mem_estimate(const struct emu_fabric *fab, unsigned nroutes)
{
	uint64_t nsw = fab->nswitches;
	uint64_t routes = sizeof(struct emu_routes) + (nsw * nsw + 1) * sizeof(uint64_t) + fab->nlinks + fab->nnodes;

	return (uint64_t)fab->nnodes * (sizeof(struct emu_node) + sizeof(uint32_t)) +
	       (uint64_t)(fab->nports + 1) * sizeof(struct emu_port) + nroutes * routes;
}

/*
 * What the next events of @q touch was last touched long ago: fetch it
 * now. Three events ahead the node and a frame's first two lines; one
 * ahead what the node's pointers lead to: the model's state and, for a
 * frame or a TXDONE, the port (for a frame its line 0: the link, the
 * ingress buffer, the counters; for a TXDONE lines 1 and 2: the
 * serializer, the queue's counts). Nothing else happens.
 *
 * Always inline: GCC finds a function whose only effects are prefetches
 * pure, and drops a call to a pure function that returns nothing, with
 * every prefetch in it (GCC 12: none of these was in the binary before).
 */
static inline __attribute__((always_inline)) void prefetch_ahead(const struct emu_node *nodes, const struct emu_evq *q)
{
	/* the events left in the current slot after the one popped: [a, stop) */
	const struct emu_ev *a = emu_evq_ahead(q, 0), *stop = q->stop;

	if (a + 2 < stop) {
		const struct emu_ev *b = a + 2;

		__builtin_prefetch(&nodes[b->node]);
		if (b->type == EMU_EV_FRAME) {
			__builtin_prefetch(b->frame);
			__builtin_prefetch(b->frame->data);
		}
	} else if (a == stop) {
		return;
	}
	const struct emu_node *n = &nodes[a->node];

	__builtin_prefetch(n->state);
	if (a->type > EMU_EV_TXDONE)	/* neither a frame nor a TXDONE */
		return;
	const char *p = (const char *)&n->ports[a->port];

	if (a->type == EMU_EV_FRAME) {
		__builtin_prefetch(p);
	} else {
		__builtin_prefetch(p + EMU_CACHELINE);
		__builtin_prefetch(p + 2 * EMU_CACHELINE);
	}
}

void emu_worker_process(struct emu_worker *w, emu_time_t end)
{
	struct emu_node *const nodes = w->eng->nodes;	/* fixed while events run: not reloaded after each call */
	struct emu_ev spare;
	const struct emu_ev *e;

	/* counted here, added to the worker's at the end: no store per event */
	uint64_t ncredit = 0, nq = 0;

	w->in_process = true;
	if (emu_unlikely(w->later_min < end))
		emu_port_ahead_window(w, end);
	while ((e = emu_evq_next(&w->q, end, &spare))) {
		/* what the handler needs, read before it can push (e is the queue's) */
		unsigned type = e->type, port = e->port;
		uint64_t arg = e->arg;
		struct emu_node *n = &nodes[e->node];

		prefetch_ahead(nodes, &w->q);
		w->now = e->t;
		w->cur_key = e->key;
		nq++;
		if (emu_likely(type == EMU_EV_FRAME)) {	/* most events: a test, not the jump table */
			emu_port_arrive(n, port, e->frame);
		} else {
			switch (type) {
			case EMU_EV_CREDIT:
				ncredit++;	/* credits count when sent (port.c) */
				emu_port_credit(n, port, arg);
				break;
			case EMU_EV_TIMER:
				if (port)	/* a wake (1), not a timer that is its own event (0) */
					emu_timer_fired(n);
				if (n->up && n->ops->timer)
					n->ops->timer(n, arg);
				break;
			case EMU_EV_TXDONE:
				emu_port_txdone(n, port);
				break;
			case EMU_EV_LINK:
				emu_port_link(n, port, arg != 0);
				break;
			case EMU_EV_XBAR:
				emu_xbar_wake(n, port, arg != 0);
				break;
			case EMU_EV_NODE:
				if (n->up != (arg != 0)) {
					n->up = arg != 0;
					emu_port_refresh(n);
					if (n->ops->state)
						n->ops->state(n, n->up);
				}
				break;
			default:
				emu_die(EINVAL);
			}
		}
		if (emu_unlikely(w->ahead_n))
			emu_port_ahead(w, end);
	}
	w->events += nq - ncredit;
	w->qevents += nq;
	w->in_process = false;
	if (w->now > w->last_event)
		w->last_event = w->now;
}

static void drain_in(struct emu_worker *w)
{
	for (uint32_t i = 0; i < w->nin; i++)
		w->in[i]->ops->drain(w->in[i], sink_evq, w);
}

static void flush_out(struct emu_worker *w)
{
	for (uint32_t i = 0; i < w->nout; i++)
		w->out[i]->ops->flush(w->out[i]);
}

static void barrier(struct emu_engine *eng, void (*serial)(void *))
{
	rcu_thread_offline();
	emu_barrier_wait(&eng->bar, serial, eng);
	rcu_thread_online();
}

static void *worker_main(void *arg)
{
	struct emu_worker *w = arg;
	struct emu_engine *eng = w->eng;

	rcu_register_thread();
	/* the wall clock: sleeps and ppoll() wake within 1 ns of asked, not 50 us */
	if (eng->cfg.clock == EMU_CLOCK_WALL)
		(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	w->now = 0;
	for (uint32_t i = 0; i < w->nnodes && !w->init_rc; i++) {
		struct emu_node *n = &eng->nodes[w->nodes[i]];

		if (n->ops->state_size)
			n->state = emu_xaligned(n->ops->state_size);	/* its first line is what prefetch_ahead() fetches */
		if (n->ops->init)
			w->init_rc = n->ops->init(n, n->arg);
	}
	flush_out(w);
	/*
	 * what every worker's models sent at init is in its channels before
	 * any worker drains them for the first window: one that drained
	 * early planned a window past an arrival still in a channel, and its
	 * peers ran that window without the events the arrival makes
	 */
	barrier(eng, NULL);
	/*
	 * real time: the frame pools' first chunks fault in now, not in the
	 * first windows (1-3 ms), and spares for a pool that grows (1-6 ms a
	 * chunk on a virtual machine, at the same emulated instants every run):
	 * one per 32 nodes, at most 32 (64 MiB)
	 */
	if (eng->realtime) {
		uint32_t spares = 1 + eng->fab->nnodes / 32;

		for (unsigned c = 0; c < EMU_FCLASS_N; c++)
			if (!w->pool.free[c])
				emu_pool_grow(&w->pool, c);
		emu_pool_prefault(&w->pool, spares < 32 ? spares : 32);
	}
	for (;;) {
		drain_in(w);
		w->next_local = w->init_rc ? 0 : emu_evq_min_time(&w->q);
		if (w->later_min < w->next_local)
			w->next_local = w->later_min;
		barrier(eng, plan_window);
		if (eng->done)
			break;
		for (uint32_t i = 0; i < w->nrin; i++)
			w->rin[i]->ops->drain(w->rin[i], sink_evq, w);
		if (eng->realtime) {
			emu_rt_process(w);
		} else {
			emu_rt_wall_wait(eng);
			emu_worker_process(w, eng->win_end);
		}
		flush_out(w);
		rcu_quiescent_state();
		barrier(eng, NULL);
	}
	rcu_unregister_thread();
	return NULL;
}

static void pin(struct emu_engine *eng, struct emu_worker *w, const int *pus, int npus)
{
	hwloc_topology_t topo = eng->hwtopo;
	hwloc_obj_t pu;

	if (eng->cfg.no_pin || npus <= 0)
		return;
	pu = hwloc_get_pu_obj_by_os_index(topo,
					  (unsigned)pus[(w->id + (eng->cfg.pin_offset ? eng->wbase : 0)) % (unsigned)npus]);
	if (pu && pu->cpuset)
		hwloc_set_thread_cpubind(topo, w->thread, pu->cpuset, 0);
}

/* emu_engine_run's first phase: every node has a model; the schedule, the stop time and the clock set up */
static int run_prepare(struct emu_engine *eng)
{
	if (eng->ran)
		return -EINVAL;
	eng->ran = true;
	for (uint32_t i = 0; i < eng->fab->nnodes; i++)
		if (!eng->nodes[i].ops) {
			fprintf(stderr, "canary-emu: node %s has no model\n", eng->fab->nodes[i].name);
			return -EINVAL;
		}
	prepare_schedule(eng);
	for (uint32_t i = 0; i < eng->fab->nnodes; i++)
		emu_port_refresh(&eng->nodes[i]);
	eng->stop_at = eng->cfg.end ? eng->cfg.end : EMU_TIME_INF;
	eng->dilation = eng->cfg.dilation;
	if (eng->cfg.clock == EMU_CLOCK_WALL) {
		eng->realtime = eng->nworkers == 1 && eng->wtotal == 1 && !eng->dist;
		eng->oversleep = EMU_OVERSLEEP_START;
		eng->event_h = emu_xcalloc(1, sizeof(*eng->event_h));
	}
	return 0;
}

/* the PUs this process may use, in order, into @pus (room for 1024); how many */
static int run_pus(struct emu_engine *eng, int *pus)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	int npus = 0;

	if (set && hwloc_get_cpubind(eng->hwtopo, set, HWLOC_CPUBIND_PROCESS) == 0) {
		int id;

		hwloc_bitmap_foreach_begin(id, set)
			if (npus < 1024)
				pus[npus++] = id;
		hwloc_bitmap_foreach_end();
	}
	hwloc_bitmap_free(set);
	return npus;
}

/* start the control thread and the pinned workers, wait for the workers to end, stop the control thread */
static void run_threads(struct emu_engine *eng, const int *pus, int npus)
{
	unsigned nw = eng->nworkers;
	/* spin at barriers only when every worker (of every local rank) has its own PU */
	unsigned spinners = eng->cfg.pin_offset ? eng->wtotal : nw;

	emu_barrier_init(&eng->bar, nw, spinners <= (unsigned)(npus ? npus : 1) && !eng->dist ? 20000 : 0);

	pthread_create(&eng->ctl_thread, NULL, ctl_main, eng);
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	if (nw > 64)
		pthread_attr_setstacksize(&attr, 256 * 1024);
	uint64_t t0 = emu_wall_now(eng);

	for (unsigned i = 0; i < nw; i++) {
		int err = pthread_create(&eng->workers[i].thread, &attr, worker_main, &eng->workers[i]);

		if (err)
			emu_die(err);
		pin(eng, &eng->workers[i], pus, npus);
	}
	pthread_attr_destroy(&attr);
	for (unsigned i = 0; i < nw; i++)
		pthread_join(eng->workers[i].thread, NULL);
	eng->st.wall_ns = emu_wall_now(eng) - t0;

	pthread_mutex_lock(&eng->ctl_lock);
	eng->ctl_quit = true;
	pthread_cond_broadcast(&eng->ctl_cond);
	pthread_mutex_unlock(&eng->ctl_lock);
	pthread_join(eng->ctl_thread, NULL);
}

/* the workers' counts summed into the run's statistics; the first init error, or a broken distributed run's */
static int run_sums(struct emu_engine *eng)
{
	emu_time_t last = 0;
	struct emu_lagh inj = { 0 };
	int rc = 0;

	for (unsigned i = 0; i < eng->nworkers; i++) {
		struct emu_worker *w = &eng->workers[i];

		if (w->inject_h)
			emu_lagh_merge(&inj, w->inject_h);

		if (w->init_rc && !rc)
			rc = w->init_rc;
		eng->st.events += w->events;
		eng->st.queue_events += w->qevents;
		eng->st.frame_hops += w->frame_hops;
		eng->st.pool_frames += w->pool.allocated;
		if (w->last_event > last)
			last = w->last_event;
		for (uint32_t k = 0; k < w->nout; k++) {
			eng->st.cross_events += w->out[k]->sent;
			eng->st.spilled += w->out[k]->spilled;
		}
	}
	if (eng->dist_failed || (eng->dist && eng->err[0]))
		rc = rc ? rc : -EPIPE;
	eng->st.done = eng->ndone;
	eng->st.last_event = last;
	if (!eng->st.stopped || eng->st.emulated == 0)
		eng->st.emulated = last;
	clip_busy(eng);
	eng->st.inject_lag = emu_lagh_dist(&inj);
	return rc;
}

/* the run's speed and, on the wall clock, its dilation and how well it kept pace */
static void run_pace_stats(struct emu_engine *eng)
{
	eng->st.frame_hops_per_s = eng->st.wall_ns ? (double)eng->st.frame_hops * 1e9 / (double)eng->st.wall_ns : 0;
	if (eng->cfg.clock == EMU_CLOCK_WALL && eng->dilation <= 0 && eng->st.emulated > eng->emu0)
		eng->dilation = emu_auto_dilation(eng->st.wall_ns, eng->st.emulated - eng->emu0);
	eng->st.dilation = eng->dilation;
	if (eng->lag_windows)
		eng->st.mean_lag_ns = eng->lag_sum / eng->lag_windows;
	/* kept up: no window started more than the bound behind its target */
	eng->st.lag_bound_ns = eng->cfg.lag_bound_ns;
	eng->st.paced_windows = eng->lag_windows;
	eng->st.kept_up = eng->cfg.clock == EMU_CLOCK_WALL && eng->lag_windows && eng->st.max_lag_ns <= eng->cfg.lag_bound_ns;
	eng->st.event_lag = emu_lagh_dist(eng->event_h);
}

int emu_engine_run(struct emu_engine *eng)
{
	int rc = run_prepare(eng);

	if (rc)
		return rc;
	int *pus = emu_xcalloc(1024, sizeof(int));
	int npus = run_pus(eng, pus);

	run_threads(eng, pus, npus);
	free(pus);
	rc = run_sums(eng);
	run_pace_stats(eng);
	return rc;
}

/* ---------- accessors and teardown ---------- */

const struct emu_run_stats *emu_engine_stats(const struct emu_engine *eng)
{
	return &eng->st;
}

struct emu_node *emu_engine_node(struct emu_engine *eng, uint32_t id)
{
	return &eng->nodes[id];
}

unsigned emu_engine_partition(const struct emu_engine *eng, uint32_t node)
{
	return eng->part[node];
}

bool emu_engine_node_local(const struct emu_engine *eng, uint32_t node)
{
	return eng->part[node] >= eng->wbase && eng->part[node] < eng->wbase + eng->nworkers;
}

const char *emu_engine_error(const struct emu_engine *eng)
{
	return eng->err;
}

const struct emu_fabric *emu_engine_fabric(const struct emu_engine *eng)
{
	return eng->fab;
}

void emu_engine_destroy(struct emu_engine *eng)
{
	if (!eng)
		return;
	for (unsigned i = 0; i < eng->nworkers; i++) {
		struct emu_worker *w = &eng->workers[i];

		for (uint32_t k = 0; k < w->nout; k++)
			emu_chan_destroy(w->out[k]);
		for (uint32_t k = 0; k < w->nrin; k++)
			emu_chan_destroy(w->rin[k]);
		free(w->later);
		free(w->out);
		free(w->in);
		free(w->rin);
		free(w->nodes);
		free(w->inject_h);
		emu_evq_fini(&w->q);
	}
	for (uint32_t i = 0; i < eng->fab->nnodes; i++) {
		struct emu_node *n = &eng->nodes[i];

		if (n->state && n->ops && n->ops->fini)
			n->ops->fini(n);
		free(n->state);
		free(n->tfifo.ev);
		free(n->tlog);
		emu_heap_fini(&n->theap);
		for (unsigned p = 0; p < n->nports; p++) {
			free(n->ports[p].rq);
			free(n->ports[p].rqx);
			free(n->ports[p].cq);
		}
		emu_xbar_destroy(n->xb);
	}
	/* frames still queued or in flight belong to some chunk: free chunks last */
	for (unsigned i = 0; i < eng->nworkers; i++)
		emu_pool_fini(&eng->workers[i].pool);
	for (size_t i = 0; i < eng->nsnap; i++)
		emu_routes_destroy(eng->snapshots[i]);
	free(eng->snapshots);
	emu_routes_destroy(eng->routes);
	free(eng->act);
	free(eng->watch);
	free(eng->pfd);
	free(eng->event_h);
	free(eng->rout);
	free(eng->rin);
	free(eng->workers);
	free(eng->nodes);
	free(eng->ports);
	free(eng->part);
	pthread_mutex_destroy(&eng->ctl_lock);
	pthread_cond_destroy(&eng->ctl_cond);
	if (eng->hwtopo)
		hwloc_topology_destroy(eng->hwtopo);
	free(eng);
}
