// SPDX-License-Identifier: MIT
/*
 * DOC: main.c - canary-emu, the command line.
 *
 * Every option is one row of opt_table[]: its name, the name of its value,
 * the function that parses the value into struct cli, the default and the
 * help line. getopt_long()'s table, --help and the options a scenario
 * fingerprint leaves out are all made from those rows, so an option cannot
 * be parsed without being documented (git's parse-options is the model).
 * canary-emu(1) documents the same rows; t/0090-man checks that both list
 * the same options.
 *
 * A bad value prints one line naming the option, the value and what would
 * be valid, and exits 2; so do an unknown option, a missing value and
 * contradictory options (--json --csv). Then main() runs the scenario once
 * per algorithm of --algo (a comma list), prints a readable comparison on
 * stdout (or --json / --csv), and exits 0 only if every allreduce of every
 * run finished with the exact result on every host; 1 if a result was
 * wrong or a run could not finish; 2 for bad input.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/dist/dist.h"

#include "emu/report.h"
#include "emu/scenario.h"
#include "emu/scnfile.h"
#include "emu/units.h"
#include "libhost/wire.h"
#include "topologies/topo.h"
#include "emu/engine/cores.h"
#include "emu/engine/util.h"

#include "emu/source-id.h"

#ifndef CANARY_VERSION
#define CANARY_VERSION "unknown"
#endif

/*
 * The build's sources (emu/Makefile.inc): in the fingerprint, so that ranks
 * built from other sources do not join. Read through a volatile pointer:
 * the compiler cannot fold the hash, and the bytes stay in the binary (a
 * test patches them to make "another build").
 */
static const char source_id[] = "canary-source-id:" CANARY_SOURCE_ID;
static const char *volatile source_id_p = source_id;

#define MAX_ALGOS 8
#define STR_(x) #x
#define STR(x) STR_(x)
#define MAX_SIZES 64		/* sizes of a --size sweep */
#define MAX_SEEDS 1000		/* seeds of --seeds */
#define MAX_RUNS 10000		/* runs of a sweep (sizes x algorithms x seeds) without --force-sweep */
#define SWEEP_LONG_S (24 * 3600)	/* ...and its estimated wall time */
#define HOPS_PER_S 2.5e6	/* frame-hops a second a worker (bench/README, Emulator speed): the estimate's pace */

enum out_fmt { OUT_TEXT, OUT_JSON, OUT_CSV };

/* Everything the options decide. */
struct cli {
	struct emu_scn_cfg cfg;
	const char *algos;		/* --algo, a comma list */
	enum out_fmt out;
	const char *out_opt;		/* the option that chose out ("--json"), for conflicts */
	int want_progress;		/* -1: unless the report is JSON */
	bool resources;
	bool exit_now;			/* --help, --version: done */
	unsigned processes, rank, ranks;
	bool have_rank;
	const char *keygen;
	struct emu_dist_cfg dcfg;
	struct { enum lh_algo a; unsigned n; char name[16]; } algo[MAX_ALGOS];
	unsigned nalgo;
	bool limit_set, stall_set, rate_set, workers_set, lag_set, hold_set;	/* given, not the defaults (--attach changes those) */
	struct scnfile_runs runs;	/* --size MIN:MAX:xF and --seeds A-B: the runs per algorithm */
	struct scn_origin {		/* what the last --scenario report said of itself */
		const char *report;		/* its path */
		const char *topology;		/* the --topology it set (NULL: none, or no file's hash) */
		char version[SCNFILE_VAL], source[SCNFILE_VAL];
		char hash[SCNFILE_VAL], path[SCNFILE_VAL];
		char *content;			/* the topology file's lines, each ended */
		size_t len;
	} origin;
	bool topology_changed;		/* --topology-changed: run a topology file that differs from the report's */
	bool force_sweep;		/* --force-sweep: run a sweep over MAX_RUNS runs or SWEEP_LONG_S */
	const char *scn_before;		/* the first scenario option given before --scenario (refused) */
};

/*
 * One option. parse() stores @arg (NULL for an option without a value) in
 * @c and returns NULL, or says what is wrong with @arg ("is not in 1..256")
 * for the one-line error. A row without a name is a heading of --help.
 */
struct cli_opt {
	const char *name;
	const char *arg;		/* name of the value in --help; NULL: no value */
	const char *(*parse)(struct cli *c, const char *arg);
	const char *def;		/* the default, for --help; NULL: none to show */
	const char *help;		/* one sentence; --help wraps it */
	bool local;			/* may differ between ranks: not in the scenario fingerprint */
	char short_name;
};

/* pick - index of @a in @names (@n of them), or -1 */
static int pick(const char *a, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(a, names[i]))
			return i;
	return -1;
}

#define PICK(a, ...) pick((a), (const char *const[]){ __VA_ARGS__ }, \
			  (int)(sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *)))

/* ---- value parsers: NULL on success, else what is wrong with the value ---- */

static const char *o_topology(struct cli *c, const char *a)
{
	c->cfg.topology = a;
	return NULL;
}

static const char *o_algo(struct cli *c, const char *a)
{
	c->algos = a;
	return NULL;
}

static const char *o_hosts(struct cli *c, const char *a)
{
	size_t len = strlen(a);
	uint64_t v;

	if (len && a[len - 1] == '%') {
		char tmp[32], *end;

		snprintf(tmp, sizeof(tmp), "%.*s", (int)(len - 1), a);
		double pct = strtod(tmp, &end);

		if (!*tmp || *end || !(pct > 0 && pct <= 100))
			return "is not a percentage in (0, 100]";
		c->cfg.hosts = 0;
		c->cfg.hosts_pct = pct;
		return NULL;
	}
	if (emu_parse_u64(a, &v) || v == 0 || v > UINT32_MAX)
		return "is not a host count or a percentage (e.g. 512 or 50%)";
	c->cfg.hosts = (uint32_t)v;
	return NULL;
}

/* size4 - @a as a size in bytes, a multiple of 4 */
static bool size4(const char *a, uint64_t *v)
{
	return !emu_parse_size(a, v) && *v >= 4 && *v % 4 == 0;
}

/* --size BYTES, or a sweep MIN:MAX:xF (MIN, MIN x F, ... up to MAX) */
static const char *o_size(struct cli *c, const char *a)
{
	char lo[64], hi[64], x[64];
	uint64_t min, max, f, n = 1;

	if (!strchr(a, ':')) {
		if (!size4(a, &c->cfg.size_bytes))
			return "is not a size in bytes, a multiple of 4 (e.g. 4MiB), or a sweep MIN:MAX:xF (e.g. 1KiB:64MiB:x2)";
		c->runs.size_min = c->runs.size_max = c->cfg.size_bytes;
		return NULL;
	}
	if (strlen(a) >= sizeof(lo) || sscanf(a, "%63[^:]:%63[^:]:%63s", lo, hi, x) != 3 || x[0] != 'x' ||
	    strchr(x, ':') || !size4(lo, &min) || !size4(hi, &max) || min > max || emu_parse_u64(x + 1, &f) || f < 2 ||
	    f > 1024)
		return "is not a sweep MIN:MAX:xF (sizes in bytes, multiples of 4, MIN <= MAX, F in 2..1024; e.g. 1KiB:64MiB:x2)";
	for (uint64_t s = min; s <= max / f; s *= f)
		n++;
	if (n > MAX_SIZES)
		return "makes more than 64 sizes (raise F or MIN)";
	c->runs.size_min = c->cfg.size_bytes = min;
	c->runs.size_max = max;
	c->runs.size_factor = (unsigned)f;
	return NULL;
}

/* parse_uint - @a as an integer in [@lo, @hi] into *@out */
static bool parse_uint(const char *a, uint64_t lo, uint64_t hi, uint64_t *out)
{
	return !emu_parse_u64(a, out) && *out >= lo && *out <= hi;
}

static const char *o_elements(struct cli *c, const char *a)
{
	uint64_t v;

	if (!parse_uint(a, 1, 256, &v))
		return "is not in 1..256";
	c->cfg.elements = (unsigned)v;
	return NULL;
}

static const char *o_concurrent(struct cli *c, const char *a)
{
	uint64_t v;

	if (!parse_uint(a, 1, 255, &v))
		return "is not in 1..255";
	c->cfg.concurrent = (unsigned)v;
	return NULL;
}

static const char *o_background(struct cli *c, const char *a)
{
	int i = PICK(a, "none", "uniform", "random");

	if (i < 0)
		return "is not none, uniform or random";
	c->cfg.background = i > 0;
	c->cfg.bg_pattern = i == 2 ? LH_BG_RANDOM : LH_BG_UNIFORM;
	return NULL;
}

static const char *o_bg_msg(struct cli *c, const char *a)
{
	if (emu_parse_size(a, &c->cfg.bg_msg) || c->cfg.bg_msg == 0)
		return "is not a size in bytes";
	return NULL;
}

static const char *o_timeout(struct cli *c, const char *a)
{
	if (!strncmp(a, "adaptive", 8))
		return emu_timeout_adaptive_parse(a + 8, &c->cfg) ?
			"is not adaptive or adaptive:FLOOR-CEIL, CEIL at least FLOOR + 128ns (e.g. adaptive:200ns-8us)" : NULL;
	if (emu_parse_time(a, &c->cfg.timeout) || c->cfg.timeout == 0)
		return "is not a time with a unit (e.g. 1us)";
	c->cfg.timeout_adaptive = false;
	return NULL;
}

static const char *o_timer(struct cli *c, const char *a)
{
	int i = PICK(a, "exact", "pktgen");

	if (i < 0)
		return "is not exact or pktgen";
	c->cfg.timer = i ? EMU_SW_TIMER_PKTGEN : EMU_SW_TIMER_EXACT;
	return NULL;
}

static const char *o_pktgen_tick(struct cli *c, const char *a)
{
	if (emu_parse_time(a, &c->cfg.pktgen_tick) || c->cfg.pktgen_tick == 0)
		return "is not a time with a unit (e.g. 1ns)";
	return NULL;
}

static const char *o_routing(struct cli *c, const char *a)
{
	return emu_routing_parse(a, &c->cfg.routing) ? "is not adaptive, ecmp or leastloaded" : NULL;
}

static const char *o_router(struct cli *c, const char *a)
{
	int i = PICK(a, "fifo", "merlin", "merlin:lrs", "merlin:rr");

	if (i < 0)
		return "is not fifo, merlin, merlin:lrs or merlin:rr";
	c->cfg.router = i ? EMU_ROUTER_MERLIN : EMU_ROUTER_FIFO;
	c->cfg.xbar_arb = i == 3 ? EMU_XBAR_RR : EMU_XBAR_LRS;
	return NULL;
}

static const char *o_xbar_bw(struct cli *c, const char *a)
{
	if (emu_parse_rate(a, &c->cfg.xbar_bps) || c->cfg.xbar_bps < 1000000 || c->cfg.xbar_bps > 100000000000000ULL)
		return "is not a rate between 1Mbps and 100Tbps (e.g. 120Gbps)";
	return NULL;
}

static const char *o_bg_volume(struct cli *c, const char *a)
{
	if (emu_parse_size(a, &c->cfg.bg_volume) || c->cfg.bg_volume > (1ULL << 50))
		return "is not a size up to 1PiB (e.g. 4MiB; 0: no limit)";
	return NULL;
}

/* a switch buffer's size, 4 KiB to 4 GiB, into @v (--buffer, --obuf) */
static const char *buffer_size(const char *a, uint64_t *v)
{
	if (emu_parse_size(a, v) || *v < 4096 || *v > (1ULL << 32))
		return "is not a size between 4KiB and 4GiB";
	return NULL;
}

static const char *o_obuf(struct cli *c, const char *a)
{
	return buffer_size(a, &c->cfg.obuf_bytes);
}

static const char *o_adaptive_threshold(struct cli *c, const char *a)
{
	if (emu_parse_prob(a, &c->cfg.adaptive_threshold) || !(c->cfg.adaptive_threshold > 0))
		return "is not a share of the output buffer in (0, 1] (e.g. 0.5 or 50%)";
	return NULL;
}

static const char *o_bg_load(struct cli *c, const char *a)
{
	if (emu_parse_prob(a, &c->cfg.bg_load) || !(c->cfg.bg_load > 0))
		return "is not a share of the line rate in (0, 1] (e.g. 0.4 or 40%)";
	return NULL;
}

static const char *o_noise(struct cli *c, const char *a)
{
	return emu_parse_prob(a, &c->cfg.noise) ? "is not a probability (e.g. 0.001 or 0.1%)" : NULL;
}

static const char *o_loss(struct cli *c, const char *a)
{
	if (emu_parse_prob(a, &c->cfg.loss) || c->cfg.loss >= 1)
		return "is not a probability below 1 (e.g. 0.01 or 1%)";
	return NULL;
}

static const char *o_lossy(struct cli *c, const char *a)
{
	(void)a;
	c->cfg.lossy = true;
	return NULL;
}

static const char *o_lossless(struct cli *c, const char *a)
{
	(void)a;
	c->cfg.lossless = true;
	return NULL;
}

static const char *o_buffer(struct cli *c, const char *a)
{
	return buffer_size(a, &c->cfg.buffer_bytes);
}

static const char *o_commit(struct cli *c, const char *a)
{
	if (!strcmp(a, "idle")) {
		c->cfg.commit_idle = true;
		return NULL;
	}
	if (emu_parse_size(a, &c->cfg.commit_bytes) || c->cfg.commit_bytes < 64 || c->cfg.commit_bytes > (1ULL << 32))
		return "is not idle or a size between 64B and 4GiB";
	c->cfg.commit_idle = false;
	return NULL;
}

static const char *o_priority(struct cli *c, const char *a)
{
	int i = pick(a, emu_tc_mode_names, EMU_TC_MODES);

	if (i < 0)
		return "is not none, recovery or collective";
	c->cfg.priority = (enum emu_tc_mode)i;
	return NULL;
}

static const char *o_fail(struct cli *c, const char *a)
{
	if (c->cfg.nfail == EMU_SCN_MAX_FAIL)
		return "is one too many (at most 32)";
	if (emu_fail_parse(a, &c->cfg.fail[c->cfg.nfail]))
		return "is not switch:NAME@T[-T], node:NAME@T[-T] or link:NODE/PORT@T[-T]";
	c->cfg.nfail++;
	return NULL;
}

static const char *o_drop(struct cli *c, const char *a)
{
	if (c->cfg.ndrop == EMU_SCN_MAX_FAIL)
		return "is one too many (at most 32)";
	if (emu_drop_parse(a, &c->cfg.drop[c->cfg.ndrop]))
		return "is not NODE/PORT#N (lose the N-th frame sent on that port)";
	c->cfg.ndrop++;
	return NULL;
}

static const char *o_profile(struct cli *c, const char *a)
{
	if (!emu_tofino_profile_get(a))
		return "is not tofino1, tofino2 or unbounded";
	c->cfg.profile = a;
	return NULL;
}

static const char *o_descriptors(struct cli *c, const char *a)
{
	uint64_t v;

	if (!parse_uint(a, 1, 1u << 24, &v))
		return "is not a table size in 1..16777216";
	c->cfg.descriptors = (uint32_t)v;
	return NULL;
}

static const char *o_shards(struct cli *c, const char *a)
{
	uint64_t v;

	if (!parse_uint(a, 1, 64, &v))
		return "is not in 1..64";
	c->cfg.shards = (unsigned)v;
	return NULL;
}

static const char *o_table(struct cli *c, const char *a)
{
	int i = PICK(a, "hash", "per-tenant");

	if (i < 0)
		return "is not hash or per-tenant";
	c->cfg.table_per_tenant = i == 1;
	return NULL;
}

static const char *o_resources(struct cli *c, const char *a)
{
	(void)a;
	c->resources = true;
	return NULL;
}

static const char *o_window(struct cli *c, const char *a)
{
	uint64_t v;

	if (!parse_uint(a, 1, 1000000, &v))
		return "is not a block count in 1..1000000";
	c->cfg.window = (unsigned)v;
	return NULL;
}

static const char *o_retx_timeout(struct cli *c, const char *a)
{
	if (emu_parse_time(a, &c->cfg.retx_timeout) || c->cfg.retx_timeout == 0)
		return "is not a time with a unit (e.g. 20us)";
	return NULL;
}

static const char *o_max_failures(struct cli *c, const char *a)
{
	uint64_t v;

	if (!parse_uint(a, 0, 1000, &v))
		return "is not in 0..1000";
	c->cfg.max_failures = (unsigned)v;
	return NULL;
}

static const char *o_sketch(struct cli *c, const char *a)
{
	uint64_t v;

	if (!strcmp(a, "auto")) {
		c->cfg.sketch = EMU_SCN_SKETCH_AUTO;
		return NULL;
	}
	if (!parse_uint(a, 0, LH_SKETCH_MAX, &v))
		return "is not auto or in 0..16";
	c->cfg.sketch = (unsigned)v;
	return NULL;
}

static const char *o_time_limit(struct cli *c, const char *a)
{
	c->limit_set = true;
	if (!strcmp(a, "0") || !strcmp(a, "inf")) {
		c->cfg.limit = EMU_TIME_INF;	/* none: the run ends when it is done, stalls or is stopped */
		return NULL;
	}
	if (emu_parse_time(a, &c->cfg.limit) || c->cfg.limit == 0 || c->cfg.limit == EMU_TIME_INF)
		return "is not a time with a unit (e.g. 100ms), or 0 or inf for none";
	return NULL;
}

static const char *o_stall(struct cli *c, const char *a)
{
	c->stall_set = true;
	if (!strcmp(a, "0")) {
		c->cfg.stall = 0;
		return NULL;
	}
	return emu_parse_time(a, &c->cfg.stall) ? "is not a time with a unit (e.g. 5ms; 0 turns the watchdog off)"
						 : NULL;
}

static const char *o_seed(struct cli *c, const char *a)
{
	if (emu_parse_u64(a, &c->cfg.seed))
		return "is not a non-negative integer";
	c->runs.seed_min = c->runs.seed_max = c->cfg.seed;
	return NULL;
}

static const char *o_run_id(struct cli *c, const char *a)
{
	uint64_t v;

	if (emu_parse_u64(a, &v) || v >= EMU_CANARY_RUNS)
		return "is not a run id in 0..3";
	c->cfg.run_id = (unsigned)v;
	return NULL;
}

static const char *o_force_sweep(struct cli *c, const char *a)
{
	(void)a;
	c->force_sweep = true;
	return NULL;
}

/* --seeds A-B: every run once per seed from A to B */
static const char *o_seeds(struct cli *c, const char *a)
{
	char lo[32];
	const char *dash = strchr(a, '-');
	uint64_t min, max;

	if (!dash || (size_t)(dash - a) >= sizeof(lo))
		return "is not a range A-B of seeds (e.g. 1-5)";
	snprintf(lo, sizeof(lo), "%.*s", (int)(dash - a), a);
	if (emu_parse_u64(lo, &min) || emu_parse_u64(dash + 1, &max) || min > max)
		return "is not a range A-B of seeds (e.g. 1-5)";
	if (max - min >= MAX_SEEDS)
		return "has more than 1000 seeds";
	c->runs.seed_min = c->cfg.seed = min;
	c->runs.seed_max = max;
	return NULL;
}

static const char *o_workers(struct cli *c, const char *a)
{
	uint64_t v;

	if (!strcmp(a, "per-node")) {
		c->cfg.per_node = true;
		return NULL;
	}
	if (!parse_uint(a, 1, 4096, &v))
		return "is not a count in 1..4096 or per-node";
	c->workers_set = true;
	c->cfg.workers = (unsigned)v;
	c->cfg.per_node = false;
	return NULL;
}

static const char *o_clock(struct cli *c, const char *a)
{
	int i = PICK(a, "virtual", "wall");

	if (i < 0)
		return "is not virtual or wall";
	c->cfg.clock = i ? EMU_CLOCK_WALL : EMU_CLOCK_VIRTUAL;
	return NULL;
}

static const char *o_dilation(struct cli *c, const char *a)
{
	char *end;
	double d;

	if (!strcmp(a, "auto")) {
		c->cfg.dilation = 0;
		return NULL;
	}
	d = strtod(a, &end);
	if (*end || !(d > 0 && d < 1e12))
		return "is not a positive number or auto";
	c->cfg.dilation = d;
	return NULL;
}

/* --attach H3=veth3,H7=veth7: hosts that are real processes behind those interfaces */
static const char *o_attach(struct cli *c, const char *a)
{
	char buf[1024], *save = NULL;

	if (strlen(a) >= sizeof(buf))
		return "is too long";
	snprintf(buf, sizeof(buf), "%s", a);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		struct emu_attach_cfg *at = &c->cfg.attach[c->cfg.nattach];

		if (c->cfg.nattach == EMU_SCN_MAX_ATTACH)
			return "attaches too many hosts (at most 32)";
		if (!eq || eq == tok || !eq[1] || (size_t)(eq - tok) >= sizeof(at->node) ||
		    strlen(eq + 1) >= sizeof(at->ifname) || strlen(eq + 1) >= 16)
			return "is not a list of HOST=INTERFACE (e.g. H3=veth3,H7=veth7)";
		*eq = '\0';
		snprintf(at->node, sizeof(at->node), "%s", tok);
		snprintf(at->ifname, sizeof(at->ifname), "%s", eq + 1);
		c->cfg.nattach++;
	}
	if (!c->cfg.nattach)
		return "names no host";
	return NULL;
}

static const char *o_attach_peers(struct cli *c, const char *a)
{
	c->cfg.attach_peers = a;
	return NULL;
}

static const char *o_attach_hold(struct cli *c, const char *a)
{
	c->hold_set = true;
	return emu_parse_time(a, &c->cfg.attach_hold) ? "is not a time with a unit (e.g. 2s)" : NULL;
}

/* realtime_ns - CLOCK_REALTIME in ns (--start-at's clock) */
static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static const char *o_start_at(struct cli *c, const char *a)
{
	uint64_t now = realtime_ns();

	if (lh_parse_epoch(a, &c->cfg.start_at_ns) || !c->cfg.start_at_ns)
		return "is not an instant in seconds since the Unix epoch (e.g. $(($(date +%s) + 2)))";
	/* the hold until then, in emulated ps, must fit: checked here, once (check_attach bounds it further) */
	if (c->cfg.start_at_ns > now && c->cfg.start_at_ns - now > EMU_TIME_INF / EMU_NS / 2)
		return "is too far ahead (more than 106 days from now)";
	return NULL;
}

static const char *o_attach_quiet(struct cli *c, const char *a)
{
	emu_time_t t;

	if (emu_parse_time(a, &t) || t == 0)
		return "is not a positive time with a unit (e.g. 1s)";
	for (unsigned i = 0; i < EMU_SCN_MAX_ATTACH; i++)
		c->cfg.attach[i].quiet = t;
	return NULL;
}

static const char *o_attach_poll(struct cli *c, const char *a)
{
	emu_time_t t;

	if (emu_parse_time(a, &t) || t < 100 * EMU_NS || t > 10 * EMU_MS)
		return "is not a time in 100ns..10ms";
	for (unsigned i = 0; i < EMU_SCN_MAX_ATTACH; i++)
		c->cfg.attach[i].poll = t;
	return NULL;
}

static const char *o_rate(struct cli *c, const char *a)
{
	if (emu_parse_rate(a, &c->cfg.rate_bps))
		return "is not a rate with a unit in " EMU_RATE_RANGE " (e.g. 100Mbps, 10G)";
	c->rate_set = true;
	return NULL;
}

static const char *o_max_lag(struct cli *c, const char *a)
{
	emu_time_t t;

	c->lag_set = true;
	if (!strcmp(a, "0")) {
		c->cfg.lag_max_ns = 0;
		return NULL;
	}
	if (emu_parse_time(a, &t))
		return "is not a time with a unit (e.g. 1s; 0: never give up)";
	c->cfg.lag_max_ns = t / EMU_NS;
	return NULL;
}

static const char *o_lag_bound(struct cli *c, const char *a)
{
	emu_time_t t;

	if (emu_parse_time(a, &t) || t < 1000)
		return "is not a time of at least 1ns (e.g. 2ms)";
	c->cfg.lag_bound_ns = t / 1000;
	return NULL;
}

static const char *o_pcap(struct cli *c, const char *a)
{
	c->cfg.pcap = a;
	return NULL;
}

static const char *o_timeseries(struct cli *c, const char *a)
{
	if (!*a)
		return "is empty: give the CSV file's path";
	c->cfg.series = a;
	return NULL;
}

static const char *o_timeseries_every(struct cli *c, const char *a)
{
	if (emu_parse_time(a, &c->cfg.series_every) || c->cfg.series_every == 0 || c->cfg.series_every == EMU_TIME_INF)
		return "is not a time with a unit (e.g. 1us), more than 0";
	return NULL;
}

static const char *o_timeseries_links(struct cli *c, const char *a)
{
	if (!a[strspn(a, ", ")])
		return "names no link: give all, or NODE/PORT or NODE, comma-separated";
	c->cfg.series_links = a;
	return NULL;
}

static const char *o_pcap_link(struct cli *c, const char *a)
{
	if (!a[strspn(a, ", ")])
		return "names no link: give NODE/PORT or NODE, comma-separated (without the option: every link)";
	c->cfg.pcap_links = a;
	return NULL;
}

/* --json and --csv: one report format; @opt chose @fmt */
static const char *set_out(struct cli *c, enum out_fmt fmt, const char *opt)
{
	static char why[64];

	if (c->out_opt && c->out != fmt) {
		snprintf(why, sizeof(why), "cannot be combined with %s (one report format)", c->out_opt);
		return why;
	}
	c->out = fmt;
	c->out_opt = opt;
	return NULL;
}

static const char *o_json(struct cli *c, const char *a)
{
	(void)a;
	return set_out(c, OUT_JSON, "--json");
}

static const char *o_csv(struct cli *c, const char *a)
{
	(void)a;
	return set_out(c, OUT_CSV, "--csv");
}

static const char *o_progress(struct cli *c, const char *a)
{
	(void)a;
	c->want_progress = 1;
	return NULL;
}

static const char *o_no_ahead(struct cli *c, const char *a)
{
	(void)a;
	c->cfg.no_ahead = true;
	return NULL;
}

static const char *o_no_progress(struct cli *c, const char *a)
{
	(void)a;
	c->want_progress = 0;
	return NULL;
}

static const char *o_processes(struct cli *c, const char *a)
{
	uint64_t v;

	if (!parse_uint(a, 1, EMU_DIST_MAX_RANKS, &v))
		return "is not a count in 1..64";
	c->processes = (unsigned)v;
	return NULL;
}

static const char *o_rank(struct cli *c, const char *a)
{
	uint64_t v;

	if (!parse_uint(a, 0, EMU_DIST_MAX_RANKS - 1, &v))
		return "is not a rank in 0..63";
	c->rank = (unsigned)v;
	c->have_rank = true;
	return NULL;
}

static const char *o_ranks(struct cli *c, const char *a)
{
	uint64_t v;

	if (!parse_uint(a, 1, EMU_DIST_MAX_RANKS, &v))
		return "is not a count in 1..64";
	c->ranks = (unsigned)v;
	return NULL;
}

static const char *o_coordinator(struct cli *c, const char *a)
{
	const char *colon = strrchr(a, ':');
	uint64_t port;

	if (strncmp(a, "tcp://", 6) || colon <= a + 6 || emu_parse_u64(colon + 1, &port) || port < 1 || port > 65535)
		return "is not tcp://HOST:PORT (PORT in 1..65535)";
	c->dcfg.coordinator = a;
	return NULL;
}

static const char *o_bind(struct cli *c, const char *a)
{
	c->dcfg.bind = a;
	return NULL;
}

static const char *o_curve(struct cli *c, const char *a)
{
	c->dcfg.curve = a;
	return NULL;
}

static const char *o_curve_keygen(struct cli *c, const char *a)
{
	c->keygen = a;
	return NULL;
}

static const char *o_peer_timeout(struct cli *c, const char *a)
{
	emu_time_t t;

	if (emu_parse_time(a, &t) || t < 100 * EMU_MS || t > 3600 * EMU_S)
		return "is not a time in 100ms..1h";
	c->dcfg.timeout_ms = (unsigned)(t / EMU_MS);
	return NULL;
}

static const char *o_help(struct cli *c, const char *a);
static const char *o_scenario(struct cli *c, const char *a);
static const char *o_topology_changed(struct cli *c, const char *a);

static const char *o_version(struct cli *c, const char *a)
{
	(void)a;
	printf("canary-emu %s (sources %s)\n", CANARY_VERSION, CANARY_SOURCE_ID);
	c->exit_now = true;
	return NULL;
}

/* a row; the help text may be followed by .local = true, .short_name = 'h' */
#define OPT(n, a, p, d, ...) { .name = (n), .arg = (a), .parse = (p), .def = (d), .help = __VA_ARGS__ }

static const struct cli_opt opt_table[] = {
	{ .help = "scenario:" },
	OPT("topology", "SPEC", o_topology, "fattree2:leaves=32,spines=32,hosts=32",
	  "fattree2:leaves=L,spines=S,hosts=H | fattree3:k=K | FILE"),
	OPT("algo", "LIST", o_algo, "ring,static:1,static:4,canary", "canary | static:N | ring, comma-separated"),
	OPT("hosts", "N|P%", o_hosts, "50%", "hosts in the allreduce(s), placed at random by the seed"),
	OPT("size", "BYTES", o_size, "4MiB",
	    "data per host, suffixes KiB MiB GiB; MIN:MAX:xF sweeps sizes MIN, MIN x F, ... up to MAX (1KiB:64MiB:x2)"),
	OPT("elements", "N", o_elements, "256", "int32 elements per packet, 1..256"),
	OPT("concurrent", "K", o_concurrent, "1", "K concurrent allreduces (tenants), hosts split evenly"),
	OPT("background", "NAME", o_background, "uniform",
	  "none | uniform | random: what the other hosts send; uniform: "
	  "each to a random host, receiving from another, new peers per "
	  "message; random: destinations drawn independently (incast)"),
	OPT("bg-msg", "BYTES", o_bg_msg, "64KiB", "background message size"),
	OPT("bg-load", "F", o_bg_load, "1",
	    "each background host offers F of its line rate: messages arrive with exponential gaps (by the seed) "
	    "and wait their turn; 1: back to back, always something to send"),
	OPT("bg-volume", "BYTES", o_bg_volume, "0 (no limit)",
	    "each background host sends BYTES of messages in all (whole --bg-msg messages), then stops"),
	OPT("seed", "N", o_seed, "1", "placement, inputs, roots, loss, noise, background"),
	OPT("seeds", "A-B", o_seeds, NULL, "run everything once per seed A..B; the report's rows give the mean and the "
	    "range over the seeds"),
	OPT("force-sweep", NULL, o_force_sweep, NULL,
	    "run a sweep of more than 10000 runs, or one estimated to take more than a day (refused without it)"),
	OPT("scenario", "FILE", o_scenario, NULL,
	    "the scenario of a --json or --csv report FILE (options given after it override it); the same results"),
	OPT("topology-changed", NULL, o_topology_changed, NULL,
	    "with --scenario: run its topology file although its content differs from the report's"),
	{ .help = "network:" },
	OPT("routing", "NAME", o_routing, "adaptive", "adaptive | ecmp | leastloaded"),
	OPT("router", "NAME", o_router, "fifo",
	    "fifo | merlin[:lrs|:rr]: switch queueing; fifo: one egress queue per port; merlin: input "
	    "buffers routed at their head, a crossbar (least recently served, or round robin), output buffers (SST/Merlin's hr_router)"),
	OPT("xbar-bw", "RATE", o_xbar_bw, "1.5 x the fastest link", "merlin: crossbar rate per port (hr_router's xbar_bw)"),
	OPT("obuf", "BYTES", o_obuf, "128KiB",
	    "merlin: output buffer per port and traffic class (hr_router's output_buf_size)"),
	OPT("adaptive-threshold", "F", o_adaptive_threshold, "0.5",
	    "merlin, adaptive routing: keep the natural up port while F of its output buffer is free, else take "
	    "the one with the most free (hr_router's fat tree adaptive_threshold)"),
	OPT("lossy", NULL, o_lossy, NULL, "drop-tail Ethernet instead of lossless credit flow control"),
	OPT("loss", "P", o_loss, NULL, "drop probability on every link (implies --lossy unless --lossless)"),
	OPT("lossless", NULL, o_lossless, NULL,
	    "keep lossless credit flow control with --loss: no queue drops, only the injected loss"),
	OPT("buffer", "BYTES", o_buffer, "128KiB; merlin: 8KiB", "buffer per port and traffic class (merlin: the input buffer)"),
	OPT("priority", "NAME", o_priority, "recovery",
	  "none | recovery | collective: which frames get a second traffic class, served first, with its "
	  "own buffer credits: none; an allreduce's recovery frames (requests, resends, failures, fallback "
	  "and direct data); every allreduce frame (Canary, ring)"),
	OPT("commit-ahead", "BYTES", o_commit, "4KiB",
	    "fifo ports: commit queued frames to the wire while it is busy for less than BYTES' time (a frame "
	    "of the higher class waits behind at most that); idle: only when the wire is idle (strict "
	    "priority exact, one event more per queued frame)"),
	OPT("rate", "RATE", o_rate, "the topology's; 100Mbps with --attach", "every link's rate (e.g. 1Gbps)"),
	OPT("noise", "P", o_noise, NULL, "probability that a host delays a send by 1us (0.001, 0.1%)"),
	OPT("fail", "SPEC", o_fail, NULL, "switch:S3@20us | link:L0/33@5us-30us | node:H5@1us (repeatable)"),
	OPT("drop", "NODE/PORT#N", o_drop, NULL, "lose exactly the N-th frame sent on that port (repeatable)"),
	{ .help = "switches:" },
	OPT("timeout", "T", o_timeout, "1us", "Canary switch timeout; adaptive[:FLOOR-CEIL]: every switch learns one "
	  "per allreduce and role from the stragglers it sees (from 1us, within 200ns-8us; on tofino1 with "
	  "--routing ecmp only)"),
	OPT("timer", "NAME", o_timer, "exact", "exact | pktgen: a deadline per descriptor, or a packet generator checking one slot per tick"),
	OPT("pktgen-tick", "T", o_pktgen_tick, "1ns", "pktgen clock period"),
	OPT("profile", "NAME", o_profile, "tofino1", "tofino1 | tofino2 | unbounded"),
	OPT("descriptors", "N", o_descriptors, "the profile's", "descriptor table entries per switch"),
	OPT("shards", "N", o_shards, "the fewest that fit", "multicast shards"),
	OPT("table", "NAME", o_table, "hash", "hash | per-tenant: descriptor slots split statically among tenants"),
	OPT("resources", NULL, o_resources, NULL, "print the switch program's Tofino resource report and exit"),
	{ .help = "hosts:" },
	OPT("window", "N", o_window, "bandwidth x delay", "blocks in flight per host"),
	OPT("retx-timeout", "T", o_retx_timeout, "2 x RTT", "host retransmission timeout"),
	OPT("max-failures", "K", o_max_failures, "3", "re-issues of a block before host-based fallback"),
	OPT("sketch", "K|auto", o_sketch, "auto",
	    "Canary: the last K (0..16) of each packet's elements name up to K missing hosts, whose data the leader "
	    "then asks for directly; 0: the paper's recovery; auto: 16 where frames can be lost (--loss, a link's "
	    "loss, --lossy, --fail, --drop) with 128 or more --elements, else 0 (and 0 beside --attach's real hosts)"),
	{ .help = "run:" },
	OPT("time-limit", "T", o_time_limit, "100ms", "give up at this emulated time (0 or inf: never; the default "
	    "with --attach)"),
	OPT("stall", "T", o_stall, "5ms", "give up when no block completed for T of emulated time, or for twice the longest timeout an allreduce host waits on if that is longer (0: never)"),
	OPT("workers", "N|per-node", o_workers, "the free cores", "worker threads", .local = true),
	OPT("no-run-ahead", NULL, o_no_ahead, NULL,
	    "background sources' transmit wakes go through the event queue (same results, more queue events)",
	    .local = true),
	OPT("clock", "NAME", o_clock, "virtual", "virtual | wall"),
	OPT("dilation", "D|auto", o_dilation, "auto", "wall clock: wall ns per emulated ns"),
	OPT("lag-bound", "T", o_lag_bound, "2ms",
	    "wall clock: the run kept up if no time window started more than T (wall time) behind its time",
	    .local = true),
	{ .help = "real hosts (canary-emu(1), REAL HOSTS):" },
	OPT("attach", "LIST", o_attach, NULL,
	    "H3=veth3,H7=veth7: these hosts are real processes (canary-allreduce) behind those interfaces; "
	    "needs --clock wall"),
	OPT("attach-hold", "T", o_attach_hold, "2s", "with --attach: every allreduce host sends from T on"),
	OPT("start-at", "T", o_start_at, NULL,
	    "with --attach: every allreduce host sends from wall-clock instant T on (seconds since the Unix epoch, "
	    "as canary-allreduce --start-at T): instead of --attach-hold"),
	OPT("attach-peers", "FILE", o_attach_peers, NULL,
	    "write the attached hosts' peer table (RANK IPV4 MAC) for canary-allreduce --peers; FILE.T per tenant T "
	    "with --concurrent"),
	OPT("run-id", "N", o_run_id, "0",
	    "the run id (0..3) every frame of the first run carries, then N+1, ... modulo 4 for a sweep's runs; "
	    "a host drops a frame of another run and counts it (other_run_frames). Real hosts: canary-allreduce "
	    "--run-id, or the '# run' line of --attach-peers' table"),
	OPT("attach-quiet", "T", o_attach_quiet, "1s",
	    "an attached host counts as done when the completion barrier went through and it was then silent this long"),
	OPT("attach-poll", "T", o_attach_poll, "20us", "how often the attached interfaces are read"),
	OPT("max-lag", "T", o_max_lag, "1s with --attach, else 0",
	    "wall clock: give up this far behind real time, naming the rate the machine sustains (0: never)"),
	{ .help = "output:" },
	OPT("json", NULL, o_json, NULL, "the report as one JSON object on stdout", .local = true),
	OPT("csv", NULL, o_csv, NULL, "the report as CSV, one row per allreduce", .local = true),
	OPT("progress", NULL, o_progress, NULL,
	    "share of the result delivered and time left on stderr: redrawn on a terminal, else a line every 5 s "
	    "(default: unless --json)", .local = true),
	OPT("no-progress", NULL, o_no_progress, NULL, "no progress on stderr", .local = true),
	OPT("pcap", "FILE", o_pcap, NULL,
	    "write frames (real bytes, emulated timestamps) to FILE, pcapng with one interface per link direction"),
	OPT("pcap-links", "LIST", o_pcap_link, "all",
	    "links to capture: NODE/PORT (that link) or NODE (all its links), comma-separated"),
	OPT("timeseries", "FILE", o_timeseries, NULL,
	    "write a time series to FILE (CSV: link utilization and queues per tier, descriptors per switch, "
	    "background goodput) and a gnuplot script beside it; several algorithms: one file each, named after it",
	    .local = true),
	OPT("timeseries-every", "T", o_timeseries_every, "1us", "the time series' interval (emulated time)",
	    .local = true),
	OPT("timeseries-links", "LIST", o_timeseries_links, NULL,
	    "links with time series columns of their own (utilization, queued bytes, each direction): all (at most "
	    "256 directions), or NODE/PORT (that link) and NODE (all its links), comma-separated", .local = true),
	{ .help = "distributed runs (canary-emu(1), RUNNING ACROSS MACHINES):" },
	OPT("processes", "P", o_processes, "1", "split the run over P local processes (ranks) that talk ZeroMQ",
	  .local = true),
	OPT("rank", "R", o_rank, NULL, "this process is rank R of --ranks; rank 0 prints the report", .local = true),
	OPT("ranks", "P", o_ranks, NULL, "the number of ranks", .local = true),
	OPT("coordinator", "EP", o_coordinator, NULL, "rank 0's endpoint, tcp://HOST:PORT", .local = true),
	OPT("bind", "ADDR", o_bind, "127.0.0.1", "address of this rank's data socket, reachable by the others",
	  .local = true),
	OPT("curve", "KEYFILE", o_curve, NULL, "authenticate and encrypt with ZeroMQ CURVE", .local = true),
	OPT("curve-keygen", "DIR", o_curve_keygen, NULL, "write DIR/rank<i>.key for --ranks P ranks and exit"),
	OPT("peer-timeout", "T", o_peer_timeout, "5s", "a rank silent this long is declared dead", .local = true),
	{ .help = "information:" },
	OPT("help", NULL, o_help, NULL, "this list, then exit", .short_name = 'h'),
	OPT("version", NULL, o_version, NULL, "the version, then exit"),
};

#define NOPTS EMU_ARRAY_SIZE(opt_table)
#define HELP_COL 24
#define HELP_WIDTH 79

/* wrap_word - @len bytes of @w at column *@col, on a new line if they would pass HELP_WIDTH */
static void wrap_word(FILE *f, const char *w, int len, int *col, bool space)
{
	if (*col + 1 + len > HELP_WIDTH && *col > HELP_COL) {
		fprintf(f, "\n%*s", HELP_COL, "");
		*col = HELP_COL;
	} else if (*col < HELP_COL) {
		fprintf(f, "%*s", HELP_COL - *col, "");
		*col = HELP_COL;
	} else if (space) {
		fputc(' ', f);
		(*col)++;
	}
	fprintf(f, "%.*s", len, w);
	*col += len;
}

/* wrap - the words of @text from column *@col (a space first if @space) */
static void wrap(FILE *f, const char *text, int *col, bool space)
{
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, " ");

		if (len)
			wrap_word(f, p, (int)len, col, space);
		space = true;
		p += len;
		p += strspn(p, " ");
	}
}

/* usage - --help, made from opt_table[] */
static void usage(FILE *f)
{
	fputs("usage: canary-emu [options]\n"
	      "Emulate allreduces on a datacenter fabric, frame by frame, and compare the\n"
	      "algorithms; the manual page canary-emu(1) has the details.\n", f);
	for (size_t i = 0; i < NOPTS; i++) {
		const struct cli_opt *o = &opt_table[i];
		char left[64];

		if (!o->name) {
			fprintf(f, "\n%s\n", o->help);
			continue;
		}
		int n = o->short_name ? snprintf(left, sizeof(left), "  -%c, --%s", o->short_name, o->name)
				      : snprintf(left, sizeof(left), "  --%s%s%s", o->name, o->arg ? " " : "",
						 o->arg ? o->arg : "");

		fputs(left, f);
		int col = n;
		char def[96];

		snprintf(def, sizeof(def), "(default: %s)", o->def ? o->def : "");
		wrap(f, o->help, &col, n >= HELP_COL);
		if (o->def)
			wrap_word(f, def, (int)strlen(def), &col, true);
		fputc('\n', f);
	}
}

static const char *o_help(struct cli *c, const char *a)
{
	(void)a;
	usage(stdout);
	c->exit_now = true;
	return NULL;
}

/* the values a scenario file gave: the options keep pointers into them (reachable until exit) */
static char **scn_values;
static size_t scn_nvalues;

/*
 * apply_identity - a key of a scenario that names the report rather than
 * an option (report.c's json_identity): kept in c->origin. Return 1 if
 * @key is one (0 or -EINVAL in *@rc), 0 if not.
 */
static int apply_identity(struct cli *c, const char *key, const char *val, char *err, size_t errlen, int *rc)
{
	struct scn_origin *o = &c->origin;

	*rc = 0;
	if (!strcmp(key, "version"))
		snprintf(o->version, sizeof(o->version), "%s", val);
	else if (!strcmp(key, "source"))
		snprintf(o->source, sizeof(o->source), "%s", val);
	else if (!strcmp(key, "topology_hash"))
		snprintf(o->hash, sizeof(o->hash), "%s", val);
	else if (!strcmp(key, "topology_path"))
		snprintf(o->path, sizeof(o->path), "%s", val);
	else if (!strcmp(key, "topology_content")) {
		size_t n = strlen(val);

		o->content = emu_xrealloc(o->content, o->len + n + 2);
		memcpy(o->content + o->len, val, n);
		o->len += n;
		o->content[o->len++] = '\n';
		o->content[o->len] = 0;
	} else if (!strcmp(key, "format")) {
		if (strcmp(val, STR(SCNFILE_FORMAT))) {
			snprintf(err, errlen, "format: '%s': this canary-emu reads scenario format %d only", val,
				 SCNFILE_FORMAT);
			*rc = -EINVAL;
		}
	} else {
		return 0;
	}
	return 1;
}

static int algo_list(struct cli *c, const char *s, char *why, size_t len);

/*
 * scn_check - what the command line checks after its last option, checked
 * for a scenario file's value as it is read, so that the error names the
 * file's line: the algorithms, a topology generator's spec, --lossless
 * beside the file's lossy and loss (written before it). 0, or -EINVAL with
 * the reason in @err.
 */
static int scn_check(struct cli *c, const char *key, const char *val, char *err, size_t errlen)
{
	char why[512];

	if (!strcmp(key, "algo") && algo_list(c, val, why, sizeof(why))) {
		snprintf(err, errlen, "algo: %s", why);
		return -EINVAL;
	}
	if (!strcmp(key, "topology") && (emu_topo_is_spec(val) || (strchr(val, ':') && access(val, F_OK)))) {
		struct emu_fabric *fab = emu_topo_load(val, why, sizeof(why));
		const char *w = strncmp(why, "--topology: ", 12) ? why : why + 12;

		emu_fabric_destroy(fab);
		if (!fab) {
			snprintf(err, errlen, "topology: %s", w);
			return -EINVAL;
		}
	}
	if (!strcmp(key, "lossless") && !strcmp(val, "true") && (c->cfg.lossy || !(c->cfg.loss > 0))) {
		snprintf(err, errlen, "lossless: true %s", c->cfg.lossy ? "cannot be combined with lossy: true (one flow control)"
									 : "only applies with loss P > 0 (the fabric is lossless without it)");
		return -EINVAL;
	}
	return 0;
}

/* apply_kv - one "key": value of a scenario file, as --key value; 0, or -EINVAL with the reason in @err */
static int apply_kv(void *ctx, const char *key, const char *val, char *err, size_t errlen)
{
	struct cli *c = ctx;
	const struct cli_opt *d = NULL;
	int rc;

	if (apply_identity(c, key, val, err, errlen, &rc))
		return rc;
	for (size_t i = 0; i < NOPTS && !d; i++)
		if (opt_table[i].name && !strcmp(opt_table[i].name, key))
			d = &opt_table[i];
	if (!d || !emu_scnfile_known(key)) {
		snprintf(err, errlen, "'%s' is not a key of a scenario", key);
		return -EINVAL;
	}
	if (!strcmp(val, "auto"))
		return 0;	/* the default, resolved when the run starts */
	if (scn_check(c, key, val, err, errlen))
		return -EINVAL;
	if (!d->arg && strcmp(val, "true") && strcmp(val, "false")) {
		snprintf(err, errlen, "%s: '%s' is not true or false", key, val);
		return -EINVAL;
	}
	if (!d->arg && !strcmp(val, "false"))
		return 0;
	const char *v = NULL;

	if (d->arg) {
		scn_values = emu_xrealloc(scn_values, (scn_nvalues + 1) * sizeof(*scn_values));
		v = scn_values[scn_nvalues++] = strdup(val);
		if (!v)
			emu_out_of_memory(strlen(val) + 1);
	}
	const char *why = d->parse(c, v);

	if (why) {
		snprintf(err, errlen, "%s: '%s' %s", key, val, why);
		return -EINVAL;
	}
	return 0;
}

static const char *o_scenario(struct cli *c, const char *a)
{
	static char why[640];
	struct scn_origin *o = &c->origin;

	free(o->content);
	*o = (struct scn_origin){ .report = a };
	/* fail() prints "--scenario: 'FILE' WHY" */
	if (emu_scnfile_read(a, apply_kv, c, why, sizeof(why)))
		return why;
	if (o->hash[0])
		o->topology = c->cfg.topology;
	if (o->version[0] && (strcmp(o->version, CANARY_VERSION) || (o->source[0] && strcmp(o->source, CANARY_SOURCE_ID))))
		fprintf(stderr, "canary-emu: warning: --scenario '%s' was written by canary-emu %s (sources %s), this is "
			"%s (sources %s): the results may differ\n", a, o->version, o->source[0] ? o->source : "unknown",
			CANARY_VERSION, CANARY_SOURCE_ID);
	return NULL;
}

static const char *o_topology_changed(struct cli *c, const char *a)
{
	(void)a;
	c->topology_changed = true;
	return NULL;
}

static int fail(const char *opt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* file_hash - the hash of the file at @path into @out (emu_report_topo_hash); false if it cannot be read */
static bool file_hash(const char *path, char out[32])
{
	struct report_topo t;
	bool ok = !emu_report_topo_init(&t, path) && t.file;

	if (ok)
		memcpy(out, t.hash, 32);
	emu_report_topo_fini(&t);
	return ok;
}

/* the topology rebuilt from a report's copy, removed at exit */
static char topo_copy[64];

static void topo_copy_remove(void)
{
	if (topo_copy[0])
		unlink(topo_copy);
}

/* write_topo_copy - the report's copy of its topology file into a temporary file; its path, or NULL */
static const char *write_topo_copy(const struct scn_origin *o)
{
	snprintf(topo_copy, sizeof(topo_copy), "%s", "/tmp/canary-topology-XXXXXX");
	int fd = mkstemp(topo_copy);

	if (fd < 0) {
		topo_copy[0] = 0;
		return NULL;
	}
	atexit(topo_copy_remove);
	bool ok = write(fd, o->content, o->len) == (ssize_t)o->len;

	return close(fd) == 0 && ok ? topo_copy : NULL;
}

/*
 * resolve_topology - the topology file of a --scenario report (not
 * overridden by a later --topology): the first of the path relative to the
 * report, as written (relative to here) and the absolute path it was run
 * from whose content has the report's hash; else, with --topology-changed,
 * the first that exists; else the report's copy of it, if it has one.
 * Return 0 or the exit status (2: refused, naming both hashes).
 */
static int resolve_topology(struct cli *c)
{
	const struct scn_origin *o = &c->origin;
	const char *cand[3] = { NULL, NULL, NULL }, *found = NULL;
	static char rel[PATH_MAX];	/* the run's --topology may point here: kept to the end */
	char h[32], found_hash[32] = "";

	if (!o->topology || c->cfg.topology != o->topology)
		return 0;
	const char *slash = strrchr(o->report, '/');

	if (o->topology[0] != '/' && slash &&
	    snprintf(rel, sizeof(rel), "%.*s/%s", (int)(slash - o->report), o->report, o->topology) < (int)sizeof(rel))
		cand[0] = rel;
	cand[1] = o->topology;
	cand[2] = o->path[0] ? o->path : NULL;
	for (unsigned i = 0; i < 3; i++) {
		if (!cand[i] || !file_hash(cand[i], h))
			continue;
		if (!strcmp(h, o->hash)) {
			c->cfg.topology = cand[i];
			return 0;
		}
		if (!found) {
			found = cand[i];
			memcpy(found_hash, h, sizeof(h));
		}
	}
	if (found && c->topology_changed) {
		fprintf(stderr, "canary-emu: warning: --scenario '%s': topology '%s' has content %s, the report's was %s "
			"(--topology-changed: running it)\n", o->report, found, found_hash, o->hash);
		c->cfg.topology = found;
		return 0;
	}
	if (found)
		return fail("--scenario", "'%s': topology '%s' has content %s, the report's was %s (it changed since; "
			    "--topology-changed runs it anyway)", o->report, found, found_hash, o->hash);
	const char *copy = o->content ? write_topo_copy(o) : NULL;

	if (copy && file_hash(copy, h) && !strcmp(h, o->hash)) {
		fprintf(stderr, "canary-emu: --scenario '%s': topology '%s' not found; running the report's copy of it\n",
			o->report, o->topology);
		c->cfg.topology = copy;
		return 0;
	}
	return fail("--scenario", "'%s': topology '%s' (content %s) not found%s%s%s and the report has no copy of it",
		    o->report, o->topology, o->hash, cand[0] ? " beside the report" : "", ", here",
		    o->path[0] ? " nor at its path" : "");
}

/* fail - the one-line error about @opt; returns the exit status 2 */
static int fail(const char *opt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const char *opt, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "canary-emu: %s: ", opt);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

/*
 * parse_options - fill @c from the command line. Return -1 to go on, or
 * the exit status: 0 after --help/--version, 2 after a one-line error.
 */
static int parse_options(struct cli *c, int argc, char **argv)
{
	struct option lopt[NOPTS + 1];
	char shorts[2 * NOPTS + 2] = ":";
	size_t nl = 0, ns = 1;
	int o;

	for (size_t i = 0; i < NOPTS; i++) {
		const struct cli_opt *d = &opt_table[i];

		if (!d->name)
			continue;
		lopt[nl++] = (struct option){ d->name, d->arg ? required_argument : no_argument, NULL, 256 + (int)i };
		if (d->short_name)
			shorts[ns++] = d->short_name;
	}
	lopt[nl] = (struct option){ 0 };
	shorts[ns] = 0;
	opterr = 0;
	while ((o = getopt_long(argc, argv, shorts, lopt, NULL)) != -1) {
		const struct cli_opt *d = NULL;
		char name[64];

		if (o >= 256) {
			d = &opt_table[o - 256];
		} else if (o != '?' && o != ':') {
			for (size_t i = 0; i < NOPTS && !d; i++)
				if (opt_table[i].name && opt_table[i].short_name == o)
					d = &opt_table[i];
		}
		if (d) {
			snprintf(name, sizeof(name), "--%s", d->name);
			/* a report sets every scenario option it holds: one given before it would be lost */
			if (d->parse == o_scenario && c->origin.report)
				return fail(name, "'%s': one --scenario per run", optarg);
			if (d->parse == o_scenario && c->scn_before)
				return fail(name, "'%s' after --%s: give --%s after --scenario to override the report",
					    optarg, c->scn_before, c->scn_before);
			if (!c->origin.report && !c->scn_before && emu_scnfile_known(d->name))
				c->scn_before = d->name;
			const char *why = d->parse(c, optarg);

			if (why && optarg)
				return fail(name, "'%s' %s", optarg, why);
			if (why)
				return fail(name, "%s", why);
			if (c->exit_now)
				return 0;
			continue;
		}
		/* what getopt refused: optopt is the option (>= 256: a long one), 0 for an unknown long one */
		const char *arg = argv[optind - 1];

		if (optopt >= 256 && (size_t)(optopt - 256) < NOPTS) {
			d = &opt_table[optopt - 256];
			snprintf(name, sizeof(name), "--%s", d->name);
			if (o == ':')
				return fail(name, "needs a value (%s; see canary-emu --help)", d->arg);
			return fail(name, "takes no value (see canary-emu --help)");
		}
		if (o == ':')
			return fail(arg, "needs a value (see canary-emu --help)");
		if (optopt && optopt < 256)
			snprintf(name, sizeof(name), "-%c", optopt);
		else
			snprintf(name, sizeof(name), "%s", arg);
		fprintf(stderr, "canary-emu: unknown option '%s' (canary-emu --help lists them)\n", name);
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "canary-emu: unexpected argument '%s' (options start with --)\n", argv[optind]);
		return 2;
	}
	return -1;
}

/* hash_bytes - fold @n bytes at @p into @h. */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = emu_hash64(h ^ b[i]);
	return emu_hash64(h ^ 0x100);
}

#define HASH(h, v) hash_bytes((h), &(v), sizeof(v))

static uint64_t hash_str(uint64_t h, const char *s)
{
	return hash_bytes(h, s ? s : "", s ? strlen(s) : 0);
}

/* hash_fabric - what the topology built: nodes, ports, rates, latencies, MTUs, loss */
static uint64_t hash_fabric(uint64_t h, const struct emu_fabric *fab)
{
	h = HASH(h, fab->nnodes);
	h = HASH(h, fab->nlinks);
	for (uint32_t i = 0; i < fab->nnodes; i++) {
		const struct emu_fab_node *n = &fab->nodes[i];

		h = hash_str(h, n->name);
		h = HASH(h, n->kind);
		h = HASH(h, n->level);
		h = HASH(h, n->nports);
	}
	for (uint32_t i = 0; i < fab->nlinks; i++) {
		const struct emu_fab_link *l = &fab->links[i];

		for (int d = 0; d < 2; d++) {
			h = HASH(h, l->node[d]);
			h = HASH(h, l->port[d]);
			h = HASH(h, l->rate_bps[d]);
			h = HASH(h, l->latency[d]);
			h = HASH(h, l->loss[d]);
		}
		h = HASH(h, l->mtu);
	}
	return h;
}

/*
 * The scenario's fingerprint: the parsed options that shape the emulated
 * run (not those that may differ between ranks: workers, output, the
 * distribution) and the fabric the topology builds, plus the build's
 * record sizes and a hash of its sources. Option spelling and order do not matter; a topology file
 * with the same path but other contents does. Ranks with different
 * fingerprints would not emulate the same run.
 */
static uint64_t fingerprint(const struct cli *c)
{
	const struct emu_scn_cfg *s = &c->cfg;
	uint64_t h = emu_hash64(EMU_DIST_VERSION ^ ((uint64_t)sizeof(struct emu_run_stats) << 16) ^
				((uint64_t)sizeof(struct emu_sw_stats) << 32));

	h = hash_str(h, source_id_p);
	char err[512];
	struct emu_fabric *fab = emu_topo_load(s->topology, err, sizeof(err));

	/* a topology that does not load fails the same way on every rank */
	h = fab ? hash_fabric(h, fab) : hash_str(h, s->topology);
	emu_fabric_destroy(fab);
	h = HASH(h, c->nalgo);
	for (unsigned i = 0; i < c->nalgo; i++) {
		h = HASH(h, c->algo[i].a);
		h = HASH(h, c->algo[i].n);
	}
	h = HASH(h, s->hosts);
	h = HASH(h, s->hosts_pct);
	h = HASH(h, s->size_bytes);
	h = HASH(h, c->runs.size_max);
	h = HASH(h, c->runs.size_factor);
	h = HASH(h, c->runs.seed_max);
	h = HASH(h, s->elements);
	h = HASH(h, s->concurrent);
	h = HASH(h, s->background);
	h = HASH(h, s->bg_pattern);
	h = HASH(h, s->bg_msg);
	h = HASH(h, s->bg_load);
	h = HASH(h, s->bg_volume);
	h = HASH(h, s->router);
	h = HASH(h, s->xbar_arb);
	h = HASH(h, s->xbar_bps);
	h = HASH(h, s->obuf_bytes);
	h = HASH(h, s->adaptive_threshold);
	h = HASH(h, s->commit_bytes);
	h = HASH(h, s->commit_idle);
	h = HASH(h, s->timeout);
	h = HASH(h, s->timer);
	h = HASH(h, s->pktgen_tick);
	h = HASH(h, s->routing);
	h = HASH(h, s->noise);
	h = HASH(h, s->loss);
	h = HASH(h, s->rate_bps);
	h = HASH(h, s->lossy);
	h = HASH(h, s->lossless);
	h = HASH(h, s->priority);
	h = HASH(h, s->nfail);
	for (unsigned i = 0; i < s->nfail; i++) {
		h = HASH(h, s->fail[i].is_node);
		h = hash_str(h, s->fail[i].node);
		h = HASH(h, s->fail[i].port);
		h = HASH(h, s->fail[i].down);
		h = HASH(h, s->fail[i].up);
	}
	h = HASH(h, s->ndrop);
	for (unsigned i = 0; i < s->ndrop; i++) {
		h = hash_str(h, s->drop[i].node);
		h = HASH(h, s->drop[i].port);
		h = HASH(h, s->drop[i].nth);
	}
	h = hash_str(h, s->profile);
	h = HASH(h, s->descriptors);
	h = HASH(h, s->shards);
	h = HASH(h, s->table_per_tenant);
	h = HASH(h, s->seed);
	h = HASH(h, s->clock);
	h = HASH(h, s->dilation);
	h = HASH(h, s->window);
	h = HASH(h, s->retx_timeout);
	h = HASH(h, s->max_failures);
	h = HASH(h, s->sketch);
	h = HASH(h, s->limit);
	h = HASH(h, s->stall);
	h = HASH(h, s->buffer_bytes);
	return h;
}

/* check_dist - the rank options agree with each other; 0 or 2 (said why) */
static int check_dist(const struct cli *c)
{
	if (c->have_rank && !c->ranks)
		return fail("--rank", "needs --ranks P");
	if (c->ranks && !c->have_rank)
		return fail("--ranks", "needs --rank R (or use --processes P)");
	if (c->have_rank && c->processes > 1)
		return fail("--processes", "and --rank are exclusive (--processes starts the ranks itself)");
	if (c->have_rank && c->rank >= c->ranks)
		return fail("--rank", "must be below --ranks");
	if (c->have_rank && c->rank > 0 && !c->dcfg.coordinator)
		return fail("--coordinator", "is needed by ranks other than 0");
	if (c->have_rank && c->rank == 0 && !c->dcfg.coordinator && c->ranks > 1)
		return fail("--coordinator", "is needed by rank 0 too (the endpoint it binds)");
	return 0;
}

static bool distributed(const struct cli *c)
{
	return c->processes > 1 || (c->have_rank && c->ranks > 1);
}

static int parse_algo(const char *s, enum lh_algo *a, unsigned *n)
{
	uint64_t v;

	*n = 1;
	if (!strcmp(s, "canary"))
		*a = LH_ALGO_CANARY;
	else if (!strcmp(s, "ring"))
		*a = LH_ALGO_RING;
	else if (!strcmp(s, "static"))
		*a = LH_ALGO_STATIC;
	else if (!strncmp(s, "static:", 7) && parse_uint(s + 7, 1, 64, &v))
		*a = LH_ALGO_STATIC, *n = (unsigned)v;
	else
		return -EINVAL;
	return 0;
}

static size_t nruns(const struct cli *c);
static uint64_t next_size(const struct cli *c, uint64_t sz);

/*
 * check_sweep - a sweep (sizes, seeds, algorithms) of more than MAX_RUNS
 * runs is refused before its first run unless --force-sweep; sweep_plan()
 * checks the rest. True if refused (said why).
 */
static bool check_sweep(struct cli *c)
{
	size_t n = nruns(c);

	if (n > MAX_RUNS && !c->force_sweep) {
		fprintf(stderr, "canary-emu: --size, --algo, --seeds: the sweep is %zu runs (sizes x algorithms x seeds), "
				"more than %d: split it, or give --force-sweep\n", n, MAX_RUNS);
		return true;
	}
	return false;
}

/* fabric_hops - the most links between two hosts of @fab's fat tree (twice its top switch level), at least 2 */
static unsigned fabric_hops(const struct emu_fabric *fab)
{
	unsigned top = 1;

	for (uint32_t i = 0; i < fab->nnodes; i++)
		top = fab->nodes[i].level > top ? fab->nodes[i].level : top;
	return 2 * top;
}

/*
 * run_hops - about how many frame-hops a run of @r's placement and @size
 * bytes per host takes: the allreduce's frames go @hops links up and back
 * (the ring's as many: 2 (P-1) steps of size/P), in frames of @elements;
 * the background fills its hosts' links at @rate for about the time the
 * allreduce's data takes twice at that rate, in frames of @mtu bytes.
 */
static double run_hops(const struct emu_scn_result *r, uint64_t size, unsigned elements, unsigned hops, double rate,
		       unsigned mtu)
{
	double frames = (double)((size + 4 * elements - 1) / (4 * elements));
	double secs = 2.0 * 8 * (double)size / rate;

	return 2.0 * r->ar_hosts * frames * hops + (double)r->bg_hosts * rate * secs / (8.0 * mtu) * hops;
}

/*
 * sweep_plan - before a sweep's first run (more than one run, one
 * process): each algorithm's largest run is built and placed, not run, so
 * that it fits in memory; then one line on stderr says the sweep's runs,
 * what its largest run and the results it keeps take, and an estimate of
 * its wall time (run_hops() at HOPS_PER_S per worker). Refused: results
 * that do not fit in memory beside the largest run, or an estimate over
 * SWEEP_LONG_S without --force-sweep. 0 or 2 (said why).
 */
static int sweep_plan(struct cli *c)
{
	size_t n = nruns(c);
	uint64_t seeds = c->runs.seed_max - c->runs.seed_min + 1, peak = 0, keep = 0, avail;
	double hops = 0;
	char err[512], sz[32];
	const char *what;
	struct emu_fabric *fab;

	if (n <= 1 || distributed(c))
		return 0;
	fab = emu_topo_load(c->cfg.topology, err, sizeof(err));
	if (!fab)
		return 0;	/* the run says why */
	unsigned H = fabric_hops(fab);
	double rate = (double)c->cfg.rate_bps;
	unsigned mtu = 1500;

	for (uint32_t i = 0; i < fab->nlinks; i++) {
		rate = c->cfg.rate_bps ? rate : fab->links[i].rate_bps[0] > rate ? (double)fab->links[i].rate_bps[0] : rate;
		mtu = fab->links[i].mtu && fab->links[i].mtu < mtu ? fab->links[i].mtu : mtu;
	}
	for (unsigned i = 0; i < c->nalgo; i++) {
		struct emu_scn_result r;
		struct emu_scn_cfg cfg = c->cfg;

		cfg.check_only = true;
		cfg.algo = c->algo[i].a;
		cfg.ntrees = c->algo[i].n;
		cfg.size_bytes = c->runs.size_max;
		int rc = emu_scenario_run(&cfg, &r, err, sizeof(err));

		if (rc) {
			emu_scenario_result_fini(&r);
			emu_fabric_destroy(fab);
			fprintf(stderr, "canary-emu: the sweep's largest run (--size %s, --algo %s): %s\n",
				emu_fmt_size(c->runs.size_max, sz, sizeof(sz)), c->algo[i].name, err);
			return 2;
		}
		peak = r.mem_estimate > peak ? r.mem_estimate : peak;
		for (uint64_t s = c->runs.size_min; s; s = next_size(c, s))
			hops += (double)seeds * run_hops(&r, s, c->cfg.elements, H, rate > 0 ? rate : 1e9, mtu);
		emu_scenario_result_fini(&r);
	}
	/* each result keeps its links' utilization and names, and its allreduces */
	keep = (uint64_t)n * (sizeof(struct emu_scn_result) + 2 * (uint64_t)fab->nlinks * (sizeof(double) +
			      sizeof(struct emu_scn_link)) + (c->cfg.concurrent ? c->cfg.concurrent : 1) * sizeof(struct emu_scn_ar));
	emu_fabric_destroy(fab);
	double secs = hops / (HOPS_PER_S * (c->cfg.workers ? c->cfg.workers : 1));
	char t[32];

	if (secs < 120)
		snprintf(t, sizeof(t), "%.0f s", secs);
	else if (secs < 7200)
		snprintf(t, sizeof(t), "%.0f min", secs / 60);
	else
		snprintf(t, sizeof(t), "%.1f h", secs / 3600);
	fprintf(stderr, "canary-emu: a sweep of %zu runs (sizes x algorithms x seeds): the largest takes about %.1f MiB, "
			"the results kept %.1f MiB; about %s of wall time in all (an estimate: %.3g frame-hops at %.1f M a "
			"second a worker, %u worker%s)\n", n, (double)peak / 1048576, (double)keep / 1048576, t, hops,
		HOPS_PER_S / 1e6, c->cfg.workers ? c->cfg.workers : 1, c->cfg.workers > 1 ? "s" : "");
	avail = c->cfg.mem_available ? c->cfg.mem_available : emu_mem_available(&what);
	if (avail && keep + peak > avail) {
		fprintf(stderr, "canary-emu: --size, --algo, --seeds: the sweep's results (%.0f MiB) and its largest run "
				"(%.0f MiB) do not fit in the %.0f MiB available: split it\n", (double)keep / 1048576,
			(double)peak / 1048576, (double)avail / 1048576);
		return 2;
	}
	if (secs > SWEEP_LONG_S && !c->force_sweep) {
		fprintf(stderr, "canary-emu: --size, --algo, --seeds: the sweep would take about %s: split it, or give "
				"--force-sweep\n", t);
		return 2;
	}
	return 0;
}

/* algo_list - the comma list @s into c->algo[]; 0, or -EINVAL with the reason in @why */
static int algo_list(struct cli *c, const char *s, char *why, size_t len)
{
	char abuf[256], *save = NULL;

	c->nalgo = 0;
	snprintf(abuf, sizeof(abuf), "%s", s);
	for (char *tok = strtok_r(abuf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (c->nalgo == MAX_ALGOS)
			return snprintf(why, len, "'%s' lists too many algorithms (at most 8)", s), -EINVAL;
		if (parse_algo(tok, &c->algo[c->nalgo].a, &c->algo[c->nalgo].n))
			return snprintf(why, len, "'%s' is not canary, ring or static:N (N in 1..64)", tok), -EINVAL;
		for (unsigned i = 0; i < c->nalgo; i++)
			if (c->algo[i].a == c->algo[c->nalgo].a && c->algo[i].n == c->algo[c->nalgo].n)
				return snprintf(why, len, "'%s' lists %s twice (the same run)", s, tok), -EINVAL;
		snprintf(c->algo[c->nalgo].name, sizeof(c->algo[c->nalgo].name), "%s", tok);
		c->nalgo++;
	}
	if (!c->nalgo)
		return snprintf(why, len, "'%s' names no algorithm", s), -EINVAL;
	return 0;
}

/* parse_algos - --algo into c->algo[]; 0 or 2 (said why) */
static int parse_algos(struct cli *c)
{
	char why[512];

	if (algo_list(c, c->algos, why, sizeof(why)))
		return fail("--algo", "%s", why);
	/* before any run: a limit of a later algorithm or size must not wait for the earlier ones */
	c->cfg.size_bytes = c->runs.size_max;
	for (unsigned i = 0; i < c->nalgo; i++) {
		char err[512];

		c->cfg.algo = c->algo[i].a;
		if (emu_scenario_check_blocks(&c->cfg, err, sizeof(err))) {
			fprintf(stderr, "canary-emu: %s\n", err);
			return 2;
		}
	}
	if (check_sweep(c))
		return 2;
	c->cfg.size_bytes = c->runs.size_min;
	if (c->cfg.pcap && (c->nalgo > 1 || c->runs.size_max > c->runs.size_min || c->runs.seed_max > c->runs.seed_min))
		return fail("--pcap", "'%s' needs a single --algo, --size and --seed (one run, one capture)", c->cfg.pcap);
	return 0;
}

/*
 * check_hold - the hosts' hold (--attach-hold, or until --start-at) ends
 * before --time-limit, with room to run: 0 or 2 (said why)
 */
static int check_hold(const struct cli *c)
{
	const struct emu_scn_cfg *cfg = &c->cfg;
	char hold[32], limit[32];
	emu_time_t h = cfg->attach_hold;
	uint64_t now = realtime_ns();

	if (cfg->start_at_ns)
		h = cfg->start_at_ns > now ? (cfg->start_at_ns - now) * EMU_NS : 0;	/* fits: o_start_at */
	if (h < cfg->limit)
		return 0;
	emu_fmt_time(h, hold, sizeof(hold));
	emu_fmt_time(cfg->limit, limit, sizeof(limit));
	return fail(cfg->start_at_ns ? "--start-at" : "--attach-hold",
		    "the hosts would wait %s, not less than --time-limit %s: the run would end before they send", hold,
		    limit);
}

/*
 * check_attach - --attach needs the wall clock at dilation 1, one algorithm,
 * one process; it changes some defaults: links of 100 Mb/s, one worker,
 * a time limit of 10 minutes and a stall watchdog of 10 s (real time),
 * a lag limit of 1 s. 0 or 2 (said why).
 */
static int check_attach(struct cli *c)
{
	struct emu_scn_cfg *cfg = &c->cfg;

	if (!cfg->nattach)
		return cfg->start_at_ns ? fail("--start-at", "needs --attach (it says when real hosts start)") : 0;
	if (cfg->start_at_ns && c->hold_set)
		return fail("--start-at", "and --attach-hold both say when the hosts start: give one");
	if (cfg->clock != EMU_CLOCK_WALL)
		return fail("--attach", "needs --clock wall (real processes keep real time)");
	if (cfg->dilation != 0 && cfg->dilation != 1)
		return fail("--dilation", "'%g' cannot be used with --attach (real hosts run at dilation 1)",
			    cfg->dilation);
	if (c->nalgo > 1)
		return fail("--attach", "needs a single --algo (the real hosts run one allreduce)");
	if (c->runs.size_max > c->runs.size_min || c->runs.seed_max > c->runs.seed_min)
		return fail("--attach", "needs a single --size and --seed (the real hosts run one allreduce)");
	if (distributed(c))
		return fail("--attach", "is not available across processes");
	cfg->dilation = 1;
	if (!c->rate_set)
		cfg->rate_bps = 100000000;
	if (!c->workers_set && !cfg->per_node)
		cfg->workers = 1;
	if (!c->limit_set)
		cfg->limit = EMU_TIME_INF;	/* the real hosts' job decides when it is done */
	if (!c->stall_set)
		cfg->stall = 10 * EMU_S;
	if (!c->lag_set)
		cfg->lag_max_ns = 1000000000ULL;
	return check_hold(c);
}

/*
 * resolve_sketch - --sketch auto as the K the runs will use, so that the
 * report's scenario, the fingerprint and the block-id check name it. A
 * topology that does not load stays auto: the run says why it does not.
 */
static void resolve_sketch(struct emu_scn_cfg *cfg)
{
	char err[512];
	struct emu_fabric *fab;

	if (cfg->sketch != EMU_SCN_SKETCH_AUTO)
		return;
	fab = emu_topo_load(cfg->topology, err, sizeof(err));
	if (fab)
		cfg->sketch = emu_scenario_sketch(cfg, fab);
	emu_fabric_destroy(fab);
}

/* check_options - what no single option can check; 0 or 2 (said why) */
static int check_options(struct cli *c)
{
	int rc = check_dist(c);

	if (rc || (rc = resolve_topology(c)))
		return rc;
	if (distributed(c) && c->cfg.per_node)
		return fail("--workers", "'per-node' is not available across processes");
	if (distributed(c) && c->cfg.pcap)
		return fail("--pcap", "'%s' is not available across processes (capture in a single-process run)",
			    c->cfg.pcap);
	if (c->cfg.series_links && !c->cfg.series)
		return fail("--timeseries-links", "needs --timeseries FILE");
	if (c->cfg.series && (distributed(c) || c->cfg.nattach))
		return fail("--timeseries", "is not available across processes or with --attach");
	if (c->cfg.series && (c->runs.size_max > c->runs.size_min || c->runs.seed_max > c->runs.seed_min))
		return fail("--timeseries", "'%s' needs a single --size and --seed", c->cfg.series);
	if (c->cfg.lossless && c->cfg.lossy)
		return fail("--lossless", "cannot be combined with --lossy (one flow control)");
	if (c->cfg.lossless && !(c->cfg.loss > 0))
		return fail("--lossless", "only applies with --loss P (the fabric is lossless without it)");
	resolve_sketch(&c->cfg);
	if ((rc = parse_algos(c)))
		return rc;
	return check_attach(c);
}

static int keygen(const struct cli *c)
{
	char err[512];

	if (!c->ranks)
		return fail("--curve-keygen", "'%s' needs --ranks P", c->keygen);
	if (emu_dist_keygen(c->keygen, c->ranks, err, sizeof(err))) {
		fprintf(stderr, "canary-emu: %s\n", err);
		return 2;
	}
	printf("wrote %s/rank0.key .. %s/rank%u.key\n", c->keygen, c->keygen, c->ranks - 1);
	return 0;
}

/* --resources: the switch program's report; 0 if it fits the profile, else 2 */
static int resources(struct cli *c)
{
	struct emu_scn_result res;
	char err[512];

	c->cfg.resources_only = true;
	int rc = emu_scenario_run(&c->cfg, &res, err, sizeof(err));

	if (rc == -EINVAL) {
		fprintf(stderr, "canary-emu: %s\n", err);
		return 2;
	}
	/* the reason in one line first, then the table */
	if (!res.need.fits)
		fprintf(stderr, "canary-emu: the switch program does not fit %s: %s\n", res.prof->name, res.need.why);
	emu_tofino_report(stdout, res.prof, &res.need);
	return res.need.fits ? 0 : 2;
}

/* rank 0 of --processes: wait for the children (kill them first if @kill_them). True if one failed. */
static bool reap(const pid_t *children, unsigned n, bool kill_them)
{
	bool failed = false;

	for (unsigned i = 1; i < n; i++) {
		int st;

		if (children[i] <= 0)
			continue;
		if (kill_them)
			kill(children[i], SIGTERM);
		if (waitpid(children[i], &st, 0) == children[i] && !kill_them &&
		    (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
			fprintf(stderr, "canary-emu: rank %u (pid %d) %s %d\n", i, (int)children[i],
				WIFSIGNALED(st) ? "was killed by signal" : "exited with status",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			failed = true;
		}
	}
	return failed;
}

/*
 * fork_ranks - --processes P: fork ranks 1..P-1; they learn rank 0's
 * endpoint through a pipe. In a child, c->rank and the coordinator are set
 * and @children is cleared. Return 0, or 1 if a fork failed (said why).
 */
static int fork_ranks(struct cli *c, pid_t *children)
{
	int pfd[2];

	if (pipe(pfd)) {
		perror("canary-emu: pipe");
		return 1;
	}
	fflush(NULL);
	for (unsigned i = 1; i < c->processes; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("canary-emu: fork");
			for (unsigned k = 1; k < i; k++)
				kill(children[k], SIGTERM);
			return 1;
		}
		if (pid == 0) {
			/* one whole record per read: see emu_dist_join() */
			static char ep[EMU_DIST_EP_RECORD + 1];

			prctl(PR_SET_PDEATHSIG, SIGTERM);
			close(pfd[1]);
			ssize_t n = read(pfd[0], ep, EMU_DIST_EP_RECORD);

			close(pfd[0]);
			if (n != EMU_DIST_EP_RECORD || !ep[0])
				_exit(1);	/* rank 0 is gone */
			ep[EMU_DIST_EP_RECORD] = 0;
			c->rank = i;
			c->dcfg.coordinator = ep;
			memset(children, 0, EMU_DIST_MAX_RANKS * sizeof(*children));
			return 0;
		}
		children[i] = pid;
	}
	close(pfd[0]);
	c->dcfg.children = children;
	c->dcfg.endpoint_fd = pfd[1];
	return 0;
}

/*
 * default_workers - without --workers: the free cores (emu/engine/cores.h),
 * shared out among the local ranks (--processes; counted before they start,
 * so that they do not count one another as busy).
 */
static void default_workers(struct cli *c)
{
	unsigned n;

	if (c->cfg.workers || c->cfg.per_node)
		return;
	n = emu_cores_free();
	c->cfg.workers = c->processes > 1 ? (n / c->processes ? n / c->processes : 1) : n;
}

/*
 * join_ranks - a distributed run: start the local ranks (--processes) and
 * connect to the others. *@dist is this rank's end; return 0, or the exit
 * status (said why).
 */
static int join_ranks(struct cli *c, pid_t *children, struct emu_dist **dist)
{
	unsigned P = c->processes > 1 ? c->processes : c->ranks;
	char err[512];
	bool bad_input;

	if (c->processes > 1 && fork_ranks(c, children))
		return 1;
	c->dcfg.rank = c->rank;
	c->dcfg.nranks = P;
	c->dcfg.workers = c->cfg.workers;
	c->dcfg.fingerprint = fingerprint(c);
	*dist = emu_dist_join(&c->dcfg, err, sizeof(err), &bad_input);
	if (c->dcfg.endpoint_fd >= 0)
		close(c->dcfg.endpoint_fd);
	if (!*dist) {
		fprintf(stderr, "canary-emu: rank %u: %s\n", c->rank, err);
		reap(children, P, true);
		return bad_input ? 2 : 1;
	}
	c->cfg.dist = *dist;
	c->cfg.pin_offset = c->processes > 1;
	if (c->rank != 0)
		c->want_progress = 0;
	return 0;
}

/*
 * Progress on stderr while a run goes: the share of the result the
 * allreduce hosts hold (the ring: of the data they received, both halves
 * counted), the emulated time, and an estimate of the wall time
 * left from how fast that share grew so far. On a terminal one line redrawn
 * in place; else (a log) one line every PROGRESS_LOG_NS of wall time, so a
 * long run shows it is alive. The scenario calls progress() about every
 * 100 ms.
 */
#define PROGRESS_LOG_NS (5 * 1000000000ULL)

struct progress_state {
	const char *algo;
	bool tty;
	uint64_t wall0, last_line;	/* wall ns: start, last line written */
};

static void progress(void *ctx, emu_time_t now, uint64_t done, uint64_t expect)
{
	struct progress_state *p = ctx;
	uint64_t wall = emu_wall_ns();
	double secs = (double)(wall - p->wall0) / 1e9;
	double frac = expect ? (double)done / (double)expect : 0;
	char t[32], eta[32] = "";

	emu_fmt_time(now, t, sizeof(t));
	if (frac > 0.01 && frac < 1)
		snprintf(eta, sizeof(eta), ", about %.0f s left", secs * (1 - frac) / frac);
	if (!p->tty) {
		if (wall - p->last_line < PROGRESS_LOG_NS)
			return;
		p->last_line = wall;
		fprintf(stderr, "canary-emu: %s: %.1f %% done, emulated %s after %.0f s%s\n", p->algo,
			100 * frac, t, secs, eta);
		return;
	}
	unsigned w = 30, fill = (unsigned)(w * frac);

	fprintf(stderr, "\r%-10s [", p->algo);
	for (unsigned i = 0; i < w; i++)
		fputc(i < fill ? '#' : '.', stderr);
	fprintf(stderr, "] %5.1f %%, emulated %s%s   ", 100 * frac, t, eta);
	fflush(stderr);
}

/* A rank other than 0 says what it did; the report is rank 0's. */
static void rank_line(struct emu_dist *d, const struct emu_scn_result *r)
{
	struct emu_dist_stats st;

	emu_dist_stats(d, &st);
	fprintf(stderr, "canary-emu: rank %u/%u: %s: %u workers, %llu events, %llu frame-hops, %.3f s; "
			"ZeroMQ so far: %llu msgs / %.1f MB sent, %llu rejected\n",
		emu_dist_rank(d), emu_dist_nranks(d), r->algo, r->run.workers, (unsigned long long)r->run.events,
		(unsigned long long)r->run.frame_hops, (double)r->run.wall_ns / 1e9, (unsigned long long)st.msgs_sent,
		(double)st.bytes_sent / 1e6, (unsigned long long)(st.rejected + st.auth_rejected));
}

/* next_size - the size of the sweep after @sz, or 0 after the last (sz * F never wraps) */
static uint64_t next_size(const struct cli *c, uint64_t sz)
{
	unsigned f = c->runs.size_factor ? c->runs.size_factor : 2;

	return sz <= c->runs.size_max / f ? sz * f : 0;
}

/* nruns - runs of the command line: sizes x algorithms x seeds */
static size_t nruns(const struct cli *c)
{
	size_t n = 0;

	for (uint64_t sz = c->runs.size_min; sz; sz = next_size(c, sz))
		n++;
	return n * c->nalgo * (size_t)(c->runs.seed_max - c->runs.seed_min + 1);
}

/* held while a finished run is added to the results (see interrupt_main) */
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * run_one - algorithm @ai at the size and seed in c->cfg into @r. Return
 * 0 (the run happened; *@done: it is this process's to report), or the
 * exit status so far (said why).
 */
static int run_one(struct cli *c, struct emu_dist *dist, unsigned ai, struct emu_scn_result *r, bool *done)
{
	bool tty = isatty(2);
	bool show_progress = c->want_progress == 1 || (c->want_progress < 0 && c->out != OUT_JSON);
	struct progress_state prog = { .algo = c->algo[ai].name, .tty = tty, .wall0 = emu_wall_ns() };
	char err[512];
	int status = 0;

	*done = false;
	c->cfg.algo = c->algo[ai].a;
	c->cfg.ntrees = c->algo[ai].n;
	prog.last_line = prog.wall0;
	c->cfg.progress = show_progress ? progress : NULL;
	c->cfg.progress_ctx = &prog;
	const char *series = c->cfg.series;
	char spath[4096];

	if (series && c->nalgo > 1) {
		emu_series_name(series, c->algo[ai].name, spath, sizeof(spath));
		c->cfg.series = spath;
	}
	int rc = emu_scenario_run(&c->cfg, r, err, sizeof(err));

	c->cfg.series = series;

	if (show_progress && tty)
		fputs("\r\033[K", stderr);
	if (rc == -EPIPE) {
		fprintf(stderr, "canary-emu: rank %u: %s\n", c->rank, err);
		return 1;
	}
	if (dist && r->partial) {
		rank_line(dist, r);
		emu_scenario_result_fini(r);
		return 0;
	}
	if (rc) {
		/* every rank finds the same error: the local ranks leave saying it to rank 0 */
		if (!(c->processes > 1 && c->rank != 0))
			fprintf(stderr, "canary-emu: %s%s\n", err,
				rc == -ENOSPC ? " (canary-emu --resources with the same options shows the table)" : "");
		return 2;
	}
	for (unsigned i = 0; i < r->nattached; i++)
		if (r->attached[i].st.too_fast)
			fprintf(stderr, "canary-emu: warning: %s (%s) sent faster than its link (%.0f Mb/s) carries: "
					"%.2f ms ahead of it at most, %llu of its %llu frames less than half their wire time "
					"after the previous one: give the real host that rate (canary-allreduce --rate, "
					"CANARY_MPI_RATE)\n", r->attached[i].node, r->attached[i].ifname,
				(double)r->rate_min_bps / 1e6, (double)r->attached[i].st.in_ahead_max / 1e6,
				(unsigned long long)r->attached[i].st.in_fast,
				(unsigned long long)r->attached[i].st.in_frames);
	if (r->write_err[0]) {
		fprintf(stderr, "canary-emu: %s\n", r->write_err);
		status = 1;
	}
	if (!r->exact) {
		status = 1;
		fprintf(stderr, "canary-emu: %s: %s\n", r->algo, r->stuck[0] ? r->stuck : "a result differs from the exact sum");
	}
	*done = true;
	return status ? -status : 0;
}

/*
 * run_all - one run per size, algorithm and seed into @res (*@nres of them
 * finished); the text report's rows as they come, one per size and
 * algorithm (over its seeds). Return the exit status so far.
 */
static int run_all(struct cli *c, struct emu_dist *dist, struct report *rep, struct emu_scn_result *res,
		   unsigned *nres)
{
	int status = 0;
	unsigned run_id = c->cfg.run_id, nrun = 0;

	for (uint64_t sz = c->runs.size_min; sz; sz = next_size(c, sz))
		for (unsigned i = 0; i < c->nalgo; i++) {
			unsigned first = *nres;

			/* counted, not compared: seed_max may be UINT64_MAX, where seed++ wraps to 0 */
			for (uint64_t k = 0; k <= c->runs.seed_max - c->runs.seed_min; k++) {
				bool done;

				c->cfg.size_bytes = sz;
				c->cfg.seed = c->runs.seed_min + k;
				/* the next run's frames differ from this one's: a frame left over is dropped */
				c->cfg.run_id = (run_id + nrun++) % EMU_CANARY_RUNS;
				int rc = run_one(c, dist, i, &res[*nres], &done);

				if (rc > 0)
					return rc;
				if (rc < 0)
					status = -rc;
				pthread_mutex_lock(&done_lock);
				*nres += done;
				pthread_mutex_unlock(&done_lock);
			}
			if (c->out == OUT_TEXT && *nres > first) {
				if (first == 0)
					emu_report_header(rep, &res[0]);
				emu_report_text_run(rep, &res[first], *nres - first);
			}
		}
	return status;
}

/*
 * Interrupted (SIGINT, SIGTERM) with --json or --csv: the report of the runs
 * that finished, still valid JSON or CSV (text mode prints each row as it
 * comes). The signals are blocked in every thread but one that waits for them;
 * done_lock keeps it from reading the results while a run is being added.
 */
struct interrupt_ctx {
	const struct cli *c;
	struct report *rep;
	struct emu_scn_result *res;
	const unsigned *nres;
	sigset_t set;
};

static void report(const struct cli *c, struct report *rep, struct emu_scn_result *res, unsigned nres);

static void *interrupt_main(void *arg)
{
	struct interrupt_ctx *x = arg;
	int sig;

	if (sigwait(&x->set, &sig))
		return NULL;
	pthread_mutex_lock(&done_lock);
	/* JSON keeps the shape of every report: the runs as a list, empty if none finished */
	if (*x->nres || x->c->out == OUT_CSV)
		report(x->c, x->rep, x->res, *x->nres);
	else if (x->c->out == OUT_JSON)
		fputs("{\n  \"runs\": [\n  ]\n}\n", stdout);
	fflush(stdout);
	fprintf(stderr, "canary-emu: interrupted: the report has the %u run(s) that finished\n", *x->nres);
	_exit(128 + sig);
}

/* catch_interrupt - with --json or --csv, SIGINT or SIGTERM prints what finished (call before any thread starts) */
static void catch_interrupt(struct interrupt_ctx *x)
{
	pthread_t t;

	if (x->c->out == OUT_TEXT || x->c->rank != 0)	/* the report is rank 0's */
		return;
	sigemptyset(&x->set);
	sigaddset(&x->set, SIGINT);
	sigaddset(&x->set, SIGTERM);
	if (pthread_sigmask(SIG_BLOCK, &x->set, NULL) || pthread_create(&t, NULL, interrupt_main, x)) {
		pthread_sigmask(SIG_UNBLOCK, &x->set, NULL);
		return;
	}
	pthread_detach(t);
}

/* report - what was computed, even if a later run failed */
static void report(const struct cli *c, struct report *rep, struct emu_scn_result *res, unsigned nres)
{
	if (c->out == OUT_TEXT && nres)
		emu_report_text_end(rep, res, nres);
	else if (c->out == OUT_JSON && nres)
		emu_report_json(rep, res, nres);
	else if (c->out == OUT_CSV)
		emu_report_csv(rep, res, nres);
}

/*
 * flush_stdout - what went to stdout reached its file? If not, say so
 * (naming @what and the errno: the one of the flush, else @werrno, the
 * first error seen while writing) and return true.
 */
static bool flush_stdout(const char *what, int werrno)
{
	errno = 0;
	if (!fflush(stdout) && !ferror(stdout))
		return false;
	fprintf(stderr, "canary-emu: cannot write %s to standard output: %s\n", what,
		errno ? strerror(errno) : werrno ? strerror(werrno) : "write error");
	return true;
}

/* flushed - @status, or 1 if @what (on standard output) did not reach it (a full disk) */
static int flushed(int status, const char *what)
{
	return flush_stdout(what, 0) && !status ? 1 : status;
}

int main(int argc, char **argv)
{
	static struct cli c = {
		.algos = "ring,static:1,static:4,canary", .want_progress = -1, .processes = 1,
		.dcfg = { .endpoint_fd = -1, .timeout_ms = 5000 },
	};
	struct emu_scn_result *res;
	pid_t children[EMU_DIST_MAX_RANKS] = { 0 };
	struct emu_dist *dist = NULL;
	unsigned nres = 0;
	int status;

	/* out of memory in libhost too: a message and exit status 2, not an abort */
	lh_set_out_of_memory(emu_out_of_memory);
	emu_scenario_defaults(&c.cfg);
	c.runs = (struct scnfile_runs){ .size_min = c.cfg.size_bytes, .size_max = c.cfg.size_bytes,
				       .seed_min = c.cfg.seed, .seed_max = c.cfg.seed };
	if ((status = parse_options(&c, argc, argv)) >= 0)
		return status == 0 && flush_stdout("--help or --version", 0) ? 1 : status;
	if (c.keygen)
		return flushed(keygen(&c), "the output");
	if ((status = check_options(&c)))
		return status;
	if (c.resources)
		return flushed(resources(&c), "the resource report");
	default_workers(&c);
	if ((status = sweep_plan(&c)))
		return status;
	if (distributed(&c) && (status = join_ranks(&c, children, &dist)))
		return status;

	struct scnfile scn;

	c.runs.algos = c.algos;
	emu_scnfile_describe(&scn, &c.cfg, &c.runs);

	struct report_topo topo;

	if (emu_report_topo_init(&topo, c.cfg.topology))
		topo.file = false;	/* unreadable: the run says why */
	struct report rep = { .out = stdout, .cfg = &c.cfg, .scn = &scn, .runs = &c.runs, .version = CANARY_VERSION,
			      .source = CANARY_SOURCE_ID, .topo = &topo };

	res = emu_xcalloc(nruns(&c), sizeof(*res));
	static struct interrupt_ctx intr;

	intr = (struct interrupt_ctx){ .c = &c, .rep = &rep, .res = res, .nres = &nres };
	catch_interrupt(&intr);
	status = run_all(&c, dist, &rep, res, &nres);
	pthread_mutex_lock(&done_lock);		/* held to the end: an interrupt now waits for this report */
	report(&c, &rep, res, nres);
	for (unsigned i = 0; i < nres; i++)
		emu_scenario_result_fini(&res[i]);
	free(res);
	emu_scnfile_fini(&scn);
	emu_report_topo_fini(&topo);
	/* a report that did not reach its file is a failure */
	if (flush_stdout("the report", rep.werrno))
		status = status ? status : 1;
	if (dist) {
		if (status == 2 || (status && c.rank == 0 && !nres))
			emu_dist_abort(dist, "rank stopped on an error");
		if (c.rank == 0 && reap(children, c.processes, status != 0) && !status)
			status = 1;
		emu_dist_close(dist);
	}
	return status;
}
