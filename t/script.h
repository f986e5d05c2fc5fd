/* SPDX-License-Identifier: MIT */
/*
 * DOC: script.h - a scripted host for switch tests: it sends prepared
 * Canary frames at given times and records every frame it receives.
 */
#ifndef T_SCRIPT_H
#define T_SCRIPT_H

#include <string.h>

#include "emu/switch/canary_sw.h"
#include "emu/engine/engine.h"
#include "libhost/wire.h"
#include "helpers.h"

#define SCRIPT_MAX 64

struct script_frame {
	emu_time_t at;
	struct emu_canary_hdr h;
	unsigned nelem;
	int32_t data[8];
	int raw_len;		/* > 0: send only this many bytes (malformed tests) */
};

struct script {
	struct script_frame tx[SCRIPT_MAX];
	unsigned ntx;
};

struct got {
	emu_time_t t;
	struct emu_canary_hdr h;
	unsigned nelem;
	int32_t d0, d1;
};

struct script_state {
	const struct script *sc;
	struct got rx[SCRIPT_MAX];
	unsigned nrx;
};

static int sc_init(struct emu_node *n, void *arg)
{
	struct script_state *s = emu_node_state(n);

	s->sc = arg;
	if (s->sc)
		for (unsigned i = 0; i < s->sc->ntx; i++)
			emu_timer_at(n, s->sc->tx[i].at, i);
	return 0;
}

static void sc_timer(struct emu_node *n, uint64_t i)
{
	struct script_state *s = emu_node_state(n);
	const struct script_frame *sf = &s->sc->tx[i];
	struct emu_frame *f = emu_frame_alloc(n);
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 9 };

	f->len = lh_wire_canary_build(f->data, mac, emu_node_desc(n)->mac, &sf->h, sf->data, sf->nelem);
	if (sf->raw_len > 0)
		f->len = (uint32_t)sf->raw_len;
	emu_send(n, 0, f);
}

static void sc_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct script_state *s = emu_node_state(n);

	(void)port;
	if (s->nrx < SCRIPT_MAX) {
		struct got *g = &s->rx[s->nrx++];

		g->t = emu_node_now(n);
		if (lh_wire_canary_parse(f->data, f->len, &g->h, &g->nelem) == LH_WIRE_OK && g->nelem >= 2) {
			g->d0 = lh_wire_elem(f->data, 0);
			g->d1 = lh_wire_elem(f->data, 1);
		}
	}
	emu_frame_free(n, f);
}

static const struct emu_model_ops script_ops = {
	.name = "script", .state_size = sizeof(struct script_state), .init = sc_init, .rx = sc_rx, .timer = sc_timer,
};

/* one switch S0 with @k hosts H0..H(k-1) on ports 0..k-1 */
static inline struct emu_fabric *star(unsigned k)
{
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t s = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "S0");
	char name[16], err[128];

	for (unsigned i = 0; i < k; i++) {
		snprintf(name, sizeof(name), "H%u", i);
		emu_fabric_add_link(fab, emu_fabric_add_node(fab, EMU_NODE_HOST, name), 0, s, (int)i,
				    EMU_DEFAULT_RATE_BPS, EMU_DEFAULT_LATENCY);
	}
	if (emu_fabric_finalize(fab, err, sizeof(err))) {
		diag("%s", err);
		exit(1);
	}
	return fab;
}

static inline struct script_frame reduce_frame(emu_time_t at, uint32_t leader_ip, uint32_t id, uint16_t counter,
					       uint16_t hosts, int32_t a, int32_t b)
{
	struct script_frame f = {
		.at = at,
		.h = { .dst = leader_ip, .id = id, .counter = counter, .hosts = hosts, .flags = EMU_CANARY_OP_REDUCE },
		.nelem = 2,
	};

	f.data[0] = a;
	f.data[1] = b;
	return f;
}

#endif /* T_SCRIPT_H */
