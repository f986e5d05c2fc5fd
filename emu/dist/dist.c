// SPDX-License-Identifier: MIT
/*
 * DOC: dist.c - the ZeroMQ transport between ranks. See dist.h for the
 * socket patterns and the message format.
 *
 * All socket calls happen either before the workers start (join), in the
 * serial section of the window barrier (exchange; the barrier is a full
 * memory barrier, which is what ZeroMQ asks for when a socket moves
 * between threads), or after the workers stopped (gather).
 */
#include "emu/dist/dist.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "emu/engine/util.h"

#define EP_MAX 128
#define REASON_MAX 200
#define TICK_MS 100
#define STASH_MAX (4 * EMU_DIST_MAX_RANKS)
#define PHASE_RESULT UINT64_MAX
/*
 * ZMQ_MAXMSGSIZE bounds the handshake's commands too (CURVE's INITIATE
 * carries a vouch and metadata) and CURVE frames carry a nonce and a MAC:
 * the join sockets take their largest message plus this.
 */
#define ZMTP_SLACK 1024
/*
 * Messages queued per connection and direction. A rank never has more than
 * a few in flight to another: one WINDOW per window, and it sends the next
 * only after it holds every rank's, then RESULT and ABORT. The bound is for
 * strangers: what they send waits in at most this many messages per
 * connection until it is read and refused.
 */
#define QUEUE_MSGS 16
/* a send that cannot queue (the peer stopped reading) fails after this */
#define SEND_WAIT_MS 10000
/* refused join requests: one line, then at most one per this much wall time */
#define REFUSE_LOG_NS 1000000000ULL

struct hello {
	uint64_t fingerprint;
	uint32_t nranks;
	uint32_t workers;
	char endpoint[EP_MAX];
	uint8_t pub[32];
};

struct welcome {
	uint32_t nranks;
	uint32_t pad;
	uint32_t wbase[EMU_DIST_MAX_RANKS + 1];
	char endpoint[EMU_DIST_MAX_RANKS][EP_MAX];
	uint8_t pub[EMU_DIST_MAX_RANKS][32];
};

_Static_assert(sizeof(struct hello) == EMU_DIST_HELLO_BYTES && sizeof(struct welcome) == EMU_DIST_WELCOME_BYTES,
	       "dist.h states the payload sizes");

struct stashed {
	zmq_msg_t msg;
	unsigned from;
	uint16_t type;
	uint32_t run;
	uint64_t window;
};

struct emu_dist {
	struct emu_dist_cfg cfg;
	void *ctx;
	void *router;		/* rank 0 */
	void *dealer;		/* ranks != 0 */
	void *pull;
	void *push[EMU_DIST_MAX_RANKS];
	uint64_t run_id;
	uint32_t run;
	uint64_t window;
	uint64_t sync_ns;	/* wall clock when the last exchange (join, window, results) completed */
	unsigned wbase[EMU_DIST_MAX_RANKS + 1];
	char endpoint[EMU_DIST_MAX_RANKS][EP_MAX];
	uint8_t pub[EMU_DIST_MAX_RANKS][32];
	/* the window's received messages, kept until the next exchange */
	zmq_msg_t held[EMU_DIST_MAX_RANKS];
	bool holding[EMU_DIST_MAX_RANKS];
	struct stashed stash[STASH_MAX];
	unsigned nstash;
	/* CURVE */
	bool curve;
	uint8_t secret[32];
	uint8_t mypub[32];
	uint8_t coord_pub[32];
	uint8_t (*allow)[32];
	unsigned nallow;
	pthread_t zap;
	bool zap_running;
	atomic_bool zap_quit;
	atomic_uint_fast64_t auth_rejected;
	struct emu_dist_stats st;
	bool failed;
	char err[512];
};

/* ---------- small helpers ---------- */

static void fail(struct emu_dist *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct emu_dist *d, const char *fmt, ...)
{
	va_list ap;

	if (d->failed)
		return;
	d->failed = true;
	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
}

unsigned emu_dist_rank(const struct emu_dist *d) { return d->cfg.rank; }
unsigned emu_dist_nranks(const struct emu_dist *d) { return d->cfg.nranks; }
unsigned emu_dist_wbase(const struct emu_dist *d, unsigned rank) { return d->wbase[rank]; }
const char *emu_dist_error(const struct emu_dist *d) { return d->err; }

unsigned emu_dist_rank_of(const struct emu_dist *d, unsigned w)
{
	unsigned q = 0;

	while (q + 1 < d->cfg.nranks && d->wbase[q + 1] <= w)
		q++;
	return q;
}

void emu_dist_stats(const struct emu_dist *d, struct emu_dist_stats *st)
{
	*st = d->st;
	st->auth_rejected = atomic_load(&((struct emu_dist *)d)->auth_rejected);
}

const char *emu_dist_check_header(const struct emu_dist_hdr *h, size_t len, uint64_t run_id, unsigned nranks,
				  unsigned self)
{
	if (len < sizeof(*h))
		return "shorter than a header";
	if (h->magic != EMU_DIST_MAGIC)
		return "bad magic";
	if (h->version != EMU_DIST_VERSION)
		return "unknown version";
	if (h->type < EMU_DIST_HELLO || h->type > EMU_DIST_ABORT)
		return "unknown type";
	if (h->len != len - sizeof(*h))
		return "length does not match the message";
	if (h->type == EMU_DIST_HELLO) {
		if (h->rank == 0 || h->rank >= nranks)
			return "rank out of range";
		return NULL;
	}
	if (h->run_id != run_id)
		return "from another run";
	if (h->rank >= nranks || h->rank == self)
		return "rank out of range";
	return NULL;
}

const char *emu_dist_check_hello(void *p, size_t len, unsigned nranks, uint64_t fingerprint)
{
	struct hello *in = p;

	if (len != sizeof(*in))
		return "HELLO of the wrong size";
	in->endpoint[EP_MAX - 1] = 0;
	if (in->nranks != nranks)
		return "a different --ranks";
	if (in->fingerprint != fingerprint)
		return "a different scenario (options or build differ)";
	if (in->workers < 1 || in->workers > 4096)
		return "a bad worker count";
	if (strncmp(in->endpoint, "tcp://", 6))
		return "a bad data endpoint";
	return NULL;
}

const char *emu_dist_check_welcome(void *p, size_t len, unsigned nranks, unsigned rank, unsigned workers)
{
	struct welcome *w = p;

	if (len != sizeof(*w))
		return "WELCOME of the wrong size";
	if (w->nranks != nranks || nranks > EMU_DIST_MAX_RANKS || rank >= nranks || w->wbase[0] != 0)
		return "a different --ranks";
	for (unsigned q = 0; q < nranks; q++) {
		w->endpoint[q][EP_MAX - 1] = 0;
		if (w->wbase[q + 1] <= w->wbase[q])
			return "a bad worker count";
		if (strncmp(w->endpoint[q], "tcp://", 6))
			return "a bad data endpoint";
	}
	if (w->wbase[rank + 1] - w->wbase[rank] != workers)
		return "not this rank's worker count";
	return NULL;
}

static void hdr_fill(struct emu_dist *d, struct emu_dist_hdr *h, uint16_t type, uint64_t window, size_t len)
{
	*h = (struct emu_dist_hdr){
		.magic = EMU_DIST_MAGIC, .version = EMU_DIST_VERSION, .type = type, .run_id = d->run_id,
		.rank = d->cfg.rank, .run = d->run, .window = window, .len = (uint32_t)len,
	};
}

/* Send header + @len payload bytes on @s (a copy). */
static int send_msg(struct emu_dist *d, void *s, uint16_t type, uint64_t window, const void *p, size_t len)
{
	zmq_msg_t m;
	struct emu_dist_hdr h;

	if (zmq_msg_init_size(&m, sizeof(h) + len))
		return -ENOMEM;
	hdr_fill(d, &h, type, window, len);
	memcpy(zmq_msg_data(&m), &h, sizeof(h));
	if (len)
		memcpy((uint8_t *)zmq_msg_data(&m) + sizeof(h), p, len);
	if (zmq_msg_send(&m, s, 0) < 0) {
		zmq_msg_close(&m);
		return -EIO;
	}
	d->st.msgs_sent++;
	d->st.bytes_sent += sizeof(h) + len;
	return 0;
}

/* rank 0 of --processes: has a child died? */
static bool child_died(struct emu_dist *d)
{
	if (!d->cfg.children)
		return false;
	for (unsigned q = 1; q < d->cfg.nranks; q++) {
		int st;
		pid_t pid = d->cfg.children[q];

		if (pid <= 0 || waitpid(pid, &st, WNOHANG) != pid)
			continue;
		if (WIFSIGNALED(st))
			fail(d, "rank %u (pid %d) was killed by signal %d", q, (int)pid, WTERMSIG(st));
		else
			fail(d, "rank %u (pid %d) exited with status %d before the run ended", q, (int)pid,
			     WEXITSTATUS(st));
		return true;
	}
	return false;
}

/* ---------- CURVE: keys and the ZAP handler ---------- */

static int read_keys(struct emu_dist *d, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[256];
	unsigned ln = 0;
	bool have_secret = false, have_coord = false;

	struct stat st;

	if (!f) {
		int e = errno;

		snprintf(err, errlen, "--curve: %s: %s", path, strerror(e));
		return -e;
	}
	/* a secret others can read is no secret: refuse it, as ssh does */
	if (fstat(fileno(f), &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO))) {
		snprintf(err, errlen, "--curve: %s is accessible by others (mode %03o): chmod 600 it", path,
			 (unsigned)(st.st_mode & 0777));
		fclose(f);
		return -EACCES;
	}
	while (fgets(line, sizeof(line), f)) {
		char kw[32], key[64];
		uint8_t bin[32];

		ln++;
		if (line[0] == '#' || strspn(line, " \t\r\n") == strlen(line))
			continue;
		if (sscanf(line, "%31s %63s", kw, key) != 2 || strlen(key) != 40 || !zmq_z85_decode(bin, key)) {
			snprintf(err, errlen, "%s:%u: expected 'secret|coordinator|allow KEY' with a 40-character Z85 key",
				 path, ln);
			fclose(f);
			return -EINVAL;
		}
		if (!strcmp(kw, "secret")) {
			memcpy(d->secret, bin, 32);
			have_secret = true;
		} else if (!strcmp(kw, "coordinator")) {
			memcpy(d->coord_pub, bin, 32);
			have_coord = true;
		} else if (!strcmp(kw, "allow")) {
			d->allow = emu_xrealloc(d->allow, (d->nallow + 1) * sizeof(*d->allow));
			memcpy(d->allow[d->nallow++], bin, 32);
		} else {
			snprintf(err, errlen, "%s:%u: unknown keyword '%s' (secret, coordinator, allow)", path, ln, kw);
			fclose(f);
			return -EINVAL;
		}
	}
	fclose(f);
	if (!have_secret || !have_coord || !d->nallow) {
		snprintf(err, errlen, "--curve: %s needs a 'secret', a 'coordinator' and at least one 'allow' line", path);
		return -EINVAL;
	}
	char s85[41], p85[41];

	zmq_z85_encode(s85, d->secret, 32);
	if (zmq_curve_public(p85, s85) || !zmq_z85_decode(d->mypub, p85)) {
		snprintf(err, errlen, "--curve: %s: the secret key is not usable", path);
		return -EINVAL;
	}
	d->curve = true;
	return 0;
}

int emu_dist_check_keyfile(const char *path, char *err, size_t errlen)
{
	struct emu_dist *d = emu_xcalloc(1, sizeof(*d));
	int rc = read_keys(d, path, err, errlen);

	free(d->allow);
	free(d);
	return rc;
}

static bool key_allowed(const struct emu_dist *d, const uint8_t *k)
{
	for (unsigned i = 0; i < d->nallow; i++)
		if (!memcmp(d->allow[i], k, 32))
			return true;
	return false;
}

/* ZAP (RFC 27): answer every authentication request of this context. */
static void *zap_main(void *arg)
{
	struct emu_dist *d = arg;
	void *s = zmq_socket(d->ctx, ZMQ_REP);
	int linger = 0;

	zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
	if (zmq_bind(s, "inproc://zeromq.zap.01")) {
		zmq_close(s);
		return NULL;
	}
	while (!atomic_load(&d->zap_quit)) {
		zmq_pollitem_t it = { .socket = s, .events = ZMQ_POLLIN };

		if (zmq_poll(&it, 1, TICK_MS) <= 0)
			continue;
		zmq_msg_t part[8];
		int n = 0, more = 1;

		while (more) {
			zmq_msg_t tmp;

			zmq_msg_init(&tmp);
			if (zmq_msg_recv(&tmp, s, 0) < 0) {
				zmq_msg_close(&tmp);
				break;
			}
			more = zmq_msg_more(&tmp);
			if (n < 8)
				part[n++] = tmp;
			else
				zmq_msg_close(&tmp);
		}
		/* version, request id, domain, address, identity, mechanism, key */
		bool ok = n >= 7 && zmq_msg_size(&part[5]) == 5 && !memcmp(zmq_msg_data(&part[5]), "CURVE", 5) &&
			  zmq_msg_size(&part[6]) == 32 && key_allowed(d, zmq_msg_data(&part[6]));

		if (!ok)
			atomic_fetch_add(&d->auth_rejected, 1);
		const char *code = ok ? "200" : "400";
		const char *text = ok ? "OK" : "unknown key";

		zmq_send(s, "1.0", 3, ZMQ_SNDMORE);
		if (n >= 2)
			zmq_send(s, zmq_msg_data(&part[1]), zmq_msg_size(&part[1]), ZMQ_SNDMORE);
		else
			zmq_send(s, "", 0, ZMQ_SNDMORE);
		zmq_send(s, code, 3, ZMQ_SNDMORE);
		zmq_send(s, text, strlen(text), ZMQ_SNDMORE);
		zmq_send(s, "", 0, ZMQ_SNDMORE);
		zmq_send(s, "", 0, 0);
		for (int i = 0; i < n; i++)
			zmq_msg_close(&part[i]);
	}
	zmq_close(s);
	return NULL;
}

static int curve_server(struct emu_dist *d, void *s)
{
	int one = 1;

	if (!d->curve)
		return 0;
	return zmq_setsockopt(s, ZMQ_CURVE_SERVER, &one, sizeof(one)) ||
	       zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, d->secret, 32) ||
	       zmq_setsockopt(s, ZMQ_ZAP_DOMAIN, "canary", 6) ? -EINVAL : 0;
}

static int curve_client(struct emu_dist *d, void *s, const uint8_t *server)
{
	if (!d->curve)
		return 0;
	return zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, server, 32) ||
	       zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, d->mypub, 32) ||
	       zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, d->secret, 32) ? -EINVAL : 0;
}

/*
 * new_socket - a socket of @type that takes messages of at most @max_msg
 * bytes: libzmq drops a peer announcing a larger one before allocating it,
 * so a stranger cannot make a rank allocate what it claims. Its queues
 * hold QUEUE_MSGS messages per peer connection each way: a full receive
 * queue stops libzmq reading that connection (TCP pushes back on the
 * sender), a ROUTER drops what it cannot queue to a peer that does not
 * read, and a PUSH's send waits (up to SEND_WAIT_MS).
 */
static void *new_socket(struct emu_dist *d, int type, int64_t max_msg)
{
	void *s = zmq_socket(d->ctx, type);
	int hwm = QUEUE_MSGS, linger = 2000, wait_ms = SEND_WAIT_MS;

	if (!s)
		return NULL;
	zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof(hwm));
	zmq_setsockopt(s, ZMQ_RCVHWM, &hwm, sizeof(hwm));
	zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
	zmq_setsockopt(s, ZMQ_SNDTIMEO, &wait_ms, sizeof(wait_ms));
	zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &max_msg, sizeof(max_msg));
	return s;
}

/* ---------- join ---------- */

/* What rank 0 knows of the ranks joining: who came, their HELLO, where to answer */
struct joining {
	bool joined[EMU_DIST_MAX_RANKS];
	zmq_msg_t ident[EMU_DIST_MAX_RANKS];	/* ROUTER identity of each joined rank */
	struct hello hl[EMU_DIST_MAX_RANKS];
	unsigned njoined;
	char refused[REASON_MAX + 32];		/* the first HELLO of another scenario */
	uint64_t refused_ns;			/* when it came */
	uint64_t logged_ns;			/* when the last refusal was logged */
	uint64_t unlogged;			/* refusals since then, not logged */
};

/*
 * coord_bind - rank 0's ROUTER socket, bound to --coordinator, and its
 * endpoint handed to the local ranks (--processes) through the pipe.
 */
static int coord_bind(struct emu_dist *d, char *err, size_t errlen, bool *bad_input)
{
	const struct emu_dist_cfg *c = &d->cfg;
	const char *where = c->coordinator ? c->coordinator : "tcp://127.0.0.1:*";
	char ep[EP_MAX];
	size_t eplen = sizeof(ep);

	d->router = new_socket(d, ZMQ_ROUTER, (int64_t)(sizeof(struct emu_dist_hdr) + sizeof(struct hello) + ZMTP_SLACK));
	if (curve_server(d, d->router) || zmq_bind(d->router, where)) {
		snprintf(err, errlen, "--coordinator: cannot bind %s: %s", where, zmq_strerror(zmq_errno()));
		*bad_input = true;
		return -EADDRNOTAVAIL;
	}
	zmq_getsockopt(d->router, ZMQ_LAST_ENDPOINT, ep, &eplen);
	if (c->endpoint_fd < 0)
		return 0;
	/*
	 * One fixed-size record per local rank: a pipe write of at most
	 * PIPE_BUF bytes is atomic and every reader reads exactly one
	 * record, so ranks reading the same pipe at once cannot mix them.
	 */
	char line[EMU_DIST_EP_RECORD] = { 0 };

	snprintf(line, sizeof(line), "%s", ep);
	for (unsigned q = 1; q < c->nranks; q++)
		if (write(c->endpoint_fd, line, sizeof(line)) != (ssize_t)sizeof(line)) {
			snprintf(err, errlen, "cannot hand the coordinator endpoint to the local ranks");
			return -EIO;
		}
	return 0;
}

/* coord_missing - the join deadline passed: name the ranks that did not come */
static void coord_missing(struct emu_dist *d, const struct joining *j, char *err, size_t errlen)
{
	const struct emu_dist_cfg *c = &d->cfg;
	char missing[256] = "";
	size_t o = 0;

	for (unsigned q = 1; q < c->nranks && o < sizeof(missing) - 8; q++)
		if (!j->joined[q])
			o += (size_t)snprintf(missing + o, sizeof(missing) - o, " %u", q);
	snprintf(err, errlen, "rank(s)%s did not join within %.1f s (%llu messages rejected, %llu unknown keys)%s",
		 missing, 10.0 * c->timeout_ms / 1000, (unsigned long long)d->st.rejected,
		 (unsigned long long)atomic_load(&d->auth_rejected), j->refused);
}

/* coord_check_hello - why the message m of len bytes is not a HELLO rank 0 can accept, or NULL */
static const char *coord_check_hello(struct emu_dist *d, const struct joining *j, zmq_msg_t *m, size_t len,
				     struct emu_dist_hdr *h, struct hello *in)
{
	const char *why;

	memset(h, 0, sizeof(*h));
	memcpy(h, zmq_msg_data(m), len < sizeof(*h) ? len : sizeof(*h));
	why = emu_dist_check_header(h, len, d->run_id, d->cfg.nranks, 0);
	if (!why && h->type != EMU_DIST_HELLO)
		why = "not a HELLO";
	if (!why && h->len != sizeof(*in))
		why = "HELLO of the wrong size";
	if (!why && j->joined[h->rank])
		why = "rank already joined";
	if (!why) {
		/* a message's bytes need not be aligned for struct hello: check a copy */
		memcpy(in, (uint8_t *)zmq_msg_data(m) + sizeof(*h), sizeof(*in));
		why = emu_dist_check_hello(in, h->len, d->cfg.nranks, d->cfg.fingerprint);
	}
	return why;
}

/*
 * log_refusal - one line per refused join request, but at most one per
 * REFUSE_LOG_NS: a stranger's flood must not flood the log too. The line
 * after a quiet spell counts the refusals it did not log.
 */
static void log_refusal(struct joining *j, const char *why)
{
	uint64_t now = emu_wall_ns();

	if (j->logged_ns && now - j->logged_ns < REFUSE_LOG_NS) {
		j->unlogged++;
		return;
	}
	if (j->unlogged)
		fprintf(stderr, "canary-emu: rank 0: refused a join request: %s (and %llu more since the last line)\n",
			why, (unsigned long long)j->unlogged);
	else
		fprintf(stderr, "canary-emu: rank 0: refused a join request: %s\n", why);
	j->logged_ns = now;
	j->unlogged = 0;
}

/*
 * coord_refuse - count a refused join request; answer it when it is a
 * well-formed HELLO, so that the rank can say why it stops. Takes id.
 */
static void coord_refuse(struct emu_dist *d, struct joining *j, zmq_msg_t *id, const struct emu_dist_hdr *h,
			 size_t len, const char *why)
{
	d->st.rejected++;
	if (len >= sizeof(*h) && h->magic == EMU_DIST_MAGIC && h->type == EMU_DIST_HELLO) {
		char reason[REASON_MAX];

		snprintf(reason, sizeof(reason), "the coordinator refused rank %u: %s", h->rank, why);
		zmq_msg_send(id, d->router, ZMQ_SNDMORE);
		send_msg(d, d->router, EMU_DIST_REJECT, 0, reason, sizeof(reason));
	} else {
		zmq_msg_close(id);
	}
	log_refusal(j, why);
	/*
	 * A well-formed HELLO with another scenario or --ranks is a
	 * misconfigured rank (it stops on the REJECT and says why) or, without
	 * CURVE, maybe a stranger's: join_coordinator decides when rank 0
	 * stops. Other refusals: keep waiting for the real ranks.
	 */
	if (!strncmp(why, "a different", 11) && !j->refused[0]) {
		snprintf(j->refused, sizeof(j->refused), "; refused rank %u: %s", h->rank, why);
		j->refused_ns = emu_wall_ns();
	}
}

/* coord_recv_hello - take one join request off the ROUTER socket: accept it or refuse it */
static void coord_recv_hello(struct emu_dist *d, struct joining *j)
{
	zmq_msg_t id, m;
	struct emu_dist_hdr h;
	struct hello in;
	const char *why;
	size_t len;

	zmq_msg_init(&id);
	zmq_msg_init(&m);
	if (zmq_msg_recv(&id, d->router, 0) < 0 || !zmq_msg_more(&id) || zmq_msg_recv(&m, d->router, 0) < 0) {
		zmq_msg_close(&id);
		zmq_msg_close(&m);
		d->st.rejected++;
		return;
	}
	while (zmq_msg_more(&m)) {	/* extra frames: drain and reject */
		zmq_msg_close(&m);
		zmq_msg_init(&m);
		zmq_msg_recv(&m, d->router, 0);
		d->st.rejected++;
	}
	len = zmq_msg_size(&m);
	why = coord_check_hello(d, j, &m, len, &h, &in);
	zmq_msg_close(&m);
	if (why) {
		coord_refuse(d, j, &id, &h, len, why);
		return;
	}
	j->joined[h.rank] = true;
	j->njoined++;
	j->hl[h.rank] = in;
	j->ident[h.rank] = id;
}

/* coord_welcome - every rank's workers, endpoint and key, sent to all and kept */
static void coord_welcome(struct emu_dist *d, struct joining *j)
{
	unsigned P = d->cfg.nranks;
	struct welcome w;

	memset(&w, 0, sizeof(w));
	w.nranks = P;
	for (unsigned q = 0; q < P; q++) {
		w.wbase[q + 1] = w.wbase[q] + j->hl[q].workers;
		memcpy(w.endpoint[q], j->hl[q].endpoint, EP_MAX);
		memcpy(w.pub[q], j->hl[q].pub, 32);
	}
	for (unsigned q = 1; q < P; q++) {
		zmq_msg_send(&j->ident[q], d->router, ZMQ_SNDMORE);
		send_msg(d, d->router, EMU_DIST_WELCOME, 0, &w, sizeof(w));
	}
	memcpy(d->wbase, w.wbase, sizeof(d->wbase));
	memcpy(d->endpoint, w.endpoint, sizeof(d->endpoint));
	memcpy(d->pub, w.pub, sizeof(d->pub));
}

/*
 * join_coordinator - rank 0: bind, wait up to ten peer timeouts for a
 * valid HELLO from every other rank (refusing and counting the rest),
 * then send every rank the WELCOME.
 */
static int join_coordinator(struct emu_dist *d, char *err, size_t errlen, bool *bad_input)
{
	const struct emu_dist_cfg *c = &d->cfg;
	struct joining *j = emu_xcalloc(1, sizeof(*j));
	uint64_t deadline;
	int rc = coord_bind(d, err, errlen, bad_input);

	if (rc)
		goto out;
	/* a random run id: messages of other runs on the same endpoints are refused */
	d->run_id = emu_hash64(emu_wall_ns() ^ ((uint64_t)getpid() << 32) ^ c->fingerprint);
	j->joined[0] = true;
	j->njoined = 1;
	j->hl[0].workers = c->workers;
	memcpy(j->hl[0].endpoint, d->endpoint[0], EP_MAX);
	memcpy(j->hl[0].pub, d->mypub, 32);
	deadline = emu_wall_ns() + 10ULL * c->timeout_ms * 1000000ULL;
	while (j->njoined < c->nranks) {
		zmq_pollitem_t it = { .socket = d->router, .events = ZMQ_POLLIN };

		if (child_died(d)) {
			snprintf(err, errlen, "%s", d->err);
			rc = -EPIPE;
			goto fail;
		}
		/*
		 * A rank set up for another scenario (or --ranks) stops at once
		 * on the REJECT. With CURVE its HELLO came from a listed key:
		 * rank 0 stops at once too. Without, it could be a stranger's:
		 * rank 0 waits one --peer-timeout more for the real rank.
		 */
		if (j->refused[0] &&
		    (d->curve || emu_wall_ns() - j->refused_ns > (uint64_t)c->timeout_ms * 1000000ULL)) {
			snprintf(err, errlen, "the run cannot start: %s", j->refused + 2);
			*bad_input = true;
			rc = -ECONNREFUSED;
			goto fail;
		}
		if (emu_wall_ns() > deadline) {
			coord_missing(d, j, err, errlen);
			rc = -ETIMEDOUT;
			goto fail;
		}
		if (zmq_poll(&it, 1, TICK_MS) > 0)
			coord_recv_hello(d, j);
	}
	coord_welcome(d, j);
	if (j->unlogged)
		fprintf(stderr, "canary-emu: rank 0: refused %llu more join requests (not logged one by one)\n",
			(unsigned long long)j->unlogged);
	/*
	 * Nothing more comes to the coordinator: close it (the WELCOMEs are
	 * still delivered, within the linger time), so that a stranger's
	 * messages after the join are refused by the kernel, not queued here.
	 */
	zmq_close(d->router);
	d->router = NULL;
	rc = 0;
	goto out;
fail:
	for (unsigned q = 1; q < c->nranks; q++)
		if (j->joined[q])
			zmq_msg_close(&j->ident[q]);
out:
	free(j);
	return rc;
}

static int join_rank(struct emu_dist *d, char *err, size_t errlen, bool *bad_input)
{
	const struct emu_dist_cfg *c = &d->cfg;
	struct hello in = { .fingerprint = c->fingerprint, .nranks = c->nranks, .workers = c->workers };

	memcpy(in.endpoint, d->endpoint[c->rank], EP_MAX);
	memcpy(in.pub, d->mypub, 32);
	d->dealer = new_socket(d, ZMQ_DEALER, (int64_t)(sizeof(struct emu_dist_hdr) + sizeof(struct welcome) + ZMTP_SLACK));
	if (curve_client(d, d->dealer, d->coord_pub) || zmq_connect(d->dealer, c->coordinator)) {
		snprintf(err, errlen, "--coordinator: cannot connect to %s: %s", c->coordinator, zmq_strerror(zmq_errno()));
		*bad_input = true;
		return -EINVAL;
	}
	if (send_msg(d, d->dealer, EMU_DIST_HELLO, 0, &in, sizeof(in))) {
		snprintf(err, errlen, "cannot send to the coordinator: %s", zmq_strerror(zmq_errno()));
		return -EIO;
	}
	uint64_t deadline = emu_wall_ns() + 10ULL * c->timeout_ms * 1000000ULL;

	for (;;) {
		zmq_pollitem_t it = { .socket = d->dealer, .events = ZMQ_POLLIN };

		if (emu_wall_ns() > deadline) {
			snprintf(err, errlen, "the coordinator %s did not answer within %.1f s%s", c->coordinator,
				 10.0 * c->timeout_ms / 1000, d->curve ? " (with --curve: is this rank's key allowed there?)" : "");
			return -ETIMEDOUT;
		}
		if (zmq_poll(&it, 1, TICK_MS) <= 0)
			continue;
		zmq_msg_t m;

		zmq_msg_init(&m);
		if (zmq_msg_recv(&m, d->dealer, 0) < 0) {
			zmq_msg_close(&m);
			continue;
		}
		size_t len = zmq_msg_size(&m);
		struct emu_dist_hdr h;

		memset(&h, 0, sizeof(h));
		memcpy(&h, zmq_msg_data(&m), len < sizeof(h) ? len : sizeof(h));
		/* the run id is learnt from the answer itself */
		const char *why = emu_dist_check_header(&h, len, h.run_id, c->nranks, c->rank);

		if (!why && h.rank != 0)
			why = "not from rank 0";
		if (!why && h.type == EMU_DIST_REJECT && h.len == REASON_MAX) {
			char reason[REASON_MAX];

			memcpy(reason, (uint8_t *)zmq_msg_data(&m) + sizeof(h), REASON_MAX);
			reason[REASON_MAX - 1] = 0;
			snprintf(err, errlen, "%s", reason);
			*bad_input = true;
			zmq_msg_close(&m);
			return -ECONNREFUSED;
		}
		if (!why && (h.type != EMU_DIST_WELCOME || h.len != sizeof(struct welcome)))
			why = "not a WELCOME";
		if (why) {
			d->st.rejected++;
			zmq_msg_close(&m);
			continue;
		}
		/* checked in an aligned copy: a message's bytes need not be aligned for it */
		struct welcome *w = emu_xmalloc(sizeof(*w));

		memcpy(w, (uint8_t *)zmq_msg_data(&m) + sizeof(h), sizeof(*w));
		zmq_msg_close(&m);
		if (emu_dist_check_welcome(w, sizeof(*w), c->nranks, c->rank, c->workers)) {
			free(w);
			d->st.rejected++;
			continue;
		}
		d->run_id = h.run_id;
		memcpy(d->wbase, w->wbase, sizeof(d->wbase));
		memcpy(d->endpoint, w->endpoint, sizeof(d->endpoint));
		memcpy(d->pub, w->pub, sizeof(d->pub));
		free(w);
		zmq_close(d->dealer);	/* the coordinator has nothing more to say */
		d->dealer = NULL;
		return 0;
	}
}

struct emu_dist *emu_dist_join(const struct emu_dist_cfg *cfg, char *err, size_t errlen, bool *bad_input)
{
	struct emu_dist *d = emu_xcalloc(1, sizeof(*d));
	char ep[EP_MAX + 16];
	size_t eplen = EP_MAX;

	*bad_input = false;
	d->cfg = *cfg;
	if (cfg->nranks < 1 || cfg->nranks > EMU_DIST_MAX_RANKS || cfg->rank >= cfg->nranks) {
		snprintf(err, errlen, "--rank: %u is not below --ranks %u (at most %d)", cfg->rank, cfg->nranks,
			 EMU_DIST_MAX_RANKS);
		*bad_input = true;
		free(d);
		return NULL;
	}
	if (cfg->rank && !cfg->coordinator) {
		snprintf(err, errlen, "--coordinator: needed for rank %u", cfg->rank);
		*bad_input = true;
		free(d);
		return NULL;
	}
	if (!d->cfg.timeout_ms)
		d->cfg.timeout_ms = 5000;
	if (!d->cfg.max_msg)
		d->cfg.max_msg = EMU_DIST_MAX_MSG;
	if (cfg->curve && read_keys(d, cfg->curve, err, errlen)) {
		*bad_input = true;
		free(d->allow);
		free(d);
		return NULL;
	}
	d->ctx = zmq_ctx_new();
	if (d->curve) {
		atomic_store(&d->zap_quit, false);
		if (pthread_create(&d->zap, NULL, zap_main, d) == 0)
			d->zap_running = true;
		/* the handler must be bound before a CURVE server accepts anyone */
		for (int i = 0; i < 100; i++) {
			void *probe = zmq_socket(d->ctx, ZMQ_REQ);
			int rc = zmq_connect(probe, "inproc://zeromq.zap.01");

			zmq_close(probe);
			if (rc == 0)
				break;
			usleep(10000);
		}
	}
	/* this rank's data socket */
	d->pull = new_socket(d, ZMQ_PULL, (int64_t)d->cfg.max_msg);
	snprintf(ep, sizeof(ep), "tcp://%s:*", cfg->bind ? cfg->bind : "127.0.0.1");
	if (curve_server(d, d->pull) || zmq_bind(d->pull, ep)) {
		snprintf(err, errlen, "--bind: cannot bind %s: %s", ep, zmq_strerror(zmq_errno()));
		*bad_input = true;
		emu_dist_close(d);
		return NULL;
	}
	zmq_getsockopt(d->pull, ZMQ_LAST_ENDPOINT, d->endpoint[cfg->rank], &eplen);
	int rc = cfg->rank == 0 ? join_coordinator(d, err, errlen, bad_input) : join_rank(d, err, errlen, bad_input);

	if (rc) {
		emu_dist_close(d);
		return NULL;
	}
	for (unsigned q = 0; q < cfg->nranks; q++) {
		if (q == cfg->rank)
			continue;
		d->push[q] = new_socket(d, ZMQ_PUSH, -1);	/* receives nothing */
		if (curve_client(d, d->push[q], d->pub[q]) || zmq_connect(d->push[q], d->endpoint[q])) {
			snprintf(err, errlen, "cannot connect to rank %u at %s: %s", q, d->endpoint[q],
				 zmq_strerror(zmq_errno()));
			emu_dist_close(d);
			return NULL;
		}
	}
	d->sync_ns = emu_wall_ns();
	return d;
}

void emu_dist_close(struct emu_dist *d)
{
	if (!d)
		return;
	/*
	 * After a failure, messages to a dead or frozen peer never leave:
	 * wait for them 200 ms (time enough for an ABORT to live ranks), not
	 * the 2 s a run that ended well gives its last messages.
	 */
	if (d->failed) {
		int linger = 200;
		void *socks[] = { d->router, d->dealer, d->pull };

		for (unsigned q = 0; q < EMU_DIST_MAX_RANKS; q++)
			if (d->push[q])
				zmq_setsockopt(d->push[q], ZMQ_LINGER, &linger, sizeof(linger));
		for (unsigned i = 0; i < 3; i++)
			if (socks[i])
				zmq_setsockopt(socks[i], ZMQ_LINGER, &linger, sizeof(linger));
	}
	for (unsigned q = 0; q < EMU_DIST_MAX_RANKS; q++) {
		if (d->holding[q])
			zmq_msg_close(&d->held[q]);
		if (d->push[q])
			zmq_close(d->push[q]);
	}
	for (unsigned i = 0; i < d->nstash; i++)
		zmq_msg_close(&d->stash[i].msg);
	if (d->router)
		zmq_close(d->router);
	if (d->dealer)
		zmq_close(d->dealer);
	if (d->pull)
		zmq_close(d->pull);
	if (d->zap_running) {
		atomic_store(&d->zap_quit, true);
		pthread_join(d->zap, NULL);
	}
	if (d->ctx)
		zmq_ctx_term(d->ctx);
	free(d->allow);
	free(d);
}

/* ---------- receiving ---------- */

/* The position of a message in the session: (run, phase). */
static bool is_future(const struct emu_dist *d, uint32_t run, uint16_t type, uint64_t window, uint64_t phase)
{
	uint64_t ph = type == EMU_DIST_RESULT ? PHASE_RESULT : window;

	return run > d->run || (run == d->run && ph > phase);
}

typedef bool (*want_fn)(struct emu_dist *d, unsigned from, zmq_msg_t *m, void *arg);

/*
 * Receive until @need ranks have delivered a message of @type at the
 * current run and @phase that @want accepted (it takes the message).
 * Future messages are stashed, the rest rejected. Return 0 or -1.
 */
static int wait_for(struct emu_dist *d, uint16_t type, uint64_t phase, bool *got, unsigned need, want_fn want,
		    void *arg)
{
	unsigned have = 0;
	uint64_t last = emu_wall_ns();
	/*
	 * A peer is silent for too long after --peer-timeout beyond the time
	 * this rank spent on the step itself since the last exchange (every
	 * rank does the same step: building a run's scenario, a window,
	 * gathering results): a slow step is not silence, and a rank that
	 * died between runs is found --peer-timeout after the others are
	 * ready.
	 */
	uint64_t limit = (uint64_t)d->cfg.timeout_ms * 1000000ULL + (d->sync_ns && last > d->sync_ns ? last - d->sync_ns : 0);

	/* first what came early */
	for (unsigned i = 0; i < d->nstash && have < need;) {
		struct stashed *s = &d->stash[i];
		uint64_t ph = s->type == EMU_DIST_RESULT ? PHASE_RESULT : s->window;

		if (s->run == d->run && s->type == type && ph == phase && !got[s->from]) {
			if (want(d, s->from, &s->msg, arg)) {
				got[s->from] = true;
				have++;
			} else {
				zmq_msg_close(&s->msg);
				d->st.rejected++;
			}
			d->stash[i] = d->stash[--d->nstash];
			continue;
		}
		i++;
	}
	while (have < need) {
		zmq_pollitem_t it = { .socket = d->pull, .events = ZMQ_POLLIN };
		int n = zmq_poll(&it, 1, TICK_MS);

		if (n <= 0) {
			if (child_died(d))
				return -EPIPE;
			if (emu_wall_ns() - last > limit) {
				char missing[256] = "";
				size_t o = 0;

				for (unsigned q = 0; q < d->cfg.nranks && o < sizeof(missing) - 8; q++)
					if (q != d->cfg.rank && !got[q])
						o += (size_t)snprintf(missing + o, sizeof(missing) - o, " %u", q);
				fail(d, "rank%s stopped answering (nothing for %.1f s in run %u, window %llu)", missing,
				     (double)limit / 1e9, d->run, (unsigned long long)(phase == PHASE_RESULT ? d->window : phase));
				return -ETIMEDOUT;
			}
			continue;
		}
		zmq_msg_t m;

		zmq_msg_init(&m);
		if (zmq_msg_recv(&m, d->pull, ZMQ_DONTWAIT) < 0) {
			zmq_msg_close(&m);
			continue;
		}
		size_t len = zmq_msg_size(&m);
		struct emu_dist_hdr h;
		const char *why;

		d->st.msgs_recv++;
		d->st.bytes_recv += len;
		memset(&h, 0, sizeof(h));
		memcpy(&h, zmq_msg_data(&m), len < sizeof(h) ? len : sizeof(h));
		why = emu_dist_check_header(&h, len, d->run_id, d->cfg.nranks, d->cfg.rank);
		if (!why && h.type == EMU_DIST_ABORT && h.len == REASON_MAX) {
			char reason[REASON_MAX];

			memcpy(reason, (uint8_t *)zmq_msg_data(&m) + sizeof(h), REASON_MAX);
			reason[REASON_MAX - 1] = 0;
			fail(d, "rank %u stopped the run: %s", h.rank, reason);
			zmq_msg_close(&m);
			return -ECANCELED;
		}
		if (!why && h.type != EMU_DIST_WINDOW && h.type != EMU_DIST_RESULT)
			why = "unexpected type";
		if (!why) {
			last = emu_wall_ns();
			if (h.run == d->run && h.type == type &&
			    (type == EMU_DIST_RESULT ? PHASE_RESULT : h.window) == phase) {
				if (!got[h.rank] && want(d, h.rank, &m, arg)) {
					got[h.rank] = true;
					have++;
					continue;	/* @want owns @m now */
				}
				why = got[h.rank] ? "duplicate" : "payload rejected";
			} else if (is_future(d, h.run, h.type, h.window, phase) && d->nstash < STASH_MAX) {
				struct stashed *s = &d->stash[d->nstash++];

				s->msg = m;
				s->from = h.rank;
				s->type = h.type;
				s->run = h.run;
				s->window = h.window;
				continue;
			} else {
				why = "out of sequence";
			}
		}
		d->st.rejected++;
		zmq_msg_close(&m);
		(void)why;
	}
	d->sync_ns = emu_wall_ns();
	return 0;
}

/* ---------- windows ---------- */

void emu_dist_begin_run(struct emu_dist *d)
{
	d->window = 0;
}

struct xarg {
	struct emu_dist_sum *sum;
	emu_dist_in_fn in;
	void *arg;
};

static bool take_window(struct emu_dist *d, unsigned from, zmq_msg_t *m, void *arg)
{
	struct xarg *x = arg;
	const uint8_t *p = (const uint8_t *)zmq_msg_data(m) + sizeof(struct emu_dist_hdr);
	size_t len = zmq_msg_size(m) - sizeof(struct emu_dist_hdr);
	struct emu_dist_sum s;

	if (len < sizeof(s))
		return false;
	memcpy(&s, p, sizeof(s));
	if (!x->in(x->arg, from, p + sizeof(s), len - sizeof(s)))
		return false;
	if (s.next < x->sum->next)
		x->sum->next = s.next;
	if (s.stop_req < x->sum->stop_req)
		x->sum->stop_req = s.stop_req;
	if (s.done_max > x->sum->done_max)
		x->sum->done_max = s.done_max;
	if (s.failed > x->sum->failed)
		x->sum->failed = s.failed;
	x->sum->done += s.done;
	if (s.progress > x->sum->progress)
		x->sum->progress = s.progress;
	if (s.wait > x->sum->wait)
		x->sum->wait = s.wait;
	d->held[from] = *m;
	d->holding[from] = true;
	return true;
}

int emu_dist_exchange(struct emu_dist *d, struct emu_dist_sum *mine, emu_dist_out_fn out_size,
		      emu_dist_out_fn out, emu_dist_in_fn in, void *arg)
{
	struct emu_dist_sum local = *mine;
	bool got[EMU_DIST_MAX_RANKS] = { false };
	struct xarg x = { .sum = mine, .in = in, .arg = arg };

	if (d->failed)
		return -EPIPE;
	for (unsigned q = 0; q < d->cfg.nranks; q++)
		if (d->holding[q]) {
			zmq_msg_close(&d->held[q]);
			d->holding[q] = false;
		}
	for (unsigned q = 0; q < d->cfg.nranks; q++) {
		if (q == d->cfg.rank)
			continue;
		size_t n = out_size(arg, q, NULL, 0);
		size_t len = sizeof(struct emu_dist_hdr) + sizeof(local) + n;
		zmq_msg_t m;
		struct emu_dist_hdr h;

		if (len > d->cfg.max_msg) {
			fail(d, "the window message to rank %u needs %zu bytes, more than the %zu a rank accepts", q, len,
			     d->cfg.max_msg);
			return -EMSGSIZE;
		}

		if (zmq_msg_init_size(&m, len))
			emu_die(ENOMEM);
		uint8_t *b = zmq_msg_data(&m);

		hdr_fill(d, &h, EMU_DIST_WINDOW, d->window, len - sizeof(h));
		memcpy(b, &h, sizeof(h));
		memcpy(b + sizeof(h), &local, sizeof(local));
		if (n)
			out(arg, q, b + sizeof(h) + sizeof(local), n);
		if (zmq_msg_send(&m, d->push[q], 0) < 0) {
			zmq_msg_close(&m);
			fail(d, "cannot send to rank %u: %s", q, zmq_strerror(zmq_errno()));
			return -EIO;
		}
		d->st.msgs_sent++;
		d->st.bytes_sent += len;
	}
	int rc = wait_for(d, EMU_DIST_WINDOW, d->window, got, d->cfg.nranks - 1, take_window, &x);

	if (rc)
		return rc;
	d->window++;
	d->st.windows++;
	return 0;
}

/* ---------- results and abort ---------- */

struct garg {
	void **parts;
	size_t *lens;
};

static bool take_result(struct emu_dist *d, unsigned from, zmq_msg_t *m, void *arg)
{
	struct garg *g = arg;
	size_t len = zmq_msg_size(m) - sizeof(struct emu_dist_hdr);

	(void)d;
	g->parts[from] = emu_xmalloc(len + 1);
	memcpy(g->parts[from], (uint8_t *)zmq_msg_data(m) + sizeof(struct emu_dist_hdr), len);
	g->lens[from] = len;
	zmq_msg_close(m);
	return true;
}

int emu_dist_gather(struct emu_dist *d, const void *data, size_t len, void **parts, size_t *lens)
{
	int rc = 0;

	if (d->failed)
		return -EPIPE;
	if (d->cfg.rank != 0) {
		if (sizeof(struct emu_dist_hdr) + len > d->cfg.max_msg) {
			fail(d, "the results need %zu bytes, more than the %zu rank 0 accepts",
			     sizeof(struct emu_dist_hdr) + len, d->cfg.max_msg);
			rc = -EMSGSIZE;
		} else if (send_msg(d, d->push[0], EMU_DIST_RESULT, d->window, data, len)) {
			fail(d, "cannot send the results to rank 0: %s", zmq_strerror(zmq_errno()));
			rc = -EIO;
		}
	} else {
		bool got[EMU_DIST_MAX_RANKS] = { false };
		struct garg g = { parts, lens };

		for (unsigned q = 0; q < d->cfg.nranks; q++) {
			parts[q] = NULL;
			lens[q] = 0;
		}
		rc = wait_for(d, EMU_DIST_RESULT, PHASE_RESULT, got, d->cfg.nranks - 1, take_result, &g);
	}
	d->run++;
	return rc;
}

void emu_dist_abort(struct emu_dist *d, const char *why)
{
	char reason[REASON_MAX];

	snprintf(reason, sizeof(reason), "%s", why);
	for (unsigned q = 0; q < d->cfg.nranks; q++)
		if (d->push[q])
			send_msg(d, d->push[q], EMU_DIST_ABORT, d->window, reason, sizeof(reason));
}

/* ---------- keys ---------- */

int emu_dist_keygen(const char *dir, unsigned n, char *err, size_t errlen)
{
	char pub[EMU_DIST_MAX_RANKS][41], sec[EMU_DIST_MAX_RANKS][41];

	if (n < 1 || n > EMU_DIST_MAX_RANKS) {
		snprintf(err, errlen, "--ranks: %u is not in [1, %d]", n, EMU_DIST_MAX_RANKS);
		return -EINVAL;
	}
	if (mkdir(dir, 0700) && errno != EEXIST) {
		int e = errno;

		snprintf(err, errlen, "--curve-keygen: %s: %s", dir, strerror(e));
		return -e;
	}
	/* keys already there stay: the machines that hold them would no longer be let in */
	for (unsigned i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/rank%u.key", dir, i);
		if (!lstat(path, &st)) {
			snprintf(err, errlen, "--curve-keygen: %s exists: keys are not overwritten (remove them, or "
				 "choose another directory)", path);
			return -1;
		}
	}
	for (unsigned i = 0; i < n; i++)
		if (zmq_curve_keypair(pub[i], sec[i])) {
			snprintf(err, errlen, "--curve-keygen: libzmq was built without CURVE");
			return -ENOTSUP;
		}
	for (unsigned i = 0; i < n; i++) {
		char path[4096];
		int fd;
		FILE *f;

		snprintf(path, sizeof(path), "%s/rank%u.key", dir, i);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || !(f = fdopen(fd, "w"))) {
			int e = errno;

			snprintf(err, errlen, "--curve-keygen: %s: %s", path, strerror(e));
			if (fd >= 0)
				close(fd);
			return -e;
		}
		fprintf(f, "# canary-emu CURVE keys of rank %u of %u. Keep secret.\nsecret %s\ncoordinator %s\n", i, n,
			sec[i], pub[0]);
		for (unsigned q = 0; q < n; q++)
			fprintf(f, "allow %s\n", pub[q]);
		fclose(f);
	}
	return 0;
}
