/* SPDX-License-Identifier: MIT */
/*
 * DOC: trafgen.h - a frame-level traffic generator host model for engine
 * tests and benchmarks: every host sends UDP frames of a fixed size, each to
 * a host drawn uniformly at random from its own stream (or to one fixed
 * host: incast), at a fraction of line rate, until a count or a time. Every
 * host counts what it receives and folds each delivery (time, source,
 * sequence) into a running hash, so two runs can be compared bit for bit.
 *
 * The allreduce background traffic with messages lives in libhost; this is
 * the engine's own workload.
 */
#ifndef EMU_TRAFGEN_H
#define EMU_TRAFGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "emu/engine/engine.h"
#include "libhost/wire.h"

struct emu_trafgen_cfg {
	uint32_t frame_bytes;	/* whole frame, >= 64 */
	double load;		/* fraction of line rate, (0, 1] */
	uint64_t count;		/* frames per host; 0: until @until */
	emu_time_t until;	/* no new frames from this time on; 0: no limit */
	uint32_t dst_host;	/* EMU_NONE32: uniform random; else everyone sends there */
	emu_time_t start;	/* first frame */
	bool jitter;		/* start each host at a random phase of its first gap */
};

struct emu_trafgen_state {
	const struct emu_trafgen_cfg *cfg;
	uint64_t sent;
	emu_time_t gap;		/* between two frames: the frame's wire time over the load */
	uint32_t index;		/* this host's index and address (its node's, read without that line) */
	uint32_t ipv4;
	struct lh_wire_udp_tmpl udp;	/* the frames' headers but the destination's fields */
	uint64_t send_fail;
	uint64_t recv;
	uint64_t recv_bytes;
	uint64_t hash;
	emu_time_t lat_sum;
	emu_time_t last_rx;
	uint64_t bad;
};

extern const struct emu_model_ops emu_trafgen_ops;

#endif /* EMU_TRAFGEN_H */
