// SPDX-License-Identifier: MIT
/*
 * DOC: libhost end to end: every algorithm gives the exact sum on every
 * host, alone and as concurrent tenants, under background congestion, and
 * the same scenario gives the same results for 1, 2 and per-node workers.
 */
#include "emu/scenario.h"
#include "scn.h"
#include "tap.h"

static void base(struct emu_scn_cfg *c)
{
	emu_scenario_defaults(c);
	c->topology = "fattree2:leaves=4,spines=4,hosts=4";
	c->hosts = 8;
	c->size_bytes = 96 * 1024 + 12;	/* a short last block */
	c->elements = 64;
	c->bg_msg = 16 * 1024;
	c->workers = 2;
	c->limit = 20 * EMU_MS;
}

int main(void)
{
	struct emu_scn_cfg c;
	struct emu_scn_result r;
	static const struct { enum lh_algo a; unsigned n; } algos[] = {
		{ LH_ALGO_CANARY, 1 }, { LH_ALGO_RING, 1 }, { LH_ALGO_STATIC, 1 }, { LH_ALGO_STATIC, 3 },
	};

	plan(19);
	for (unsigned i = 0; i < 4; i++) {
		base(&c);
		c.algo = algos[i].a;
		c.ntrees = algos[i].n;
		ok(t_scn_run(&c, &r) == 0 && r.exact && r.nar == 1 && r.ar[0].hosts == 8,
		   "%s: exact on all 8 hosts, with background traffic on the other 8", r.algo);
		emu_scenario_result_fini(&r);
	}

	/*
	 * The result check sees a wrong result: one host's input is one more
	 * than the expected sums assume, on every element. Canary and static
	 * trees hand results to the check in wire order, the ring (and a
	 * tree's leader) as int32s.
	 */
	for (unsigned k = 0; k < 3; k++) {
		unsigned i = k == 2 ? 3 : k;

		base(&c);
		c.algo = algos[i].a;
		c.ntrees = algos[i].n;
		c.wrong_input = true;
		uint64_t want = 8 * (c.size_bytes / 4), got = 0;
		int rc = t_scn_run(&c, &r);

		if (rc == 0 && r.nar == 1)
			got = r.ar[0].mismatches;
		ok(rc == 0 && r.nar == 1 && !r.exact && r.ar[0].finished && got == want,
		   "%s, one host's input off by one: every element of every result counted wrong (%llu of %llu)",
		   algos[i].a == LH_ALGO_RING ? "ring" : algos[i].n > 1 ? "static:3" : "canary", (unsigned long long)got,
		   (unsigned long long)want);
		if (rc == 0)
			emu_scenario_result_fini(&r);
	}

	/* three tenants of each algorithm at once */
	for (unsigned i = 0; i < 3; i++) {
		base(&c);
		c.hosts = 12;
		c.concurrent = 3;
		c.algo = algos[i].a;
		c.ntrees = 2;
		bool all = t_scn_run(&c, &r) == 0 && r.nar == 3;

		for (unsigned t = 0; all && t < 3; t++)
			all = r.ar[t].exact && r.ar[t].hosts == 4;
		ok(all, "%s: three concurrent allreduces, each exact", r.algo);
		emu_scenario_result_fini(&r);
	}

	/* tables split per tenant (the paper's setting for concurrent runs), tiny on purpose */
	base(&c);
	c.hosts = 12;
	c.concurrent = 3;
	c.descriptors = 3 * 512;	/* a slice holds all 385 blocks of a tenant */
	c.table_per_tenant = true;
	int rc = t_scn_run(&c, &r);

	ok(rc == 0 && r.exact && r.sw.collisions == 0, "canary, 3 tenants in 3 x 512 static slots: exact, no collision (%llu)",
	   (unsigned long long)r.sw.collisions);
	emu_scenario_result_fini(&r);
	c.table_per_tenant = false;
	rc = t_scn_run(&c, &r);
	ok(rc == 0 && r.exact && r.sw.collisions > 0, "...the same table hashed: exact, with %llu collisions",
	   (unsigned long long)r.sw.collisions);
	emu_scenario_result_fini(&r);

	/* congestion does not break exactness: random (incast) background */
	base(&c);
	c.bg_pattern = LH_BG_RANDOM;
	ok(t_scn_run(&c, &r) == 0 && r.exact && r.bg_bytes > 0, "canary under incast background: exact");
	emu_scenario_result_fini(&r);

	/* determinism of the whole protocol: 1, 2, per-node workers */
	struct emu_scn_result a, b, d;

	base(&c);
	c.noise = 0.05;
	c.workers = 1;
	t_scn_run(&c, &a);
	c.workers = 2;
	t_scn_run(&c, &b);
	c.per_node = true;
	t_scn_run(&c, &d);
	ok(a.exact && b.exact && d.exact, "noisy canary: exact with 1, 2 and per-node workers");
	is_u64(b.runtime, a.runtime, "2 workers: same runtime to the picosecond");
	ok(d.runtime == a.runtime && d.run.frame_hops == a.run.frame_hops && d.run.events == a.run.events,
	   "per-node workers (%u threads): same runtime, frame-hops and events", d.run.workers);
	ok(b.sw.stragglers == a.sw.stragglers && b.ar[0].noise_delays == a.ar[0].noise_delays &&
	   b.run.frame_hops == a.run.frame_hops, "2 workers: same stragglers, noise delays, frame-hops");
	ok(b.link_util[7] == a.link_util[7] && b.drops_queue == a.drops_queue && b.bg_bytes == a.bg_bytes,
	   "2 workers: same link utilization and background bytes");
	c.per_node = false;
	c.workers = 1;
	c.seed = 99;
	struct emu_scn_result e;

	t_scn_run(&c, &e);
	ok(e.exact && e.runtime != a.runtime, "another seed: another run (still exact)");
	emu_scenario_result_fini(&a);
	emu_scenario_result_fini(&b);
	emu_scenario_result_fini(&d);
	emu_scenario_result_fini(&e);
	return done_testing();
}
