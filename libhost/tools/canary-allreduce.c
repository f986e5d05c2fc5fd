// SPDX-License-Identifier: MIT
/*
 * DOC: canary-allreduce.c - one host of an allreduce on a real Linux
 * interface: libcanaryhost over AF_PACKET (libhost/afpacket.h).
 *
 * The frames are the emulator's (libhost/wire.h), so the same program
 * talks to the switches of an emulated fabric (canary-emu --attach), to a
 * Tofino running hw/canary.p4, or, for the ring algorithm, straight to the
 * other hosts over any Ethernet. One process per host.
 *
 * The transport (struct lh_transport) is a loop on one thread:
 *   now()      CLOCK_MONOTONIC since the start, in picoseconds
 *   timers     a binary heap on (time, arming order)
 *   sending    a copy into the AF_PACKET transmit ring; the NIC counts as
 *              busy for the frame's wire time at --rate (or the NIC's
 *              speed), so libhost injects at line rate and no faster
 *   receiving  the receive ring, drained every turn of the loop
 * Between events the loop sleeps in ppoll() on the socket until the next
 * deadline (with a timer slack of 1 us): a host does not hold a core while
 * it waits, which matters when several share a machine with an emulator
 * (at 1 Gb/s a host that spun within 20 us of its deadlines spun all the
 * time it sent). --busy-poll spins instead, the receive ring polled every
 * turn: the lowest latency, a core held throughout.
 *
 * Inputs follow canary-emu's scheme (emu/scenario.h): host r of tenant t
 * holds in(r, i) = a_t[r] + b_t(i) + c_t[(r + i) mod 65536] with a, c
 * drawn from --seed and the tenant, so an allreduce with emulated hosts
 * adds up to the same sum, and --verify checks every element of the result
 * against the exact expected sum.
 *
 * Exit status: 0 when the allreduce finished (and with --verify, exactly);
 * 1 when it did not finish by --time-limit or a result was wrong; 2 for
 * bad input (one line naming the option).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#include "libhost/afpacket.h"
#include "libhost/canary_host.h"
#include "libhost/lh_rng.h"
#include "libhost/lh_units.h"
#include "libhost/lh_util.h"
#include "libhost/tools/peers_file.h"
#include "libhost/wire.h"

#ifndef CANARY_VERSION
#define CANARY_VERSION "unknown"
#endif

#define CWIN 65536		/* the emulator's c table (scenario.c) */
#define WIRE_EXTRA 24		/* preamble 8, FCS 4, inter-frame gap 12 */
#define HOST_IP_BASE 0x0a000001u	/* the emulator's host addresses: 10.0.0.1 + index */

struct opts {
	const char *ifname;
	unsigned rank, hosts;
	bool have_rank, have_hosts;
	enum lh_algo algo;
	unsigned trees;
	uint64_t size;
	unsigned elements;
	unsigned tenant;
	int run_id;		/* -1: the peer table's '# run' line, else 0 */
	uint64_t seed;
	bool verify, json, busy_poll;
	uint64_t rate;
	const char *peers_file;
	lh_time_t limit, linger, rtt, switch_timeout, retx_timeout, start_delay;
	uint64_t start_at;	/* CLOCK_REALTIME ns to start sending at (0: --start-delay) */
	unsigned window, max_failures, slots;
	unsigned sketch;	/* Canary: missing-set sketch elements (0: the paper's recovery) */
	bool exit_now;
};

/* ---- inputs: canary-emu's scheme ---- */

struct inputs {
	uint64_t seed;
	unsigned P, rank;
	int32_t *a, *c;
	int64_t *cpre;
	uint32_t asum;
};

static int32_t small(uint64_t h)
{
	return (int32_t)(h >> 43) - (1 << 20);
}

static int32_t in_b(const struct inputs *in, size_t i)
{
	return small(lh_hash64(in->seed ^ (0xb5ULL << 56) ^ i));
}

static void inputs_init(struct inputs *in, uint64_t seed, unsigned tenant, unsigned P, unsigned rank)
{
	struct lh_rng rng;

	in->seed = lh_hash64(seed * 0x9e3779b97f4a7c15ULL + tenant + 1);
	in->P = P;
	in->rank = rank;
	lh_rng_init(&rng, in->seed, 7);
	in->a = lh_xmalloc(P * sizeof(int32_t));
	in->c = lh_xmalloc(CWIN * sizeof(int32_t));
	in->cpre = lh_xmalloc((2 * CWIN + 1) * sizeof(int64_t));
	in->asum = 0;
	for (unsigned r = 0; r < P; r++) {
		in->a[r] = small(lh_rng_next(&rng));
		in->asum += (uint32_t)in->a[r];
	}
	for (unsigned k = 0; k < CWIN; k++)
		in->c[k] = small(lh_rng_next(&rng));
	in->cpre[0] = 0;
	for (unsigned k = 0; k < 2 * CWIN; k++)
		in->cpre[k + 1] = in->cpre[k] + in->c[k & (CWIN - 1)];
}

static void inputs_fini(struct inputs *in)
{
	free(in->a);
	free(in->c);
	free(in->cpre);
}

static int32_t input_of(const struct inputs *in, size_t i)
{
	return (int32_t)((uint32_t)in->a[in->rank] + (uint32_t)in_b(in, i) +
			 (uint32_t)in->c[(in->rank + i) & (CWIN - 1)]);
}

static int32_t expected(const struct inputs *in, size_t i)
{
	size_t lo = i & (CWIN - 1);
	int64_t w = in->P <= CWIN ? in->cpre[lo + in->P] - in->cpre[lo] : 0;

	return (int32_t)(in->asum + (uint32_t)in->P * (uint32_t)in_b(in, i) + (uint32_t)w);
}

/* ---- the transport ---- */

struct nic {
	struct lh_afp *afp;
	struct lh_host *host;
	struct lh_req *req;
	uint64_t t0_ns;
	uint64_t rate;
	lh_time_t busy_until;
	lh_time_t hold_until;	/* nothing is sent before */
	struct lh_theap tm;	/* the library's timers */
	void **freebuf;
	size_t nfree, capfree;
	uint64_t rng;
	/* results */
	struct inputs in;
	bool verify;
	uint64_t delivered, mismatches;
	uint64_t rx_other;	/* frames neither Canary nor IPv4: not ours */
	uint64_t tx_dropped;	/* the transmit ring was full */
	lh_time_t last_rx;	/* the latest Canary or IPv4 frame */
	bool finished;
	uint64_t turns, sleeps;	/* turns of the loop, ppoll() calls */
	/* every frame buffer ever allocated: libhost may hold some at the end */
	void **bufs;
	size_t nbufs, capbufs;
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static lh_time_t nic_now(const struct nic *n)
{
	return (clock_ns(CLOCK_MONOTONIC) - n->t0_ns) * LH_NS;
}

static uint8_t *t_frame_get(void *ctx, void **handle)
{
	struct nic *n = ctx;
	void *b;

	if (n->nfree) {
		b = n->freebuf[--n->nfree];
	} else {
		b = lh_xmalloc(LH_FRAME_MAX);
		if (n->nbufs == n->capbufs) {
			n->capbufs = n->capbufs ? 2 * n->capbufs : 64;
			n->bufs = lh_xrealloc(n->bufs, n->capbufs * sizeof(*n->bufs));
		}
		n->bufs[n->nbufs++] = b;
	}
	*handle = b;
	return b;
}

static void buf_put(struct nic *n, void *b)
{
	if (n->nfree == n->capfree) {
		n->capfree = n->capfree ? 2 * n->capfree : 64;
		n->freebuf = lh_xrealloc(n->freebuf, n->capfree * sizeof(*n->freebuf));
	}
	n->freebuf[n->nfree++] = b;
}

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	struct nic *n = ctx;
	lh_time_t now = nic_now(n), start = n->busy_until > now ? n->busy_until : now;

	if (lh_afp_send(n->afp, handle, len))
		n->tx_dropped++;	/* lost as on a congested link: the protocols recover */
	n->busy_until = start + (lh_time_t)(len + WIRE_EXTRA) * 8 * 1000000000000ULL / n->rate;
	buf_put(n, handle);
}

static lh_time_t t_now(void *ctx)
{
	return nic_now(ctx);
}

static void t_timer(void *ctx, lh_time_t at, uint64_t cookie)
{
	lh_theap_push(&((struct nic *)ctx)->tm, at, cookie);
}

static bool t_tx_busy(void *ctx)
{
	struct nic *n = ctx;
	lh_time_t now = nic_now(n);

	return now < n->hold_until || n->busy_until > now;
}

static uint64_t t_random(void *ctx)
{
	struct nic *n = ctx;

	n->rng ^= n->rng << 13;
	n->rng ^= n->rng >> 7;
	n->rng ^= n->rng << 17;
	return n->rng;
}

static void t_done(void *ctx, struct lh_req *req)
{
	(void)req;
	((struct nic *)ctx)->finished = true;
}

static const struct lh_transport_ops afp_ops = {
	.frame_get = t_frame_get,
	.frame_send = t_frame_send,
	.now = t_now,
	.timer = t_timer,
	.tx_busy = t_tx_busy,
	.random = t_random,
	.done = t_done,
};

static void on_frame(void *arg, const uint8_t *f, uint32_t len)
{
	struct nic *n = arg;
	uint16_t type = lh_wire_ethertype(f, len);

	if (type != EMU_ETHERTYPE_CANARY && type != EMU_ETHERTYPE_IPV4) {
		n->rx_other++;
		return;
	}
	n->last_rx = nic_now(n);
	lh_host_rx(n->host, f, len);
}

static void in_block(void *arg, size_t off, int32_t *out, size_t cnt)
{
	const struct nic *n = arg;

	for (size_t k = 0; k < cnt; k++)
		out[k] = input_of(&n->in, off + k);
}

static void on_block(void *arg, size_t off, const int32_t *d, size_t cnt)
{
	struct nic *n = arg;

	n->delivered += cnt;
	if (n->verify)
		for (size_t k = 0; k < cnt; k++)
			n->mismatches += d[k] != expected(&n->in, off + k);
}

/* ---- options ---- */

struct opt_row {
	const char *name, *arg, *def, *help;
	const char *(*parse)(struct opts *o, const char *a);
};

static bool parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	return !lh_parse_u64(s, v) && *v >= lo && *v <= hi;
}

#define UINT_OPT(fn, field, lo, hi, why)                               \
	static const char *fn(struct opts *o, const char *a)          \
	{                                                              \
		uint64_t v;                                            \
		if (!parse_uint(a, lo, hi, &v))                        \
			return why;                                    \
		o->field = (unsigned)v;                                \
		return NULL;                                           \
	}

#define TIME_OPT(fn, field)                                                    \
	static const char *fn(struct opts *o, const char *a)                  \
	{                                                                      \
		return lh_parse_time(a, &o->field) ? "is not a time with a unit (e.g. 5ms)" : NULL; \
	}

static const char *o_interface(struct opts *o, const char *a)
{
	o->ifname = a;
	return NULL;
}

static const char *o_rank(struct opts *o, const char *a)
{
	uint64_t v;

	if (!parse_uint(a, 0, 65534, &v))
		return "is not a rank in 0..65534";
	o->rank = (unsigned)v;
	o->have_rank = true;
	return NULL;
}

static const char *o_hosts(struct opts *o, const char *a)
{
	uint64_t v;

	if (!parse_uint(a, 2, 65535, &v))
		return "is not a number of hosts in 2..65535";
	o->hosts = (unsigned)v;
	o->have_hosts = true;
	return NULL;
}

static const char *o_algo(struct opts *o, const char *a)
{
	uint64_t v;

	o->trees = 1;
	if (!strcmp(a, "canary"))
		o->algo = LH_ALGO_CANARY;
	else if (!strcmp(a, "ring"))
		o->algo = LH_ALGO_RING;
	else if (!strcmp(a, "static"))
		o->algo = LH_ALGO_STATIC;
	else if (!strncmp(a, "static:", 7) && parse_uint(a + 7, 1, 64, &v))
		o->algo = LH_ALGO_STATIC, o->trees = (unsigned)v;
	else
		return "is not canary, ring or static:N (N in 1..64)";
	return NULL;
}

static const char *o_size(struct opts *o, const char *a)
{
	if (lh_parse_size(a, &o->size) || o->size < 4 || o->size % 4 || o->size > (1ULL << 34))
		return "is not a size in bytes, a positive multiple of 4 up to 16GiB (e.g. 64KiB)";
	return NULL;
}

UINT_OPT(o_elements, elements, 1, EMU_CANARY_MAX_ELEMENTS, "is not in 1..256")
UINT_OPT(o_tenant, tenant, 0, 255, "is not a tenant in 0..255")
static const char *o_run_id(struct opts *o, const char *a)
{
	uint64_t v;

	if (!parse_uint(a, 0, EMU_CANARY_RUNS - 1, &v))
		return "is not a run id in 0..3";
	o->run_id = (int)v;
	return NULL;
}

UINT_OPT(o_window, window, 1, 1u << 20, "is not a number of blocks in 1..1048576")
UINT_OPT(o_max_failures, max_failures, 0, 1000, "is not in 0..1000")

UINT_OPT(o_sketch, sketch, 0, LH_SKETCH_MAX, "is not in 0..16")
TIME_OPT(o_limit, limit)
TIME_OPT(o_linger, linger)
TIME_OPT(o_rtt, rtt)
TIME_OPT(o_switch_timeout, switch_timeout)
TIME_OPT(o_retx_timeout, retx_timeout)
TIME_OPT(o_start_delay, start_delay)

static const char *o_start_at(struct opts *o, const char *a)
{
	if (lh_parse_epoch(a, &o->start_at) || !o->start_at)
		return "is not an instant in seconds since the Unix epoch (e.g. $(($(date +%s) + 2)))";
	return NULL;
}

static const char *o_slots(struct opts *o, const char *a)
{
	uint64_t v;

	if (!parse_uint(a, 16, 65536, &v) || (v & (v - 1)))
		return "is not a power of two in 16..65536";
	o->slots = (unsigned)v;
	return NULL;
}

static const char *o_seed(struct opts *o, const char *a)
{
	return lh_parse_u64(a, &o->seed) ? "is not a non-negative integer" : NULL;
}

static const char *o_rate(struct opts *o, const char *a)
{
	if (lh_parse_rate(a, &o->rate))
		return "is not a rate with a unit in " LH_RATE_RANGE " (e.g. 100Mbps, 10G)";
	return NULL;
}

static const char *o_peers(struct opts *o, const char *a)
{
	o->peers_file = a;
	return NULL;
}

static const char *o_busy_poll(struct opts *o, const char *a)
{
	(void)a;
	o->busy_poll = true;
	return NULL;
}

static const char *o_verify(struct opts *o, const char *a)
{
	(void)a;
	o->verify = true;
	return NULL;
}

static const char *o_json(struct opts *o, const char *a)
{
	(void)a;
	o->json = true;
	return NULL;
}

static void usage(FILE *f);

static const char *o_help(struct opts *o, const char *a)
{
	(void)a;
	usage(stdout);
	o->exit_now = true;
	return NULL;
}

static const char *o_version(struct opts *o, const char *a)
{
	(void)a;
	printf("canary-allreduce %s\n", CANARY_VERSION);
	o->exit_now = true;
	return NULL;
}

static const struct opt_row rows[] = {
	{ "interface", "IF", NULL, "the network interface to send and receive on (required)", o_interface },
	{ "rank", "R", NULL, "this host's rank, 0..HOSTS-1 (required)", o_rank },
	{ "hosts", "N", NULL, "hosts in the allreduce (required)", o_hosts },
	{ "algo", "NAME", "canary", "canary | static:N | ring", o_algo },
	{ "size", "BYTES", "64KiB", "data per host, suffixes KiB MiB GiB", o_size },
	{ "elements", "N", "256", "int32 elements per packet, 1..256", o_elements },
	{ "tenant", "T", "0", "tenant (allreduce id), 0..255; static trees: tree ids T x N ..", o_tenant },
	{ "run-id", "N", "the peer table's '# run' line, else 0",
	  "the run id (0..3) the frames carry, canary-emu's (--run-id): a frame of another run is dropped and counted",
	  o_run_id },
	{ "seed", "N", "1", "inputs, as canary-emu --seed", o_seed },
	{ "peers", "FILE", "10.0.0.1+rank, 02:00:00:00:HI:LO",
	  "lines RANK IPV4 MAC: the hosts' addresses (default: canary-emu's for host index = rank)", o_peers },
	{ "rate", "RATE", "the interface's speed", "line rate to pace the sends at (e.g. 100Mbps)", o_rate },
	{ "start-delay", "T", "0", "open the interface, then wait T before sending (receive meanwhile)",
	  o_start_delay },
	{ "start-at", "T", NULL,
	  "send from wall-clock instant T on, seconds since the Unix epoch (canary-emu --start-at T): "
	  "instead of --start-delay", o_start_at },
	{ "window", "N", "bandwidth x delay", "blocks in flight", o_window },
	{ "rtt", "T", "100us + 8 frame times", "base round-trip estimate", o_rtt },
	{ "switch-timeout", "T", "1us", "Canary: the switches' timeout, for the round-trip estimate",
	  o_switch_timeout },
	{ "retx-timeout", "T", "2 x RTT", "retransmission timeout", o_retx_timeout },
	{ "max-failures", "K", "3", "re-issues of a block before host-based fallback", o_max_failures },
	{ "sketch", "K", "0",
	  "Canary: the last K (0..16) of each packet's elements name up to K missing hosts, whose data the leader "
	  "asks for directly; 0: the paper's recovery; every rank must use the same K", o_sketch },
	{ "time-limit", "T", "60s", "give up after T (exit 1)", o_limit },
	{ "linger", "T", "500ms", "after finishing, keep answering the others until they were silent for T",
	  o_linger },
	{ "ring-slots", "N", "512", "slots of each AF_PACKET ring", o_slots },
	{ "busy-poll", NULL, NULL, "spin between events, polling the receive ring (default: sleep in ppoll())",
	  o_busy_poll },
	{ "verify", NULL, NULL, "check every element of the result against the exact sum", o_verify },
	{ "json", NULL, NULL, "the report as one JSON object on stdout", o_json },
	{ "help", NULL, NULL, "this list, then exit", o_help },
	{ "version", NULL, NULL, "the version, then exit", o_version },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

static void usage(FILE *f)
{
	fputs("usage: canary-allreduce --interface IF --rank R --hosts N [options]\n"
	      "One host of an int32 sum allreduce over a real network interface (AF_PACKET);\n"
	      "the manual page canary-allreduce(1) has the details.\n\n", f);
	for (size_t i = 0; i < NROWS; i++) {
		char left[64];

		snprintf(left, sizeof(left), "  --%s%s%s", rows[i].name, rows[i].arg ? " " : "",
			 rows[i].arg ? rows[i].arg : "");
		fprintf(f, "%-24s%s", left, rows[i].help);
		if (rows[i].def)
			fprintf(f, " (default: %s)", rows[i].def);
		fputc('\n', f);
	}
}

static int fail(const char *opt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const char *opt, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "canary-allreduce: %s: ", opt);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

/* parse_options - -1 to go on, else the exit status (0 after --help, 2 after an error) */
static int parse_options(struct opts *o, int argc, char **argv)
{
	struct option lo[NROWS + 1];
	int c;

	for (size_t i = 0; i < NROWS; i++)
		lo[i] = (struct option){ rows[i].name, rows[i].arg ? required_argument : no_argument, NULL, 256 + (int)i };
	lo[NROWS] = (struct option){ 0 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		for (size_t i = 0; c == 'h' && i < NROWS; i++)
			if (!strcmp(rows[i].name, "help"))
				c = 256 + (int)i;	/* -h is --help, as for canary-emu */
		if (c >= 256) {
			const struct opt_row *r = &rows[c - 256];
			const char *why = r->parse(o, optarg);
			char name[64];

			snprintf(name, sizeof(name), "--%s", r->name);
			if (why)
				return optarg ? fail(name, "'%s' %s", optarg, why) : fail(name, "%s", why);
			if (o->exit_now)
				return 0;
			continue;
		}
		if (c == ':')
			return fail(argv[optind - 1], "needs a value");
		return fail(argv[optind - 1], "unknown option (see --help)");
	}
	if (optind < argc)
		return fail(argv[optind], "unexpected argument (options only; see --help)");
	if (!o->ifname)
		return fail("--interface", "is required");
	if (!o->have_hosts)
		return fail("--hosts", "is required");
	if (!o->have_rank)
		return fail("--rank", "is required");
	if (o->rank >= o->hosts)
		return fail("--rank", "%u is not below --hosts %u", o->rank, o->hosts);
	if (o->algo != LH_ALGO_CANARY)
		o->sketch = 0;
	if (o->sketch && o->sketch >= o->elements)
		return fail("--sketch", "%u is not below --elements (%u)", o->sketch, o->elements);
	unsigned data = o->elements - o->sketch;
	uint64_t count = o->size / 4, blocks = (count + data - 1) / data;

	if (o->algo != LH_ALGO_RING && blocks * (o->max_failures + 2) > LH_BLOCK_IDS)
		return fail("--size", "%" PRIu64 " blocks of %u elements x (max-failures + 2) exceed the %u block ids",
			    blocks, data, LH_BLOCK_IDS);
	return -1;
}

/* read_peers - the --peers file (libhost/tools/peers_file.h); 0 or 2 (said why) */
static int read_peers(const char *path, struct lh_peer *p, unsigned n)
{
	char err[512];

	return lh_peers_file_read(path, p, n, err, sizeof(err)) ? fail("--peers", "%s", err) : 0;
}

/* ---- the loop ---- */

static volatile sig_atomic_t interrupted;

#define LH_TIMERS_PER_TURN 4096

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* run - until done and lingered, the time limit, or a signal; true if the allreduce finished */
static bool run(struct nic *n, const struct opts *o, lh_time_t *t_done)
{
	int fd = lh_afp_fd(n->afp);
	lh_time_t limit = n->hold_until + o->limit, linger_until = 0;

	for (;;) {
		lh_time_t now = nic_now(n);

		if (interrupted || now >= limit)
			break;
		/* done: stay while the others still talk to this host (late barrier
		 * frames, retransmission requests), until --linger of silence */
		if (n->finished && !linger_until)
			*t_done = now;
		if (n->finished)
			linger_until = (n->last_rx > *t_done ? n->last_rx : *t_done) + o->linger;
		if (linger_until && now >= linger_until)
			break;
		lh_afp_rx(n->afp, on_frame, n, 256);
		/*
		 * The timers due by now, at most LH_TIMERS_PER_TURN of them:
		 * one that arms another due before this loop ends (a timeout
		 * shorter than the time a turn takes) must not keep the loop
		 * from the receive ring, the signals and --time-limit.
		 */
		lh_time_t due = nic_now(n);

		for (unsigned k = 0; k < LH_TIMERS_PER_TURN && n->tm.n && n->tm.v[0].at <= due && !interrupted; k++) {
			struct lh_tmr t = lh_theap_pop(&n->tm);

			lh_host_timer(n->host, t.cookie);
		}
		if (!t_tx_busy(n))
			lh_host_tx_ready(n->host);
		lh_afp_flush(n->afp);
		/* the next deadline: a timer, the NIC idle again, the end of the hold */
		now = nic_now(n);
		lh_time_t wake = limit;

		if (n->tm.n && n->tm.v[0].at < wake)
			wake = n->tm.v[0].at;
		if (n->busy_until > now && n->busy_until < wake)
			wake = n->busy_until;
		if (n->hold_until > now && n->hold_until < wake)
			wake = n->hold_until;
		if (linger_until && linger_until < wake)
			wake = linger_until;
		n->turns++;
		if (wake <= now || o->busy_poll)
			continue;	/* spin: the receive ring is polled every turn */
		uint64_t gap_ns = (wake - now) / LH_NS;

		if (!gap_ns)
			continue;
		n->sleeps++;
		if (gap_ns > 100000000)
			gap_ns = 100000000;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct timespec ts = { .tv_sec = (time_t)(gap_ns / 1000000000), .tv_nsec = (long)(gap_ns % 1000000000) };

		(void)ppoll(&pfd, 1, &ts, NULL);
	}
	return n->finished;
}

static void report(const struct opts *o, struct nic *n, bool finished, lh_time_t t_done)
{
	const struct lh_ar_stats *st = lh_req_stats(n->req);
	const struct lh_afp_stats *as = lh_afp_stats(n->afp);
	uint64_t count = o->size / 4;
	lh_time_t start = n->hold_until, end = st->data_done ? st->data_done : t_done;
	double runtime_ns = finished && end > start ? (double)(end - start) / LH_NS : 0;
	double goodput = runtime_ns > 0 ? (double)o->size * 8 / runtime_ns : 0;
	bool exact = finished && n->delivered == count && n->mismatches == 0;
	const char *algo = lh_algo_name(o->algo);

	if (!o->json) {
		printf("canary-allreduce: %s rank %u of %u on %s: %s, %.3f ms, %.3f Gb/s, %" PRIu64
		       " retransmission requests, %" PRIu64 " fallbacks%s\n",
		       algo, o->rank, o->hosts, o->ifname, finished ? "finished" : "NOT finished", runtime_ns / 1e6,
		       goodput, st->retx_requests + st->nacks, st->fallbacks,
		       !o->verify || !finished ? "" : exact ? ", result exact" : ", result WRONG");
		printf("  frames sent %" PRIu64 " received %" PRIu64 ", interface: bad %" PRIu64 " other %" PRIu64
		       " kernel drops %" PRIu64 " ring full %" PRIu64 ", of another run %" PRIu64 "\n",
		       as->tx_frames, as->rx_frames, as->rx_bad, n->rx_other, as->rx_kernel_drops, n->tx_dropped,
		       lh_host_other_run(n->host));
		return;
	}
	printf("{\n  \"tool\": \"canary-allreduce\",\n  \"interface\": \"%s\",\n  \"algo\": \"%s\",\n", o->ifname, algo);
	printf("  \"trees\": %u,\n  \"rank\": %u,\n  \"hosts\": %u,\n  \"tenant\": %u,\n  \"seed\": %" PRIu64 ",\n",
	       o->algo == LH_ALGO_STATIC ? o->trees : 0, o->rank, o->hosts, o->tenant, o->seed);
	printf("  \"run_id\": %d,\n  \"other_run_frames\": %" PRIu64 ",\n", o->run_id > 0 ? o->run_id : 0,
	       lh_host_other_run(n->host));
	printf("  \"size_bytes\": %" PRIu64 ",\n  \"elements\": %u,\n  \"sketch\": %u,\n  \"rate_bps\": %" PRIu64 ",\n",
	       o->size, o->elements, o->sketch, n->rate);
	printf("  \"finished\": %s,\n  \"verified\": %s,\n  \"result_exact\": %s,\n", finished ? "true" : "false",
	       o->verify ? "true" : "false", o->verify ? (exact ? "true" : "false") : "null");
	printf("  \"delivered\": %" PRIu64 ",\n  \"mismatches\": %" PRIu64 ",\n", n->delivered, n->mismatches);
	printf("  \"runtime_ns\": %.0f,\n  \"goodput_gbps\": %.6f,\n", runtime_ns, goodput);
	printf("  \"retransmissions\": %" PRIu64 ",\n  \"retx_requests\": %" PRIu64 ",\n  \"nacks\": %" PRIu64 ",\n",
	       st->retx_requests + st->nacks, st->retx_requests, st->nacks);
	printf("  \"fallbacks\": %" PRIu64 ",\n  \"failures\": %" PRIu64 ",\n  \"reissues\": %" PRIu64 ",\n",
	       st->fallbacks, st->failures, st->reissues);
	printf("  \"retx_served\": %" PRIu64 ",\n  \"blocks_led\": %" PRIu64 ",\n  \"leader_frames\": %" PRIu64 ",\n",
	       st->retx_served, st->blocks_led, st->leader_frames_recv);
	printf("  \"duplicates\": %" PRIu64 ",\n  \"errors\": %" PRIu64 ",\n  \"window\": %u,\n", st->duplicates,
	       st->errors, st->window);
	printf("  \"frames_sent\": %" PRIu64 ",\n  \"frames_recv\": %" PRIu64 ",\n", st->frames_sent, st->frames_recv);
	printf("  \"if_tx_frames\": %" PRIu64 ",\n  \"if_rx_frames\": %" PRIu64 ",\n  \"if_rx_bad\": %" PRIu64 ",\n",
	       as->tx_frames, as->rx_frames, as->rx_bad);
	printf("  \"if_rx_other\": %" PRIu64 ",\n  \"if_kernel_drops\": %" PRIu64 ",\n  \"if_tx_full\": %" PRIu64 ",\n",
	       n->rx_other, as->rx_kernel_drops, n->tx_dropped);
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	printf("  \"busy_poll\": %s,\n  \"loop_turns\": %" PRIu64 ",\n  \"sleeps\": %" PRIu64 ",\n  \"cpu_s\": %.3f\n}\n",
	       o->busy_poll ? "true" : "false", n->turns, n->sleeps,
	       (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
}

/*
 * nic_open - the interface @o names, checked (it exists, has a speed or
 * --rate, an MTU for --elements) and opened into @n; the default round
 * trip follows from its rate. Return 0, or the exit status after one
 * line naming the option.
 */
static int nic_open(struct nic *n, struct opts *o, uint32_t *mtu)
{
	uint8_t ifmac[6];
	uint64_t speed = 0;
	char err[256];

	if (lh_afp_link(o->ifname, ifmac, mtu, &speed))
		return fail("--interface", "'%s' is not a network interface here", o->ifname);
	n->rate = o->rate ? o->rate : speed;
	if (!n->rate)
		return fail("--rate", "'%s' reports no speed: give the line rate (e.g. --rate 1Gbps)", o->ifname);
	if (*mtu < EMU_CANARY_DATA_OFF - EMU_ETH_HLEN + 4 * o->elements)
		return fail("--elements", "%u elements need an MTU of %u; '%s' has %u", o->elements,
			    EMU_CANARY_HLEN + 4 * o->elements, o->ifname, *mtu);
	if (o->retx_timeout) {
		struct lh_ar_cfg c = { .algo = o->algo, .elements = o->elements };
		lh_time_t min = lh_retx_timeout_min(&c, n->rate);

		if (o->retx_timeout < min)
			return fail("--retx-timeout", "%.3f ns is shorter than one %s data frame takes at %.3g Gb/s "
				    "(%.3f ns); use at least that", (double)o->retx_timeout / LH_NS,
				    lh_algo_name(o->algo), (double)n->rate / 1e9, (double)min / LH_NS);
	}
	/* default round trip: 100 us, plus 8 frame times (4 hops there and back, store and forward) */
	if (!o->rtt)
		o->rtt = 100 * LH_US + 8 * (lh_time_t)(EMU_CANARY_DATA_OFF + 4 * o->elements + WIRE_EXTRA) * 8 *
						1000000000000ULL / n->rate;
	n->afp = lh_afp_open(o->ifname, o->slots, err, sizeof(err));
	if (!n->afp)
		return fail("--interface", "%s", err);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.algo = LH_ALGO_CANARY, .trees = 1, .size = 64 * 1024, .elements = 256, .seed = 1, .run_id = -1,
		.limit = 60ULL * 1000 * LH_US * 1000, .linger = 500ULL * 1000 * LH_US,
		.switch_timeout = LH_US, .max_failures = 3,
	};
	static struct nic n;
	struct lh_peer *peers;
	int rc = parse_options(&o, argc, argv);

	if (rc >= 0)
		return rc;
	if (o.start_at && o.start_delay)
		return fail("--start-at", "and --start-delay both say when to start: give one");
	uint64_t rt = clock_ns(CLOCK_REALTIME);

	if (o.start_at && o.start_at <= rt)
		return fail("--start-at", "the instant is %.3f s in the past", (double)(rt - o.start_at) / 1e9);
	peers = lh_xcalloc(o.hosts, sizeof(*peers));
	if (o.peers_file) {
		if (read_peers(o.peers_file, peers, o.hosts)) {
			free(peers);
			return 2;
		}
		if (!o.rate)
			o.rate = lh_peers_file_rate(o.peers_file);	/* the emulated link's (canary-emu --attach-peers) */
		if (o.run_id < 0)
			o.run_id = lh_peers_file_run(o.peers_file);	/* the emulator's run (-1: none) */
	} else {
		for (unsigned r = 0; r < o.hosts; r++)
			peers[r] = (struct lh_peer){ .ipv4 = HOST_IP_BASE + r,
						     .mac = { 2, 0, 0, 0, (uint8_t)(r >> 8), (uint8_t)r } };
	}
	uint32_t mtu = 1500;

	rc = nic_open(&n, &o, &mtu);
	if (rc) {
		free(peers);
		return rc;
	}
	n.t0_ns = clock_ns(CLOCK_MONOTONIC);
	n.hold_until = o.start_delay;
	if (o.start_at) {
		rt = clock_ns(CLOCK_REALTIME);
		n.hold_until = o.start_at > rt ? (o.start_at - rt) * LH_NS : 0;
	}
	n.rng = lh_hash64(o.seed ^ ((uint64_t)o.rank << 32 | o.tenant)) | 1;
	n.verify = o.verify;
	inputs_init(&n.in, o.seed, o.tenant, o.hosts, o.rank);

	struct lh_transport t = { .ops = &afp_ops, .ctx = &n, .rate_bps = n.rate, .mtu = mtu };
	struct lh_comm *comm;
	struct lh_ar_cfg cfg = {
		.algo = o.algo, .elements = o.elements, .ntrees = o.trees, .tree_base = o.tenant * o.trees,
		.window = o.window, .rtt = o.rtt, .switch_timeout = o.algo == LH_ALGO_CANARY ? o.switch_timeout : 0,
		.retx_timeout = o.retx_timeout, .max_failures = o.max_failures, .sketch = o.sketch, .noise_delay = LH_US,
		.reliable = true, .input_block = in_block, .input_arg = &n, .on_block = on_block, .block_arg = &n,
	};

	n.host = lh_host_create(&t, &peers[o.rank]);
	if (n.host && o.run_id > 0)
		lh_host_set_run(n.host, (unsigned)o.run_id);
	comm = n.host ? lh_comm_create(n.host, peers, o.hosts, o.rank, o.tenant) : NULL;
	n.req = comm ? lh_allreduce(comm, &cfg, NULL, NULL, o.size / 4) : NULL;
	rc = 1;
	if (!n.req) {
		fprintf(stderr, "canary-allreduce: libcanaryhost refused the allreduce (check --size, --elements, --algo)\n");
		rc = 2;
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* ppoll() wake-ups within 1 us of the deadline (the default slack is 50 us) */
	(void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);

	lh_time_t t_done = 0;
	bool finished = run(&n, &o, &t_done);

	report(&o, &n, finished, t_done);
	fflush(stdout);
	if (!finished)
		fprintf(stderr, "canary-allreduce: rank %u: the allreduce did not finish (%" PRIu64 " of %" PRIu64
			" elements of the result here)%s\n", o.rank, n.delivered, o.size / 4,
			interrupted ? ": interrupted" : " within --time-limit");
	else if (o.verify && (n.mismatches || n.delivered != o.size / 4))
		fprintf(stderr, "canary-allreduce: rank %u: %" PRIu64 " elements of the result are wrong\n", o.rank,
			n.mismatches);
	else
		rc = 0;
out:
	lh_host_destroy(n.host);
	lh_afp_close(n.afp);
	while (n.nbufs)
		free(n.bufs[--n.nbufs]);
	free(n.bufs);
	free(n.freebuf);
	lh_theap_free(&n.tm);
	inputs_fini(&n.in);
	free(peers);
	return rc;
}
