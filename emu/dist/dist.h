/* SPDX-License-Identifier: MIT */
/*
 * DOC: dist.h - one emulation split over several processes (ranks) that
 * talk ZeroMQ.
 *
 * Sockets (the patterns, and what each protects against: README "Running
 * across processes and machines"; canary-emu(1), RUNNING ACROSS MACHINES):
 *
 *   join     rank 0 binds a ROUTER at the coordinator endpoint; every other
 *            rank connects a DEALER and sends HELLO (its rank, worker count,
 *            data endpoint, scenario fingerprint). Rank 0 checks them and
 *            answers WELCOME (run id, every rank's worker base and data
 *            endpoint) or REJECT (why). ROUTER because the coordinator must
 *            answer a particular rank. Both ends close these sockets once
 *            every rank has joined: nothing more comes on them.
 *   windows  every rank binds one PULL socket for data and connects one
 *            PUSH socket to each other rank's PULL. At the end of every
 *            window each rank sends each other rank exactly one WINDOW
 *            message: its part of the global reduction (next event time,
 *            completions, stop requests) followed by the events its workers
 *            sent to that rank's workers. A rank starts the next window when
 *            it holds one WINDOW from every other rank, so the window
 *            barrier and the global minimum are one all-to-all exchange, no
 *            round trip through a coordinator. PUSH/PULL because the traffic
 *            is one-way and every peer must see every message in order.
 *   results  after a run, ranks != 0 send RESULT (their nodes' records and
 *            counters) to rank 0, which merges them into the one report.
 *   abort    a rank that sees a peer die or go silent sends ABORT to all.
 *
 * Every socket queues at most a few messages per connection and direction
 * (dist.c, QUEUE_MSGS): more than the protocol ever has in flight, and a
 * bound on what a stranger's flood costs.
 *
 * Every message is one ZeroMQ frame: a 40-byte header (magic, version,
 * type, run id, sender rank, run index, window, payload length) and the
 * payload. Anything with a wrong magic/version/run id/rank/length, a
 * duplicate, or a payload the receiver cannot parse to its end is dropped
 * and counted (emu_dist_rejected), never trusted.
 *
 * With a key file (--curve) every socket uses CURVE: servers (the ROUTER,
 * the PULLs) authenticate clients through a ZAP handler that accepts only
 * the public keys listed in the file; clients know the coordinator's
 * public key from the file and the other ranks' from WELCOME.
 */
#ifndef EMU_DIST_H
#define EMU_DIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EMU_DIST_MAX_RANKS 64
#define EMU_DIST_EP_RECORD 128	/* --processes: bytes per endpoint record in the pipe */
/*
 * Default bound on a WINDOW or RESULT message (header included). The join
 * sockets take only what HELLO and WELCOME need; a larger message is
 * dropped by libzmq before it is allocated.
 */
#define EMU_DIST_MAX_MSG ((size_t)256 << 20)

struct emu_dist;

struct emu_dist_cfg {
	unsigned rank;
	unsigned nranks;
	const char *coordinator;	/* tcp://HOST:PORT (rank 0 binds, others connect); NULL: rank 0 picks one */
	const char *bind;		/* address of this rank's data socket (default 127.0.0.1) */
	const char *curve;		/* key file, or NULL */
	uint64_t fingerprint;		/* of the scenario; every rank must have the same */
	unsigned workers;		/* this rank's worker threads */
	unsigned timeout_ms;		/* a silent peer is declared dead after this */
	size_t max_msg;			/* largest WINDOW/RESULT message (0: EMU_DIST_MAX_MSG) */
	const pid_t *children;		/* rank 0 of --processes: pid of rank i at [i] */
	int endpoint_fd;		/* rank 0 of --processes: write the coordinator endpoint here (-1: no) */
};

/*
 * emu_dist_join - connect the ranks. Return NULL with a reason in @err
 * (*@bad_input set when the reason is the user's input: exit 2).
 */
struct emu_dist *emu_dist_join(const struct emu_dist_cfg *cfg, char *err, size_t errlen, bool *bad_input);
void emu_dist_close(struct emu_dist *d);

unsigned emu_dist_rank(const struct emu_dist *d);
unsigned emu_dist_nranks(const struct emu_dist *d);
/* emu_dist_wbase - first global worker of @rank; wbase(nranks) = all workers. */
unsigned emu_dist_wbase(const struct emu_dist *d, unsigned rank);
/* emu_dist_rank_of - the rank that runs global worker @w. */
unsigned emu_dist_rank_of(const struct emu_dist *d, unsigned w);

/* The per-window reduction every rank contributes to. */
struct emu_dist_sum {
	uint64_t next;		/* min: earliest pending event */
	uint64_t stop_req;	/* min */
	uint64_t done_max;	/* max */
	uint64_t done;		/* sum */
	uint64_t progress;	/* max: 1 + time of the latest progress, 0: none */
	uint64_t failed;	/* max: a node failed to start */
	uint64_t wait;		/* max: the longest timer a node waits on (emu_node_waits) */
};

/*
 * emu_dist_exchange - the window step: send @mine and, to each rank q,
 * the bytes @out(q) produced (one WINDOW message each); wait for every
 * other rank's; reduce their sums into @mine. For every received payload
 * @in(arg, q, data, len) is called; it returns false to reject it (the
 * message is counted and the rank keeps waiting for a valid one). Payloads
 * stay valid until the next exchange. Return 0, or negative errno with a
 * reason (emu_dist_error): -EPIPE a peer died (or the run already failed),
 * -ETIMEDOUT one went silent, -ECANCELED one aborted, -EMSGSIZE or -EIO
 * this rank could not send.
 */
typedef size_t (*emu_dist_out_fn)(void *arg, unsigned q, uint8_t *buf, size_t cap);
typedef bool (*emu_dist_in_fn)(void *arg, unsigned q, const uint8_t *data, size_t len);
int emu_dist_exchange(struct emu_dist *d, struct emu_dist_sum *mine, emu_dist_out_fn out_size,
		      emu_dist_out_fn out, emu_dist_in_fn in, void *arg);

/* emu_dist_begin_run - a new run (one per --algo): resets the window count. */
void emu_dist_begin_run(struct emu_dist *d);

/*
 * emu_dist_gather - ranks != 0 send @len bytes at @data to rank 0; rank 0
 * receives every other rank's into @parts[q] / @lens[q] (malloc'ed, the
 * caller frees; its own slot is left NULL). Return 0, or negative errno as
 * emu_dist_exchange() (emu_dist_error says why).
 */
int emu_dist_gather(struct emu_dist *d, const void *data, size_t len, void **parts, size_t *lens);

/* emu_dist_abort - tell every rank to stop (best effort). */
void emu_dist_abort(struct emu_dist *d, const char *why);

const char *emu_dist_error(const struct emu_dist *d);

struct emu_dist_stats {
	uint64_t msgs_sent, bytes_sent;
	uint64_t msgs_recv, bytes_recv;
	uint64_t windows;
	uint64_t rejected;		/* malformed, foreign or duplicate messages */
	uint64_t auth_rejected;		/* CURVE clients with an unknown key */
};
void emu_dist_stats(const struct emu_dist *d, struct emu_dist_stats *st);

/*
 * emu_dist_check_header - validate a received message of @len bytes
 * against the session (exposed for tests). Return NULL if it is good, or
 * what is wrong with it.
 */
struct emu_dist_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint64_t run_id;
	uint32_t rank;
	uint32_t run;
	uint64_t window;
	uint32_t len;
	uint32_t pad;
};

#define EMU_DIST_MAGIC 0x59524e43u	/* "CNRY" little-endian */
#define EMU_DIST_VERSION 2	/* 2: a frame record carries its traffic class (chan_remote.c) */

enum emu_dist_type {
	EMU_DIST_HELLO = 1,
	EMU_DIST_WELCOME,
	EMU_DIST_REJECT,
	EMU_DIST_WINDOW,
	EMU_DIST_RESULT,
	EMU_DIST_ABORT,
};

const char *emu_dist_check_header(const struct emu_dist_hdr *h, size_t len, uint64_t run_id, unsigned nranks,
				  unsigned self);

/* payload sizes of HELLO and WELCOME (dist.c checks its structs against them) */
#define EMU_DIST_HELLO_BYTES 176
#define EMU_DIST_WELCOME_BYTES (8 + 4 * (EMU_DIST_MAX_RANKS + 1) + EMU_DIST_MAX_RANKS * (128 + 32))

/*
 * emu_dist_check_hello - check a HELLO payload (@p, @len bytes, aligned as
 * struct hello: callers check a copy, not a message buffer) at the
 * coordinator of @nranks ranks whose scenario has @fingerprint; the
 * endpoint string is terminated in place. Return NULL if it is good, or
 * what is wrong with it.
 */
const char *emu_dist_check_hello(void *p, size_t len, unsigned nranks, uint64_t fingerprint);

/*
 * emu_dist_check_welcome - check a WELCOME payload (@p, @len bytes) at
 * rank @rank of @nranks running @workers workers; endpoint strings are
 * terminated in place. Return NULL if it is good, or what is wrong.
 */
const char *emu_dist_check_welcome(void *p, size_t len, unsigned nranks, unsigned rank, unsigned workers);

/*
 * emu_dist_check_keyfile - read the CURVE key file @path as emu_dist_join()
 * does. Return 0, or negative errno with the reason in @err (-EINVAL a
 * malformed file, -EACCES one others may read, or the error of opening it).
 * Exposed for tests and the fuzz targets.
 */
int emu_dist_check_keyfile(const char *path, char *err, size_t errlen);

/*
 * emu_dist_keygen - write @n key files DIR/rank<i>.key for a cluster of n
 * ranks (each with its secret, the coordinator's public key and every
 * rank's public key as allowed). Return 0, or negative errno with the
 * reason in @err.
 */
int emu_dist_keygen(const char *dir, unsigned n, char *err, size_t errlen);

#endif /* EMU_DIST_H */
