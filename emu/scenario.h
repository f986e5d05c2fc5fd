/* SPDX-License-Identifier: MIT */
/*
 * DOC: scenario.h - one emulation run from a description: fabric,
 * placement of the allreduce hosts (random by seed), tenants, the switch
 * program (Canary or static trees, checked against the Tofino profile),
 * libhost on every host, background traffic, failures; then the results:
 * per allreduce (runtime, goodput, exactness, protocol counters), per link
 * (utilization, drops), per run (engine figures).
 *
 * Inputs are pseudo-random by seed yet their sums are known exactly
 * without storing them: host r of tenant t holds
 *   in(r, i) = a_t[r] + b_t(i) + c_t[(r + i) mod 65536]
 * (a, c random tables, b a hash), so the expected sum of element i is
 *   sum(a_t) + P * b_t(i) + (a window sum of c_t, from prefix sums).
 * Every delivered block is checked against it, element by element.
 */
#ifndef EMU_SCENARIO_H
#define EMU_SCENARIO_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "emu/switch/canary_sw.h"
#include "emu/dist/dist.h"
#include "emu/engine/engine.h"
#include "emu/host/attach.h"
#include "emu/series.h"
#include "libhost/canary_host.h"
#include "emu/switch/tofino.h"

#define EMU_SCN_MAX_FAIL 32
#define EMU_SCN_MAX_ATTACH 32
/* the slowest hosts an allreduce's result names */
#define EMU_SCN_LAST 3
/* an unfinished allreduce names what this many of its hosts without their result wait for */
#define EMU_SCN_WAIT 4
/* cfg.sketch: the sketch where the run can lose frames, none where it cannot (emu_scenario_sketch) */
#define EMU_SCN_SKETCH_AUTO UINT_MAX

struct emu_fail {
	bool is_node;
	char node[EMU_NAME_MAX];	/* node name */
	int port;			/* link: port of node; -1 for a node failure */
	emu_time_t down;
	emu_time_t up;			/* EMU_TIME_INF: stays down */
};

struct emu_drop {
	char node[EMU_NAME_MAX];
	unsigned port;
	uint64_t nth;
};

struct emu_scn_cfg {
	const char *topology;		/* generator spec or topology file */
	enum lh_algo algo;
	unsigned ntrees;		/* static:N */
	uint32_t hosts;			/* allreduce hosts (0: use hosts_pct) */
	double hosts_pct;
	uint64_t size_bytes;		/* per host */
	unsigned elements;
	unsigned concurrent;		/* tenants */
	bool background;
	enum lh_bg_pattern bg_pattern;
	uint64_t bg_msg;
	double bg_load;			/* each background host offers this share of its line rate, (0, 1] */
	uint64_t bg_volume;		/* each background host sends this many bytes of messages, then stops (0: no limit) */
	emu_time_t timeout;		/* Canary switch timeout (adaptive: the start value) */
	bool timeout_adaptive;		/* the switches adapt it (canary_sw.h) */
	emu_time_t ato_floor, ato_ceil;	/* ...between these */
	enum emu_sw_timer timer;
	emu_time_t pktgen_tick;
	enum emu_routing routing;
	enum emu_router router;		/* switch queueing model */
	enum emu_xbar_arb xbar_arb;	/* merlin: crossbar arbitration */
	uint64_t xbar_bps;		/* merlin: crossbar rate per port; 0: 1.2 x the fastest link */
	uint64_t obuf_bytes;		/* merlin: output buffer per port and class; 0: buffer_bytes */
	double adaptive_threshold;	/* merlin: share of the output buffer free that keeps the natural port; 0: 0.5 */
	double noise;
	double loss;			/* every link, both directions */
	bool lossy;
	bool lossless;			/* keep credit flow control with loss > 0 */
	enum emu_tc_mode priority;	/* which frames get the strict-priority class (default: recovery) */
	uint64_t commit_bytes;		/* FIFO ports commit frames this far ahead (engine.h); 0: the default */
	bool commit_idle;		/* ...or only when the wire is idle */
	bool no_ahead;			/* --no-run-ahead (engine.h: no_ahead) */
	struct emu_fail fail[EMU_SCN_MAX_FAIL];
	unsigned nfail;
	struct emu_drop drop[EMU_SCN_MAX_FAIL];	/* lose exactly the n-th frame of a port */
	unsigned ndrop;
	const char *profile;
	uint32_t descriptors;		/* 0: the profile's */
	unsigned shards;		/* 0: smallest that fits */
	bool table_per_tenant;		/* split the table among the tenants (paper sec. 5.2) */
	uint64_t seed;
	unsigned run_id;		/* the run every Canary and ring frame carries, 0..3 (wire.h) */
	unsigned workers;
	bool per_node;
	enum emu_clock clock;
	double dilation;
	unsigned window;
	emu_time_t retx_timeout;
	unsigned max_failures;
	unsigned sketch;		/* Canary: missing-set sketch elements per packet (0: off, the
					 * paper's recovery; EMU_SCN_SKETCH_AUTO: emu_scenario_sketch) */
	emu_time_t limit;		/* give up at this emulated time */
	emu_time_t stall;		/* give up after this long without a block completing */
	uint64_t lag_bound_ns;		/* wall clock: kept up if never this far behind (0: EMU_LAG_BOUND_NS) */
	uint64_t buffer_bytes;
	bool resources_only;		/* compute the switch program, do not run */
	bool check_only;		/* check the scenario and that it fits in memory, do not run */
	/* a pcap of chosen links, or NULL */
	const char *pcap;
	const char *pcap_links;		/* "S0/3,L1/0" or NULL: every link */
	/* a time series (series.h) to this CSV file every series_every, or NULL; not with --attach or ranks */
	const char *series;
	emu_time_t series_every;
	const char *series_links;	/* links with columns of their own (series.h), or NULL */
	/*
	 * called about every 100 ms of wall time while the run goes: @done of
	 * the @expect result elements have reached this process's allreduce
	 * hosts by emulated time @now
	 */
	void (*progress)(void *ctx, emu_time_t now, uint64_t done, uint64_t expect);
	void *progress_ctx;
	/* distributed: this process is one rank (dist.h); NULL: the whole run */
	struct emu_dist *dist;
	bool pin_offset;		/* local ranks share the cores: pin after lower ranks */
	/*
	 * Hosts that are real processes on interfaces (attach.h; wall clock
	 * only; the interfaces are opened by the run). Every allreduce host
	 * sends from attach_hold on.
	 */
	struct emu_attach_cfg attach[EMU_SCN_MAX_ATTACH];
	unsigned nattach;
	emu_time_t attach_hold;
	uint64_t start_at_ns;		/* CLOCK_REALTIME ns at which the hold ends (0: attach_hold after the start) */
	const char *attach_peers;	/* write the attached hosts' tenants' peer tables here (NULL: no) */
	uint64_t rate_bps;		/* every link's rate (0: the topology's) */
	uint64_t lag_max_ns;		/* wall clock: give up this far behind (0: never) */
	/* bytes the run may use (0: what emu_mem_available() says) */
	uint64_t mem_available;
	/*
	 * Tests: rank 0 of every tenant adds one to each of its input
	 * elements that the expected sums do not count, so every element of
	 * every result is wrong and the result check has to say so.
	 */
	bool wrong_input;
};

/* A host attached to a real interface, as the run saw it. */
struct emu_scn_attached {
	char node[EMU_NAME_MAX];
	char ifname[32];
	unsigned tenant, rank;
	struct emu_attach_stats st;
};

struct emu_scn_ar {
	unsigned tenant;
	unsigned hosts;
	uint64_t size_bytes;
	emu_time_t runtime;		/* start to the last host's complete result */
	emu_time_t barrier;		/* start to the completion barrier */
	double goodput_gbps;
	bool exact;
	bool finished;
	uint64_t mismatches;
	uint64_t unfinished_hosts;
	uint64_t frames_per_host;	/* mean frames sent by a non-leader host */
	uint64_t leader_frames;		/* reduce frames that reached leaders (all) */
	uint64_t retransmissions;
	uint64_t failures;
	uint64_t reissues;
	uint64_t fallbacks;
	uint64_t recoveries;		/* sketch: blocks completed from their missing hosts */
	uint64_t recovered;		/* sketch: contributions asked for directly */
	uint64_t retx_deferred;		/* requests for blocks still receiving, not failed */
	uint64_t probes;		/* sketch: early requests for overtaken blocks */
	uint64_t recovered_late;	/* sketch: of recovered, counted from the tree's late copy */
	uint64_t rebroadcasts;		/* sketch: results broadcast again on a probe */
	uint64_t resends;		/* results resent to one host (RETX_DATA) */
	uint64_t restorations;
	uint64_t collisions_seen;
	uint64_t duplicates;
	uint64_t noise_delays;
	uint64_t polls;			/* leaders asked hosts whether they sent a block */
	uint64_t nacks;
	uint64_t errors;
	unsigned window;		/* the largest window a host used (Canary, adaptive timeout: it moves) */
	uint64_t window_sum, window_n;	/* the hosts' windows at block completions: sum, count */
	emu_time_t retx_timeout;
	/*
	 * Each emulated host's completion (start to its whole result), over
	 * the done_hosts that finished (attached hosts are not counted):
	 * nearest-rank percentiles, and the last hosts, slowest first.
	 */
	unsigned done_hosts;
	emu_time_t done_min, done_p50, done_p99, done_max;
	unsigned nlast;
	struct {
		char host[EMU_NAME_MAX];
		emu_time_t t;
	} last[EMU_SCN_LAST];
	/*
	 * Not finished: its first hosts (by rank) without their whole result,
	 * each with what it waits for (lh_req_wait; peer: the host waited on,
	 * "" for none in particular).
	 */
	unsigned nwait;
	struct emu_scn_wait {
		char host[EMU_NAME_MAX];
		char peer[EMU_NAME_MAX];
		struct lh_ar_wait w;
	} wait[EMU_SCN_WAIT];
};

/* A directed link by its two ends, "NODE/PORT" each. */
struct emu_scn_link {
	char from[EMU_NAME_MAX + 8];
	char to[EMU_NAME_MAX + 8];
};

struct emu_scn_result {
	char algo[24];
	uint64_t seed;			/* the run's --seed and --size (a sweep's runs differ in them) */
	uint64_t size_bytes;
	unsigned sketch;		/* the sketch the run's hosts used (0: none, or not Canary) */
	char topology[128];
	/* the fabric's link rates and latencies (the same everywhere in a generated one) */
	uint64_t rate_min_bps, rate_max_bps;
	emu_time_t latency_min, latency_max;
	unsigned nar;
	struct emu_scn_ar *ar;
	uint32_t hosts_total;
	uint32_t ar_hosts;
	uint32_t bg_hosts;
	bool exact;			/* every allreduce finished exactly */
	emu_time_t runtime;		/* max over allreduces */
	double goodput_gbps;		/* mean over allreduces */
	/* switches, all of them */
	struct emu_sw_stats sw;
	/* adaptive timeout: mean timeout taken by new descriptors per switch level (1 leaf, 2 spine, 3 core) */
	double ato_mean_level[4];
	double ato_mean_root;		/* adaptive timeout: mean of the root role's (ps) */
	double desc_mean;		/* mean descriptor occupancy per switch */
	uint64_t desc_peak;		/* max over switches */
	/* links (directed) */
	uint32_t nlinks;
	double *link_util;		/* busy / emulated, per directed link */
	struct emu_scn_link *links;	/* the ends of each directed link, in link_util's order */
	double util_mean;
	double util_mean_busy;		/* over links that carried anything */
	uint64_t drops_queue, drops_loss, drops_down;
	uint64_t bg_bytes;
	uint64_t xbar_bps;		/* merlin: the crossbar rate used */
	double bg_offered;		/* background load offered, share of line rate per background host */
	double bg_carried;		/* ...and carried (sent) */
	struct emu_run_stats run;
	uint64_t peak_rss;
	struct emu_tofino_need need;
	const struct tofino_profile *prof;
	char stuck[1024];		/* why the run did not finish: the first unfinished allreduce, its hosts */
	bool partial;			/* a rank other than 0: results are at rank 0 */
	/* distributed runs: ZeroMQ traffic of this run over all ranks */
	unsigned dist_ranks;
	uint64_t dist_windows;
	uint64_t dist_msgs, dist_bytes;
	uint64_t dist_rejected;		/* malformed/foreign messages and unknown keys, all ranks, whole session */
	char write_err[256];		/* --pcap or --timeseries could not be written: why (empty: it was) */
	struct emu_series_stats series;	/* cfg.series: its rows and what they cost */
	unsigned nattached;
	struct emu_scn_attached attached[EMU_SCN_MAX_ATTACH];
	uint64_t mem_estimate;		/* what the run needs at least in this process (emu_scenario_run) */
	unsigned run_id;		/* cfg.run_id */
	uint64_t other_run;		/* frames of another run the hosts (real ones too) dropped */
};

/*
 * emu_scn_lag_message - why a wall-clock run stopped on --max-lag
 * (@lag_max_ns), into @buf: the lag and, when the run kept a measured pace
 * below real time, the link rate it sustains (@rate, the fastest link,
 * scaled by the pace); a pace of 0 or above 1 (the lag came at once, not
 * over a stretch) suggests no rate.
 */
void emu_scn_lag_message(char *buf, size_t len, const struct emu_run_stats *run, uint64_t lag_max_ns, uint64_t rate);

/* emu_scn_wait_describe - what host @w waits for, in words, into @buf; the bytes written (at most @len) */
size_t emu_scn_wait_describe(char *buf, size_t len, const struct emu_scn_wait *w);

/*
 * emu_scenario_run - build and run @cfg. Return 0 when the run happened
 * (check res->exact), -EINVAL for a bad scenario (reason in @err, the
 * caller exits 2), -ENOSPC when the switch program does not fit the
 * profile (res->need has the report), -ENOMEM when the run cannot fit in
 * the memory available (@err names what it needs, what is available and
 * what to reduce; checked before the hosts, switches and engine allocate:
 * res->mem_estimate, what this process will allocate at least, without
 * the frames and events in flight).
 */
int emu_scenario_run(const struct emu_scn_cfg *cfg, struct emu_scn_result *res, char *err, size_t errlen);
void emu_scenario_result_fini(struct emu_scn_result *res);

/*
 * emu_scenario_check_result - check a rank's RESULT payload (@p, @len
 * bytes) and merge it into empty records of @nhost hosts, @nsw switches and
 * @nport directed links, as rank 0 does. Return 0, or -1 if it is
 * malformed. Exposed for tests and the fuzz targets.
 */
int emu_scenario_check_result(const void *p, size_t len, uint32_t nhost, uint32_t nsw, uint32_t nport);

/*
 * emu_scenario_check_blocks - does --size fit the block ids of @cfg->algo
 * (Canary and static trees: 2^24 - 1 ids per allreduce)? 0, or -EINVAL
 * with a message naming the option and the largest value that fits.
 */
int emu_scenario_check_blocks(const struct emu_scn_cfg *cfg, char *err, size_t errlen);

/*
 * emu_scenario_can_lose - can a run of @cfg on @fab lose frames: injected
 * loss (--loss, or a link's loss in a topology file), drop-tail queues
 * (--lossy, or --loss without --lossless), failures, forced drops, hosts
 * attached to real interfaces? @fab may be NULL (no per-link loss known).
 */
bool emu_scenario_can_lose(const struct emu_scn_cfg *cfg, const struct emu_fabric *fab);

/*
 * emu_scenario_sketch - the sketch a Canary run of @cfg on @fab uses:
 * cfg->sketch, or for EMU_SCN_SKETCH_AUTO LH_SKETCH_LOSSY(cfg->elements)
 * where the run can lose frames and 0 (nothing to recover) where it
 * cannot or where hosts are attached to real interfaces (their default).
 */
unsigned emu_scenario_sketch(const struct emu_scn_cfg *cfg, const struct emu_fabric *fab);

/* emu_scenario_defaults - the paper's headline scenario (the sketch: auto). */
void emu_scenario_defaults(struct emu_scn_cfg *cfg);

/* emu_fail_parse - "switch:S3@20us", "link:L0/33@5us-30us", "node:H5@1us-2us". */
int emu_fail_parse(const char *s, struct emu_fail *f);

/*
 * emu_timeout_adaptive_parse - the rest of "--timeout adaptive[:FLOOR-CEIL]"
 * after "adaptive" (@s: "" or ":250ns-8us"): sets cfg's adaptive timeout.
 * -EINVAL for anything else, a zero floor, or a ceiling less than
 * floor + EMU_ATO_UP (the room the rule needs). The start value is
 * cfg->timeout, clamped into [floor, ceil] when the switches are set up.
 */
int emu_timeout_adaptive_parse(const char *s, struct emu_scn_cfg *cfg);

/* emu_drop_parse - "H1/0#3": lose the 3rd frame sent on port 0 of H1. */
int emu_drop_parse(const char *s, struct emu_drop *d);

#endif /* EMU_SCENARIO_H */
