// SPDX-License-Identifier: MIT
/*
 * DOC: the credits a link's ring holds when the link changes state
 * (port.c: a credit is applied only if of the link's generation). H1
 * sends to H0 at line rate, alone: its credits are plentiful, so those it
 * gets back wait in the ring of the switch port facing it (or, across
 * workers, its own) until the ring is full. The link H1-L0 goes down at
 * T1 with such credits in the ring and comes back at T2, when H1 starts
 * again from a full buffer's credit and every other host starts sending
 * to H0 too (an incast that fills the switch's ingress buffers). The
 * credits from before T1 must not add to H1's: if they did, H1 would send
 * more than the switch's ingress buffer holds. Checked: no ingress buffer
 * ever holds more than its size, and every frame is delivered or counted
 * lost on the link; on 1 and 2 workers.
 */
#include "helpers.h"

#define T1 (30 * EMU_US)
#define T2 (40 * EMU_US)
#define TEND (80 * EMU_US)
#define BUF (16 * 1024)

static void run(unsigned workers)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=2,spines=1,hosts=8");
	struct emu_engine_cfg cfg = { .workers = workers, .buffer_bytes = BUF, .seed = 5 };
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct emu_trafgen_cfg tg1 = { .frame_bytes = 1500, .load = 1, .until = TEND, .dst_host = 0 };
	struct emu_trafgen_cfg tg = { .frame_bytes = 1500, .load = 1, .start = T2, .until = TEND, .dst_host = 0 };
	uint32_t link = t_link_between(fab, "H1", "L0");
	uint64_t sent = 0;

	t_plug(eng, fab, &tg);
	emu_engine_set_model(eng, fab->hosts[1], &emu_trafgen_ops, &tg1);
	ok(emu_engine_schedule_link(eng, link, T1, false) == 0 && emu_engine_schedule_link(eng, link, T2, true) == 0,
	   "%u workers: H1-L0 down at T1, up at T2", workers);
	emu_engine_run(eng);
	for (uint32_t h = 1; h < fab->nhosts; h++)
		sent += t_host_state(eng, fab, h)->sent;
	const struct emu_port_stats tot = t_port_totals(eng, fab);
	uint64_t lost = tot.drops_down, other = tot.drops_queue + tot.drops_loss + tot.drops_mtu;
	uint64_t peak_in = tot.in_peak_bytes;
	ok(peak_in <= BUF, "%u workers: peak ingress occupancy %llu <= buffer %u (no stale credit applied)", workers,
	   (unsigned long long)peak_in, BUF);
	ok(peak_in > BUF / 2, "%u workers: buffers did fill (backpressure)", workers);
	ok(lost > 0, "%u workers: frames were lost on the failed link (%llu)", workers, (unsigned long long)lost);
	is_u64(t_host_state(eng, fab, 0)->recv + lost + other, sent, "%u workers: delivered + lost = sent %llu", workers,
	       (unsigned long long)sent);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

int main(void)
{
	plan(5 * 2);
	run(1);
	run(2);
	return done_testing();
}
