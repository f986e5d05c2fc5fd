// SPDX-License-Identifier: MIT
/*
 * DOC: the frame's route cache (frame.h's rdst/rhash): a forwarding switch
 * keeps what it parsed out of a frame's header for the next switches, and
 * the cache never outlives the bytes it was read from.
 *
 * A model that rewrites a frame's destination and sends it on: hosts under
 * leaf L0 send to H4; leaf L1 runs a model that gets each frame on rx,
 * rewrites its IPv4 destination to H5's and forwards it (emu_fwd_forward).
 * L0 and the spines filled the cache for H4: every frame must reach H5 and
 * none H4 (fails if the engine hands a frame to rx with its cache intact).
 *
 * Frames reused from the pool: uniform traffic between all hosts on one
 * worker, where each sender's frames are buffers a receiver freed a moment
 * ago (cached by the switches on the way there): every frame reaches the
 * host it was addressed to (fails if a fresh frame keeps the old cache).
 *
 * Frames of libhost's background hosts (the emulated NIC, host_model.c)
 * leave with their route cached (lh_host_frame_route): switches that check
 * every arriving frame's cache against a parse of its bytes must find
 * each one cached, the first switch's too, and equal to the parse, for
 * full frames and a message's shorter last one (fails if a host's frame
 * leaves uncached, or with another host index or flow hash than a switch
 * would parse).
 */
#include "helpers.h"

#include "emu/host/host_model.h"
#include "libhost/wire.h"

struct redirect {
	struct emu_fwd_state fwd;
	uint32_t from, to;	/* IPv4 destinations */
	uint64_t rewritten;
};

static void redirect_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct redirect *r = emu_node_state(n);
	uint32_t sip, dip;

	(void)port;
	if (lh_wire_ipv4(f->data, f->len, &sip, &dip) == LH_WIRE_OK && dip == r->from) {
		emu_put32(f->data + EMU_ETH_HLEN + 16, r->to);
		r->rewritten++;
	}
	emu_fwd_forward(n, f, &r->fwd.st);
}

static int redirect_init(struct emu_node *n, void *arg)
{
	struct redirect *r = emu_node_state(n);
	const uint32_t *ip = arg;

	r->from = ip[0];
	r->to = ip[1];
	return 0;
}

static const struct emu_model_ops redirect_ops = {
	.name = "redirect", .state_size = sizeof(struct redirect), .init = redirect_init, .rx = redirect_rx,
};

static void rewrite(unsigned workers)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=2,spines=2,hosts=4");
	struct emu_engine_cfg cfg = { .workers = workers, .seed = 5 };
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct emu_trafgen_cfg tg[8];
	uint32_t l1 = emu_fabric_find(fab, "L1");

	for (uint32_t h = 0; h < 8; h++) {
		/* H0..H3 -> H4 at 30 % of line rate; the others only receive */
		tg[h] = (struct emu_trafgen_cfg){ .frame_bytes = 512, .load = 0.3, .until = 40 * EMU_US,
						  .dst_host = h < 4 ? 4 : h };
	}
	for (uint32_t i = 0; i < fab->nnodes; i++) {
		const struct emu_fab_node *n = &fab->nodes[i];

		emu_engine_set_model(eng, i, n->kind == EMU_NODE_SWITCH ? &emu_fwd_ops : &emu_trafgen_ops,
				     n->kind == EMU_NODE_SWITCH ? NULL : &tg[n->index]);
	}
	uint32_t ip[2] = { fab->nodes[fab->hosts[4]].ipv4, fab->nodes[fab->hosts[5]].ipv4 };

	emu_engine_set_model(eng, l1, &redirect_ops, ip);
	emu_engine_run(eng);

	struct redirect *r = emu_node_state(emu_engine_node(eng, l1));

	uint64_t sent = 0;

	for (uint32_t h = 0; h < 4; h++)
		sent += t_host_state(eng, fab, h)->sent;
	struct emu_trafgen_state *h4 = t_host_state(eng, fab, 4), *h5 = t_host_state(eng, fab, 5);

	ok(sent > 0 && r->rewritten == sent, "%u workers: L1 rewrote every frame's destination (%llu of %llu)", workers,
	   (unsigned long long)r->rewritten, (unsigned long long)sent);
	is_u64(h5->recv, sent, "%u workers: all of them reached the new destination H5", workers);
	ok(h4->recv == 0 && h4->bad == 0, "%u workers: none reached the old one, H4 (%llu, %llu not for it)", workers,
	   (unsigned long long)h4->recv, (unsigned long long)h4->bad);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

static void reuse(void)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=2,spines=2,hosts=4");
	struct emu_engine_cfg cfg = { .workers = 1, .seed = 9 };
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct emu_trafgen_cfg tg = { .frame_bytes = 256, .load = 0.5, .until = 40 * EMU_US, .dst_host = EMU_NONE32 };
	uint64_t sent = 0, recv = 0, bad = 0;

	t_plug(eng, fab, &tg);
	emu_engine_run(eng);
	for (uint32_t h = 0; h < fab->nhosts; h++) {
		struct emu_trafgen_state *s = t_host_state(eng, fab, h);

		sent += s->sent;
		recv += s->recv;
		bad += s->bad;
	}
	ok(sent > 1000, "uniform traffic: %llu frames sent", (unsigned long long)sent);
	is_u64(bad, 0, "no frame reached a host it was not addressed to");
	is_u64(recv, sent, "every frame reached its host");
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

/* a forwarding switch that compares each frame's route cache with a parse of its bytes */
struct checker {
	struct emu_fwd_state fwd;
	uint64_t cached, uncached, wrong;
};

static int checker_route(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct checker *c = emu_node_state(n);
	uint32_t dip;
	uint64_t hash;

	(void)port;
	if (f->rdst == EMU_RDST_NONE) {
		c->uncached++;
	} else {
		c->cached++;
		if (lh_wire_dst(f->data, f->len, &dip, &hash) != LH_WIRE_OK ||
		    emu_fabric_host_by_ip(emu_engine_fabric(n->eng), dip) != f->rdst || emu_hash64(hash) != f->rhash)
			c->wrong++;
	}
	return emu_fwd_route(n, f, &c->fwd.st);
}

static const struct emu_model_ops checker_ops = {
	.name = "checker", .state_size = sizeof(struct checker), .route = checker_route,
};

static void background(unsigned workers)
{
	struct emu_fabric *fab = t_fabric("fattree2:leaves=2,spines=2,hosts=4");
	struct emu_engine_cfg cfg = { .workers = workers, .seed = 3 };
	struct emu_engine *eng = t_engine(fab, &cfg);
	struct lh_peer peers[8];
	struct emu_host_cfg hc[8];
	uint64_t cached = 0, uncached = 0, wrong = 0, sent = 0, recv = 0, msgs = 0;

	for (uint32_t h = 0; h < 8; h++) {
		const struct emu_fab_node *d = &fab->nodes[fab->hosts[h]];

		peers[h].ipv4 = d->ipv4;
		memcpy(peers[h].mac, d->mac, 6);
	}
	for (uint32_t h = 0; h < 8; h++)
		/* 5000-byte messages: three full frames and a shorter last one each */
		hc[h] = (struct emu_host_cfg){ .role = EMU_HOST_BACKGROUND, .bg_peers = peers, .nbg = 8, .bg_me = h,
					       .bg_pattern = LH_BG_UNIFORM, .bg_seed = 11, .bg_msg = 5000,
					       .bg_load = 0.5, .bg_until = 30 * EMU_US };
	for (uint32_t i = 0; i < fab->nnodes; i++) {
		const struct emu_fab_node *d = &fab->nodes[i];

		emu_engine_set_model(eng, i, d->kind == EMU_NODE_SWITCH ? &checker_ops : &emu_host_ops,
				     d->kind == EMU_NODE_SWITCH ? NULL : &hc[d->index]);
	}
	emu_engine_run(eng);
	for (uint32_t i = 0; i < fab->nnodes; i++) {
		if (fab->nodes[i].kind == EMU_NODE_SWITCH) {
			const struct checker *c = emu_node_state(emu_engine_node(eng, i));

			cached += c->cached;
			uncached += c->uncached;
			wrong += c->wrong;
		} else {
			const struct emu_host_state *s = emu_node_state(emu_engine_node(eng, i));
			const struct lh_bg_stats *st = lh_host_bg_stats(s->lh);

			sent += st->frames_sent;
			recv += st->frames_recv;
			msgs += st->messages;
		}
	}
	ok(msgs > 50 && sent > 4 * 50 && recv > 0, "%u workers: background hosts sent %llu messages, %llu frames",
	   workers, (unsigned long long)msgs, (unsigned long long)sent);
	ok(cached > sent && uncached == 0, "%u workers: every frame reached each switch with its route cached "
	   "(%llu cached, %llu not)", workers, (unsigned long long)cached, (unsigned long long)uncached);
	is_u64(wrong, 0, "%u workers: every cached route is what the frame's bytes say", workers);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

int main(void)
{
	plan(3 * 2 + 3 + 3 * 2);
	rewrite(1);
	rewrite(2);
	reuse();
	background(1);
	background(2);
	return done_testing();
}
