// SPDX-License-Identifier: MIT
/*
 * DOC: the adaptive switch timeout (--timeout adaptive, canary_sw.h).
 *
 * One switch, scripted hosts, two allreduces at once: allreduce 1's blocks
 * arrive spread over 3.2 us (three hosts at once, the fourth 3.2 us later),
 * allreduce 2's all at once, one host short (every block a timeout flush).
 * With the adaptive timeout the late host's straggler steps allreduce 1's
 * timeout up and every broadcast steps it down, block after block, until
 * the late host is aggregated; allreduce 2's steps down to the floor; each
 * flush leaves at first arrival + the timeout the rule gives; a switch
 * failure resets both to the start value; a ceiling below the late
 * host's lag stops the steps up there; every block's frames sum exactly;
 * every broadcast reaches the hosts with the switch's Q (before the block
 * steps it down) in its switch field, the hosts' window hint. The same
 * script with the fixed timeout keeps 1 us, a straggler per block and a
 * switch field of 0. Then the whole emulator: a scenario with small
 * tenants spread over the leaves grows the spines' timeout and the roots'
 * above the leaves'; a one-block allreduce runs exactly as with the fixed
 * 1 us; the result does not depend on the worker count; loss, switch
 * failure and the pktgen timer stay exact; --resources counts the
 * register.
 */
#include "emu/scenario.h"
#include "emu/switch/tofino.h"
#include "scn.h"
#include "script.h"

#define NB 8			/* blocks per allreduce before the failure */
#define PERIOD (20 * EMU_US)
#define LATE (3200 * EMU_NS)	/* allreduce 1: the fourth host's lag */
#define A2_AT (12 * EMU_US)	/* allreduce 2's blocks: offset in the period */
#define FAIL_AT (165 * EMU_US)
#define B8_AT (170 * EMU_US)	/* allreduce 1, one more block after the failure */

static uint32_t id_of(unsigned ar, unsigned b)
{
	return (uint32_t)ar << (32 - EMU_CANARY_TENANT_BITS) | b;
}

struct run {
	struct emu_fabric *fab;
	struct emu_engine *eng;
	struct script sc[5];
};

static struct script_frame bcast(emu_time_t at, uint32_t lip, uint32_t id, uint16_t hosts)
{
	struct script_frame f = {
		.at = at, .nelem = 2, .data = { 1, 1 },
		.h = { .dst = lip, .id = id, .counter = hosts, .hosts = hosts,
		       .flags = EMU_CANARY_F_MULTICAST | EMU_CANARY_OP_BCAST },
	};
	return f;
}

/* the script: H0 leads both allreduces, H1..H4 contribute i and 10 i */
static void script(struct run *r, bool adaptive, emu_time_t ceil, struct emu_sw_cfg *c)
{
	struct emu_engine_cfg ec = { .workers = 1, .seed = 1 };

	r->fab = star(5);
	uint32_t lip = r->fab->nodes[r->fab->hosts[0]].ipv4;

	for (unsigned b = 0; b <= NB; b++) {
		emu_time_t t1 = b < NB ? b * PERIOD : B8_AT;

		for (unsigned i = 1; i < 5; i++) {
			struct script *s = &r->sc[i];

			/* allreduce 1: 5 hosts, the root sends when 4 are in */
			s->tx[s->ntx++] = reduce_frame(t1 + (i == 4 ? LATE : 0), lip, id_of(1, b), 1, 5, (int32_t)i,
						       10 * (int32_t)i);
			/* allreduce 2: 6 hosts (one never sends): always a timeout flush */
			if (b < NB)
				s->tx[s->ntx++] = reduce_frame(t1 + A2_AT, lip, id_of(2, b), 1, 6, (int32_t)i,
							       10 * (int32_t)i);
		}
		r->sc[0].tx[r->sc[0].ntx++] = bcast(t1 + 10 * EMU_US, lip, id_of(1, b), 5);
		if (b < NB)
			r->sc[0].tx[r->sc[0].ntx++] = bcast(t1 + A2_AT + 6 * EMU_US, lip, id_of(2, b), 6);
		/* as if switches above had added 7.5 us: the sum passes the ceiling */
		if (b == 1)
			r->sc[0].tx[r->sc[0].ntx - 1].h.swaddr = 7500;
	}
	*c = (struct emu_sw_cfg){
		.descriptors = 1u << 16, .timeout = 1 * EMU_US, .timer = EMU_SW_TIMER_EXACT, .passes = 1,
		.ports_per_pipe = 16, .adaptive = adaptive, .ato_floor = 500 * EMU_NS, .ato_ceil = ceil,
		.ato_up = 500 * EMU_NS, .ato_down = 100 * EMU_NS,
	};
	r->eng = t_engine(r->fab, &ec);
	emu_engine_set_model(r->eng, 0, &emu_sw_ops, c);
	for (unsigned i = 0; i < 5; i++)
		emu_engine_set_model(r->eng, 1 + i, &script_ops, &r->sc[i]);
	emu_engine_schedule_node(r->eng, 0, FAIL_AT, false);
	emu_engine_schedule_node(r->eng, 0, FAIL_AT + 1 * EMU_US, true);
	emu_engine_run(r->eng);
}

static void done(struct run *r)
{
	emu_engine_destroy(r->eng);
	emu_fabric_destroy(r->fab);
	memset(r, 0, sizeof(*r));
}

/* What the leader got for block @id: frames, counter sum, element sums, first arrival. */
struct blk {
	unsigned frames;
	unsigned counter;
	int32_t d0, d1;
	emu_time_t first;
	unsigned full;		/* frames with counter 4: everything in one */
};

static struct blk leader_got(struct run *r, uint32_t id)
{
	struct script_state *L = emu_node_state(emu_engine_node(r->eng, 1));
	struct blk k = { .first = -1 };

	for (unsigned i = 0; i < L->nrx; i++) {
		if (L->rx[i].h.id != id || (L->rx[i].h.flags & EMU_CANARY_OP_MASK) != EMU_CANARY_OP_REDUCE)
			continue;
		k.frames++;
		k.counter += L->rx[i].h.counter;
		k.d0 += L->rx[i].d0;
		k.d1 += L->rx[i].d1;
		k.full += L->rx[i].h.counter == 4;
		if (L->rx[i].t < k.first)
			k.first = L->rx[i].t;
	}
	return k;
}

/* The switch field of the broadcast of block @id host H1 received (-1: none). */
static long hint_got(struct run *r, uint32_t id)
{
	struct script_state *H = emu_node_state(emu_engine_node(r->eng, 2));

	for (unsigned i = 0; i < H->nrx; i++)
		if (H->rx[i].h.id == id && (H->rx[i].h.flags & EMU_CANARY_OP_MASK) == EMU_CANARY_OP_BCAST)
			return H->rx[i].h.swaddr;
	return -1;
}

static void switch_level(void)
{
	struct run r = { 0 };
	struct emu_sw_cfg c;
	/* host -> switch and switch -> leader: one 2-element frame, one link */
	emu_time_t hop = emu_tx_time(EMU_CANARY_DATA_OFF + 8, EMU_DEFAULT_RATE_BPS) + EMU_DEFAULT_LATENCY;

	/* the ids must not share slots, or collisions would be tested instead */
	bool distinct = true;

	for (unsigned a = 1; a <= 2; a++)
		for (unsigned b = 0; b <= NB; b++)
			for (unsigned a2 = 1; a2 <= 2; a2++)
				for (unsigned b2 = 0; b2 <= NB; b2++)
					if ((a != a2 || b != b2) && emu_sw_slot(id_of(a, b), 1u << 16) ==
									   emu_sw_slot(id_of(a2, b2), 1u << 16))
						distinct = false;
	ok(distinct, "the script's 17 blocks have 17 slots");

	script(&r, true, 8 * EMU_US, &c);
	const struct emu_sw_stats *st = emu_sw_stats_of(emu_engine_node(r.eng, 0));

	/*
	 * allreduce 1: spread 3.2 us, Q from 1 us; the straggler steps it
	 * +0.5 us, the broadcast -0.1 us: 1, 1.4, 1.8, 2.2, 2.6, 3 (six
	 * stragglers), then 3.4 > 3.2 (the late host aggregated: the root
	 * sends early, one frame per block) and 3.3
	 */
	static const emu_time_t q1[NB] = { 1000, 1400, 1800, 2200, 2600, 3000, 3400, 3300 };
	bool times = true, exact = true, shape = true;

	for (unsigned b = 0; b < NB; b++) {
		struct blk k = leader_got(&r, id_of(1, b));
		emu_time_t expect = b * PERIOD + hop + (b < 6 ? q1[b] * EMU_NS : LATE) + hop;

		if (k.first != expect) {
			times = false;
			diag("allreduce 1 block %u: first frame at %.3f us, expected %.3f", b, (double)k.first / 1e6,
			     (double)expect / 1e6);
		}
		exact = exact && k.counter == 4 && k.d0 == 10 && k.d1 == 100;
		shape = shape && (b < 6 ? k.frames == 2 && k.full == 0 : k.frames == 1 && k.full == 1);
	}
	ok(times, "skewed allreduce: flush at first arrival + 1, 1.4, 1.8, 2.2, 2.6, 3 us, then at the late host (early)");
	ok(shape, "...two frames (flush + straggler) for the first six blocks, one complete frame after");
	ok(exact, "...every block's frames hold the exact sum (counter 4, 10, 100)");

	/* allreduce 2: no straggler, Q steps down 0.1 us per block to the 0.5 us floor */
	static const emu_time_t q2[NB] = { 1000, 900, 800, 700, 600, 500, 500, 500 };

	times = exact = true;
	for (unsigned b = 0; b < NB; b++) {
		struct blk k = leader_got(&r, id_of(2, b));
		emu_time_t expect = b * PERIOD + A2_AT + hop + q2[b] * EMU_NS + hop;

		if (k.first != expect) {
			times = false;
			diag("allreduce 2 block %u: flush at %.3f us, expected %.3f", b, (double)k.first / 1e6,
			     (double)expect / 1e6);
		}
		exact = exact && k.frames == 1 && k.counter == 4 && k.d0 == 10 && k.d1 == 100;
	}
	ok(times, "aligned allreduce on the same switch: flush at + 1, 0.9, ... 0.5 us, then stays at the floor");
	ok(exact, "...one frame per block with the exact sum");

	/*
	 * the hint: Q when the broadcast passes, before it steps Q down;
	 * allreduce 1's blocks 0-5 after their straggler's step up (Q + 0.5 us)
	 */
	static const long h1[NB] = { 1500, 1900, 2300, 2700, 3100, 3500, 3400, 3300 };
	bool hints = true;

	for (unsigned b = 0; b < NB; b++) {
		long h2 = b == 1 ? 8000 : (long)q2[b];

		if (hint_got(&r, id_of(1, b)) != h1[b] || hint_got(&r, id_of(2, b)) != h2) {
			hints = false;
			diag("block %u: hints %ld and %ld ns, expected %ld and %ld", b, hint_got(&r, id_of(1, b)),
			     hint_got(&r, id_of(2, b)), h1[b], h2);
		}
	}
	ok(hints, "broadcasts carry Q in ns to the hosts: 1.5, 1.9, ... 3.5, 3.4, 3.3 us and 1, 0.9, ... 0.5 us; "
	   "7.5 us from above + 0.9 us stops at the 8 us ceiling");

	/* after the failure: Q back at the start value, so the late host straggles again */
	struct blk k = leader_got(&r, id_of(1, NB));

	ok(k.first == B8_AT + hop + 1 * EMU_US + hop && k.frames == 2 && k.d0 == 10,
	   "switch failure: the registers restart at 1 us (block after recovery flushed at +%.3f us, %u frames)",
	   (double)(k.first - B8_AT - 2 * hop) / 1e6, k.frames);
	ok(hint_got(&r, id_of(1, NB)) == 1500, "...and its broadcast's hint is 1 us + one step up (%ld ns)",
	   hint_got(&r, id_of(1, NB)));
	is_int(st->stragglers, 7, "seven stragglers: six while allreduce 1 learned, one after the failure");
	is_int(st->ato_claims, 2 * NB + 1, "every descriptor took its timeout from the rule");
	is_int(st->ato_root_claims, 2 * NB + 1, "...the root's register (the leader hangs off this switch)");
	is_int(st->ato_samples, 2 * NB + 1, "every block stepped it down once when its broadcast passed");
	is_int(st->ato_up, 7, "...every straggler up");
	ok(st->ato_max == 3400 * EMU_NS && st->ato_min == 500 * EMU_NS, "timeouts from 0.5 to 3.4 us (%.3f-%.3f)",
	   (double)st->ato_min / 1e6, (double)st->ato_max / 1e6);
	done(&r);

	/*
	 * a ceiling of 2 us below the late host's 3.2 us: the straggler's step
	 * saturates there (1, 1.4, 1.8, then 2 - 0.1 = 1.9 for good), so every
	 * block leaves a straggler and no timeout passes the ceiling
	 */
	script(&r, true, 2 * EMU_US, &c);
	st = emu_sw_stats_of(emu_engine_node(r.eng, 0));
	static const emu_time_t q1c[NB] = { 1000, 1400, 1800, 1900, 1900, 1900, 1900, 1900 };

	times = exact = true;
	for (unsigned b = 0; b < NB; b++) {
		struct blk kc = leader_got(&r, id_of(1, b));

		if (kc.first != b * PERIOD + 2 * hop + q1c[b] * EMU_NS) {
			times = false;
			diag("ceiling 2 us, allreduce 1 block %u: flush at %.3f us, expected %.3f", b,
			     (double)(kc.first - b * PERIOD - 2 * hop) / 1e6, (double)q1c[b] / 1e3);
		}
		exact = exact && kc.frames == 2 && kc.counter == 4 && kc.d0 == 10 && kc.d1 == 100;
	}
	ok(times, "ceiling 2 us: flush at + 1, 1.4, 1.8, then 1.9 us (the step up saturates at the ceiling)");
	ok(exact, "...a straggler in every block, every sum exact");
	ok(st->ato_max == 1900 * EMU_NS && st->ato_up == NB + 1 && st->stragglers == NB + 1,
	   "...timeouts at most 1.9 us (%.3f), %llu stragglers", (double)st->ato_max / 1e6,
	   (unsigned long long)st->stragglers);
	done(&r);

	/* the same script with the fixed timeout */
	script(&r, false, 8 * EMU_US, &c);
	st = emu_sw_stats_of(emu_engine_node(r.eng, 0));
	times = true;
	for (unsigned b = 0; b < NB; b++)
		times = times && leader_got(&r, id_of(1, b)).first == b * PERIOD + 2 * hop + 1 * EMU_US &&
			leader_got(&r, id_of(2, b)).first == b * PERIOD + A2_AT + 2 * hop + 1 * EMU_US;
	ok(times, "fixed timeout: every flush at + 1 us");
	bool zero = true;

	for (unsigned b = 0; b < NB; b++)
		zero = zero && hint_got(&r, id_of(1, b)) == 0 && hint_got(&r, id_of(2, b)) == (b == 1 ? 7500 : 0);
	ok(zero, "fixed timeout: the broadcasts' switch field as the leader sent it (0: no hint)");
	is_int(st->stragglers, NB + 1, "fixed timeout: a straggler in every block of allreduce 1");
	ok(st->ato_claims == 0 && st->ato_samples == 0, "fixed timeout: the rule is not consulted");
	done(&r);
}

static void scenario_level(void)
{
	struct emu_scn_cfg c;
	struct emu_scn_result r, r2;
	char err[256];

	/* 64 hosts, 8 tenants of 8 hosts each spread over the 8 leaves */
	emu_scenario_defaults(&c);
	c.topology = "fattree2:leaves=8,spines=8,hosts=8";
	c.hosts_pct = 100;
	c.concurrent = 8;
	c.background = false;
	c.size_bytes = 256 << 10;
	c.profile = "unbounded";
	c.workers = 2;
	ok(emu_timeout_adaptive_parse("", &c) == 0 && c.timeout_adaptive, "--timeout adaptive parses");
	ok(t_scn_run(&c, &r) == 0 && r.exact, "8 tenants over 8 leaves, adaptive: exact");
	diag("adaptive timeout: mean %.3f us at leaves, %.3f us at spines, %.3f us as the root, %llu down, %llu up",
	     r.ato_mean_level[1] / 1e6, r.ato_mean_level[2] / 1e6, r.ato_mean_root / 1e6,
	     (unsigned long long)r.sw.ato_samples, (unsigned long long)r.sw.ato_up);
	ok(r.ato_mean_level[2] > 1.2 * EMU_US, "...the spines, where a tenant's blocks meet, wait longer than 1 us "
	   "(mean %.3f us)", r.ato_mean_level[2] / 1e6);
	ok(r.ato_mean_level[2] > r.ato_mean_level[1], "...longer than the leaves (%.3f us)", r.ato_mean_level[1] / 1e6);
	ok(r.sw.ato_root_claims > 0 && r.ato_mean_root > 2 * r.ato_mean_level[1],
	   "...the leaves as the root (where the spines' partial sums meet) wait longer than the leaves overall "
	   "(%.3f us over %llu descriptors)", r.ato_mean_root / 1e6, (unsigned long long)r.sw.ato_root_claims);
	ok(r.sw.ato_max > 2 * EMU_US && r.sw.ato_max <= 8 * EMU_US && r.sw.ato_min >= 200 * EMU_NS,
	   "...within the default floor and ceiling (%.3f-%.3f us)", (double)r.sw.ato_min / 1e6,
	   (double)r.sw.ato_max / 1e6);

	/* determinism: one worker gives the same run */
	c.workers = 1;
	ok(t_scn_run(&c, &r2) == 0 && r2.runtime == r.runtime && r2.sw.stragglers == r.sw.stragglers &&
	   r2.sw.ato_sum == r.sw.ato_sum && r2.sw.ato_up == r.sw.ato_up && r2.ar[0].window == r.ar[0].window,
	   "1 worker: same runtime, stragglers, timeouts and hosts' window as 2");
	emu_scenario_result_fini(&r2);

	/*
	 * the hosts' window: sized for 3 x 1 us with the fixed timeout (and at
	 * the start), for what the switches learned with the adaptive one
	 * (the spines and roots above wait more than 1 us: a larger window)
	 */
	c.workers = 2;
	c.timeout_adaptive = false;
	ok(t_scn_run(&c, &r2) == 0 && r2.exact, "the same with the fixed 1 us: exact");
	unsigned w0 = r2.ar[0].window;
	double wmean = 0, wmean0 = 0;

	for (unsigned t = 0; t < r.nar; t++) {
		wmean += (double)r.ar[t].window_sum / (double)r.ar[t].window_n / r.nar;
		wmean0 += (double)r2.ar[t].window_sum / (double)r2.ar[t].window_n / r2.nar;
	}
	ok(wmean0 == w0, "...every host kept one window with the fixed timeout (%u blocks)", w0);
	ok(wmean > 1.1 * w0 && r.ar[0].window > w0 + w0 / 4,
	   "...the hosts' window grew with the learned timeouts: %.1f blocks on average, up to %u", wmean,
	   r.ar[0].window);
	emu_scenario_result_fini(&r);
	emu_scenario_result_fini(&r2);

	/* a one-block allreduce learns nothing: exactly the fixed 1 us run (ECMP: tofino1 fits both so) */
	emu_scenario_defaults(&c);
	c.topology = "fattree2:leaves=8,spines=8,hosts=8";
	c.size_bytes = 1024;
	c.workers = 2;
	c.routing = EMU_ROUTE_ECMP;
	ok(t_scn_run(&c, &r) == 0 && r.exact, "1 KiB allreduce, fixed 1 us");
	c.timeout_adaptive = true;
	ok(t_scn_run(&c, &r2) == 0 && r2.exact && r2.runtime == r.runtime && r2.sw.stragglers == r.sw.stragglers,
	   "1 KiB allreduce, adaptive: the same runtime (%.3f us) and stragglers", (double)r2.runtime / 1e6);
	ok(r2.sw.ato_max == 1 * EMU_US, "...every descriptor at the start value");
	emu_scenario_result_fini(&r);
	emu_scenario_result_fini(&r2);

	/* with loss, a failed spine, the pktgen timer (ECMP: what tofino1 fits beside the adaptive timeout) */
	emu_scenario_defaults(&c);
	c.topology = "fattree2:leaves=8,spines=8,hosts=8";
	c.size_bytes = 128 << 10;
	c.workers = 2;
	c.routing = EMU_ROUTE_ECMP;
	c.timeout_adaptive = true;
	c.loss = 0.002;
	ok(t_scn_run(&c, &r) == 0 && r.exact && r.sw.ato_samples > 0, "adaptive with 0.2 %% loss: exact");
	emu_scenario_result_fini(&r);
	c.loss = 0;
	c.nfail = 1;
	ok(emu_fail_parse("switch:S3@10us", &c.fail[0]) == 0, "failure spec");
	ok(t_scn_run(&c, &r) == 0 && r.exact, "adaptive with a spine failing at 10 us: exact");
	emu_scenario_result_fini(&r);
	c.nfail = 0;
	c.timer = EMU_SW_TIMER_PKTGEN;
	c.pktgen_tick = 2 * EMU_NS;
	c.descriptors = 256;	/* a sweep of 512 ns: the clock packets resolve the timeouts */
	ok(t_scn_run(&c, &r) == 0 && r.exact && r.sw.pktgen_ticks > 0 && r.sw.ato_samples > 0,
	   "adaptive with the pktgen timer: exact (%llu ticks, %llu samples, %llu up)",
	   (unsigned long long)r.sw.pktgen_ticks, (unsigned long long)r.sw.ato_samples, (unsigned long long)r.sw.ato_up);
	emu_scenario_result_fini(&r);

	/* bad specs */
	emu_scenario_defaults(&c);
	ok(emu_timeout_adaptive_parse(":100ns-4us", &c) == 0 && c.ato_floor == 100 * EMU_NS && c.ato_ceil == 4 * EMU_US,
	   "adaptive:100ns-4us sets floor and ceiling");
	ok(emu_timeout_adaptive_parse(":1us-1us", &c) && emu_timeout_adaptive_parse(":0ns-1us", &c) &&
	   emu_timeout_adaptive_parse("x", &c) && emu_timeout_adaptive_parse(":1us", &c) &&
	   emu_timeout_adaptive_parse(":4us-1us", &c), "no room, zero floor, junk, no ceiling, reversed: refused");
	(void)err;
}

static void resources(void)
{
	const struct tofino_profile *t1 = emu_tofino_profile_get("tofino1");
	struct emu_tofino_need a, n;

	/* hw/canary.p4's configuration: 32 elements, 32K descriptors, 32 ports */
	emu_tofino_need_ato(t1, 32, 32768, 32, 0, true, false, &n);
	emu_tofino_need_ato(t1, 32, 32768, 32, 0, true, true, &a);
	ok(a.salu == n.salu + 1 && a.salu == 43, "adaptive timeout: 1 more stateful ALU (43 of 48 with adaptive routing)");
	ok(a.stages == 13 && !a.fits && strstr(a.why, "MAU stages: 13 needed, 12 available") &&
		   strstr(a.why, "--routing ecmp"),
	   "...in 13 stages (the role's lookup, then r_ato beside r_id): does not fit tofino1, says ECMP would (%s)",
	   a.why);
	ok(a.sram_blocks == n.sram_blocks + 1, "...SRAM: r_ato's 512 words, one block (%llu vs %llu)",
	   (unsigned long long)a.sram_blocks, (unsigned long long)n.sram_blocks);
	ok(a.tables == n.tables + 2, "...2 more logical tables (the register, the sample mirror)");
	emu_tofino_need_ato(t1, 32, 32768, 32, 0, false, true, &a);
	ok(a.salu == 40 && a.stages == 12 && a.fits,
	   "ECMP + adaptive timeout: 40 stateful ALUs, 12 stages, as bf-p4c placed hw/canary.p4: fits");
}

int main(void)
{
	plan(46);
	switch_level();
	scenario_level();
	resources();
	return done_testing();
}
