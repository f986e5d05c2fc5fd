// SPDX-License-Identifier: MIT
/*
 * DOC: timers a model calls idle (ops->timer_idle) are dropped unfired
 * when an earlier timer of the node fires, unless already woken (their
 * event is in the queue) or the node's latest (which keeps the time of
 * the run's last event). H0 arms, at init: A at 300 ns (the earliest then:
 * woken), B at 100 ns (out of order, earlier still: woken), then C, D, E
 * at 400, 500, 600 ns; A, C and E are idle. B fires at 100 (A is woken:
 * kept), A at 300 (C is dropped, D woken), D at 500 and E, the latest, at
 * 600: the run runs dry at 600 ns. Without timer_idle every timer fires.
 *
 * A model without timer_idle has no timers to drop: each of its timers is
 * an event of its own in the worker's queue, where a model with
 * timer_idle keeps them per node behind one wake. Both must fire in the
 * same (time, key) order: a churn of timers armed from timers (ties,
 * times in the past, beyond the timing wheel's span; in order, the node's
 * sorted ring, or before pending ones, its log, drained into its heap)
 * fires identically under a model without timer_idle and one whose
 * timer_idle says no.
 *
 * Idle churn: timers that turn idle at a time drawn when armed (and then
 * do nothing when they fire), armed from timers, many out of order, so
 * that they wait unsorted in the node's log and the idle ones leave it
 * when an earlier timer fires, or when the log is full. What fires, when,
 * and how many events the run counts must be what a plain reference of
 * the rule gives (the test's own: every timer in one (time, key) order;
 * one armed earlier than all is woken; when a wake fires, the idle ones
 * from the front, unless woken or the last one left, are dropped and the
 * front is woken).
 */
#include "helpers.h"

enum { TA = 1, TB, TC, TD, TE };

struct tst {
	uint64_t fired[8];
	emu_time_t at[8];
	unsigned n;
	unsigned asked;		/* timer_idle calls */
};

static int tm_init(struct emu_node *n, void *arg)
{
	(void)arg;
	if (emu_node_desc(n)->index != 0)
		return 0;
	emu_timer_at(n, 300 * EMU_NS, TA);
	emu_timer_at(n, 100 * EMU_NS, TB);
	emu_timer_at(n, 400 * EMU_NS, TC);
	emu_timer_at(n, 500 * EMU_NS, TD);
	emu_timer_at(n, 600 * EMU_NS, TE);
	return 0;
}

static void tm_timer(struct emu_node *n, uint64_t cookie)
{
	struct tst *s = emu_node_state(n);

	if (s->n < 8) {
		s->at[s->n] = emu_node_now(n);
		s->fired[s->n++] = cookie;
	}
}

static bool tm_idle(struct emu_node *n, uint64_t cookie)
{
	struct tst *s = emu_node_state(n);

	s->asked++;
	return cookie == TA || cookie == TC || cookie == TE;
}

static const struct emu_model_ops idle_ops = {
	.name = "idle", .state_size = sizeof(struct tst), .init = tm_init, .timer = tm_timer, .timer_idle = tm_idle,
};
static const struct emu_model_ops plain_ops = {
	.name = "plain", .state_size = sizeof(struct tst), .init = tm_init, .timer = tm_timer,
};

/* a switch and host H0 running @ops, run to the end on one worker; the fabric in *@fabp */
static struct emu_engine *run_h0(const struct emu_model_ops *ops, struct emu_fabric **fabp)
{
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t s = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "S0");
	uint32_t h0 = emu_fabric_add_node(fab, EMU_NODE_HOST, "H0");
	struct emu_engine_cfg cfg = { .workers = 1 };
	char err[128];

	emu_fabric_add_link(fab, h0, 0, s, 0, 100000000000ULL, 300 * EMU_NS);
	if (emu_fabric_finalize(fab, err, sizeof(err))) {
		diag("%s", err);
		exit(1);
	}
	struct emu_engine *eng = t_engine(fab, &cfg);

	emu_engine_set_model(eng, 0, &emu_fwd_ops, NULL);
	emu_engine_set_model(eng, 1, ops, NULL);
	emu_engine_run(eng);
	*fabp = fab;
	return eng;
}

/* churn: every timer arms 1-3 more from an LCG, 400 in all; record what fires when */
#define CHURN 400

struct churn {
	uint64_t x;
	unsigned armed, n;
	bool far[CHURN + 1];	/* armed past the wheel's span, by cookie */
	emu_time_t due[CHURN + 1];	/* the time armed for, by cookie */
	bool gone[CHURN + 1];	/* fired, by cookie */
	unsigned passed[3];	/* timers armed before a pending one due later: none, 1-32, more */
	uint64_t fired[CHURN];
	emu_time_t at[CHURN];
};

static void churn_arm(struct emu_node *n, struct churn *c, unsigned k)
{
	emu_time_t now = emu_node_now(n);

	while (k-- && c->armed < CHURN) {
		c->x = c->x * 6364136223846793005ULL + 1442695040888963407ULL;
		unsigned r = (unsigned)(c->x >> 33);
		emu_time_t t;

		switch (r % 8) {
		case 0: t = now; break;					/* this very picosecond */
		case 1: t = now > 50 * EMU_NS ? now - 50 * EMU_NS : 0; break;	/* the past: now */
		case 2: t = now + 5 * EMU_US + (r >> 8) % 1000; break;	/* past the wheel's span */
		case 3: t = (now / (10 * EMU_NS) + 1) * (10 * EMU_NS); break;	/* ties on a 10 ns grid */
		default: t = now + (r >> 4) % (2000 * EMU_NS); break;
		}
		c->far[c->armed + 1] = r % 8 == 2;
		/* how many pending timers this one passes: the node keeps a sorted ring, a heap past 32 */
		unsigned later = 0;

		for (unsigned i = 1; i <= c->armed; i++)
			later += !c->gone[i] && c->due[i] > (t > now ? t : now);
		c->passed[later == 0 ? 0 : later <= 32 ? 1 : 2]++;
		c->due[c->armed + 1] = t > now ? t : now;
		emu_timer_at(n, t, ++c->armed);
	}
}

static int churn_init(struct emu_node *n, void *arg)
{
	struct churn *c = emu_node_state(n);

	(void)arg;
	if (emu_node_desc(n)->index != 0)
		return 0;
	c->x = 12345;
	churn_arm(n, c, 8);
	return 0;
}

static void churn_timer(struct emu_node *n, uint64_t cookie)
{
	struct churn *c = emu_node_state(n);

	if (c->n < CHURN) {
		c->at[c->n] = emu_node_now(n);
		c->fired[c->n++] = cookie;
	}
	if (cookie <= CHURN)
		c->gone[cookie] = true;
	churn_arm(n, c, 1 + (unsigned)(c->x >> 40) % 3);
}

static bool churn_never_idle(struct emu_node *n, uint64_t cookie)
{
	(void)n;
	(void)cookie;
	return false;
}

static const struct emu_model_ops churn_ops = {
	.name = "churn", .state_size = sizeof(struct churn), .init = churn_init, .timer = churn_timer,
};
static const struct emu_model_ops churn_wake_ops = {
	.name = "churn-wake", .state_size = sizeof(struct churn), .init = churn_init, .timer = churn_timer,
	.timer_idle = churn_never_idle,
};

/* run the churn under @ops into @out */
static void churn_run(const struct emu_model_ops *ops, struct churn *out)
{
	struct emu_fabric *fab;
	struct emu_engine *eng = run_h0(ops, &fab);
	*out = *(const struct churn *)emu_node_state(emu_engine_node(eng, 1));
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

static void churn_check(void)
{
	static struct churn own, woken;
	bool sorted = true, same;
	unsigned ties = 0, far = 0;

	churn_run(&churn_ops, &own);
	churn_run(&churn_wake_ops, &woken);
	same = own.n == woken.n && own.armed == woken.armed;
	for (unsigned i = 0; same && i < own.n; i++)
		same = own.fired[i] == woken.fired[i] && own.at[i] == woken.at[i];
	for (unsigned i = 1; i < own.n; i++) {
		sorted &= own.at[i] >= own.at[i - 1];
		ties += own.at[i] == own.at[i - 1];
	}
	for (unsigned i = 0; i < own.n; i++)
		far += own.fired[i] <= CHURN && own.far[own.fired[i]];
	is_int(own.n, CHURN, "churn: every one of the %u timers fired", CHURN);
	ok(same && sorted, "churn: timers as their own events fire as those behind a wake do, in time order "
	   "(%u ties, %u past the wheel's span)", ties, far);
	ok(ties > 10 && far > 0, "churn: the cases were there (ties %u, past the span %u)", ties, far);
	ok(woken.passed[0] > 10 && woken.passed[1] > 10 && woken.passed[2] > 10,
	   "churn: timers armed in order (%u), passing 1-32 pending ones (%u), passing more (%u)", woken.passed[0],
	   woken.passed[1], woken.passed[2]);
}

static void run(const struct emu_model_ops *ops, const uint64_t *want, const unsigned *want_ns, unsigned nwant,
		const char *what)
{
	struct emu_fabric *fab;
	struct emu_engine *eng = run_h0(ops, &fab);

	const struct tst *st = emu_node_state(emu_engine_node(eng, 1));
	bool same = st->n == nwant;

	for (unsigned i = 0; same && i < nwant; i++)
		same = st->fired[i] == want[i] && st->at[i] == want_ns[i] * EMU_NS;
	for (unsigned i = 0; !same && i < st->n; i++)
		diag("%s: timer %llu fired at %.1f ns", what, (unsigned long long)st->fired[i], (double)st->at[i] / 1e3);
	ok(same, "%s: %u timers fired, each at its time", what, nwant);
	is_u64(emu_engine_stats(eng)->emulated, 600 * EMU_NS, "%s: the run ends at the latest timer, 600 ns", what);
	if (ops->timer_idle)
		ok(st->asked >= 2, "%s: the model was asked (%u times)", what, st->asked);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

/* ---------- idle churn against a reference of the rule ---------- */
#define IC 3000
#define IC_INIT 96

struct ichurn {
	uint64_t x;
	unsigned armed, n;
	emu_time_t now;			/* the reference's clock */
	emu_time_t idle_from[IC + 1];	/* by cookie: idle from then on (UINT64_MAX: never) */
	uint64_t fired[IC];
	emu_time_t at[IC];
	unsigned out_of_order;		/* armed before the last one armed */
	emu_time_t last_armed;
	uint32_t log_peak;		/* the node's log of out-of-order timers, at its fullest */
};

/* the reference: every pending timer by cookie (cookies are armed in key order) */
struct ic_ref {
	emu_time_t t[IC + 1];
	bool live[IC + 1], woken[IC + 1];
};

static struct ic_ref ic_ref;

static uint64_t ic_draw(struct ichurn *c)
{
	c->x = c->x * 6364136223846793005ULL + 1442695040888963407ULL;
	return c->x >> 24;
}

/* the reference's earliest pending timer (0: none) */
static unsigned ic_ref_min(void)
{
	unsigned m = 0;

	for (unsigned i = 1; i <= IC; i++)
		if (ic_ref.live[i] && (!m || ic_ref.t[i] < ic_ref.t[m]))
			m = i;
	return m;
}

/* arm @k timers at @now: through the engine (@n) or the reference (@n NULL) */
static void ic_arm(struct emu_node *n, struct ichurn *c, emu_time_t now, unsigned k)
{
	while (k-- && c->armed < IC) {
		uint64_t r = ic_draw(c);
		emu_time_t t;

		switch (r % 8) {
		case 0: t = now; break;
		case 1: t = now + 3 * EMU_US + r % 4096; break;			/* past the wheel's span */
		case 2: t = (now / (20 * EMU_NS) + 1) * (20 * EMU_NS); break;	/* ties */
		default: t = now + (r >> 3) % (1500 * EMU_NS); break;
		}
		uint64_t d = ic_draw(c);
		unsigned cookie = ++c->armed;

		c->idle_from[cookie] = d % 4 ? now + (d >> 2) % (800 * EMU_NS) : UINT64_MAX;
		c->out_of_order += t < c->last_armed;
		c->last_armed = t;
		if (n) {
			emu_timer_at(n, t, cookie);
			if (n->tlog_n > c->log_peak)
				c->log_peak = n->tlog_n;
			continue;
		}
		unsigned m = ic_ref_min();

		ic_ref.t[cookie] = t;
		ic_ref.live[cookie] = true;
		ic_ref.woken[cookie] = !m || t < ic_ref.t[m];
	}
}

static bool ic_is_idle(const struct ichurn *c, uint64_t cookie, emu_time_t now)
{
	return cookie <= IC && now >= c->idle_from[cookie];
}

/* timer @cookie fires at @now: recorded; one not idle arms 1-3 more */
static void ic_fire(struct emu_node *n, struct ichurn *c, uint64_t cookie, emu_time_t now)
{
	if (c->n < IC) {
		c->at[c->n] = now;
		c->fired[c->n++] = cookie;
	}
	if (!ic_is_idle(c, cookie, now))
		ic_arm(n, c, now, 1 + (unsigned)(ic_draw(c) % 3));
}

static int ic_init(struct emu_node *n, void *arg)
{
	struct ichurn *c = emu_node_state(n);

	(void)arg;
	if (emu_node_desc(n)->index != 0)
		return 0;
	c->x = 777;
	ic_arm(n, c, 0, IC_INIT);
	return 0;
}

static void ic_timer(struct emu_node *n, uint64_t cookie)
{
	ic_fire(n, emu_node_state(n), cookie, emu_node_now(n));
}

static bool ic_idle(struct emu_node *n, uint64_t cookie)
{
	return ic_is_idle(emu_node_state(n), cookie, emu_node_now(n));
}

static const struct emu_model_ops ichurn_ops = {
	.name = "ichurn", .state_size = sizeof(struct ichurn), .init = ic_init, .timer = ic_timer, .timer_idle = ic_idle,
};

/* the rule, by hand: returns the time of the last event */
static emu_time_t ic_reference(struct ichurn *c)
{
	emu_time_t end = 0;

	memset(c, 0, sizeof(*c));
	memset(&ic_ref, 0, sizeof(ic_ref));
	c->x = 777;
	ic_arm(NULL, c, 0, IC_INIT);
	for (;;) {
		unsigned f = 0, left = 0;

		for (unsigned i = 1; i <= IC; i++)
			if (ic_ref.live[i] && ic_ref.woken[i] && (!f || ic_ref.t[i] < ic_ref.t[f]))
				f = i;
		if (!f)
			break;
		emu_time_t now = ic_ref.t[f];

		end = now;
		ic_ref.live[f] = false;
		for (unsigned i = 1; i <= IC; i++)
			left += ic_ref.live[i];
		unsigned m;

		while ((m = ic_ref_min()) && left > 1 && !ic_ref.woken[m] && ic_is_idle(c, m, now)) {
			ic_ref.live[m] = false;
			left--;
		}
		if (m)
			ic_ref.woken[m] = true;
		ic_fire(NULL, c, f, now);
	}
	return end;
}

static void ichurn_check(void)
{
	static struct ichurn want, got;
	emu_time_t end = ic_reference(&want);
	struct emu_fabric *fab;
	struct emu_engine *eng = run_h0(&ichurn_ops, &fab);
	bool same;
	unsigned idle_fired = 0;

	got = *(const struct ichurn *)emu_node_state(emu_engine_node(eng, 1));
	same = got.n == want.n && got.armed == want.armed;
	for (unsigned i = 0; same && i < want.n; i++)
		same = got.fired[i] == want.fired[i] && got.at[i] == want.at[i];
	for (unsigned i = 0; i < want.n; i++)
		idle_fired += ic_is_idle(&want, want.fired[i], want.at[i]);
	for (unsigned i = 0; !same && i < got.n && i < want.n; i++)
		if (got.fired[i] != want.fired[i] || got.at[i] != want.at[i]) {
			diag("idle churn: firing %u: timer %llu at %llu ps, the rule: %llu at %llu ps", i,
			     (unsigned long long)got.fired[i], (unsigned long long)got.at[i],
			     (unsigned long long)want.fired[i], (unsigned long long)want.at[i]);
			break;
		}
	ok(same, "idle churn: the %u timers that fire (%u of %u armed, %u of them idle) fire as the rule says, "
	   "each at its time", want.n, want.n, want.armed, idle_fired);
	is_u64(emu_engine_stats(eng)->events, want.n, "idle churn: one event per firing, none for a dropped timer");
	is_u64(emu_engine_stats(eng)->emulated, end, "idle churn: the run ends at the rule's last firing");
	ok(want.armed == IC && got.out_of_order > IC / 4 && idle_fired > 0 && want.armed - want.n > IC / 4 && got.log_peak > 64,
	   "idle churn: the cases were there (%u armed, %u out of order, %u idle ones fired, %u dropped, log peak %u)",
	   want.armed, got.out_of_order, idle_fired, want.armed - want.n, got.log_peak);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

int main(void)
{
	static const uint64_t idle_want[] = { TB, TA, TD, TE }, all_want[] = { TB, TA, TC, TD, TE };
	static const unsigned idle_ns[] = { 100, 300, 500, 600 }, all_ns[] = { 100, 300, 400, 500, 600 };

	plan(13);
	run(&idle_ops, idle_want, idle_ns, 4, "A, C, E idle: C dropped (A woken, E the latest)");
	run(&plain_ops, all_want, all_ns, 5, "no timer_idle");
	churn_check();
	ichurn_check();
	return done_testing();
}
