// SPDX-License-Identifier: MIT
/*
 * DOC: a link's credit ring grows when applying the credits due frees
 * less than half of it (port.c, credq_full()), and no credit is lost or
 * counted twice on the way. A host A sends N frames back to back to a
 * node B (a switch with a test model) over one long link (100 Gb/s,
 * 5 us, lossless, buffers of 256 KiB), on one worker: about 41
 * credits are on their way back at any time, and A has credit to spare,
 * so they wait in the ring of B's port until it is full. Full at 32, none
 * is due (32 frame times are under 5 us): it grows to 64; full at 64,
 * about 41 are not due (more than half): 128; full at 128, those 41 are
 * half or less: it stays at 128. From T2 B keeps the frames it receives,
 * so A sends until its credit is spent: B then holds exactly
 * BUF / LEN frames if every credit of before came back once. At T3 B
 * frees them and the rest flows. Checked: the ring's size at T3, A's
 * frames reach B back to back until T2 (A never waited for credit), the
 * frames B holds at T3, no ingress buffer over its size, all N frames
 * delivered.
 */
#include "helpers.h"

#define LEN 1500
#define LAT (5 * EMU_US)
#define RATE 100000000000ULL
#define BUF (256 * 1024)
#define N 1200
#define T2 (60 * EMU_US)
#define T3 (200 * EMU_US)

struct bst {
	struct emu_frame *held[BUF / LEN + 8];
	unsigned nheld, held_t3, rq_cap_t3, overflow;
	bool released;
	uint64_t recv, gaps_bad;
	emu_time_t last;
};

static int a_init(struct emu_node *n, void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < N; i++) {
		struct emu_frame *f = emu_frame_alloc(n);

		f->len = LEN;
		memset(f->data, 0, LEN);
		emu_send(n, 0, f);
	}
	return 0;
}

static void a_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	(void)port;
	emu_frame_free(n, f);
}

static const struct emu_model_ops a_ops = { .name = "a", .init = a_init, .rx = a_rx };

static int b_init(struct emu_node *n, void *arg)
{
	(void)arg;
	emu_timer_at(n, T3, 1);
	return 0;
}

static void b_rx(struct emu_node *n, struct emu_frame *f, unsigned port)
{
	struct bst *s = emu_node_state(n);
	emu_time_t now = emu_node_now(n);

	(void)port;
	if (s->recv && now <= T2 && now - s->last != emu_tx_time(LEN, RATE))
		s->gaps_bad++;
	s->recv++;
	s->last = now;
	if (now < T2 || s->released) {
		emu_frame_free(n, f);
	} else if (s->nheld < sizeof(s->held) / sizeof(s->held[0])) {
		s->held[s->nheld++] = f;
	} else {
		s->overflow++;
		emu_frame_free(n, f);
	}
}

static void b_timer(struct emu_node *n, uint64_t cookie)
{
	struct bst *s = emu_node_state(n);

	(void)cookie;
	s->held_t3 = s->nheld;
	s->rq_cap_t3 = n->ports[0].rq_cap;
	s->released = true;
	while (s->nheld)
		emu_frame_free(n, s->held[--s->nheld]);
}

static const struct emu_model_ops b_ops = {
	.name = "b", .state_size = sizeof(struct bst), .init = b_init, .rx = b_rx, .timer = b_timer,
};

int main(void)
{
	struct emu_fabric *fab = emu_fabric_create();
	char err[128];

	plan(6);
	uint32_t a = emu_fabric_add_node(fab, EMU_NODE_HOST, "A");
	uint32_t b = emu_fabric_add_node(fab, EMU_NODE_SWITCH, "B");

	emu_fabric_add_link(fab, a, 0, b, 0, RATE, LAT);
	if (emu_fabric_finalize(fab, err, sizeof(err)))
		skip_all(err);
	struct emu_engine_cfg cfg = { .workers = 1, .no_pin = true, .buffer_bytes = BUF, .tc_mode = EMU_TC_ONE };
	struct emu_engine *eng = t_engine(fab, &cfg);

	emu_engine_set_model(eng, a, &a_ops, NULL);
	emu_engine_set_model(eng, b, &b_ops, NULL);
	emu_engine_run(eng);
	const struct bst *s = emu_node_state(emu_engine_node(eng, b));
	struct emu_port_stats pb = emu_port_stats(&emu_engine_node(eng, b)->ports[0]);

	is_u64(s->rq_cap_t3, 128, "B's ring grew past 32 and 64 (more than half not due when full), not past 128");
	is_u64(s->gaps_bad, 0, "A's frames reach B back to back until T2 (A never waited for credit)");
	is_u64(s->held_t3, BUF / LEN, "B holds exactly BUF / LEN frames at T3: every credit came back once");
	is_u64(s->overflow, 0, "B never held more than that");
	ok(pb.in_peak_bytes <= BUF, "B's ingress buffer peak %llu <= %u", (unsigned long long)pb.in_peak_bytes, BUF);
	is_u64(s->recv, N, "all %u frames delivered", N);
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
	return done_testing();
}
