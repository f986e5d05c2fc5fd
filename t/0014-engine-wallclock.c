// SPDX-License-Identifier: MIT
/*
 * DOC: the wall clock. At a dilation the machine can sustain the run keeps
 * up (lag about 0) and emulated time tracks wall time / D; at an impossible
 * dilation the run still finishes, with the same results as in virtual
 * time, and reports how far it lagged; auto picks a dilation that keeps up.
 */
#include "helpers.h"

struct res {
	struct emu_run_stats st;
	uint64_t recv;
};

static struct res run(enum emu_clock clock, double dilation, emu_time_t until)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=2,spines=2,hosts=4");
	struct emu_engine_cfg cfg = { .workers = 2, .seed = 5, .clock = clock, .dilation = dilation };
	struct emu_trafgen_cfg tg = { .frame_bytes = 1024, .load = 0.3, .until = until, .dst_host = EMU_NONE32 };
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct res r = { 0 };

	t_plug(eng, fab, &tg);
	emu_engine_run(eng);
	r.st = *emu_engine_stats(eng);
	for (uint32_t h = 0; h < fab->nhosts; h++)
		r.recv += t_host_state(eng, fab, h)->recv;
	diag("clock %s dilation %g: emulated %.1f us, wall %.1f ms, mean lag %.3f ms, max lag %.3f ms, kept up %d",
	     clock == EMU_CLOCK_WALL ? "wall" : "virtual", r.st.dilation, (double)r.st.emulated / 1e6,
	     (double)r.st.wall_ns / 1e6, (double)r.st.mean_lag_ns / 1e6, (double)r.st.max_lag_ns / 1e6, r.st.kept_up);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
	return r;
}

int main(void)
{
	plan(9);
	struct res v = run(EMU_CLOCK_VIRTUAL, 0, 100 * EMU_US);
	struct res vlong = run(EMU_CLOCK_VIRTUAL, 0, 2000 * EMU_US);
	/*
	 * 100 us emulated at D = 2000 is 200 ms of wall time. The machine is
	 * shared (prove -j runs other tests beside this one): keeping up is
	 * claimed if one of five attempts keeps up.
	 */
	struct res w;

	for (int i = 0; i < 5; i++) {
		w = run(EMU_CLOCK_WALL, 2000, 100 * EMU_US);
		if (w.st.kept_up)
			break;
	}
	double expect_ms = (double)w.st.emulated / 1e6 * 2000 / 1e3;
	double got_ms = (double)w.st.wall_ns / 1e6;

	is_u64(w.recv, v.recv, "wall clock: same deliveries as virtual time (%llu)", (unsigned long long)v.recv);
	ok(w.st.kept_up, "D=2000: kept up (mean lag %.3f ms, max %.3f ms)", (double)w.st.mean_lag_ns / 1e6,
	   (double)w.st.max_lag_ns / 1e6);
	ok(got_ms >= expect_ms * 0.97 && got_ms <= expect_ms * 1.25 + 20,
	   "D=2000: wall %.1f ms tracks emulated x D = %.1f ms", got_ms, expect_ms);

	struct res imp = run(EMU_CLOCK_WALL, 0.001, 2000 * EMU_US);

	is_u64(imp.recv, vlong.recv, "impossible dilation: results unchanged");
	ok(!imp.st.kept_up, "D=0.001: reported as not keeping up");
	ok(imp.st.max_lag_ns > 0, "D=0.001: lag reported (%.3f ms)", (double)imp.st.max_lag_ns / 1e6);

	struct res a;

	for (int i = 0; i < 5; i++) {
		a = run(EMU_CLOCK_WALL, 0, 2000 * EMU_US);
		if (a.st.kept_up)
			break;
	}

	ok(a.st.dilation >= 1, "auto: picked D = %g", a.st.dilation);
	is_u64(a.recv, vlong.recv, "auto: results unchanged");
	ok(a.st.kept_up, "auto: kept up (mean lag %.3f ms, max %.3f ms)", (double)a.st.mean_lag_ns / 1e6,
	   (double)a.st.max_lag_ns / 1e6);
	return done_testing();
}
