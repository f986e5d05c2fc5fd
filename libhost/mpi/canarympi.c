// SPDX-License-Identifier: MIT
/*
 * DOC: canarympi.c - libcanarympi.so, MPI_Allreduce through libcanaryhost.
 *
 * A PMPI interposer: loaded with LD_PRELOAD (or linked before libmpi), it
 * defines MPI_Init, MPI_Init_thread, MPI_Allreduce and MPI_Finalize and
 * calls the library's own PMPI_ versions for everything MPI itself does.
 * Only the public API of canary_host.h is used (and the peers-file reader
 * of libhost/tools/peers_file.h); the library's objects are
 * linked in, and libcanarympi.map exports the four MPI functions alone.
 *
 * Which calls go through Canary: op MPI_SUM on a communicator congruent
 * to MPI_COMM_WORLD (every rank, in world order), count x 4 at least
 * CANARY_MPI_MIN_BYTES, and either a 32-bit integer datatype (MPI_INT,
 * MPI_INT32_T, MPI_UNSIGNED, MPI_UINT32_T: exact, modulo 2^32) or, when
 * CANARY_MPI_FLOAT=1, MPI_FLOAT as fixed point (below). Everything else
 * falls through to PMPI_Allreduce and is counted by reason. The decision
 * depends only on the call's arguments and the environment, which are the
 * same on every rank, so all ranks take the same path. Under
 * MPI_THREAD_MULTIPLE (mpi4py's default) only MPI_COMM_WORLD itself is
 * served, one call at a time: threads may run collectives on other
 * communicators concurrently, in orders that differ between ranks, and
 * the calls Canary serves share one sequence of tenants.
 *
 * Floating point, SwitchML's way: the data is cut into blocks of
 * `elements` (a packet's worth). A first pass agrees on each block's
 * exponent: every rank sends the frexp() exponent of its largest magnitude
 * in the block, and PMPI_Allreduce(MPI_MAX) over these (one int per block,
 * 1/elements of the data) gives e, so every |x| in the block, on every rank,
 * is below 2^e. With k = ceil(log2(P)) each element is scaled by
 * 2^(30 - k - e) and rounded to the nearest int32: |q| <= 2^(30-k), so the
 * sum of P of them stays below 2^30 and cannot overflow. The integer sum
 * goes through Canary exactly, and is scaled back. Error: each rounding is
 * at most half a unit of 2^(e + k - 30), so
 *   |result - exact sum| <= P x 2^(e + k - 31) + half an ulp of the result
 * (the last term: the conversion to float). Relative to the block's largest
 * magnitude M (>= 2^(e-1)) that is P x 2^(k-30) x M: 2^-26 M for 4 ranks,
 * finer than one float ulp of M. A non-finite value anywhere in the call
 * makes the exponent pass say so (INT_MAX) and every rank falls through.
 *
 * The transport is an AF_PACKET socket on the rank's interface (no rings:
 * send() and recv(), enough at the rates an emulated fabric keeps), paced
 * at CANARY_MPI_RATE, else the rate the peer table names (canary-emu
 * --attach-peers writes the emulated link's), else the interface's speed;
 * its frames carry the run id CANARY_MPI_RUN (=job: the job id's two low
 * bits), else the peer table's, else 0. A progress thread owns it: it
 * reads frames, fires timers and feeds the NIC, so the protocol keeps
 * answering its peers (retransmission requests, the completion barrier)
 * while the application computes or blocks in another MPI call. libhost
 * is called under one mutex; the thread sleeps in poll() on the socket and an eventfd that the
 * application thread writes to when it starts an allreduce.
 *
 * Allreduces use CM_TENANTS communicators (tenants T..T+3) in turn, so a
 * late frame of one call cannot be taken for a block of the next, and the
 * previous calls' requests keep answering stragglers until their own
 * completion barrier passes; a call returns once its result is complete
 * (lh_req_data_done). MPI_Init opens the interface, agrees over PMPI that
 * every rank could, listens CM_LISTEN_NS for another job's frames on the
 * same tenants (before the probe no rank of this job has sent any, so
 * every such frame is another's: see ours()), and runs a probe allreduce
 * of P elements: if any rank fails, every rank falls back to PMPI
 * (CANARY_MPI_ON_ERROR=fallback, the default) or the job aborts (=abort),
 * with one line naming the cause.
 *
 * The job id: rank 0 draws 64 random bits at MPI_Init and broadcasts them
 * (PMPI_Bcast). Before it listens, every rank sends a hello (UDP to
 * CM_HELLO_PORT, below) naming the job id and its tenants to its ring
 * neighbours. A rank that sees a hello of another job id on tenants
 * overlapping its own, incoming or sent by another process on its
 * interface (an ETH_P_ALL socket sees both), marks the conflict and
 * answers once with its own hello, so a job that started first and
 * computes between its calls is heard by one that starts later. The
 * conflict is agreed over PMPI at the start and at the end of every call
 * Canary serves (heard_other()): a call that ends with a conflict is done
 * again through PMPI_Allreduce from its kept input, and Canary is off for
 * the rest of the job (or the job aborts). Why a result checked this way
 * holds no frame of a job whose hello came on a shared interface: that
 * job's ranks send their hellos before any of its data (they agree at
 * init after sending them), so on each interface the hello is queued for
 * this rank before the data it could take; the end check drains the
 * socket after the result is complete, so it handles that hello first.
 * MPI_Finalize waits for its requests' completion barriers, then for every
 * rank in PMPI_Barrier (the thread still answering), then stops.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/ethtool.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <math.h>
#include <mpi.h>
#include <arpa/inet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "libhost/canary_host.h"
#include "libhost/tools/peers_file.h"
#include "libhost/wire.h"

#define CM_TENANTS 4
#define CM_ETH_CANARY 0x88B5	/* the Canary EtherType (libhost/wire.h) */
#define CM_ETH_IPV4 0x0800
#define CM_WIRE_EXTRA 24	/* preamble 8, FCS 4, inter-frame gap 12 */
#define CM_HDR_BYTES 33		/* Ethernet 14 + Canary 19: what a packet adds to its elements */
#define CM_IP_BYTES 44		/* the most a packet adds within the MTU: IPv4 20 + UDP 8 + ring 16 */
#define CM_SPIN_NS 20000	/* closer deadlines are waited for by spinning */
#define CM_HOST_IP_BASE 0x0a000001u	/* canary-emu's host addresses: 10.0.0.1 + rank */
#define CM_LISTEN_NS 20000000	/* how long MPI_Init listens for another job on the tenants, before sending */
/*
 * The hello: IPv4/UDP (DSCP 0, so an attached host's hello is not taken
 * for the ring's) from CM_HELLO_PORT to CM_HELLO_PORT, a 24-byte payload,
 * big-endian: magic "CJOB" 4 | version 1 | flags 1 (bit 0: an answer,
 * not answered) | first tenant 1 | tenants 1 | job id 8 | rank 4 | ranks 4.
 * libcanaryhost leaves UDP to other ports than its own alone; a switch
 * routes it as any IPv4 frame.
 */
#define CM_HELLO_PORT 7401
#define CM_HELLO_LEN 24
#define CM_HELLO_MAGIC 0x434a4f42u	/* "CJOB" */
#define CM_HELLO_VERSION 1
#define CM_HELLO_ANSWER 1

/* why a call fell through to PMPI_Allreduce */
enum cm_why { W_OFF, W_OP, W_TYPE, W_COMM, W_SMALL, W_LARGE, W_NONFINITE, W_NWHY };

static const char *const why_name[W_NWHY] = { "off", "op", "datatype", "comm", "small", "large", "nonfinite" };

struct cm_cfg {
	char ifname[IF_NAMESIZE];
	const char *peers;
	enum lh_algo algo;
	unsigned trees, elements, tenant, max_failures;
	uint64_t rate;
	const char *rate_from;	/* where the rate came from: CANARY_MPI_RATE, the peer table, the interface */
	int run;		/* the run id the frames carry (0..3): CANARY_MPI_RUN, the peer table's, 0 */
	bool run_job;		/* CANARY_MPI_RUN=job: the job id's two low bits */
	uint64_t min_bytes;
	lh_time_t timeout, rtt;
	bool floats, abort_on_error, report;
};

struct cm_tmr {
	lh_time_t at;
	uint64_t seq, cookie;
};

struct cm_stats {
	uint64_t calls_int, calls_float, bytes, fallen[W_NWHY], retx, frames_sent, frames_recv;
	uint64_t tx_dropped, rx_other;
	uint64_t foreign;	/* frames of our tenants before this job sent any: another job's */
	uint64_t other_run;	/* frames of another run the host dropped (lh_host_other_run) */
	uint64_t hellos_other;	/* hellos of another job on our tenants */
	double seconds;
};

static struct cm {
	struct cm_cfg cfg;
	bool active;		/* Canary serves calls */
	bool multiple;		/* MPI_THREAD_MULTIPLE: MPI_COMM_WORLD only, one call at a time */
	pthread_mutex_t call_mu;	/* ...held through a call Canary serves */
	int rank, size;
	int fd, evfd;
	uint32_t mtu;		/* the interface's (IP) */
	struct lh_host *host;
	struct lh_comm *comm[CM_TENANTS];
	struct lh_req *req[CM_TENANTS];
	int32_t *in[CM_TENANTS];	/* each request's input, kept until it passed its barrier */
	size_t incap[CM_TENANTS];
	struct lh_peer *peers;
	unsigned next;		/* calls so far: the next uses comm[next % CM_TENANTS] */
	uint64_t t0_ns;
	lh_time_t busy_until;
	uint64_t rng;
	struct cm_tmr *tm;
	size_t ntm, captm;
	uint64_t tm_seq;
	uint8_t **freebuf;
	size_t nfree, capfree;
	uint8_t rxbuf[LH_FRAME_MAX];
	pthread_t thread;
	bool thread_on, stop;
	bool hold;		/* nothing is sent (see canary_sum) */
	bool sent;		/* this job's ranks may have sent frames (the probe was let go) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct lh_req *waiting;	/* the request the application waits for */
	uint64_t heard_job;	/* the other job all ranks agreed was heard (heard_other()) */
	unsigned heard_tenant, heard_tenants;
	uint64_t job;		/* this job's id (never 0) */
	uint64_t other_job;	/* the first other job heard on our tenants (0: none) */
	unsigned other_tenant, other_tenants;	/* ...its tenants */
	uint64_t answered;	/* the last other job answered (once each) */
	struct cm_stats st;
} cm = { .fd = -1, .evfd = -1, .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER,
	  .call_mu = PTHREAD_MUTEX_INITIALIZER };

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "libcanarympi: rank %d: ", cm.rank);
	va_list ap;

	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	(void)!write(2, line, (size_t)n);	/* one write: the ranks' lines do not interleave */
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);

	if (!q) {
		say("out of memory (%zu bytes)", n);
		abort();
	}
	return q;
}

/* ---- configuration: environment variables, read at MPI_Init ---- */

/* parse_num - "123" with an optional unit from @units (suffix, multiplier); 0 or -EINVAL */
struct unit {
	const char *sfx;
	double mul;
};

static int parse_num(const char *s, const struct unit *units, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (end == s || errno || !(*v >= 0))
		return -EINVAL;
	if (!*end)
		return units ? -EINVAL : 0;
	for (const struct unit *u = units; u && u->sfx; u++)
		if (!strcmp(end, u->sfx)) {
			*v *= u->mul;
			return 0;
		}
	return -EINVAL;
}

static const struct unit time_units[] = { { "s", 1e12 }, { "ms", 1e9 }, { "us", 1e6 }, { "ns", 1e3 }, { NULL, 0 } };
static const struct unit rate_units[] = { { "bps", 1 }, { "Kbps", 1e3 }, { "Mbps", 1e6 }, { "Gbps", 1e9 },
					  { "K", 1e3 }, { "M", 1e6 }, { "G", 1e9 }, { NULL, 0 } };
static const struct unit size_units[] = { { "B", 1 }, { "KiB", 1024 }, { "MiB", 1048576 }, { NULL, 0 } };

/* cfg_err - one line naming the variable; returns -EINVAL */
static int cfg_err(const char *var, const char *val, const char *why)
{
	say("%s='%s' %s", var, val, why);
	return -EINVAL;
}

/* cfg_ifname - CANARY_MPI_IF: one name, %r replaced by the rank, or a comma list indexed by rank */
static int cfg_ifname(struct cm_cfg *c, const char *v)
{
	char buf[256];
	const char *p = v;
	size_t o = 0;

	if (strchr(v, ',')) {
		for (int r = 0; r < cm.rank && p; r++) {
			p = strchr(p, ',');
			p = p ? p + 1 : NULL;
		}
		if (!p)
			return cfg_err("CANARY_MPI_IF", v, "lists fewer interfaces than there are ranks");
		o = strcspn(p, ",");
		if (o >= sizeof(buf))
			return cfg_err("CANARY_MPI_IF", v, "has an interface name too long");
		memcpy(buf, p, o);
	} else {
		for (; *p && o < sizeof(buf) - 16; p++) {
			if (p[0] == '%' && p[1] == 'r') {
				o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%d", cm.rank);
				p++;
			} else {
				buf[o++] = *p;
			}
		}
	}
	buf[o] = 0;
	if (!o || o >= IF_NAMESIZE)
		return cfg_err("CANARY_MPI_IF", v, "does not give an interface name (1..15 characters)");
	memcpy(c->ifname, buf, o + 1);
	return 0;
}

static int cfg_algo(struct cm_cfg *c, const char *v)
{
	char *end;

	c->trees = 1;
	if (!strcmp(v, "canary")) {
		c->algo = LH_ALGO_CANARY;
	} else if (!strcmp(v, "ring")) {
		c->algo = LH_ALGO_RING;
	} else if (!strcmp(v, "static")) {
		c->algo = LH_ALGO_STATIC;
	} else if (!strncmp(v, "static:", 7)) {
		unsigned long n = strtoul(v + 7, &end, 10);

		if (*end || end == v + 7 || n < 1 || n > 64)
			return cfg_err("CANARY_MPI_ALGO", v, "is not canary, ring or static:N (N in 1..64)");
		c->algo = LH_ALGO_STATIC;
		c->trees = (unsigned)n;
	} else {
		return cfg_err("CANARY_MPI_ALGO", v, "is not canary, ring or static:N (N in 1..64)");
	}
	return 0;
}

static int cfg_uint(const char *var, const char *v, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (*end || end == v || errno || n < lo || n > hi || *v == '-') {
		char why[64];

		snprintf(why, sizeof(why), "is not a number in %u..%u", lo, hi);
		return cfg_err(var, v, why);
	}
	*out = (unsigned)n;
	return 0;
}

static int cfg_bool(const char *var, const char *v, bool *out)
{
	if (!strcmp(v, "1") || !strcmp(v, "yes"))
		*out = true;
	else if (!strcmp(v, "0") || !strcmp(v, "no"))
		*out = false;
	else
		return cfg_err(var, v, "is not 0 or 1");
	return 0;
}

/* cfg_read - every CANARY_MPI_* variable; 0, -EINVAL after saying which one is wrong, -ENOENT: no interface */
static int cfg_read(struct cm_cfg *c)
{
	const char *v;
	double d;

	*c = (struct cm_cfg){ .algo = LH_ALGO_CANARY, .trees = 1, .elements = 256, .max_failures = 3,
			      .min_bytes = 64, .timeout = 60 * 1000000000000ULL };
	if ((v = getenv("CANARY_MPI_ON_ERROR"))) {
		if (!strcmp(v, "abort"))
			c->abort_on_error = true;
		else if (strcmp(v, "fallback"))
			return cfg_err("CANARY_MPI_ON_ERROR", v, "is not fallback or abort");
	}
	if ((v = getenv("CANARY_MPI_REPORT")) && cfg_bool("CANARY_MPI_REPORT", v, &c->report))
		return -EINVAL;
	if ((v = getenv("CANARY_MPI_FLOAT")) && cfg_bool("CANARY_MPI_FLOAT", v, &c->floats))
		return -EINVAL;
	if (!(v = getenv("CANARY_MPI_IF"))) {
		if (cm.rank == 0)
			say("CANARY_MPI_IF is not set: the interface of each rank (e.g. eth1, veth%%r, a,b,c)");
		return -ENOENT;
	}
	if (cfg_ifname(c, v))
		return -EINVAL;
	c->peers = getenv("CANARY_MPI_PEERS");
	if ((v = getenv("CANARY_MPI_ALGO")) && cfg_algo(c, v))
		return -EINVAL;
	if ((v = getenv("CANARY_MPI_RATE"))) {
		if (parse_num(v, rate_units, &d) || d < 1e3)
			return cfg_err("CANARY_MPI_RATE", v, "is not a rate (e.g. 100Mbps, 10G)");
		c->rate = (uint64_t)d;
		c->rate_from = "CANARY_MPI_RATE";
	}
	if ((v = getenv("CANARY_MPI_MIN_BYTES"))) {
		if (parse_num(v, size_units, &d) && parse_num(v, NULL, &d))
			return cfg_err("CANARY_MPI_MIN_BYTES", v, "is not a size in bytes (e.g. 4096, 4KiB)");
		c->min_bytes = (uint64_t)d;
	}
	if ((v = getenv("CANARY_MPI_TIMEOUT"))) {
		if (parse_num(v, time_units, &d) || d < 1e9)
			return cfg_err("CANARY_MPI_TIMEOUT", v, "is not a time of at least 1ms with a unit (e.g. 30s)");
		c->timeout = (lh_time_t)d;
	}
	if ((v = getenv("CANARY_MPI_RTT"))) {
		if (parse_num(v, time_units, &d))
			return cfg_err("CANARY_MPI_RTT", v, "is not a time with a unit (e.g. 1ms)");
		c->rtt = (lh_time_t)d;
	}
	if ((v = getenv("CANARY_MPI_ELEMENTS")) && cfg_uint("CANARY_MPI_ELEMENTS", v, 1, 256, &c->elements))
		return -EINVAL;
	c->run = -1;
	if ((v = getenv("CANARY_MPI_RUN")) && !strcmp(v, "job")) {
		c->run_job = true;
	} else if (v) {
		char *end;
		unsigned long run = strtoul(v, &end, 10);

		if (*end || end == v || *v == '-' || run >= EMU_CANARY_RUNS)
			return cfg_err("CANARY_MPI_RUN", v, "is not 0..3 or job");
		c->run = (int)run;
	}
	if ((v = getenv("CANARY_MPI_TENANT")) &&
	    cfg_uint("CANARY_MPI_TENANT", v, 0, 256 - CM_TENANTS, &c->tenant))
		return -EINVAL;
	return 0;
}

/* read_peers - CANARY_MPI_PEERS (libhost/tools/peers_file.h); 0 or -EINVAL (said why) */
static int read_peers(const char *path, struct lh_peer *p, unsigned n)
{
	char err[512];

	if (!lh_peers_file_read(path, p, n, err, sizeof(err)))
		return 0;
	say("CANARY_MPI_PEERS: %s", err);
	return -EINVAL;
}

/* ---- the transport: AF_PACKET, timers, pacing ---- */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static lh_time_t now_ps(void)
{
	return (mono_ns() - cm.t0_ns) * LH_NS;
}

static uint8_t *t_frame_get(void *ctx, void **handle)
{
	uint8_t *b;

	(void)ctx;
	b = cm.nfree ? cm.freebuf[--cm.nfree] : xrealloc(NULL, LH_FRAME_MAX);
	*handle = b;
	return b;
}

static void t_frame_send(void *ctx, void *handle, uint32_t len)
{
	lh_time_t now = now_ps(), start = cm.busy_until > now ? cm.busy_until : now;

	(void)ctx;
	if (send(cm.fd, handle, len, MSG_DONTWAIT) != (ssize_t)len)
		cm.st.tx_dropped++;	/* lost as on a congested link: the protocols recover */
	cm.busy_until = start + (lh_time_t)(len + CM_WIRE_EXTRA) * 8 * 1000000000000ULL / cm.cfg.rate;
	if (cm.nfree == cm.capfree) {
		cm.capfree = cm.capfree ? 2 * cm.capfree : 64;
		cm.freebuf = xrealloc(cm.freebuf, cm.capfree * sizeof(*cm.freebuf));
	}
	cm.freebuf[cm.nfree++] = handle;
}

static lh_time_t t_now(void *ctx)
{
	(void)ctx;
	return now_ps();
}

static bool tmr_less(const struct cm_tmr *a, const struct cm_tmr *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

/* a binary heap on (time, arming order) */
static void t_timer(void *ctx, lh_time_t at, uint64_t cookie)
{
	size_t i = cm.ntm++;

	(void)ctx;
	if (cm.ntm > cm.captm) {
		cm.captm = cm.captm ? 2 * cm.captm : 64;
		cm.tm = xrealloc(cm.tm, cm.captm * sizeof(*cm.tm));
	}
	cm.tm[i] = (struct cm_tmr){ at, cm.tm_seq++, cookie };
	while (i && tmr_less(&cm.tm[i], &cm.tm[(i - 1) / 2])) {
		struct cm_tmr t = cm.tm[i];

		cm.tm[i] = cm.tm[(i - 1) / 2];
		cm.tm[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static struct cm_tmr tmr_pop(void)
{
	struct cm_tmr top = cm.tm[0];
	size_t i = 0;

	cm.tm[0] = cm.tm[--cm.ntm];
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < cm.ntm && tmr_less(&cm.tm[l], &cm.tm[m]))
			m = l;
		if (l + 1 < cm.ntm && tmr_less(&cm.tm[l + 1], &cm.tm[m]))
			m = l + 1;
		if (m == i)
			break;
		struct cm_tmr t = cm.tm[i];

		cm.tm[i] = cm.tm[m];
		cm.tm[m] = t;
		i = m;
	}
	return top;
}

static bool t_tx_busy(void *ctx)
{
	(void)ctx;
	return cm.hold || cm.busy_until > now_ps();
}

static uint64_t t_random(void *ctx)
{
	(void)ctx;
	cm.rng ^= cm.rng << 13;
	cm.rng ^= cm.rng >> 7;
	cm.rng ^= cm.rng << 17;
	return cm.rng;
}

static const struct lh_transport_ops cm_ops = {
	.frame_get = t_frame_get,
	.frame_send = t_frame_send,
	.now = t_now,
	.timer = t_timer,
	.tx_busy = t_tx_busy,
	.random = t_random,
};

/*
 * ours - a Canary or ring frame of one of this job's tenants, addressed
 * to this rank? Before the job's probe is let go no rank of it has sent
 * anything (see cm_start), so such a frame is another job's on the same
 * tenants, whose frames this one would take for its own.
 */
static bool ours(const uint8_t *p, uint32_t len)
{
	unsigned tenant;

	if (lh_wire_ethertype(p, len) == EMU_ETHERTYPE_CANARY) {
		if (len < EMU_CANARY_DATA_OFF)
			return false;
		tenant = emu_get32(p + EMU_CANARY_OFF + 4) >> 24;	/* the block id's tenant */
	} else if (len >= EMU_UDP_PAYLOAD_OFF + EMU_RING_HDR && lh_wire_udp_dport(p, len) == EMU_RING_PORT) {
		if (emu_get32(p + EMU_ETH_HLEN + 16) != cm.peers[cm.rank].ipv4)
			return false;	/* the ring's frames go host to host: another rank's */
		tenant = p[EMU_UDP_PAYLOAD_OFF];
	} else {
		return false;
	}
	return tenant >= cm.cfg.tenant && tenant < cm.cfg.tenant + CM_TENANTS;
}

/* ---- the job id and its hello ---- */

/* job_draw - 64 random bits, never 0 (the clock and the pid, mixed, if getrandom() fails) */
static uint64_t job_draw(void)
{
	uint64_t x;

	if (getrandom(&x, sizeof(x), 0) != (ssize_t)sizeof(x)) {
		x = mono_ns() ^ (uint64_t)getpid() << 40;
		x ^= x >> 33;
		x *= 0xff51afd7ed558ccdULL;
		x ^= x >> 33;
	}
	return x ? x : 1;
}

/* hello_to - this job's hello to rank @r, @flags (CM_HELLO_ANSWER); under the lock */
static void hello_to(unsigned r, uint8_t flags)
{
	uint8_t f[LH_WIRE_MAX], *q = f + EMU_UDP_PAYLOAD_OFF;
	const struct lh_peer *me = &cm.peers[cm.rank], *to = &cm.peers[r];
	uint32_t len = lh_wire_udp(f, to->mac, me->mac, me->ipv4, to->ipv4, CM_HELLO_PORT, CM_HELLO_PORT,
				   CM_HELLO_LEN);
	lh_time_t now = now_ps(), start = cm.busy_until > now ? cm.busy_until : now;

	emu_put32(q, CM_HELLO_MAGIC);
	q[4] = CM_HELLO_VERSION;
	q[5] = flags;
	q[6] = (uint8_t)cm.cfg.tenant;
	q[7] = CM_TENANTS;
	emu_put32(q + 8, (uint32_t)(cm.job >> 32));
	emu_put32(q + 12, (uint32_t)cm.job);
	emu_put32(q + 16, (uint32_t)cm.rank);
	emu_put32(q + 20, (uint32_t)cm.size);
	if (send(cm.fd, f, len, MSG_DONTWAIT) != (ssize_t)len)
		cm.st.tx_dropped++;
	cm.busy_until = start + (lh_time_t)(len + CM_WIRE_EXTRA) * 8 * 1000000000000ULL / cm.cfg.rate;
}

/* hello_send - this job's hello to both ring neighbours; under the lock */
static void hello_send(uint8_t flags)
{
	unsigned P = (unsigned)cm.size, next = ((unsigned)cm.rank + 1) % P, prev = ((unsigned)cm.rank + P - 1) % P;

	hello_to(next, flags);
	if (prev != next)
		hello_to(prev, flags);
}

/*
 * hello_rx - a hello come in or sent by another process on this interface
 * (@len bytes at @p, UDP to CM_HELLO_PORT): another job's on tenants that
 * overlap ours is recorded (the first one) and answered, once per job,
 * unless it is an answer itself. Under the lock.
 */
static void hello_rx(const uint8_t *p, uint32_t len)
{
	const uint8_t *q = p + EMU_UDP_PAYLOAD_OFF;
	uint64_t job;
	unsigned t0, nt;

	if (len < EMU_UDP_PAYLOAD_OFF + CM_HELLO_LEN || emu_get32(q) != CM_HELLO_MAGIC || q[4] != CM_HELLO_VERSION)
		return;
	job = (uint64_t)emu_get32(q + 8) << 32 | emu_get32(q + 12);
	t0 = q[6];
	nt = q[7];
	if (job == cm.job || t0 >= cm.cfg.tenant + CM_TENANTS || t0 + nt <= cm.cfg.tenant)
		return;	/* this job's own, or another job's on other tenants */
	cm.st.hellos_other++;
	if (!cm.other_job) {
		cm.other_job = job;
		cm.other_tenant = t0;
		cm.other_tenants = nt;
	}
	if (!(q[5] & CM_HELLO_ANSWER) && cm.answered != job) {
		cm.answered = job;
		hello_send(CM_HELLO_ANSWER);	/* a job that started first and computes is heard too */
	}
}

/* rx_drain - frames waiting on the socket into the host (at most 256); under the lock; returns how many were read */
static int rx_drain(void)
{
	int k;

	for (k = 0; k < 256; k++) {
		struct sockaddr_ll sll;
		socklen_t sl = sizeof(sll);
		ssize_t n = recvfrom(cm.fd, cm.rxbuf, sizeof(cm.rxbuf), MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&sll, &sl);

		if (n < 0)
			break;
		if (n < 14 || n > (ssize_t)sizeof(cm.rxbuf)) {
			cm.st.rx_other++;
			continue;
		}
		unsigned type = (unsigned)cm.rxbuf[12] << 8 | cm.rxbuf[13];

		if (type == CM_ETH_IPV4 && lh_wire_udp_dport(cm.rxbuf, (uint32_t)n) == CM_HELLO_PORT) {
			hello_rx(cm.rxbuf, (uint32_t)n);	/* sent by another process on this interface too */
			continue;
		}
		if (sll.sll_pkttype == PACKET_OUTGOING)
			continue;	/* sent by another socket on this interface: not for this rank */
		if (type != CM_ETH_CANARY && type != CM_ETH_IPV4) {
			cm.st.rx_other++;
			continue;
		}
		if (!cm.sent && ours(cm.rxbuf, (uint32_t)n))
			cm.st.foreign++;
		lh_host_rx(cm.host, cm.rxbuf, (uint32_t)n);
	}
	return k;
}

/* progress_turn - one turn of the loop under the lock; returns how long to sleep (ns, 0: spin) */
static uint64_t progress_turn(void)
{
	lh_time_t now, wake;

	rx_drain();
	while (cm.ntm && cm.tm[0].at <= now_ps()) {
		struct cm_tmr t = tmr_pop();

		lh_host_timer(cm.host, t.cookie);
	}
	if (!t_tx_busy(NULL))
		lh_host_tx_ready(cm.host);
	if (cm.waiting && lh_req_data_done(cm.waiting))
		pthread_cond_broadcast(&cm.cv);
	now = now_ps();
	wake = now + 100 * 1000 * LH_US;	/* at most 100 ms */
	if (cm.ntm && cm.tm[0].at < wake)
		wake = cm.tm[0].at;
	if (cm.busy_until > now && cm.busy_until < wake)
		wake = cm.busy_until;
	if (wake <= now || (wake - now) / LH_NS < CM_SPIN_NS)
		return 0;
	return (wake - now) / LH_NS - CM_SPIN_NS / 2;
}

static void *progress_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cm.mu);
	while (!cm.stop) {
		uint64_t gap = progress_turn();

		pthread_mutex_unlock(&cm.mu);
		if (gap) {
			struct pollfd pfd[2] = { { .fd = cm.fd, .events = POLLIN }, { .fd = cm.evfd, .events = POLLIN } };
			struct timespec ts = { .tv_sec = (time_t)(gap / 1000000000), .tv_nsec = (long)(gap % 1000000000) };

			if (ppoll(pfd, 2, &ts, NULL) > 0 && pfd[1].revents) {
				uint64_t x;

				(void)!read(cm.evfd, &x, sizeof(x));
			}
		}
		pthread_mutex_lock(&cm.mu);
	}
	pthread_mutex_unlock(&cm.mu);
	return NULL;
}

static void kick(void)
{
	uint64_t one = 1;

	(void)!write(cm.evfd, &one, sizeof(one));
}

/* ---- opening and closing ---- */

/* link_speed - the interface's speed in bit/s, 0 when it reports none (veth) */
static uint64_t link_speed(int fd, const char *ifname)
{
	struct ethtool_cmd ec = { .cmd = ETHTOOL_GSET };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&ec;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		return 0;
	uint32_t mbps = ethtool_cmd_speed(&ec);

	return mbps == 0 || mbps == (uint32_t)SPEED_UNKNOWN ? 0 : (uint64_t)mbps * 1000000;
}

/* open_link - the socket on cfg.ifname, the rate, the MTU checked; 0 or -1 (said why) */
static int open_link(void)
{
	struct ifreq ifr;
	struct sockaddr_ll sll;
	int rcv = 4 << 20;

	cm.fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (cm.fd < 0) {
		say("CANARY_MPI_IF=%s: AF_PACKET socket: %s (needs CAP_NET_RAW)", cm.cfg.ifname, strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", cm.cfg.ifname);
	if (ioctl(cm.fd, SIOCGIFINDEX, &ifr) < 0) {
		say("CANARY_MPI_IF=%s: no such interface here", cm.cfg.ifname);
		return -1;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = ifr.ifr_ifindex;
	if (bind(cm.fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		say("CANARY_MPI_IF=%s: bind: %s", cm.cfg.ifname, strerror(errno));
		return -1;
	}
	(void)setsockopt(cm.fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv));
	if (ioctl(cm.fd, SIOCGIFMTU, &ifr) < 0 || (unsigned)ifr.ifr_mtu < CM_IP_BYTES + 4 * cm.cfg.elements) {
		say("CANARY_MPI_ELEMENTS=%u: needs an MTU of %u on %s", cm.cfg.elements, CM_IP_BYTES + 4 * cm.cfg.elements,
		    cm.cfg.ifname);
		return -1;
	}
	cm.mtu = (uint32_t)ifr.ifr_mtu;
	/* CANARY_MPI_RATE, else the peer table's (the emulated link's), else the interface's */
	if (!cm.cfg.rate && cm.cfg.peers && (cm.cfg.rate = lh_peers_file_rate(cm.cfg.peers)))
		cm.cfg.rate_from = "the peer table";
	if (!cm.cfg.rate && (cm.cfg.rate = link_speed(cm.fd, cm.cfg.ifname)))
		cm.cfg.rate_from = "the interface";
	if (!cm.cfg.rate) {
		say("CANARY_MPI_RATE: %s reports no speed and CANARY_MPI_PEERS gives none: give the line rate "
		    "(e.g. CANARY_MPI_RATE=100Mbps)", cm.cfg.ifname);
		return -1;
	}
	cm.evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return cm.evfd < 0 ? -1 : 0;
}

/* peers_read - the ranks' addresses: CANARY_MPI_PEERS, or canary-emu's; 0 or -EINVAL (said why) */
static int peers_read(void)
{
	unsigned P = (unsigned)cm.size;

	cm.peers = xrealloc(NULL, P * sizeof(*cm.peers));
	if (cm.cfg.peers)
		return read_peers(cm.cfg.peers, cm.peers, P);
	for (unsigned r = 0; r < P; r++)
		cm.peers[r] = (struct lh_peer){ .ipv4 = CM_HOST_IP_BASE + r, .mac = { 2, 0, 0, 0, (uint8_t)(r >> 8), (uint8_t)r } };
	return 0;
}

/* open_host - the host and its communicators, the progress thread; 0 or -1 (said why) */
static int open_host(void)
{
	struct lh_transport t = { .ops = &cm_ops, .ctx = &cm, .rate_bps = cm.cfg.rate, .mtu = cm.mtu };
	unsigned P = (unsigned)cm.size;

	cm.t0_ns = mono_ns();
	cm.rng = (uint64_t)cm.rank * 0x9e3779b97f4a7c15ULL + cm.t0_ns + 1;
	cm.host = lh_host_create(&t, &cm.peers[cm.rank]);
	if (!cm.host)
		return -1;
	/* CANARY_MPI_RUN (=job: the job id's), else the peer table's (canary-emu --attach-peers writes its --run-id), else 0 */
	if (cm.cfg.run_job)
		cm.cfg.run = (int)(cm.job & (EMU_CANARY_RUNS - 1));
	if (cm.cfg.run < 0 && cm.cfg.peers)
		cm.cfg.run = lh_peers_file_run(cm.cfg.peers);
	if (cm.cfg.run < 0)
		cm.cfg.run = 0;
	lh_host_set_run(cm.host, (unsigned)cm.cfg.run);
	for (unsigned i = 0; i < CM_TENANTS; i++) {
		cm.comm[i] = lh_comm_create(cm.host, cm.peers, P, (unsigned)cm.rank, cm.cfg.tenant + i);
		if (!cm.comm[i]) {
			say("libcanaryhost refused a communicator of %u ranks", P);
			return -1;
		}
	}
	if (!cm.cfg.rtt)	/* 100 us plus 8 packet times (4 hops there and back), as canary-allreduce */
		cm.cfg.rtt = 100 * LH_US + 8 * (lh_time_t)(CM_HDR_BYTES + 4 * cm.cfg.elements + CM_WIRE_EXTRA) * 8 *
						   1000000000000ULL / cm.cfg.rate;
	cm.stop = false;
	if (pthread_create(&cm.thread, NULL, progress_main, NULL))
		return -1;
	cm.thread_on = true;
	return 0;
}

/* fold_stats - a finished request's counters into the totals, once (before it is replaced or freed) */
static void fold_stats(const struct lh_req *r)
{
	const struct lh_ar_stats *s = r ? lh_req_stats(r) : NULL;

	if (!s)
		return;
	cm.st.retx += s->retx_requests + s->nacks;
	cm.st.frames_sent += s->frames_sent;
	cm.st.frames_recv += s->frames_recv;
}

static void close_all(void)
{
	if (cm.thread_on) {
		pthread_mutex_lock(&cm.mu);
		cm.stop = true;
		pthread_mutex_unlock(&cm.mu);
		kick();
		pthread_join(cm.thread, NULL);
		cm.thread_on = false;
	}
	if (cm.host)
		cm.st.other_run += lh_host_other_run(cm.host);
	for (unsigned i = 0; i < CM_TENANTS; i++)
		fold_stats(cm.req[i]);
	lh_host_destroy(cm.host);
	cm.host = NULL;
	memset(cm.comm, 0, sizeof(cm.comm));
	memset(cm.req, 0, sizeof(cm.req));
	for (unsigned i = 0; i < CM_TENANTS; i++) {
		free(cm.in[i]);
		cm.in[i] = NULL;
		cm.incap[i] = 0;
	}
	if (cm.fd >= 0)
		close(cm.fd);
	if (cm.evfd >= 0)
		close(cm.evfd);
	cm.fd = cm.evfd = -1;
	while (cm.nfree)
		free(cm.freebuf[--cm.nfree]);
	free(cm.freebuf);
	free(cm.tm);
	free(cm.peers);
	cm.freebuf = NULL;
	cm.tm = NULL;
	cm.peers = NULL;
	cm.ntm = cm.capfree = cm.captm = 0;
	cm.active = false;
}

/* ---- one allreduce of int32 through Canary ---- */

static struct lh_ar_cfg ar_cfg(void)
{
	return (struct lh_ar_cfg){
		.algo = cm.cfg.algo, .elements = cm.cfg.elements, .ntrees = cm.cfg.trees,
		.tree_base = cm.cfg.tenant * cm.cfg.trees, .rtt = cm.cfg.rtt,
		.switch_timeout = cm.cfg.algo == LH_ALGO_CANARY ? LH_US : 0, .max_failures = cm.cfg.max_failures,
		.noise_delay = LH_US, .reliable = true,
	};
}

/*
 * heard_other - has any rank of @comm heard another job on our tenants?
 * Collective (every rank calls it at the same point: it is a barrier too);
 * each reads what its socket holds first. cm.heard_* get some rank's
 * other job, for the message.
 */
static bool heard_other(MPI_Comm comm)
{
	uint64_t mine[2], all[2];

	pthread_mutex_lock(&cm.mu);
	while (rx_drain() == 256)
		;
	mine[0] = cm.other_job;
	mine[1] = cm.other_job ? (uint64_t)cm.other_tenant << 8 | cm.other_tenants : 0;
	pthread_mutex_unlock(&cm.mu);
	PMPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_MAX, comm);
	cm.heard_job = all[0];
	cm.heard_tenant = (unsigned)(all[1] >> 8);
	cm.heard_tenants = (unsigned)(all[1] & 0xff);
	return all[0] != 0;
}

/* heard_why - the line that names both jobs and their tenants (@redone: the call that heard it is done again) */
static const char *heard_why(bool redone)
{
	static char why[320];

	snprintf(why, sizeof(why), "another job is using these tenants: job %016" PRIx64 " (tenants %u..%u) heard the "
		 "hello of job %016" PRIx64 " (tenants %u..%u) (give each job its own CANARY_MPI_TENANT, 4 apart)%s",
		 cm.job, cm.cfg.tenant, cm.cfg.tenant + CM_TENANTS - 1, cm.heard_job, cm.heard_tenant,
		 cm.heard_tenant + cm.heard_tenants - 1,
		 redone ? "; the call through Canary that heard it is done again through PMPI_Allreduce" : "");
	return why;
}

/*
 * canary_sum - @out = the sum over the ranks of @comm (congruent to
 * MPI_COMM_WORLD) of @in (@n int32s; @in may be @out). Waits at most
 * @limit; 0, -ETIMEDOUT, or some rank heard another job on our tenants:
 * -EADDRINUSE before the call (@out untouched), -ECANCELED by its end
 * (@out holds @in again: the result may hold the other job's frames).
 *
 * The input is copied first and the copy kept until the request has passed
 * its completion barrier: a rank that has its result may still be asked
 * for its data (a static tree's leader that lost it sends FALLBACK), after
 * the program has reused its buffer.
 *
 * Why two barriers: a host hands every frame of a tenant to the request
 * its communicator holds, so a frame of this call that reached a rank
 * which had not started it yet would meet that tenant's previous request,
 * complete, which answers a retransmission request with its own, old
 * result. So the request starts with the transmitter held (cm.hold: the
 * NIC reads as busy), and is let go only when every rank has started its
 * own (the second barrier). The first one makes holding safe: every rank
 * has all the data of its earlier calls, so nobody needs a frame from a
 * holding rank (completion barriers and late duplicates wait a moment).
 * Before both, the previous request of this call's communicator must have
 * passed its completion barrier (lh_allreduce takes one at a time).
 */
static int canary_sum(const int32_t *in, int32_t *out, size_t n, lh_time_t limit, MPI_Comm comm)
{
	struct lh_ar_cfg c = ar_cfg();
	unsigned slot = cm.next % CM_TENANTS;
	struct timespec dl;
	uint64_t t0 = mono_ns(), until = t0 + limit / LH_NS;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += (time_t)(limit / LH_NS / 1000000000ULL);
	dl.tv_nsec += (long)(limit / LH_NS % 1000000000ULL);
	if (dl.tv_nsec >= 1000000000L)
		dl.tv_sec++, dl.tv_nsec -= 1000000000L;
	pthread_mutex_lock(&cm.mu);
	/* the previous request of this communicator: its barrier first */
	while (cm.req[slot] && !lh_req_done(cm.req[slot]) && mono_ns() < until) {
		cm.waiting = NULL;
		pthread_mutex_unlock(&cm.mu);
		usleep(100);
		pthread_mutex_lock(&cm.mu);
	}
	if (cm.req[slot] && !lh_req_done(cm.req[slot])) {
		rc = -ETIMEDOUT;
		goto out;
	}
	pthread_mutex_unlock(&cm.mu);
	if (heard_other(comm))	/* ...and every rank is done with the data of its calls so far */
		return -EADDRINUSE;
	pthread_mutex_lock(&cm.mu);
	fold_stats(cm.req[slot]);
	if (n > cm.incap[slot]) {
		cm.in[slot] = xrealloc(cm.in[slot], n * sizeof(int32_t));
		cm.incap[slot] = n;
	}
	memcpy(cm.in[slot], in, n * sizeof(int32_t));
	cm.hold = true;
	cm.req[slot] = lh_allreduce(cm.comm[slot], &c, cm.in[slot], out, n);
	if (!cm.req[slot]) {
		say("libcanaryhost refused an allreduce of %zu elements", n);
		abort();	/* the arguments were checked: a bug */
	}
	cm.next++;
	pthread_mutex_unlock(&cm.mu);
	PMPI_Barrier(comm);	/* every rank's request of this tenant is the new one */
	pthread_mutex_lock(&cm.mu);
	cm.hold = false;
	cm.sent = true;
	cm.waiting = cm.req[slot];
	kick();
	while (!lh_req_data_done(cm.req[slot]) && rc == 0)
		if (pthread_cond_timedwait(&cm.cv, &cm.mu, &dl) == ETIMEDOUT && !lh_req_data_done(cm.req[slot]))
			rc = -ETIMEDOUT;
	cm.waiting = NULL;
	pthread_mutex_unlock(&cm.mu);
	/* every rank's result complete: did another job's hello come meanwhile (then before its data)? */
	if (rc == 0 && heard_other(comm)) {
		memcpy(out, cm.in[slot], n * sizeof(int32_t));
		rc = -ECANCELED;
	}
	pthread_mutex_lock(&cm.mu);
out:
	pthread_mutex_unlock(&cm.mu);
	cm.st.seconds += (double)(mono_ns() - t0) / 1e9;
	return rc;
}

/* ---- the probe at MPI_Init ---- */

static bool agree(bool mine)
{
	int v = mine, all = 0;

	PMPI_Allreduce(&v, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	return all != 0;
}

/*
 * probe - a P-element allreduce: rank r gives r + 1 at r, all must see
 * (r + 1) x ... exact; 0 if so, -EADDRINUSE when another job was heard
 * (on every rank), -EIO (said why)
 */
static int probe(void)
{
	size_t P = (size_t)cm.size;
	int32_t *in = calloc(P, sizeof(int32_t)), *out = calloc(P, sizeof(int32_t));
	bool good = false;
	int rc = -EIO;
	const char *v = getenv("CANARY_MPI_PROBE_TIMEOUT");
	double d = 10e12;

	if (v && (parse_num(v, time_units, &d) || d < 1e9)) {
		cfg_err("CANARY_MPI_PROBE_TIMEOUT", v, "is not a time of at least 1ms with a unit (e.g. 10s)");
		d = 10e12;
	}
	if (in && out) {
		in[cm.rank] = cm.rank + 1;
		for (size_t i = 0; i < P; i++)
			in[i] += 7;
		rc = canary_sum(in, out, P, (lh_time_t)d, MPI_COMM_WORLD);
		if (rc == 0) {
			good = true;
			for (size_t i = 0; i < P; i++)
				good = good && out[i] == (int32_t)(7 * P + i + 1);
			if (!good)
				say("the probe allreduce on %s gave a wrong result", cm.cfg.ifname);
			rc = good ? 0 : -EIO;
		} else if (rc == -ETIMEDOUT && heard_other(MPI_COMM_WORLD)) {
			rc = -EADDRINUSE;	/* the check the ranks that finished make */
		} else if (rc == -ECANCELED) {
			rc = -EADDRINUSE;
		} else if (rc == -ETIMEDOUT) {
			say("the probe allreduce on %s did not finish within %.1f s: do the peers (and the fabric) "
			    "answer there?", cm.cfg.ifname, d / 1e12);
			rc = -EIO;
		}
	}
	free(in);
	free(out);
	return rc;
}

/* cm_fail - Canary cannot serve this job: close, then fall back or abort (CANARY_MPI_ON_ERROR) */
static void cm_fail(const char *why)
{
	close_all();
	if (cm.cfg.abort_on_error) {
		say("%s; CANARY_MPI_ON_ERROR=abort: aborting the job", why);
		PMPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (cm.rank == 0)
		say("%s; every MPI_Allreduce goes to PMPI_Allreduce (CANARY_MPI_ON_ERROR=fallback)", why);
}

/* another_job - frames of our tenants in CM_LISTEN_NS, before any rank of this job sent one (said) */
static bool another_job(void)
{
	uint64_t n;

	usleep(CM_LISTEN_NS / 1000);
	pthread_mutex_lock(&cm.mu);
	rx_drain();	/* what the progress thread has not read yet */
	n = cm.st.foreign;
	pthread_mutex_unlock(&cm.mu);
	if (n)
		say("%" PRIu64 " frames of tenants %u..%u addressed to this rank came on %s before this job sent any",
		    n, cm.cfg.tenant, cm.cfg.tenant + CM_TENANTS - 1, cm.cfg.ifname);
	return n != 0;
}

/* cm_start - after PMPI_Init: configure, open, probe; every rank ends with the same cm.active */
static void cm_start(void)
{
	int rc;
	bool ok;

	PMPI_Comm_rank(MPI_COMM_WORLD, &cm.rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &cm.size);
	if (cm.rank == 0)
		cm.job = job_draw();
	PMPI_Bcast(&cm.job, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	rc = cfg_read(&cm.cfg);
	if (rc == -EINVAL || (rc == 0 && peers_read()))
		PMPI_Abort(MPI_COMM_WORLD, 2);	/* bad input, said above */
	ok = rc == 0 && cm.size >= 2 && open_link() == 0 && open_host() == 0;
	if (rc == 0 && cm.size < 2)
		say("one rank: nothing to reduce over the network");
	if (!agree(ok))	/* also: every rank's socket is open before any probe frame leaves */
		return cm_fail(ok ? "another rank could not set up Canary" : "Canary is not set up");
	pthread_mutex_lock(&cm.mu);
	hello_send(0);
	pthread_mutex_unlock(&cm.mu);
	ok = !another_job();
	if (heard_other(MPI_COMM_WORLD))
		return cm_fail(heard_why(false));
	if (!agree(ok))
		return cm_fail("another job is using these tenants: its frames came before this job sent any (give "
			       "each job its own CANARY_MPI_TENANT, 4 apart)");
	rc = probe();
	if (rc == -EADDRINUSE)
		return cm_fail(heard_why(false));
	ok = rc == 0;
	if (!agree(ok))
		return cm_fail(ok ? "another rank's probe allreduce failed" : "the probe allreduce failed");
	cm.active = true;
}

/* ---- the MPI functions ---- */

/* classify - whether Canary takes this call (0: int32, 1: float) or why not (W_*, negated - 1) */
static int classify(const void *sendbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	int cmp;

	(void)sendbuf;
	if (!cm.active)
		return -1 - W_OFF;
	if (op != MPI_SUM)
		return -1 - W_OP;
	bool is_int = (dt == MPI_INT && sizeof(int) == 4) || dt == MPI_INT32_T || dt == MPI_UINT32_T ||
		      (dt == MPI_UNSIGNED && sizeof(unsigned) == 4);
	bool is_float = dt == MPI_FLOAT && cm.cfg.floats;

	if (!is_int && !is_float)
		return -1 - W_TYPE;
	if (comm != MPI_COMM_WORLD && (cm.multiple || PMPI_Comm_compare(comm, MPI_COMM_WORLD, &cmp) != MPI_SUCCESS ||
				       (cmp != MPI_IDENT && cmp != MPI_CONGRUENT)))
		return -1 - W_COMM;
	if (count <= 0 || (uint64_t)count * 4 < cm.cfg.min_bytes)
		return -1 - W_SMALL;
	/* block ids: nblocks x (max_failures + 2) of them (canary_host.h) */
	uint64_t blocks = ((uint64_t)count + cm.cfg.elements - 1) / cm.cfg.elements;

	if (cm.cfg.algo != LH_ALGO_RING && blocks * (cm.cfg.max_failures + 2) > LH_BLOCK_IDS)
		return -1 - W_LARGE;
	return is_float;
}

static void timed_out(size_t n)
{
	const struct lh_req *r = cm.next ? cm.req[(cm.next - 1) % CM_TENANTS] : NULL;
	const struct lh_ar_stats *s = r ? lh_req_stats(r) : NULL;

	say("an allreduce of %zu elements through Canary did not finish within CANARY_MPI_TIMEOUT (%.1f s): a rank or "
	    "the fabric stopped answering; aborting the job (call %u: frames sent %" PRIu64 ", received %" PRIu64
	    ", retransmission requests %" PRIu64 "; send failures %" PRIu64 ")", n, (double)cm.cfg.timeout / 1e12,
	    cm.next, s ? s->frames_sent : 0, s ? s->frames_recv : 0, s ? s->retx_requests + s->nacks : 0,
	    cm.st.tx_dropped);
	PMPI_Abort(MPI_COMM_WORLD, 1);
}

/*
 * float_sum - @out = the sum of @in over the ranks of @comm as fixed point
 * (see the DOC above). Returns 0, 1 when a value is not finite on some
 * rank (every rank then returns 1: the exponent pass says so to all), or
 * -EADDRINUSE or -ECANCELED (canary_sum(); @out untouched).
 */
static int float_sum(const float *in, float *out, size_t n, MPI_Comm comm)
{
	size_t E = cm.cfg.elements, nb = (n + E - 1) / E;
	int *ex = xrealloc(NULL, nb * sizeof(int)), *all = xrealloc(NULL, nb * sizeof(int));
	int32_t *q = xrealloc(NULL, n * sizeof(int32_t)), *r = xrealloc(NULL, n * sizeof(int32_t));
	unsigned k = 0;
	int rc = 0;

	while ((1u << k) < (unsigned)cm.size)
		k++;
	for (size_t b = 0; b < nb; b++) {
		float m = 0;
		bool finite = true;

		for (size_t i = b * E; i < n && i < (b + 1) * E; i++) {
			finite = finite && isfinite(in[i]);
			m = fabsf(in[i]) > m ? fabsf(in[i]) : m;
		}
		if (!finite)
			ex[b] = INT_MAX;
		else if (m == 0)
			ex[b] = INT_MIN;
		else
			(void)frexpf(m, &ex[b]);
	}
	PMPI_Allreduce(ex, all, (int)nb, MPI_INT, MPI_MAX, comm);
	for (size_t b = 0; b < nb && !rc; b++)
		rc = all[b] == INT_MAX;
	if (rc)
		goto out;
	/* every |x| of block b is below 2^all[b]: scaled by 2^s it is at most 2^(30-k) */
	for (size_t i = 0; i < n; i++) {
		int e = all[i / E];

		q[i] = e == INT_MIN ? 0 : (int32_t)llrint(ldexp((double)in[i], 30 - (int)k - e));
	}
	rc = canary_sum(q, r, n, cm.cfg.timeout, comm);
	if (rc == -ETIMEDOUT)
		timed_out(n);
	if (rc)
		goto out;
	for (size_t i = 0; i < n; i++) {
		int e = all[i / E];

		out[i] = e == INT_MIN ? 0.0f : (float)ldexp((double)r[i], e + (int)k - 30);
	}
out:
	free(ex);
	free(all);
	free(q);
	free(r);
	return rc;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
	int kind = classify(sendbuf, count, dt, op, comm);
	const void *in = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;	/* canary_sum copies it */

	if (kind < 0) {
		__atomic_add_fetch(&cm.st.fallen[-1 - kind], 1, __ATOMIC_RELAXED);
		return PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
	}
	pthread_mutex_lock(&cm.call_mu);
	if (kind == 1) {
		int rc = float_sum(in, recvbuf, (size_t)count, comm);

		if (rc) {
			if (rc < 0)
				cm_fail(heard_why(rc == -ECANCELED));	/* this call and the later ones go to PMPI */
			__atomic_add_fetch(&cm.st.fallen[rc < 0 ? W_OFF : W_NONFINITE], 1, __ATOMIC_RELAXED);
			pthread_mutex_unlock(&cm.call_mu);
			return PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
		}
		cm.st.calls_float++;
	} else {
		int rc = canary_sum(in, recvbuf, (size_t)count, cm.cfg.timeout, comm);

		if (rc == -ETIMEDOUT)
			timed_out((size_t)count);
		if (rc) {
			cm_fail(heard_why(rc == -ECANCELED));	/* recvbuf holds the input again (MPI_IN_PLACE) */
			__atomic_add_fetch(&cm.st.fallen[W_OFF], 1, __ATOMIC_RELAXED);
			pthread_mutex_unlock(&cm.call_mu);
			return PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
		}
		cm.st.calls_int++;
	}
	cm.st.bytes += (uint64_t)count * 4;
	pthread_mutex_unlock(&cm.call_mu);
	return MPI_SUCCESS;
}

int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);

	if (rc == MPI_SUCCESS)
		cm_start();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);

	if (rc != MPI_SUCCESS)
		return rc;
	cm.multiple = *provided == MPI_THREAD_MULTIPLE;
	cm_start();
	return rc;
}

static void report(void)
{
	uint64_t fallen = 0;
	char why[256];
	size_t o = 0;

	for (int w = 0; w < W_NWHY; w++) {
		fallen += cm.st.fallen[w];
		o += (size_t)snprintf(why + o, sizeof(why) - o, "%s%s %" PRIu64, w ? ", " : "", why_name[w],
				      cm.st.fallen[w]);
	}
	say("canary %" PRIu64 " calls (int32 %" PRIu64 ", float %" PRIu64 "), %" PRIu64 " bytes, %.6f s, "
	    "retransmissions %" PRIu64 ", frames sent %" PRIu64 " received %" PRIu64 "; fell through %" PRIu64
	    " (%s); algo %s on %s, paced at %" PRIu64 " bit/s (%s), run %d, frames of another run %" PRIu64
	    "; job %016" PRIx64 ", hellos of other jobs %" PRIu64,
	    cm.st.calls_int + cm.st.calls_float,
	    cm.st.calls_int, cm.st.calls_float, cm.st.bytes, cm.st.seconds, cm.st.retx, cm.st.frames_sent,
	    cm.st.frames_recv, fallen, why, lh_algo_name(cm.cfg.algo), cm.cfg.ifname[0] ? cm.cfg.ifname : "-",
	    cm.cfg.rate, cm.cfg.rate_from ? cm.cfg.rate_from : "-", cm.cfg.run > 0 ? cm.cfg.run : 0, cm.st.other_run,
	    cm.job, cm.st.hellos_other);
}

/*
 * MPI_Finalize - every request's completion barrier, then every rank's
 * (PMPI_Barrier, the progress thread still answering those that wait for
 * this rank), then the report and the rest of MPI.
 */
int MPI_Finalize(void)
{
	if (cm.thread_on) {
		uint64_t until = mono_ns() + cm.cfg.timeout / LH_NS;
		bool done = false;

		while (!done && mono_ns() < until) {
			pthread_mutex_lock(&cm.mu);
			done = true;
			for (unsigned i = 0; i < CM_TENANTS; i++)
				done = done && (!cm.req[i] || lh_req_done(cm.req[i]));
			pthread_mutex_unlock(&cm.mu);
			if (!done)
				usleep(200);
		}
		if (!done)
			timed_out(0);
		PMPI_Barrier(MPI_COMM_WORLD);
		pthread_mutex_lock(&cm.mu);
		uint64_t other = cm.other_job;
		unsigned t0 = cm.other_tenant, nt = cm.other_tenants;
		pthread_mutex_unlock(&cm.mu);
		close_all();
		if (other)	/* after the last call's check: no result of this job held its frames */
			say("job %016" PRIx64 " (tenants %u..%u) heard the hello of job %016" PRIx64 " (tenants %u..%u) "
			    "after its last call through Canary (give each job its own CANARY_MPI_TENANT, 4 apart)",
			    cm.job, cm.cfg.tenant, cm.cfg.tenant + CM_TENANTS - 1, other, t0, t0 + nt - 1);
	}
	if (cm.cfg.report)
		report();
	return PMPI_Finalize();
}
