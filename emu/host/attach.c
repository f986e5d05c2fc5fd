// SPDX-License-Identifier: MIT
/*
 * DOC: attach.c - a real process as a host of the fabric. See attach.h.
 */
#include "emu/host/attach.h"

#include <string.h>
#include <time.h>

#include "emu/engine/node.h"
#include "libhost/canary_host.h"
#include "libhost/wire.h"

#define T_POLL 1	/* the poll timer (watched: the quiet check only) */
#define T_WAKE 2	/* the engine saw a frame in the ring */
#define WATCHED_TICK (10 * EMU_MS)	/* the poll timer's period when watched */
#define STAMP_SANE (10ULL * 1000000000)	/* kernel stamps older than this (ns) are not believed */
/*
 * A host is warned of (too_fast) when its frames got ahead of a link of its
 * port's rate by more than AHEAD_FRAMES full frames and AHEAD_MIN_NS. A
 * host paced at that rate (canary-allreduce never catches up on a late
 * send) stays within a frame of it, but the stamps are the kernel's at
 * delivery: on a loaded machine it delivers a stretch of the host's frames
 * in one batch, so they look ahead by as long as it held them, whatever
 * the rate. Beside 4 busy loops on 2 cores (load 20-28), t/0110's host
 * paced at 100 Mb/s and at 10 Mb/s looked up to 0.59 ms ahead:
 * AHEAD_MIN_NS is that with a margin of about 2. A host faster than its
 * link gets ahead by what it sends before the link could carry it, its
 * outstanding frames, fewer where a loaded machine slows its own sends
 * (t/0110's at 10 Gb/s: 11-26 full frames into 100 Mb/s, 12-75 into
 * 10 Mb/s, 95-127 into 2 Mb/s); AHEAD_FRAMES is a few of them. Below some
 * 48 Mb/s (4 full frames of 1514 bytes in 1 ms) the frames set the bar.
 */
#define AHEAD_FRAMES 4
#define AHEAD_MIN_NS 1000000ULL

/* ns of @clk */
static int64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* is_final_done - the completion barrier's last frame (rank 0 -> everyone: all hosts are done)? */
static bool is_final_done(const uint8_t *p, uint32_t len)
{
	struct emu_canary_hdr h;
	unsigned n;

	return lh_wire_canary_parse(p, len, &h, &n) == LH_WIRE_OK &&
	       (h.flags & EMU_CANARY_OP_MASK) == EMU_CANARY_OP_DONE && h.hosts && h.counter == h.hosts;
}

/*
 * tree_mismatch - a static tree frame @h from the host on another tree
 * than the emulator's static:N puts its block on: block b (the id's
 * sequence bits; a tree's block is only ever sent as attempt 0, any
 * failure falls back to the leader) goes up tree tree_base + b mod N.
 * Records the block and both trees (st.trees_differ).
 */
static void tree_mismatch(struct emu_attach_state *s, const struct emu_canary_hdr *h)
{
	uint32_t b = h->id & LH_BLOCK_IDS, want = s->cfg->tree_base + b % s->cfg->ntrees;

	if ((h->flags & EMU_CANARY_OP_MASK) != EMU_CANARY_OP_TREE_REDUCE || !s->cfg->ntrees || h->swaddr == want)
		return;
	s->st.trees_differ = true;
	s->st.tree_block = b;
	s->st.tree_seen = h->swaddr;
	s->st.tree_want = want;
}

/*
 * frame_algo - the algorithm an allreduce frame from a host belongs to
 * (a Canary reduction, a static tree's, the ring's data), -1 for any
 * other frame (requests, the barrier, background); counts the requests.
 * A static tree frame on another tree than the emulator's static:N
 * would put it sets st.trees_differ (tree_mismatch()).
 */
static int frame_algo(struct emu_attach_state *s, const uint8_t *p, uint32_t len)
{
	struct emu_canary_hdr h;
	unsigned n;

	if (len >= EMU_ETH_HLEN + EMU_IPV4_HLEN && emu_get16(p + 12) == EMU_ETHERTYPE_IPV4)
		return p[EMU_ETH_HLEN + 1] >> 2 == EMU_DSCP_COLLECTIVE ? LH_ALGO_RING : -1;
	if (lh_wire_canary_parse(p, len, &h, &n) != LH_WIRE_OK)
		return -1;
	switch (h.flags & EMU_CANARY_OP_MASK) {
	case EMU_CANARY_OP_REDUCE:
		return LH_ALGO_CANARY;
	case EMU_CANARY_OP_TREE_REDUCE:
	case EMU_CANARY_OP_TREE_BCAST:
		if (s->cfg->algo == LH_ALGO_STATIC && !s->st.trees_differ)
			tree_mismatch(s, &h);
		return LH_ALGO_STATIC;
	case EMU_CANARY_OP_RETX_REQ:
		s->st.in_retx_req++;
		return -1;
	default:
		return -1;
	}
}

/* other_run - is this a Canary or ring frame of another run than @run (wire.h)? */
static bool other_run(const uint8_t *p, uint32_t len, unsigned run)
{
	uint16_t type = lh_wire_ethertype(p, len);

	if (type == EMU_ETHERTYPE_CANARY)
		return len > EMU_CANARY_FLAGS_OFF &&
		       (p[EMU_CANARY_FLAGS_OFF] & EMU_CANARY_RUN_MASK) >> EMU_CANARY_RUN_SHIFT != run;
	return type == EMU_ETHERTYPE_IPV4 && len >= EMU_UDP_PAYLOAD_OFF + EMU_RING_HDR &&
	       lh_wire_udp_dport(p, len) == EMU_RING_PORT && p[EMU_UDP_PAYLOAD_OFF + EMU_RING_RUN_OFF] != run;
}

static void inject(void *arg, const uint8_t *p, uint32_t len)
{
	struct emu_attach_state *s = arg;
	struct emu_node *n = s->node;
	const struct emu_port *port = &n->ports[0];
	uint32_t dip;
	uint64_t hash;

	if (len > port->mtu_frame || len > EMU_FRAME_MAX || lh_wire_dst(p, len, &dip, &hash) != LH_WIRE_OK) {
		s->st.in_bad++;
		return;
	}
	if (other_run(p, len, s->cfg->run)) {
		s->st.in_other_run++;	/* left over from an earlier run, or replayed: not this run's */
		return;
	}
	int algo = frame_algo(s, p, len);

	if (algo >= 0 && s->st.algo_seen < 0)
		s->st.algo_seen = algo;
	if ((s->st.algo_seen >= 0 && s->st.algo_seen != s->cfg->algo) || s->st.trees_differ) {
		/* another algorithm than the emulator's, or other static trees: nothing of it enters, the run ends */
		s->st.in_bad++;
		if (!s->st.algo_refused) {
			s->st.algo_refused = true;
			emu_stop(n);
		}
		return;
	}
	/*
	 * The host's frames fed into a link of the port's rate, those the NIC
	 * queue drops included: how long that link would still be busy with
	 * the earlier ones when this one came (in_ahead_max).
	 */
	/* the kernel's receive stamp (CLOCK_REALTIME; 0: none, then the clock now) */
	uint64_t real = lh_afp_rx_time(s->cfg->afp);
	uint64_t at = real ? real : (uint64_t)clock_ns(CLOCK_REALTIME);

	if (port->rate_bps) {
		if (s->link_free_ns > at && s->link_free_ns - at > s->st.in_ahead_max)
			s->st.in_ahead_max = s->link_free_ns - at;
		s->link_free_ns = (s->link_free_ns > at ? s->link_free_ns : at) +
				  (uint64_t)len * 8 * 1000000000ULL / port->rate_bps;
		uint64_t full = (uint64_t)port->mtu_frame * 8 * 1000000000ULL / port->rate_bps;

		if (s->st.in_ahead_max > AHEAD_FRAMES * full && s->st.in_ahead_max > AHEAD_MIN_NS)
			s->st.too_fast = true;
	}
	if (emu_port_queued(n, 0) + len > s->cfg->queue_max) {
		s->st.in_overrun++;
		return;
	}
	struct emu_frame *f = emu_frame_alloc_len(n, len);

	memcpy(f->data, p, len);
	f->len = len;
	/* the receive stamp on the engine's clock (CLOCK_MONOTONIC) */
	int64_t mono = (int64_t)real - s->real_off;

	if (real && mono > 0 && (uint64_t)mono + STAMP_SANE > (uint64_t)(clock_ns(CLOCK_REALTIME) - s->real_off))
		emu_node_injected(n, (uint64_t)mono);
	/* sent faster than the link carries: this frame came before half its wire time after the previous one */
	if (s->last_in_ns && port->rate_bps && at >= s->last_in_ns &&
	    (at - s->last_in_ns) * 2 * port->rate_bps < (uint64_t)len * 8 * 1000000000ULL)
		s->st.in_fast++;
	s->last_in_ns = at;
	if (!s->st.in_frames)
		s->st.first_in = emu_node_now(n);
	s->st.in_frames++;
	s->st.in_bytes += len;
	if (is_final_done(p, len))
		s->st.barrier_passed = true;	/* the host is rank 0: it ended the barrier */
	s->st.last_active = emu_node_now(n);
	emu_send(n, 0, f);
}

static bool ring_ready(void *afp)
{
	return lh_afp_rx_ready(afp);
}

/* read the ring: every frame found enters the fabric now */
static void attach_read(struct emu_attach_state *s)
{
	s->real_off = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
	lh_afp_rx(s->cfg->afp, inject, s, 1024);
	lh_afp_flush(s->cfg->afp);
}

static int attach_init(struct emu_node *n, void *arg)
{
	struct emu_attach_state *s = emu_node_state(n);

	s->cfg = arg;
	s->node = n;
	s->hs.node = n;
	s->hs.attached = true;
	s->st.algo_seen = -1;
	s->watched = !emu_node_watch(n, lh_afp_fd(s->cfg->afp), ring_ready, s->cfg->afp, T_WAKE);
	s->next_poll = emu_node_now(n);
	emu_timer_at(n, s->next_poll, T_POLL);
	return 0;
}

static void attach_timer(struct emu_node *n, uint64_t cookie)
{
	struct emu_attach_state *s = emu_node_state(n);
	emu_time_t now = emu_node_now(n);

	attach_read(s);
	if (cookie != T_POLL)
		return;
	if (s->st.barrier_passed && !s->st.quiet && now - s->st.last_active >= s->cfg->quiet) {
		s->st.quiet = true;
		s->hs.finished = true;
		emu_node_done(n);
	}
	s->next_poll = now + (s->watched && s->cfg->poll < WATCHED_TICK ? WATCHED_TICK : s->cfg->poll);
	emu_timer_at(n, s->next_poll, T_POLL);
}

/*
 * attach_state - the node failed or came back (--fail node:H3@...). The
 * engine drops timers that come due while a node is down: if the next
 * poll was dropped, poll again from now on. Frames that arrived meanwhile
 * wait in the ring (or the kernel drops them when it is full).
 */
static void attach_state(struct emu_node *n, bool up)
{
	struct emu_attach_state *s = emu_node_state(n);

	if (up && s->next_poll < emu_node_now(n)) {
		s->next_poll = emu_node_now(n);
		emu_timer_at(n, s->next_poll, T_POLL);
	}
}

static void attach_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct emu_attach_state *s = emu_node_state(n);

	(void)port;
	if (is_final_done(f->data, f->len))
		s->st.barrier_passed = true;
	const uint8_t *out = f->data;
	uint8_t wire[EMU_FRAME_MAX];
	uint32_t kept = emu_frame_bytes(f);

	if (kept < f->len) {
		/* padding the emulator did not store (background payload) goes out as zeros */
		memcpy(wire, f->data, kept);
		memset(wire + kept, 0, f->len - kept);
		out = wire;
	}
	if (lh_afp_send(s->cfg->afp, out, f->len)) {
		s->st.out_dropped++;
	} else {
		s->st.out_frames++;
		s->st.out_bytes += f->len;
		lh_afp_flush(s->cfg->afp);
	}
	s->st.last_active = emu_node_now(n);
	emu_frame_free(n, f);
}

const struct emu_model_ops emu_attach_ops = {
	.name = "attached host",
	.state_size = sizeof(struct emu_attach_state),
	.init = attach_init,
	.rx = attach_rx,
	.timer = attach_timer,
	.state = attach_state,
};
