// SPDX-License-Identifier: MIT
/*
 * DOC: two engine corner cases that depend on event order at one instant.
 *
 * TXDONE: H0 - S0 - H1, frames of ft each. H0 arms a timer for exactly ft and
 * then sends frame A, so at ft the timer runs before A's TXDONE and sends
 * frame B onto the just-freed wire. The model's txdone() must then come
 * once, at 2 ft, when B is done (not at ft, when the port is busy with B,
 * and then never again), and the port must be idle when it comes. Also on
 * a slow link whose frame time (8 us) is beyond the event wheel's span:
 * the wake then takes the queue's slow path.
 *
 * Stall watchdog: hosts report progress at known times and then only tick
 * timers that do nothing useful; the run must stop exactly --stall after
 * the last progress, whatever the event density and the worker count.
 */
#include "helpers.h"
#include "libhost/wire.h"

#define BYTES 1000
#define MAXT 8

struct txs {
	emu_time_t ft;
	emu_time_t txdone[MAXT];
	bool busy_at_txdone[MAXT];
	unsigned ntx;
	unsigned sent;
};

static void send_one(struct emu_node *n)
{
	const struct emu_fabric *fab = emu_engine_fabric(n->eng);
	const struct emu_fab_node *me = emu_node_desc(n), *peer = &fab->nodes[fab->hosts[1]];
	struct emu_frame *f = emu_frame_alloc(n);
	struct txs *s = emu_node_state(n);

	f->len = lh_wire_udp(f->data, peer->mac, me->mac, me->ipv4, peer->ipv4, 1, 1, BYTES - EMU_UDP_PAYLOAD_OFF);
	emu_send(n, 0, f);
	s->sent++;
}

static int tx_init(struct emu_node *n, void *arg)
{
	struct txs *s = emu_node_state(n);

	if (emu_node_desc(n)->index != 0)
		return 0;
	s->ft = *(const emu_time_t *)arg;
	emu_timer_at(n, s->ft, 1);	/* armed first: runs before A's TXDONE at ft */
	send_one(n);
	return 0;
}

static void tx_timer(struct emu_node *n, uint64_t cookie)
{
	(void)cookie;
	send_one(n);
}

static void tx_done(struct emu_node *n, unsigned port)
{
	struct txs *s = emu_node_state(n);

	if (s->ntx < MAXT) {
		s->busy_at_txdone[s->ntx] = emu_port_busy(n, port);
		s->txdone[s->ntx] = emu_node_now(n);
	}
	s->ntx++;
}

static void sink_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	(void)port;
	emu_frame_free(n, f);
}

static const struct emu_model_ops tx_ops = {
	.name = "tx", .state_size = sizeof(struct txs), .init = tx_init, .rx = sink_rx, .timer = tx_timer,
	.txdone = tx_done,
};

static void txdone_case(uint64_t rate, const char *name)
{
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t sw = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "S0");
	uint32_t h0 = emu_fabric_add_node(fab, EMU_NODE_HOST, "H0");
	uint32_t h1 = emu_fabric_add_node(fab, EMU_NODE_HOST, "H1");
	char err[128];
	emu_time_t ft = emu_tx_time(BYTES, rate);

	emu_fabric_add_link(fab, h0, 0, sw, 0, rate, 300 * EMU_NS);
	emu_fabric_add_link(fab, h1, 0, sw, 1, rate, 300 * EMU_NS);
	if (emu_fabric_finalize(fab, err, sizeof(err)))
		skip_all(err);
	struct emu_engine_cfg cfg = { .workers = 1 };
	struct emu_engine *eng = t_engine(fab, &cfg);

	emu_engine_set_model(eng, sw, &emu_fwd_ops, NULL);
	emu_engine_set_model(eng, h0, &tx_ops, &ft);
	emu_engine_set_model(eng, h1, &tx_ops, &ft);
	emu_engine_run(eng);

	struct txs *s = emu_node_state(emu_engine_node(eng, h0));

	is_u64(s->sent, 2, "%s: H0 sent A at 0 and B at ft from a timer", name);
	is_u64(s->ntx, 1, "%s: txdone() came once, after B", name);
	is_u64(s->ntx ? s->txdone[0] : 0, 2 * ft, "%s: ...at 2 ft, when B left the wire", name);
	ok(s->ntx && !s->busy_at_txdone[0], "%s: ...and the port was idle then", name);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

/* ---- stall watchdog ---- */

struct stall_arg {
	emu_time_t tick;	/* useless timer period */
	emu_time_t last;	/* last progress at this time (host 0) */
};

static int st_init(struct emu_node *n, void *arg)
{
	const struct stall_arg *a = arg;

	if (emu_node_desc(n)->kind != EMU_NODE_HOST)
		return 0;
	emu_timer_at(n, a->tick + emu_node_desc(n)->index * 7 * EMU_NS, 0);
	return 0;
}

static void st_timer(struct emu_node *n, uint64_t cookie)
{
	const struct stall_arg *a = n->arg;
	emu_time_t now = emu_node_now(n);

	(void)cookie;
	if (emu_node_desc(n)->index == 0 && now <= a->last)
		emu_node_progress(n);
	emu_timer_at(n, now + a->tick, 0);
}

static const struct emu_model_ops st_ops = {
	.name = "ticker", .init = st_init, .rx = sink_rx, .timer = st_timer,
};

static emu_time_t stall_case(unsigned workers, emu_time_t tick, emu_time_t *last_progress)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=2,spines=2,hosts=2");
	struct emu_engine_cfg cfg = { .workers = workers, .stall = 10 * EMU_US, .no_pin = true };
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct stall_arg a = { .tick = tick, .last = 0 };

	/* host 0's last progress: the last tick at or before 3 us */
	a.last = 3 * EMU_US / tick * tick;
	for (uint32_t i = 0; i < fab->nnodes; i++)
		emu_engine_set_model(eng, i, &st_ops, &a);
	emu_engine_expect_done(eng, 1);
	emu_engine_run(eng);

	const struct emu_run_stats *st = emu_engine_stats(eng);
	emu_time_t t = st->stalled ? st->emulated : 0;

	*last_progress = st->last_progress;
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
	return t;
}

int main(void)
{
	plan(14);
	txdone_case(100000000000ULL, "100 Gb/s");
	/* a frame longer than the event wheel's span: the wake goes to the queue's far heap */
	txdone_case(1000000000ULL, "1 Gb/s");

	emu_time_t lp1, lp2, lp3;
	emu_time_t tick = 333 * EMU_NS;
	emu_time_t last = 3 * EMU_US / tick * tick;
	emu_time_t s1 = stall_case(1, tick, &lp1);

	is_u64(lp1, last, "watchdog: last progress at the last useful tick");
	is_u64(s1, last + 10 * EMU_US, "stopped exactly --stall after it (not at a window edge)");
	emu_time_t s2 = stall_case(2, tick, &lp2);

	is_u64(s2, s1, "the same with 2 workers");
	is_u64(lp2, lp1, "...and the same last progress");

	/* denser useless events (other windows) and another last progress: 24 x 125 ns */
	emu_time_t s3 = stall_case(1, 125 * EMU_NS, &lp3);
	emu_time_t last3 = 3 * EMU_US / (125 * EMU_NS) * (125 * EMU_NS);

	is_u64(lp3, last3, "with a denser tick: last progress at its own last useful tick");
	is_u64(s3, last3 + 10 * EMU_US, "...and stopped exactly --stall after it");
	return done_testing();
}
