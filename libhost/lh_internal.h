/* SPDX-License-Identifier: MIT */
/*
 * DOC: lh_internal.h - libhost's private structures, shared by host.c (the
 * host: send scheduling, noise, timers, dispatch, barrier, background
 * traffic) and the algorithms canary.c (Canary and static trees) and ring.c.
 */
#ifndef LH_INTERNAL_H
#define LH_INTERNAL_H

#include <stddef.h>

#include "libhost/canary_host.h"
#include "libhost/wire.h"

#define LH_MAX_REQS 16
#define LH_TENANT_SHIFT 24
#define LH_SEQ_MASK LH_BLOCK_IDS
#define LH_RING_PORT EMU_RING_PORT
#define LH_RING_HDR EMU_RING_HDR	/* the ring's header in a UDP payload (ring.c) */
#define LH_RING_RUN EMU_RING_RUN_OFF
#define LH_BG_PORT 9000
#define LH_BG_DATA 16	/* leading payload bytes of a background frame that are set (zeros); the rest is padding */
#define LH_WIRE_OVERHEAD 24	/* preamble, FCS, inter-frame gap: what a frame costs on the wire beyond its bytes */
#define LH_ETH_MIN 60		/* the shortest Ethernet frame without FCS: shorter ones are padded on the wire */
/* what a frame of @len bytes (without FCS) occupies on the wire */
static inline uint64_t lh_wire_bytes(uint64_t len)
{
	return (len < LH_ETH_MIN ? LH_ETH_MIN : len) + LH_WIRE_OVERHEAD;
}

/* timer cookies: kind (8) | request slot (8) | argument (48) */
#define LH_T_NOISE 1
#define LH_T_REQ 2
#define LH_T_BG 3
#define LH_COOKIE(kind, slot, arg) ((uint64_t)(kind) << 56 | (uint64_t)(slot) << 48 | ((arg) & 0xffffffffffffULL))
#define LH_COOKIE_KIND(c) ((unsigned)((c) >> 56))
#define LH_COOKIE_SLOT(c) ((unsigned)((c) >> 48) & 0xff)
#define LH_COOKIE_ARG(c) ((c) & 0xffffffffffffULL)

struct lh_txent {
	void *handle;
	uint32_t len;
};

struct lh_txq {
	struct lh_txent *e;
	uint32_t head, n, cap;
};

struct lh_algo_ops;

/*
 * A request's fields are laid out by the lines a frame's steps read (the
 * struct starts on a line: lh_xzalloc_lines): line 0 comm, ops, algo and
 * the frame counters (st's first lines); line 3 st's window and timeout
 * (a block's completion and pull); line 4 the control queue and the
 * block's bounds (in, out, count, P, rank); line 6 cfg's noise, input_arg
 * and block_arg; line 7 the input and result functions, done and slot.
 * The static asserts below keep them so.
 */
struct lh_req {
	struct lh_comm *comm;
	const struct lh_algo_ops *ops;
	void *algo;		/* the algorithm's state */
	struct lh_ar_stats st;
	/* pending control frames of this request */
	struct lh_txq ctl;
	const int32_t *in;
	int32_t *out;
	size_t count;
	unsigned P;
	unsigned rank;
	struct lh_ar_cfg cfg;
	bool data_done;
	bool done;
	unsigned slot;
	/* completion barrier (rank 0 collects) */
	uint8_t *done_seen;
	unsigned ndone_seen;
	uint64_t jitter_key;	/* lh_backoff's jitter: drawn from the transport's stream at the first retry (0: not yet) */
	unsigned barrier_tries;	/* completion barrier: DONE frames sent again without an answer */
	uint8_t spare[8];	/* unused: sizeof stays what the memory estimate (lh_allreduce_mem) counts */
};

#define LH_LINE_OF(type, field) (offsetof(type, field) / 64)
_Static_assert(LH_LINE_OF(struct lh_req, st.frames_recv) == 0 && LH_LINE_OF(struct lh_req, algo) == 0,
	       "lh_req: line 0");
_Static_assert(LH_LINE_OF(struct lh_req, st.window) == LH_LINE_OF(struct lh_req, st.window_n) &&
	       LH_LINE_OF(struct lh_req, st.window) == LH_LINE_OF(struct lh_req, st.retx_timeout),
	       "lh_req: the window's line");
_Static_assert(LH_LINE_OF(struct lh_req, ctl) == LH_LINE_OF(struct lh_req, rank), "lh_req: the bounds' line");
_Static_assert(LH_LINE_OF(struct lh_req, cfg.noise) == LH_LINE_OF(struct lh_req, cfg.block_arg) &&
	       LH_LINE_OF(struct lh_req, cfg.noise) == LH_LINE_OF(struct lh_req, cfg.input_arg),
	       "lh_req: cfg's hot line");
_Static_assert(LH_LINE_OF(struct lh_req, cfg.input_wire) == LH_LINE_OF(struct lh_req, slot) &&
	       LH_LINE_OF(struct lh_req, cfg.on_block_wire) == LH_LINE_OF(struct lh_req, done),
	       "lh_req: the functions' line");

struct lh_comm {
	struct lh_host *host;
	struct lh_peer *peers;
	unsigned n;
	unsigned rank;
	unsigned tenant;
	struct lh_req *req;
};

struct lh_bg {
	bool on;
	uint32_t rdip;		/* the current message's destination (lh_host_frame_route) */
	struct lh_peer *peers;
	unsigned n;
	unsigned me;
	enum lh_bg_pattern pattern;
	unsigned peer;
	uint64_t seed;
	uint64_t round;
	uint64_t msg_bytes;
	lh_time_t until;
	uint64_t left;		/* bytes left in the current message */
	uint64_t rhash;		/* the current message's flow hash, mixed (lh_host_frame_route) */
	double load;		/* offered share of the line rate; 0 or 1: back to back */
	uint64_t volume;	/* stop after messages of this many bytes in all (0: no limit) */
	uint64_t pending;	/* load < 1: messages arrived and not started */
	uint64_t arrivals;
	lh_time_t next_arrival;
	struct lh_bg_stats st;
	/* a full frame's headers (payload bg_payload_max()); apart: an allreduce host has none */
	struct lh_wire_udp_tmpl *full;
};

/*
 * Line 0 (the struct starts on a line: lh_xzalloc_lines) holds what a
 * frame's steps read of the host: the transport, the requests' count,
 * tenants and round robin, the run, the noise flags, the frame length
 * and whether it is a background one (its route known);
 * line 1 the requests themselves.
 */
struct lh_host {
	struct lh_transport t;
	unsigned ncomms;
	unsigned rr;		/* round robin over data sources */
	uint8_t tenants[LH_MAX_REQS];	/* comms[i]->tenant, for the per-frame paths (no comm's line) */
	uint8_t run;		/* the run every frame carries (lh_host_set_run) */
	bool frame_bg;		/* the frame being asked for is one of the current background message (lh_host_frame_route) */
	bool noise_drawn;	/* the next frame already drew its noise */
	bool share_peers;	/* peer tables are borrowed, not copied (lh_host_share_peers) */
	uint32_t frame_len;	/* bytes the frame being asked for will hold (lh_host_frame_len) */
	/* comms[i]->req, here for the per-frame paths */
	struct lh_req *reqs[LH_MAX_REQS];
	struct lh_comm *comms[LH_MAX_REQS];
	struct lh_peer self;
	lh_time_t noise_until;	/* a noise delay holds the NIC until then */
	struct lh_bg bg;
	uint64_t other_run;	/* frames of another run, dropped (lh_host_other_run) */
	uint8_t spare[16];	/* unused: sizeof stays what the memory estimate (lh_allreduce_mem) counts */
};

_Static_assert(LH_LINE_OF(struct lh_host, frame_len) == 0 && LH_LINE_OF(struct lh_host, reqs) == 1,
	       "lh_host: lines 0 and 1");

/*
 * An algorithm: start() sets up (and may send nothing: sending happens in
 * pull()), pull() puts at most one data frame on the wire and returns true
 * if it did, rx() takes a frame addressed to this request, timer() gets
 * LH_T_REQ cookies' arguments, fini() frees, mem() says what its state
 * takes at one host.
 */
struct lh_algo_ops {
	const char *name;
	int (*start)(struct lh_req *r);
	bool (*pull)(struct lh_req *r);
	void (*rx)(struct lh_req *r, const uint8_t *p, uint32_t len);
	/* optional: rx() of a Canary frame whose header the host has parsed already */
	void (*rx_canary)(struct lh_req *r, const uint8_t *p, uint32_t len, const struct emu_canary_hdr *h,
			  unsigned nelem);
	void (*timer)(struct lh_req *r, uint64_t arg);
	/* optional: would timer(@arg) do nothing, now or at any later time of the request? */
	bool (*timer_idle)(const struct lh_req *r, uint64_t arg);
	void (*fini)(struct lh_req *r);
	/* the bytes start() and the run allocate at least (lh_allreduce_mem) */
	size_t (*mem)(const struct lh_ar_cfg *cfg, unsigned P, size_t count);
	/* what the data part waits for (lh_req_wait; not called once data_done) */
	void (*wait)(const struct lh_req *r, struct lh_ar_wait *w);
};

extern const struct lh_algo_ops lh_canary_ops;
extern const struct lh_algo_ops lh_ring_ops;

/* host.c services for the algorithms */
lh_time_t lh_now(struct lh_req *r);
/* lh_frame - a buffer from the transport for a frame of at most @len bytes of data */
uint8_t *lh_frame(struct lh_req *r, uint32_t len, void **handle);
/* bytes of a Canary frame of @nelem elements */
#define LH_CANARY_LEN(nelem) (EMU_CANARY_DATA_OFF + 4 * (uint32_t)(nelem))
/* send now (data path: the NIC is known idle) */
void lh_send_now(struct lh_req *r, void *handle, uint32_t len);
/* queue a control frame; it goes before data */
void lh_send_ctl(struct lh_req *r, void *handle, uint32_t len);
void lh_req_timer(struct lh_req *r, lh_time_t at, uint64_t arg);

/*
 * Recovery back-off, on every retry path (Canary's requests, tail probes,
 * polls, recoveries and pulls, the ring's NACKs, the completion barrier):
 * retry number @tries (0: the first timeout) waits @base doubled @tries
 * times, at most LH_BACKOFF_SHIFT doublings and at most @cap (not below
 * @base), and from the first retry on a jitter of up to a quarter more,
 * from a hash of (@key, @tries) and a key the request draws once from the
 * transport's random stream (the run's seed in the emulator, --seed in
 * canary-allreduce): the same run retries at the same times, and hosts or
 * blocks that time out together do not retry together. The callers reset
 * @tries on progress.
 */
#define LH_BACKOFF_SHIFT 6
lh_time_t lh_backoff_retry(struct lh_req *r, lh_time_t base, unsigned tries, lh_time_t cap, uint64_t key);
/* the first timeout (@tries 0) is @base itself: no call on a block's send */
static inline lh_time_t lh_backoff(struct lh_req *r, lh_time_t base, unsigned tries, lh_time_t cap, uint64_t key)
{
	return tries ? lh_backoff_retry(r, base, tries, cap, key) : base;
}
void lh_kick(struct lh_host *h);
/* the algorithm finished the data: starts the completion barrier */
void lh_req_data_complete(struct lh_req *r);
/* lh_input_block - input elements [@off, @off + @n) into @out */
void lh_input_block(const struct lh_req *r, size_t off, int32_t *out, size_t n);
void lh_output(struct lh_req *r, size_t off, const int32_t *data, size_t n);

/* build a Canary frame toward @to; returns its length */
uint32_t lh_canary_frame(struct lh_req *r, uint8_t *buf, const struct lh_peer *to, const struct emu_canary_hdr *h,
			 const int32_t *data, unsigned nelem);

static inline uint32_t lh_block_id(const struct lh_req *r, uint32_t seq)
{
	return (uint32_t)r->comm->tenant << LH_TENANT_SHIFT | (seq & LH_SEQ_MASK);
}

#endif /* LH_INTERNAL_H */
