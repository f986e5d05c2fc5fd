// SPDX-License-Identifier: MIT
/*
 * DOC: bench/engine - how fast is the engine itself?
 *
 * 1. Fabric: random uniform traffic of 1 KiB frames (every host at --load of
 *    line rate, destinations uniform) on a fat tree (default the paper's
 *    1024 hosts), forwarding switches with adaptive routing, lossless. Runs
 *    once per worker count and reports frame-hops per wall second, ns per
 *    frame-hop, the speedup over the first worker count, and peak RSS.
 * 2. Ring floor: ns per event through one SPSC ring between two pinned
 *    threads.
 *
 *   bench/engine [--topology SPEC] [--workers 1,2] [--load F] [--time T]
 *                [--repeat N] [--ring N] [--csv] [--no-warmup]
 *
 * The machine is shared and noisy: a first run is discarded (page faults,
 * caches; --no-warmup skips it, for counting instructions) and every figure
 * is the best of --repeat runs (default 3).
 */
#include <errno.h>
#include <getopt.h>
#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/engine/engine.h"
#include "emu/switch/fwd.h"
#include "emu/engine/ring.h"
#include "emu/host/trafgen.h"
#include "emu/units.h"
#include "emu/engine/util.h"
#include "topologies/topo.h"

struct result {
	unsigned workers;
	double wall_s;
	uint64_t hops;
	double hops_per_s;
	uint64_t events;
	uint64_t queue_events;
	uint64_t windows;
	uint64_t cross;
	uint64_t delivered;
	emu_time_t emulated;
};

static struct result run_fabric(struct emu_fabric *fab, unsigned workers, double load, emu_time_t until)
{
	struct emu_engine_cfg cfg = { .workers = workers, .seed = 1, .routing = EMU_ROUTE_ADAPTIVE };
	struct emu_trafgen_cfg tg = { .frame_bytes = 1024, .load = load, .until = until, .dst_host = EMU_NONE32, .jitter = true };
	char err[256];
	struct emu_engine *eng = emu_engine_create(fab, &cfg, err, sizeof(err));
	struct result r = { .workers = workers };

	if (!eng) {
		fprintf(stderr, "bench/engine: %s\n", err);
		exit(2);
	}
	for (uint32_t i = 0; i < fab->nnodes; i++)
		emu_engine_set_model(eng, i, fab->nodes[i].kind == EMU_NODE_SWITCH ? &emu_fwd_ops : &emu_trafgen_ops,
				     fab->nodes[i].kind == EMU_NODE_SWITCH ? NULL : &tg);
	emu_engine_run(eng);
	const struct emu_run_stats *st = emu_engine_stats(eng);

	r.wall_s = (double)st->wall_ns / 1e9;
	r.hops = st->frame_hops;
	r.hops_per_s = st->frame_hops_per_s;
	r.events = st->events;
	r.queue_events = st->queue_events;
	r.windows = st->windows;
	r.cross = st->cross_events;
	r.emulated = st->emulated;
	for (uint32_t h = 0; h < fab->nhosts; h++)
		r.delivered += ((struct emu_trafgen_state *)emu_node_state(emu_engine_node(eng, fab->hosts[h])))->recv;
	emu_engine_destroy(eng);
	return r;
}

/* ---- ring floor ---- */

static struct emu_ring *ring;
static uint64_t ring_items;
static hwloc_topology_t topo;

static void pin_self(unsigned pu)
{
	hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, pu % (unsigned)hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU));

	if (o)
		hwloc_set_cpubind(topo, o->cpuset, HWLOC_CPUBIND_THREAD);
}

static void *ring_prod(void *arg)
{
	struct emu_ev ev = { 0 };

	(void)arg;
	pin_self(0);
	for (uint64_t i = 0; i < ring_items; i++) {
		ev.key = i;
		while (emu_ring_enqueue(ring, &ev))
			emu_cpu_relax();
		if ((i & 31) == 31)
			emu_ring_publish(ring);
	}
	emu_ring_publish(ring);
	return NULL;
}

static void *ring_cons(void *arg)
{
	struct emu_ev buf[64];
	uint64_t got = 0, sum = 0;

	pin_self(1);
	while (got < ring_items) {
		uint32_t n = emu_ring_dequeue_burst(ring, buf, 64);

		for (uint32_t i = 0; i < n; i++)
			sum += buf[i].key;
		got += n;
	}
	*(uint64_t *)arg = sum;
	return NULL;
}

static double ring_bench(uint64_t items)
{
	pthread_t p, c;
	uint64_t sum = 0;

	ring_items = items;
	ring = emu_ring_create(4096);
	uint64_t t0 = emu_wall_ns();

	pthread_create(&c, NULL, ring_cons, &sum);
	pthread_create(&p, NULL, ring_prod, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	uint64_t t = emu_wall_ns() - t0;

	emu_ring_destroy(ring);
	if (sum != items * (items - 1) / 2) {
		fprintf(stderr, "bench/engine: ring lost items\n");
		exit(1);
	}
	return (double)t / (double)items;
}

int main(int argc, char **argv)
{
	const char *spec = "fattree2:leaves=32,spines=32,hosts=32";
	char wlist[128] = "1,2";
	double load = 0.5;
	emu_time_t until = 20 * EMU_US;
	uint64_t ring_n = 20000000;
	uint64_t repeat = 3;
	int csv = 0, warmup = 1;
	static const struct option opts[] = {
		{ "topology", required_argument, NULL, 't' }, { "workers", required_argument, NULL, 'w' },
		{ "load", required_argument, NULL, 'l' }, { "time", required_argument, NULL, 'T' },
		{ "ring", required_argument, NULL, 'r' }, { "csv", no_argument, NULL, 'c' },
		{ "repeat", required_argument, NULL, 'n' }, { "no-warmup", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' }, { 0 },
	};
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 't': spec = optarg; break;
		case 'w': snprintf(wlist, sizeof(wlist), "%s", optarg); break;
		case 'l':
			load = atof(optarg);
			if (!(load > 0 && load <= 1)) {
				fprintf(stderr, "bench/engine: --load: '%s' is not in (0, 1]\n", optarg);
				return 2;
			}
			break;
		case 'T':
			if (emu_parse_time(optarg, &until)) {
				fprintf(stderr, "bench/engine: --time: '%s' is not a time (e.g. 20us)\n", optarg);
				return 2;
			}
			break;
		case 'r':
			if (emu_parse_u64(optarg, &ring_n)) {
				fprintf(stderr, "bench/engine: --ring: '%s' is not a count\n", optarg);
				return 2;
			}
			break;
		case 'c': csv = 1; break;
		case 'W': warmup = 0; break;
		case 'n':
			if (emu_parse_u64(optarg, &repeat) || repeat == 0 || repeat > 100) {
				fprintf(stderr, "bench/engine: --repeat: '%s' is not in 1..100\n", optarg);
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: bench/engine [--topology SPEC] [--workers 1,2] [--load F] [--time T] [--repeat N] [--ring N] [--csv] [--no-warmup]\n");
			return o == 'h' ? 0 : 2;
		}
	}
	char err[256];
	struct emu_fabric *fab = emu_topo_from_spec(spec, err, sizeof(err));

	if (!fab) {
		fprintf(stderr, "bench/engine: %s\n", err);
		return 2;
	}
	hwloc_topology_init(&topo);
	hwloc_topology_load(topo);
	if (csv)
		printf("topology,hosts,workers,load,emulated_us,wall_s,frame_hops,frame_hops_per_s,ns_per_hop,speedup,events,windows,cross_events,peak_rss_bytes,queue_events\n");
	else
		printf("engine: %s (%u hosts, %u switches), uniform 1 KiB frames at %.0f %% load for %.1f us\n",
		       spec, fab->nhosts, fab->nswitches, load * 100, (double)until / 1e6);
	double base = 0;
	char *save = NULL;

	if (warmup)
		run_fabric(fab, 1, load, until / 4 ? until / 4 : until);	/* warm-up, discarded */
	for (char *tok = strtok_r(wlist, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned w = (unsigned)atoi(tok);
		struct result r = run_fabric(fab, w, load, until);

		for (uint64_t k = 1; k < repeat; k++) {
			struct result again = run_fabric(fab, w, load, until);

			if (again.wall_s < r.wall_s)
				r = again;
		}

		if (base == 0)
			base = r.hops_per_s;
		double speedup = r.hops_per_s / base;

		if (csv)
			printf("\"%s\",%u,%u,%.2f,%.3f,%.4f,%llu,%.0f,%.2f,%.3f,%llu,%llu,%llu,%llu,%llu\n", spec, fab->nhosts, w, load,
			       (double)r.emulated / 1e6, r.wall_s, (unsigned long long)r.hops, r.hops_per_s,
			       1e9 / r.hops_per_s, speedup, (unsigned long long)r.events, (unsigned long long)r.windows,
			       (unsigned long long)r.cross, (unsigned long long)emu_peak_rss(),
			       (unsigned long long)r.queue_events);
		else
			printf("  workers %u: %.3f s wall, %llu frame-hops, %.2f M frame-hops/s (%.1f ns/hop), speedup %.2fx, "
			       "%llu windows, %.1f %% events crossed partitions, delivered %llu, peak RSS %.1f MiB\n",
			       w, r.wall_s, (unsigned long long)r.hops, r.hops_per_s / 1e6, 1e9 / r.hops_per_s, speedup,
			       (unsigned long long)r.windows, r.events ? 100.0 * (double)r.cross / (double)r.events : 0,
			       (unsigned long long)r.delivered, (double)emu_peak_rss() / 1048576.0);
		fflush(stdout);
	}
	if (ring_n) {
		double ns = ring_bench(ring_n);

		if (csv)
			printf("# ring,%llu,%.2f ns/event\n", (unsigned long long)ring_n, ns);
		else
			printf("ring floor: %.2f ns per event through one SPSC ring between two pinned threads (%llu events)\n",
			       ns, (unsigned long long)ring_n);
	}
	hwloc_topology_destroy(topo);
	emu_fabric_destroy(fab);
	return 0;
}
