// SPDX-License-Identifier: MIT
/*
 * DOC: host.c - the host: communicators and requests, the send scheduler
 * (control frames first, then data from the requests round-robin, then
 * background traffic; one frame whenever the NIC is idle, so a host injects
 * at exactly line rate and its NIC queue never grows), host noise, timer
 * and frame dispatch, the completion barrier, background traffic.
 *
 * Completion barrier: a host whose result is complete sends DONE (counter
 * 0, its rank in the children field) to rank 0 and repeats it every
 * retransmission timeout; rank 0, once it has every rank's DONE and its own
 * result, sends DONE with counter = hosts to everyone, and resends it to
 * any host that asks again. A leader keeps the blocks it reduced until the
 * barrier passes (it may still get retransmission requests before).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "libhost/lh_util.h"
#include "libhost/lh_internal.h"
#include "libhost/lh_rng.h"

#define LH_DONE_SEQ LH_SEQ_MASK
#define LH_ARG_BARRIER 0xffffffffffffULL

static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

const char *lh_algo_name(enum lh_algo a)
{
	switch (a) {
	case LH_ALGO_CANARY: return "canary";
	case LH_ALGO_STATIC: return "static";
	case LH_ALGO_RING: return "ring";
	}
	return "?";
}

/* ---------- tx queue ---------- */

static void txq_push(struct lh_txq *q, void *handle, uint32_t len)
{
	if (q->n == q->cap) {
		uint32_t ncap = q->cap ? 2 * q->cap : 16;
		struct lh_txent *e = lh_xmalloc(ncap * sizeof(*e));

		for (uint32_t i = 0; i < q->n; i++)
			e[i] = q->e[(q->head + i) % q->cap];
		free(q->e);
		q->e = e;
		q->head = 0;
		q->cap = ncap;
	}
	q->e[(q->head + q->n) % q->cap] = (struct lh_txent){ handle, len };
	q->n++;
}

static struct lh_txent txq_pop(struct lh_txq *q)
{
	struct lh_txent e = q->e[q->head];

	q->head = (q->head + 1) % q->cap;
	q->n--;
	return e;
}

/* ---------- host ---------- */

struct lh_host *lh_host_create(const struct lh_transport *t, const struct lh_peer *self)
{
	if (!t || !t->ops || !t->ops->frame_get || !t->ops->frame_send || !t->ops->now || !t->ops->timer ||
	    !t->ops->tx_busy || !t->ops->random || !t->rate_bps)
		return NULL;
	struct lh_host *h = lh_xzalloc_lines(sizeof(*h));

	h->t = *t;
	h->self = *self;
	h->frame_len = LH_FRAME_MAX;
	return h;
}

int lh_host_set_run(struct lh_host *h, unsigned run)
{
	if (run >= EMU_CANARY_RUNS)
		return -EINVAL;
	h->run = (uint8_t)run;
	return 0;
}

uint64_t lh_host_other_run(const struct lh_host *h)
{
	return h->other_run;
}

static void req_free(struct lh_req *r)
{
	if (!r)
		return;
	if (r->ops && r->ops->fini)
		r->ops->fini(r);
	free(r->done_seen);
	free(r->ctl.e);
	free(r);
}

void lh_host_destroy(struct lh_host *h)
{
	if (!h)
		return;
	for (unsigned i = 0; i < h->ncomms; i++) {
		req_free(h->comms[i]->req);
		if (!h->share_peers)
			free(h->comms[i]->peers);
		free(h->comms[i]);
	}
	if (!h->share_peers)
		free(h->bg.peers);
	free(h->bg.full);
	free(h);
}

lh_time_t lh_now(struct lh_req *r)
{
	struct lh_host *h = r->comm->host;

	return h->t.ops->now(h->t.ctx);
}

/* ask the transport for a buffer that will hold @len bytes of data */
static uint8_t *host_frame(struct lh_host *h, uint32_t len, void **handle)
{
	uint8_t *buf;

	h->frame_len = len;
	buf = h->t.ops->frame_get(h->t.ctx, handle);
	h->frame_len = LH_FRAME_MAX;
	return buf;
}

uint8_t *lh_frame(struct lh_req *r, uint32_t len, void **handle)
{
	return host_frame(r->comm->host, len, handle);
}

uint32_t lh_host_frame_len(const struct lh_host *h)
{
	return h->frame_len;
}

uint32_t lh_host_frame_route(const struct lh_host *h, uint64_t *rhash)
{
	if (!h->frame_bg)
		return 0;
	*rhash = h->bg.rhash;
	return h->bg.rdip;
}

static void host_send(struct lh_host *h, void *handle, uint32_t len)
{
	h->noise_drawn = false;
	h->t.ops->frame_send(h->t.ctx, handle, len);
}

void lh_send_now(struct lh_req *r, void *handle, uint32_t len)
{
	r->st.frames_sent++;
	host_send(r->comm->host, handle, len);
}

void lh_send_ctl(struct lh_req *r, void *handle, uint32_t len)
{
	r->st.frames_sent++;
	txq_push(&r->ctl, handle, len);
	lh_kick(r->comm->host);
}

void lh_req_timer(struct lh_req *r, lh_time_t at, uint64_t arg)
{
	struct lh_host *h = r->comm->host;

	h->t.ops->timer(h->t.ctx, at, LH_COOKIE(LH_T_REQ, r->slot, arg));
}

lh_time_t lh_backoff_retry(struct lh_req *r, lh_time_t base, unsigned tries, lh_time_t cap, uint64_t key)
{
	unsigned shift = tries < LH_BACKOFF_SHIFT ? tries : LH_BACKOFF_SHIFT;
	lh_time_t t = base << shift;

	if (cap < base)
		cap = base;
	if (t > cap || t >> shift != base)
		t = cap;
	if (!tries)
		return t;
	if (!r->jitter_key) {
		struct lh_host *h = r->comm->host;

		r->jitter_key = h->t.ops->random ? h->t.ops->random(h->t.ctx) | 1 : 1;
	}
	uint64_t x = r->jitter_key ^ key * 0x9e3779b97f4a7c15ULL ^ (uint64_t)tries << 56;

	/* t / 4 x [0, 1), in 1024 steps */
	return t + t / 4 / 1024 * (lh_rng_splitmix(&x) >> 54);
}

void lh_input_block(const struct lh_req *r, size_t off, int32_t *out, size_t n)
{
	if (r->in)
		memcpy(out, r->in + off, n * sizeof(*out));
	else if (r->cfg.input_block)
		r->cfg.input_block(r->cfg.input_arg, off, out, n);
	else
		for (size_t i = 0; i < n; i++)
			out[i] = r->cfg.input(r->cfg.input_arg, off + i);
}

void lh_output(struct lh_req *r, size_t off, const int32_t *data, size_t n)
{
	if (r->out)
		memcpy(r->out + off, data, n * sizeof(int32_t));
	else if (r->cfg.on_block)
		r->cfg.on_block(r->cfg.block_arg, off, data, n);
}

uint32_t lh_canary_frame(struct lh_req *r, uint8_t *buf, const struct lh_peer *to, const struct emu_canary_hdr *h,
			 const int32_t *data, unsigned nelem)
{
	uint32_t len = lh_wire_canary_build(buf, to ? to->mac : bcast_mac, r->comm->host->self.mac, h, data, nelem);

	buf[EMU_CANARY_FLAGS_OFF] = (uint8_t)((buf[EMU_CANARY_FLAGS_OFF] & ~EMU_CANARY_RUN_MASK) |
					      r->comm->host->run << EMU_CANARY_RUN_SHIFT);
	return len;
}

/* noise: does the next frame have to wait? */
static bool noise_hold(struct lh_host *h)
{
	lh_time_t now = h->t.ops->now(h->t.ctx);
	double p = 0;
	lh_time_t delay = LH_US;

	if (h->noise_until > now)
		return true;
	for (unsigned i = 0; i < h->ncomms; i++) {
		struct lh_req *r = h->reqs[i];

		if (r && !r->done && r->cfg.noise > p) {
			p = r->cfg.noise;
			delay = r->cfg.noise_delay ? r->cfg.noise_delay : LH_US;
		}
	}
	if (p <= 0 || h->noise_drawn)
		return false;
	h->noise_drawn = true;
	if ((double)(h->t.ops->random(h->t.ctx) >> 11) * (1.0 / 9007199254740992.0) >= p)
		return false;
	h->noise_until = now + delay;
	for (unsigned i = 0; i < h->ncomms; i++)
		if (h->comms[i]->req && !h->comms[i]->req->done) {
			h->comms[i]->req->st.noise_delays++;
			break;
		}
	h->t.ops->timer(h->t.ctx, h->noise_until, LH_COOKIE(LH_T_NOISE, 0, 0));
	return true;
}

static bool bg_pull(struct lh_host *h);
static bool bg_paced(const struct lh_bg *b);
static void bg_arrive(struct lh_host *h);

void lh_kick(struct lh_host *h)
{
	while (!h->t.ops->tx_busy(h->t.ctx)) {
		bool sent = false;

		/* control frames first, request by request */
		for (unsigned i = 0; i < h->ncomms && !sent; i++) {
			struct lh_req *r = h->reqs[i];

			if (r && r->ctl.n) {
				if (noise_hold(h))
					return;
				struct lh_txent e = txq_pop(&r->ctl);

				host_send(h, e.handle, e.len);
				sent = true;
			}
		}
		if (sent)
			continue;
		/* data, round robin over the requests */
		for (unsigned k = 0; k < h->ncomms && !sent; k++) {
			/* h->rr <= ncomms: (rr + k) mod ncomms without a division */
			unsigned i = h->rr + k >= h->ncomms ? h->rr + k - h->ncomms : h->rr + k;
			struct lh_req *r = h->reqs[i];

			if (!r || !r->ops->pull || r->done)
				continue;
			if (r->cfg.noise > 0 && noise_hold(h))
				return;
			if (r->ops->pull(r)) {
				h->rr = i + 1;
				sent = true;
			}
		}
		if (!sent && h->bg.on)
			sent = bg_pull(h);
		if (!sent)
			return;
	}
}

void lh_host_tx_ready(struct lh_host *h)
{
	lh_kick(h);
}

/* ---------- communicators, requests, barrier ---------- */

void lh_host_share_peers(struct lh_host *h)
{
	h->share_peers = true;
}

/* @peers itself when the host shares peer tables, else a copy */
static struct lh_peer *borrow_or_copy(const struct lh_host *h, const struct lh_peer *peers, unsigned n)
{
	if (h->share_peers)
		return (struct lh_peer *)peers;
	struct lh_peer *c = lh_xmalloc(n * sizeof(*peers));

	memcpy(c, peers, n * sizeof(*peers));
	return c;
}

struct lh_comm *lh_comm_create(struct lh_host *h, const struct lh_peer *peers, unsigned n, unsigned rank,
			       unsigned tenant)
{
	if (!h || !peers || n == 0 || n > 0xffff || rank >= n || tenant > 255 || h->ncomms == LH_MAX_REQS)
		return NULL;
	for (unsigned i = 0; i < h->ncomms; i++)
		if (h->comms[i]->tenant == tenant)
			return NULL;
	struct lh_comm *c = lh_xcalloc(1, sizeof(*c));

	c->host = h;
	c->peers = borrow_or_copy(h, peers, n);
	c->n = n;
	c->rank = rank;
	c->tenant = tenant;
	h->tenants[h->ncomms] = (uint8_t)tenant;
	h->reqs[h->ncomms] = NULL;
	h->comms[h->ncomms++] = c;
	return c;
}

static void send_done(struct lh_req *r, unsigned to, bool final)
{
	void *hd;
	uint8_t *buf = lh_frame(r, LH_CANARY_LEN(0), &hd);
	struct emu_canary_hdr ch = {
		.dst = r->comm->peers[to].ipv4, .id = lh_block_id(r, LH_DONE_SEQ),
		.counter = (uint16_t)(final ? r->P : 0), .hosts = (uint16_t)r->P, .children = r->rank,
		.flags = EMU_CANARY_OP_DONE | EMU_CANARY_F_BYPASS,
	};

	lh_send_ctl(r, hd, lh_canary_frame(r, buf, &r->comm->peers[to], &ch, NULL, 0));
}

static void req_finish(struct lh_req *r)
{
	struct lh_host *h = r->comm->host;

	if (r->done)
		return;
	r->done = true;
	r->st.done = lh_now(r);
	if (h->t.ops->done)
		h->t.ops->done(h->t.ctx, r);
}

static void barrier_check(struct lh_req *r)
{
	if (r->rank != 0 || r->done || !r->data_done || r->ndone_seen < r->P - 1)
		return;
	for (unsigned k = 1; k < r->P; k++)
		send_done(r, k, true);
	req_finish(r);
}

void lh_req_data_complete(struct lh_req *r)
{
	if (r->data_done)
		return;
	r->data_done = true;
	r->st.data_done = lh_now(r);
	if (r->P == 1) {
		req_finish(r);
		return;
	}
	if (r->rank == 0) {
		barrier_check(r);
		return;
	}
	send_done(r, 0, false);
	lh_req_timer(r, lh_now(r) + r->st.retx_timeout, LH_ARG_BARRIER);
}

static void barrier_rx(struct lh_req *r, const struct emu_canary_hdr *ch)
{
	if (ch->counter == ch->hosts) {
		/* everyone has the result */
		if (r->rank != 0 && r->data_done)
			req_finish(r);
		return;
	}
	if (r->rank != 0 || ch->children >= r->P)
		return;
	if (r->done) {
		send_done(r, ch->children, true);	/* it missed the final DONE */
		return;
	}
	if (!r->done_seen[ch->children]) {
		r->done_seen[ch->children] = 1;
		r->ndone_seen++;
	}
	barrier_check(r);
}

struct lh_req *lh_allreduce(struct lh_comm *c, const struct lh_ar_cfg *cfg, const int32_t *in, int32_t *out,
			    size_t count)
{
	const struct lh_algo_ops *ops;

	if (!c || !cfg || (c->req && !c->req->done) || cfg->dtype != LH_INT32 || cfg->op != LH_SUM ||
	    cfg->elements == 0 || cfg->elements > EMU_CANARY_MAX_ELEMENTS || (!in && !cfg->input && !cfg->input_block) ||
	    (!out && !cfg->on_block) || count == 0 || !(cfg->noise >= 0 && cfg->noise <= 1) ||
	    cfg->sketch > LH_SKETCH_MAX || (cfg->sketch && cfg->sketch >= cfg->elements))
		return NULL;
	if (cfg->retx_timeout && cfg->retx_timeout < lh_retx_timeout_min(cfg, c->host->t.rate_bps))
		return NULL;
	switch (cfg->algo) {
	case LH_ALGO_CANARY: ops = &lh_canary_ops; break;
	case LH_ALGO_STATIC: ops = &lh_canary_ops; break;	/* tree mode */
	case LH_ALGO_RING: ops = &lh_ring_ops; break;
	default: return NULL;
	}
	struct lh_host *h = c->host;
	struct lh_req *r = lh_xzalloc_lines(sizeof(*r));

	r->comm = c;
	r->ops = ops;
	r->cfg = *cfg;
	r->in = in;
	r->out = out;
	r->count = count;
	r->P = c->n;
	r->rank = c->rank;
	for (unsigned i = 0; i < h->ncomms; i++)
		if (h->comms[i] == c)
			r->slot = i;
	r->done_seen = lh_xcalloc(r->P, 1);
	r->st.start = lh_now(r);
	req_free(c->req);
	c->req = r;
	h->reqs[r->slot] = r;
	if (ops->start(r)) {
		c->req = NULL;
		h->reqs[r->slot] = NULL;
		req_free(r);
		return NULL;
	}
	lh_kick(h);
	return r;
}

lh_time_t lh_retx_timeout_min(const struct lh_ar_cfg *cfg, uint64_t rate_bps)
{
	if (!cfg || !rate_bps || cfg->elements == 0 || cfg->elements > EMU_CANARY_MAX_ELEMENTS)
		return 0;
	uint32_t bytes = cfg->algo == LH_ALGO_RING ? EMU_UDP_PAYLOAD_OFF + LH_RING_HDR + 4 * cfg->elements
						   : LH_CANARY_LEN(cfg->elements);

	return (lh_time_t)(lh_wire_bytes(bytes) * 8 * 1000000000000ULL / rate_bps);
}

size_t lh_allreduce_mem(const struct lh_ar_cfg *cfg, unsigned P, size_t count)
{
	const struct lh_algo_ops *ops;

	if (!cfg || P == 0 || count == 0 || cfg->elements == 0 || cfg->elements > EMU_CANARY_MAX_ELEMENTS ||
	    cfg->sketch > LH_SKETCH_MAX || (cfg->sketch && cfg->sketch >= cfg->elements))
		return 0;
	switch (cfg->algo) {
	case LH_ALGO_CANARY: ops = &lh_canary_ops; break;
	case LH_ALGO_STATIC: ops = &lh_canary_ops; break;
	case LH_ALGO_RING: ops = &lh_ring_ops; break;
	default: return 0;
	}
	/* the host, its communicator, the request and its completion barrier's record */
	return sizeof(struct lh_host) + sizeof(struct lh_comm) + sizeof(struct lh_req) + P + ops->mem(cfg, P, count);
}

bool lh_req_data_done(const struct lh_req *r)
{
	return r->data_done;
}

bool lh_req_done(const struct lh_req *r)
{
	return r->done;
}

const struct lh_ar_stats *lh_req_stats(const struct lh_req *r)
{
	return &r->st;
}

const char *lh_wait_name(unsigned what)
{
	static const char *const names[] = {
		[LH_WAIT_NONE] = "none", [LH_WAIT_SEND] = "send", [LH_WAIT_RESULT] = "result",
		[LH_WAIT_FALLBACK] = "fallback", [LH_WAIT_REISSUE] = "reissue", [LH_WAIT_CONTRIB] = "contributions",
		[LH_WAIT_PULL] = "pull", [LH_WAIT_RING] = "ring", [LH_WAIT_BARRIER] = "barrier",
	};

	return what < sizeof(names) / sizeof(names[0]) ? names[what] : "?";
}

void lh_req_wait(const struct lh_req *r, struct lh_ar_wait *w)
{
	*w = (struct lh_ar_wait){ .what = LH_WAIT_NONE, .block = UINT32_MAX, .peer = UINT32_MAX };
	if (r->done)
		return;
	if (!r->data_done) {
		r->ops->wait(r, w);
		return;
	}
	/* the barrier: rank 0 waits for every DONE, the others for rank 0's final one */
	w->what = LH_WAIT_BARRIER;
	w->tries = r->barrier_tries;
	w->peer = 0;
	if (r->rank == 0) {
		for (unsigned k = 1; k < r->P; k++)
			if (!r->done_seen[k]) {
				w->peer = k;
				break;
			}
		w->count = r->ndone_seen;
	}
}

/* ---------- dispatch ---------- */

static struct lh_req *req_of_tenant(struct lh_host *h, unsigned tenant)
{
	for (unsigned i = 0; i < h->ncomms; i++)
		if (h->tenants[i] == tenant)
			return h->reqs[i];
	return NULL;
}

void lh_host_rx(struct lh_host *h, const uint8_t *p, uint32_t len)
{
	uint16_t type = lh_wire_ethertype(p, len);

	if (type == EMU_ETHERTYPE_CANARY) {
		struct emu_canary_hdr ch;
		unsigned nelem;

		if (lh_wire_canary_parse(p, len, &ch, &nelem) != LH_WIRE_OK)
			return;
		if (ch.run != h->run) {
			h->other_run++;	/* a frame of another run: its id may name a block of this one */
			return;
		}
		struct lh_req *r = req_of_tenant(h, ch.id >> LH_TENANT_SHIFT);

		if (!r)
			return;
		r->st.frames_recv++;
		if ((ch.flags & EMU_CANARY_OP_MASK) == EMU_CANARY_OP_DONE) {
			barrier_rx(r, &ch);
			return;
		}
		if (r->ops->rx_canary)
			r->ops->rx_canary(r, p, len, &ch, nelem);	/* parsed once */
		else
			r->ops->rx(r, p, len);
		lh_kick(h);
		return;
	}
	int port = lh_wire_udp_dport(p, len);

	if (port == LH_RING_PORT && len > EMU_UDP_PAYLOAD_OFF) {
		if (len >= EMU_UDP_PAYLOAD_OFF + LH_RING_HDR && p[EMU_UDP_PAYLOAD_OFF + LH_RING_RUN] != h->run) {
			h->other_run++;
			return;
		}
		struct lh_req *r = req_of_tenant(h, p[EMU_UDP_PAYLOAD_OFF]);

		if (r && r->ops == &lh_ring_ops) {
			r->st.frames_recv++;
			r->ops->rx(r, p, len);
			lh_kick(h);
		}
		return;
	}
	if (port == LH_BG_PORT) {
		h->bg.st.frames_recv++;
		h->bg.st.bytes_recv += len;
	}
}

uint32_t lh_frame_data_len(const uint8_t *p, uint32_t len)
{
	/* a Canary frame is all data: told from its EtherType without a call */
	if (len > EMU_UDP_PAYLOAD_OFF + LH_BG_DATA && lh_wire_ethertype(p, len) == EMU_ETHERTYPE_IPV4 &&
	    lh_wire_udp_dport(p, len) == LH_BG_PORT)
		return EMU_UDP_PAYLOAD_OFF + LH_BG_DATA;
	return len;
}

void lh_host_timer(struct lh_host *h, uint64_t cookie)
{
	switch (LH_COOKIE_KIND(cookie)) {
	case LH_T_NOISE:
		lh_kick(h);
		break;
	case LH_T_REQ: {
		unsigned slot = LH_COOKIE_SLOT(cookie);
		struct lh_req *r = slot < h->ncomms ? h->reqs[slot] : NULL;

		if (!r)
			break;
		if (LH_COOKIE_ARG(cookie) == LH_ARG_BARRIER) {
			/* data_done: the timer may be a previous request's on this communicator */
			if (!r->done && r->rank != 0 && r->data_done) {
				send_done(r, 0, false);
				/* backing off up to 8 timeouts: rank 0 answers only once every host is done */
				if (r->barrier_tries < 255)
					r->barrier_tries++;
				lh_req_timer(r, lh_now(r) + lh_backoff(r, r->st.retx_timeout, r->barrier_tries,
									 8 * r->st.retx_timeout, LH_ARG_BARRIER),
					     LH_ARG_BARRIER);
			}
		} else if (r->ops->timer_idle && r->ops->timer_idle(r, LH_COOKIE_ARG(cookie))) {
			break;	/* idle: not even the kick (see lh_host_timer_idle()) */
		} else if (r->ops->timer) {
			r->ops->timer(r, LH_COOKIE_ARG(cookie));
		}
		lh_kick(h);
		break;
	}
	case LH_T_BG:
		if (bg_paced(&h->bg) && h->bg.on)
			bg_arrive(h);
		lh_kick(h);
		break;
	default:
		break;
	}
}

bool lh_host_timer_idle(const struct lh_host *h, uint64_t cookie)
{
	unsigned slot = LH_COOKIE_SLOT(cookie);
	const struct lh_req *r;

	if (LH_COOKIE_KIND(cookie) != LH_T_REQ || slot >= h->ncomms || LH_COOKIE_ARG(cookie) == LH_ARG_BARRIER)
		return false;
	r = h->reqs[slot];	/* comms[slot]->req without reading the comm */
	return r && r->ops->timer_idle && r->ops->timer_idle(r, LH_COOKIE_ARG(cookie));
}

/* ---------- background traffic ---------- */

static bool bg_paced(const struct lh_bg *b)
{
	return b->load > 0 && b->load < 1;
}

static uint32_t bg_payload_max(const struct lh_host *h)
{
	return (h->t.mtu ? h->t.mtu : 1500) - EMU_IPV4_HLEN - EMU_UDP_HLEN;
}

/* wire bytes of one message: its payload, then per frame the headers and the wire overhead (a short last frame padded) */
static uint64_t bg_msg_wire(const struct lh_host *h)
{
	uint64_t pm = bg_payload_max(h), m = h->bg.msg_bytes;
	uint64_t frames = (m + pm - 1) / pm;
	uint64_t last = m - (frames - 1) * pm;

	return (frames - 1) * lh_wire_bytes(EMU_UDP_PAYLOAD_OFF + pm) + lh_wire_bytes(EMU_UDP_PAYLOAD_OFF + last);
}

/* draw the gap to the next arrival (exponential, mean wire time / load) and arm its timer */
static void bg_arm(struct lh_host *h)
{
	struct lh_bg *b = &h->bg;
	uint64_t x = lh_hash64(b->seed ^ lh_hash64(((uint64_t)b->me + 1) << 32 ^ b->arrivals));
	double u = ((double)(x >> 11) + 0.5) * (1.0 / 9007199254740992.0);	/* (0, 1) */
	double mean = (double)bg_msg_wire(h) * 8 * 1e12 / (double)h->t.rate_bps / b->load;

	b->next_arrival += (lh_time_t)(-lh_ln(u) * mean);
	if (b->until && b->next_arrival >= b->until)
		return;
	h->t.ops->timer(h->t.ctx, b->next_arrival, LH_COOKIE(LH_T_BG, 0, 0));
}

/* a message arrived (LH_T_BG): it queues, and the next one is drawn */
static void bg_arrive(struct lh_host *h)
{
	struct lh_bg *b = &h->bg;

	b->pending++;
	b->arrivals++;
	b->st.wire_bytes_offered += bg_msg_wire(h);
	bg_arm(h);
}

int lh_host_background(struct lh_host *h, const struct lh_peer *peers, unsigned n, unsigned me,
		       enum lh_bg_pattern pattern, uint64_t seed, uint64_t msg_bytes, lh_time_t until)
{
	if (!h || !peers || n < 2 || me >= n || msg_bytes == 0 || pattern > LH_BG_RANDOM)
		return -EINVAL;
	h->bg.peers = borrow_or_copy(h, peers, n);
	h->bg.n = n;
	h->bg.me = me;
	h->bg.pattern = pattern;
	h->bg.seed = seed;
	h->bg.round = 0;
	h->bg.msg_bytes = msg_bytes;
	h->bg.until = until;
	h->bg.left = 0;
	h->bg.on = true;
	h->bg.pending = 0;
	h->bg.arrivals = 0;
	if (!h->bg.full)
		h->bg.full = lh_xmalloc(sizeof(*h->bg.full));
	lh_wire_udp_tmpl_init(h->bg.full, h->self.mac, h->self.ipv4, LH_BG_PORT, LH_BG_PORT, bg_payload_max(h));
	if (bg_paced(&h->bg)) {
		/* hosts are not phase-locked: the first message comes after a gap of its own */
		h->bg.next_arrival = h->t.ops->now(h->t.ctx);
		bg_arm(h);
		return 0;
	}
	lh_kick(h);
	return 0;
}

int lh_host_background_load(struct lh_host *h, double load)
{
	if (!h || !(load > 0 && load <= 1))
		return -EINVAL;
	h->bg.load = load;
	return 0;
}

int lh_host_background_volume(struct lh_host *h, uint64_t bytes)
{
	if (!h)
		return -EINVAL;
	h->bg.volume = bytes;
	return 0;
}

const struct lh_bg_stats *lh_host_bg_stats(const struct lh_host *h)
{
	return &h->bg.st;
}

/* steps of the round's shuffle kept on the stack; more hosts take the heap */
#define LH_BG_STEPS_STACK 1024

/*
 * Round orders shared by the hosts of one thread. Where many hosts run in
 * one process (lh_host_share_peers: an emulator), every host of a group
 * asks for the same rounds, each a little after the others: a round's
 * successor table is built in full once (n steps) and each host reads its
 * entry, instead of each host following its position (n / 2 steps on
 * average, per host and message). The last BG_ORDERS rounds a thread
 * asked for are remembered; per thread, so hosts on other threads never
 * wait. A round is built only when asked for a second time while
 * remembered: where hosts' rounds drift far apart (paced background), a
 * table built on the first request would seldom be read again, and the
 * first request takes the walk.
 */
#define BG_ORDERS 16

struct bg_order {
	uint64_t seed, round;	/* the key, with n */
	unsigned n;		/* 0: unused */
	unsigned cap;		/* entries succ has room for */
	bool built;		/* succ holds the round's table (else asked for once) */
	uint64_t last;		/* the cache's clock when last asked for */
	uint32_t *succ;		/* n entries: each host's successor */
};

struct bg_orders {
	struct bg_order o[BG_ORDERS];
	uint32_t *scratch;	/* n entries: the order being built */
	unsigned scratch_n;
	uint64_t clock;
};

static pthread_key_t bg_orders_key;
static pthread_once_t bg_orders_once = PTHREAD_ONCE_INIT;
static bool bg_orders_ok;

static void bg_orders_free(void *arg)
{
	struct bg_orders *c = arg;

	for (unsigned i = 0; i < BG_ORDERS; i++)
		free(c->o[i].succ);
	free(c->scratch);
	free(c);
}

static void bg_orders_init(void)
{
	bg_orders_ok = pthread_key_create(&bg_orders_key, bg_orders_free) == 0;
}

/* the hash chain of round @round's shuffle: its start, then step i's j_i <= i (i from n-1 down) */
static inline uint64_t bg_round_start(uint64_t seed, uint64_t round)
{
	return lh_hash64(seed ^ (round + 1) * 0x9e3779b97f4a7c15ULL);
}

static inline unsigned bg_step(uint64_t *x, unsigned i)
{
	*x = lh_hash64(*x + i);
	return (unsigned)(((__uint128_t)*x * (i + 1)) >> 64);
}

/* round @round's cyclic order of @n hosts from @seed, in full: the successor of every host */
static void bg_order_build(uint64_t seed, uint64_t round, unsigned n, uint32_t *a, uint32_t *succ)
{
	uint64_t x = bg_round_start(seed, round);

	for (unsigned i = 0; i < n; i++)
		a[i] = i;
	for (unsigned i = n - 1; i > 0; i--) {
		unsigned j = bg_step(&x, i);
		uint32_t t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
	for (unsigned i = 0; i + 1 < n; i++)
		succ[a[i]] = a[i + 1];
	succ[a[n - 1]] = a[0];
}

/* make *@a (room for *@cap) hold @n entries; false (unchanged) if there is no memory */
static bool u32_room(uint32_t **a, unsigned *cap, unsigned n)
{
	if (*cap >= n)
		return true;
	uint32_t *b = realloc(*a, n * sizeof(*b));

	if (!b)
		return false;
	*a = b;
	*cap = n;
	return true;
}

/* this thread's successor table of round @round (n >= 2), or NULL: take the walk (first request, no memory) */
static const uint32_t *bg_order_shared(uint64_t seed, uint64_t round, unsigned n)
{
	pthread_once(&bg_orders_once, bg_orders_init);
	if (!bg_orders_ok)
		return NULL;
	struct bg_orders *c = pthread_getspecific(bg_orders_key);

	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c || pthread_setspecific(bg_orders_key, c)) {
			free(c);
			return NULL;
		}
	}
	struct bg_order *old = &c->o[0], *o = NULL;

	c->clock++;
	for (unsigned i = 0; i < BG_ORDERS; i++) {
		if (c->o[i].n == n && c->o[i].round == round && c->o[i].seed == seed) {
			o = &c->o[i];
			break;
		}
		if (c->o[i].last < old->last)
			old = &c->o[i];
	}
	if (!o) {
		/* first request: remember it in the least recently asked for, take the walk */
		old->seed = seed;
		old->round = round;
		old->n = n;
		old->built = false;
		old->last = c->clock;
		return NULL;
	}
	o->last = c->clock;
	if (o->built)
		return o->succ;
	/* second request: build it */
	if (!u32_room(&c->scratch, &c->scratch_n, n) || !u32_room(&o->succ, &o->cap, n))
		return NULL;
	bg_order_build(seed, round, n, c->scratch, o->succ);
	o->built = true;
	return o->succ;
}

/*
 * The peer of the next message (the walk; bg_order_shared() above for
 * hosts sharing peer tables). Round k's cyclic order of all hosts, the
 * same on every host, is the Fisher-Yates shuffle of 0..n-1 drawn from
 * @seed and k: step i (n-1 down to 1) swaps positions i and j_i <= i, and
 * position i is final from then on. The peer is the host at the position
 * after this host's, found without building the order (which cost n words
 * written, swapped and searched per message, the most of a background
 * host's work): this host's position is followed through the steps until
 * it is final, at step q (half way, on average); the host at final
 * position q + 1 is what steps n-1..q+2 had left at position j_{q+1}, so
 * undoing those steps, step q+2 first, names it. Only a host that ends at
 * position n - 1 needs every step (its successor is at position 0).
 */
static unsigned bg_next_peer(struct lh_host *h, struct lh_bg *b)
{
	if (b->pattern == LH_BG_RANDOM) {
		unsigned p;

		do
			p = (unsigned)(((__uint128_t)h->t.ops->random(h->t.ctx) * b->n) >> 64);
		while (p == b->me);
		return p;
	}
	if (h->share_peers && b->n >= 2) {
		const uint32_t *succ = bg_order_shared(b->seed, b->round, b->n);

		if (succ) {
			b->round++;
			return succ[b->me];
		}
	}
	uint64_t x = bg_round_start(b->seed, b->round++);
	unsigned n = b->n, pos = b->me, i;
	uint32_t stack[LH_BG_STEPS_STACK];
	uint32_t *js = n <= LH_BG_STEPS_STACK ? stack : lh_xmalloc(n * sizeof(*js));

	for (i = n - 1; i > 0; i--) {
		unsigned j = bg_step(&x, i);

		js[i] = j;
		if (pos == i)
			pos = j;
		else if (pos == j)
			pos = i;
		if (pos == i)
			break;	/* final: this host is at position i */
	}
	/* i is this host's final position (0 when the loop ran out) */
	unsigned from = i + 1, y;

	if (from == n) {
		/* the successor is at position 0: every step counts */
		while (--i > 0) {
			js[i] = bg_step(&x, i);
		}
		y = 0;
		from = 1;
	} else {
		y = js[from++];
	}
	for (unsigned k = from; k < n; k++) {
		if (y == k)
			y = js[k];
		else if (y == js[k])
			y = k;
	}
	if (js != stack)
		free(js);
	return y;
}

static bool bg_pull(struct lh_host *h)
{
	struct lh_bg *b = &h->bg;
	lh_time_t now = h->t.ops->now(h->t.ctx);

	if (b->until && now >= b->until)
		return false;
	if (b->left == 0) {
		if (b->volume && b->st.messages * b->msg_bytes >= b->volume)
			return false;
		if (bg_paced(b)) {
			if (!b->pending)
				return false;
			b->pending--;
		}
		b->peer = bg_next_peer(h, b);
		b->rdip = b->peers[b->peer].ipv4;
		b->rhash = lh_hash64(lh_wire_flow_hash(b->rdip, h->self.ipv4, (uint32_t)LH_BG_PORT << 16 | LH_BG_PORT));
		b->left = b->msg_bytes;
		b->st.messages++;
	}
	uint64_t payload_max = bg_payload_max(h);
	uint32_t payload = (uint32_t)(b->left < payload_max ? b->left : payload_max);
	void *hd;

	h->frame_bg = true;	/* its route is known: lh_host_frame_route(), until it is sent */
	uint8_t *buf = host_frame(h, EMU_UDP_PAYLOAD_OFF + LH_BG_DATA, &hd);	/* the rest is padding */
	const struct lh_peer *to = &b->peers[b->peer];
	/* a full frame from the headers set at the start; a message's shorter last one built */
	uint32_t len = payload == payload_max ? lh_wire_udp_tmpl_put(buf, b->full, to->mac, to->ipv4)
		: lh_wire_udp(buf, to->mac, h->self.mac, h->self.ipv4, to->ipv4, LH_BG_PORT, LH_BG_PORT, payload);

	if (payload >= LH_BG_DATA)
		memset(buf + EMU_UDP_PAYLOAD_OFF, 0, LH_BG_DATA);	/* a constant size: two stores, no call */
	else
		memset(buf + EMU_UDP_PAYLOAD_OFF, 0, payload);
	b->left -= payload;
	b->st.frames_sent++;
	b->st.bytes_sent += len;
	b->st.wire_bytes_sent += lh_wire_bytes(len);
	host_send(h, hd, len);
	h->frame_bg = false;
	return true;
}
