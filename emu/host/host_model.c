// SPDX-License-Identifier: MIT
/*
 * DOC: host_model.c - libhost on an engine node. See host_model.h.
 */
#include "emu/host/host_model.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "emu/engine/util.h"

#define T_START (0xfeULL << 56)
#define T_RESUME (0xfdULL << 56)
#define T_HOLD (0xfcULL << 56)

/* ---------- armed timers of a host that may be down for a while (cfg->resume) ---------- */

/*
 * arm - emu_timer_at() that, for a host that may come back, also records
 * the timer. The engine fires a node's timers in (t, arming order), the
 * heap's order, so a timer that fires is always the heap's minimum. Only
 * for a host with a configuration (s->cfg), as every one that runs
 * libhost has.
 */
static inline __attribute__((always_inline)) void arm(struct emu_host_state *s, uint64_t at, uint64_t cookie)
{
	if (emu_unlikely(s->cfg->resume)) {
		uint64_t now = emu_node_now(s->node);

		lh_theap_push(&s->tmr, at < now ? now : at, cookie);
	}
	emu_timer_at(s->node, at, cookie);
}

static uint8_t *t_frame_get(void *ctx, void **handle)
{
	struct emu_host_state *s = ctx;
	/* a buffer of the size libhost will fill: no move to a smaller one at emu_send() */
	struct emu_frame *f = emu_frame_alloc_len(s->node, lh_host_frame_len(s->lh));

	*handle = f;
	return f->data;
}

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	struct emu_host_state *s = ctx;
	struct emu_frame *f = handle;
	uint32_t data = lh_frame_data_len(f->data, len);
	uint64_t rhash;
	uint32_t dip = lh_host_frame_route(s->lh, &rhash);

	/*
	 * a frame whose destination libhost knows carries its route, so the
	 * first switch does not parse it (libhost mixes the flow hash with
	 * lh_hash64(), the route cache's emu_hash64(): t/0029 checks each)
	 */
	if (dip)
		emu_frame_route_set(f, emu_fabric_host_by_ip(emu_engine_fabric(s->node->eng), dip), rhash);

	f->len = len;
	if (data < len)
		f->kept = data;	/* stored in a small buffer whatever its length */
	assert(emu_frame_bytes(f) <= emu_fclass_cap[f->cls]);	/* lh_host_frame_len() held */
	emu_send(s->node, 0, f);
}

static lh_time_t t_now(void *ctx)
{
	return emu_node_now(((struct emu_host_state *)ctx)->node);
}

static void t_timer(void *ctx, lh_time_t at, uint64_t cookie)
{
	struct emu_host_state *s = ctx;
	uint64_t now = emu_node_now(s->node);

	/* an allreduce host's timers are its protocol's timeouts: the watchdog waits for them */
	if (s->cfg->role == EMU_HOST_ALLREDUCE && at > now)
		emu_node_waits(s->node, at - now);
	arm(s, at, cookie);
}

/*
 * A NIC whose link is down takes no frames: it is busy until the link comes
 * back (host_link() kicks libhost then). Reporting it idle while emu_send()
 * drops at zero cost let an endless source (background traffic) send forever
 * at one emulated instant.
 */
static bool t_tx_busy(void *ctx)
{
	const struct emu_host_state *s = ctx;
	const struct emu_node *n = s->node;

	return emu_port_busy(n, 0) || !emu_port_up(n, 0) || (s->cfg->hold && emu_node_now(n) < s->cfg->hold);
}

static uint64_t t_random(void *ctx)
{
	return emu_rng_next(emu_node_rng(((struct emu_host_state *)ctx)->node));
}

static void t_done(void *ctx, struct lh_req *req)
{
	struct emu_host_state *s = ctx;

	(void)req;
	if (!s->finished) {
		s->finished = true;
		emu_node_done(s->node);
	}
}

static const struct lh_transport_ops emu_nic_ops = {
	.frame_get = t_frame_get,
	.frame_send = t_frame_send,
	.now = t_now,
	.timer = t_timer,
	.tx_busy = t_tx_busy,
	.random = t_random,
	.done = t_done,
};

static void in_fn(void *arg, size_t off, int32_t *out, size_t n)
{
	struct emu_host_state *s = arg;

	s->cfg->input(s->cfg, off, out, n);
}

static void block_fn(void *arg, size_t off, const int32_t *d, size_t n)
{
	struct emu_host_state *s = arg;

	s->delivered += n;
	emu_node_progress(s->node);
	s->cfg->check(s->cfg, s, off, d, n);
}

static void in_wire_fn(void *arg, size_t off, uint8_t *p, size_t n)
{
	struct emu_host_state *s = arg;

	s->cfg->input_wire(s->cfg, off, p, n);
}

static void block_wire_fn(void *arg, size_t off, const uint8_t *p, size_t n)
{
	struct emu_host_state *s = arg;

	s->delivered += n;
	emu_node_progress(s->node);
	s->cfg->check_wire(s->cfg, s, off, p, n);
}

static int start_allreduce(struct emu_host_state *s)
{
	const struct emu_host_cfg *c = s->cfg;
	struct lh_ar_cfg ar = *c->ar;

	ar.input = NULL;
	ar.input_block = in_fn;
	ar.input_arg = s;
	ar.on_block = block_fn;
	ar.block_arg = s;
	ar.input_wire = c->input_wire ? in_wire_fn : NULL;
	ar.on_block_wire = c->check_wire ? block_wire_fn : NULL;
	s->req = lh_allreduce(s->comm, &ar, NULL, NULL, c->count);
	return s->req ? 0 : -EINVAL;
}

static int host_init(struct emu_node *n, void *arg)
{
	struct emu_host_state *s = emu_node_state(n);
	const struct emu_host_cfg *c = arg;
	const struct emu_fab_node *me = emu_node_desc(n);
	struct lh_peer self = { .ipv4 = me->ipv4 };
	struct lh_transport t = {
		.ops = &emu_nic_ops, .ctx = s, .rate_bps = n->ports[0].rate_bps, .mtu = n->ports[0].mtu_frame - 14,
	};

	for (int i = 0; i < 6; i++)
		self.mac[i] = me->mac[i];
	s->cfg = c;
	s->node = n;
	if (!c || c->role == EMU_HOST_IDLE)
		return 0;
	s->lh = lh_host_create(&t, &self);
	if (!s->lh)
		return -EINVAL;
	lh_host_share_peers(s->lh);	/* the scenario's tables outlive the run */
	if (lh_host_set_run(s->lh, c->run))
		return -EINVAL;
	if (c->hold)
		arm(s, c->hold, T_HOLD);	/* then the NIC is free: send what waits */
	if (c->role == EMU_HOST_BACKGROUND && c->bg_load > 0 && c->bg_load < 1 &&
	    lh_host_background_load(s->lh, c->bg_load))
		return -EINVAL;
	if (c->role == EMU_HOST_BACKGROUND && c->bg_volume && lh_host_background_volume(s->lh, c->bg_volume))
		return -EINVAL;
	if (c->role == EMU_HOST_BACKGROUND)
		emu_node_open_loop(n);	/* libhost's background: receiving only counts (lh_host_rx()) */
	if (c->role == EMU_HOST_BACKGROUND)
		return lh_host_background(s->lh, c->bg_peers, c->nbg, c->bg_me, c->bg_pattern, c->bg_seed, c->bg_msg,
					  c->bg_until);
	s->comm = lh_comm_create(s->lh, c->peers, c->npeers, c->rank, c->tenant);
	if (!s->comm)
		return -EINVAL;
	if (c->start) {
		arm(s, c->start, T_START);
		return 0;
	}
	return start_allreduce(s);
}

static void host_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct emu_host_state *s = emu_node_state(n);

	(void)port;
	if (s->lh)
		lh_host_rx(s->lh, f->data, f->len);
	emu_frame_free(n, f);
}

static void dispatch(struct emu_host_state *s, uint64_t cookie)
{
	if (cookie == T_START)
		start_allreduce(s);
	else if (cookie == T_HOLD)
		lh_host_tx_ready(s->lh);
	else
		lh_host_timer(s->lh, cookie);
}

/*
 * fire_late - a recorded timer due before now (@incl_now: by now) that is
 * still recorded was dropped while the host was down: fire it now, in
 * order. Called before any timer of a host that came back fires, and by
 * T_RESUME (armed when the host came up: it fires after every timer
 * armed before with the same time, so all due by now were dropped).
 */
static void fire_late(struct emu_host_state *s, bool incl_now)
{
	uint64_t now = emu_node_now(s->node);
	size_t n = 0;
	uint64_t *late = NULL;

	while (s->tmr.n && (s->tmr.v[0].at < now || (incl_now && s->tmr.v[0].at == now))) {
		late = emu_xrealloc(late, (n + 1) * sizeof(*late));
		late[n++] = lh_theap_pop(&s->tmr).cookie;
	}
	s->resumed += n;
	for (size_t i = 0; i < n; i++)
		dispatch(s, late[i]);
	free(late);
}

static void host_timer(struct emu_node *n, uint64_t cookie)
{
	struct emu_host_state *s = emu_node_state(n);

	if (!s->lh)
		return;
	if (cookie == T_RESUME) {
		fire_late(s, true);
		return;
	}
	if (s->cfg->resume) {
		fire_late(s, false);
		if (s->tmr.n)
			lh_theap_pop(&s->tmr);	/* this timer: the earliest left */
	}
	dispatch(s, cookie);
}

/*
 * host_timer_idle - a timer libhost calls idle (a retransmission timer of a
 * completed block): nothing happens when it fires, for a host that starts
 * one allreduce and whose timers are not recorded for a return (resume).
 */
static bool host_timer_idle(struct emu_node *n, uint64_t cookie)
{
	const struct emu_host_state *s = emu_node_state(n);

	/* T_START, T_RESUME and T_HOLD are no libhost timer kind: never idle */
	return s->lh && !s->cfg->resume && lh_host_timer_idle(s->lh, cookie);
}

static void host_state(struct emu_node *n, bool up)
{
	struct emu_host_state *s = emu_node_state(n);

	if (up && s->lh && s->cfg->resume)
		emu_timer_at(n, emu_node_now(n), T_RESUME);
}

static void host_txdone(struct emu_node *n, unsigned port)
{
	struct emu_host_state *s = emu_node_state(n);

	(void)port;
	if (s->lh)
		lh_host_tx_ready(s->lh);
}

static void host_link(struct emu_node *n, unsigned port, bool up)
{
	struct emu_host_state *s = emu_node_state(n);

	(void)port;
	if (up && s->lh)
		lh_host_tx_ready(s->lh);
}

static void host_fini(struct emu_node *n)
{
	struct emu_host_state *s = emu_node_state(n);

	lh_host_destroy(s->lh);
	lh_theap_free(&s->tmr);
	s->lh = NULL;
	s->comm = NULL;
	s->req = NULL;
}

const struct emu_model_ops emu_host_ops = {
	.name = "host",
	.state_size = sizeof(struct emu_host_state),
	.init = host_init,
	.rx = host_rx,
	.timer = host_timer,
	.timer_idle = host_timer_idle,
	.txdone = host_txdone,
	.link = host_link,
	.state = host_state,
	.fini = host_fini,
};
