/* SPDX-License-Identifier: MIT */
/*
 * DOC: canary_internal.h - what the Canary host (canary.c) and leader
 * (canary_lead.c) share: the per-block state of each side, the timers'
 * arguments, the missing-set sketch's arithmetic, and the few functions
 * one side calls on the other. libhost/PROTOCOL.md describes the protocol.
 */
#ifndef LH_CANARY_INTERNAL_H
#define LH_CANARY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libhost/lh_internal.h"

enum { B_IDLE = 0, B_SENT, B_DONE };

/*
 * What a host keeps of every block: 12 bytes, since an allreduce has
 * thousands of blocks per host. The times matter only while the block
 * is in flight (B_SENT), so they live in a small table of slots taken when
 * a block is sent and given back when it completes (struct cslots).
 */
struct cblock {
	uint8_t state;
	uint8_t fallback : 1;	/* host side: send FALLBACK data, not REDUCE */
	uint8_t queued : 1;	/* in the resend queue */
	uint8_t probed : 2;	/* sketch: probes sent (1, 2; 3: and tail probes after them) */
	uint8_t held : 1;	/* a re-issue waits for its time (see lh_lead_fail) */
	uint8_t tries;		/* retransmission requests so far (backoff) */
	uint16_t attempt;
	uint16_t tgen;		/* timer generation */
	uint32_t slot;		/* its times while B_SENT (struct ctimes) */
};

/* the times of a block in flight */
struct ctimes {
	lh_time_t sent;		/* last (re)transmission or request */
	lh_time_t first;	/* first transmission */
	lh_time_t data;		/* the current attempt's data left (a poll's answer waits, see lead_poll) */
	lh_time_t probed;	/* sketch: the first probe */
};

struct coll {
	uint16_t sw;
	uint16_t port;
};

struct clead {
	int32_t *acc;
	uint16_t counter;
	uint16_t attempt;
	bool complete;
	bool fallback;
	bool recovering;	/* sketch: missing hosts known, asked directly */
	bool ltimer;		/* the leader's timer is armed (quiet, poll, pull) */
	bool rebcast;		/* sketch: the result was broadcast again (a first probe, or lead_again) */
	bool again;		/* ...and once more past the switches the first passed */
	uint16_t nprobe;	/* ...probes and requests that passed the unicast gates (see lead_again) */
	uint8_t nmiss;
	uint8_t ltries;		/* RECOVER rounds so far (backoff) */
	uint16_t ltgen;		/* leader timer generation */
	lh_time_t lt_at;	/* ...when it is due */
	lh_time_t last_rx;	/* the current attempt's last contribution (or its start) */
	lh_time_t done_at;	/* when the sum was complete */
	lh_time_t rebcast_at;	/* ...and broadcast again */
	uint32_t miss[LH_SKETCH_MAX];	/* sketch: ranks whose data is missing */
	uint32_t got;		/* ...bit i: miss[i]'s data counted (directly or through the tree) */
	uint32_t direct;	/* ...bit i: counted from its direct copy */
	uint8_t *seen;		/* fallback: per rank, PULL_NONE, PULL_GOT, PULL_ASKED or PULL_LATE */
	uint8_t *req;		/* bit per rank: asked for the current attempt (see lead_proven) */
	uint32_t nreq;		/* ...how many */
	lh_time_t req_at;	/* ...when the first asked */
	lh_time_t poll_at;	/* ...when the hosts that had not were polled (see lead_poll) */
	uint8_t npoll;		/* ...how many times, this attempt (backoff) */
	uint16_t pull_mark;	/* ...counter at the pull timer's last tick */
	uint32_t pull_cnt;	/* ...ranks the pull has gone through (from rank + 1 on) */
	uint32_t asked;		/* ...asked, data not yet here */
	bool pulling;		/* ...in the pull queue */
	struct coll *coll;
	uint32_t ncoll, capcoll;
};

/*
 * Lines 0 and 1 (the struct starts on a line: lh_xzalloc_lines) hold what
 * a host's block send, pull and completion read; the sketch, the probes,
 * the leader's and the fallback's fields follow.
 */
struct canary {
	size_t nblocks;
	struct cblock *b;
	struct ctimes *tm;	/* slots of the blocks in flight... */
	uint32_t *tfree;	/* ...the free ones, a stack */
	uint32_t *resend;	/* blocks to send again (re-issue / fallback) */
	size_t next;		/* next block to send for the first time */
	size_t remaining;	/* blocks not yet complete here */
	unsigned E;		/* data elements per block */
	unsigned inflight;
	size_t nresend;
	uint32_t ntfree, captm;
	unsigned K;		/* sketch elements after them (0: off) */
	bool tree;		/* static trees instead of Canary */
	/* adaptive retransmission timeout (RFC 6298 estimator) */
	bool adaptive;
	lh_time_t rto_min;
	double srtt, rttvar, rttmax;
	uint32_t sk_total[LH_SKETCH_MAX];	/* power sums of every rank, mod LH_SKETCH_P */
	uint32_t sk_mine[LH_SKETCH_MAX];	/* this rank's sketch */
	lh_time_t quiet;	/* leader: an attempt this long without news is decoded */
	lh_time_t ft;		/* a full frame's time on the host's link */
	lh_time_t fts;		/* ...and a frame without data's */
	lh_time_t hold;		/* time a block spends in the switches (see canary_size) */
	struct clead *lead;	/* indexed b / P for blocks this rank leads */
	size_t probe_next;	/* sketch: first block not yet checked for lateness */
	size_t probe2_next;	/* ...not yet checked for a second probe */
	uint16_t tailgen;	/* ...tail timer generation */
	uint8_t tailshift;	/* ...its back-off: doubles while nothing comes back */
	size_t tail_lo;		/* ...blocks before it are complete */
	lh_time_t probe_gap;	/* ...late: a block sent this much after it is complete */
	size_t capresend;
	/* leader: host-based fallback, pulled (see lead_pull) */
	uint32_t *pullq;	/* blocks with ranks still to ask, in order */
	size_t pullh, npull, cappull;
	unsigned pull_out;	/* data asked for, not yet here (all blocks) */
	unsigned pull_max;	/* ...at most this many: two round trips of frames */
	uint64_t spare[2];	/* unused: sizeof stays what the memory estimate (canary_mem) counts */
	int32_t buf[EMU_CANARY_MAX_ELEMENTS];	/* scratch: a frame's elements, good until the next send (any send may pull
						 * our next block, which send_block builds here) */
};

_Static_assert(offsetof(struct canary, rttmax) < 128 && offsetof(struct canary, inflight) < 64,
	       "canary: lines 0 and 1");

#define LH_LEAD_TIMER (1ULL << 30)	/* timer argument: the leader's, not the host's */
#define LH_REISSUE_TIMER (1ULL << 28)	/* timer argument: a re-issue held back (see lh_lead_fail) */

/*
 * The missing-set sketch. Host r puts (r + 1)^j mod LH_SKETCH_P, j = 1..K,
 * in the last K elements of its reduce frames; switches add them like data.
 * Every term is at most 65536 and there are at most 65535 hosts, so the
 * sums never wrap in 32 bits and the leader reads exact power sums of the
 * ranks it received. Subtracting them from the power sums of all ranks
 * gives the power sums of the k = hosts - counter missing ranks; for k <= K
 * Newton's identities turn them into the polynomial whose roots, over the
 * prime field, are exactly those ranks (k < LH_SKETCH_P). No bitmap of
 * hosts travels: K integers name up to K missing hosts among any number.
 */
#define LH_SKETCH_P 65537u

static inline uint32_t sk_pow(uint32_t x, unsigned e)
{
	uint64_t r = 1, b = x % LH_SKETCH_P;

	while (e) {
		if (e & 1)
			r = r * b % LH_SKETCH_P;
		b = b * b % LH_SKETCH_P;
		e >>= 1;
	}
	return (uint32_t)r;
}

/*
 * The adaptive timeout's ceiling, in units of its floor (rto_min): without
 * one, a block whose result waits for a host stalled on its own timeout
 * (a static tree completes only when the last host has sent) is an RTT
 * sample as long as that timeout, which 2 x rttmax doubles at every round.
 */
#define LH_RTO_MAX 64
/*
 * A retry waits at most this many floors (rto_min), or the timeout if
 * longer (lh_backoff). The emulator's watchdog gives a host twice its
 * longest timeout, or --stall (5 ms), without a block completing: at 64
 * floors (2.4 ms on the campaign family) that was two retries, and a host
 * whose requests or their answers were lost three times in a row was
 * stopped as STUCK while still retrying; at 16 about eight fit.
 */
#define LH_BACKOFF_CAP 16

/*
 * rttmax follows the slowest recent block: a longer sample raises it at
 * once, a shorter one takes 1/LH_RTTMAX_DECAY of the way down to itself
 * (about the last 64 blocks' worst). A maximum that never comes down is
 * held by one outlier: in a static tree a block that waited for a host
 * stalled on its own backed-off timeout (the result comes only once the
 * last host has sent) would keep the timeout at its ceiling, 64 floors,
 * for the rest of the run, and every lost block would wait that long
 * (2 % loss, 16 KiB drop-tail: 1 ms, where most blocks take under 20 us).
 */
#define LH_RTTMAX_DECAY 64

/* a block round trip @sample (ps): the RFC 6298 estimator, and rttmax */
static inline void lh_rtt_sample(struct canary *c, lh_time_t sample)
{
	double x = (double)sample;

	if (x > c->rttmax)
		c->rttmax = x;
	else
		c->rttmax -= (c->rttmax - x) / LH_RTTMAX_DECAY;
	if (c->srtt == 0) {
		c->srtt = x;
		c->rttvar = x / 2;
	} else {
		c->rttvar = 0.75 * c->rttvar + 0.25 * (c->srtt > x ? c->srtt - x : x - c->srtt);
		c->srtt = 0.875 * c->srtt + 0.125 * x;
	}
}

/*
 * The timeout computed from the estimate: 2 x the smoothed block RTT plus 4
 * deviations, and at least twice the slowest recent block (rttmax) and
 * rto_min. A request for a block that is only slow makes the leader fail
 * it (the paper's rule), so the estimate errs on the long side while
 * queues are still building. Called where an input changes (a sample,
 * rto_min); the value is kept in r->st.retx_timeout, which rto() reads.
 */
static inline lh_time_t rto_compute(const struct canary *c, const struct lh_req *r)
{
	if (!c->adaptive || c->srtt == 0)
		return r->st.retx_timeout;
	double t = 2 * c->srtt + 4 * c->rttvar;

	if (t < 2 * c->rttmax)
		t = 2 * c->rttmax;
	if (t > (double)(c->rto_min * LH_RTO_MAX))
		return c->rto_min * LH_RTO_MAX;
	return t > (double)c->rto_min ? (lh_time_t)t : c->rto_min;
}

/*
 * The current timeout: rto_compute() as of the last change of its inputs
 * (the estimate changes only in lh_canary_block_complete(), rto_min only in
 * canary_size(), and both store the new value), or the fixed timeout.
 */
static inline lh_time_t rto(const struct canary *c, const struct lh_req *r)
{
	(void)c;
	return r->st.retx_timeout;
}

_Static_assert(LH_SEQ_MASK <= UINT32_MAX, "a request's blocks are fewer than 2^32 (canary_start refuses more)");

static inline unsigned leader_of(const struct lh_req *r, size_t b)
{
	/* a 32-bit division: a block's index is below nblocks <= LH_SEQ_MASK (canary_start) */
	return (uint32_t)b % r->P;
}

static inline size_t block_len(const struct lh_req *r, const struct canary *c, size_t b)
{
	size_t lo = b * c->E, hi = lo + c->E;

	return (hi > r->count ? r->count : hi) - lo;
}

static inline uint32_t attempt_id(const struct lh_req *r, const struct canary *c, size_t b, unsigned a)
{
	return lh_block_id(r, (uint32_t)(b + (size_t)a * c->nblocks));
}

static inline struct clead *lead_of(const struct lh_req *r, struct canary *c, size_t b)
{
	return &c->lead[b / r->P];
}

/* ---- the host side (canary.c), for the leader ---- */

/* lh_canary_send_small - a bypass frame @op of block id @id to rank @to, with @n elements of @data */
void lh_canary_send_small(struct lh_req *r, unsigned to, uint32_t id, uint8_t op, uint32_t children,
			  uint16_t counter, const int32_t *data, unsigned n);
/* lh_canary_block_complete - block @b's result is here (@data, or @wire in frame order); @sample: an RTT sample */
void lh_canary_block_complete(struct lh_req *r, struct canary *c, size_t b, const int32_t *data,
			      const uint8_t *wire, bool sample);

/* ---- the leader side (canary_lead.c), for the host ---- */

/* lh_lead_reset - block @b's leader state for a new attempt (its own data counted) */
void lh_lead_reset(struct lh_req *r, struct canary *c, size_t b, struct clead *l);
/* lh_lead_complete - the sum of block @b is complete: broadcast, restore, count it here */
void lh_lead_complete(struct lh_req *r, struct canary *c, size_t b, struct clead *l);
/* lh_lead_fail - block @b's attempt failed: FAILURE to every host, or the fallback after max_failures */
void lh_lead_fail(struct lh_req *r, struct canary *c, size_t b, struct clead *l);
/* lh_lead_result - a fallback block is complete: its result to every host */
void lh_lead_result(struct lh_req *r, struct canary *c, size_t b, struct clead *l);
/* lh_lead_timer - the leader's timer of block @b, generation @gen (quiet, poll, pull) */
void lh_lead_timer(struct lh_req *r, struct canary *c, size_t b, uint16_t gen);
/* lh_lead_rx - a frame for a block this rank leads: REDUCE, FALLBACK data or RETX_REQ (attempt @a) */
void lh_lead_rx(struct lh_req *r, struct canary *c, size_t b, unsigned a, const struct emu_canary_hdr *h,
		const uint8_t *p, unsigned nelem);

/* lh_lead_wait - what this leader of block @b waits for (*@w); false: nothing, it waits as a host */
bool lh_lead_wait(const struct lh_req *r, struct canary *c, size_t b, struct lh_ar_wait *w);

#endif /* LH_CANARY_INTERNAL_H */
