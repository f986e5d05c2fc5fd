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
	uint64_t sent = 0, drops = 0, peak_in = 0, qdrops = 0, otherdrops = 0;

	t_plug(eng, fab, &tg);
	emu_engine_run(eng);
	for (uint32_t h = 1; h < fab->nhosts; h++)
		sent += t_host_state(eng, fab, h)->sent;
	for (uint32_t i = 0; i < fab->nnodes; i++) {
		struct emu_node *n = emu_engine_node(eng, i);

		for (unsigned p = 0; p < n->nports; p++) {
			const struct emu_port_stats ps = emu_port_stats(&n->ports[p]), *st = &ps;

			qdrops += st->drops_queue;
			otherdrops += st->drops_loss + st->drops_down + st->drops_mtu;
			if (st->in_peak_bytes > peak_in)
				peak_in = st->in_peak_bytes;
		}
	}
	drops = qdrops + otherdrops;
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
