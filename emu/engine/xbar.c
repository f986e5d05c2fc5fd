// SPDX-License-Identifier: MIT
/*
 * DOC: xbar.c - the merlin switch queueing model (input buffers, crossbar,
 * output buffers). See xbar.h for the model; this file keeps its state.
 *
 * Requesters are (input, class) pairs and, per output, the switch's own
 * (output, class) FIFOs. Each output keeps one mask per class of the inputs
 * whose head of that class wants it, so an arbitration looks only at real
 * requesters. A requester's index, for ties and for round robin, is
 * port * EMU_TC_N + class, the switch's own FIFO coming last.
 */
#include "emu/engine/xbar.h"

#include <errno.h>
#include <stdlib.h>

#include "emu/engine/fabric.h"
#include "emu/engine/port_internal.h"

struct emu_xin {
	struct emu_fifo q[EMU_TC_N];
	uint64_t bytes[EMU_TC_N];
	uint64_t served[EMU_TC_N];	/* grant stamp of the last grant (LRS) */
	emu_time_t busy_until;		/* crossbar input busy */
	bool wake;			/* an input-side EMU_EV_XBAR is queued */
};

struct emu_xout {
	uint64_t req[EMU_TC_N];		/* inputs whose class-c head wants this output */
	struct emu_fifo own[EMU_TC_N];	/* frames the switch made for this output */
	uint64_t own_bytes[EMU_TC_N];
	uint64_t own_served[EMU_TC_N];
	emu_time_t busy_until;		/* crossbar output busy */
	uint32_t rr;			/* round robin: index of the requester served last */
	bool wake;			/* an output-side EMU_EV_XBAR is queued */
};

struct emu_xbar {
	uint64_t bps;
	uint64_t obuf;
	int64_t thresh;			/* adaptive: the natural port's least free output buffer kept */
	uint64_t ibuf;			/* lossy: input buffer per class */
	uint64_t stamp;			/* grants so far */
	enum emu_xbar_arb arb;
	bool lossy;
	unsigned nc;			/* classes in use: EMU_TC_N unless cfg.tc_mode is EMU_TC_ONE, else 1 */
	unsigned nports;
	uint32_t drf;			/* hosts below one down port (topo_fattree's down_route_factor) */
	uint32_t mtu_frame;		/* the largest frame any port takes */
	struct emu_xin *in;
	struct emu_xout *out;
};

/* the hosts below node @id of @fab: itself if a host, else those below its down ports (lower level) */
static uint32_t hosts_below(const struct emu_fabric *fab, uint32_t id)
{
	const struct emu_fab_node *fn = &fab->nodes[id];
	uint32_t sum = 0;

	if (fn->kind == EMU_NODE_HOST)
		return 1;
	for (unsigned p = 0; p < fn->nports; p++) {
		const struct emu_fab_port *fp = &fab->ports[fn->port0 + p];

		if (fp->link != EMU_NONE32 && fab->nodes[fp->peer_node].level < fn->level)
			sum += hosts_below(fab, fp->peer_node);
	}
	return sum;
}

/* the hosts below the first down port of switch @id: 1 on a leaf, a leaf's hosts one level up */
static uint32_t down_route_factor(const struct emu_fabric *fab, uint32_t id)
{
	const struct emu_fab_node *fn = &fab->nodes[id];

	for (unsigned p = 0; p < fn->nports; p++) {
		const struct emu_fab_port *fp = &fab->ports[fn->port0 + p];

		if (fp->link != EMU_NONE32 && fab->nodes[fp->peer_node].level < fn->level) {
			uint32_t h = hosts_below(fab, fp->peer_node);

			return h ? h : 1;
		}
	}
	return 1;
}

struct emu_xbar *emu_xbar_create(const struct emu_node *n, const struct emu_engine_cfg *cfg, uint64_t xbar_bps)
{
	struct emu_xbar *xb = emu_xcalloc(1, sizeof(*xb));

	xb->bps = xbar_bps;
	xb->ibuf = cfg->buffer_bytes ? cfg->buffer_bytes : EMU_MERLIN_IBUF;
	xb->obuf = cfg->obuf_bytes ? cfg->obuf_bytes : EMU_MERLIN_OBUF;
	/* as hr_router's fat tree: an integer share of the buffer, rounded down */
	xb->thresh = (int64_t)((double)xb->obuf *
			       (cfg->adaptive_threshold > 0 ? cfg->adaptive_threshold : EMU_DEFAULT_ADAPTIVE_THRESHOLD));
	xb->arb = cfg->xbar_arb;
	xb->lossy = cfg->lossy;
	xb->nports = n->nports;
	xb->drf = down_route_factor(n->eng->fab, n->id);
	xb->nc = cfg->tc_mode != EMU_TC_ONE ? EMU_TC_N : 1;
	for (unsigned p = 0; p < n->nports; p++)
		if (n->ports[p].mtu_frame > xb->mtu_frame)
			xb->mtu_frame = n->ports[p].mtu_frame;
	xb->in = emu_xcalloc(n->nports + 1, sizeof(*xb->in));
	xb->out = emu_xcalloc(n->nports + 1, sizeof(*xb->out));
	for (unsigned o = 0; o < n->nports; o++)
		xb->out[o].rr = UINT32_MAX;
	return xb;
}

uint64_t emu_xbar_mem_estimate(unsigned nports)
{
	return sizeof(struct emu_xbar) + (uint64_t)(nports + 1) * (sizeof(struct emu_xin) + sizeof(struct emu_xout));
}

void emu_xbar_destroy(struct emu_xbar *xb)
{
	if (!xb)
		return;
	free(xb->in);
	free(xb->out);
	free(xb);
}

unsigned emu_xbar_natural(const struct emu_node *n, uint64_t mask, uint32_t dst, uint64_t rhash)
{
	unsigned cnt = emu_mask_count(mask);
	unsigned k = dst != EMU_NONE32 ? (dst / n->xb->drf) % cnt : (unsigned)(rhash % cnt);

	return emu_nth_bit(mask, k);
}


static void post_wake(struct emu_node *n, unsigned port, bool input, emu_time_t t)
{
	struct emu_ev ev = {
		.t = t,
		.arg = input,
		.node = n->id,
		.type = EMU_EV_XBAR,
		.port = (uint16_t)port,
	};

	emu_post(n, &ev, NULL);
}

static void wake_in(struct emu_node *n, unsigned i)
{
	struct emu_xin *xi = &n->xb->in[i];

	if (!xi->wake) {
		xi->wake = true;
		post_wake(n, i, true, xi->busy_until);
	}
}

static void wake_out(struct emu_node *n, unsigned o)
{
	struct emu_xout *xo = &n->xb->out[o];

	if (!xo->wake) {
		xo->wake = true;
		post_wake(n, o, false, xo->busy_until);
	}
}

static bool out_wanted(const struct emu_xbar *xb, const struct emu_xout *xo)
{
	for (unsigned c = 0; c < xb->nc; c++)
		if (xo->req[c] || xo->own[c].head)
			return true;
	return false;
}

static bool in_waiting(const struct emu_xbar *xb, const struct emu_xin *xi)
{
	for (unsigned c = 0; c < xb->nc; c++)
		if (xi->q[c].head)
			return true;
	return false;
}

/* is requester (stamp @s, index @idx) ahead of the best so far under @xb's policy for output @xo? */
static bool better(const struct emu_xbar *xb, const struct emu_xout *xo, uint64_t s, uint32_t idx, uint64_t best_s,
		   uint32_t best_idx)
{
	if (best_idx == UINT32_MAX)
		return true;
	if (xb->arb == EMU_XBAR_LRS)
		return s < best_s || (s == best_s && idx < best_idx);
	/* round robin: distance after the one served last, cyclic over all indices */
	uint32_t span = (xb->nports + 1) * EMU_TC_N;
	uint32_t last = xo->rr == UINT32_MAX ? span - 1 : xo->rr;

	return (idx + span - last - 1) % span < (best_idx + span - last - 1) % span;
}

/* could the head @f of class @c be granted at output @o but for the crossbar? (its buffer has room) */
static bool fits(const struct emu_node *n, unsigned o, unsigned c, const struct emu_frame *f)
{
	return n->ports[o].qbytes_tc[c] + f->len <= n->xb->obuf;
}

/* the free bytes of output @o's buffer of class @c (hr_router's xbar_in_credits) */
static inline int64_t obuf_credits(const struct emu_node *n, unsigned o, unsigned c)
{
	return (int64_t)n->xb->obuf - (int64_t)n->ports[o].qbytes_tc[c];
}

/*
 * route - choose @f's output among f->xmask now, as hr_router's fat tree
 * does when a packet reaches the head of its input queue: the natural
 * port (f->xout) while its free output buffer of class @c is at least
 * the threshold, else the port with the most free bytes, ties to the
 * natural port, then to the lower port (ecmp: the natural port always;
 * leastloaded: no threshold). A frame with one port is routed already.
 */
static void route(struct emu_node *n, struct emu_frame *f, unsigned c)
{
	uint64_t mask = f->xmask;

	if (!mask)
		return;
	f->xmask = 0;
	if (f->xpol == EMU_ROUTE_ECMP)
		return;
	int64_t best = obuf_credits(n, f->xout, c);

	if (f->xpol == EMU_ROUTE_ADAPTIVE && best >= n->xb->thresh)
		return;
	for (uint64_t m = mask & ~(1ULL << f->xout); m; m &= m - 1) {
		unsigned p = (unsigned)__builtin_ctzll(m);
		int64_t cr = obuf_credits(n, p, c);

		if (cr > best && n->ports[p].up) {
			best = cr;
			f->xout = (uint16_t)p;
		}
	}
}

/*
 * After a grant, input @i is busy: it needs a wake at the end only if one
 * of its heads could go then. A head whose output buffer is full waits for
 * that output's own trigger (a frame leaving the buffer), which arbitrates
 * and wakes the input if it is still busy: most wakes under load are saved.
 */
static void after_grant_in(struct emu_node *n, unsigned i)
{
	struct emu_xin *xi = &n->xb->in[i];

	for (unsigned c = 0; c < n->xb->nc; c++) {
		const struct emu_frame *h = xi->q[c].head;

		if (h && fits(n, h->xout, c, h)) {
			wake_in(n, i);
			return;
		}
	}
}

/* the same for output @o: a wake only if some requester fits its buffer */
static void after_grant_out(struct emu_node *n, unsigned o)
{
	struct emu_xbar *xb = n->xb;
	struct emu_xout *xo = &xb->out[o];

	for (unsigned c = 0; c < xb->nc; c++) {
		if (!xo->req[c] && !xo->own[c].head)
			continue;
		/* room for the largest frame: whoever waits fits */
		if (n->ports[o].qbytes_tc[c] + xb->mtu_frame <= xb->obuf) {
			wake_out(n, o);
			return;
		}
		if (xo->own[c].head && fits(n, o, c, xo->own[c].head)) {
			wake_out(n, o);
			return;
		}
		for (uint64_t m = xo->req[c]; m; m &= m - 1)
			if (fits(n, o, c, xb->in[__builtin_ctzll(m)].q[c].head)) {
				wake_out(n, o);
				return;
			}
	}
}

/* grant @f, head of @q, to output @o: off its input buffer, into the output buffer */
static void grant(struct emu_node *n, unsigned o, struct emu_fifo *q, uint64_t *bytes, uint64_t *served, int in,
		  uint32_t idx)
{
	struct emu_xbar *xb = n->xb;
	struct emu_xout *xo = &xb->out[o];
	struct emu_port *p = &n->ports[o];
	emu_time_t now = n->w->now;
	struct emu_frame *f = emu_fifo_pop(q);
	unsigned c = f->tc;
	emu_time_t xfer = ((emu_time_t)f->len * 8 * EMU_S + xb->bps - 1) / xb->bps;

	*bytes -= f->len;
	*served = ++xb->stamp;
	xo->rr = idx;
	xo->busy_until = now + xfer;
	if (in >= 0) {
		xb->in[in].busy_until = now + xfer;
		xo->req[c] &= ~(1ULL << in);
		/* the next frame is the head now: routed on the buffers as they are before @f joins its own */
		if (q->head) {
			route(n, q->head, c);
			xb->out[q->head->xout].req[c] |= 1ULL << in;
		}
	}
	emu_port_ingress_release(n, f);
	if (emu_unlikely(!p->up || !n->up)) {
		p->drops_down++;
		emu_frame_free(n, f);
	} else {
		emu_port_enqueue(n, o, f, c);
	}
	/* after the frame went into the buffer (and perhaps onto the wire): who has to be woken? */
	if (in >= 0)
		after_grant_in(n, (unsigned)in);
	after_grant_out(n, o);
}

/* one arbitration at output @o: grant the best requester, if any may go now */
static void arbitrate(struct emu_node *n, unsigned o)
{
	struct emu_xbar *xb = n->xb;
	struct emu_xout *xo = &xb->out[o];
	const struct emu_port *p = &n->ports[o];
	emu_time_t now = n->w->now;

	if (xo->busy_until > now) {
		if (out_wanted(xb, xo))
			wake_out(n, o);
		return;
	}
	uint64_t best_s = 0, busy = 0;
	uint32_t best_idx = UINT32_MAX;
	int best_in = -1;
	unsigned best_c = 0;

	for (unsigned c = 0; c < xb->nc; c++) {
		uint64_t room = xb->obuf > p->qbytes_tc[c] ? xb->obuf - p->qbytes_tc[c] : 0;

		for (uint64_t m = xo->req[c]; m; m &= m - 1) {
			unsigned i = (unsigned)__builtin_ctzll(m);
			struct emu_xin *xi = &xb->in[i];
			uint32_t idx = i * EMU_TC_N + c;

			if (xi->q[c].head->len > room)
				continue;
			if (xi->busy_until > now) {
				busy |= 1ULL << i;
				continue;
			}
			if (better(xb, xo, xi->served[c], idx, best_s, best_idx)) {
				best_s = xi->served[c];
				best_idx = idx;
				best_in = (int)i;
				best_c = c;
			}
		}
		if (xo->own[c].head && xo->own[c].head->len <= room) {
			uint32_t idx = xb->nports * EMU_TC_N + c;

			if (better(xb, xo, xo->own_served[c], idx, best_s, best_idx)) {
				best_s = xo->own_served[c];
				best_idx = idx;
				best_in = -1;
				best_c = c;
			}
		}
	}
	if (best_idx == UINT32_MAX) {
		/*
		 * Nobody may go now. Inputs that could but are busy get a wake at
		 * the end of their transfer; the rest wait for a new head, room
		 * in the output buffer or a wake to call again. (After a grant
		 * the output's own wake or room covers the busy inputs.)
		 */
		for (; busy; busy &= busy - 1)
			wake_in(n, (unsigned)__builtin_ctzll(busy));
		return;
	}
	if (best_in >= 0) {
		struct emu_xin *xi = &xb->in[best_in];

		grant(n, o, &xi->q[best_c], &xi->bytes[best_c], &xi->served[best_c], best_in, best_idx);
	} else {
		grant(n, o, &xo->own[best_c], &xo->own_bytes[best_c], &xo->own_served[best_c], -1, best_idx);
	}
}

int emu_xbar_send(struct emu_node *n, unsigned port, struct emu_frame *f, unsigned c)
{
	struct emu_xbar *xb = n->xb;
	unsigned in = f->xin;
	struct emu_fifo *q;
	uint64_t *bytes;

	f->tc = (uint8_t)c;
	f->xout = (uint16_t)port;
	if (in < xb->nports) {
		q = &xb->in[in].q[c];
		bytes = &xb->in[in].bytes[c];
	} else {
		/* the switch made it: no input queue, routed now */
		route(n, f, c);
		port = f->xout;
		q = &xb->out[port].own[c];
		bytes = &xb->out[port].own_bytes[c];
	}
	if (xb->lossy && *bytes + f->len > xb->ibuf) {
		n->ports[in < xb->nports ? in : port].drops_queue++;
		emu_frame_free(n, f);
		return -ENOBUFS;
	}
	*bytes += f->len;
	bool head = !q->head;

	emu_fifo_push(q, f);
	if (!head)
		return 0;
	if (in < xb->nports) {
		route(n, f, c);
		port = f->xout;
		xb->out[port].req[c] |= 1ULL << in;
	}
	arbitrate(n, port);
	return 0;
}

void emu_xbar_out_ready(struct emu_node *n, unsigned port)
{
	if (out_wanted(n->xb, &n->xb->out[port]))
		arbitrate(n, port);
}

void emu_xbar_wake(struct emu_node *n, unsigned port, bool input)
{
	struct emu_xbar *xb = n->xb;

	if (!input) {
		xb->out[port].wake = false;
		arbitrate(n, port);
		return;
	}
	struct emu_xin *xi = &xb->in[port];

	xi->wake = false;
	if (xi->busy_until > n->w->now) {
		if (in_waiting(xb, xi))
			wake_in(n, port);
		return;
	}
	/* the input is free: offer its heads to their outputs, class by class */
	for (unsigned c = 0; c < xb->nc && xi->busy_until <= n->w->now; c++)
		if (xi->q[c].head)
			arbitrate(n, xi->q[c].head->xout);
}

/*
 * drop the frames of @q bound for @port; a frame not routed yet loses
 * @port from its choice (its natural port becomes the lowest left if it
 * was @port). Return the bytes dropped.
 */
static uint64_t purge(struct emu_node *n, struct emu_fifo *q, unsigned port)
{
	struct emu_frame *keep = NULL, *ktail = NULL, *f = q->head;
	uint64_t gone = 0;

	while (f) {
		struct emu_frame *next = f->next;

		if (f->xmask & (1ULL << port)) {
			f->xmask &= ~(1ULL << port);
			if (f->xout == port)
				f->xout = (uint16_t)__builtin_ctzll(f->xmask);
			if (!(f->xmask & (f->xmask - 1)))
				f->xmask = 0;	/* one port left: routed */
		}
		if (f->xout == port) {
			gone += f->len;
			n->ports[port].drops_down++;
			emu_frame_free(n, f);
		} else {
			f->next = NULL;
			if (ktail)
				ktail->next = f;
			else
				keep = f;
			ktail = f;
		}
		f = next;
	}
	q->head = keep;
	q->tail = ktail;
	return gone;
}

void emu_xbar_link_down(struct emu_node *n, unsigned port)
{
	struct emu_xbar *xb = n->xb;
	struct emu_xout *xo = &xb->out[port];

	for (unsigned c = 0; c < EMU_TC_N; c++) {
		while (xo->own[c].head) {
			n->ports[port].drops_down++;
			emu_frame_free(n, emu_fifo_pop(&xo->own[c]));
		}
		xo->own_bytes[c] = 0;
		xo->req[c] = 0;
		for (unsigned i = 0; i < xb->nports; i++) {
			struct emu_xin *xi = &xb->in[i];
			const struct emu_frame *old = xi->q[c].head;

			if (!old)
				continue;
			xi->bytes[c] -= purge(n, &xi->q[c], port);
			if (xi->q[c].head == old || !xi->q[c].head)
				continue;
			/* the old head was bound for @port: the new one is routed and asks its output */
			route(n, xi->q[c].head, c);
			unsigned o = xi->q[c].head->xout;

			xb->out[o].req[c] |= 1ULL << i;
			if (xi->busy_until <= n->w->now)
				arbitrate(n, o);
			else
				wake_in(n, i);
		}
	}
}
