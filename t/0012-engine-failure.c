// SPDX-License-Identifier: MIT
/*
 * DOC: failures. Hosts under leaf L0 stream to hosts under leaf L1 over two
 * spines. The link L0-S0 goes down at T1 and comes back at T2 (then the
 * same with the switch S0 itself). What was on the link or queued for it is
 * lost and counted; between T1 and T2 routing (republished through RCU by
 * the control thread at exactly T1) sends nothing toward S0; after T2 the
 * link carries traffic again; and every frame is accounted for. The same
 * run with L0 on the fwd model's route op, whose row of the table is kept
 * across hops, sends and loses the same frames on each uplink.
 */
#include "helpers.h"

#define T1 (20 * EMU_US)
#define T2 (50 * EMU_US)
#define TEND (80 * EMU_US)

/* L0 runs fwd but counts which uplink it used in each phase */
struct probe {
	struct emu_fwd_state fwd;
	uint64_t up[3][2];	/* phase x spine */
	uint64_t fwd_fail;
};

static unsigned phase(emu_time_t t)
{
	return t < T1 ? 0 : t < T2 ? 1 : 2;
}

static void probe_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct probe *p = emu_node_state(n);
	int out = emu_fwd_port(n, f);

	(void)port;
	if (out >= 4 && out < 6)	/* L0's ports 4, 5 face S0, S1 */
		p->up[phase(emu_node_now(n))][out - 4]++;
	if (emu_fwd_forward(n, f, &p->fwd.st))
		p->fwd_fail++;
}

static const struct emu_model_ops probe_ops = {
	.name = "probe", .state_size = sizeof(struct probe), .rx = probe_rx,
};

/* the engine of run() with its failure scheduled (true if it was), L0 on @l0_ops */
static struct emu_engine *failing(struct emu_fabric *fab, bool node_fail, unsigned workers,
				  const struct emu_model_ops *l0_ops, bool *sched)
{
	struct emu_engine_cfg cfg = { .workers = workers, .seed = 11, .routing = EMU_ROUTE_ECMP };
	struct emu_engine *eng = t_engine(fab, &cfg);
	/* every host streams to H4 (under L1) at 20 % of line rate */
	static struct emu_trafgen_cfg tg = { .frame_bytes = 1024, .load = 0.2, .until = TEND, .dst_host = 4 };
	uint32_t l0 = emu_fabric_find(fab, "L0"), s0 = emu_fabric_find(fab, "S0");
	uint32_t link = t_link_between(fab, "L0", "S0");

	t_plug(eng, fab, &tg);
	emu_engine_set_model(eng, l0, l0_ops, NULL);
	if (node_fail)
		*sched = emu_engine_schedule_node(eng, s0, T1, false) == 0 && emu_engine_schedule_node(eng, s0, T2, true) == 0;
	else
		*sched = emu_engine_schedule_link(eng, link, T1, false) == 0 &&
			 emu_engine_schedule_link(eng, link, T2, true) == 0;
	return eng;
}

/* L0's uplinks (ports 4, 5): frames sent and lost on each, and what H4 received */
static void l0_counts(struct emu_engine *eng, struct emu_fabric *fab, uint64_t c[5])
{
	const struct emu_node *n = emu_engine_node(eng, emu_fabric_find(fab, "L0"));

	for (unsigned i = 0; i < 2; i++) {
		c[i] = n->ports[4 + i].tx_frames;
		c[2 + i] = n->ports[4 + i].drops_down;
	}
	c[4] = t_host_state(eng, fab, 4)->recv;
}

static void run(bool node_fail, unsigned workers)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=2,spines=2,hosts=4");
	uint32_t l0 = emu_fabric_find(fab, "L0");
	const char *what = node_fail ? "switch S0" : "link L0-S0";
	bool sched;
	struct emu_engine *eng = failing(fab, node_fail, workers, &probe_ops, &sched);

	ok(sched, "%s: failure scheduled", what);
	emu_engine_run(eng);

	struct probe *p = emu_node_state(emu_engine_node(eng, l0));
	uint64_t sent = 0, lost = 0, recv = t_host_state(eng, fab, 4)->recv, other = 0;

	for (uint32_t h = 0; h < fab->nhosts; h++)
		if (h != 4)
			sent += t_host_state(eng, fab, h)->sent;
	for (uint32_t i = 0; i < fab->nnodes; i++) {
		struct emu_node *n = emu_engine_node(eng, i);

		for (unsigned q = 0; q < n->nports; q++) {
			lost += n->ports[q].drops_down;
			other += n->ports[q].drops_queue + n->ports[q].drops_loss;
		}
	}
	ok(p->up[0][0] > 0 && p->up[0][1] > 0, "%s/%u workers: before T1 both uplinks carry traffic (%llu, %llu)",
	   what, workers, (unsigned long long)p->up[0][0], (unsigned long long)p->up[0][1]);
	is_u64(p->up[1][0], 0, "%s: between T1 and T2 routing sends nothing toward S0", what);
	ok(p->up[1][1] > 0, "%s: ...and everything over S1 (%llu)", what, (unsigned long long)p->up[1][1]);
	ok(p->up[2][0] > 0, "%s: after T2 the link to S0 carries traffic again (%llu)", what,
	   (unsigned long long)p->up[2][0]);
	ok(lost > 0, "%s: frames on the failed link were lost (%llu)", what, (unsigned long long)lost);
	is_u64(recv + lost + other, sent, "%s: delivered %llu + lost %llu = sent %llu", what,
	       (unsigned long long)recv, (unsigned long long)lost, (unsigned long long)sent);

	/*
	 * L0 on the fwd model's route op, which keeps its row of the table
	 * (struct emu_route_row) across hops: it takes the new snapshot at
	 * T1 and T2 as emu_fwd_forward() does (each hop's lookup anew), so
	 * the run is the same frame for frame.
	 */
	uint64_t a[5], b[5];
	struct emu_engine *plain = failing(fab, node_fail, workers, &emu_fwd_ops, &sched);

	emu_engine_run(plain);
	l0_counts(eng, fab, a);
	l0_counts(plain, fab, b);
	ok(sched && !memcmp(a, b, sizeof(a)),
	   "%s/%u workers: L0's route op as emu_fwd_forward(): uplinks sent %llu %llu, lost %llu %llu, H4 got %llu "
	   "(forward: %llu %llu, %llu %llu, %llu)",
	   what, workers, (unsigned long long)b[0], (unsigned long long)b[1], (unsigned long long)b[2],
	   (unsigned long long)b[3], (unsigned long long)b[4], (unsigned long long)a[0], (unsigned long long)a[1],
	   (unsigned long long)a[2], (unsigned long long)a[3], (unsigned long long)a[4]);
	emu_engine_destroy(plain);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

int main(void)
{
	plan(8 * 4);
	run(false, 1);
	run(false, 2);
	run(true, 1);
	run(true, 3);
	return done_testing();
}
