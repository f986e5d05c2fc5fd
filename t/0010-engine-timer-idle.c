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

static void run(const struct emu_model_ops *ops, const uint64_t *want, const unsigned *want_ns, unsigned nwant,
		const char *what)
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

int main(void)
{
	static const uint64_t idle_want[] = { TB, TA, TD, TE }, all_want[] = { TB, TA, TC, TD, TE };
	static const unsigned idle_ns[] = { 100, 300, 500, 600 }, all_ns[] = { 100, 300, 400, 500, 600 };

	plan(5);
	run(&idle_ops, idle_want, idle_ns, 4, "A, C, E idle: C dropped (A woken, E the latest)");
	run(&plain_ops, all_want, all_ns, 5, "no timer_idle");
	return done_testing();
}
