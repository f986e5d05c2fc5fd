/* SPDX-License-Identifier: MIT */
/*
 * DOC: host_model.h - the emulated NIC: libhost's transport on an engine
 * node. A host node runs one struct lh_host; its role (allreduce rank of
 * a tenant, background traffic, or idle) comes from struct emu_host_cfg.
 * Frames from libhost are engine frames (no copy); the NIC reports idle to
 * libhost when its serializer finishes and its queue is empty, so hosts
 * inject at line rate with no NIC queue; a finished allreduce is counted
 * with emu_node_done().
 */
#ifndef EMU_HOST_MODEL_H
#define EMU_HOST_MODEL_H

#include "emu/engine/engine.h"
#include "libhost/canary_host.h"
#include "libhost/lh_util.h"

enum emu_host_role {
	EMU_HOST_IDLE = 0,
	EMU_HOST_ALLREDUCE,
	EMU_HOST_BACKGROUND,
};

/*
 * The fields a block's send and receipt read (role, rank, the wire-order
 * input and check, hold, resume) are last: the scenario keeps each host's
 * configuration on a line of its own with its tenant's pointer after it
 * (struct hctx), so that they share a line.
 */
struct emu_host_cfg {
	/* allreduce */
	const struct lh_peer *peers;	/* the tenant's hosts in rank order */
	unsigned npeers;
	unsigned tenant;
	unsigned run;			/* the run its frames carry (lh_host_set_run) */
	const struct lh_ar_cfg *ar;	/* input/on_block args are set per host */
	size_t count;
	lh_time_t start;
	/* elements [off, off + n) of this host's input */
	void (*input)(const struct emu_host_cfg *c, size_t off, int32_t *out, size_t n);
	void (*check)(const struct emu_host_cfg *c, void *state, size_t off, const int32_t *d, size_t n);
	void *check_arg;
	/* background */
	const struct lh_peer *bg_peers;
	unsigned nbg;
	unsigned bg_me;
	enum lh_bg_pattern bg_pattern;
	uint64_t bg_seed;
	uint64_t bg_msg;
	double bg_load;			/* share of the line rate offered; 0 or 1: back to back */
	uint64_t bg_volume;		/* bytes of messages in all, then stop (0: no limit) */
	lh_time_t bg_until;
	enum emu_host_role role;
	unsigned rank;
	/* optional: input and check in wire order (big-endian int32s), see lh_ar_cfg */
	void (*input_wire)(const struct emu_host_cfg *c, size_t off, uint8_t *p, size_t n);
	void (*check_wire)(const struct emu_host_cfg *c, void *state, size_t off, const uint8_t *p, size_t n);
	/*
	 * Nothing is sent before @hold (0: no hold): the request exists from
	 * the start, so frames from hosts that begin earlier are taken in.
	 * For runs with real hosts (attach.h), whose start the emulator
	 * cannot place exactly.
	 */
	lh_time_t hold;
	/*
	 * The host may go down and come back (a node failure with an end):
	 * the engine drops the timers that come due while a node is down, so
	 * the host keeps its own list of armed timers and fires the dropped
	 * ones when it is back, as if it had been paused.
	 */
	bool resume;
};

struct emu_host_state {
	const struct emu_host_cfg *cfg;
	struct emu_node *node;
	struct lh_host *lh;
	struct lh_comm *comm;
	struct lh_req *req;
	uint64_t mismatches;	/* result elements that differ from the expected sum */
	uint64_t delivered;	/* result elements delivered */
	bool finished;
	bool attached;		/* a real process (attach.h): no request here */
	/* cfg->resume: armed timers, a heap on (t, seq) */
	struct lh_theap tmr;
	uint64_t resumed;	/* timers fired late because the host was down */
};

extern const struct emu_model_ops emu_host_ops;

#endif /* EMU_HOST_MODEL_H */
