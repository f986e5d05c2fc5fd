// SPDX-License-Identifier: MIT
/*
 * DOC: serialization and latency are exact. H0 - S0 - H1 with rate R and
 * latency D: a frame of B >= 60 bytes sent at 0 reaches S0 at (B+24)*8/R + D
 * (a shorter one is padded to 60 on the wire: (60+24)*8/R); a
 * burst of k frames arrives back to back, ft apart; through the forwarding
 * switch the first reaches H1 at 2*ft + 2*D (store and forward). A run cut
 * (cfg.end) while a frame is on the wire ends at the cut, and the link was
 * busy exactly until then: utilization is at most 1 (the whole frame was
 * counted, so a link busy to the end showed more than 1).
 */
#include "helpers.h"
#include "libhost/wire.h"

#define MAXF 64

struct rec {
	emu_time_t t[MAXF];
	unsigned n;
};

struct sender_cfg {
	unsigned k;
	uint32_t bytes;
};

static int snd_init(struct emu_node *n, void *arg)
{
	const struct sender_cfg *c = arg;
	const struct emu_fabric *fab = emu_engine_fabric(n->eng);
	const struct emu_fab_node *me = emu_node_desc(n), *peer = &fab->nodes[fab->hosts[1]];

	if (me->index != 0)
		return 0;
	for (unsigned i = 0; i < c->k; i++) {
		struct emu_frame *f = emu_frame_alloc(n);

		f->len = lh_wire_udp(f->data, peer->mac, me->mac, me->ipv4, peer->ipv4, 1, 1, c->bytes - EMU_UDP_PAYLOAD_OFF);
		if (emu_send(n, 0, f))
			return -1;
	}
	return 0;
}

static void rec_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct rec *r = emu_node_state(n);

	(void)port;
	if (r->n < MAXF)
		r->t[r->n++] = emu_node_now(n);
	emu_frame_free(n, f);
}

static const struct emu_model_ops sender_ops = {
	.name = "sender", .state_size = sizeof(struct rec), .init = snd_init, .rx = rec_rx,
};
static const struct emu_model_ops recorder_ops = {
	.name = "recorder", .state_size = sizeof(struct rec), .rx = rec_rx,
};

static struct emu_fabric *line(uint64_t rate, emu_time_t lat)
{
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t s = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "S0");
	uint32_t h0 = emu_fabric_add_node(fab, EMU_NODE_HOST, "H0");
	uint32_t h1 = emu_fabric_add_node(fab, EMU_NODE_HOST, "H1");
	char err[128];

	emu_fabric_add_link(fab, h0, 0, s, 0, rate, lat);
	emu_fabric_add_link(fab, h1, 0, s, 1, rate, lat);
	if (emu_fabric_finalize(fab, err, sizeof(err))) {
		diag("%s", err);
		exit(1);
	}
	return fab;
}

static void case_one(uint64_t rate, emu_time_t lat, uint32_t bytes, unsigned k, bool through)
{
	struct emu_fabric *fab = line(rate, lat);
	struct emu_engine_cfg cfg = { .workers = 1 };
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct sender_cfg sc = { .k = k, .bytes = bytes };
	emu_time_t ft = (emu_time_t)(bytes + 24) * 8 * EMU_S / rate;

	emu_engine_set_model(eng, 0, through ? &emu_fwd_ops : &recorder_ops, NULL);
	emu_engine_set_model(eng, 1, &sender_ops, &sc);
	emu_engine_set_model(eng, 2, &recorder_ops, NULL);
	emu_engine_run(eng);

	struct rec *r = emu_node_state(emu_engine_node(eng, through ? 2 : 0));
	bool exact = r->n == k;
	emu_time_t first = through ? 2 * ft + 2 * lat : ft + lat;

	for (unsigned i = 0; i < r->n && exact; i++)
		if (r->t[i] != first + i * ft) {
			diag("frame %u arrived at %llu ps, expected %llu", i, (unsigned long long)r->t[i],
			     (unsigned long long)(first + i * ft));
			exact = false;
		}
	ok(exact, "%u x %u B at %llu Gb/s, %llu ns %s: arrivals at %s(B+24)*8/R + %sD + i*ft exactly",
	   k, bytes, (unsigned long long)(rate / 1000000000), (unsigned long long)(lat / EMU_NS),
	   through ? "through a switch" : "one hop", through ? "2*" : "", through ? "2*" : "");
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

/* H0 sends @k frames of @bytes back to back; the run is cut at @cut */
static void case_cut(uint32_t bytes, unsigned k, emu_time_t cut)
{
	struct emu_fabric *fab = line(100000000000ULL, 300 * EMU_NS);
	struct emu_engine_cfg cfg = { .workers = 1, .end = cut };
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct sender_cfg sc = { .k = k, .bytes = bytes };
	emu_time_t ft = emu_tx_time(bytes, 100000000000ULL), busy_all = k * ft;

	emu_engine_set_model(eng, 0, &recorder_ops, NULL);
	emu_engine_set_model(eng, 1, &sender_ops, &sc);
	emu_engine_set_model(eng, 2, &recorder_ops, NULL);
	emu_engine_run(eng);
	const struct emu_run_stats *st = emu_engine_stats(eng);
	emu_time_t busy = emu_engine_node(eng, 1)->ports[0].busy_ps, want = cut < busy_all ? cut : busy_all;

	/* a run that runs dry before the cut ends at its last event */
	ok((st->emulated == cut || (st->emulated < cut && want == busy_all)) && busy == want && busy <= st->emulated,
	   "%u x %u B (%.1f ns each), cut at %.1f ns: emulated %.1f ns, busy %.1f ns (want %.1f: utilization %.4f)", k,
	   bytes, (double)ft / 1e3, (double)cut / 1e3, (double)st->emulated / 1e3, (double)busy / 1e3,
	   (double)want / 1e3, (double)busy / (double)st->emulated);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

int main(void)
{
	plan(13);
	is_u64(emu_tx_time(1000, 100000000000ULL), 1024 * 80, "1000 B at 100 Gb/s = 1024 x 80 ps");
	is_u64(emu_tx_time(33, 100000000000ULL), 84 * 80, "a 33 B frame is padded to 60: 84 x 80 ps at 100 Gb/s");
	is_u64(emu_tx_time(60, 100000000000ULL), 84 * 80, "...as long as a 60 B one");
	is_u64(emu_tx_time(64, 10000000000ULL), 88 * 800, "64 B at 10 Gb/s = 88 x 800 ps");
	case_one(100000000000ULL, 300 * EMU_NS, 1000, 1, false);
	case_one(25000000000ULL, 1 * EMU_US, 1500, 1, false);
	case_one(100000000000ULL, 300 * EMU_NS, 1057, 16, false);
	case_one(40000000000ULL, 500 * EMU_NS, 64, 32, false);
	case_one(100000000000ULL, 300 * EMU_NS, 1000, 1, true);
	case_one(100000000000ULL, 300 * EMU_NS, 512, 20, true);
	/* 1000 B frames take 81.92 ns at 100 Gb/s */
	case_cut(1000, 4, 200 * EMU_NS);	/* in the third frame */
	case_cut(1000, 1, 40 * EMU_NS);		/* in the first */
	case_cut(1000, 2, 1 * EMU_US);		/* it runs dry first: nothing to take off */
	return done_testing();
}
