// SPDX-License-Identifier: MIT
/*
 * DOC: port.c - the per-frame data path: egress queues, serializers,
 * credits, loss, link state, and the model-facing send/alloc/timer calls.
 *
 * A port's serializer transmits one frame at a time: a frame starts when
 * the frame before it has left, the peer has buffer credit for the whole
 * frame (lossless), and no frame of a higher class waits (strict
 * priority); it occupies the wire for (max(len, 60) + 24) * 8 / rate
 * (padded to Ethernet's minimum; preamble, FCS and gap: emu_wire_bytes)
 * and arrives at the peer one latency after its last bit left
 * (store-and-forward); under the merlin router one latency after its
 * first bit left, as SST's links deliver a packet (cut-through).
 *
 * One event per frame-hop. A queued frame is *committed* to the wire as
 * soon as its start is known: when it is queued (or a credit or a wake
 * lets it go) while the serializer is busy for at most commit_ps more
 * (the port's commit window, cfg.commit_bytes of wire time; unlimited with
 * one traffic class). Then its start is max(now, the previous frame's
 * end, the node's hold), its arrival at the peer is posted at once (the
 * frame's only event on this hop), its credit is taken and the ingress
 * buffer it held is given back upstream as of its start. A frame that
 * cannot be committed waits in the class queues; the port is woken
 * (EMU_EV_TXDONE) when the wire goes idle, and commits what then fits the
 * window: one wake per window of backlog, not one per frame. A model
 * with a txdone callback (hosts) is also woken when its wire goes idle
 * with nothing queued.
 *
 * What is read at a decision instant: a port's queued bytes (adaptive
 * routing, drop-tail, the peak) are the bytes of frames that have not
 * started by now, committed or not; a frame starting exactly now has
 * started. Strict priority orders the frames not yet committed: a frame
 * of the higher class waits behind at most one commit window, and only
 * the first after a quiet spell: for EMU_COMMIT_QUIET after a frame of
 * the higher class was queued, the port commits only when its wire is
 * idle, as strict priority needs. Credits taken by committed frames are
 * the peer's buffer they will occupy.
 *
 * Credits coming back and the timers of models that can call a timer idle
 * wait in small per-link / per-node rings instead of the worker's event
 * queue (see absorb_credits() and emu_timer_at(); other models' timers are
 * plain events): timers fire in exactly the (time, key) order of events,
 * and every decision that depends on a port's credits comes out as the
 * credit events would have made it: credits only add up, and the queued
 * ones due by then, those of a ring whose (time, key) is before the
 * decision's, are added (as one sum per class) before any test they
 * could change.
 */
#include "emu/engine/port_internal.h"
#include "emu/engine/xbar.h"
#include "libhost/wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-qsbr.h>

void emu_post(struct emu_node *n, struct emu_ev *ev, struct emu_chan *chan)
{
	ev->key = n->key++;
	if (chan)
		chan->ops->send(chan, ev);
	else
		emu_evq_push(&n->w->q, ev);
}

const char *const emu_tc_mode_names[EMU_TC_MODES] = { "none", "recovery", "collective" };

/*
 * The traffic class of @f from its bytes (engine.h, cfg.tc_mode): what a
 * switch's classifier reads, the Canary opcode or the IPv4 DSCP.
 */
static inline __attribute__((always_inline)) unsigned frame_tc(const struct emu_node *n, const struct emu_frame *f)
{
	unsigned mode = n->eng->cfg.tc_mode;

	if (mode == EMU_TC_ONE || f->len < EMU_ETH_HLEN + 2)
		return 0;
	uint16_t et = emu_get16(f->data + 12);

	if (et == EMU_ETHERTYPE_CANARY)
		return mode == EMU_TC_COLLECTIVE ||
		       (f->len >= EMU_CANARY_DATA_OFF && emu_canary_recovery(f->data[EMU_CANARY_FLAGS_OFF]));
	if (et != EMU_ETHERTYPE_IPV4)
		return 0;
	unsigned dscp = f->data[EMU_ETH_HLEN + 1] >> 2;

	return dscp == EMU_DSCP_RECOVERY || (mode == EMU_TC_COLLECTIVE && dscp == EMU_DSCP_COLLECTIVE);
}

/* credit event argument: bytes (31 bits), class (bit 31), link generation (high word) */
#define CREDIT_ARG(bytes, tc, gen) ((uint64_t)(bytes) | (uint64_t)(tc) << 31 | (uint64_t)(gen) << 32)

/*
 * A ring entry's w (struct emu_credit): the key's sequence (its node is
 * the ring's, shifted out) << 24 | class << 14 | bytes.
 */
#define CREDIT_W(key, bytes, tc) ((uint64_t)(key) << 24 | (uint64_t)(tc) << 14 | (bytes))
#define CREDIT_W_BYTES(w) ((uint32_t)(w) & 0x3fffu)
#define CREDIT_W_TC(w) ((unsigned)((w) >> 14) & 1)
_Static_assert(EMU_FRAME_MAX < 1 << 14 && EMU_SEQ_BITS + 24 == 64, "a ring entry's bytes and key's sequence fit w");

/* add a credit to its class; false if it is from before the link last changed state */
static bool apply_credit(struct emu_port *p, uint64_t arg)
{
	if ((uint32_t)(arg >> 32) != p->tx_gen)
		return false;
	p->credits[arg >> 31 & 1] += (uint32_t)arg & 0x7fffffffu;
	return true;
}

/*
 * The port whose ring holds the credits coming back to @p's serializer:
 * on a link within the worker its peer, which owes them and writes them
 * there when it gives the buffer space back (a line it has just touched);
 * @p itself when they come from another worker or process, as events, or
 * when it is unconnected (a forged credit from a peer process).
 */
static inline struct emu_port *credq_of(struct emu_port *p)
{
	return p->chan || !p->peer ? p : p->peer;
}

/*
 * Is the credit at @t of ring entry @w (keys of node @src) before the
 * event being processed (at @now, @key)? Ties of time go by key, as
 * their events would have.
 */
static inline bool credit_due(emu_time_t t, uint64_t w, uint64_t src, emu_time_t now, uint64_t key)
{
	return t < now || (t == now && (src | w >> 24) < key);
}

/* the same for an entry of rqx */
static inline bool credit_x_due(const struct emu_credit_x *c, emu_time_t now, uint64_t key)
{
	return c->t < now || (c->t == now && c->key < key);
}

/*
 * absorb_credits() while rq_mixed (@q's rqx holds credits, or its ring is
 * too large for the sum's halves): each credit due is added to its class
 * if it is of @p's link generation, as its event would have been
 * (apply_credit(); the ring's are of @q's generation).
 */
static __attribute__((noinline)) void absorb_each(const struct emu_worker *w, struct emu_port *p, struct emu_port *q)
{
	struct emu_credit *a = q->rq;
	uint32_t keep = 0;
	bool same = q->gen == p->tx_gen;

	for (uint32_t i = 0; i < q->rq_n; i++) {
		const struct emu_credit *c = &a[i];

		if (credit_due(c->t, c->w, q->rq_src, w->now, w->cur_key)) {
			if (same)
				p->credits[CREDIT_W_TC(c->w)] += CREDIT_W_BYTES(c->w);
		} else {
			a[keep++] = *c;
		}
	}
	q->rq_n = keep;
	struct emu_credit_x *x = q->rqx;
	uint32_t k = 0;

	for (uint32_t i = 0; i < q->rqx_n; i++) {
		if (credit_x_due(&x[i], w->now, w->cur_key))
			apply_credit(p, x[i].arg);
		else
			x[k++] = x[i];
	}
	q->rqx_n = k;
	q->rq_mixed = k || q->rq_cap > 1u << 20;
}

/*
 * Apply the queued credits of @p's serializer (in @q = credq_of(@p)) that
 * would have been processed by now. The ring is in the order the credits
 * were given, not in (t, key) order, so each entry is tested; those not
 * due yet stay, moved down to its start in their order. What the credits
 * due change is each class's sum, each adding its bytes if of the link's
 * current generation. The ring's entries are all of @q's generation and
 * of a frame's size at most (the others wait in rqx: credq_push_x()), so
 * while rqx is empty (not rq_mixed) they are summed at once, the classes
 * in the two halves of one word (a ring of up to 2^20 credits of up to
 * 2 KiB: class 0's sum fits the low one), and added if @q's generation
 * is @p's: the same totals as one event per credit, in any order.
 */
static void absorb_credits(const struct emu_worker *w, struct emu_port *p)
{
	struct emu_port *q = credq_of(p);
	uint32_t n = q->rq_n;

	if (emu_unlikely(q->rq_mixed)) {
		absorb_each(w, p, q);
		return;
	}
	if (!n)
		return;
	struct emu_credit *c = q->rq, *end = c + n, *k = c;
	emu_time_t now = w->now;
	uint64_t key = w->cur_key, src = q->rq_src, sum = 0;

	do {
		uint64_t cw = c->w;

		if (credit_due(c->t, cw, src, now, key))
			sum += (uint64_t)CREDIT_W_BYTES(cw) << (cw >> 9 & 32);
		else
			*k++ = *c;	/* k <= c */
	} while (++c != end);
	if (q->gen == p->tx_gen) {
		p->credits[0] += (uint32_t)sum;
		p->credits[1] += (uint32_t)(sum >> 32);
	}
	q->rq_n = (uint32_t)(k - q->rq);
}

/*
 * ring_grow - a ring of @n entries of @size bytes from @head in @*ring (of
 * @*cap, a power of two; none while 0) moved to the start of one twice as
 * large (of @first entries, a power of two, at first); the head is then 0.
 */
static __attribute__((noinline)) void ring_grow(void **ring, uint32_t *cap, uint32_t head, uint32_t n, size_t size,
					       uint32_t first)
{
	uint32_t ncap = *cap ? 2 * *cap : first;
	char *a = emu_xmalloc(ncap * size);

	for (uint32_t i = 0; i < n; i++)
		memcpy(a + i * size, (char *)*ring + ((head + i) & (*cap - 1)) * size, size);
	free(*ring);
	*ring = a;
	*cap = ncap;
}

/*
 * A credit ring's first size. When it is full the credits due are
 * applied, every entry tested, so a ring that holds little more than one
 * link latency's credits is searched every few frames: 32 entries.
 */
#define CREDQ_FIRST 32

/* credq_push() into a ring with room (@q holds @n < rq_cap credits) */
static inline __attribute__((always_inline)) void credq_put(struct emu_port *q, uint32_t n, emu_time_t t,
							      uint64_t cw)
{
	q->rq_n = n + 1;
	q->rq[n] = (struct emu_credit){ .t = t, .w = cw };
}

/*
 * credq_push() into a full ring: apply the credits due by now to the
 * serializer whose ring it is, and grow the ring unless that freed half
 * of it (so that a full ring's test of every entry is paid by at least
 * as many credits as it has entries / 2); then put the credit. The
 * push's only call, with the credit's arguments: its common path keeps
 * nothing across it and reads nothing of the serializer's port.
 */
static __attribute__((noinline)) void credq_full(const struct emu_worker *w, struct emu_port *q, emu_time_t t,
						  uint64_t cw)
{
	/* @q = credq_of(p) is p itself or p's peer, whose peer is p on a link within the worker: p = credq_of(@q) */
	absorb_credits(w, credq_of(q));
	if (!q->rq_cap || q->rq_n > q->rq_cap / 2) {
		void *r = q->rq;

		ring_grow(&r, &q->rq_cap, 0, q->rq_n, sizeof(*q->rq), CREDQ_FIRST);
		q->rq = r;
		/* 2^20 credits of up to 2 KiB: class 0's sum no longer fits its half word, one by one from now on */
		if (q->rq_cap > 1u << 20)
			q->rq_mixed = true;
	}
	credq_put(q, q->rq_n, t, cw);
}

/*
 * Queue a credit for the serializer of port p in the ring of @q =
 * credq_of(p): at its tail, whatever its (t, key) (frames committed ahead
 * give their buffer back as of their start, which is not in the order
 * they were committed across egress ports); absorb_credits() tests each.
 * When the ring is full the credits due by now are applied first
 * (credq_full()). Only then is p touched. An entry is 16 bytes (struct emu_credit): the
 * credit's generation is @q's and its key's node @q's rq_src, implied.
 */
static inline __attribute__((always_inline)) void credq_push(const struct emu_worker *w, struct emu_port *q,
							       emu_time_t t, uint64_t cw)
{
	uint32_t n = q->rq_n;

	if (emu_unlikely(n == q->rq_cap))
		credq_full(w, q, t, cw);
	else
		credq_put(q, n, t, cw);
}

/* a credit that does not fit @q's ring (another generation, node or size) into its rqx */
static __attribute__((noinline)) void credq_push_x(struct emu_port *q, emu_time_t t, uint64_t key, uint64_t arg)
{
	if (q->rqx_n == q->rqx_cap) {
		q->rqx_cap = q->rqx_cap ? 2 * q->rqx_cap : CREDQ_FIRST;
		q->rqx = emu_xrealloc(q->rqx, q->rqx_cap * sizeof(*q->rqx));
	}
	q->rqx[q->rqx_n++] = (struct emu_credit_x){ .t = t, .key = key, .arg = arg };
	q->rq_mixed = true;
}

/* @q's link changes state: the ring's credits, of the generation before, move to its rqx */
static __attribute__((noinline)) void credq_widen(struct emu_port *q)
{
	for (uint32_t i = 0; i < q->rq_n; i++) {
		const struct emu_credit *c = &q->rq[i];

		credq_push_x(q, c->t, q->rq_src | c->w >> 24, CREDIT_ARG(CREDIT_W_BYTES(c->w), CREDIT_W_TC(c->w), q->gen));
	}
	q->rq_n = 0;
}

/*
 * @q's rq_gen1 from what it depends on: whether a frame that holds
 * buffer space of @q's link generation gives it back into @q's ring
 * (ingress_release_at()). A frame held in @q's ingress buffer is of a
 * generation up to @q's (it was @q's when the frame arrived, and gens
 * only grow), so one compare with gen + 1 (never 0) tells it; 0 sends
 * every frame to release_event(), as before run_prepare(). Lossy, no
 * frame holds buffer space: 0 too, so that a frame whose gen + 1 is
 * rq_gen1 also arrives on the lossless fast path (emu_port_arrive()).
 * Only a lossless port stalls: stall() and unstall() pass true.
 */
static inline void rq_refresh(struct emu_port *q, bool lossless)
{
	q->rq_gen1 = lossless && q->up && !q->chan && !q->rq_stalled ? q->gen + 1 : 0;
}

/* the port waits for credit: what is on its way has to be able to wake it */
static void stall(struct emu_node *n, struct emu_port *p)
{
	struct emu_port *q = credq_of(p);

	p->stalled = true;
	q->rq_stalled = true;
	rq_refresh(q, true);
	for (uint32_t i = 0; i < q->rq_n; i++) {
		const struct emu_credit *c = &q->rq[i];
		struct emu_ev ev = {
			.t = c->t,
			.key = q->rq_src | c->w >> 24,
			.arg = CREDIT_ARG(CREDIT_W_BYTES(c->w), CREDIT_W_TC(c->w), q->gen),
			.node = n->id,
			.type = EMU_EV_CREDIT,
			.port = (uint16_t)(p - n->ports),
		};

		emu_evq_push(&n->w->q, &ev);
	}
	q->rq_n = 0;
	for (uint32_t i = 0; i < q->rqx_n; i++) {
		const struct emu_credit_x *c = &q->rqx[i];
		struct emu_ev ev = {
			.t = c->t,
			.key = c->key,
			.arg = c->arg,
			.node = n->id,
			.type = EMU_EV_CREDIT,
			.port = (uint16_t)(p - n->ports),
		};

		emu_evq_push(&n->w->q, &ev);
	}
	q->rqx_n = 0;
	q->rq_mixed = q->rq_cap > 1u << 20;
}

/* the serializer of @p no longer waits for credit */
static inline void unstall(struct emu_port *p)
{
	if (emu_unlikely(p->stalled)) {
		struct emu_port *q = credq_of(p);

		p->stalled = false;
		q->rq_stalled = false;
		rq_refresh(q, true);
	}
}

void emu_port_credit_in(struct emu_node *n, const struct emu_ev *ev)
{
	struct emu_port *p = &n->ports[ev->port];

	if (p->stalled) {
		emu_evq_push(&n->w->q, ev);
		return;
	}
	struct emu_port *q = credq_of(p);
	uint32_t bytes = (uint32_t)ev->arg & 0x7fffffffu;

	/* the ring holds credits of q's generation, of a frame's size at most, keys of its node */
	if ((uint32_t)(ev->arg >> 32) != q->gen || bytes > EMU_FRAME_MAX ||
	    (ev->key & ~((1ULL << EMU_SEQ_BITS) - 1)) != q->rq_src) {
		credq_push_x(q, ev->t, ev->key, ev->arg);
		return;
	}
	credq_push(n->w, q, ev->t, CREDIT_W(ev->key, bytes, ev->arg >> 31 & 1));
}

/* ingress_release_at() when the credit is no ring entry: of a link that changed state, across workers, or to a stalled port */
static __attribute__((noinline)) void release_event(struct emu_node *n, struct emu_port *ip, const struct emu_frame *f,
						     emu_time_t t)
{
	if (f->gen != ip->gen || !ip->up)
		return;
	n->w->events++;
	struct emu_ev ev = {
		.t = t + ip->latency,
		.arg = CREDIT_ARG(f->len, f->in_tc, ip->gen),
		.node = ip->peer_node,
		.type = EMU_EV_CREDIT,
		.port = ip->peer_port,
	};

	if (ip->chan) {
		emu_post(n, &ev, ip->chan);
		return;
	}
	ev.key = n->key++;
	emu_evq_push(&n->w->q, &ev);
}

/*
 * Give back the ingress buffer space @f holds: a credit to the upstream.
 * Inline in the serializer's path (once per frame-hop). Within a worker
 * it goes to the ring this port keeps for its peer: the upstream port's
 * lines are touched only when the ring is full.
 */
static inline __attribute__((always_inline)) void ingress_release_at(struct emu_node *n, struct emu_frame *f,
									emu_time_t t)
{
	if (f->in_port == EMU_PORT_NONE)
		return;
	struct emu_port *ip = &n->ports[f->in_port];

	f->in_port = EMU_PORT_NONE;
	ip->in_bytes -= f->len;
	/* f->gen != ip->gen || !ip->up || ip->chan || ip->rq_stalled (rq_refresh()) */
	if (emu_unlikely(f->gen + 1 != ip->rq_gen1)) {
		release_event(n, ip, f, t);
		return;
	}
	/*
	 * Counted here: whether it becomes a queue event or is applied
	 * lazily depends on the partition, the count must not.
	 */
	n->w->events++;
	credq_push(n->w, ip, t + ip->latency, CREDIT_W(n->key++, f->len, f->in_tc));
}

void emu_port_ingress_release(struct emu_node *n, struct emu_frame *f)
{
	ingress_release_at(n, f, n->w->now);
}

/* emu_frame_free() when its credit is no ring entry at the tail of a ring with room */
static __attribute__((noinline)) void frame_free_slow(struct emu_node *n, struct emu_frame *f)
{
	ingress_release_at(n, f, n->w->now);
	emu_pool_put(&n->w->pool, f);
}

/*
 * What ingress_release_at() and the pool do, written so that the common
 * case (no credit to give, or a credit at the tail of a ring with room)
 * calls nothing: every other case is a tail call. So the function saves
 * no register.
 */
void emu_frame_free(struct emu_node *n, struct emu_frame *f)
{
	struct emu_worker *w = n->w;
	unsigned in = f->in_port;

	if (in != EMU_PORT_NONE) {
		struct emu_port *ip = &n->ports[in];
		uint32_t k = ip->rq_n;

		if (emu_unlikely(f->gen + 1 != ip->rq_gen1 || k == ip->rq_cap)) {
			frame_free_slow(n, f);
			return;
		}
		/* ingress_release_at() into a ring with room; the frame is back in the pool first */
		uint32_t len = f->len;
		uint64_t cw = CREDIT_W(n->key++, len, f->in_tc);

		f->in_port = EMU_PORT_NONE;
		ip->in_bytes -= len;
		w->events++;
		emu_pool_put(&w->pool, f);
		credq_put(ip, k, w->now + ip->latency, cw);
		return;
	}
	emu_pool_put(&w->pool, f);
}

/* the node's earliest timer (there is one) */
static inline struct emu_ev *tmr_min(struct emu_node *n)
{
	if (!n->tfifo.n)
		return &n->theap.ev[0];
	struct emu_ev *f = emu_evfifo_at(&n->tfifo, 0);

	return n->theap.n && emu_ev_before(&n->theap.ev[0], f) ? &n->theap.ev[0] : f;
}

/* put the wake of timer @x in the event queue: a copy with its (t, key), port 1 */
static void tmr_wake(struct emu_node *n, struct emu_ev *x)
{
	x->port = 1;
	emu_evq_push(&n->w->q, x);
}

/*
 * How many of the node's pending timers a new one may pass in the sorted
 * ring (a host's timeout that shrank: its block's deadline comes before
 * those of the last few blocks sent); one that would pass more goes to
 * the heap, so an arming costs at most this many moves.
 */
#define TMR_BACK 8

/*
 * tmr_insert - emu_timer_at() for timer @x that does not go at the ring's
 * tail with room nor into the log (the ring empty or full, or @x the
 * node's earliest).
 * The ring stays sorted on (t, key): @x, with the node's largest key, goes
 * after every timer with t <= x->t, shifting the later ones (a suffix) one
 * place on; past TMR_BACK of them it goes to the heap. Wakes @x when it
 * is the node's earliest.
 */
static __attribute__((noinline)) void tmr_insert(struct emu_node *n, const struct emu_ev *x)
{
	struct emu_evfifo *fi = &n->tfifo;
	uint32_t k = fi->n;

	if (k > TMR_BACK && emu_evfifo_at(fi, k - 1 - TMR_BACK)->t > x->t) {
		bool earliest = x->t < tmr_min(n)->t;

		emu_heap_push(&n->theap, x);
		if (earliest)
			tmr_wake(n, &n->theap.ev[0]);
		return;
	}
	bool earliest = (!k || x->t < emu_evfifo_at(fi, 0)->t) && (!n->theap.n || x->t < n->theap.ev[0].t);

	emu_evfifo_push(fi, x);	/* grows the ring if full; @x at the tail, index k */
	struct emu_ev *a = fi->ev;
	uint32_t mask = fi->cap - 1, i = (fi->head + k) & mask;

	for (; k && a[(i - 1) & mask].t > x->t; k--) {
		a[i] = a[(i - 1) & mask];
		i = (i - 1) & mask;
	}
	a[i] = *x;
	if (earliest)
		tmr_wake(n, &a[i]);
}

/*
 * The node's log: timers armed out of order (before the ring's tail) that
 * are not the earliest wait there unsorted, never woken, the log's
 * earliest first (tlog[0]), until a walk (emu_timer_fired()) reaches its
 * time. The earliest timer of the node is never in the log: one logged
 * is later than the ring's and the heap's earliest, and emu_timer_fired()
 * drains the log before its earliest could come first (so tmr_min()
 * needs not read the log); nor the latest: the ring's tail, later than
 * it, cannot leave while it waits (a walk drains the log first).
 *
 * tlog_drain - the log's timers to the heap, those the model calls idle
 * (ops->timer_idle) dropped: what the walk would do to them in time
 * order, as an idle timer stays idle, is never woken (it is not the
 * earliest, and a walk from the front drops it) and leaves before the
 * node's latest.
 */
static __attribute__((noinline)) void tlog_drain(struct emu_node *n)
{
	const struct emu_ev *lg = n->tlog;
	uint32_t nl = n->tlog_n;

	for (uint32_t i = 0; i < nl; i++)
		if (!n->ops->timer_idle(n, lg[i].arg))
			emu_heap_push(&n->theap, &lg[i]);
	n->tlog_n = 0;
}

/* tlog_add - @x into the log (room for twice as many when full), before the others if the earliest */
static __attribute__((noinline)) void tlog_add(struct emu_node *n, const struct emu_ev *x)
{
	uint32_t nl = n->tlog_n;

	if (emu_unlikely(nl == n->tlog_cap)) {
		n->tlog_cap = n->tlog_cap ? 2 * n->tlog_cap : 32;
		n->tlog = emu_xrealloc(n->tlog, n->tlog_cap * sizeof(*n->tlog));
	}
	struct emu_ev *lg = n->tlog;

	n->tlog_n = nl + 1;
	if (nl && x->t < lg[0].t) {
		lg[nl] = lg[0];
		nl = 0;
	}
	lg[nl] = *x;
}

/*
 * Timers keep the (t, key) they would have had as events, and the node's
 * earliest timer always has its wake in the event queue (pushed when it
 * became the earliest), so wakes pop in the order the timers themselves
 * would have: any timer woken before is later than the earliest.
 */
void emu_timer_at(struct emu_node *n, emu_time_t t, uint64_t cookie)
{
	struct emu_ev x = {
		.t = t < n->w->now ? n->w->now : t,
		.key = n->key++,
		.arg = cookie,
		.node = n->id,
		.type = EMU_EV_TIMER,
	};

	/*
	 * A model that cannot call a timer idle (the switches: theirs are a
	 * pipeline pass or a descriptor's timeout, tens of nanoseconds to a
	 * microsecond ahead, and not in time order) never drops one: each is
	 * its own event (port 0), straight into the wheel with the same
	 * (t, key), instead of a ring per node and a wake.
	 */
	if (!n->ops->timer_idle) {
		emu_evq_push(&n->w->q, &x);
		return;
	}
	/*
	 * The node's timers all took their keys from n->key, so the new one
	 * has the largest: it comes before another exactly when its time is
	 * earlier. Not before the ring's tail (the common case), it goes
	 * there, and is not the earliest (the ring's head comes before it).
	 */
	struct emu_evfifo *fi = &n->tfifo;
	uint32_t k = fi->n;

	if (emu_likely(k)) {
		if (x.t >= emu_evfifo_at(fi, k - 1)->t) {
			if (emu_likely(k < fi->cap)) {
				*emu_evfifo_at(fi, k) = x;
				fi->n = k + 1;
				return;
			}
		} else if (x.t >= tmr_min(n)->t) {
			tlog_add(n, &x);	/* out of order, not the earliest */
			return;
		}
	}
	tmr_insert(n, &x);
}

/* take timer @m, the node's earliest (tmr_min()), out */
static void tmr_drop(struct emu_node *n, const struct emu_ev *m)
{
	if (m != n->theap.ev) {
		emu_evfifo_drop(&n->tfifo);
	} else {
		struct emu_ev gone;

		emu_heap_pop(&n->theap, &gone);
	}
}

/*
 * Before the next earliest timer is woken, the timers the model calls idle
 * (ops->timer_idle: firing would do nothing) are taken out unfired, from
 * the front and while not woken yet; they would have been events doing
 * nothing at their (t, key), and the sequence numbers they took are gaps
 * that reorder nothing. The node's latest timer always stays, idle or not:
 * the time of the run's last event, which ends a run that runs dry, and
 * whether anything is still pending when a run stops do not change.
 */
void emu_timer_fired(struct emu_node *n)
{
	tmr_drop(n, tmr_min(n));
	uint32_t left = n->tfifo.n + (uint32_t)n->theap.n + n->tlog_n;

	if (!left)
		return;
	for (;;) {
		/* the log's earliest would be the node's earliest: the log into the heap first */
		assert(left > n->tlog_n);	/* the latest is never in the log */
		if (n->tlog_n && emu_ev_before(n->tlog, tmr_min(n))) {
			tlog_drain(n);
			left = n->tfifo.n + (uint32_t)n->theap.n;
		}
		struct emu_ev *m = tmr_min(n);

		if (left > 1 && !m->port && n->ops->timer_idle(n, m->arg)) {
			tmr_drop(n, m);
			left--;
			continue;
		}
		if (!m->port)
			tmr_wake(n, m);
		return;
	}
}

/* arm_wake() beyond the common case of emu_evq_push(): a far time or a full chunk */
static __attribute__((noinline)) void arm_wake_slow(struct emu_node *n, unsigned pi, emu_time_t t)
{
	struct emu_ev ev = {
		.t = t,
		.key = n->key++,
		.node = n->id,
		.type = EMU_EV_TXDONE,
		.port = (uint16_t)pi,
	};

	emu_evq_push_slow(&n->w->q, &ev);
}

/*
 * queue a wake of @p's port for when its wire goes idle, unless one is
 * queued (it comes no later): what emu_post() does, the event written in
 * place (in the wheel's slot, or as the worker's wake run ahead)
 */
static void arm_wake(struct emu_node *n, unsigned pi, struct emu_port *p)
{
	if (p->txdone_pending)
		return;
	p->txdone_pending = true;
	struct emu_worker *w = n->w;
	emu_time_t t = p->busy_until;
	struct emu_ev *e;

	if (emu_unlikely(n->open_loop) && w->in_process && !w->ahead_n && !(p->rare & EMU_PORT_RARE_TAP)) {
		/* the key it would have had: later posts of the node keep theirs */
		e = &w->ahead_ev;
		w->ahead_n = n;
	} else if (emu_unlikely(!(e = emu_evq_reserve(&w->q, t)))) {
		arm_wake_slow(n, pi, t);
		return;
	}
	*e = (struct emu_ev){
		.t = t,
		.key = n->key++,
		.node = n->id,
		.type = EMU_EV_TXDONE,
		.port = (uint16_t)pi,
	};
}

/*
 * Open-loop sources. A node whose transmit path reads nothing that its
 * received frames change (emu_node_open_loop()) can take its transmit
 * wake (EMU_EV_TXDONE) at time t as soon as the event that armed it
 * ends, instead of from the queue, if nothing else it does could come
 * between:
 *  - t lies in the current window, so the wake would run before the
 *    window's barrier anyway (a run that stops does so at a barrier);
 *  - no timer of the node is due by t (its timers are all in the node's
 *    own rings: port 1 wakes, emu_timer_at());
 *  - no link or node changes state in the run (nothing scheduled);
 *  - the port holds credit for the largest frame of every class (the
 *    credits due by now applied first, ahead_short()), so
 *    credits still on their way could not change what it does (credits
 *    only add), and (lossless) the peer's buffer is large enough that
 *    the peer never waits for the node's credits (emu_node_open_loop());
 *  - the port is not tapped (pcap: the records keep their order).
 * A wake due after the window waits in the worker's list (w->later,
 * part of the worker's next event time at the barrier) and is tried the
 * same way when the window that holds it starts.
 * The frames it receives meanwhile commute with the wake; the only thing
 * they post is their ingress buffer's credit, back to the peer that sent
 * them, whose sequence numbers then interleave differently with the
 * wake's posts: an order that no decision reads, as the node's own frames
 * never come back to it on that port. The wake keeps its key, runs at its
 * time (now = t while it runs) and counts as an event; it is no queue
 * event. What it arms in turn is tried the same way.
 */

/* keep open-loop wake @ev for the window that holds it */
static void later_keep(struct emu_worker *w, const struct emu_ev *ev)
{
	if (w->nlater == w->later_cap) {
		w->later_cap = w->later_cap ? 2 * w->later_cap : 64;
		w->later = emu_xrealloc(w->later, w->later_cap * sizeof(*w->later));
	}
	w->later[w->nlater++] = *ev;
	if (ev->t < w->later_min)
		w->later_min = ev->t;
}

/*
 * Has @p less than a frame of credit in a class (the transmit wake then
 * waits in the queue)? The credits due by now are applied first: they
 * would be before any decision that reads them.
 */
static bool ahead_short(const struct emu_worker *w, struct emu_port *p)
{
	if (p->credits[0] >= p->mtu_frame && p->credits[1] >= p->mtu_frame)
		return false;
	absorb_credits(w, p);
	return p->credits[0] < p->mtu_frame || p->credits[1] < p->mtu_frame;
}

void emu_port_ahead(struct emu_worker *w, emu_time_t end)
{
	emu_time_t now = w->now;
	uint64_t key = w->cur_key;

	while (w->ahead_n) {
		struct emu_node *n = w->ahead_n;
		struct emu_ev *ev = &w->ahead_ev;
		const struct emu_engine *eng = n->eng;

		w->ahead_n = NULL;
		if (!n->up || eng->nact || ((n->tfifo.n || n->theap.n) && tmr_min(n)->t <= ev->t) ||
		    (!eng->cfg.lossy && ahead_short(w, &n->ports[ev->port]))) {
			emu_evq_push(&w->q, ev);
			break;
		}
		if (ev->t >= end) {
			later_keep(w, ev);
			break;
		}
		w->now = ev->t;
		w->cur_key = ev->key;
		w->events++;
		if (ev->t > w->last_event)
			w->last_event = ev->t;
		emu_port_txdone(n, ev->port);
	}
	w->now = now;
	w->cur_key = key;
}

void emu_port_ahead_window(struct emu_worker *w, emu_time_t end)
{
	uint32_t n = w->nlater;

	if (w->later_min >= end)
		return;
	/* the list is rebuilt in place: what is kept goes to slot nlater <= i, read already */
	w->nlater = 0;
	w->later_min = EMU_TIME_INF;
	for (uint32_t i = 0; i < n; i++) {
		struct emu_ev ev = w->later[i];

		if (ev.t >= end) {
			later_keep(w, &ev);
			continue;
		}
		/* as if the event that armed it had just ended */
		w->ahead_n = &w->eng->nodes[ev.node];
		w->ahead_ev = ev;
		emu_port_ahead(w, end);
	}
}

/* the committed frames that started by now are no longer queued */
static inline void cq_settle(struct emu_port *p, emu_time_t now)
{
	uint32_t k = p->cq_n;

	if (!k)
		return;
	const struct emu_txrec *a = p->cq;
	uint32_t h = p->cq_head, mask = p->cq_cap - 1;

	while (k && a[h].start <= now) {
		p->cbytes_tc[a[h].tc] -= a[h].len;
		h = (h + 1) & mask;
		k--;
	}
	p->cq_head = h;
	p->cq_n = k;
}

static void cq_grow(struct emu_port *p)
{
	void *r = p->cq;

	ring_grow(&r, &p->cq_cap, p->cq_head, p->cq_n, sizeof(*p->cq), 16);
	p->cq = r;
	p->cq_head = 0;
}

/* a frame committed to start after now stays queued until then */
static inline void cq_push(struct emu_port *p, emu_time_t now, emu_time_t start, uint32_t len, unsigned tc)
{
	if (start <= now)
		return;
	if (emu_unlikely(p->cq_n == p->cq_cap)) {
		cq_settle(p, now);
		if (p->cq_n == p->cq_cap)
			cq_grow(p);
	}
	struct emu_txrec *r = &p->cq[(p->cq_head + p->cq_n++) & (p->cq_cap - 1)];

	r->start = start;
	r->len = len;
	r->tc = tc;
	p->cbytes_tc[tc] += len;
}

/* bytes of class @c queued on @p and not started by now */
static inline uint64_t queued_tc(struct emu_port *p, emu_time_t now, unsigned c)
{
	cq_settle(p, now);
	return p->qbytes_tc[c] + p->cbytes_tc[c];
}

static inline uint64_t queued(struct emu_port *p, emu_time_t now)
{
	cq_settle(p, now);
	return emu_port_bytes(p);
}

uint64_t emu_port_queued(struct emu_node *n, unsigned port)
{
	return queued(&n->ports[port], n->w->now);
}

uint64_t emu_port_queued_at(struct emu_port *p, emu_time_t now)
{
	return queued(p, now);
}

/*
 * What commit() does on a port with rare bits: the capture, then the loss
 * draw and the forced drop. True if @f was lost (and freed).
 */
static __attribute__((noinline)) bool commit_rare(struct emu_node *n, struct emu_port *p, struct emu_frame *f,
						   emu_time_t start)
{
	struct emu_worker *w = n->w;

	if (p->rare & EMU_PORT_RARE_TAP)
		n->eng->tap(n->eng->tap_ctx, w->id, n->id, (unsigned)(p - n->ports), f, start);
	if ((p->loss_thresh && emu_rng_next(&n->rng) < p->loss_thresh) ||
	    (p->drop_nth && p->tx_frames == p->drop_nth)) {
		p->drops_loss++;
		emu_pool_put(&w->pool, f);
		return true;
	}
	return false;
}

/*
 * Commit @f to @p's wire, its first bit leaving at @start (>= now, and
 * not before the serializer is free): the arrival at the peer is posted
 * now, the one event of this hop.
 */
static inline __attribute__((always_inline)) void commit(struct emu_node *n, struct emu_port *p, struct emu_frame *f,
							  emu_time_t start, bool fast)
{
	struct emu_worker *w = n->w;
	emu_time_t ft = fast ? (emu_time_t)emu_wire_bytes(f->len) * p->ps_per_byte
			     : emu_port_tx_time(n, (unsigned)(p - n->ports), f->len);

	p->busy_until = start + ft;
	p->busy_ps += ft;
	p->tx_frames++;
	p->tx_bytes += f->len;
	w->frame_hops++;
	cq_push(p, w->now, start, f->len, f->tc);
	if (!fast && emu_unlikely(p->rare) && commit_rare(n, p, f, start))
		return;
	if (fast || !n->eng->cfg.lossy)
		p->credits[f->tc] -= f->len;
	f->gen = p->tx_gen;
	f->t_sent = start;
	f->hops++;
	/* merlin: at the peer one latency after its first bit left (SST's links, cut-through) */
	emu_time_t t = (!fast && n->eng->cfg.router == EMU_ROUTER_MERLIN ? start : p->busy_until) + p->tx_latency;
	struct emu_ev *e;

	if (emu_likely(!p->chan) && (e = emu_evq_reserve(&w->q, t))) {
		/* the common case of emu_post(): written in place */
		e->t = t;
		e->key = n->key++;
		e->frame = f;
		memcpy(&e->node, &p->peer_ev, sizeof(p->peer_ev));	/* node, type, port */
		return;
	}
	struct emu_ev ev = {
		.t = t,
		.frame = f,
		.node = p->peer_node,
		.type = EMU_EV_FRAME,
		.port = p->peer_port,
	};
	emu_post(n, &ev, p->chan);
}

/*
 * Send @f, just taken off @p's queue (or never queued): it starts when the
 * serializer is free, not before @hold (emu_node_hold_until; 0: none),
 * gives its ingress buffer back as of then and is committed to the wire.
 */
static inline __attribute__((always_inline)) void send_now(struct emu_node *n, struct emu_port *p,
							     struct emu_frame *f, emu_time_t now, emu_time_t hold,
							     bool fast)
{
	emu_time_t start = p->busy_until > now ? p->busy_until : now;

	if (hold > start)
		start = hold;
	ingress_release_at(n, f, start);
	commit(n, p, f, start, fast);
}

/*
 * The head frame @p may send next: the highest class whose head the peer
 * has room for, or NULL (its class in *@cls). Credits only add up, so
 * when the highest non-empty class has room before the queued credits are
 * applied it has room after, and is the class the full test would pick:
 * the queued credits stay queued (their lines are cold: written by the
 * peer long ago) until a head does not fit. They are applied then, in
 * the same order, to the same sum.
 */
static inline struct emu_frame *pick_head(struct emu_node *n, struct emu_port *p, unsigned *cls, bool fast)
{
	struct emu_frame *f = NULL;
	unsigned c = EMU_TC_N;

	while (c-- > 0 && !(f = p->qhead[c]))
		;
	if ((fast || !n->eng->cfg.lossy) && p->credits[c] < (int64_t)f->len) {
		absorb_credits(n->w, p);
		for (c = EMU_TC_N; c-- > 0;) {
			f = p->qhead[c];
			if (f && p->credits[c] >= (int64_t)f->len)
				break;
			f = NULL;
		}
	}
	*cls = c;
	return f;
}

/*
 * Commit the queued frames of port @pi that fit its commit window, in
 * strict priority; then make sure a wake comes when one is needed: frames
 * still queued behind the window (a credit wakes a stalled port instead),
 * or a model that wants to hear when its wire goes idle.
 */
static inline __attribute__((always_inline)) void pump_variant(struct emu_node *n, unsigned pi, struct emu_port *p,
								  bool fast)
{
	struct emu_worker *w = n->w;
	emu_time_t now = w->now;

	emu_time_t limit = now + (now < p->quiet_until ? 0 : p->commit_ps);

	while (p->qframes) {
		if (p->busy_until > limit) {
			arm_wake(n, pi, p);
			return;
		}
		unsigned c;
		struct emu_frame *f = pick_head(n, p, &c, fast);

		if (!f) {
			p->credit_stalls++;
			stall(n, p);
			return;	/* a credit event will pump again */
		}
		unstall(p);
		p->qhead[c] = f->next;
		if (!p->qhead[c])
			p->qtail[c] = NULL;
		else
			__builtin_prefetch(p->qhead[c]);	/* the next pick reads its length */
		p->qframes--;
		p->qbytes -= f->len;
		p->qbytes_tc[c] -= f->len;
		f->next = NULL;
		send_now(n, p, f, now, f->t_sent, fast);
		if (!fast && n->xb)
			emu_xbar_out_ready(n, pi);
	}
	if (n->ops->txdone && p->busy_until > now)
		arm_wake(n, pi, p);
}

static void pump(struct emu_node *n, unsigned pi, struct emu_port *p)
{
	if (p->variant)
		pump_variant(n, pi, p, true);
	else
		pump_variant(n, pi, p, false);
}

/*
 * emu_port_enqueue(), inline in emu_send(); @fast (a constant): @port's
 * variant is a fast one (no crossbar, lossless, no rare bits, FIFO
 * timing, an exact wire time).
 */
static inline __attribute__((always_inline)) void port_enqueue(struct emu_node *n, unsigned port,
								  struct emu_frame *f, unsigned c, bool fast)
{
	struct emu_port *p = &n->ports[port];
	struct emu_worker *w = n->w;
	emu_time_t now = w->now;

	f->tc = (uint8_t)c;
	f->next = NULL;
	/*
	 * The fast path: nothing queued, the serializer free within the
	 * window, the peer with room for the frame. pump() would take this
	 * frame off the queue at once and commit it: do so without queueing
	 * it, to the same state (the queue's counters net to zero).
	 */
	if (!p->qframes && (fast || !n->xb) &&
	    p->busy_until <= now + (c || now < p->quiet_until ? 0 : p->commit_ps) &&
	    ((!fast && n->eng->cfg.lossy) || p->credits[c] >= (int64_t)f->len)) {
		if (!fast && c)
			p->quiet_until = now + EMU_COMMIT_QUIET;
		uint64_t q = f->len;

		if (p->cq_n) {
			if (p->busy_until <= now) {
				/* every frame committed started before the wire went idle: none of the ring is read */
				p->cq_n = 0;
				p->cbytes_tc[0] = p->cbytes_tc[1] = 0;
			} else {
				cq_settle(p, now);
				q += p->cbytes_tc[0] + p->cbytes_tc[1];
			}
		}
		if (q > p->q_peak_bytes)
			p->q_peak_bytes = q;
		unstall(p);
		send_now(n, p, f, now, w->hold, fast);
		if (n->ops->txdone && p->busy_until > now)
			arm_wake(n, port, p);
		return;
	}
	f->t_sent = w->hold;	/* the earliest start; 0: none */
	if (p->qtail[c])
		p->qtail[c]->next = f;
	else
		p->qhead[c] = f;
	p->qtail[c] = f;
	p->qframes++;
	p->qbytes += f->len;
	p->qbytes_tc[c] += f->len;
	if (c)	/* the higher class: exact strict priority here for a while */
		p->quiet_until = n->w->now + EMU_COMMIT_QUIET;
	uint64_t q = p->cq_n ? queued(p, n->w->now) : p->qbytes;

	if (q > p->q_peak_bytes)
		p->q_peak_bytes = q;
	if (p->qhead[c] == f)
		pump(n, port, p);
}

void emu_port_enqueue(struct emu_node *n, unsigned port, struct emu_frame *f, unsigned c)
{
	port_enqueue(n, port, f, c, false);
}

/* emu_send() on the full path: any port, any variant */
static __attribute__((noinline)) int send_full(struct emu_node *n, unsigned port, struct emu_frame *f)
{
	if (emu_unlikely(port >= n->nports || !n->ports[port].connected)) {
		emu_frame_free(n, f);
		return -EINVAL;
	}
	struct emu_port *p = &n->ports[port];

	if (emu_unlikely(!p->up || !n->up)) {
		p->drops_down++;
		emu_frame_free(n, f);
		return -ENETDOWN;
	}
	if (emu_unlikely(f->len > p->mtu_frame)) {
		p->drops_mtu++;
		emu_frame_free(n, f);
		return -EMSGSIZE;
	}
	unsigned c = frame_tc(n, f);

	if (n->xb) {
		uint16_t in = f->xin;	/* past what emu_pool_fit() copies */

		f = emu_pool_fit(&n->w->pool, f);
		f->xin = in;
		return emu_xbar_send(n, port, f, c);
	}
	if (n->eng->cfg.lossy && queued_tc(p, n->w->now, c) + f->len > n->eng->cfg.buffer_bytes) {
		p->drops_queue++;
		emu_frame_free(n, f);
		return -ENOBUFS;
	}
	port_enqueue(n, port, emu_pool_fit(&n->w->pool, f), c, false);	/* what waits and travels is as small as it can be */
	return 0;
}

/*
 * emu_send(); @wire (a constant): @f is a frame off a wire that a route
 * op sends on as it arrived, so it is in the smallest buffer it fits
 * already (else emu_pool_fit() moves it there) and its class is f->tc,
 * the one its sender's classifier gave the same bytes (else frame_tc()).
 */
static inline __attribute__((always_inline)) int send_variant(struct emu_node *n, unsigned port,
							      struct emu_frame *f, bool wire)
{
	/*
	 * A fast variant: the full path's checks all pass but the MTU's;
	 * what a frame of class 0 does there (the higher class takes the
	 * full path). With one class the variant and the MTU are one test
	 * (fast_len).
	 */
	if (emu_likely(port < n->nports)) {
		const struct emu_port *p = &n->ports[port];

		if (emu_likely(f->len < p->fast_len) ||
		    (p->variant == EMU_PORT_FAST_TC && f->len <= p->mtu_frame && !(wire ? f->tc : frame_tc(n, f)))) {
			port_enqueue(n, port, wire ? f : emu_pool_fit(&n->w->pool, f), 0, true);
			return 0;
		}
	}
	return send_full(n, port, f);
}

int emu_send(struct emu_node *n, unsigned port, struct emu_frame *f)
{
	return send_variant(n, port, f, false);
}

void emu_send_copies(struct emu_node *n, struct emu_frame *f, uint64_t ports)
{
	if (!ports) {
		emu_frame_free(n, f);
		return;
	}
	/* the copies' bytes are f's: one class for all (what emu_send() computes for each) */
	unsigned c = frame_tc(n, f);

	while (ports) {
		unsigned port = (unsigned)__builtin_ctzll(ports);

		ports &= ports - 1;
		/* a copy is in the smallest buffer its bytes fit (emu_frame_clone()); f may not be */
		struct emu_frame *g = ports ? emu_frame_clone(n, f) : emu_pool_fit(&n->w->pool, f);

		g->xin = EMU_PORT_NONE;	/* a frame the node made: under merlin, its output's own FIFO */
		g->tc = (uint8_t)c;
		send_variant(n, port, g, true);	/* fitted and classified, as a frame off a wire */
	}
}

void emu_port_refresh(struct emu_node *n)
{
	const struct emu_engine_cfg *cfg = &n->eng->cfg;

	for (unsigned i = 0; i < n->nports; i++) {
		struct emu_port *p = &n->ports[i];

		if (!p->connected || !p->up || !n->up || n->xb || p->rare || !p->ps_per_byte || cfg->lossy ||
		    cfg->router == EMU_ROUTER_MERLIN)
			p->variant = EMU_PORT_FULL;
		else
			p->variant = cfg->tc_mode == EMU_TC_ONE ? EMU_PORT_FAST_ONE : EMU_PORT_FAST_TC;
		p->fast_len = p->variant == EMU_PORT_FAST_ONE ? (uint16_t)(p->mtu_frame + 1) : 0;
		/* the keys of the credits the ring holds: the peer's across workers, else this node's */
		p->rq_src = EMU_EV_KEY(p->chan ? p->peer_node : n->id, 0);
		rq_refresh(p, !cfg->lossy);
	}
}

/* hand @f, arrived on port @pi, to the model: its route op (and what emu_send() does, inline) or its rx */
static inline __attribute__((always_inline)) void deliver(struct emu_node *n, unsigned pi, struct emu_frame *f)
{
	const struct emu_model_ops *ops = n->ops;

	if (ops->route) {
		/* a forwarding model: its port, then what emu_send() does, inline */
		int out = ops->route(n, f, pi);

		if (out >= 0)
			send_variant(n, (unsigned)out, f, true);	/* as it arrived: fitted and classified */
		return;
	}
	f->rdst = EMU_RDST_NONE;	/* the model may rewrite the frame and send it on: its route cache is stale then */
	ops->rx(n, f, pi);
}

/*
 * hold_ingress - a lossless port holds @f in its ingress buffer until the
 * frame leaves the node (its credit goes back then). The class is the one
 * the sender's classifier gave it (emu_send, the crossbar; carried across
 * processes): the same function of the same bytes and cfg.tc_mode, not
 * computed twice.
 */
static inline void hold_ingress(struct emu_port *p, unsigned pi, struct emu_frame *f)
{
	f->in_port = (uint16_t)pi;
	f->in_tc = f->tc;
	p->in_bytes += f->len;
	if (p->in_bytes > p->in_peak_bytes)
		p->in_peak_bytes = p->in_bytes;
}

/* emu_port_arrive() off its fast path: lossy, a port or node down, a stale frame, a channel, a stalled ring */
static __attribute__((noinline)) void arrive_full(struct emu_node *n, unsigned pi, struct emu_frame *f)
{
	struct emu_port *p = &n->ports[pi];

	if (emu_unlikely(!n->up || !p->up || f->gen != p->gen)) {
		p->drops_down++;
		emu_pool_put(&n->w->pool, f);
		return;
	}
	p->rx_frames++;
	p->rx_bytes += f->len;
	f->next = NULL;
	f->xin = (uint16_t)pi;
	if (!n->eng->cfg.lossy)
		hold_ingress(p, pi, f);
	deliver(n, pi, f);
}

void emu_port_arrive(struct emu_node *n, unsigned pi, struct emu_frame *f)
{
	struct emu_port *p = &n->ports[pi];

	/*
	 * The common case in one test besides the node's: rq_gen1 is f's
	 * generation + 1 only on a lossless port that is up and of f's
	 * generation (rq_refresh(); also no channel, ring not stalled).
	 * What arrive_full() does then, but f->next = NULL: a frame posted
	 * to arrive (commit()) or from another process has no next.
	 */
	if (emu_unlikely(!n->up || f->gen + 1 != p->rq_gen1)) {
		arrive_full(n, pi, f);
		return;
	}
	p->rx_frames++;
	p->rx_bytes += f->len;
	f->xin = (uint16_t)pi;
	hold_ingress(p, pi, f);
	deliver(n, pi, f);
}

void emu_port_credit(struct emu_node *n, unsigned pi, uint64_t arg)
{
	struct emu_port *p = &n->ports[pi];

	/*
	 * Only a port that waits for credit sends more now. Whether a credit
	 * is an event or waits in the ring depends on the partition (a
	 * channel's credits are sorted when drained, a worker's own when
	 * posted); a credit that came as an event to a port waiting for its
	 * window, not for credit, used to commit its queue early, which the
	 * same credit in the ring did not: results differed between worker
	 * counts. Such a port is woken when its wire goes idle (pump()).
	 */
	if (apply_credit(p, arg) && p->stalled && p->qframes && p->busy_until <= n->w->now + p->commit_ps)
		pump(n, pi, p);	/* (pump() itself applies the quiet spell) */
}

void emu_port_txdone(struct emu_node *n, unsigned pi)
{
	struct emu_port *p = &n->ports[pi];

	p->txdone_pending = false;
	if (p->qframes) {
		pump(n, pi, p);
		return;
	}
	if (p->busy_until > n->w->now) {
		/* another event at this very time restarted the serializer: wait for that frame */
		if (n->ops->txdone)
			arm_wake(n, pi, p);
		return;
	}
	if (n->ops->txdone && n->up)
		n->ops->txdone(n, pi);
}

void emu_port_link(struct emu_node *n, unsigned pi, bool up)
{
	struct emu_port *p = &n->ports[pi];

	if (p->up == up)
		return;
	p->up = up;
	if (p->rq_n)	/* the ring's credits are of this generation: to rqx with it (absorb_each()) */
		credq_widen(p);
	p->tx_gen = ++p->gen;
	unstall(p);
	if (!up) {
		/* what waits for a dead link is lost */
		for (unsigned c = 0; c < EMU_TC_N; c++) {
			struct emu_frame *f = p->qhead[c];

			while (f) {
				struct emu_frame *next = f->next;

				p->drops_down++;
				emu_frame_free(n, f);
				f = next;
			}
			p->qhead[c] = p->qtail[c] = NULL;
			p->qbytes_tc[c] = 0;
			p->credits[c] = 0;
		}
		p->qframes = 0;
		p->qbytes = 0;
		/* what was committed but had not started is lost on the wire (the peer drops it) */
		p->cq_n = 0;
		p->cbytes_tc[0] = p->cbytes_tc[1] = 0;
		if (n->xb)
			emu_xbar_link_down(n, pi);
	} else {
		for (unsigned c = 0; c < EMU_TC_N; c++)
			p->credits[c] = (int64_t)n->eng->cfg.buffer_bytes;
		if (p->busy_until < n->w->now)
			p->busy_until = n->w->now;
	}
	emu_port_refresh(n);
	if (n->ops->link)
		n->ops->link(n, pi, up);
}
