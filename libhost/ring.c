// SPDX-License-Identifier: MIT
/*
 * DOC: ring.c - bandwidth-optimal ring allreduce over ordinary UDP frames.
 *
 * The P ranks form a ring (rank r sends to r+1). The data is cut into P
 * chunks; chunk c = [c*count/P, (c+1)*count/P) travels in packets of
 * `elements`. Steps 0..P-2 are the reduce-scatter: at step s rank r sends
 * chunk (r - s) mod P, and a packet of step s received from r-1 is added
 * to this rank's input and forwarded as step s+1; at step P-2 the sum is
 * final (chunk (r+1) mod P is reduced here) and starts the allgather,
 * steps P-1..2P-3, where packets are stored and forwarded. Everything is
 * pipelined per packet: a host forwards a packet as soon as it has it.
 *
 * Payload: tenant (1) | kind (1) | step (2) | packet (4) | chunk (4) |
 * count (2) | pad (2) | data. With `reliable`, a sender keeps what it sent
 * per (step, packet); a receiver that made no progress for a
 * retransmission timeout names its first missing packets in a NACK to its
 * predecessor, which sends them again.
 */
#include <stdlib.h>
#include <string.h>

#include "libhost/lh_util.h"
#include "libhost/lh_internal.h"

#define RING_HDR LH_RING_HDR
#define RING_DATA 1
#define RING_NACK 2
#define RING_NACK_MAX 32

struct ring_out {
	uint16_t step;
	uint32_t pkt;
};

struct ring {
	unsigned E;
	size_t maxpk;			/* packets in the largest chunk */
	uint8_t *got;			/* [step][pkt]: received */
	uint8_t *final;			/* [chunk][pkt]: result stored */
	size_t nfinal, want_final;
	size_t step0_next;		/* next packet of our own step-0 chunk */
	struct ring_out *q;		/* packets to forward (data taken from fwd) */
	int32_t *fwd;			/* [slot] forward payloads */
	size_t qhead, qn, qcap;
	int32_t **sent;			/* reliable: [step] -> maxpk x E */
	uint8_t *sentflag;		/* reliable: [step][pkt] is in sent[] */
	uint64_t progress, last_progress;
	unsigned nack_tries;		/* NACKs since the last progress (lh_backoff) */
	lh_time_t nack_min;		/* a NACK's answer takes at least this long (ring_start) */
	int32_t buf[EMU_CANARY_MAX_ELEMENTS];
};

static size_t chunk_lo(const struct lh_req *r, size_t c)
{
	/* a 64-bit division when the product fits (it always does below 2^32 elements): no __udivti3 call */
	if ((c | r->count) <= UINT32_MAX)
		return (size_t)((uint64_t)c * r->count / r->P);
	return (size_t)((unsigned __int128)c * r->count / r->P);
}

static size_t chunk_pkts(const struct lh_req *r, const struct ring *g, size_t c)
{
	size_t len = chunk_lo(r, c + 1) - chunk_lo(r, c);

	return (len + g->E - 1) / g->E;
}

static size_t pkt_len(const struct lh_req *r, const struct ring *g, size_t c, size_t k)
{
	size_t lo = chunk_lo(r, c) + k * g->E, hi = chunk_lo(r, c + 1);

	return hi - lo < g->E ? hi - lo : g->E;
}

static unsigned steps(const struct lh_req *r)
{
	return 2 * (r->P - 1);
}

/* chunk that rank @rank sends at step @s */
static size_t chunk_sent(const struct lh_req *r, unsigned rank, unsigned s)
{
	return (size_t)((rank + r->P - s % r->P) % r->P);
}

/*
 * Ethernet/IPv4/UDP to @to, marked with a DSCP (a traffic class for
 * --priority): EMU_DSCP_RECOVERY for the recovery (a NACK, data sent
 * again), EMU_DSCP_COLLECTIVE for the rest.
 */
static uint32_t ring_udp(const struct lh_req *r, uint8_t *buf, const struct lh_peer *to, uint32_t payload,
			 bool recovery)
{
	return lh_wire_udp_dscp(buf, to->mac, r->comm->host->self.mac, r->comm->host->self.ipv4, to->ipv4,
				LH_RING_PORT, LH_RING_PORT, payload, recovery ? EMU_DSCP_RECOVERY : EMU_DSCP_COLLECTIVE);
}

static void emit(struct lh_req *r, struct ring *g, unsigned s, size_t k, const int32_t *data, bool ctl)
{
	unsigned next = (r->rank + 1) % r->P;
	const struct lh_peer *to = &r->comm->peers[next];
	size_t c = chunk_sent(r, r->rank, s);
	size_t n = pkt_len(r, g, c, k);
	void *hd;
	uint8_t *buf = lh_frame(r, (uint32_t)(EMU_UDP_PAYLOAD_OFF + RING_HDR + 4 * n), &hd);
	uint32_t len = ring_udp(r, buf, to, (uint32_t)(RING_HDR + 4 * n), ctl);
	uint8_t *p = buf + EMU_UDP_PAYLOAD_OFF;

	p[0] = (uint8_t)r->comm->tenant;
	p[1] = RING_DATA;
	emu_put16(p + 2, (uint16_t)s);
	emu_put32(p + 4, (uint32_t)k);
	emu_put32(p + 8, (uint32_t)c);
	emu_put16(p + 12, (uint16_t)n);
	p[LH_RING_RUN] = r->comm->host->run;
	p[15] = 0;
	lh_wire_put_elems(p + RING_HDR, data, n);
	if (r->cfg.reliable) {
		if (!g->sent[s])
			g->sent[s] = lh_xmalloc(g->maxpk * g->E * sizeof(int32_t));
		memcpy(g->sent[s] + k * g->E, data, n * sizeof(int32_t));
		g->sentflag[(size_t)s * g->maxpk + k] = 1;
	}
	if (ctl)
		lh_send_ctl(r, hd, len);
	else
		lh_send_now(r, hd, len);
}

static void enqueue(struct ring *g, unsigned s, size_t k, const int32_t *data, size_t n, unsigned E)
{
	if (g->qn == g->qcap) {
		size_t ncap = g->qcap ? 2 * g->qcap : 64;
		struct ring_out *q = lh_xmalloc(ncap * sizeof(*q));
		int32_t *f = lh_xmalloc(ncap * E * sizeof(int32_t));

		for (size_t i = 0; i < g->qn; i++) {
			size_t j = (g->qhead + i) % g->qcap;

			q[i] = g->q[j];
			memcpy(f + i * E, g->fwd + j * E, E * sizeof(int32_t));
		}
		free(g->q);
		free(g->fwd);
		g->q = q;
		g->fwd = f;
		g->qhead = 0;
		g->qcap = ncap;
	}
	size_t j = (g->qhead + g->qn) % g->qcap;

	g->q[j] = (struct ring_out){ (uint16_t)s, (uint32_t)k };
	memcpy(g->fwd + j * E, data, n * sizeof(int32_t));
	g->qn++;
}

static bool ring_pull(struct lh_req *r)
{
	struct ring *g = r->algo;

	if (g->qn) {
		size_t j = g->qhead;

		g->qhead = (g->qhead + 1) % g->qcap;
		g->qn--;
		emit(r, g, g->q[j].step, g->q[j].pkt, g->fwd + j * g->E, false);
		return true;
	}
	size_t c = r->rank;

	if (r->P > 1 && g->step0_next < chunk_pkts(r, g, c)) {
		size_t k = g->step0_next++;
		size_t lo = chunk_lo(r, c) + k * g->E, n = pkt_len(r, g, c, k);

		lh_input_block(r, lo, g->buf, n);
		emit(r, g, 0, k, g->buf, false);
		return true;
	}
	return false;
}

static void store_final(struct lh_req *r, struct ring *g, size_t c, size_t k, const int32_t *data, size_t n)
{
	uint8_t *f = &g->final[c * g->maxpk + k];

	if (*f)
		return;
	*f = 1;
	lh_output(r, chunk_lo(r, c) + k * g->E, data, n);
	if (++g->nfinal == g->want_final)
		lh_req_data_complete(r);
}

static void ring_data(struct lh_req *r, struct ring *g, const uint8_t *p, uint32_t plen)
{
	unsigned s = emu_get16(p + 2);
	size_t k = emu_get32(p + 4), c = emu_get32(p + 8), n = emu_get16(p + 12);
	unsigned prev = (r->rank + r->P - 1) % r->P;

	if (s >= steps(r) || c != chunk_sent(r, prev, s) || k >= chunk_pkts(r, g, c) || n != pkt_len(r, g, c, k) ||
	    plen < RING_HDR + 4 * n) {
		r->st.errors++;
		return;
	}
	uint8_t *got = &g->got[(size_t)s * g->maxpk + k];

	if (*got) {
		r->st.duplicates++;
		return;
	}
	*got = 1;
	g->progress++;
	size_t lo = chunk_lo(r, c) + k * g->E;

	if (s < r->P - 1) {
		lh_input_block(r, lo, g->buf, n);
		lh_wire_add_elems(g->buf, p + RING_HDR, n);
	} else {
		lh_wire_get_elems(g->buf, p + RING_HDR, n);
	}
	if (s < r->P - 1) {
		if (s == r->P - 2)
			store_final(r, g, c, k, g->buf, n);
	} else {
		store_final(r, g, c, k, g->buf, n);
	}
	if (s + 1 < steps(r))
		enqueue(g, s + 1, k, g->buf, n, g->E);
}

static void ring_nack_rx(struct lh_req *r, struct ring *g, const uint8_t *p, uint32_t plen)
{
	unsigned cnt = emu_get16(p + 12);

	if (!r->cfg.reliable || plen < RING_HDR + 8 * cnt)
		return;
	for (unsigned i = 0; i < cnt; i++) {
		unsigned s = emu_get32(p + RING_HDR + 8 * i);
		size_t k = emu_get32(p + RING_HDR + 8 * i + 4);

		/* only what we already sent (the successor may ask early) */
		if (s >= steps(r) || k >= g->maxpk || !g->sentflag[(size_t)s * g->maxpk + k])
			continue;
		/*
		 * A bound on what NACKs queue here: the successor asks
		 * again if this answer is not enough, and a NACK per short
		 * timeout (each naming RING_NACK_MAX packets) would grow
		 * the control queue faster than the link drains it.
		 */
		if (r->ctl.n >= 2 * RING_NACK_MAX)
			break;
		r->st.retx_served++;
		emit(r, g, s, k, g->sent[s] + k * g->E, true);
	}
}

static void ring_rx(struct lh_req *r, const uint8_t *p, uint32_t len)
{
	struct ring *g = r->algo;

	if (len < EMU_UDP_PAYLOAD_OFF + RING_HDR)
		return;
	const uint8_t *pl = p + EMU_UDP_PAYLOAD_OFF;
	uint32_t plen = len - EMU_UDP_PAYLOAD_OFF;

	if (pl[1] == RING_DATA)
		ring_data(r, g, pl, plen);
	else if (pl[1] == RING_NACK)
		ring_nack_rx(r, g, pl, plen);
}

static void ring_timer(struct lh_req *r, uint64_t arg)
{
	struct ring *g = r->algo;
	unsigned prev = (r->rank + r->P - 1) % r->P;

	(void)arg;
	if (r->data_done)
		return;
	if (g->progress != g->last_progress)
		g->nack_tries = 0;
	if (g->progress == g->last_progress) {
		/* stalled: ask the predecessor for what is missing */
		uint32_t pairs[2 * RING_NACK_MAX];
		unsigned cnt = 0;

		for (unsigned s = 0; s < steps(r) && cnt < RING_NACK_MAX; s++) {
			size_t c = chunk_sent(r, prev, s), np = chunk_pkts(r, g, c);

			for (size_t k = 0; k < np && cnt < RING_NACK_MAX; k++)
				if (!g->got[(size_t)s * g->maxpk + k]) {
					pairs[2 * cnt] = s;
					pairs[2 * cnt + 1] = (uint32_t)k;
					cnt++;
				}
		}
		if (cnt) {
			const struct lh_peer *to = &r->comm->peers[prev];
			void *hd;
			uint8_t *buf = lh_frame(r, EMU_UDP_PAYLOAD_OFF + RING_HDR + 8 * cnt, &hd);
			uint32_t len = ring_udp(r, buf, to, RING_HDR + 8 * cnt, true);
			uint8_t *p = buf + EMU_UDP_PAYLOAD_OFF;

			memset(p, 0, RING_HDR);
			p[0] = (uint8_t)r->comm->tenant;
			p[1] = RING_NACK;
			p[LH_RING_RUN] = r->comm->host->run;
			emu_put16(p + 12, (uint16_t)cnt);
			for (unsigned i = 0; i < cnt; i++) {
				emu_put32(p + RING_HDR + 8 * i, pairs[2 * i]);
				emu_put32(p + RING_HDR + 8 * i + 4, pairs[2 * i + 1]);
			}
			r->st.nacks++;
			lh_send_ctl(r, hd, len);
			if (g->nack_tries < 255)
				g->nack_tries++;
		}
	}
	g->last_progress = g->progress;
	/*
	 * After a NACK, the next check comes once its answer can have come
	 * (nack_min): with a timeout shorter than that, every check found
	 * no progress yet and asked for the same packets again. A NACK
	 * after progress is followed by one such check; a NACK without
	 * progress since the last one backs off (lh_backoff from the second
	 * on, up to 64 checks' time); progress starts afresh. Doubling from
	 * the first NACK on would put the check after every recovery twice
	 * as far: at 0.5 % loss and more, where most steps lose a packet,
	 * the next stall would be found that much later.
	 */
	lh_time_t t = r->st.retx_timeout;

	if (g->nack_tries && t < g->nack_min)
		t = g->nack_min;
	lh_req_timer(r, lh_now(r) + lh_backoff(r, t, g->nack_tries ? g->nack_tries - 1u : 0, t << LH_BACKOFF_SHIFT, 0),
		     0);
}

/* ring_wait - the first step with a packet missing from the predecessor */
static void ring_wait(const struct lh_req *r, struct lh_ar_wait *w)
{
	const struct ring *g = r->algo;
	unsigned prev = (r->rank + r->P - 1) % r->P;

	w->what = LH_WAIT_RING;
	w->peer = prev;
	w->tries = g->nack_tries;
	w->blocks_left = (uint32_t)(g->want_final - g->nfinal);
	for (unsigned s = 0; s < steps(r); s++) {
		size_t c = chunk_sent(r, prev, s), np = chunk_pkts(r, g, c);

		for (size_t k = 0; k < np; k++)
			if (!g->got[(size_t)s * g->maxpk + k]) {
				w->block = s;
				return;
			}
	}
}

static int ring_start(struct lh_req *r)
{
	struct ring *g = lh_xcalloc(1, sizeof(*g));
	lh_time_t ft = (lh_time_t)(lh_wire_bytes(EMU_UDP_PAYLOAD_OFF + RING_HDR + 4 * r->cfg.elements) * 8 *
				   1000000000000ULL / r->comm->host->t.rate_bps);
	uint32_t mtu = r->comm->host->t.mtu ? r->comm->host->t.mtu : 1500;

	if (EMU_IPV4_HLEN + EMU_UDP_HLEN + RING_HDR + 4 * r->cfg.elements > mtu) {
		free(g);
		return -1;
	}
	g->E = r->cfg.elements;
	r->algo = g;
	for (size_t c = 0; c < r->P; c++) {
		size_t np = chunk_pkts(r, g, c);

		if (np > g->maxpk)
			g->maxpk = np;
		g->want_final += np;
	}
	if (g->maxpk == 0)
		g->maxpk = 1;
	if (r->P > 1) {
		g->got = lh_xcalloc((size_t)steps(r) * g->maxpk, 1);
		g->sent = lh_xcalloc(steps(r), sizeof(*g->sent));
		g->sentflag = lh_xcalloc((size_t)steps(r) * g->maxpk, 1);
	}
	g->final = lh_xcalloc((size_t)r->P * g->maxpk, 1);
	r->st.window = 0;
	r->st.retx_timeout = r->cfg.retx_timeout ? r->cfg.retx_timeout : 2 * r->cfg.rtt + 64 * ft;
	/* a round trip and the RING_NACK_MAX packets a NACK asks for */
	g->nack_min = 2 * r->cfg.rtt + (RING_NACK_MAX + 1) * ft;
	if (r->P == 1) {
		/* alone: the input is the result */
		for (size_t k = 0; k < chunk_pkts(r, g, 0); k++) {
			size_t n = pkt_len(r, g, 0, k);

			lh_input_block(r, k * g->E, g->buf, n);
			store_final(r, g, 0, k, g->buf, n);
		}
		return 0;
	}
	if (r->cfg.reliable)
		lh_req_timer(r, lh_now(r) + r->st.retx_timeout, 0);
	return 0;
}

static void ring_fini(struct lh_req *r)
{
	struct ring *g = r->algo;

	if (!g)
		return;
	if (g->sent)
		for (unsigned s = 0; s < steps(r); s++)
			free(g->sent[s]);
	free(g->sent);
	free(g->sentflag);
	free(g->got);
	free(g->final);
	free(g->q);
	free(g->fwd);
	free(g);
	r->algo = NULL;
}

/*
 * What ring_start() allocates, and with `reliable` the copies of every
 * step's packets, all kept until the request ends (2 (P - 1) steps of the
 * largest chunk: about twice the data).
 */
static size_t ring_mem(const struct lh_ar_cfg *cfg, unsigned P, size_t count)
{
	size_t E = cfg->elements, chunk = (count + P - 1) / P, maxpk = (chunk + E - 1) / E, steps = 2 * (size_t)(P - 1);
	size_t m;

	if (maxpk == 0)
		maxpk = 1;
	m = sizeof(struct ring) + (size_t)P * maxpk;
	if (P > 1)
		m += 2 * steps * maxpk + steps * sizeof(int32_t *);
	if (P > 1 && cfg->reliable)
		m += steps * maxpk * E * sizeof(int32_t);
	return m;
}

const struct lh_algo_ops lh_ring_ops = {
	.name = "ring",
	.start = ring_start,
	.pull = ring_pull,
	.rx = ring_rx,
	.timer = ring_timer,
	.fini = ring_fini,
	.mem = ring_mem,
	.wait = ring_wait,
};
