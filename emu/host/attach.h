/* SPDX-License-Identifier: MIT */
/*
 * DOC: attach.h - a host of the emulated fabric that is a real process:
 * the node's NIC is a Linux interface (libhost/afpacket.h), typically one
 * end of a veth pair whose other end is in the network namespace (or the
 * machine) where canary-allreduce runs.
 *
 * Only meaningful with the wall clock at dilation 1. In a real-time run
 * (one worker) the engine watches the interface (emu_node_watch()): while
 * it waits for the wall clock it wakes as soon as a frame is in the
 * receive ring, and the model reads the ring at the emulated time of that
 * instant; otherwise the model polls the ring every cfg->poll of emulated
 * time. Every frame found enters the fabric on the host's link then,
 * queued in the NIC and sent at its line rate like an emulated host's;
 * frames delivered to the host leave on the interface at once. A frame
 * that cannot be routed (not Canary or IPv4, truncated, longer than the
 * link's MTU) is counted and dropped; so is one that would make the NIC
 * queue exceed cfg->queue_max bytes (a real host sending faster than its
 * link). How late a frame entered, against the kernel's receive stamp,
 * goes to the run's injected-frame lag (emu_node_injected()).
 *
 * The host's first allreduce frame must be of the emulator's algorithm
 * (Canary, a static tree, the ring), and on static trees every block on
 * the tree the emulator's static:N puts it (the same N and tree base);
 * otherwise the frame is dropped and the run stops (algo_refused). Its
 * retransmission requests are counted.
 *
 * The emulator cannot see inside the real host. It counts the host as
 * done (emu_node_done()) once the completion barrier's last frame went to
 * or came from it (a DONE with counter = hosts: every host of the
 * allreduce has its result) and the interface then stayed silent for
 * cfg->quiet (the host lingers to answer late requests). A host killed
 * before never gets there: the hosts that wait for its data never finish
 * and the run ends on the stall watchdog, as with a failed node.
 */
#ifndef EMU_ATTACH_H
#define EMU_ATTACH_H

#include "emu/engine/engine.h"
#include "emu/host/host_model.h"
#include "libhost/afpacket.h"

struct emu_attach_cfg {
	char node[EMU_NAME_MAX];	/* the host, "H3" */
	char ifname[32];		/* the interface */
	struct lh_afp *afp;		/* opened by the scenario */
	emu_time_t poll;		/* receive ring polling period */
	emu_time_t quiet;		/* silence after the barrier, then the host counts as done */
	uint64_t queue_max;		/* NIC queue bound, bytes */
	int algo;			/* the emulator's (enum lh_algo): the host's frames must be of it */
	unsigned run;			/* the run's (wire.h): a frame of another run is dropped */
	unsigned ntrees, tree_base;	/* static:N: block b goes up tree tree_base + b mod ntrees */
};


struct emu_attach_stats {
	uint64_t in_frames, in_bytes;	/* from the interface into the fabric */
	uint64_t in_bad;		/* not routable: dropped */
	uint64_t in_overrun;		/* NIC queue full: dropped */
	uint64_t out_frames, out_bytes;	/* from the fabric to the interface */
	uint64_t out_dropped;		/* transmit ring full */
	uint64_t in_retx_req;		/* Canary retransmission requests it sent (and, as a leader, polls) */
	uint64_t in_other_run;		/* Canary or ring frames of another run: dropped */
	uint64_t in_fast;		/* frames that came in less than half their wire time at the link's rate
					 * after the previous one (the host sends faster than its link) */
	uint64_t in_ahead_max;		/* ns: the most a link of the port's rate, carrying the host's
					 * frames, was still busy with earlier ones when one came */
	bool too_fast;			/* ...more than 4 full frames and 1 ms: warned of */
	int algo_seen;			/* enum lh_algo of its first allreduce frame; -1: none yet */
	bool algo_refused;		/* that was not the emulator's algorithm: the run stopped */
	bool trees_differ;		/* a static tree frame not on the tree the emulator's static:N
					 * puts its block on (refused as well) */
	uint32_t tree_block, tree_seen, tree_want;	/* ...its block, its tree, the emulator's tree */
	emu_time_t first_in, last_active;
	bool barrier_passed;		/* the barrier's last frame went through */
	bool quiet;			/* ...and then silence: counted as done */
};

struct emu_attach_state {
	struct emu_host_state hs;	/* first: what the scenario reads of every host */
	const struct emu_attach_cfg *cfg;
	struct emu_node *node;
	emu_time_t next_poll;		/* the poll timer armed last */
	bool watched;			/* the engine wakes the model (emu_node_watch) */
	uint64_t last_in_ns;		/* the previous frame's arrival (CLOCK_REALTIME ns) */
	uint64_t link_free_ns;		/* when that link would be done with the frames so far (same clock) */
	int64_t real_off;		/* CLOCK_REALTIME - CLOCK_MONOTONIC, ns, at the last read */
	struct emu_attach_stats st;
};

extern const struct emu_model_ops emu_attach_ops;

#endif /* EMU_ATTACH_H */
