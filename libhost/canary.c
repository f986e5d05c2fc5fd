// SPDX-License-Identifier: MIT
/*
 * DOC: canary.c - the Canary host and leader (paper sec. 3.2-3.5).
 *
 * Blocks: block b holds elements [b*E, min(count, (b+1)*E)); its leader is
 * rank b mod P. Attempt a of block b has id tenant | (b + a * nblocks), so
 * every attempt of every block of every tenant has its own id and the
 * block is recovered from any id as seq mod nblocks.
 *
 * A host (not the leader of b) sends b once as REDUCE toward the leader,
 * with counter 1 and hosts P, at most `window` blocks in flight (sized for
 * the time blocks spend in the switches, which broadcasts from switches
 * with an adaptive timeout tell: canary_size), and arms a
 * retransmission timer. On expiry it sends RETX_REQ (its rank in the
 * children field) to the leader and re-arms. A BCAST or RETX_DATA carrying
 * any attempt of b completes b.
 *
 * The leader of b starts from its own data with counter 1 and adds every
 * REDUCE of the current attempt (from the root switch, stragglers, and
 * bypassed collision frames, whose (switch, port) it records). At counter
 * P it has the result: it sends BCAST to its switch (the root, which
 * multicasts along the descriptors' children) and one RESTORE per switch
 * that saw a collision, carrying the bitmap of those ports (0..31; ports
 * above are reached by retransmission). On RETX_REQ: complete -> resend the
 * result to that host (RETX_DATA); incomplete and the request is for the
 * current attempt -> the block failed: a new attempt, FAILURE (new id,
 * attempt in children) to every host; a request for an older attempt gets
 * the FAILURE again. A block is only slow, not lost, while contributions of
 * its attempt still arrive: a request that comes within a quarter timeout
 * of the attempt's last contribution (or of its FAILURE) is deferred, the
 * requester backs off and asks again. A re-issue is failed only once data
 * is provably missing, more hosts having asked than contributions were
 * counted, the leader's own aside (lead_proven); once few more are needed
 * the leader polls the hosts that have not asked, and a host answers with
 * a request only if its data of the block left it a quarter timeout ago
 * (lead_poll). A host that hears of a new attempt cancels the old
 * attempt's timer (and of a re-issue, FAILURE or RECOVER, starts its
 * back-off afresh); its re-issue arms the new one, so a request always
 * names an attempt the host has sent. After max_failures
 * attempts the block falls back to reduction at the leader: FALLBACK asks
 * a host for its data, which it sends unicast (bypass); the leader sums
 * what it has not yet counted (one contribution per rank) and sends the
 * result to each host. The leader pulls: it asks at most pull_max hosts at
 * a time, over all the blocks it leads in fallback (two base round trips of
 * frames on its link), and asks the next one as each copy arrives, so the
 * fallback is a paced transfer into the leader, not an incast of every
 * host at once into one switch port (which a drop-tail queue would mostly
 * drop). Its timer asks again whoever was asked and did not answer
 * (lead_pull_again). A FAILURE says how many FAILUREs follow it, and its
 * host waits that many small frames before it re-issues, so that the new
 * attempt's contributions meet at the switches (lead_fail).
 *
 * With a sketch (cfg.sketch = K > 0) a block holds elements - K data
 * elements and every REDUCE frame carries K more: the sender's power sums
 * (see sk_decode). The leader turns the missing power sums into the ranks
 * missing from the attempt when there are at most K of them, asks each one
 * with RECOVER. From then on each asked host's data counts once, from
 * whichever copy comes first: its direct (FALLBACK) copy, or a late reduce
 * frame of the attempt, whose own sketch names the asked hosts it holds
 * (a contribution that was late, not lost, so recovering never makes a
 * block later than the tree would). The sum is then broadcast as usual and
 * unicast to the hosts whose direct copies were counted. It decodes when
 * the attempt has been quiet for a base round trip, on a probe (RETX_REQ
 * with counter 1, sent by a host whose later block came back first; it
 * never fails a block) and on an ordinary request; with more than K
 * missing the rules above apply. A host probes a block a second time
 * (counter 2) when a block sent probe_gap after the first probe is back,
 * and once it has sent every block a tail timer probes in place of the
 * later blocks that will not come (tail_probe, counter 3: answered once
 * the block is probe_gap old, since nothing is queued ahead of it). The first probe for a
 * complete block makes the leader broadcast it once more through the
 * tree (lead_bcast: it goes only where the first did not); a probe is
 * answered with a unicast copy only once the broadcast is overdue by the
 * leader's own measured block round trip (bcast_wait), and once 16 such
 * probes or requests have come, the result goes down the whole tree again
 * (lead_again: the switches keep a broadcast's ports for it).
 *
 * Static trees (LH_ALGO_STATIC) run on the same machinery: every host,
 * the leader too, sends block b once up tree tree_base + (b mod N) as
 * TREE_REDUCE and the tree's root multicasts the sum back (TREE_BCAST). A
 * block whose result does not come back in time is recovered through its
 * leader: a leader that has the result resends it; one that has not (or
 * whose own timer expires) falls back to host-based reduction at once (a
 * static tree cannot re-issue a block; hosts that already have the result
 * still send their data when asked).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libhost/lh_util.h"
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
	uint8_t held : 1;	/* a re-issue waits for its time (see lead_fail) */
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

struct canary {
	size_t nblocks;
	unsigned E;		/* data elements per block */
	unsigned K;		/* sketch elements after them (0: off) */
	uint32_t sk_total[LH_SKETCH_MAX];	/* power sums of every rank, mod LH_SKETCH_P */
	uint32_t sk_mine[LH_SKETCH_MAX];	/* this rank's sketch */
	lh_time_t quiet;	/* leader: an attempt this long without news is decoded */
	lh_time_t ft;		/* a full frame's time on the host's link */
	lh_time_t fts;		/* ...and a frame without data's */
	lh_time_t hold;		/* time a block spends in the switches (see canary_size) */
	bool tree;		/* static trees instead of Canary */
	struct cblock *b;
	struct ctimes *tm;	/* slots of the blocks in flight... */
	uint32_t *tfree;	/* ...the free ones, a stack */
	uint32_t ntfree, captm;
	struct clead *lead;	/* indexed b / P for blocks this rank leads */
	size_t next;		/* next block to send for the first time */
	size_t probe_next;	/* sketch: first block not yet checked for lateness */
	size_t probe2_next;	/* ...not yet checked for a second probe */
	uint16_t tailgen;	/* ...tail timer generation */
	uint8_t tailshift;	/* ...its back-off: doubles while nothing comes back */
	size_t tail_lo;		/* ...blocks before it are complete */
	lh_time_t probe_gap;	/* ...late: a block sent this much after it is complete */
	uint32_t *resend;	/* blocks to send again (re-issue / fallback) */
	size_t nresend, capresend;
	/* leader: host-based fallback, pulled (see lead_pull) */
	uint32_t *pullq;	/* blocks with ranks still to ask, in order */
	size_t pullh, npull, cappull;
	unsigned pull_out;	/* data asked for, not yet here (all blocks) */
	unsigned pull_max;	/* ...at most this many: two round trips of frames */
	unsigned inflight;
	size_t remaining;	/* blocks not yet complete here */
	/* adaptive retransmission timeout (RFC 6298 estimator) */
	bool adaptive;
	lh_time_t rto_min;
	double srtt, rttvar, rttmax;
	int32_t buf[EMU_CANARY_MAX_ELEMENTS];
};

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

static uint32_t sk_pow(uint32_t x, unsigned e)
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
 * sk_decode - the @k ranks (< @P) whose power sums are @m[0..k) into @out.
 * Returns false if no k distinct ranks have them (a corrupt sum: the
 * caller falls back to failing the block).
 */
static bool sk_decode(const uint32_t *m, unsigned k, unsigned P, uint32_t *out)
{
	uint64_t e[LH_SKETCH_MAX + 1];
	unsigned n = 0;

	e[0] = 1;
	for (unsigned i = 1; i <= k; i++) {
		/* i e_i = sum_{j=1..i} (-1)^(j-1) e_{i-j} p_j */
		uint64_t s = 0;

		for (unsigned j = 1; j <= i; j++) {
			uint64_t t = e[i - j] * m[j - 1] % LH_SKETCH_P;

			s = (j & 1) ? (s + t) % LH_SKETCH_P : (s + LH_SKETCH_P - t) % LH_SKETCH_P;
		}
		e[i] = s * sk_pow(i, LH_SKETCH_P - 2) % LH_SKETCH_P;
	}
	/* roots of z^k - e1 z^(k-1) + e2 z^(k-2) - ... among z = rank + 1 */
	for (uint32_t rank = 0; rank < P; rank++) {
		uint64_t z = rank + 1, v = 0;

		for (unsigned i = 0; i <= k; i++) {
			uint64_t c = (i & 1) ? (LH_SKETCH_P - e[i]) % LH_SKETCH_P : e[i];

			v = (v * z + c) % LH_SKETCH_P;
		}
		if (v == 0) {
			if (n == k)
				return false;
			out[n++] = rank;
		}
	}
	return n == k;
}

/*
 * The current timeout: 2 x the smoothed block RTT plus 4 deviations, and at
 * least twice the slowest block seen and rto_min. A request for a block
 * that is only slow makes the leader fail it (the paper's rule), so the
 * estimate errs on the long side while queues are still building.
 */
static lh_time_t rto(const struct canary *c, const struct lh_req *r)
{
	if (!c->adaptive || c->srtt == 0)
		return r->st.retx_timeout;
	double t = 2 * c->srtt + 4 * c->rttvar;

	if (t < 2 * c->rttmax)
		t = 2 * c->rttmax;
	return t > (double)c->rto_min ? (lh_time_t)t : c->rto_min;
}

/*
 * bcast_wait - how long after completing a block a leader takes a probe
 * for it as a sign that its broadcast was lost rather than late: the
 * measured block round trip (smoothed, plus 4 deviations), at least
 * probe_gap. Under background traffic a broadcast can spend many base
 * round trips in queues; resending the result to every host that probes
 * meanwhile adds a data frame per probe to those very queues, and the
 * later broadcasts the resends delay draw more probes.
 */
static lh_time_t bcast_wait(const struct canary *c)
{
	double t = c->srtt + 4 * c->rttvar;

	return t > (double)c->probe_gap ? (lh_time_t)t : c->probe_gap;
}

/*
 * canary_size - the window and the times sized with it, from the base
 * round trip and c->hold, the time a block spends in the switches: the
 * window is bandwidth x (base RTT + hold), twice over (a block's frame
 * out and its result back), at least 4; the leader decodes an attempt
 * quiet for RTT + hold (sketch), a block is late (probe) after twice that,
 * and the retransmission timeout is at least 2 x (RTT + hold + the
 * window's serialization). A window given in the configuration stays.
 *
 * hold starts at 3 switch timeouts (one per aggregation level of a
 * two-level fat tree: leaf, spine, root), all a fixed timeout ever gives.
 * With the adaptive switch timeout every broadcast brings the sum of the
 * timeouts the switches on its way down have learned (canary_sw.h): hold
 * follows it (canary_hint), so the window grows where the switches learn
 * to wait longer and shrinks where they learn not to.
 */
static void canary_size(struct lh_req *r, struct canary *c)
{
	lh_time_t rtt = r->cfg.rtt + c->hold;
	unsigned w = r->cfg.window;

	if (!w) {
		w = (unsigned)(2 * rtt / c->ft) + 1;
		if (w < 4)
			w = 4;
	}
	r->st.window = w;
	if (w > r->st.window_max)
		r->st.window_max = w;
	c->quiet = rtt;
	c->probe_gap = 2 * rtt;
	/* pulled fallback data in flight: two base round trips of frames on our link, as the window */
	c->pull_max = (unsigned)(2 * r->cfg.rtt / c->ft) + 1;
	if (c->pull_max < 4)
		c->pull_max = 4;
	c->rto_min = 2 * (rtt + (lh_time_t)w * c->ft);
	if (c->adaptive)
		r->st.retx_timeout = c->srtt == 0 ? c->rto_min : rto(c, r);
}

/*
 * canary_hint - a broadcast came with @ns in its switch field: the sum of
 * the switches' learned timeouts along its branch (0: none, a fixed
 * timeout). hold moves 1/8 of the way to it (the paths differ per block:
 * a host on the leader's leaf sees the root alone), in integer ps so that
 * every host and every partition of the run computes the same windows.
 */
static void canary_hint(struct lh_req *r, struct canary *c, unsigned ns)
{
	int64_t d = (int64_t)(ns * LH_NS) - (int64_t)c->hold;

	if (!ns)
		return;
	c->hold = (lh_time_t)((int64_t)c->hold + d / 8);
	canary_size(r, c);
}

static void rtt_sample(struct canary *c, lh_time_t sample)
{
	double x = (double)sample;

	if (x > c->rttmax)
		c->rttmax = x;
	if (c->srtt == 0) {
		c->srtt = x;
		c->rttvar = x / 2;
	} else {
		c->rttvar = 0.75 * c->rttvar + 0.25 * (c->srtt > x ? c->srtt - x : x - c->srtt);
		c->srtt = 0.875 * c->srtt + 0.125 * x;
	}
}

static inline unsigned leader_of(const struct lh_req *r, size_t b)
{
	/* a 32-bit division when it is one (blocks are fewer than 2^32): several times faster */
	return b <= UINT32_MAX ? (uint32_t)b % r->P : (unsigned)(b % r->P);
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

static void send_small(struct lh_req *r, unsigned to, uint32_t id, uint8_t op, uint32_t children, uint16_t counter,
		       const int32_t *data, unsigned n);

/* block_times - the times of block @b, in flight */
static inline struct ctimes *block_times(struct canary *c, size_t b)
{
	return &c->tm[c->b[b].slot];
}

/* block_send_first - block @b leaves B_IDLE: take a slot for its times */
static void block_send_first(struct lh_req *r, struct canary *c, size_t b)
{
	struct cblock *cb = &c->b[b];

	if (!c->ntfree) {
		uint32_t n = c->captm ? 2 * c->captm : 64;

		c->tm = lh_xrealloc(c->tm, n * sizeof(*c->tm));
		c->tfree = lh_xrealloc(c->tfree, n * sizeof(*c->tfree));
		for (uint32_t i = n; i > c->captm; i--)
			c->tfree[c->ntfree++] = i - 1;
		c->captm = n;
	}
	cb->slot = c->tfree[--c->ntfree];
	cb->state = B_SENT;
	c->tm[cb->slot] = (struct ctimes){ .sent = 0, .first = lh_now(r) };
	c->inflight++;
}

/*
 * probe_send - probe number @n (1, 2, or 3 for any later one: only the
 * tail timer's) for block @b: a RETX_REQ with counter n, or 3 from the tail
 * timer (@tail: nothing else is coming back).
 */
static void probe_send(struct lh_req *r, struct canary *c, size_t b, unsigned n, bool tail)
{
	struct cblock *pb = &c->b[b];

	pb->probed = n & 3;
	if (n == 1)
		block_times(c, b)->probed = lh_now(r);
	r->st.probes++;
	send_small(r, leader_of(r, b), attempt_id(r, c, b, pb->attempt), EMU_CANARY_OP_RETX_REQ, r->rank,
		   (uint16_t)(tail ? 3 : n), NULL, 0);
}

/*
 * probe_late - with the sketch, a block whose result is missing although a
 * block sent probe_gap after it has come back is probably lost (in the
 * broadcast, or in the reduce phase): ask its leader at once, without
 * waiting for the timeout, with a probe (RETX_REQ, counter 1) that never
 * fails a block: the leader resends a complete block, recovers one whose
 * missing hosts the sketch names, and otherwise ignores it. @t: when the
 * block just completed was first sent. Each block is probed at most twice
 * here: again (counter 2) once a block sent probe_gap after the first probe
 * is back (the tail timer may probe it more: tail_probe).
 */
static void probe_late(struct lh_req *r, struct canary *c, lh_time_t t)
{
	while (c->probe_next < c->next) {
		size_t b = c->probe_next;
		struct cblock *pb = &c->b[b];

		if (pb->state == B_SENT && !pb->probed) {
			if (block_times(c, b)->first + c->probe_gap > t)
				break;
			probe_send(r, c, b, 1, false);
		}
		c->probe_next++;
	}
	/* probed, and a block sent probe_gap after the probe is back: probe once more (counter 2) */
	while (c->probe2_next < c->probe_next) {
		size_t b = c->probe2_next;
		struct cblock *pb = &c->b[b];

		if (pb->state == B_SENT && pb->probed == 1) {
			if (block_times(c, b)->probed + c->probe_gap > t)
				return;
			probe_send(r, c, b, 2, false);
		}
		c->probe2_next++;
	}
}

#define LH_TAIL_TIMER (1ULL << 29)	/* timer argument: the tail probe */

#define LH_TAIL_SHIFT_MAX 6	/* the tail timer backs off to 64 probe gaps */

/*
 * tail_arm - every block has been sent and some are not back: no later
 * block will come back to show that they are late, so a timer stands in
 * for one, probe_gap from now (from the last completion), doubled for
 * every tick since the last completion that sent only repeated probes
 * (c->tailshift, see tail_probe). Re-armed on every completion.
 */
static void tail_arm(struct lh_req *r, struct canary *c)
{
	if (!c->K || c->next < c->nblocks || !c->inflight)
		return;
	c->tailgen++;
	lh_req_timer(r, lh_now(r) + (c->probe_gap << c->tailshift), LH_TAIL_TIMER | (uint64_t)c->tailgen << 32);
}

/*
 * tail_probe - the tail timer: nothing came back for a tick (probe_gap;
 * doubling once every missing block has had its first two probes) after
 * the last block was sent or completed. Probe every block sent probe_gap
 * ago or earlier that is still missing, as a later block's return would
 * have (a second time if its first probe is probe_gap old), and a block
 * probed twice already once more at every tick (counter 3 each time): a
 * leader answers a tail probe for a block it completed probe_gap ago with
 * the result, so a host whose broadcast and probes were lost, or came too
 * early for an answer, does not wait for its retransmission timeout, which
 * under background traffic the slowest blocks have stretched to hundreds
 * of microseconds. A re-issued block keeps its probe count: it may be
 * probed (never failed) a tick after its new attempt left. Wait again
 * while any block is missing.
 */
static void tail_probe(struct lh_req *r, struct canary *c)
{
	lh_time_t now = lh_now(r);
	bool more = false, fresh = false;

	while (c->tail_lo < c->next && c->b[c->tail_lo].state == B_DONE)
		c->tail_lo++;
	for (size_t b = c->tail_lo; b < c->next; b++) {
		struct cblock *pb = &c->b[b];

		if (pb->state != B_SENT)
			continue;
		more = true;
		if (pb->held || pb->queued)
			continue;	/* its re-issue has not left yet */
		if (!pb->probed) {
			fresh = true;
			if (block_times(c, b)->first + c->probe_gap <= now)
				probe_send(r, c, b, 1, true);
		} else if (pb->probed == 1) {
			fresh = true;
			if (block_times(c, b)->probed + c->probe_gap <= now)
				probe_send(r, c, b, 2, true);
		} else {
			probe_send(r, c, b, 3, true);
		}
	}
	if (more) {
		/* back off once every missing block has had its first two probes */
		if (!fresh && c->tailshift < LH_TAIL_SHIFT_MAX)
			c->tailshift++;
		tail_arm(r, c);
	}
}

/*
 * @sample: the block's round trip may feed the RTT estimate (not when the
 * leader had to recover it: Karn's rule, the time includes a recovery).
 */
static void block_complete(struct lh_req *r, struct canary *c, size_t b, const int32_t *data, const uint8_t *wire,
			   bool sample)
{
	struct cblock *cb = &c->b[b];

	if (cb->state == B_DONE) {
		r->st.duplicates++;
		return;
	}
	lh_time_t first = 0;

	if (cb->state == B_SENT) {
		const struct ctimes *tm = block_times(c, b);

		if (c->inflight)
			c->inflight--;
		if (cb->tries == 0 && cb->attempt == 0 && c->adaptive && sample) {
			rtt_sample(c, lh_now(r) - tm->sent);
			r->st.retx_timeout = rto(c, r);
		}
		first = tm->first;
		c->tfree[c->ntfree++] = cb->slot;
	}
	cb->state = B_DONE;
	r->st.window_sum += r->st.window;
	r->st.window_n++;
	if (c->K && first) {
		probe_late(r, c, first);
		c->tailshift = 0;
		tail_arm(r, c);
	}
	if (wire)
		r->cfg.on_block_wire(r->cfg.block_arg, b * c->E, wire, block_len(r, c, b));
	else
		lh_output(r, b * c->E, data, block_len(r, c, b));
	if (--c->remaining == 0)
		lh_req_data_complete(r);
}

/* arm the block's timer: the timeout, doubled for every request already made */
static void arm_at(struct lh_req *r, struct canary *c, size_t b, lh_time_t at)
{
	struct cblock *cb = &c->b[b];

	cb->tgen++;
	lh_req_timer(r, at, (uint64_t)b | (uint64_t)cb->tgen << 32);
}

static lh_time_t block_timeout(const struct lh_req *r, const struct canary *c, const struct cblock *cb)
{
	unsigned shift = cb->tries < 6 ? cb->tries : 6;

	return rto(c, r) << shift;
}

static void arm(struct lh_req *r, struct canary *c, size_t b)
{
	struct cblock *cb = &c->b[b];

	/* a complete block is sent again only for a static-tree leader's fallback: its timer finds it done */
	if (cb->state == B_SENT)
		block_times(c, b)->sent = lh_now(r);
	arm_at(r, c, b, lh_now(r) + block_timeout(r, c, cb));
}

static void queue_resend(struct canary *c, size_t b)
{
	if (c->b[b].queued)
		return;
	if (c->nresend == c->capresend) {
		c->capresend = c->capresend ? 2 * c->capresend : 64;
		c->resend = lh_xrealloc(c->resend, c->capresend * sizeof(*c->resend));
	}
	c->resend[c->nresend++] = (uint32_t)b;
	c->b[b].queued = 1;
}

/* ---------- host side ---------- */

static void send_block(struct lh_req *r, struct canary *c, size_t b, bool ctl)
{
	struct cblock *cb = &c->b[b];
	unsigned ldr = leader_of(r, b);
	size_t n = block_len(r, c, b);
	void *hd;
	uint8_t *buf = lh_frame(r, LH_CANARY_LEN(n + c->K), &hd);
	struct emu_canary_hdr h = {
		.dst = r->comm->peers[ldr].ipv4, .id = attempt_id(r, c, b, cb->attempt), .counter = 1,
		.hosts = (uint16_t)r->P,
		.flags = cb->fallback ? (EMU_CANARY_OP_FALLBACK | EMU_CANARY_F_BYPASS) : EMU_CANARY_OP_REDUCE,
	};
	const struct lh_peer *to = &r->comm->peers[ldr];

	cb->held = 0;
	if (cb->fallback) {
		h.children = r->rank;
	} else if (c->tree) {
		/* up the block's static tree; the switches route it by tree */
		h.dst = r->comm->host->self.ipv4;
		h.swaddr = (uint16_t)(r->cfg.tree_base + b % r->cfg.ntrees);
		h.flags = EMU_CANARY_OP_TREE_REDUCE;
		to = NULL;
	}
	uint32_t len;

	if (r->cfg.input_wire && !r->in) {
		/* the input straight into the frame */
		len = lh_canary_frame(r, buf, to, &h, NULL, 0);
		r->cfg.input_wire(r->cfg.input_arg, b * c->E, buf + len, n);
		len += 4 * (uint32_t)n;
		if (!cb->fallback && c->K) {
			lh_wire_put_elems(buf + len, (const int32_t *)c->sk_mine, c->K);
			len += 4 * c->K;
		}
	} else {
		lh_input_block(r, b * c->E, c->buf, n);
		if (!cb->fallback && c->K) {
			/* the sketch rides after the data; direct copies need none */
			for (unsigned j = 0; j < c->K; j++)
				c->buf[n + j] = (int32_t)c->sk_mine[j];
			n += c->K;
		}
		len = lh_canary_frame(r, buf, to, &h, c->buf, (unsigned)n);
	}

	if (ctl)
		lh_send_ctl(r, hd, len);
	else
		lh_send_now(r, hd, len);
	if (cb->state == B_SENT)
		block_times(c, b)->data = lh_now(r);
	arm(r, c, b);
}

static bool canary_pull(struct lh_req *r)
{
	struct canary *c = r->algo;

	while (c->nresend) {
		size_t b = c->resend[--c->nresend];

		c->b[b].queued = 0;
		if (c->b[b].state == B_DONE)
			continue;
		if (c->b[b].state == B_IDLE)
			block_send_first(r, c, b);	/* asked for before our own turn came: this is its sending */
		send_block(r, c, b, false);
		return true;
	}
	while (c->next < c->nblocks && c->inflight < r->st.window) {
		size_t b = c->next++;

		/*
		 * Skipped blocks can end the sending (the allreduce's last
		 * block is ours to lead): the tail timer starts here then.
		 */
		if ((leader_of(r, b) == r->rank && !c->tree) || c->b[b].state != B_IDLE) {
			/* a Canary leader does not send its own data; or sent on request, or complete */
			if (c->next == c->nblocks)
				tail_arm(r, c);
			continue;
		}
		block_send_first(r, c, b);
		send_block(r, c, b, false);
		if (c->next == c->nblocks)
			tail_arm(r, c);
		return true;
	}
	return false;
}

static void send_small(struct lh_req *r, unsigned to, uint32_t id, uint8_t op, uint32_t children, uint16_t counter,
		       const int32_t *data, unsigned n)
{
	void *hd;
	uint8_t *buf = lh_frame(r, LH_CANARY_LEN(n), &hd);
	struct emu_canary_hdr h = {
		.dst = r->comm->peers[to].ipv4, .id = id, .counter = counter, .hosts = (uint16_t)r->P,
		.children = children, .flags = (uint8_t)(op | EMU_CANARY_F_BYPASS),
	};

	lh_send_ctl(r, hd, lh_canary_frame(r, buf, &r->comm->peers[to], &h, data, n));
}

static void lead_fail(struct lh_req *r, struct canary *c, size_t b, struct clead *l);
static void lead_timer(struct lh_req *r, struct canary *c, size_t b, uint16_t gen);
static void lead_arm(struct lh_req *r, struct canary *c, size_t b, struct clead *l, lh_time_t at);
static bool lead_recover(struct lh_req *r, struct canary *c, size_t b, struct clead *l);
static void lead_poll(struct lh_req *r, struct canary *c, size_t b, struct clead *l);
#define LH_LEAD_TIMER (1ULL << 30)	/* timer argument: the leader's, not the host's */
#define LH_REISSUE_TIMER (1ULL << 28)	/* timer argument: a re-issue held back (see lead_fail) */

/*
 * canary_timer_idle - would canary_timer(@arg) do nothing, now or at any
 * later time of this request? True for a block's retransmission or held
 * re-issue timer whose block is complete (a complete block stays
 * complete: both return at once then); false for the tail and leader
 * timers.
 */
static bool canary_timer_idle(const struct lh_req *r, uint64_t arg)
{
	const struct canary *c = r->algo;
	size_t b = (size_t)(arg & 0xffffffu);

	return !(arg & (LH_TAIL_TIMER | LH_LEAD_TIMER)) && b < c->nblocks && c->b[b].state == B_DONE;
}

static void canary_timer(struct lh_req *r, uint64_t arg)
{
	struct canary *c = r->algo;
	size_t b = (size_t)(arg & 0xffffffu);
	uint16_t gen = (uint16_t)(arg >> 32);

	if (arg & LH_TAIL_TIMER) {
		if (gen == c->tailgen)
			tail_probe(r, c);
		return;
	}
	if (arg & LH_LEAD_TIMER) {
		if (b < c->nblocks)
			lead_timer(r, c, b, gen);
		return;
	}
	if (arg & LH_REISSUE_TIMER) {
		/* not if it went out meanwhile: its window turn came, or the leader asked for it */
		if (b < c->nblocks && c->b[b].held && c->b[b].state != B_DONE && c->b[b].attempt == gen &&
		    !c->b[b].fallback)
			queue_resend(c, b);
		return;
	}
	if (b >= c->nblocks || c->b[b].state == B_DONE || c->b[b].tgen != gen)
		return;
	/* the estimate may have grown since the timer was armed */
	lh_time_t due = block_times(c, b)->sent + block_timeout(r, c, &c->b[b]);

	if (due > lh_now(r)) {
		arm_at(r, c, b, due);
		return;
	}
	if (c->tree && leader_of(r, b) == r->rank) {
		/* a static-tree leader without the result: host-based at once */
		struct clead *l = lead_of(r, c, b);

		/* hosts that already had the result have no timer: the pull's timer asks them again */
		if (!l->complete && !l->fallback)
			lead_fail(r, c, b, l);
		if (c->b[b].tries < 255)
			c->b[b].tries++;
		arm(r, c, b);
		return;
	}
	/* no result in time: ask the leader */
	r->st.retx_requests++;
	if (c->b[b].tries < 255)
		c->b[b].tries++;
	send_small(r, leader_of(r, b), attempt_id(r, c, b, c->b[b].attempt), EMU_CANARY_OP_RETX_REQ, r->rank, 0,
		   NULL, 0);
	arm(r, c, b);
}

/* ---------- leader side ---------- */

/* a rank's state in a pull: not asked, counted, asked, asked before the timer's last tick */
enum { PULL_NONE = 0, PULL_GOT = 1, PULL_ASKED = 2, PULL_LATE = 3 };

/* the block is done with pulling: what it had asked for no longer counts against pull_max */
static void lead_pull_end(struct canary *c, struct clead *l)
{
	c->pull_out -= l->asked;
	l->asked = 0;
}

static void lead_pull_queue(struct canary *c, size_t b, struct clead *l)
{
	if (l->pulling)
		return;
	if (c->pullh && c->npull == c->cappull) {
		memmove(c->pullq, c->pullq + c->pullh, (c->npull - c->pullh) * sizeof(*c->pullq));
		c->npull -= c->pullh;
		c->pullh = 0;
	}
	if (c->npull == c->cappull) {
		c->cappull = c->cappull ? 2 * c->cappull : 16;
		c->pullq = lh_xrealloc(c->pullq, c->cappull * sizeof(*c->pullq));
	}
	c->pullq[c->npull++] = (uint32_t)b;
	l->pulling = true;
}

/*
 * lead_pull - ask hosts for their data of the blocks in fallback, in the
 * order the blocks fell back, each block's hosts from the leader's right
 * neighbour on (so the leaders of a fallen-back allreduce do not all ask
 * the same host first), until pull_max requests are out.
 */
static void lead_pull(struct lh_req *r, struct canary *c)
{
	while (c->pull_out < c->pull_max && c->pullh < c->npull) {
		size_t b = c->pullq[c->pullh];
		struct clead *l = lead_of(r, c, b);

		if (l->complete || !l->fallback || l->pull_cnt >= r->P) {
			l->pulling = false;
			c->pullh++;
			continue;
		}
		unsigned k = (r->rank + 1 + l->pull_cnt++) % r->P;

		if (l->seen[k] != PULL_NONE)
			continue;
		l->seen[k] = PULL_ASKED;
		l->asked++;
		c->pull_out++;
		send_small(r, k, attempt_id(r, c, b, l->attempt), EMU_CANARY_OP_FALLBACK, l->attempt, 0, NULL, 0);
	}
	if (c->pullh == c->npull)
		c->pullh = c->npull = 0;
}

/*
 * lead_pull_again - the leader's fallback timer, every probe_gap (two base
 * round trips), doubling while no copy came: ask again every host asked
 * before the previous tick that has not answered (one asked since may
 * still be answering: asking it again would bring a second copy).
 */
static void lead_pull_again(struct lh_req *r, struct canary *c, size_t b, struct clead *l)
{
	uint32_t id = attempt_id(r, c, b, l->attempt);

	for (unsigned k = 0; k < r->P; k++)
		if (l->seen[k] == PULL_LATE)
			send_small(r, k, id, EMU_CANARY_OP_FALLBACK, l->attempt, 0, NULL, 0);
		else if (l->seen[k] == PULL_ASKED)
			l->seen[k] = PULL_LATE;
	if (l->counter != l->pull_mark)
		l->ltries = 0;
	else if (l->ltries < 6)
		l->ltries++;
	l->pull_mark = l->counter;
	lead_arm(r, c, b, l, lh_now(r) + (c->probe_gap << l->ltries));
}

static void lead_reset(struct lh_req *r, struct canary *c, size_t b, struct clead *l)
{
	size_t n = block_len(r, c, b);

	lh_input_block(r, b * c->E, l->acc, n);
	for (unsigned j = 0; j < c->K; j++)
		l->acc[c->E + j] = (int32_t)c->sk_mine[j];
	l->counter = 1;
	l->ncoll = 0;
	l->recovering = false;
	l->nmiss = 0;
	l->got = 0;
	l->direct = 0;
	l->ltries = 0;
	l->rebcast = false;
	l->again = false;
	l->nprobe = 0;
	l->pull_cnt = 0;
	if (l->req)
		memset(l->req, 0, (r->P + 7) / 8);
	l->nreq = 0;
	l->npoll = 0;
	if (l->seen) {
		memset(l->seen, 0, r->P);
		l->seen[r->rank] = 1;
	}
}

/*
 * lead_bcast - send block @b's result to the root switch, which multicasts
 * it along the descriptors of the attempt's tree. Every switch passes one
 * broadcast of an id on, so a second one goes down exactly the branches
 * the first has not reached (a switch that passed the first drops it:
 * bcast_dropped), unless @flags has EMU_CANARY_BCAST_AGAIN: then every
 * switch that passed the first passes it too, down the same ports (see
 * lead_again). EMU_CANARY_BCAST_NOSAMPLE: the hosts keep the block's round
 * trip out of their RTT estimate.
 */
static void lead_bcast(struct lh_req *r, const struct canary *c, size_t b, const struct clead *l, uint32_t flags)
{
	size_t n = block_len(r, c, b);
	void *hd;
	uint8_t *buf = lh_frame(r, LH_CANARY_LEN(n), &hd);
	struct emu_canary_hdr h = {
		.dst = r->comm->host->self.ipv4, .id = attempt_id(r, c, b, l->attempt), .counter = (uint16_t)r->P,
		.hosts = (uint16_t)r->P, .children = flags,
		.flags = EMU_CANARY_F_MULTICAST | EMU_CANARY_OP_BCAST,
	};

	lh_send_ctl(r, hd, lh_canary_frame(r, buf, NULL, &h, l->acc, (unsigned)n));
}

/*
 * lead_again - with the sketch (whose probes it relies on), a probe past
 * bcast_wait or a request (after the host's timeout) for a complete block:
 * the broadcast did not reach that host, nor a second one if the block had
 * it (first probes within its quiet period are not counted: they crossed
 * it). The first was lost below a switch it had passed, where a second
 * dies (a leaf's uplink to a spine: every host behind that spine misses
 * it, hundreds at the paper's scale). Once LH_AGAIN_PROBES such probes or
 * requests have come, the result goes down the whole tree once more
 * (EMU_CANARY_BCAST_AGAIN: one frame on every host's link) instead of one
 * unicast per host from our link, which would hold it for that many frame
 * times and make this host everyone's straggler; those before are
 * answered one by one, as before. Counting every probe (those that crossed
 * the second broadcast, and those before bcast_wait) sends it sooner, but
 * under background traffic a broadcast that is late, not lost, draws many,
 * and the whole tree again costs every host a frame (lossless with
 * background at the paper's scale, seeds 1-2: 55.6 Gb/s against 59.0).
 * The count is of frames, not hosts: one host's probes and request count
 * once each.
 *
 * Returns true when a probe (not a @request) needs nothing more: it made
 * that broadcast, or crossed it. A request is always answered with a
 * unicast copy too: its host has waited a whole timeout, and the broadcast
 * again may take the path that lost the first (a failed switch: taking
 * such requests as answered by it made that run 52 % longer). Without the
 * sketch (no probes: requests alone) it is not sent: with noisy hosts and
 * a short switch timeout (t/0031's slow blocks) it made blocks fail until
 * they fell back.
 */
#define LH_AGAIN_PROBES 16

static bool lead_again(struct lh_req *r, const struct canary *c, size_t b, struct clead *l, bool request)
{
	unsigned min = LH_AGAIN_PROBES < r->P / 2 ? LH_AGAIN_PROBES : r->P / 2;

	if (l->again)
		return !request && lh_now(r) - l->rebcast_at < c->quiet;
	if (++l->nprobe < (min > 2 ? min : 2))
		return false;
	l->again = true;
	/*
	 * A first probe after it sends no plain broadcast: every switch the
	 * broadcast again passed drops one (a plain one would pass only where
	 * both were lost on our own link; the hosts there get a unicast copy).
	 */
	l->rebcast = true;
	l->rebcast_at = lh_now(r);
	r->st.rebroadcasts++;
	lead_bcast(r, c, b, l, EMU_CANARY_BCAST_NOSAMPLE | EMU_CANARY_BCAST_AGAIN);
	return !request;
}

/* a fallback's result to every host, unicast; the pull's room goes to other blocks */
static void lead_fallback_result(struct lh_req *r, struct canary *c, size_t b, struct clead *l)
{
	uint32_t id = attempt_id(r, c, b, l->attempt);

	lead_pull_end(c, l);
	for (unsigned k = 0; k < r->P; k++)
		if (k != r->rank)
			send_small(r, k, id, EMU_CANARY_OP_RETX_DATA, 0, (uint16_t)r->P, l->acc,
				   (unsigned)block_len(r, c, b));
	lead_pull(r, c);
}

static void lead_complete(struct lh_req *r, struct canary *c, size_t b, struct clead *l)
{
	size_t n = block_len(r, c, b);
	uint32_t id = attempt_id(r, c, b, l->attempt);

	l->complete = true;
	l->done_at = lh_now(r);
	if (l->fallback) {
		lead_fallback_result(r, c, b, l);
	} else {
		void *hd;
		uint8_t *buf;
		struct emu_canary_hdr h = {
			.dst = r->comm->host->self.ipv4, .id = id, .counter = (uint16_t)r->P, .hosts = (uint16_t)r->P,
			.flags = EMU_CANARY_F_MULTICAST | EMU_CANARY_OP_BCAST,
		};

		lead_bcast(r, c, b, l, l->direct ? EMU_CANARY_BCAST_NOSAMPLE : 0);
		/* the hosts whose direct copies were counted may be cut off from the tree */
		for (unsigned i = 0; i < l->nmiss; i++)
			if (l->direct & 1u << i)
				send_small(r, l->miss[i], id, EMU_CANARY_OP_RETX_DATA, 1, (uint16_t)r->P, l->acc,
					   (unsigned)n);
		/* tree restoration: one frame per switch that saw collisions */
		for (uint32_t i = 0; i < l->ncoll; i++) {
			uint16_t sw = l->coll[i].sw;
			uint32_t bitmap = 0;
			bool first = true;

			for (uint32_t j = 0; j < l->ncoll; j++) {
				if (l->coll[j].sw != sw)
					continue;
				if (j < i) {
					first = false;
					break;
				}
				if (l->coll[j].port < 32)
					bitmap |= 1u << l->coll[j].port;
			}
			if (!first || !bitmap)
				continue;
			h.flags = EMU_CANARY_OP_RESTORE;
			h.swaddr = sw;
			h.children = bitmap;
			buf = lh_frame(r, LH_CANARY_LEN(n), &hd);
			lh_send_ctl(r, hd, lh_canary_frame(r, buf, NULL, &h, l->acc, (unsigned)n));
			r->st.restorations_sent++;
		}
	}
	block_complete(r, c, b, l->acc, NULL, !l->direct);
}

/*
 * Does a contribution of @counter hosts and @nelem elements fit block @b's
 * sum? @sk: the frame carries the sketch after the data.
 */
static bool lead_fits(const struct lh_req *r, const struct canary *c, size_t b, const struct clead *l,
		      unsigned nelem, uint16_t counter, bool sk)
{
	return counter >= 1 && nelem == block_len(r, c, b) + (sk ? c->K : 0) && l->counter + counter <= r->P;
}

/* add a contribution of @counter hosts; @sk: the frame carries the sketch */
static void lead_add(struct lh_req *r, struct canary *c, size_t b, struct clead *l, const uint8_t *p,
		     unsigned nelem, uint16_t counter, bool sk)
{
	size_t n = block_len(r, c, b);

	if (!lead_fits(r, c, b, l, nelem, counter, sk)) {
		r->st.errors++;
		return;
	}
	lh_wire_add_elems(l->acc, p + EMU_CANARY_DATA_OFF, (unsigned)n);
	if (sk && c->K)
		lh_wire_add_elems(l->acc + c->E, p + EMU_CANARY_DATA_OFF + 4 * n, c->K);
	l->counter = (uint16_t)(l->counter + counter);
	if (l->counter == r->P)
		lead_complete(r, c, b, l);
}

static void lead_fail(struct lh_req *r, struct canary *c, size_t b, struct clead *l)
{
	l->attempt++;
	r->st.failures++;
	if ((c->tree || l->attempt > r->cfg.max_failures) && !l->fallback) {
		l->fallback = true;
		l->seen = lh_xcalloc(r->P, 1);
		r->st.fallbacks++;
	}
	lead_reset(r, c, b, l);
	l->last_rx = lh_now(r);
	if (l->fallback) {
		lead_pull_queue(c, b, l);
		l->pull_mark = l->counter;
		lead_arm(r, c, b, l, lh_now(r) + c->probe_gap);
		lead_pull(r, c);
		return;
	}
	uint32_t id = attempt_id(r, c, b, l->attempt);
	unsigned after = r->P - 1;

	/*
	 * The FAILUREs leave one after another, P - 1 small frames on our
	 * link; each says how many follow it, and its host waits that many
	 * small frames' time before it re-issues, so that the re-issued
	 * contributions meet at the switches as the first attempt's did
	 * (sent as they come, they would be spread over the whole fan-out,
	 * several switch timeouts at hundreds of hosts, and mostly straggle).
	 */
	for (unsigned k = 0; k < r->P; k++)
		if (k != r->rank) {
			after--;
			send_small(r, k, id, EMU_CANARY_OP_FAILURE, l->attempt, (uint16_t)(after < 65535 ? after : 65535),
				   NULL, 0);
		}
}

static void lead_arm(struct lh_req *r, struct canary *c, size_t b, struct clead *l, lh_time_t at)
{
	(void)c;
	l->ltgen++;
	l->ltimer = true;
	l->lt_at = at;
	lh_req_timer(r, at, (uint64_t)b | LH_LEAD_TIMER | (uint64_t)l->ltgen << 32);
}

static void lead_ask(struct lh_req *r, struct canary *c, size_t b, struct clead *l)
{
	uint32_t id = attempt_id(r, c, b, l->attempt);

	for (unsigned i = 0; i < l->nmiss; i++)
		if (!(l->got & 1u << i))
			send_small(r, l->miss[i], id, EMU_CANARY_OP_RECOVER, l->attempt, 0, NULL, 0);
}

/*
 * lead_recover - decode the missing hosts of the current attempt from the
 * sketch and ask each of them for its data directly. From then on the
 * attempt's reduce frames are ignored (each can only hold data of hosts
 * that were asked), so every contribution is counted exactly once. Returns
 * false (nothing done) without a sketch, with more than K hosts missing,
 * or if the sums do not decode.
 */
static bool lead_recover(struct lh_req *r, struct canary *c, size_t b, struct clead *l)
{
	unsigned k = r->P - l->counter;
	uint32_t m[LH_SKETCH_MAX];

	if (!c->K || l->complete || l->fallback || l->recovering || k == 0 || k > c->K)
		return false;
	for (unsigned j = 0; j < k; j++)
		m[j] = (c->sk_total[j] + LH_SKETCH_P - (uint32_t)l->acc[c->E + j] % LH_SKETCH_P) % LH_SKETCH_P;
	if (!sk_decode(m, k, r->P, l->miss))
		return false;
	l->recovering = true;
	l->nmiss = (uint8_t)k;
	l->got = 0;
	l->ltries = 0;
	r->st.recoveries++;
	r->st.recovered += k;
	lead_ask(r, c, b, l);
	lead_arm(r, c, b, l, lh_now(r) + rto(c, r));
	return true;
}

/*
 * The leader's timer: with the sketch, an attempt quiet for c->quiet is
 * decoded at once, without waiting for a host's timeout, and a recovery
 * whose direct copies did not all come is asked again, backing off; a
 * block in fallback pulls again; a deferred request's attempt is failed
 * or polled (lead_poll).
 */
static void lead_timer(struct lh_req *r, struct canary *c, size_t b, uint16_t gen)
{
	struct clead *l = lead_of(r, c, b);

	if (leader_of(r, b) != r->rank || gen != l->ltgen)
		return;
	l->ltimer = false;
	if (l->complete)
		return;
	if (l->fallback) {
		lead_pull_again(r, c, b, l);
		return;
	}
	if (l->recovering) {
		if (l->ltries < 6)
			l->ltries++;
		lead_ask(r, c, b, l);
		lead_arm(r, c, b, l, lh_now(r) + (rto(c, r) << l->ltries));
		return;
	}
	if (c->K && lh_now(r) < l->last_rx + c->quiet) {
		lead_arm(r, c, b, l, l->last_rx + c->quiet);
		return;
	}
	if (!lead_recover(r, c, b, l))
		lead_poll(r, c, b, l);
}

/*
 * lead_late - which asked hosts does a reduce frame of the attempt being
 * recovered hold? Every other rank is counted already, so the frame can
 * only carry data of the hosts asked directly: it was late, not lost. Its
 * own sketch names them (its @counter <= nmiss power sums decode to
 * exactly those ranks). Returns their bits in miss[], or 0 if the frame
 * cannot be counted: it does not decode to asked hosts, or one of them was
 * counted already (from its direct copy; the others' copies are on their
 * way, since they were asked).
 */
static uint32_t lead_late(const struct lh_req *r, const struct canary *c, size_t b, const struct clead *l,
			  const uint8_t *p, unsigned nelem, uint16_t counter)
{
	size_t n = block_len(r, c, b);
	int32_t sk[LH_SKETCH_MAX];
	uint32_t m[LH_SKETCH_MAX], who[LH_SKETCH_MAX], mask = 0;

	if (counter > l->nmiss || !lead_fits(r, c, b, l, nelem, counter, true))
		return 0;
	lh_wire_get_elems(sk, p + EMU_CANARY_DATA_OFF + 4 * n, counter);
	for (unsigned j = 0; j < counter; j++)
		m[j] = (uint32_t)sk[j] % LH_SKETCH_P;
	if (!sk_decode(m, counter, r->P, who))
		return 0;
	for (unsigned x = 0; x < counter; x++) {
		unsigned i = 0;

		while (i < l->nmiss && l->miss[i] != who[x])
			i++;
		if (i == l->nmiss || (l->got | mask) & 1u << i)
			return 0;
		mask |= 1u << i;
	}
	return mask;
}

/* a bypassed (collision) frame that counts: remember its switch and port for the restoration */
static void lead_collision(struct lh_req *r, const struct canary *c, size_t b, struct clead *l,
			   const struct emu_canary_hdr *h, unsigned nelem)
{
	if (!(h->flags & EMU_CANARY_F_BYPASS) || !lead_fits(r, c, b, l, nelem, h->counter, true))
		return;
	r->st.collisions_seen++;
	if (l->ncoll == l->capcoll) {
		l->capcoll = l->capcoll ? 2 * l->capcoll : 8;
		l->coll = lh_xrealloc(l->coll, l->capcoll * sizeof(*l->coll));
	}
	l->coll[l->ncoll++] = (struct coll){ h->swaddr, (uint16_t)h->children };
}

/*
 * lead_proven - record @from as asking for the current attempt; may its
 * request fail it? The first attempt: yes (the paper's rule). A re-issue:
 * only once a
 * contribution that was sent is provably missing. Only a host that sent
 * the attempt asks for it, and a host whose data has not left it yet
 * (noise, a long send queue, a re-issue held back) does not: while fewer
 * hosts have asked than contributions were counted (the leader's own
 * aside), every asker may be among those counted, and what is missing may
 * simply not have been sent. Once more have asked, the data of at least
 * one asker is not here: lost, or queued for longer than its timeout.
 * With one contribution missing, every other host must have asked; those
 * whose requests were lost are polled (lead_poll). So a block that is
 * merely slow fails once at most, unless data of its re-issue is still on
 * its way a quarter timeout after it left (a polled host's answer) or a
 * timeout after (a request); a re-issue that is lost again fails when enough
 * hosts have asked, with one contribution lost a round trip or so after
 * the first request.
 */
static bool lead_proven(struct lh_req *r, struct clead *l, unsigned from)
{
	if (l->attempt == 0)
		return true;
	if (!l->req)
		l->req = lh_xcalloc((r->P + 7) / 8, 1);
	if (!(l->req[from / 8] & 1u << from % 8)) {
		l->req[from / 8] |= (uint8_t)(1u << from % 8);
		if (!l->nreq++)
			l->req_at = lh_now(r);
	}
	return l->nreq >= l->counter;
}

/*
 * lead_poll - a request for a re-issue was deferred. Proven (lead_proven):
 * the attempt fails once it has been quiet for a quarter timeout, on this
 * leader's timer if no request comes then. Not proven, once it is that
 * quiet and at most max(2, P / 4) more askers would prove it: ask every
 * host that has not asked whether it has sent its data (a RETX_REQ from
 * the leader). A host whose data left it a quarter timeout ago or more
 * answers with its own request at once; one whose data has not left it,
 * or only just, does not, and is waited for or polled again. So a lost
 * request costs a round trip, not its host's backed-off timeout. While
 * more are missing, their timers are still running: the poll waits until
 * a timeout after the first request (then every host that sent has had
 * its turn, and requests or FAILUREs lost on the way are found). A round
 * that brings no proof is repeated after half a timeout, doubling up to 8
 * timeouts.
 */
/* the wait after poll round @npoll (>= 1): half a timeout @t, doubling up to 8 timeouts */
static lh_time_t poll_gap(lh_time_t t, unsigned npoll)
{
	return (t / 2) << (npoll < 5 ? npoll - 1 : 4);
}

static void lead_poll(struct lh_req *r, struct canary *c, size_t b, struct clead *l)
{
	lh_time_t t = rto(c, r), now = lh_now(r), at;
	unsigned most = r->P / 4 > 2 ? r->P / 4 : 2;

	if (l->attempt == 0 || l->complete || l->fallback || l->recovering || !l->nreq)
		return;
	at = l->last_rx + t / 4;
	if (l->nreq >= l->counter) {
		if (now < at)
			lead_arm(r, c, b, l, at);
		else
			lead_fail(r, c, b, l);
		return;
	}
	if (l->counter - l->nreq > most && at < l->req_at + t)
		at = l->req_at + t;
	if (l->npoll && at < l->poll_at + poll_gap(t, l->npoll))
		at = l->poll_at + poll_gap(t, l->npoll);
	if (now < at) {
		/* with the sketch, not past the quiet decode (lead_timer does both) */
		if (c->K && l->last_rx + c->quiet > now && l->last_rx + c->quiet < at)
			at = l->last_rx + c->quiet;
		lead_arm(r, c, b, l, at);
		return;
	}
	uint32_t id = attempt_id(r, c, b, l->attempt);

	for (unsigned k = 0; k < r->P; k++)
		if (k != r->rank && !(l->req[k / 8] & 1u << k % 8)) {
			send_small(r, k, id, EMU_CANARY_OP_RETX_REQ, r->rank, 0, NULL, 0);
			r->st.polls++;
		}
	l->poll_at = now;
	if (l->npoll < 255)
		l->npoll++;
	lead_arm(r, c, b, l, now + poll_gap(t, l->npoll));
}

static void leader_rx(struct lh_req *r, struct canary *c, size_t b, unsigned a, const struct emu_canary_hdr *h,
		      const uint8_t *p, unsigned nelem)
{
	struct clead *l = lead_of(r, c, b);
	unsigned op = h->flags & EMU_CANARY_OP_MASK;

	switch (op) {
	case EMU_CANARY_OP_REDUCE:
		r->st.leader_frames_recv++;
		if (l->complete || l->fallback || a != l->attempt)
			return;	/* an older attempt, or a late copy */
		if (l->recovering) {
			/* late, not lost: the first of the tree's copy and the direct one counts */
			uint32_t mask = lead_late(r, c, b, l, p, nelem, h->counter);

			if (!mask)
				return;
			l->got |= mask;
			r->st.recovered_late += h->counter;
		}
		/*
		 * A collision is recorded only with a contribution that counts:
		 * at most P - 1 per attempt, however many frames arrive (a
		 * frame with counter 0 would otherwise grow the list forever).
		 */
		lead_collision(r, c, b, l, h, nelem);
		l->last_rx = lh_now(r);
		lead_add(r, c, b, l, p, nelem, h->counter, true);
		/* the quiet timer, unless one is due sooner (a poll's may be due later: lead_poll) */
		if (!l->complete && c->K && (!l->ltimer || l->lt_at > l->last_rx + c->quiet) && !l->recovering)
			lead_arm(r, c, b, l, l->last_rx + c->quiet);
		return;
	case EMU_CANARY_OP_FALLBACK:
		if (l->recovering && !l->complete && a == l->attempt) {
			for (unsigned i = 0; i < l->nmiss; i++)
				if (l->miss[i] == h->children && !(l->got & 1u << i)) {
					l->got |= 1u << i;
					l->direct |= 1u << i;
					lead_add(r, c, b, l, p, nelem, 1, false);
				}
			return;
		}
		if (l->complete || !l->fallback || a != l->attempt || h->children >= r->P ||
		    l->seen[h->children] == PULL_GOT)
			return;
		if (l->seen[h->children] >= PULL_ASKED) {
			l->asked--;
			c->pull_out--;
		}
		l->seen[h->children] = PULL_GOT;
		lead_add(r, c, b, l, p, nelem, 1, false);
		lead_pull(r, c);
		return;
	case EMU_CANARY_OP_RETX_REQ: {
		unsigned from = h->children;

		if (from >= r->P || from == r->rank)
			return;
		bool probe = h->counter >= 1 && h->counter <= 3;

		if (c->K && h->counter == 1 && l->complete && !l->fallback && a == l->attempt && !l->rebcast) {
			/*
			 * The first probe for a block we completed: broadcast it
			 * again. It costs one frame here and goes only where the
			 * first did not (lost on our own link: to every host), where
			 * a unicast per probing host would hold our link for as
			 * many frame times, and our own data behind them.
			 */
			l->rebcast = true;
			l->rebcast_at = lh_now(r);
			r->st.rebroadcasts++;
			lead_bcast(r, c, b, l, EMU_CANARY_BCAST_NOSAMPLE);
		} else if (h->counter == 1 && l->complete && l->rebcast && lh_now(r) - l->rebcast_at < c->quiet) {
			/* probes that crossed the second broadcast */
			return;
		}

		/*
		 * A tail probe (counter 3) comes after probe_gap without any
		 * result coming back to that host: nothing is queued ahead of
		 * the broadcast it misses, which is lost, not late.
		 */
		if (probe && l->complete && lh_now(r) - l->done_at < (h->counter == 3 ? c->probe_gap : bcast_wait(c))) {
			/* a probe overtaken by our broadcast: still on its way, most likely */
			return;
		}
		if (c->K && (probe || h->counter == 0) && l->complete && !l->fallback && a == l->attempt &&
		    lead_again(r, c, b, l, !probe))
			return;
		if (probe && !l->complete) {
			/* a probe: recover if the sketch can, never fail the block */
			if (a == l->attempt && !l->fallback && !l->recovering)
				lead_recover(r, c, b, l);
			else if (a == l->attempt && l->recovering)
				for (unsigned i = 0; i < l->nmiss; i++)
					if (l->miss[i] == from && !(l->got & 1u << i))
						send_small(r, from, attempt_id(r, c, b, l->attempt),
							   EMU_CANARY_OP_RECOVER, l->attempt, 0, NULL, 0);
			return;
		}
		if (l->complete) {
			r->st.retx_served++;
			send_small(r, from, attempt_id(r, c, b, l->attempt), EMU_CANARY_OP_RETX_DATA, 0,
				   (uint16_t)r->P, l->acc, (unsigned)block_len(r, c, b));
		} else if (a == l->attempt && !l->fallback && l->recovering) {
			/* it may have missed our request for its data */
			for (unsigned i = 0; i < l->nmiss; i++)
				if (l->miss[i] == from && !(l->got & 1u << i))
					send_small(r, from, attempt_id(r, c, b, l->attempt), EMU_CANARY_OP_RECOVER,
						   l->attempt, 0, NULL, 0);
		} else if (a == l->attempt && !l->fallback) {
			if (lead_recover(r, c, b, l))
				return;
			/*
			 * Slow, not lost: contributions of this attempt still
			 * came in during the last quarter timeout (stragglers
			 * queued behind the broadcasts into this host), the
			 * attempt has just been issued, or it is a re-issue and
			 * no data is provably missing yet (the hosts that have
			 * not asked may not have sent theirs: lead_proven).
			 * Failing it would send the whole block again from
			 * every host into the same queues; the requester backs
			 * off, and the leader fails or polls (lead_poll).
			 */
			bool proven = lead_proven(r, l, from);

			if (!proven || lh_now(r) - l->last_rx < rto(c, r) / 4) {
				r->st.retx_deferred++;
				lead_poll(r, c, b, l);
				return;
			}
			lead_fail(r, c, b, l);
		} else if (!l->fallback) {
			/* it missed the FAILURE of the current attempt */
			send_small(r, from, attempt_id(r, c, b, l->attempt), EMU_CANARY_OP_FAILURE, l->attempt, 0,
				   NULL, 0);
		} else if ((l->seen[from] == PULL_NONE && c->pull_out < c->pull_max) || l->seen[from] == PULL_LATE) {
			/*
			 * In fallback: a host that asks before its turn in the
			 * pull is asked now if the pull has room (its data may
			 * be all that is missing); one asked before the pull
			 * timer's last tick is asked again (the request or its
			 * copy was lost). One asked since is not: its copy may
			 * be on its way, and a second would go past the limit.
			 */
			if (l->seen[from] == PULL_NONE) {
				l->seen[from] = PULL_ASKED;
				l->asked++;
				c->pull_out++;
			}
			send_small(r, from, attempt_id(r, c, b, l->attempt), EMU_CANARY_OP_FALLBACK, l->attempt, 0,
				   NULL, 0);
		}
		return;
	}
	default:
		return;
	}
}

/* ---------- dispatch ---------- */

/*
 * Karn's rule: no RTT sample from a broadcast the leader sent again or
 * after recovering the block (children bit 0), nor from a resend that
 * answers our probe. A probed block whose first broadcast comes is a
 * sample: it was late, not lost.
 */
static bool bcast_sample(unsigned op, const struct emu_canary_hdr *h, const struct cblock *cb)
{
	return op == EMU_CANARY_OP_TREE_BCAST ||
	       (!(h->children & EMU_CANARY_BCAST_NOSAMPLE) && !(op == EMU_CANARY_OP_RETX_DATA && cb->probed));
}

static void canary_rx_hdr(struct lh_req *r, const uint8_t *p, uint32_t len, const struct emu_canary_hdr *hdr,
			  unsigned nelem)
{
	struct canary *c = r->algo;
	struct emu_canary_hdr h = *hdr;

	(void)len;
	uint32_t seq = h.id & LH_SEQ_MASK;
	/* seq < 2^24: 32-bit division unless nblocks is larger (then b = seq, a = 0) */
	uint32_t nb = c->nblocks <= UINT32_MAX ? (uint32_t)c->nblocks : UINT32_MAX;
	size_t b = seq % nb;
	unsigned a = seq / nb;
	unsigned op = h.flags & EMU_CANARY_OP_MASK;

	if (leader_of(r, b) == r->rank && (op == EMU_CANARY_OP_REDUCE || op == EMU_CANARY_OP_RETX_REQ ||
					   op == EMU_CANARY_OP_FALLBACK)) {
		leader_rx(r, c, b, a, &h, p, nelem);
		return;
	}
	struct cblock *cb = &c->b[b];

	switch (op) {
	case EMU_CANARY_OP_TREE_BCAST:
		if (!c->tree)
			return;
		/* fall through */
	case EMU_CANARY_OP_BCAST:
	case EMU_CANARY_OP_RETX_DATA:
		if (h.counter != h.hosts || h.hosts != r->P || nelem != block_len(r, c, b)) {
			r->st.errors++;
			return;
		}
		if (cb->state == B_DONE) {
			r->st.duplicates++;
			return;
		}
		if (op == EMU_CANARY_OP_BCAST && !c->tree)
			canary_hint(r, c, h.swaddr);
		if (r->cfg.on_block_wire && !r->out && !(c->tree && leader_of(r, b) == r->rank)) {
			/* the result straight from the frame */
			block_complete(r, c, b, NULL, p + EMU_CANARY_DATA_OFF, bcast_sample(op, &h, cb));
			return;
		}
		lh_wire_get_elems(c->buf, p + EMU_CANARY_DATA_OFF, nelem);
		if (c->tree && leader_of(r, b) == r->rank) {
			/*
			 * The leader keeps the tree's result to answer requests,
			 * also when it had already fallen back: the broadcast
			 * holds every host's data (counter == hosts == P), so the
			 * fallback is done. Its timer stops with this block, so a
			 * host whose data it still missed, that has the result
			 * and so asks nothing, would otherwise leave it waiting
			 * forever, and the hosts that sent their data and lack
			 * the result with it. Like a fallback that completes,
			 * it sends the result to every host.
			 */
			struct clead *l = lead_of(r, c, b);

			if (!l->complete) {
				memcpy(l->acc, c->buf, nelem * sizeof(int32_t));
				l->complete = true;
				l->done_at = lh_now(r);
				if (l->fallback)
					lead_fallback_result(r, c, b, l);
			}
		}
		block_complete(r, c, b, c->buf, NULL, bcast_sample(op, &h, cb));
		return;
	case EMU_CANARY_OP_RETX_REQ:
		/*
		 * The leader polls (lead_poll): if our data of the block left
		 * us a quarter timeout ago or more, ask for the block now,
		 * naming the attempt we sent (an older one than the poll's: we
		 * missed a FAILURE, which the leader sends again). If it has
		 * not left, or only just (our request, a bypass frame, could
		 * overtake it and prove it missing while it is on its way),
		 * say nothing: the leader waits, or polls again.
		 */
		if (c->tree || h.children != leader_of(r, b) || cb->state != B_SENT || cb->held || cb->queued ||
		    cb->fallback || a < cb->attempt || lh_now(r) - block_times(c, b)->data < rto(c, r) / 4)
			return;
		r->st.retx_requests++;
		send_small(r, leader_of(r, b), attempt_id(r, c, b, cb->attempt), EMU_CANARY_OP_RETX_REQ, r->rank, 0,
			   NULL, 0);
		return;
	case EMU_CANARY_OP_RECOVER:
		/* the leader knows our data of this attempt is missing: send it directly */
		if (leader_of(r, b) == r->rank || c->tree || cb->state == B_DONE || h.children < cb->attempt)
			return;
		if (h.children > r->cfg.max_failures + 1) {
			r->st.errors++;	/* no leader's attempt (see FAILURE below) */
			return;
		}
		if (h.children > cb->attempt) {
			cb->attempt = (uint16_t)h.children;	/* we missed its FAILURE */
			cb->tgen++;
			cb->tries = 0;
			r->st.reissues++;
		}
		if (cb->state == B_IDLE)
			block_send_first(r, c, b);
		{
			uint8_t fb = cb->fallback;

			cb->fallback = 1;
			send_block(r, c, b, true);
			cb->fallback = fb;
		}
		return;
	case EMU_CANARY_OP_FAILURE:
	case EMU_CANARY_OP_FALLBACK:
		if (leader_of(r, b) == r->rank)
			return;
		/*
		 * A leader re-issues a block at most max_failures + 1 times;
		 * a later attempt is no leader's, and its id would leave this
		 * allreduce's sequence numbers (into another block's or tenant's).
		 */
		if (h.children > r->cfg.max_failures + 1) {
			r->st.errors++;
			return;
		}
		if (cb->state == B_DONE) {
			/* static tree: we have the result, the leader has not; it needs our data */
			if (c->tree && op == EMU_CANARY_OP_FALLBACK) {
				uint8_t fb = cb->fallback;

				cb->fallback = 1;
				cb->attempt = (uint16_t)h.children;
				send_block(r, c, b, true);
				cb->fallback = fb;
			}
			return;
		}
		/* an older attempt's news, or the same FAILURE again: nothing to do;
		 * FALLBACK again means the leader still misses our data */
		if (h.children < cb->attempt || (op == EMU_CANARY_OP_FAILURE && h.children == cb->attempt))
			return;
		if (h.children > cb->attempt) {
			/*
			 * The timer running is the old attempt's: cancel it. Were
			 * it to fire before the re-issue leaves, its request would
			 * name the new attempt, which the leader would fail
			 * although no data of it was even sent. The re-issue arms
			 * the new attempt's timer when it goes out.
			 */
			cb->attempt = (uint16_t)h.children;
			cb->tgen++;
			/*
			 * A re-issue starts the back-off afresh: requests for the
			 * old attempt had backed it off, and a loss of the new one
			 * would wait that long. Not a FALLBACK: its result comes
			 * from a pull the leader paces, and requests sooner only
			 * add to it (static:4, 0.01 % loss, no background, 128
			 * hosts: half the goodput).
			 */
			if (op == EMU_CANARY_OP_FAILURE)
				cb->tries = 0;
			r->st.reissues++;
		}
		if (op == EMU_CANARY_OP_FALLBACK && !cb->fallback) {
			cb->fallback = 1;
			r->st.fallbacks++;
		}
		if (op == EMU_CANARY_OP_FAILURE && h.counter) {
			cb->held = 1;
			/* re-issue when the leader's last FAILURE reaches its host (see lead_fail) */
			lh_req_timer(r, lh_now(r) + h.counter * c->fts,
				     LH_REISSUE_TIMER | (uint64_t)b | (uint64_t)cb->attempt << 32);
			return;
		}
		queue_resend(c, b);
		return;
	default:
		r->st.errors++;
		return;
	}
}

static int canary_start(struct lh_req *r)
{
	struct canary *c = lh_xcalloc(1, sizeof(*c));
	lh_time_t ft = (lh_time_t)(lh_wire_bytes(EMU_CANARY_DATA_OFF + 4 * r->cfg.elements) * 8 * 1000000000000ULL /
				   r->comm->host->t.rate_bps);

	c->tree = r->cfg.algo == LH_ALGO_STATIC;
	c->K = c->tree ? 0 : r->cfg.sketch;
	c->E = r->cfg.elements - c->K;
	if (c->tree && r->cfg.ntrees == 0) {
		free(c);
		return -EINVAL;
	}
	c->nblocks = (r->count + c->E - 1) / c->E;
	if (c->nblocks * (r->cfg.max_failures + 2ULL) > LH_SEQ_MASK) {
		free(c);
		return -EINVAL;
	}
	c->b = lh_xcalloc(c->nblocks, sizeof(*c->b));
	c->remaining = c->nblocks;
	size_t nlead = (c->nblocks + r->P - 1) / r->P;

	c->lead = lh_xcalloc(nlead + 1, sizeof(*c->lead));
	r->algo = c;
	c->ft = ft;
	c->fts = (lh_time_t)(lh_wire_bytes(EMU_CANARY_DATA_OFF) * 8 * 1000000000000ULL / r->comm->host->t.rate_bps);
	c->hold = 3 * r->cfg.switch_timeout;
	c->adaptive = r->cfg.retx_timeout == 0;
	canary_size(r, c);
	if (!c->adaptive)
		r->st.retx_timeout = r->cfg.retx_timeout;
	for (unsigned j = 0; j < c->K; j++)
		c->sk_mine[j] = sk_pow(r->rank + 1, j + 1);
	for (unsigned q = 0; q < r->P && c->K; q++) {
		uint64_t x = 1;

		for (unsigned j = 0; j < c->K; j++) {
			x = x * (q + 1) % LH_SKETCH_P;
			c->sk_total[j] = (uint32_t)((c->sk_total[j] + x) % LH_SKETCH_P);
		}
	}
	for (size_t b = r->rank; b < c->nblocks; b += r->P) {
		struct clead *l = lead_of(r, c, b);

		l->acc = lh_xmalloc((c->E + c->K) * sizeof(int32_t));
		lead_reset(r, c, b, l);
		r->st.blocks_led++;
		if (r->P == 1)
			lead_complete(r, c, b, l);
	}
	return 0;
}

static void canary_fini(struct lh_req *r)
{
	struct canary *c = r->algo;

	if (!c)
		return;
	size_t nlead = (c->nblocks + r->P - 1) / r->P;

	for (size_t i = 0; i < nlead; i++) {
		free(c->lead[i].acc);
		free(c->lead[i].seen);
		free(c->lead[i].req);
		free(c->lead[i].coll);
	}
	free(c->lead);
	free(c->b);
	free(c->tm);
	free(c->tfree);
	free(c->resend);
	free(c->pullq);
	free(c);
	r->algo = NULL;
}

/* what canary_start() allocates at the host that leads the fewest blocks */
static size_t canary_mem(const struct lh_ar_cfg *cfg, unsigned P, size_t count)
{
	unsigned K = cfg->algo == LH_ALGO_STATIC ? 0 : cfg->sketch;
	size_t E = cfg->elements - K, nblocks = (count + E - 1) / E;

	return sizeof(struct canary) + nblocks * sizeof(struct cblock) +
	       ((nblocks + P - 1) / P + 1) * sizeof(struct clead) + nblocks / P * (E + K) * sizeof(int32_t);
}

static void canary_rx(struct lh_req *r, const uint8_t *p, uint32_t len)
{
	struct emu_canary_hdr h;
	unsigned nelem;

	if (lh_wire_canary_parse(p, len, &h, &nelem) == LH_WIRE_OK)
		canary_rx_hdr(r, p, len, &h, nelem);
}

const struct lh_algo_ops lh_canary_ops = {
	.name = "canary",
	.start = canary_start,
	.pull = canary_pull,
	.rx = canary_rx,
	.rx_canary = canary_rx_hdr,
	.timer = canary_timer,
	.timer_idle = canary_timer_idle,
	.fini = canary_fini,
	.mem = canary_mem,
};
