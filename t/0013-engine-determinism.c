// SPDX-License-Identifier: MIT
/*
 * DOC: determinism. Random uniform traffic on a 128-host fat tree (8 leaves,
 * 4 spines, adaptive routing, so next hops depend on queue state) gives
 * identical per-node counters, per-port counters, and an identical hash of
 * every delivery timestamp, with 1, 2, 3 and per-node workers, and for two
 * runs with the same seed; a different seed gives a different hash. Also
 * with a lossy fabric and injected loss (random drops per link), and with a
 * run ended by emu_stop() from a model (the stop point must not depend on
 * the partitioning either). With 7 workers the fabric has fewer than two
 * groups (a switch and its hosts) per worker, so nodes are placed one by
 * one: the run is identical too, and a host sits with its switch unless
 * that switch's worker already holds its even share of the weight.
 */
#include "helpers.h"

#define STOP_AFTER 40

struct digest {
	uint64_t h;
	uint64_t recv, sent, hops, events;
	emu_time_t emulated;
};

static void stopper_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct emu_trafgen_state *s = emu_node_state(n);

	emu_trafgen_ops.rx(n, f, port);
	if (s->recv == STOP_AFTER)
		emu_stop(n);
}

static struct emu_model_ops stopper_ops;

static struct digest run(unsigned workers, bool per_node, uint64_t seed, bool lossy, bool stop)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=8,spines=4,hosts=16");
	struct emu_engine_cfg cfg = {
		.workers = workers, .per_node = per_node, .seed = seed, .lossy = lossy,
		.buffer_bytes = lossy ? 8192 : 0, .routing = EMU_ROUTE_ADAPTIVE,
	};
	struct emu_trafgen_cfg tg = { .frame_bytes = 1024, .load = 0.7, .until = 15 * EMU_US, .dst_host = EMU_NONE32 };
	struct digest d = { 0 };

	if (lossy)
		for (uint32_t i = 0; i < fab->nlinks; i++)
			fab->links[i].loss[0] = fab->links[i].loss[1] = 0.01;
	struct emu_engine *eng = t_engine(fab, &cfg);

	t_plug(eng, fab, &tg);
	if (stop) {
		stopper_ops = emu_trafgen_ops;
		stopper_ops.rx = stopper_rx;
		emu_engine_set_model(eng, fab->hosts[5], &stopper_ops, &tg);
	}
	emu_engine_run(eng);
	for (uint32_t i = 0; i < fab->nnodes; i++) {
		struct emu_node *n = emu_engine_node(eng, i);

		if (fab->nodes[i].kind == EMU_NODE_HOST) {
			struct emu_trafgen_state *s = emu_node_state(n);

			d.h = emu_hash64(d.h ^ s->hash) ^ s->recv ^ (s->sent << 20) ^ s->lat_sum;
			d.recv += s->recv;
			d.sent += s->sent;
		}
		for (unsigned p = 0; p < n->nports; p++) {
			const struct emu_port_stats ps = emu_port_stats(&n->ports[p]), *st = &ps;

			d.h = emu_hash64(d.h ^ st->tx_frames ^ st->rx_frames << 16 ^ st->drops_queue << 32 ^
					 st->drops_loss << 48 ^ st->q_peak_bytes ^ st->busy_ps);
		}
	}
	const struct emu_run_stats *rs = emu_engine_stats(eng);

	d.hops = rs->frame_hops;
	d.events = rs->events;
	d.emulated = rs->emulated;
	diag("workers=%u%s seed=%llu%s%s: %u workers, recv %llu, hops %llu, events %llu, windows %llu, emulated %llu ps, hash %016llx",
	     workers, per_node ? " per-node" : "", (unsigned long long)seed, lossy ? " lossy" : "", stop ? " stop" : "",
	     rs->workers, (unsigned long long)d.recv, (unsigned long long)d.hops, (unsigned long long)d.events,
	     (unsigned long long)rs->windows, (unsigned long long)d.emulated, (unsigned long long)d.h);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
	return d;
}

/* the one-by-one placement: balanced, and hosts kept home where it fits */
static void check_split(unsigned nw)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=8,spines=4,hosts=16");
	struct emu_engine_cfg cfg = { .workers = nw, .routing = EMU_ROUTE_ADAPTIVE };
	struct emu_engine *eng = t_engine(fab, &cfg);
	uint64_t load[64] = { 0 }, total = 0, cap, maxw = 0;
	uint32_t home = 0, away = 0, away_full = 0, bad = 0;

	for (uint32_t i = 0; i < fab->nnodes; i++) {
		unsigned w = emu_engine_partition(eng, i);
		uint64_t wt = fab->nodes[i].kind == EMU_NODE_HOST ? 1 : fab->nodes[i].nports;

		if (w >= nw) {
			bad++;
			continue;
		}
		load[w] += wt;
		total += wt;
		maxw = wt > maxw ? wt : maxw;
	}
	cap = (total + nw - 1) / nw;
	for (uint32_t i = 0; i < fab->nnodes; i++) {
		const struct emu_fab_node *n = &fab->nodes[i];

		if (n->kind != EMU_NODE_HOST)
			continue;
		unsigned w = emu_engine_partition(eng, i), sw = emu_engine_partition(eng, n->group);

		if (w == sw)
			home++;
		else {
			away++;
			away_full += load[sw] + 1 > cap;
		}
	}
	uint64_t lo = UINT64_MAX, hi = 0;

	for (unsigned w = 0; w < nw; w++) {
		lo = load[w] < lo ? load[w] : lo;
		hi = load[w] > hi ? load[w] : hi;
	}
	ok(bad == 0 && lo > 0 && hi <= cap + maxw && home > 0 && away_full == away,
	   "%u workers, one-by-one placement: loads %llu-%llu (even share %llu), %u hosts with their switch, "
	   "%u away (%u of them because the switch's worker was full)", nw, (unsigned long long)lo,
	   (unsigned long long)hi, (unsigned long long)cap, home, away, away_full);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

static bool same(struct digest a, struct digest b)
{
	return a.h == b.h && a.recv == b.recv && a.sent == b.sent && a.hops == b.hops && a.events == b.events &&
	       a.emulated == b.emulated;
}

int main(void)
{
	plan(15);
	struct digest ref = run(1, false, 42, false, false);

	ok(ref.recv > 1000, "the scenario moves traffic (%llu frames delivered)", (unsigned long long)ref.recv);
	ok(same(run(2, false, 42, false, false), ref), "2 workers: identical to 1 worker");
	ok(same(run(3, false, 42, false, false), ref), "3 workers: identical");
	ok(same(run(7, false, 42, false, false), ref), "7 workers (nodes placed one by one): identical");
	check_split(7);
	ok(same(run(0, true, 42, false, false), ref), "per-node workers (140 threads): identical");
	ok(same(run(2, false, 42, false, false), ref), "same seed again: identical");
	ok(run(1, false, 43, false, false).h != ref.h, "another seed: different");

	struct digest lref = run(1, false, 7, true, false);

	ok(lref.recv < lref.sent, "lossy with 1%% injected loss drops frames (%llu of %llu delivered)",
	   (unsigned long long)lref.recv, (unsigned long long)lref.sent);
	ok(same(run(2, false, 7, true, false), lref), "lossy: 2 workers identical");
	ok(same(run(3, false, 7, true, false), lref), "lossy: 3 workers identical");

	struct digest sref = run(1, false, 42, false, true);

	ok(sref.emulated < ref.emulated && sref.recv < ref.recv, "emu_stop ends the run early (at %llu ps)",
	   (unsigned long long)sref.emulated);
	ok(same(run(2, false, 42, false, true), sref), "stopped run: 2 workers identical");
	ok(same(run(3, false, 42, false, true), sref), "stopped run: 3 workers identical");
	ok(same(run(0, true, 42, false, true), sref), "stopped run: per-node identical");
	return done_testing();
}
