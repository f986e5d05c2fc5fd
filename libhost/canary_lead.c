// SPDX-License-Identifier: MIT
/*
 * DOC: canary_lead.c - the Canary leader (paper sec. 3.3-3.5): rank b mod P
 * leads block b; it counts the block's contributions, completes or fails
 * each attempt, recovers missing data (sketch, fallback) and answers the
 * hosts' requests and probes. canary.c is the host side, libhost/PROTOCOL.md
 * the protocol.
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
 * attempt's contributions meet at the switches (lh_lead_fail).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libhost/canary_internal.h"
#include "libhost/lh_util.h"

static void lead_arm(struct lh_req *r, struct canary *c, size_t b, struct clead *l, lh_time_t at);

/* lh_backoff's keys of the leader's retries of a block (the host's own: the block number) */
#define LH_KEY_PULL (1ULL << 40)
#define LH_KEY_RECOVER (2ULL << 40)
#define LH_KEY_POLL (3ULL << 40)
static bool lead_recover(struct lh_req *r, struct canary *c, size_t b, struct clead *l);
static void lead_poll(struct lh_req *r, struct canary *c, size_t b, struct clead *l);

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
		lh_canary_send_small(r, k, attempt_id(r, c, b, l->attempt), EMU_CANARY_OP_FALLBACK, l->attempt, 0, NULL, 0);
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
			lh_canary_send_small(r, k, id, EMU_CANARY_OP_FALLBACK, l->attempt, 0, NULL, 0);
		else if (l->seen[k] == PULL_ASKED)
			l->seen[k] = PULL_LATE;
	if (l->counter != l->pull_mark)
		l->ltries = 0;
	else if (l->ltries < 6)
		l->ltries++;
	l->pull_mark = l->counter;
	lead_arm(r, c, b, l, lh_now(r) + lh_backoff(r, c->probe_gap, l->ltries, c->probe_gap << LH_BACKOFF_SHIFT,
						    b | LH_KEY_PULL));
}

void lh_lead_reset(struct lh_req *r, struct canary *c, size_t b, struct clead *l)
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

/*
 * a fallback's result to every host, unicast; the pull's room goes to other
 * blocks. No RTT sample (Karn's rule): its time is the recovery's.
 */
void lh_lead_result(struct lh_req *r, struct canary *c, size_t b, struct clead *l)
{
	uint32_t id = attempt_id(r, c, b, l->attempt);

	lead_pull_end(c, l);
	for (unsigned k = 0; k < r->P; k++)
		if (k != r->rank)
			lh_canary_send_small(r, k, id, EMU_CANARY_OP_RETX_DATA, EMU_CANARY_BCAST_NOSAMPLE, (uint16_t)r->P,
					     l->acc, (unsigned)block_len(r, c, b));
	lead_pull(r, c);
}

void lh_lead_complete(struct lh_req *r, struct canary *c, size_t b, struct clead *l)
{
	size_t n = block_len(r, c, b);
	uint32_t id = attempt_id(r, c, b, l->attempt);

	l->complete = true;
	l->done_at = lh_now(r);
	if (l->fallback) {
		lh_lead_result(r, c, b, l);
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
				lh_canary_send_small(r, l->miss[i], id, EMU_CANARY_OP_RETX_DATA, 1, (uint16_t)r->P, l->acc,
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
	lh_canary_block_complete(r, c, b, l->acc, NULL, !l->direct);
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
		lh_lead_complete(r, c, b, l);
}

void lh_lead_fail(struct lh_req *r, struct canary *c, size_t b, struct clead *l)
{
	l->attempt++;
	r->st.failures++;
	if ((c->tree || l->attempt > r->cfg.max_failures) && !l->fallback) {
		l->fallback = true;
		l->seen = lh_xcalloc(r->P, 1);
		r->st.fallbacks++;
	}
	lh_lead_reset(r, c, b, l);
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
			lh_canary_send_small(r, k, id, EMU_CANARY_OP_FAILURE, l->attempt, (uint16_t)(after < 65535 ? after : 65535),
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
			lh_canary_send_small(r, l->miss[i], id, EMU_CANARY_OP_RECOVER, l->attempt, 0, NULL, 0);
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
void lh_lead_timer(struct lh_req *r, struct canary *c, size_t b, uint16_t gen)
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
		lead_arm(r, c, b, l, lh_now(r) + lh_backoff(r, rto(c, r), l->ltries, LH_BACKOFF_CAP * c->rto_min,
							    b | LH_KEY_RECOVER));
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
/* the wait after poll round @npoll (>= 1) of block @b: half a timeout @t, doubling up to 8 timeouts (lh_backoff) */
static lh_time_t poll_gap(struct lh_req *r, size_t b, lh_time_t t, unsigned npoll)
{
	return lh_backoff(r, t / 2, npoll - 1, 8 * t, b | LH_KEY_POLL);
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
			lh_lead_fail(r, c, b, l);
		return;
	}
	if (l->counter - l->nreq > most && at < l->req_at + t)
		at = l->req_at + t;
	if (l->npoll && at < l->poll_at + poll_gap(r, b, t, l->npoll))
		at = l->poll_at + poll_gap(r, b, t, l->npoll);
	if (now < at) {
		/* with the sketch, not past the quiet decode (lh_lead_timer does both) */
		if (c->K && l->last_rx + c->quiet > now && l->last_rx + c->quiet < at)
			at = l->last_rx + c->quiet;
		lead_arm(r, c, b, l, at);
		return;
	}
	uint32_t id = attempt_id(r, c, b, l->attempt);

	for (unsigned k = 0; k < r->P; k++)
		if (k != r->rank && !(l->req[k / 8] & 1u << k % 8)) {
			lh_canary_send_small(r, k, id, EMU_CANARY_OP_RETX_REQ, r->rank, 0, NULL, 0);
			r->st.polls++;
		}
	l->poll_at = now;
	if (l->npoll < 255)
		l->npoll++;
	lead_arm(r, c, b, l, now + poll_gap(r, b, t, l->npoll));
}

/*
 * lead_rx_reduce - REDUCE of attempt @a: the switches' partial sum (or a
 * host's own frame, bypassed after a collision). Counted when it is the
 * current attempt's and the block is still open.
 */
static void lead_rx_reduce(struct lh_req *r, struct canary *c, size_t b, struct clead *l, unsigned a,
			   const struct emu_canary_hdr *h, const uint8_t *p, unsigned nelem)
{
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
}

/*
 * lead_rx_fallback - FALLBACK with data: host h->children's own data of
 * attempt @a, sent directly because we asked (RECOVER: the sketch named
 * it; FALLBACK: the pull). Each rank's data counts once.
 */
static void lead_rx_fallback(struct lh_req *r, struct canary *c, size_t b, struct clead *l, unsigned a,
			     const struct emu_canary_hdr *h, const uint8_t *p, unsigned nelem)
{
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
}

/* lead_recover_again - @from, recovering and not yet counted, may have missed our RECOVER: send it again */
static void lead_recover_again(struct lh_req *r, struct canary *c, size_t b, struct clead *l, unsigned from)
{
	for (unsigned i = 0; i < l->nmiss; i++)
		if (l->miss[i] == from && !(l->got & 1u << i))
			lh_canary_send_small(r, from, attempt_id(r, c, b, l->attempt), EMU_CANARY_OP_RECOVER,
					     l->attempt, 0, NULL, 0);
}

/*
 * lead_probe_rebcast - a first probe (counter 1) of attempt @a: the first
 * for a block we completed broadcasts it again; those that crossed that
 * second broadcast are dropped (true: the caller returns).
 */
static bool lead_probe_rebcast(struct lh_req *r, struct canary *c, size_t b, struct clead *l, unsigned a,
			       const struct emu_canary_hdr *h)
{
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
		return false;
	}
	/* probes that crossed the second broadcast */
	return h->counter == 1 && l->complete && l->rebcast && lh_now(r) - l->rebcast_at < c->quiet;
}

/*
 * lead_answer - a request (or a probe past the gates) from @from for
 * attempt @a: the result if we have it; else RECOVER again, fail the
 * attempt (or defer: slow, not lost), FAILURE again for an older attempt,
 * or in fallback, FALLBACK (ask for its data) if the pull has room.
 */
static void lead_answer(struct lh_req *r, struct canary *c, size_t b, struct clead *l, unsigned a, unsigned from)
{
	if (l->complete) {
		r->st.retx_served++;
		lh_canary_send_small(r, from, attempt_id(r, c, b, l->attempt), EMU_CANARY_OP_RETX_DATA, 0,
				     (uint16_t)r->P, l->acc, (unsigned)block_len(r, c, b));
	} else if (a == l->attempt && !l->fallback && l->recovering) {
		/* it may have missed our request for its data */
		lead_recover_again(r, c, b, l, from);
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
		lh_lead_fail(r, c, b, l);
	} else if (!l->fallback) {
		/* it missed the FAILURE of the current attempt */
		lh_canary_send_small(r, from, attempt_id(r, c, b, l->attempt), EMU_CANARY_OP_FAILURE, l->attempt, 0,
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
		lh_canary_send_small(r, from, attempt_id(r, c, b, l->attempt), EMU_CANARY_OP_FALLBACK, l->attempt, 0,
				     NULL, 0);
	}
}

/*
 * lead_rx_request - RETX_REQ from host h->children for attempt @a: a
 * request (counter 0: its timer expired) or a probe (1, 2: a later block
 * came back first; 3: its tail timer). A probe may draw a second
 * broadcast, is dropped while our broadcast may still be on its way, and
 * never fails a block; a request is answered (lead_answer).
 */
static void lead_rx_request(struct lh_req *r, struct canary *c, size_t b, struct clead *l, unsigned a,
			    const struct emu_canary_hdr *h)
{
	unsigned from = h->children;

	if (from >= r->P || from == r->rank)
		return;
	bool probe = h->counter >= 1 && h->counter <= 3;

	if (lead_probe_rebcast(r, c, b, l, a, h))
		return;
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
			lead_recover_again(r, c, b, l, from);
		return;
	}
	lead_answer(r, c, b, l, a, from);
}

void lh_lead_rx(struct lh_req *r, struct canary *c, size_t b, unsigned a, const struct emu_canary_hdr *h,
		const uint8_t *p, unsigned nelem)
{
	struct clead *l = lead_of(r, c, b);

	switch (h->flags & EMU_CANARY_OP_MASK) {
	case EMU_CANARY_OP_REDUCE:
		lead_rx_reduce(r, c, b, l, a, h, p, nelem);
		return;
	case EMU_CANARY_OP_FALLBACK:
		lead_rx_fallback(r, c, b, l, a, h, p, nelem);
		return;
	case EMU_CANARY_OP_RETX_REQ:
		lead_rx_request(r, c, b, l, a, h);
		return;
	default:
		return;
	}
}

bool lh_lead_wait(const struct lh_req *r, struct canary *c, size_t b, struct lh_ar_wait *w)
{
	const struct clead *l = lead_of(r, c, b);

	/* a static tree's leader sends its data up the tree and waits like any host, unless it falls back */
	if (l->complete || (c->tree && !l->fallback))
		return false;
	w->count = l->counter;
	w->tries = l->ltries;
	w->since = l->last_rx;
	w->next = l->ltimer ? l->lt_at : 0;
	w->peer = UINT32_MAX;
	if (l->fallback) {
		w->what = LH_WAIT_PULL;
		for (unsigned k = 0; l->seen && k < r->P; k++)
			if (l->seen[k] == PULL_ASKED || l->seen[k] == PULL_LATE) {
				w->peer = k;
				break;
			}
		return true;
	}
	w->what = LH_WAIT_CONTRIB;
	for (unsigned i = 0; l->recovering && i < l->nmiss; i++)
		if (!(l->got & 1u << i)) {
			w->peer = l->miss[i];
			break;
		}
	return true;
}
