// SPDX-License-Identifier: MIT
/*
 * DOC: the wall clock. The pacing logic runs against a clock this test
 * drives (cfg.wall_now / cfg.wall_sleep): reading it costs a fixed step, a
 * sleep moves it to the target, and a "preemption" can make it jump. With
 * one worker that is the real-time scheduler: a ticker with one timer per
 * microsecond gives a window per tick while the run keeps up, and every
 * lag, dilation and wall time below is exact whatever the machine's load.
 * With a clock only sleeps move, no event runs before its wall time and a
 * frame from outside (a watch the test feeds) enters at the emulated time
 * of its arrival. Then a smoke test of the real clock checks only what a
 * slow or preempted machine cannot break: the same results as in virtual
 * time, pacing never running ahead, lag reported at an impossible dilation.
 */
#include "helpers.h"

#include <errno.h>
#include <stdatomic.h>

/* ---------- the injected clock ---------- */

#define T0 1000000000ULL		/* the clock starts here (not 0) */

struct fclock {
	_Atomic uint64_t t;
	uint64_t step;			/* every read costs this */
	unsigned jump_read;		/* this read (0 = the run's start) ... */
	uint64_t jump;			/* ... adds this on top */
	_Atomic unsigned reads;
	_Atomic unsigned sleeps;	/* sleeps that moved the clock */
	_Atomic uint64_t last_target;
};

static uint64_t fc_now(void *ctx)
{
	struct fclock *c = ctx;
	unsigned r = atomic_fetch_add(&c->reads, 1);
	uint64_t add = c->step + (c->jump && r == c->jump_read ? c->jump : 0);

	return atomic_fetch_add(&c->t, add) + add;
}

static void fc_sleep(void *ctx, uint64_t until)
{
	struct fclock *c = ctx;
	uint64_t t = atomic_load(&c->t);

	atomic_store(&c->last_target, until);
	while (t < until)
		if (atomic_compare_exchange_weak(&c->t, &t, until)) {
			atomic_fetch_add(&c->sleeps, 1);
			break;
		}
}

/* ---------- the ticker: a timer every PERIOD, NTICK times ---------- */

#define PERIOD EMU_US			/* > the fabric's 300 ns lookahead */

struct tick_state {
	uint64_t fired;
};

static int tick_init(struct emu_node *n, void *arg)
{
	if (arg)
		emu_timer_at(n, 0, 0);
	return 0;
}

static unsigned ntick;

static void tick_timer(struct emu_node *n, uint64_t k)
{
	struct tick_state *s = emu_node_state(n);

	s->fired++;
	if (k + 1 < ntick)
		emu_timer_at(n, (k + 1) * PERIOD, k + 1);
}

static const struct emu_model_ops tick_ops = {
	.name = "ticker",
	.state_size = sizeof(struct tick_state),
	.init = tick_init,
	.timer = tick_timer,
};

static uint64_t lag_bound;	/* cfg.lag_bound_ns of the next ticks() (0: the default) */
static uint64_t origin;		/* emu_engine_set_wall_origin of the next ticks() (0: none) */

static struct emu_run_stats ticks(struct fclock *c, double dilation, unsigned n)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=2,spines=2,hosts=4");
	struct emu_engine_cfg cfg = {
		.workers = 1, .seed = 1, .clock = EMU_CLOCK_WALL, .dilation = dilation,
		.wall_now = fc_now, .wall_sleep = fc_sleep, .wall_ctx = c, .lag_bound_ns = lag_bound,
	};
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct emu_run_stats st;

	ntick = n;
	atomic_store(&c->t, T0);
	for (uint32_t i = 0; i < fab->nnodes; i++)
		emu_engine_set_model(eng, i, &tick_ops, i == fab->hosts[0] ? (void *)1 : NULL);
	if (origin)
		emu_engine_set_wall_origin(eng, origin);
	emu_engine_run(eng);
	st = *emu_engine_stats(eng);
	if (((struct tick_state *)emu_node_state(emu_engine_node(eng, fab->hosts[0])))->fired != n)
		diag("ticker fired %llu of %u",
		     (unsigned long long)((struct tick_state *)emu_node_state(emu_engine_node(eng, fab->hosts[0])))->fired, n);
	diag("dilation %g: emulated %.3f us, wall %.3f ms, windows %llu, lag mean %llu max %llu final %llu ns, kept up %d",
	     st.dilation, (double)st.emulated / 1e6, (double)st.wall_ns / 1e6, (unsigned long long)st.windows,
	     (unsigned long long)st.mean_lag_ns, (unsigned long long)st.max_lag_ns, (unsigned long long)st.final_lag_ns,
	     st.kept_up);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
	return st;
}

/*
 * One worker: the real-time scheduler. The reads of a run: one at its
 * start; per window one as it is planned, one more after each wait, one
 * after its events ran; one at its end. Pacing starts at window 0 with a
 * fixed dilation: wall0 = T0 + 2 step, tick k is due at wall0 + k * PERIOD * D.
 */
static void injected(void)
{
	const unsigned n = 1000;
	const uint64_t per = PERIOD / 1000 * 1000;	/* wall ns per tick at D = 1000 */

	/* 1. pacing: a read costs 100 us of a tick's 1 ms: a window per tick, run one read late */
	{
		struct fclock c = { .step = 100000 };
		struct emu_run_stats st = ticks(&c, 1000, n);

		is_u64(st.windows, n, "pacing: one window per tick");
		is_u64(st.emulated, (uint64_t)(n - 1) * PERIOD, "pacing: emulated time = the last tick");
		is_u64(st.max_lag_ns, c.step, "pacing: every window starts one read after its time, never before");
		ok(st.kept_up, "pacing: kept up");
		is_u64(atomic_load(&c.sleeps), n - 1, "pacing: slept before every window after the first");
		is_u64(atomic_load(&c.last_target), T0 + 2 * c.step + (n - 1) * per,
		       "pacing: the last window waited for wall0 + emulated x D");
		is_u64(st.wall_ns, (n - 1) * per + 4 * c.step, "pacing: wall time = emulated x D + the reads");
		/* samples: windows 1.. start one read late and end 2 reads late (window 0 starts the pacing: none) */
		ok(st.event_lag.samples == 2 * n - 2 && st.event_lag.max_ns == 2 * c.step &&
		   st.event_lag.p50_ns >= c.step && st.event_lag.p50_ns <= c.step * 17 / 16 &&
		   st.event_lag.p99_ns >= 2 * c.step && st.event_lag.p99_ns <= 2 * c.step,
		   "pacing: event lag p50 %llu p99 %llu max %llu ns over %llu samples (one and two reads)",
		   (unsigned long long)st.event_lag.p50_ns, (unsigned long long)st.event_lag.p99_ns,
		   (unsigned long long)st.event_lag.max_ns, (unsigned long long)st.event_lag.samples);
	}
	/*
	 * 1b. an origin (--start-at): emulated time 0 due at a chosen wall
	 * time. Ahead of the start: the first tick waits for it, tick k is due
	 * at origin + k x PERIOD x D. Behind it (the set-up took longer): the
	 * first window runs every tick already due, and is not counted late.
	 */
	{
		const unsigned m = 10;
		struct fclock c = { .step = 100000 };

		origin = T0 + 50000000;
		struct emu_run_stats st = ticks(&c, 1000, 1);

		is_u64(atomic_load(&c.last_target), origin, "origin ahead: the first tick waited for the origin");
		st = ticks(&c, 1000, m);
		is_u64(atomic_load(&c.last_target), origin + (m - 1) * per, "origin ahead: tick k due at origin + k x D");
		ok(st.windows == m && st.max_lag_ns == c.step && st.kept_up,
		   "origin ahead: a window per tick, one read late, kept up (%llu windows, max lag %llu ns)",
		   (unsigned long long)st.windows, (unsigned long long)st.max_lag_ns);
		origin = T0 - 4500000;	/* ticks 0..4 due before the run starts */
		st = ticks(&c, 1000, m);
		ok(st.windows == m - 4 && st.max_lag_ns == c.step && st.kept_up && st.event_lag.max_ns <= 2 * c.step,
		   "origin behind: the first window runs the 5 ticks due, not counted late (%llu windows, max lag %llu, "
		   "event lag max %llu ns)", (unsigned long long)st.windows, (unsigned long long)st.max_lag_ns,
		   (unsigned long long)st.event_lag.max_ns);
		is_u64(atomic_load(&c.last_target), origin + (m - 1) * per, "origin behind: the last tick due at origin + 9 D");
		origin = 0;
	}
	/*
	 * 2. a machine too slow: a read costs 3 ms, a window two reads (6 ms).
	 * Lookahead windows fell 2 ms further behind with every 1 ms tick; a
	 * real-time window takes every tick due by now (six), so the lag stays
	 * at 2 reads - 1 tick = 5 ms however long the run.
	 */
	{
		const unsigned m = 100;
		struct fclock c = { .step = 3000000 };
		struct emu_run_stats st = ticks(&c, 1000, m);
		uint64_t per_win = 2 * c.step / per, wins = 1 + (m - 1 + per_win - 1) / per_win;

		is_u64(st.windows, wins, "too slow: %llu ticks per window", (unsigned long long)per_win);
		is_u64(st.max_lag_ns, 2 * c.step - per, "too slow: the lag stays at 2 reads - 1 tick");
		is_u64(st.final_lag_ns, 2 * c.step - per, "too slow: final lag is the max");
		is_u64(st.mean_lag_ns, 2 * c.step - per, "too slow: mean lag the same");
		ok(!st.kept_up, "too slow: reported as not keeping up");
		is_u64(st.late_windows, wins - 1, "too slow: every paced window more than the 2 ms bound late");
		is_u64(atomic_load(&c.sleeps), 0, "too slow: never slept");
		is_u64(st.emulated, (uint64_t)(m - 1) * PERIOD, "too slow: every tick ran");
	}
	/*
	 * 3. preempted: the clock jumps 30 ms at window j's planning read (read
	 * 3j: windows after the first read three times). That window starts
	 * the jump + 3 reads - 1 tick late and runs the 30 ticks due by then;
	 * the next is on time again.
	 */
	{
		const unsigned j = 100;
		struct fclock c = { .step = 100000, .jump_read = 3 * j, .jump = 30000000 };
		struct emu_run_stats st = ticks(&c, 1000, n);

		uint64_t lag0 = c.jump + 3 * c.step - per;

		is_u64(st.max_lag_ns, lag0, "preempted: max lag = the jump + 3 reads - 1 tick (%.1f ms)", (double)lag0 / 1e6);
		is_u64(st.final_lag_ns, c.step, "preempted: caught up by the end");
		is_u64(st.late_windows, 1, "preempted: one window late");
		is_u64(st.windows, n - 29, "preempted: the late window took the 30 ticks due");
		is_u64(atomic_load(&c.last_target), T0 + 2 * c.step + (n - 1) * per,
		       "preempted: the schedule did not move (targets from the same wall0)");
		ok(!st.kept_up && st.lag_bound_ns == EMU_LAG_BOUND_NS,
		   "preempted: %.1f ms behind at worst is over the 2 ms bound: did not keep up",
		   (double)st.max_lag_ns / 1e6);
		struct fclock c2 = { .step = 100000, .jump_read = 3 * j, .jump = 30000000 };

		lag_bound = 31000000;
		st = ticks(&c2, 1000, n);
		lag_bound = 0;
		ok(st.kept_up && st.late_windows == 0 && st.lag_bound_ns == 31000000 && st.max_lag_ns == lag0,
		   "preempted, bound 31 ms: kept up (at most %.1f ms behind)", (double)st.max_lag_ns / 1e6);
	}
	/*
	 * 4. auto: calibration runs unpaced lookahead windows (a read each)
	 * until 10 ms of wall time passed and then 200 more (window 301 at
	 * 100 us a window); it picks the smallest 1.25^k >= 1.5 x (wall per
	 * emulated ns) = 150. Paced, a window reads twice (200 us, more than
	 * a tick's 169 us): windows then take the ticks due, the lag stays
	 * within the two reads.
	 */
	{
		struct fclock c = { .step = 100000 };
		struct emu_run_stats st = ticks(&c, 0, n);
		double d = 1;

		while (d < 1.5 * (double)c.step / (double)(PERIOD / 1000))
			d *= 1.25;
		ok(st.dilation == d, "auto: picked D = %g (want %g)", st.dilation, d);
		ok(st.max_lag_ns <= 2 * c.step, "auto: at most two reads late after calibration (%llu ns)",
		   (unsigned long long)st.max_lag_ns);
		ok(st.kept_up, "auto: kept up");
		ok(st.windows > 301 && st.windows < n, "auto: %llu windows: 301 calibrating, then some of several ticks",
		   (unsigned long long)st.windows);
	}
	/* 5. auto on a run shorter than calibration: D from the whole run */
	{
		const unsigned m = 50;
		struct fclock c = { .step = 100000 };
		struct emu_run_stats st = ticks(&c, 0, m);
		double r = (double)((m + 1) * c.step) / (double)((m - 1) * PERIOD / 1000) * 1.5, d = 1;

		while (d < r)
			d *= 1.25;
		ok(st.dilation == d, "auto, short run: D = %g from the whole run (want %g)", st.dilation, d);
		is_u64(atomic_load(&c.sleeps), 0, "auto, short run: never paced");
		ok(st.paced_windows == 0 && !st.kept_up, "auto, short run: not reported as keeping up (no window paced)");
	}
}

/* ---------- no event before its time, an outside input at its arrival ---------- */

/*
 * A clock that only sleeps move (reads are free): every event must run
 * exactly when it is due. The ticker's second timer per tick lies 100 ns
 * into it, within a lookahead (300 ns): a window of one lookahead would run
 * it 100 us of wall time early at D = 1000.
 */
#define NARR 4

struct outside {
	struct fclock c;
	uint64_t arrive[NARR];		/* wall times frames arrive (sorted) */
	unsigned seen;			/* taken in by the model */
	emu_time_t woke[NARR];		/* the emulated time of each wake */
	unsigned nwoke;
	uint64_t busy_at;		/* the tick whose handler takes ... */
	uint64_t busy_ns;		/* ... this long (the clock jumps) */
	unsigned early;			/* events run before their wall time */
	unsigned late;			/* ... after it */
	unsigned ran;
	int watch_rc;
};

static struct outside *out_ctx;

static uint64_t out_due(emu_time_t t)
{
	return T0 + (uint64_t)((double)t / 1000.0 * 1000);	/* wall0 = T0, emu0 = 0, D = 1000 */
}

static void out_sleep(void *ctx, uint64_t until)
{
	struct outside *o = ctx;

	/* a frame arriving before @until ends the wait (ppoll on the interface) */
	if (o->seen < NARR && o->arrive[o->seen] < until && o->arrive[o->seen] > atomic_load(&o->c.t))
		until = o->arrive[o->seen];
	fc_sleep(&o->c, until);
}

static bool out_ready(void *ctx)
{
	struct outside *o = ctx;

	return o->seen < NARR && atomic_load(&o->c.t) >= o->arrive[o->seen];
}

#define T_OUT_WAKE 1000000

static int out_init(struct emu_node *n, void *arg)
{
	if (arg) {
		emu_timer_at(n, 0, 0);
		out_ctx->watch_rc = emu_node_watch(n, -1, out_ready, out_ctx, T_OUT_WAKE);
	}
	return 0;
}

static void out_timer(struct emu_node *n, uint64_t k)
{
	struct outside *o = out_ctx;
	uint64_t wall = atomic_load(&o->c.t), due = out_due(emu_node_now(n));

	o->ran++;
	o->early += wall < due;
	o->late += wall > due;
	if (k == T_OUT_WAKE) {
		if (o->nwoke < NARR)
			o->woke[o->nwoke++] = emu_node_now(n);
		while (o->seen < NARR && o->arrive[o->seen] <= wall)
			emu_node_injected(n, o->arrive[o->seen++]);
		return;
	}
	if (k == o->busy_at)
		atomic_fetch_add(&o->c.t, o->busy_ns);
	/* k even: the tick at k/2 us; odd: 100 ns after it */
	if (k % 2 == 0)
		emu_timer_at(n, emu_node_now(n) + 100 * EMU_NS, k + 1);
	else if (k + 1 < 2 * ntick)
		emu_timer_at(n, (k + 1) / 2 * PERIOD, k + 1);
}

static const struct emu_model_ops out_ops = {
	.name = "ticker with an outside input",
	.state_size = sizeof(struct tick_state),
	.init = out_init,
	.timer = out_timer,
};

static struct emu_run_stats outside_run(struct outside *o, unsigned workers)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=2,spines=2,hosts=4");
	struct emu_engine_cfg cfg = {
		.workers = workers, .seed = 1, .clock = EMU_CLOCK_WALL, .dilation = 1000,
		.wall_now = fc_now, .wall_sleep = out_sleep, .wall_ctx = o,
	};
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct emu_run_stats st;

	out_ctx = o;
	ntick = 20;
	atomic_store(&o->c.t, T0);
	for (uint32_t i = 0; i < fab->nnodes; i++)
		emu_engine_set_model(eng, i, &out_ops, i == fab->hosts[0] ? (void *)1 : NULL);
	emu_engine_run(eng);
	st = *emu_engine_stats(eng);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
	return st;
}

static void outside(void)
{
	/* wall0 = T0 (reads are free); arrivals at 2.5, 7.25 and 12.0004 ms: emulated 2.5, 7.25, 12.0004 us */
	struct outside o = { .arrive = { T0 + 2500000, T0 + 7250000, T0 + 12000400, T0 + 15200000 },
			     .busy_at = 2 * 15, .busy_ns = 500000 };
	struct emu_run_stats st = outside_run(&o, 1);

	is_int(o.watch_rc, 0, "outside: a real-time run watches the input");
	is_int(o.ran, 2 * 20 + NARR, "outside: every tick, its second timer and a wake per frame ran");
	is_int(o.early, 0, "no event ran before its wall time (the second timer 100 ns into a tick included)");
	is_int(o.late, 1, "...and every one ran when due, but the wake after the busy handler");
	is_u64(o.woke[0], 2500 * EMU_NS, "a frame arriving at 2.5 ms of wall time enters at 2.5 us emulated (D = 1000)");
	is_u64(o.woke[1], 7250 * EMU_NS, "...at 7.25 ms: 7.25 us");
	is_u64(o.woke[2], 12000 * EMU_NS + 400, "...at 12.0004 ms: 12.0004 us, 400 ps after a tick");
	/* tick 15's handler takes 0.5 ms: the frame of 15.2 ms is seen at 15.5 ms, enters then */
	is_u64(o.woke[3], 15500 * EMU_NS, "a frame arriving while an event runs enters when seen (15.5 us)");
	ok(st.inject_lag.samples == NARR && st.inject_lag.max_ns == 300000 && st.inject_lag.p50_ns == 0,
	   "injected-frame lag: %llu samples, p50 %llu, max %llu ns (0 for those waited for, 0.3 ms for the one seen late)",
	   (unsigned long long)st.inject_lag.samples, (unsigned long long)st.inject_lag.p50_ns,
	   (unsigned long long)st.inject_lag.max_ns);

	struct outside o2 = { .arrive = { T0 + 2500000, T0 + 7250000, T0 + 12000400, T0 + 15200000 } };

	outside_run(&o2, 2);
	is_int(o2.watch_rc, -ENOTSUP, "two workers: no watches (the model polls)");
}

/* ---------- the real clock: a smoke test ---------- */

struct res {
	struct emu_run_stats st;
	uint64_t recv;
};

static struct res run(enum emu_clock clock, double dilation, emu_time_t until, unsigned workers)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=2,spines=2,hosts=4");
	struct emu_engine_cfg cfg = { .workers = workers, .seed = 5, .clock = clock, .dilation = dilation };
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

static void real(void)
{
	struct res v = run(EMU_CLOCK_VIRTUAL, 0, 100 * EMU_US, 2);
	struct res vlong = run(EMU_CLOCK_VIRTUAL, 0, 2000 * EMU_US, 2);
	struct res w = run(EMU_CLOCK_WALL, 2000, 100 * EMU_US, 2);
	/*
	 * Pacing waits for every window's start: the run cannot end before
	 * (last window - first window) x D. The traffic starts within the
	 * first microseconds and the last window starts less than a lookahead
	 * (300 ns) before the end: 90 % of emulated x D is a safe floor.
	 */
	double floor_ms = (double)w.st.emulated / 1e6 * 2000 / 1e3 * 0.9;

	is_u64(w.recv, v.recv, "real clock: same deliveries as virtual time (%llu)", (unsigned long long)v.recv);
	ok((double)w.st.wall_ns / 1e6 >= floor_ms, "real clock, D=2000: wall %.1f ms not ahead of emulated x D (%.1f ms)",
	   (double)w.st.wall_ns / 1e6, floor_ms);

	struct res imp = run(EMU_CLOCK_WALL, 0.001, 2000 * EMU_US, 2);

	is_u64(imp.recv, vlong.recv, "real clock, impossible dilation: results unchanged");
	ok(!imp.st.kept_up && imp.st.max_lag_ns > 0, "real clock, D=0.001: lag reported (%.3f ms), not kept up",
	   (double)imp.st.max_lag_ns / 1e6);

	struct res a = run(EMU_CLOCK_WALL, 0, 2000 * EMU_US, 2);

	/* whatever this machine's speed, the pick is 1.25^k, k >= 0 (section 4 above: the rule itself) */
	double pow125 = 1;

	while (pow125 < a.st.dilation && pow125 < 1e12)
		pow125 *= 1.25;
	ok(pow125 == a.st.dilation, "real clock, auto: picked D = %g, a power of 1.25", a.st.dilation);
	is_u64(a.recv, vlong.recv, "real clock, auto: results unchanged");

	/* one worker: the real-time scheduler, its windows as long as the clock allows (D = 1: far behind) */
	struct res r1 = run(EMU_CLOCK_WALL, 1, 2000 * EMU_US, 1);

	ok(r1.recv == vlong.recv && r1.st.emulated == vlong.st.emulated && r1.st.events == vlong.st.events &&
	   r1.st.frame_hops == vlong.st.frame_hops,
	   "real clock, one worker, D = 1: the same deliveries, events, frame-hops and end as virtual time (%llu windows)",
	   (unsigned long long)r1.st.windows);
}

int main(void)
{
	plan(52);
	injected();
	outside();
	real();
	return done_testing();
}
