// SPDX-License-Identifier: MIT
/*
 * DOC: a credit queued in a link's ring that arrives at exactly the
 * picosecond of a decision (port.c, credit_due()): it counts only if its
 * (t, key) is before the event being processed, as its own event would
 * have been. A hand-built line A - S - B (A-S 100 ns, S-B 300 ns, both
 * 100 Gb/s, lossless, buffers of 2048 B) carries two 1200-byte frames from
 * A to B: after the first, neither A's port nor S's port toward B has
 * credit for the second until the first's credit is back. Keys are
 * EMU_EV_KEY(node, sequence), so the order in which the nodes are added
 * (their ids) decides a tie at the same picosecond.
 *
 * - Head at A: A sends the second frame (a timer) at exactly the time the
 *   first one's credit from S reaches A. With S's id below A's the credit
 *   is before the timer and A sends at once (no credit stall); with A's
 *   below S's the credit is after: A must stall, and send when the
 *   credit's own event comes (the same picosecond).
 * - Arrival at S: the second frame reaches S at exactly the time the
 *   first one's credit from B does. With B's id below A's (A's commit
 *   created the arrival event) the credit counts; above, S's port stalls.
 *
 * Either way the frame reaches B at the same time; what tells the two
 * apart is the credit stall counter of the deciding port.
 *
 * Each case runs on one worker (the credits wait in the ring of the port
 * that gives them back) and on three, a node each (they cross a channel
 * and wait in the ring of the deciding port itself, emu_port_credit_in(),
 * their keys those of the other worker's node): the same outcome.
 */
#include "helpers.h"

#define LEN 1200
#define LA (100 * EMU_NS)
#define LB (300 * EMU_NS)

static emu_time_t t_second;	/* A sends the second frame at this time */

struct bst {
	emu_time_t arr[4];
	unsigned narr;
};

static void a_send(struct emu_node *n)
{
	struct emu_frame *f = emu_frame_alloc(n);

	f->len = LEN;
	memset(f->data, 0, LEN);
	emu_send(n, 0, f);
}

static int a_init(struct emu_node *n, void *arg)
{
	(void)arg;
	a_send(n);
	emu_timer_at(n, t_second, 1);
	return 0;
}

static void a_timer(struct emu_node *n, uint64_t cookie)
{
	(void)cookie;
	a_send(n);
}

static void a_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	(void)port;
	emu_frame_free(n, f);
}

static const struct emu_model_ops a_ops = { .name = "a", .init = a_init, .rx = a_rx, .timer = a_timer };

static void s_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	if (port == 0)
		emu_send(n, 1, f);
	else
		emu_frame_free(n, f);
}

static const struct emu_model_ops s_ops = { .name = "s", .rx = s_rx };

static void b_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct bst *s = emu_node_state(n);

	(void)port;
	if (s->narr < 4)
		s->arr[s->narr++] = emu_node_now(n);
	emu_frame_free(n, f);
}

static const struct emu_model_ops b_ops = { .name = "b", .state_size = sizeof(struct bst), .rx = b_rx };

struct outcome {
	uint64_t a_stalls, s_stalls;	/* credit stalls of A's port and of S's port toward B */
	struct bst b;
};

/* the line with its nodes added in the order @order (a permutation of "ASB"), A's second frame at @t2 */
static void run(const char *order, emu_time_t t2, unsigned workers, struct outcome *o)
{
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t id[3] = { 0 };	/* A, S, B */
	char err[128];

	for (const char *c = order; *c; c++) {
		char name[2] = { *c, 0 };
		unsigned k = *c == 'A' ? 0 : *c == 'S' ? 1 : 2;

		id[k] = emu_fabric_add_node(fab, k == 1 ? EMU_NODE_SWITCH : EMU_NODE_HOST, name);
	}
	emu_fabric_add_link(fab, id[0], 0, id[1], 0, 100000000000ULL, LA);
	emu_fabric_add_link(fab, id[1], 1, id[2], 0, 100000000000ULL, LB);
	if (emu_fabric_finalize(fab, err, sizeof(err)))
		skip_all(err);
	struct emu_engine_cfg cfg = { .workers = workers, .no_pin = true, .buffer_bytes = EMU_FRAME_MAX,
				      .tc_mode = EMU_TC_ONE };
	struct emu_engine *eng = t_engine(fab, &cfg);

	t_second = t2;
	emu_engine_set_model(eng, id[0], &a_ops, NULL);
	emu_engine_set_model(eng, id[1], &s_ops, NULL);
	emu_engine_set_model(eng, id[2], &b_ops, NULL);
	emu_engine_run(eng);
	o->a_stalls = emu_port_stats(&emu_engine_node(eng, id[0])->ports[0]).credit_stalls;
	o->s_stalls = emu_port_stats(&emu_engine_node(eng, id[1])->ports[1]).credit_stalls;
	o->b = *(struct bst *)emu_node_state(emu_engine_node(eng, id[2]));
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
}

/* the four cases on @w workers */
static void cases(unsigned w)
{
	emu_time_t ft = emu_tx_time(LEN, 100000000000ULL);
	/* the second frame leaves S when the first one's credit from B is back, and reaches B a hop later */
	emu_time_t at_b = 3 * ft + LA + 3 * LB;
	struct outcome o;

	/* head at A: the first frame's credit reaches A at ft + 2 LA (S forwards it at once) */
	run("SAB", ft + 2 * LA, w, &o);
	is_u64(o.a_stalls, 0, "%u workers: head at A, credit from S (lower id) at the same ps: before the decision, no stall", w);
	is_u64(o.s_stalls, 1, "...S's port waits for B's credit (the second frame reaches it first)");
	ok(o.b.narr == 2 && o.b.arr[1] == at_b, "...the second frame reaches B at %llu ps (expected %llu)",
	   (unsigned long long)o.b.arr[1], (unsigned long long)at_b);
	run("ASB", ft + 2 * LA, w, &o);
	is_u64(o.a_stalls, 1, "%u workers: head at A, credit from S (higher id) at the same ps: after the decision, A stalls", w);
	is_u64(o.s_stalls, 1, "...S's port waits for B's credit");
	ok(o.b.narr == 2 && o.b.arr[1] == at_b, "...the second frame reaches B at the same time (%llu ps)",
	   (unsigned long long)o.b.arr[1]);

	/*
	 * arrival at S: the first frame's credit from B reaches S at
	 * 2 ft + LA + 2 LB; A sends the second at ft + 2 LB so that it
	 * arrives then (A's own credit is back long before, at ft + 2 LA)
	 */
	run("BSA", ft + 2 * LB, w, &o);
	is_u64(o.s_stalls, 0, "%u workers: arrival at S, credit from B (lower id than A) at the same ps: counts, no stall", w);
	is_u64(o.a_stalls, 0, "...A had its credit back");
	ok(o.b.narr == 2 && o.b.arr[1] == at_b, "...the second frame reaches B at %llu ps (expected %llu)",
	   (unsigned long long)o.b.arr[1], (unsigned long long)at_b);
	run("ASB", ft + 2 * LB, w, &o);
	is_u64(o.s_stalls, 1, "%u workers: arrival at S, credit from B (higher id than A) at the same ps: after it, S stalls", w);
	is_u64(o.a_stalls, 0, "...A had its credit back");
	ok(o.b.narr == 2 && o.b.arr[1] == at_b, "...the second frame reaches B at the same time (%llu ps)",
	   (unsigned long long)o.b.arr[1]);
}

int main(void)
{
	plan(2 * 12);
	cases(1);
	cases(3);
	return done_testing();
}
