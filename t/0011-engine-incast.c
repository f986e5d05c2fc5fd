// SPDX-License-Identifier: MIT
/*
 * DOC: flow control under incast. 15 hosts send 300 frames each at line
 * rate to one host behind the same switch (15:1). Lossless (credits): every
 * frame arrives, nothing is dropped anywhere, no ingress buffer ever holds
 * more than its size. Lossy (drop-tail): the egress queue toward the target
 * overflows, drops are counted, and delivered + dropped = sent.
 */
#include "helpers.h"

#define SENDERS 15
#define PER 300

static void run(bool lossy, unsigned workers)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=2,spines=1,hosts=8");
	struct emu_engine_cfg cfg = { .workers = workers, .lossy = lossy, .buffer_bytes = 32 * 1024, .seed = 3 };
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct emu_trafgen_cfg tg = { .frame_bytes = 1500, .load = 1, .count = PER, .dst_host = 0 };
	uint64_t sent = 0;

	t_plug(eng, fab, &tg);
	emu_engine_run(eng);
	for (uint32_t h = 1; h < fab->nhosts; h++)
		sent += t_host_state(eng, fab, h)->sent;
	const struct emu_port_stats tot = t_port_totals(eng, fab);
	uint64_t qdrops = tot.drops_queue, otherdrops = tot.drops_loss + tot.drops_down + tot.drops_mtu;
	uint64_t drops = qdrops + otherdrops, peak_in = tot.in_peak_bytes;
	struct emu_trafgen_state *target = t_host_state(eng, fab, 0);

	is_u64(sent, SENDERS * PER, "%s/%u workers: %u frames sent", lossy ? "lossy" : "lossless", workers, SENDERS * PER);
	if (!lossy) {
		is_u64(target->recv, SENDERS * PER, "lossless: every frame delivered");
		is_u64(drops, 0, "lossless: no drop anywhere");
		ok(peak_in <= cfg.buffer_bytes, "lossless: peak ingress occupancy %llu <= buffer %llu",
		   (unsigned long long)peak_in, (unsigned long long)cfg.buffer_bytes);
		ok(peak_in > cfg.buffer_bytes / 2, "lossless: buffers did fill (backpressure happened)");
	} else {
		ok(qdrops > 0, "lossy: the incast drops at the queue (%llu drops)", (unsigned long long)qdrops);
		is_u64(target->recv + drops, sent, "lossy: delivered %llu + dropped %llu = sent",
		       (unsigned long long)target->recv, (unsigned long long)drops);
		is_u64(otherdrops, 0, "lossy: every drop is a queue drop");
	}
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

int main(void)
{
	plan(5 * 2 + 4 * 2);
	run(false, 1);
	run(false, 2);
	run(true, 1);
	run(true, 2);
	return done_testing();
}
