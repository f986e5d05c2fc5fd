// SPDX-License-Identifier: MIT
/*
 * DOC: loopback.c - the smallest complete user of libcanaryhost: N hosts in
 * one process, joined by an ideal wire, run one ring allreduce and check
 * the exact sum on every host.
 *
 * Build against an installed library:
 *
 *     cc -o loopback loopback.c $(pkg-config --cflags --libs canaryhost)
 *     ./loopback [HOSTS [ELEMENTS]]
 *
 * It shows the transport contract of canary_host.h with nothing else
 * around it: the transport owns the clock, the timers and the NIC; libhost
 * owns the protocol. Here the "NIC" of each host sends one frame at a time
 * at 100 Gbit/s and a frame reaches its destination 1 us after its last
 * bit left; the destination is the IPv4 address in the frame (the Canary
 * header's destination for EtherType 0x88B5, the IPv4 header's for UDP),
 * which is all a switch without in-network reduction would look at. The
 * ring algorithm needs no switch program, so this wire is enough.
 *
 * Events (frame arrivals, timers, "NIC idle again") are kept in time order
 * in a small array; ties go in the order they were scheduled, so every run
 * is the same. Exit status 0 when every host holds the exact sum.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <canary_host.h>

#define MAX_HOSTS 64
#define RATE_BPS 100000000000ULL	/* 100 Gbit/s */
#define LATENCY (1 * LH_US)

enum ev_kind { EV_FRAME, EV_TIMER, EV_TX_READY };

struct event {
	lh_time_t at;
	uint64_t seq;		/* scheduling order, for ties */
	enum ev_kind kind;
	unsigned host;
	uint64_t cookie;	/* EV_TIMER */
	uint8_t *frame;		/* EV_FRAME */
	uint32_t len;
};

struct nic {
	struct lh_host *host;
	lh_time_t busy_until;	/* the last frame's last bit leaves then */
	uint64_t rng;
	unsigned index;
	struct world *w;
};

struct world {
	lh_time_t now;
	struct event *ev;
	size_t nev, cap;
	uint64_t seq;
	struct nic nic[MAX_HOSTS];
	struct lh_peer peer[MAX_HOSTS];
	unsigned n;
};

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fputs("loopback: out of memory\n", stderr);
		exit(1);
	}
	return p;
}

static void schedule(struct world *w, struct event e)
{
	if (w->nev == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 64;
		struct event *ev = realloc(w->ev, w->cap * sizeof(*ev));

		if (!ev) {
			fputs("loopback: out of memory\n", stderr);
			exit(1);
		}
		w->ev = ev;
	}
	e.seq = w->seq++;
	w->ev[w->nev++] = e;
}

/* take the earliest event (ties: the first scheduled); false if none is left */
static int next_event(struct world *w, struct event *out)
{
	size_t best = 0;

	if (!w->nev)
		return 0;
	for (size_t i = 1; i < w->nev; i++)
		if (w->ev[i].at < w->ev[best].at || (w->ev[i].at == w->ev[best].at && w->ev[i].seq < w->ev[best].seq))
			best = i;
	*out = w->ev[best];
	w->ev[best] = w->ev[--w->nev];
	return 1;
}

/* the IPv4 destination of a frame, 0 if it has none */
static uint32_t frame_dst(const uint8_t *p, uint32_t len)
{
	unsigned off;

	if (len < 14)
		return 0;
	if (p[12] == 0x88 && p[13] == 0xb5)
		off = 14;		/* Canary header: destination first */
	else if (p[12] == 0x08 && p[13] == 0x00)
		off = 14 + 16;		/* IPv4 destination address */
	else
		return 0;
	if (len < off + 4)
		return 0;
	return (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 | (uint32_t)p[off + 2] << 8 | p[off + 3];
}

/* ---- the transport: what libhost asks of the network ---- */

static uint8_t *t_frame_get(void *ctx, void **handle)
{
	(void)ctx;
	uint8_t *buf = xmalloc(LH_FRAME_MAX);

	*handle = buf;
	return buf;
}

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	struct nic *nic = ctx;
	struct world *w = nic->w;
	lh_time_t start = nic->busy_until > w->now ? nic->busy_until : w->now;
	uint32_t dip = frame_dst(handle, len);

	nic->busy_until = start + (lh_time_t)len * 8 * 1000000000000ULL / RATE_BPS;
	schedule(w, (struct event){ .at = nic->busy_until, .kind = EV_TX_READY, .host = nic->index });
	for (unsigned i = 0; i < w->n; i++) {
		if (w->peer[i].ipv4 == dip) {
			schedule(w, (struct event){ .at = nic->busy_until + LATENCY, .kind = EV_FRAME, .host = i,
						    .frame = handle, .len = len });
			return;
		}
	}
	free(handle);		/* nobody has that address: the wire drops it */
}

static lh_time_t t_now(void *ctx)
{
	return ((struct nic *)ctx)->w->now;
}

static void t_timer(void *ctx, lh_time_t at, uint64_t cookie)
{
	struct nic *nic = ctx;

	schedule(nic->w, (struct event){ .at = at, .kind = EV_TIMER, .host = nic->index, .cookie = cookie });
}

static bool t_tx_busy(void *ctx)
{
	struct nic *nic = ctx;

	return nic->busy_until > nic->w->now;
}

static uint64_t t_random(void *ctx)
{
	struct nic *nic = ctx;	/* xorshift64 */

	nic->rng ^= nic->rng << 13;
	nic->rng ^= nic->rng >> 7;
	nic->rng ^= nic->rng << 17;
	return nic->rng;
}

static const struct lh_transport_ops loopback_ops = {
	.frame_get = t_frame_get,
	.frame_send = t_frame_send,
	.now = t_now,
	.timer = t_timer,
	.tx_busy = t_tx_busy,
	.random = t_random,
};

/* ---- the program ---- */

static int32_t input(unsigned rank, size_t i)
{
	return (int32_t)(rank * 1000003u + (uint32_t)i * 7u);
}

int main(int argc, char **argv)
{
	static struct world w;
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
	size_t count = argc > 2 ? (size_t)atol(argv[2]) : 10000;
	struct lh_comm *comm[MAX_HOSTS];
	struct lh_req *req[MAX_HOSTS];
	int32_t *in[MAX_HOSTS], *out[MAX_HOSTS];
	struct lh_ar_cfg cfg = {
		.algo = LH_ALGO_RING, .dtype = LH_INT32, .op = LH_SUM, .elements = 64, .rtt = 4 * LATENCY,
		.switch_timeout = LH_US, .max_failures = 3, .reliable = true,
	};

	if (n < 2 || n > MAX_HOSTS || count == 0) {
		fprintf(stderr, "usage: loopback [HOSTS (2..%d) [ELEMENTS (>= 1)]]\n", MAX_HOSTS);
		return 2;
	}
	w.n = n;
	for (unsigned i = 0; i < n; i++) {
		w.peer[i] = (struct lh_peer){ .ipv4 = 0x0a000001u + i, .mac = { 2, 0, 0, 0, 0, (uint8_t)(i + 1) } };
		w.nic[i] = (struct nic){ .rng = 0x9e3779b97f4a7c15ULL * (i + 1), .index = i, .w = &w };
	}
	for (unsigned i = 0; i < n; i++) {
		struct lh_transport t = { .ops = &loopback_ops, .ctx = &w.nic[i], .rate_bps = RATE_BPS, .mtu = 1500 };

		w.nic[i].host = lh_host_create(&t, &w.peer[i]);
		comm[i] = w.nic[i].host ? lh_comm_create(w.nic[i].host, w.peer, n, i, 0) : NULL;
		if (!comm[i]) {
			fprintf(stderr, "loopback: host %u: lh_host_create/lh_comm_create refused\n", i);
			return 1;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		in[i] = xmalloc(count * sizeof(int32_t));
		out[i] = xmalloc(count * sizeof(int32_t));
		for (size_t k = 0; k < count; k++)
			in[i][k] = input(i, k);
		req[i] = lh_allreduce(comm[i], &cfg, in[i], out[i], count);
		if (!req[i]) {
			fprintf(stderr, "loopback: host %u: lh_allreduce refused the request\n", i);
			return 1;
		}
	}

	struct event e;

	while (next_event(&w, &e)) {
		struct lh_host *h = w.nic[e.host].host;

		w.now = e.at;
		switch (e.kind) {
		case EV_FRAME:
			lh_host_rx(h, e.frame, e.len);
			free(e.frame);
			break;
		case EV_TIMER:
			lh_host_timer(h, e.cookie);
			break;
		case EV_TX_READY:
			if (w.nic[e.host].busy_until <= w.now)
				lh_host_tx_ready(h);
			break;
		}
		unsigned done = 0;

		for (unsigned i = 0; i < n; i++)
			done += lh_req_done(req[i]);
		if (done == n)
			break;
	}

	int bad = 0;

	for (unsigned i = 0; i < n; i++) {
		if (!lh_req_done(req[i])) {
			fprintf(stderr, "loopback: host %u did not finish\n", i);
			bad = 1;
			continue;
		}
		for (size_t k = 0; k < count; k++) {
			uint32_t sum = 0;

			for (unsigned j = 0; j < n; j++)
				sum += (uint32_t)input(j, k);
			if ((uint32_t)out[i][k] != sum) {
				fprintf(stderr, "loopback: host %u element %zu: %d, expected %d\n", i, k, out[i][k],
					(int32_t)sum);
				bad = 1;
				break;
			}
		}
	}
	if (!bad)
		printf("%s allreduce of %zu int32 on %u hosts: exact on every host, %.3f us, %llu frames sent by host 0\n",
		       lh_algo_name(cfg.algo), count, n, (double)w.now / LH_US,
		       (unsigned long long)lh_req_stats(req[0])->frames_sent);
	while (w.nev)
		free(w.ev[--w.nev].frame);
	free(w.ev);
	for (unsigned i = 0; i < n; i++) {
		lh_host_destroy(w.nic[i].host);
		free(in[i]);
		free(out[i]);
	}
	return bad;
}
