// SPDX-License-Identifier: MIT
/*
 * DOC: canary.c - the Canary host (paper sec. 3.2-3.5): what every rank
 * does with the blocks it sends; canary_lead.c is what the leader of a
 * block does. libhost/PROTOCOL.md has the block's states, the opcodes and
 * the frames.
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

#include "libhost/canary_internal.h"
#include "libhost/lh_util.h"

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
	c->rto_min = 2 * (rtt + (lh_time_t)w * c->ft);
	if (c->adaptive)
		r->st.retx_timeout = c->srtt == 0 ? c->rto_min : rto_compute(c, r);
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
	lh_canary_send_small(r, leader_of(r, b), attempt_id(r, c, b, pb->attempt), EMU_CANARY_OP_RETX_REQ, r->rank,
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
	lh_req_timer(r, lh_now(r) + lh_backoff(r, c->probe_gap, c->tailshift, c->probe_gap << LH_TAIL_SHIFT_MAX, LH_TAIL_TIMER),
		     LH_TAIL_TIMER | (uint64_t)c->tailgen << 32);
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
void lh_canary_block_complete(struct lh_req *r, struct canary *c, size_t b, const int32_t *data, const uint8_t *wire,
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
			lh_rtt_sample(c, lh_now(r) - tm->sent);
			r->st.retx_timeout = rto_compute(c, r);
		}
		first = tm->first;
		c->tfree[c->ntfree++] = cb->slot;
	}
	cb->state = B_DONE;
	r->st.window_sum += r->st.window;
	r->st.window_n++;
	/*
	 * The result first: @data may be c->buf, which the probes below
	 * overwrite. A probe is a control frame, and a transmitter idle again
	 * after it (a real link's clock runs while send() does) has the pull
	 * send our next block through c->buf (send_block) before they return.
	 */
	if (wire)
		r->cfg.on_block_wire(r->cfg.block_arg, b * c->E, wire, block_len(r, c, b));
	else
		lh_output(r, b * c->E, data, block_len(r, c, b));
	if (c->K && first) {
		probe_late(r, c, first);
		c->tailshift = 0;
		tail_arm(r, c);
	}
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

/*
 * block_timeout - block @b's timeout: doubled for every request already
 * made, jittered, and at most LH_BACKOFF_CAP floors (rto_min) unless the
 * timeout itself is longer (lh_backoff).
 */
static lh_time_t block_timeout(struct lh_req *r, const struct canary *c, size_t b)
{
	lh_time_t t = rto(c, r);

	return lh_backoff(r, t, c->b[b].tries, LH_BACKOFF_CAP * c->rto_min, b);
}

/*
 * arm_now - arm() at @now, the time its caller read (one reading for a
 * block's times and its timer). Inline: a block's send saves no registers
 * a second time for it.
 */
static inline __attribute__((always_inline)) void arm_now(struct lh_req *r, struct canary *c, size_t b, lh_time_t now)
{
	struct cblock *cb = &c->b[b];

	/* a complete block is sent again only for a static-tree leader's fallback: its timer finds it done */
	if (cb->state == B_SENT)
		block_times(c, b)->sent = now;
	arm_at(r, c, b, now + block_timeout(r, c, b));
}

static void arm(struct lh_req *r, struct canary *c, size_t b)
{
	arm_now(r, c, b, lh_now(r));
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
	lh_time_t now = lh_now(r);	/* read once, after the send: the data and sent times, the timer's base */

	if (cb->state == B_SENT)
		block_times(c, b)->data = now;
	arm_now(r, c, b, now);
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

void lh_canary_send_small(struct lh_req *r, unsigned to, uint32_t id, uint8_t op, uint32_t children, uint16_t counter,
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
			lh_lead_timer(r, c, b, gen);
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
	lh_time_t due = block_times(c, b)->sent + block_timeout(r, c, b);

	if (due > lh_now(r)) {
		arm_at(r, c, b, due);
		return;
	}
	if (c->tree && leader_of(r, b) == r->rank) {
		/* a static-tree leader without the result: host-based at once */
		struct clead *l = lead_of(r, c, b);

		/* hosts that already had the result have no timer: the pull's timer asks them again */
		if (!l->complete && !l->fallback)
			lh_lead_fail(r, c, b, l);
		if (c->b[b].tries < 255)
			c->b[b].tries++;
		arm(r, c, b);
		return;
	}
	/* no result in time: ask the leader */
	r->st.retx_requests++;
	if (c->b[b].tries < 255)
		c->b[b].tries++;
	lh_canary_send_small(r, leader_of(r, b), attempt_id(r, c, b, c->b[b].attempt), EMU_CANARY_OP_RETX_REQ, r->rank, 0,
		   NULL, 0);
	arm(r, c, b);
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

/*
 * host_rx_result - BCAST, RETX_DATA or TREE_BCAST (@op): the sum of block
 * @b, from the switches' multicast or a leader's unicast. It completes the
 * block whatever the attempt; a static-tree leader also keeps it to answer
 * requests.
 */
static void host_rx_result(struct lh_req *r, struct canary *c, size_t b, unsigned op,
			   const struct emu_canary_hdr *h, const uint8_t *p, unsigned nelem)
{
	struct cblock *cb = &c->b[b];

	if (h->counter != h->hosts || h->hosts != r->P || nelem != block_len(r, c, b)) {
		r->st.errors++;
		return;
	}
	if (cb->state == B_DONE) {
		r->st.duplicates++;
		return;
	}
	if (op == EMU_CANARY_OP_BCAST && !c->tree)
		canary_hint(r, c, h->swaddr);
	if (r->cfg.on_block_wire && !r->out && !(c->tree && leader_of(r, b) == r->rank)) {
		/* the result straight from the frame */
		lh_canary_block_complete(r, c, b, NULL, p + EMU_CANARY_DATA_OFF, bcast_sample(op, h, cb));
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
				lh_lead_result(r, c, b, l);
		}
		/* l->acc: lh_lead_result's sends may have sent our next block through c->buf */
		lh_canary_block_complete(r, c, b, l->acc, NULL, bcast_sample(op, h, cb));
		return;
	}
	lh_canary_block_complete(r, c, b, c->buf, NULL, bcast_sample(op, h, cb));
}

/*
 * host_rx_poll - RETX_REQ from the leader of block @b (attempt @a): a poll
 * (lead_poll in canary_lead.c). If our data of the block left us a quarter
 * timeout ago or more, ask for the block now, naming the attempt we sent
 * (an older one than the poll's: we missed a FAILURE, which the leader
 * sends again). If it has not left, or only just (our request, a bypass
 * frame, could overtake it and prove it missing while it is on its way),
 * say nothing: the leader waits, or polls again.
 */
static void host_rx_poll(struct lh_req *r, struct canary *c, size_t b, unsigned a, const struct emu_canary_hdr *h)
{
	struct cblock *cb = &c->b[b];

	if (c->tree || h->children != leader_of(r, b) || cb->state != B_SENT || cb->held || cb->queued ||
	    cb->fallback || a < cb->attempt || lh_now(r) - block_times(c, b)->data < rto(c, r) / 4)
		return;
	r->st.retx_requests++;
	lh_canary_send_small(r, leader_of(r, b), attempt_id(r, c, b, cb->attempt), EMU_CANARY_OP_RETX_REQ, r->rank,
			     0, NULL, 0);
}

/*
 * host_rx_recover - RECOVER: the leader knows our data of attempt
 * h->children is missing (the sketch named us): send it directly.
 */
static void host_rx_recover(struct lh_req *r, struct canary *c, size_t b, const struct emu_canary_hdr *h)
{
	struct cblock *cb = &c->b[b];

	if (leader_of(r, b) == r->rank || c->tree || cb->state == B_DONE || h->children < cb->attempt)
		return;
	if (h->children > r->cfg.max_failures + 1) {
		r->st.errors++;	/* no leader's attempt (see host_rx_attempt) */
		return;
	}
	if (h->children > cb->attempt) {
		cb->attempt = (uint16_t)h->children;	/* we missed its FAILURE */
		cb->tgen++;
		cb->tries = 0;
		r->st.reissues++;
	}
	if (cb->state == B_IDLE)
		block_send_first(r, c, b);
	uint8_t fb = cb->fallback;

	cb->fallback = 1;
	send_block(r, c, b, true);
	cb->fallback = fb;
}

/*
 * host_rx_attempt - FAILURE or FALLBACK (@op) for attempt h->children of
 * block @b: re-issue the block as that attempt (after h->counter more
 * FAILUREs' time, see lh_lead_fail), or send our data to the leader
 * directly (fallback: reduction at the leader).
 */
static void host_rx_attempt(struct lh_req *r, struct canary *c, size_t b, unsigned op,
			    const struct emu_canary_hdr *h)
{
	struct cblock *cb = &c->b[b];

	if (leader_of(r, b) == r->rank)
		return;
	/*
	 * A leader re-issues a block at most max_failures + 1 times;
	 * a later attempt is no leader's, and its id would leave this
	 * allreduce's sequence numbers (into another block's or tenant's).
	 */
	if (h->children > r->cfg.max_failures + 1) {
		r->st.errors++;
		return;
	}
	if (cb->state == B_DONE) {
		/* static tree: we have the result, the leader has not; it needs our data */
		if (c->tree && op == EMU_CANARY_OP_FALLBACK) {
			uint8_t fb = cb->fallback;

			cb->fallback = 1;
			cb->attempt = (uint16_t)h->children;
			send_block(r, c, b, true);
			cb->fallback = fb;
		}
		return;
	}
	/* an older attempt's news, or the same FAILURE again: nothing to do;
	 * FALLBACK again means the leader still misses our data */
	if (h->children < cb->attempt || (op == EMU_CANARY_OP_FAILURE && h->children == cb->attempt))
		return;
	if (h->children > cb->attempt) {
		/*
		 * The timer running is the old attempt's: cancel it. Were
		 * it to fire before the re-issue leaves, its request would
		 * name the new attempt, which the leader would fail
		 * although no data of it was even sent. The re-issue arms
		 * the new attempt's timer when it goes out.
		 */
		cb->attempt = (uint16_t)h->children;
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
	if (op == EMU_CANARY_OP_FAILURE && h->counter) {
		cb->held = 1;
		/* re-issue when the leader's last FAILURE reaches its host (see lh_lead_fail) */
		lh_req_timer(r, lh_now(r) + h->counter * c->fts,
			     LH_REISSUE_TIMER | (uint64_t)b | (uint64_t)cb->attempt << 32);
		return;
	}
	queue_resend(c, b);
}

/*
 * canary_rx_hdr - a Canary frame: block and attempt from its id, then the
 * opcode's handler. REDUCE, FALLBACK data and RETX_REQ for a block this
 * rank leads go to the leader (lh_lead_rx); the rest are the host's.
 */
static void canary_rx_hdr(struct lh_req *r, const uint8_t *p, uint32_t len, const struct emu_canary_hdr *hdr,
			  unsigned nelem)
{
	struct canary *c = r->algo;
	const struct emu_canary_hdr *h = hdr;

	(void)len;
	uint32_t seq = h->id & LH_SEQ_MASK;
	/* a 32-bit division: nblocks <= LH_SEQ_MASK (canary_start) */
	uint32_t nb = (uint32_t)c->nblocks;
	size_t b = seq % nb;
	unsigned a = seq / nb;
	unsigned op = h->flags & EMU_CANARY_OP_MASK;

	if (leader_of(r, b) == r->rank && (op == EMU_CANARY_OP_REDUCE || op == EMU_CANARY_OP_RETX_REQ ||
					   op == EMU_CANARY_OP_FALLBACK)) {
		lh_lead_rx(r, c, b, a, h, p, nelem);
		return;
	}
	switch (op) {
	case EMU_CANARY_OP_TREE_BCAST:
		if (!c->tree)
			return;
		/* fall through */
	case EMU_CANARY_OP_BCAST:
	case EMU_CANARY_OP_RETX_DATA:
		host_rx_result(r, c, b, op, h, p, nelem);
		return;
	case EMU_CANARY_OP_RETX_REQ:
		host_rx_poll(r, c, b, a, h);
		return;
	case EMU_CANARY_OP_RECOVER:
		host_rx_recover(r, c, b, h);
		return;
	case EMU_CANARY_OP_FAILURE:
	case EMU_CANARY_OP_FALLBACK:
		host_rx_attempt(r, c, b, op, h);
		return;
	default:
		r->st.errors++;
		return;
	}
}

static int canary_start(struct lh_req *r)
{
	struct canary *c = lh_xzalloc_lines(sizeof(*c));
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
	/* pulled fallback data in flight: two base round trips of frames on our link, as the window */
	c->pull_max = (unsigned)(2 * r->cfg.rtt / c->ft) + 1;
	if (c->pull_max < 4)
		c->pull_max = 4;
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
		lh_lead_reset(r, c, b, l);
		r->st.blocks_led++;
		if (r->P == 1)
			lh_lead_complete(r, c, b, l);
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

/* canary_wait - the oldest block not complete here, and what this host waits on for it */
static void canary_wait(const struct lh_req *r, struct lh_ar_wait *w)
{
	struct canary *c = r->algo;
	size_t b = 0;

	w->blocks_left = c->remaining > UINT32_MAX ? UINT32_MAX : (uint32_t)c->remaining;
	while (b < c->nblocks && c->b[b].state == B_DONE)
		b++;
	if (b == c->nblocks)
		return;
	const struct cblock *cb = &c->b[b];

	w->block = (uint32_t)b;
	if (leader_of(r, b) == r->rank && lh_lead_wait(r, c, b, w))
		return;
	w->peer = leader_of(r, b);
	w->tries = cb->tries;
	if (cb->state == B_SENT)
		w->since = c->tm[cb->slot].sent;
	if (cb->held)
		w->what = LH_WAIT_REISSUE;
	else if (cb->state == B_SENT)
		w->what = cb->fallback ? LH_WAIT_FALLBACK : LH_WAIT_RESULT;
	else
		w->what = LH_WAIT_SEND;
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
	.wait = canary_wait,
};

