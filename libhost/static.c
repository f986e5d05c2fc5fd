// SPDX-License-Identifier: MIT
/*
 * DOC: static.c - the host side of N static reduction trees (SHARP,
 * SwitchML, ATP with N = 1; PANAMA with N = 4). Block b goes to tree
 * tree_base + (b mod N) as TREE_REDUCE (tree in the switch-address field,
 * counter 1); the switches configured for that tree wait for all their
 * children and the root multicasts the sum down the tree as TREE_BCAST.
 * Every host contributes every block (there is no leader). The trees are
 * configured by whoever sets up the switches (the emulator's scenario);
 * the fabric must not lose frames (static trees have no recovery here).
 */
#include <stdlib.h>

#include "emu/util.h"
#include "lh_internal.h"

struct stree {
	size_t nblocks;
	unsigned E;
	uint8_t *done;
	size_t next;
	unsigned inflight;
	size_t remaining;
	int32_t buf[EMU_CANARY_MAX_ELEMENTS];
};

static size_t sblock_len(const struct lh_req *r, const struct stree *s, size_t b)
{
	size_t lo = b * s->E, hi = lo + s->E;

	return (hi > r->count ? r->count : hi) - lo;
}

static int static_start(struct lh_req *r)
{
	if (r->cfg.ntrees == 0)
		return -1;
	struct stree *s = emu_xcalloc(1, sizeof(*s));
	lh_time_t ft = (lh_time_t)((EMU_CANARY_DATA_OFF + 4 * r->cfg.elements + 24) * 8 * 1000000000000ULL /
				   r->comm->host->t.rate_bps);

	s->E = r->cfg.elements;
	s->nblocks = (r->count + s->E - 1) / s->E;
	if (s->nblocks > LH_SEQ_MASK) {
		free(s);
		return -1;
	}
	s->done = emu_xcalloc(s->nblocks, 1);
	s->remaining = s->nblocks;
	r->algo = s;
	unsigned w = r->cfg.window;

	if (!w) {
		w = (unsigned)(2 * r->cfg.rtt / ft) + 1;
		if (w < 4)
			w = 4;
	}
	r->st.window = w;
	r->st.retx_timeout = r->cfg.retx_timeout ? r->cfg.retx_timeout : 2 * (r->cfg.rtt + (lh_time_t)w * ft);
	return 0;
}

static bool static_pull(struct lh_req *r)
{
	struct stree *s = r->algo;

	if (s->next >= s->nblocks || s->inflight >= r->st.window)
		return false;
	size_t b = s->next++;
	size_t n = sblock_len(r, s, b);
	void *hd;
	uint8_t *buf = lh_frame(r, &hd);
	struct emu_canary_hdr h = {
		.dst = r->comm->host->self.ipv4, .id = lh_block_id(r, (uint32_t)b), .counter = 1,
		.hosts = (uint16_t)r->P, .swaddr = (uint16_t)(r->cfg.tree_base + b % r->cfg.ntrees),
		.flags = EMU_CANARY_OP_TREE_REDUCE,
	};

	for (size_t i = 0; i < n; i++)
		s->buf[i] = lh_input(r, b * s->E + i);
	s->inflight++;
	lh_send_now(r, hd, lh_canary_frame(r, buf, NULL, &h, s->buf, (unsigned)n));
	return true;
}

static void static_rx(struct lh_req *r, const uint8_t *p, uint32_t len)
{
	struct stree *s = r->algo;
	struct emu_canary_hdr h;
	unsigned nelem;

	if (emu_wire_canary_parse(p, len, &h, &nelem) != EMU_WIRE_OK ||
	    (h.flags & EMU_CANARY_OP_MASK) != EMU_CANARY_OP_TREE_BCAST)
		return;
	size_t b = h.id & LH_SEQ_MASK;

	if (b >= s->nblocks || h.counter != r->P || nelem != sblock_len(r, s, b)) {
		r->st.errors++;
		return;
	}
	if (s->done[b]) {
		r->st.duplicates++;
		return;
	}
	s->done[b] = 1;
	if (s->inflight)
		s->inflight--;
	for (unsigned i = 0; i < nelem; i++)
		s->buf[i] = emu_wire_elem(p, i);
	lh_output(r, b * s->E, s->buf, nelem);
	if (--s->remaining == 0)
		lh_req_data_complete(r);
}

static void static_fini(struct lh_req *r)
{
	struct stree *s = r->algo;

	if (!s)
		return;
	free(s->done);
	free(s);
	r->algo = NULL;
}

const struct lh_algo_ops lh_static_ops = {
	.name = "static",
	.start = static_start,
	.pull = static_pull,
	.rx = static_rx,
	.fini = static_fini,
};
