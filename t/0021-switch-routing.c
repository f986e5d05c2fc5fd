// SPDX-License-Identifier: MIT
/*
 * DOC: routing and the resource model. Three flows from leaf L0 to three
 * different hosts under L1 share L0's two up ports: ECMP hashes two of them
 * onto one port and keeps them there; adaptive routing (the paper's rule)
 * moves traffic off that port once its queue passes half the buffer, so the
 * two up ports end up carrying about the same. The least-queued pick's
 * order (emu_route_pick, leastloaded): of ports 1-7 with the hash's port
 * 4, ties go to 4, else to the first least queued of 5, 6, 7, 1, 2, 3;
 * the hash's port of a mask of contiguous ports or not, under ECMP and
 * adaptive routing.
 * Then the Tofino profiles: what fits, what is refused, and the report.
 */
#include <math.h>

#include "emu/switch/tofino.h"
#include <string.h>

#include "helpers.h"

static emu_time_t run(enum emu_routing pol, uint64_t up[2])
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=2,spines=2,hosts=4");
	struct emu_engine_cfg cfg = { .workers = 1, .seed = 2, .routing = pol, .buffer_bytes = 64 * 1024 };
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct emu_trafgen_cfg tg[8];

	for (uint32_t h = 0; h < 8; h++) {
		/* H0, H1, H2 -> H4, H5, H6 at line rate; the others only receive */
		tg[h] = (struct emu_trafgen_cfg){ .frame_bytes = 1024, .load = 1, .until = 100 * EMU_US,
						  .dst_host = h < 3 ? h + 4 : h };
	}
	for (uint32_t i = 0; i < fab->nnodes; i++) {
		const struct emu_fab_node *n = &fab->nodes[i];

		emu_engine_set_model(eng, i, n->kind == EMU_NODE_SWITCH ? &emu_fwd_ops : &emu_trafgen_ops,
				     n->kind == EMU_NODE_SWITCH ? NULL : &tg[n->index]);
	}
	emu_engine_run(eng);
	emu_time_t end = emu_engine_stats(eng)->emulated;
	struct emu_node *l0 = emu_engine_node(eng, emu_fabric_find(fab, "L0"));

	up[0] = l0->ports[4].tx_frames;
	up[1] = l0->ports[5].tx_frames;
	diag("%s: up ports carried %llu and %llu frames", emu_routing_name(pol), (unsigned long long)up[0],
	     (unsigned long long)up[1]);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
	return end;
}

static void idle_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	(void)port;
	emu_frame_free(n, f);
}

static const struct emu_model_ops idle_ops = { .name = "idle", .rx = idle_rx };

/* S0 with 8 hosts: the least-queued pick among ports 1-7 for queues @q (bytes per port), its default port 4 or 7 */
static void least_order(void)
{
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t s0 = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "S0");
	char err[128];

	for (unsigned i = 0; i < 8; i++) {
		char name[8];

		snprintf(name, sizeof(name), "H%u", i);
		emu_fabric_add_link(fab, emu_fabric_add_node(fab, EMU_NODE_HOST, name), 0, s0, i, 100000000000ULL,
				    100 * EMU_NS);
	}
	if (emu_fabric_finalize(fab, err, sizeof(err))) {
		diag("%s", err);
		exit(1);
	}
	struct emu_engine_cfg cfg = { .workers = 1 };
	struct emu_engine *eng = t_engine(fab, &cfg);

	for (uint32_t i = 0; i < fab->nnodes; i++)
		emu_engine_set_model(eng, i, &idle_ops, NULL);
	emu_engine_run(eng);

	struct emu_node *n = emu_engine_node(eng, s0);
	/* queued bytes of ports 0-7; rhash 3: the fourth of ports 1-7 (port 4), 6: port 7 */
	static const struct {
		uint64_t q[8];
		uint64_t rhash;
		unsigned want;
	} c[] = {
		{ { 0, 50, 50, 50, 50, 50, 50, 50 }, 3, 4 },	/* all tie: the hash's port */
		{ { 0, 10, 50, 10, 50, 50, 10, 50 }, 3, 6 },	/* above it first */
		{ { 0, 10, 50, 10, 50, 50, 50, 10 }, 3, 7 },
		{ { 0, 50, 10, 10, 50, 50, 50, 50 }, 3, 2 },	/* then from port 1 up */
		{ { 0, 10, 50, 10, 50, 50, 50, 50 }, 6, 1 },	/* the hash's port the highest: from port 1 */
		{ { 0, 50, 50, 50, 10, 50, 10, 50 }, 6, 4 },
		{ { 0, 50, 50, 50, 50, 50, 50, 10 }, 6, 7 },	/* the hash's port the least */
	};
	char got[64] = "", want[64] = "";

	for (unsigned k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		for (unsigned i = 0; i < 8; i++)
			n->ports[i].qbytes = c[k].q[i];
		unsigned p = emu_route_pick_mixed(n, 0xfe, c[k].rhash, EMU_ROUTE_LEASTLOADED);

		snprintf(got + strlen(got), sizeof(got) - strlen(got), " %u", p);
		snprintf(want + strlen(want), sizeof(want) - strlen(want), " %u", c[k].want);
	}
	for (unsigned i = 0; i < 8; i++)
		n->ports[i].qbytes = 0;
	ok(!strcmp(got, want), "least queued: ties in rotation order from the hash's port:%s (want%s)", got, want);

	/*
	 * The hash's port, for a run of contiguous ports, for ports apart
	 * and for one port: the (rhash mod count)-th of the mask's. ECMP
	 * takes it; adaptive too while its queue is under half the buffer,
	 * else (the others empty) the next port in rotation order.
	 */
	static const uint64_t masks[] = { 0x3c, 0xb6, 0x20, 0xfe };
	unsigned bad = 0, tried = 0;

	for (unsigned k = 0; k < sizeof(masks) / sizeof(masks[0]); k++) {
		uint64_t mask = masks[k];
		unsigned cnt = (unsigned)__builtin_popcountll(mask);

		for (uint64_t rhash = 0; rhash < 12; rhash++) {
			unsigned def = 0, next = 0;

			for (unsigned i = 0, j = 0; i < 64; i++)
				if (mask >> i & 1 && j++ == rhash % cnt)
					def = i;
			for (unsigned i = 1; i <= 64; i++)
				if (mask >> ((def + i) & 63) & 1) {
					next = (def + i) & 63;
					break;
				}
			unsigned e = emu_route_pick_mixed(n, mask, rhash, EMU_ROUTE_ECMP);
			unsigned a = emu_route_pick_mixed(n, mask, rhash, EMU_ROUTE_ADAPTIVE);

			n->ports[def].qbytes = 1ULL << 40;
			unsigned full = emu_route_pick_mixed(n, mask, rhash, EMU_ROUTE_ADAPTIVE);

			n->ports[def].qbytes = 0;
			tried++;
			if (e != def || a != def || full != next) {
				bad++;
				diag("mask %#llx rhash %llu: ecmp %u adaptive %u, queue full %u (want %u %u %u)",
				     (unsigned long long)mask, (unsigned long long)rhash, e, a, full, def, def, next);
			}
		}
	}
	ok(!bad, "the hash's port: %u of %u picks differ", bad, tried);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

int main(void)
{
	uint64_t e[2], a[2];

	plan(14);
	least_order();
	emu_time_t te = run(EMU_ROUTE_ECMP, e);
	emu_time_t ta = run(EMU_ROUTE_ADAPTIVE, a);
	double re = (double)(e[0] > e[1] ? e[0] : e[1]) / (double)(e[0] < e[1] ? e[0] : e[1]);
	double ra = (double)(a[0] > a[1] ? a[0] : a[1]) / (double)(a[0] < a[1] ? a[0] : a[1]);

	ok(re > 1.8, "ecmp: the flows stay where the hash put them (%llu / %llu frames)", (unsigned long long)e[0],
	   (unsigned long long)e[1]);
	ok(ra < 1.2, "adaptive: traffic moves off the loaded port (ratio %.2f)", ra);
	ok(ta * 10 < te * 9, "adaptive delivers everything sooner (%.1f us vs %.1f us)", (double)ta / 1e6,
	   (double)te / 1e6);

	const struct tofino_profile *t1 = emu_tofino_profile_get("tofino1");
	struct emu_tofino_need n;

	ok(t1 && emu_tofino_profile_get("tofino2") && emu_tofino_profile_get("unbounded") && !emu_tofino_profile_get("tofino3"),
	   "profiles: tofino1, tofino2, unbounded");
	emu_tofino_need(t1, 32, 32768, 64, 0, false, &n);
	ok(n.fits && n.salu == 40, "64 ports need a second children register: 40 ALUs (%u)", n.salu);
	emu_tofino_need(t1, 32, 32768, 64, 0, true, &n);
	ok(n.fits && n.salu == 43 && n.stages == 12, "... 43 ALUs in 12 stages with adaptive routing (%u, %u)", n.salu,
	   n.stages);
	emu_tofino_need(t1, 256, 32768, 64, 0, false, &n);
	ok(n.fits && n.passes == 8, "256 elements on tofino1: 8 passes (7 recirculations), still fits");
	emu_tofino_need(t1, 32, 65536, 32, 0, false, &n);
	ok(!n.fits && strstr(n.why, "descriptors"), "65536 descriptors on tofino1: refused (%s)", n.why);
	emu_tofino_need(t1, 32, 32768, 64, 4, false, &n);
	ok(n.mcast_entries == 262144, "64 ports in 4 shards: 2^16 x 4 = 262144 multicast entries");
	emu_tofino_need(t1, 32, 32768, 64, 2, false, &n);
	ok(!n.fits && strstr(n.why, "multicast"), "64 ports in 2 shards: refused (%s)", n.why);

	char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	emu_tofino_need(t1, 32, 32768, 32, 0, false, &n);
	emu_tofino_report(f, t1, &n);
	fclose(f);
	ok(strstr(buf, "stateful ALUs") && strstr(buf, "81.25%"), "the report shows stateful ALUs at 81.25%%");
	f = fmemopen(buf, sizeof(buf), "w");
	emu_tofino_need(t1, 32, 65536, 32, 0, false, &n);
	emu_tofino_report(f, t1, &n);
	fclose(f);
	ok(strstr(buf, "<-- over") && strstr(buf, "DOES NOT FIT"), "an over-budget report marks the line");
	return done_testing();
}
