// SPDX-License-Identifier: MIT
/*
 * DOC: fuzz-switch.c - the switch receive path (emu/switch/canary_sw.c and
 * fwd.c) on arbitrary frames, through the engine as in a run.
 *
 * The input is a small program. Its first bytes choose the switch
 * configuration: one switch with 2..5 hosts or two linked switches with
 * hosts on each, a descriptor table of 1, 4 or 64 entries, the exact or
 * the pktgen timer, one or three pipeline passes (recirculation queue),
 * per-tenant partitioning, static trees, the adaptive timeout (its
 * broadcasts add the learned timeouts to their switch field), a switch
 * failure at some time.
 * Then up to 48 frames, each: the sending host, a send time, a "shape"
 * byte (force the Canary EtherType, address a real host as the leader,
 * keep counter <= hosts: so that the fuzzer reaches the aggregation logic
 * instead of bouncing off the parser) and the frame's bytes.
 *
 * Every host sends its frames at their times and frees what it receives.
 * Properties: the run ends (time-limited at 50 ms of emulated time); no
 * frame is leaked or freed twice (the engine's pools are checked by ASan
 * and LeakSanitizer at destroy); every Canary frame a host receives
 * parses (the switches drop malformed ones); the table counters stay
 * consistent; a switch that failed and did not come back holds no
 * descriptor.
 */
#include <errno.h>

#include "emu/switch/canary_sw.h"
#include "emu/engine/engine.h"
#include "libhost/wire.h"
#include "t/fuzz/fuzz.h"

#define MAXF 48

struct sframe {
	emu_time_t at;
	uint32_t len;
	const uint8_t *bytes;
	uint8_t shape;
};

struct feed {
	struct sframe f[MAXF];
	unsigned nf;
	const struct emu_fabric *fab;
	uint64_t rx;
};

struct hstate {
	struct feed *feed;
	unsigned me;
};

static int h_init(struct emu_node *n, void *arg)
{
	struct hstate *s = emu_node_state(n);

	s->feed = arg;
	s->me = emu_node_desc(n)->index;
	/* this host's frames: those with sender == me (cookie = frame index) */
	for (unsigned i = 0; i < s->feed->nf; i++)
		if ((s->feed->f[i].shape >> 5) % s->feed->fab->nhosts == s->me)
			emu_timer_at(n, s->feed->f[i].at, i);
	return 0;
}

static void h_timer(struct emu_node *n, uint64_t i)
{
	struct hstate *s = emu_node_state(n);
	const struct sframe *sf = &s->feed->f[i];
	const struct emu_fabric *fab = s->feed->fab;
	struct emu_frame *f = emu_frame_alloc(n);

	memcpy(f->data, sf->bytes, sf->len);
	f->len = sf->len;
	if (sf->shape & 1 && f->len >= EMU_ETH_HLEN)
		emu_put16(f->data + 12, EMU_ETHERTYPE_CANARY);
	if (sf->shape & 2 && f->len >= EMU_CANARY_DATA_OFF) {
		/* the leader: a real host */
		uint32_t h = f->data[EMU_CANARY_OFF + 3] % fab->nhosts;

		emu_put32(f->data + EMU_CANARY_OFF, fab->nodes[fab->hosts[h]].ipv4);
	}
	if (sf->shape & 4 && f->len >= EMU_CANARY_DATA_OFF) {
		/* a small, consistent counter/hosts pair */
		uint16_t hosts = (uint16_t)(1 + f->data[EMU_CANARY_OFF + 11] % 8);

		emu_put16(f->data + EMU_CANARY_OFF + 10, hosts);
		emu_put16(f->data + EMU_CANARY_OFF + 8, (uint16_t)(f->data[EMU_CANARY_OFF + 9] % (hosts + 1)));
	}
	if (sf->shape & 8 && f->len >= EMU_CANARY_DATA_OFF) {
		/* whole elements: trim the tail */
		f->len = EMU_CANARY_DATA_OFF + (f->len - EMU_CANARY_DATA_OFF) / 4 * 4;
	}
	if (sf->shape & 16 && f->len >= EMU_CANARY_DATA_OFF) {
		/* a switch address or tree id that exists */
		emu_put16(f->data + EMU_CANARY_OFF + 16, (uint16_t)(f->data[EMU_CANARY_OFF + 17] % 3));
	}
	emu_send(n, 0, f);
}

static void h_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct hstate *s = emu_node_state(n);

	(void)port;
	s->feed->rx++;
	/* the switches drop malformed Canary frames: what arrives parses */
	if (lh_wire_ethertype(f->data, f->len) == EMU_ETHERTYPE_CANARY) {
		struct emu_canary_hdr h;
		unsigned nelem;

		FUZZ_CHECK(lh_wire_canary_parse(f->data, f->len, &h, &nelem) == LH_WIRE_OK);
		FUZZ_CHECK(h.counter <= h.hosts);
	}
	emu_frame_free(n, f);
}

static const struct emu_model_ops host_ops = {
	.name = "fuzz-host", .state_size = sizeof(struct hstate), .init = h_init, .rx = h_rx, .timer = h_timer,
};

/* one switch with @k hosts, or (@two) S0 with @k hosts and S1 with 2 */
static struct emu_fabric *fabric(unsigned k, bool two)
{
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t s0 = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "S0"), s1 = 0;
	char name[16], err[128];

	if (two)
		s1 = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "S1");
	for (unsigned i = 0; i < k + (two ? 2 : 0); i++) {
		snprintf(name, sizeof(name), "H%u", i);
		emu_fabric_add_link(fab, emu_fabric_add_node(fab, EMU_NODE_HOST, name), 0, i < k ? s0 : s1, -1,
				    EMU_DEFAULT_RATE_BPS, EMU_DEFAULT_LATENCY);
	}
	if (two)
		emu_fabric_add_link(fab, s0, -1, s1, -1, EMU_DEFAULT_RATE_BPS, EMU_DEFAULT_LATENCY);
	if (emu_fabric_finalize(fab, err, sizeof(err))) {
		fprintf(stderr, "fuzz-switch: %s\n", err);
		abort();
	}
	return fab;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t tables[4] = { 1, 4, 64, 7 };
	struct fuzz_in in = { data, size };

	/*
	 * hwloc would load its plugins and read the machine's topology from
	 * /sys for every engine (most of an input's cost); a synthetic
	 * topology without plugins is instant, and this target neither pins
	 * nor sizes anything by the machine.
	 */
	setenv("HWLOC_PLUGINS_PATH", "/nonexistent", 1);
	setenv("HWLOC_SYNTHETIC", "pack:1 pu:2", 1);
	uint8_t c0 = fz_u8(&in), c1 = fz_u8(&in);
	unsigned k = 2 + c0 % 4;
	bool two = c0 & 4;
	struct emu_sw_cfg cfg = {
		.descriptors = tables[(c0 >> 3) & 3],
		.timeout = (1 + (c1 & 7)) * EMU_US,
		.timer = c0 & 0x20 ? EMU_SW_TIMER_PKTGEN : EMU_SW_TIMER_EXACT,
		.pktgen_tick = 50 * EMU_NS,
		.passes = c0 & 0x40 ? 3 : 1,
		.pipe_gpps = 1.0,
		.ports_per_pipe = 2,
		.partition = (c1 >> 3) & 3,
		/* without static trees, c1's tree bit turns the adaptive timeout on */
		.adaptive = !(c0 & 0x80) && (c1 & 0x20),
		.ato_floor = EMU_ATO_FLOOR,
		.ato_ceil = c1 & 4 ? 100 * EMU_US : EMU_ATO_CEIL,	/* past the hint's 16 bits, or not */
		.ato_up = EMU_ATO_UP,
		.ato_down = EMU_ATO_DOWN,
	};
	/* static trees: tree t has the switches' ports (all children: hosts and the other switch) */
	struct emu_sw_tree_node tn[2 * 2];
	uint32_t roots[2];
	struct emu_sw_trees trees = { .ntrees = 1 + ((c1 >> 5) & 1), .nswitches = two ? 2 : 1, .node = tn, .root = roots };
	struct feed feed = { .nf = 0 };

	while (in.n && feed.nf < MAXF) {
		struct sframe *sf = &feed.f[feed.nf++];
		size_t len;

		sf->shape = fz_u8(&in);
		sf->at = (emu_time_t)fz_u16(&in) * 100 * EMU_NS;
		sf->bytes = fz_chunk(&in, EMU_FRAME_MAX, &len);
		sf->len = (uint32_t)len;
	}
	struct emu_fabric *fab = fabric(k, two);

	feed.fab = fab;
	if (c0 & 0x80) {
		for (unsigned t = 0; t < trees.ntrees; t++) {
			for (unsigned s = 0; s < trees.nswitches; s++) {
				const struct emu_fab_node *sw = &fab->nodes[fab->switches[s]];
				struct emu_sw_tree_node *x = &tn[t * trees.nswitches + s];
				uint16_t up = EMU_PORT_NONE;

				/* tree 0 rooted at S0, tree 1 at S1 (or S0 alone) */
				if (two && ((t == 0 && s == 1) || (t == 1 && s == 0)))
					up = (uint16_t)(sw->nports - 1);
				x->parent = up;
				x->children = 0;
				x->nchildren = 0;
				for (unsigned p = 0; p < sw->nports; p++)
					if (p != up) {
						x->children |= 1ULL << p;
						x->nchildren++;
					}
			}
			roots[t] = fab->switches[two ? t % 2 : 0];
		}
		cfg.trees = &trees;
	}
	struct emu_engine_cfg ec = { .workers = 1, .no_pin = true, .seed = 1, .end = 50 * EMU_MS };
	char err[256];
	struct emu_engine *eng = emu_engine_create(fab, &ec, err, sizeof(err));

	if (!eng) {
		fprintf(stderr, "fuzz-switch: %s\n", err);
		abort();
	}
	for (uint32_t i = 0; i < fab->nnodes; i++)
		emu_engine_set_model(eng, i, fab->nodes[i].kind == EMU_NODE_SWITCH ? &emu_sw_ops : &host_ops,
				     fab->nodes[i].kind == EMU_NODE_SWITCH ? (void *)&cfg : (void *)&feed);
	if (c1 & 0x40) {
		emu_time_t t = (emu_time_t)(c1 & 7) * 200 * EMU_NS;

		emu_engine_schedule_node(eng, fab->switches[0], t, false);
		if (c1 & 0x80)
			emu_engine_schedule_node(eng, fab->switches[0], t + 3 * EMU_US, true);
	}
	/* a table split among more tenants than it has slots: the switch refuses to start */
	int rc = emu_engine_run(eng);

	FUZZ_CHECK(cfg.partition > cfg.descriptors ? rc == -EINVAL : rc == 0);
	/* (the nodes after one that failed to start have no state) */
	for (uint32_t s = 0; rc == 0 && s < fab->nswitches; s++) {
		const struct emu_sw_stats *st = emu_sw_stats_of(emu_engine_node(eng, fab->switches[s]));

		FUZZ_CHECK(st->allocated >= st->freed && st->live <= cfg.descriptors);
		FUZZ_CHECK(st->aggregated <= st->reduce_rx);
		if (s == 0 && (c1 & 0xc0) == 0x40)
			FUZZ_CHECK(st->live == 0);
	}
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
	return 0;
}
