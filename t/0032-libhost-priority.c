// SPDX-License-Identifier: MIT
/*
 * DOC: --priority collective: allreduce frames (Canary EtherType; ring
 * frames by their DSCP) in their own traffic class, served first at every
 * egress port with their own buffer credits. Under background congestion
 * every algorithm finishes sooner and still exactly; the background still
 * moves; without the option nothing changes (class 0 only); the same
 * scenario gives the same results for 1 and 2 workers; drop-tail with tiny
 * buffers drops per class and the protocol still recovers exactly.
 *
 * --priority recovery (the default): only the recovery's frames (requests,
 * resends, failures, fallback and direct data) take that class. Under loss
 * with background traffic Canary's recovery (the paper's) is faster on
 * average over seeds than with one class (not on every seed: one frame's
 * timing moves these runs), static trees stay exact; with nothing to
 * recover the run is the one-class run, bit for bit.
 */
#include "emu/scenario.h"
#include "scn.h"
#include "libhost/wire.h"
#include "tap.h"

static void base(struct emu_scn_cfg *c)
{
	emu_scenario_defaults(c);
	c->topology = "fattree2:leaves=8,spines=8,hosts=8";
	c->hosts = 32;
	c->size_bytes = 256 * 1024;
	c->workers = 2;
	c->limit = 20 * EMU_MS;
	c->priority = EMU_TC_ONE;	/* the baseline: one class (the default is recovery) */
}

int main(void)
{
	struct emu_scn_cfg c;
	struct emu_scn_result r0, r1, r2;
	static const struct { enum lh_algo a; unsigned n; } algos[] = {
		{ LH_ALGO_CANARY, 1 }, { LH_ALGO_RING, 1 }, { LH_ALGO_STATIC, 2 },
	};

	plan(13);
	for (unsigned i = 0; i < 3; i++) {
		base(&c);
		c.algo = algos[i].a;
		c.ntrees = algos[i].n;
		int rc = t_scn_run(&c, &r0);

		c.priority = EMU_TC_COLLECTIVE;
		rc |= t_scn_run(&c, &r1);
		ok(rc == 0 && r0.exact && r1.exact, "%s: exact with and without priority", r1.algo);
		ok(r1.goodput_gbps > 1.2 * r0.goodput_gbps && r1.bg_bytes > 0,
		   "%s: priority lifts goodput under congestion (%.1f -> %.1f Gb/s), background still moves (%llu B)",
		   r1.algo, r0.goodput_gbps, r1.goodput_gbps, (unsigned long long)r1.bg_bytes);
		emu_scenario_result_fini(&r0);
		emu_scenario_result_fini(&r1);
	}

	/* determinism with the two classes */
	base(&c);
	c.priority = EMU_TC_COLLECTIVE;
	c.workers = 1;
	int rc = t_scn_run(&c, &r1);

	c.workers = 2;
	rc |= t_scn_run(&c, &r2);
	ok(rc == 0 && r1.runtime == r2.runtime && r1.sw.stragglers == r2.sw.stragglers && r1.bg_bytes == r2.bg_bytes &&
	   r1.run.frame_hops == r2.run.frame_hops && r1.util_mean == r2.util_mean,
	   "priority: 1 and 2 workers give the same runtime, stragglers, background bytes, frame-hops, utilization");
	emu_scenario_result_fini(&r1);
	emu_scenario_result_fini(&r2);

	/* drop-tail, tiny buffers: each class drops at its own queue; the protocol recovers */
	base(&c);
	c.priority = EMU_TC_COLLECTIVE;
	c.lossy = true;
	c.buffer_bytes = 8 * 1024;
	rc = t_scn_run(&c, &r1);
	ok(rc == 0 && r1.exact && r1.drops_queue > 0, "priority + drop-tail 8 KiB queues: %llu queue drops, still exact",
	   (unsigned long long)r1.drops_queue);
	emu_scenario_result_fini(&r1);

	/* no background: priority changes nothing measurable for the allreduce */
	base(&c);
	c.background = false;
	rc = t_scn_run(&c, &r0);
	c.priority = EMU_TC_COLLECTIVE;
	rc |= t_scn_run(&c, &r1);
	ok(rc == 0 && r0.exact && r1.exact && r0.runtime == r1.runtime,
	   "no background: the same runtime with and without priority (%.3f us)", (double)r1.runtime / 1e6);
	emu_scenario_result_fini(&r0);
	emu_scenario_result_fini(&r1);

	/*
	 * recovery (the default) against one class: 0.2 % loss under
	 * background traffic, seeds 1-6, frames committed to the wire only
	 * when it is idle (exact strict priority: the mechanism itself; the
	 * default 4 KiB commit window lets the first recovery frame after a
	 * quiet spell wait behind up to 4 KiB per hop, bench/README "The data
	 * path")
	 */
	for (unsigned i = 0; i < 2; i++) {
		double g0 = 0, g1 = 0;
		bool exact = true;

		rc = 0;
		for (unsigned seed = 1; seed <= 6; seed++) {
			base(&c);
			c.algo = i ? LH_ALGO_STATIC : LH_ALGO_CANARY;
			c.ntrees = i ? 4 : 1;
			c.loss = 0.002;
			c.lossy = true;
			c.commit_idle = true;
			c.seed = seed;
			rc |= t_scn_run(&c, &r0);
			c.priority = EMU_TC_RECOVERY;
			rc |= t_scn_run(&c, &r1);
			g0 += r0.goodput_gbps / 6;
			g1 += r1.goodput_gbps / 6;
			exact = exact && r0.exact && r1.exact;
			emu_scenario_result_fini(&r0);
			emu_scenario_result_fini(&r1);
		}
		if (i == 0)
			ok(rc == 0 && exact && g1 > 1.15 * g0,
			   "canary, 0.2 %% loss, background, seeds 1-6: recovery frames first %.1f Gb/s on average, "
			   "one class %.1f (> 1.15x), every run exact", g1, g0);
		else
			ok(rc == 0 && exact, "static:4, the same: %.1f against %.1f Gb/s on average, every run exact", g1, g0);
	}
	/* nothing lost, nothing recovered: the recovery class stays empty */
	base(&c);
	c.priority = EMU_TC_ONE;
	rc = t_scn_run(&c, &r0);
	c.priority = EMU_TC_RECOVERY;
	rc |= t_scn_run(&c, &r1);
	ok(rc == 0 && r0.exact && r1.exact && r0.runtime == r1.runtime && r0.run.frame_hops == r1.run.frame_hops &&
	   r0.bg_bytes == r1.bg_bytes && r0.util_mean == r1.util_mean,
	   "lossless with background: recovery and one class give the same runtime (%.3f us), frame-hops, background",
	   (double)r1.runtime / 1e6);
	emu_scenario_result_fini(&r0);
	emu_scenario_result_fini(&r1);

	/* the marking on the wire */
	uint8_t buf[128], mac[6] = { 2, 0, 0, 0, 0, 1 };
	uint32_t len = lh_wire_udp(buf, mac, mac, 0x0a000001, 0x0a000002, 4791, 4791, 16), sip, dip;

	lh_wire_ipv4_dscp(buf, EMU_DSCP_COLLECTIVE);
	ok(buf[EMU_ETH_HLEN + 1] >> 2 == EMU_DSCP_COLLECTIVE && lh_wire_ipv4(buf, len, &sip, &dip) == LH_WIRE_OK,
	   "DSCP %d set, IPv4 header checksum still valid", EMU_DSCP_COLLECTIVE);
	return done_testing();
}
