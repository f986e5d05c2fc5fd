/* SPDX-License-Identifier: MIT */
/*
 * DOC: canary_host.h - libhost, the host side of in-network allreduce.
 *
 * A struct lh_host is one host's protocol engine: it owns no thread and
 * no socket. It talks to the network through a small transport (struct
 * lh_transport): get a frame buffer, send it, read the clock, arm a timer,
 * ask whether the NIC is still busy, draw a random number. The transport
 * calls back lh_host_rx() for every frame, lh_host_timer() when a timer
 * fires and lh_host_tx_ready() when the NIC can take the next frame. The
 * emulator's NIC (emu/host/host_model.c) is one transport, a real Linux
 * interface through AF_PACKET (libhost/tools/canary-allreduce.c) another. The
 * protocol code knows nothing else.
 *
 * On a host, communicators (struct lh_comm: a set of hosts, this host's
 * rank, a tenant id that makes block ids unique across concurrent
 * allreduces) start non-blocking allreduces (struct lh_req) of int32 with
 * sum. Three algorithms:
 *
 *  LH_ALGO_CANARY  the paper (sec. 3): blocks of `elements`, ids = tenant |
 *                  sequence, a leader per block (round-robin over ranks)
 *                  that aggregates what the root switch delivers with its
 *                  own data, broadcasts, restores subtrees cut by
 *                  collisions, answers retransmission requests (resend if
 *                  complete, else fail the block: hosts re-issue it under a
 *                  new id; after max_failures a block falls back to
 *                  reduction at the leader); an explicit completion barrier
 *                  lets leaders drop their blocks. With cfg.sketch = K the
 *                  packets carry a K-element missing-set sketch and the
 *                  leader asks up to K hosts whose data is missing for it
 *                  directly instead of failing the block.
 *  LH_ALGO_STATIC  N static reduction trees configured in the switches;
 *                  blocks round-robin over the trees; a block whose
 *                  result is lost is recovered through its leader
 *                  (resent, or reduced host-based).
 *  LH_ALGO_RING    bandwidth-optimal ring: reduce-scatter then allgather,
 *                  pipelined per packet, over ordinary UDP frames, with
 *                  NACK-based retransmission when `reliable` is set.
 *
 * Hosts inject at line rate (one frame whenever the NIC is idle) with a
 * bounded number of blocks in flight; optional host noise delays a send by
 * noise_delay with probability noise.
 *
 * The result is exact: every host's output is the element-wise int32 sum
 * (modulo 2^32) of every input.
 */
#ifndef CANARY_HOST_H
#define CANARY_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t lh_time_t;	/* picoseconds */

#define LH_PS 1ULL
#define LH_NS 1000ULL
#define LH_US 1000000ULL

#define LH_SKETCH_MAX 16	/* largest missing set a sketch decodes */
/*
 * The sketch for a network that can lose frames: LH_SKETCH_MAX elements of
 * packets of 128 or more, none below. At 0.1 % loss the paper's recovery
 * fails whole blocks for one lost contribution; with 256 elements the
 * sketch of 16 keeps most of the lossless goodput, while with 64 or fewer
 * the sketch's blocks do worse than the paper's (bench/README.md,
 * experiment 9). A macro: every rank must use the same K.
 */
#define LH_SKETCH_LOSSY(elements) ((elements) >= 128 ? LH_SKETCH_MAX : 0)

struct lh_host;
struct lh_comm;
struct lh_req;

struct lh_transport_ops {
	/*
	 * a buffer of at least LH_FRAME_MAX bytes, or of lh_host_frame_len()
	 * bytes (the host's, called from here); *handle goes back to send
	 */
	uint8_t *(*frame_get)(void *ctx, void **handle);
	void (*frame_send)(void *ctx, void *handle, uint32_t len);
	lh_time_t (*now)(void *ctx);
	/* call lh_host_timer(cookie) at @at (>= now) */
	void (*timer)(void *ctx, lh_time_t at, uint64_t cookie);
	/* is a frame still waiting in the NIC? (then wait for tx_ready) */
	bool (*tx_busy)(void *ctx);
	uint64_t (*random)(void *ctx);
	/* optional: the allreduce @req finished on this host */
	void (*done)(void *ctx, struct lh_req *req);
};

#define LH_FRAME_MAX 2048

struct lh_transport {
	const struct lh_transport_ops *ops;
	void *ctx;
	uint64_t rate_bps;	/* NIC line rate */
	uint32_t mtu;		/* IP MTU of the NIC's link */
};

/* A host as seen on the wire. */
struct lh_peer {
	uint32_t ipv4;
	uint8_t mac[6];
};

enum lh_algo {
	LH_ALGO_CANARY = 0,
	LH_ALGO_STATIC,
	LH_ALGO_RING,
};

enum lh_dtype {
	LH_INT32 = 0,
};

enum lh_redop {
	LH_SUM = 0,
};

/* input element @i of this host (when no input array is given) */
typedef int32_t (*lh_input_fn)(void *arg, size_t i);
/* input elements [@off, @off + @n) into @out at once (optional, faster) */
typedef void (*lh_input_block_fn)(void *arg, size_t off, int32_t *out, size_t n);
/* a block of the result is final on this host (when no output array is given) */
typedef void (*lh_block_fn)(void *arg, size_t offset, const int32_t *data, size_t count);
/*
 * The same two in wire order, big-endian int32s at @p (optional, faster):
 * where a host's input goes straight into a frame, or its result comes
 * straight out of one, they save converting it through a buffer.
 */
typedef void (*lh_input_wire_fn)(void *arg, size_t off, uint8_t *p, size_t n);
typedef void (*lh_block_wire_fn)(void *arg, size_t offset, const uint8_t *p, size_t count);

/*
 * Canary and static trees: a request has 2^24 - 1 block ids and block b's
 * attempt a uses id b + a x nblocks, so nblocks x (max_failures + 2) must
 * not exceed LH_BLOCK_IDS (lh_allreduce refuses the request otherwise).
 */
#define LH_BLOCK_IDS 0xffffffu

struct lh_ar_cfg {
	enum lh_algo algo;
	enum lh_dtype dtype;		/* LH_INT32 only, for now */
	enum lh_redop op;		/* LH_SUM only, for now */
	unsigned elements;		/* per packet, 1..256 */
	unsigned ntrees;		/* LH_ALGO_STATIC: trees; tree ids tree_base.. */
	unsigned tree_base;
	unsigned window;		/* blocks in flight per host; 0: from bandwidth x delay */
	lh_time_t rtt;			/* base round-trip estimate (fabric diameter) */
	lh_time_t switch_timeout;	/* Canary switch timeout, for the RTT estimate (the start: the
					 * broadcasts of adaptive switches bring what they learned) */
	lh_time_t retx_timeout;		/* 0: adaptive, 2 x the measured block RTT (at least 2 x the base) */
	unsigned max_failures;		/* Canary: re-issues before host-based fallback */
	unsigned sketch;		/* Canary: missing-set sketch of this many of the packet's
					 * elements (0: off, the paper's recovery; at most
					 * LH_SKETCH_MAX, fewer than elements) */
	double noise;			/* probability of delaying a send */
	lh_time_t noise_delay;		/* default 1 us */
	bool reliable;			/* ring: keep sent data for NACK retransmission */
	lh_input_fn input;		/* used when in == NULL */
	lh_input_block_fn input_block;	/* if set, used instead of input */
	void *input_arg;
	lh_block_fn on_block;		/* used when out == NULL */
	void *block_arg;
	/*
	 * Optional, with input/input_block and on_block: the same elements in
	 * wire order, used instead of them where they go into or come out of
	 * a frame as they are (Canary and static trees: a host's own block,
	 * a broadcast result).
	 */
	lh_input_wire_fn input_wire;	/* input_arg; when in == NULL */
	lh_block_wire_fn on_block_wire;	/* block_arg; when out == NULL */
};

struct lh_ar_stats {
	lh_time_t start;
	lh_time_t data_done;		/* every element of the result is here */
	lh_time_t done;			/* completion barrier passed */
	uint64_t frames_sent;
	uint64_t frames_recv;
	uint64_t leader_frames_recv;	/* Canary reduce frames that reached this leader */
	uint64_t blocks_led;
	uint64_t collisions_seen;	/* bypassed frames at this leader */
	uint64_t restorations_sent;
	uint64_t retx_requests;		/* sent by this host */
	uint64_t retx_served;		/* resends by this leader */
	uint64_t failures;		/* blocks this leader failed */
	uint64_t retx_deferred;		/* requests not honoured: block still receiving, or a re-issue not proven lost */
	uint64_t recoveries;		/* sketch: blocks this leader completed from their missing hosts */
	uint64_t recovered;		/* sketch: contributions asked for directly (hosts x blocks) */
	uint64_t probes;		/* sketch: early requests for blocks overtaken by later ones */
	uint64_t reissues;		/* blocks this host re-issued */
	uint64_t fallbacks;		/* blocks reduced at the leader instead */
	uint64_t duplicates;		/* result frames for blocks already complete */
	uint64_t noise_delays;
	uint64_t nacks;			/* ring: retransmission requests sent */
	uint64_t errors;		/* protocol violations seen (should stay 0) */
	unsigned window;		/* what was used */
	lh_time_t retx_timeout;
	uint64_t recovered_late;	/* sketch: of those, counted from the tree's late copy first */
	uint64_t rebroadcasts;		/* sketch: results broadcast again on a probe */
	unsigned window_max;		/* the largest window used (Canary: the window follows the
					 * switches' timeout hint, see cfg.switch_timeout) */
	uint64_t window_sum;		/* Canary: the window at every block completed here, summed */
	uint64_t window_n;		/* ...over this many blocks (the mean: window_sum / window_n) */
	uint64_t polls;			/* leader: hosts asked whether they sent a block (libhost/PROTOCOL.md) */
};

/* ---- host ---- */

struct lh_host *lh_host_create(const struct lh_transport *t, const struct lh_peer *self);
/*
 * lh_host_share_peers - from now on, lh_comm_create() and
 * lh_host_background() borrow the peer tables they are given instead of
 * copying them: the tables must outlive the host. For a process that runs
 * many hosts of one communicator (an emulator), where a copy per host would
 * cost memory in the square of the communicator's size. Such hosts' uniform
 * background also shares its rounds' orders among the hosts of a thread:
 * each thread that runs them keeps up to 16 tables of 4 bytes per peer,
 * freed when the thread exits (so do not unload the library while such a
 * thread lives).
 */
void lh_host_share_peers(struct lh_host *h);
/*
 * lh_host_set_run - the run (0..3) every frame of @h carries, its run id
 * on the wire modulo 4 (set it before the host's first allreduce; 0 by
 * default). Every host and emulator of one run sets the same value, and
 * the next run another (canary-emu numbers a sweep's runs from its
 * --run-id on): a frame of another run, left over or replayed, is dropped
 * and counted (lh_host_other_run()) instead of being taken for a block of
 * this one. -EINVAL if @run is above 3.
 */
int lh_host_set_run(struct lh_host *h, unsigned run);
/* lh_host_other_run - frames of another run @h has dropped */
uint64_t lh_host_other_run(const struct lh_host *h);
/* lh_host_destroy - free the host and its communicators. Accepts NULL. */
void lh_host_destroy(struct lh_host *h);

/* events from the transport */
void lh_host_rx(struct lh_host *h, const uint8_t *frame, uint32_t len);
void lh_host_timer(struct lh_host *h, uint64_t cookie);
void lh_host_tx_ready(struct lh_host *h);

/*
 * lh_host_timer_idle - would lh_host_timer(@cookie) do nothing at all, now
 * or at any later time until another allreduce starts on the timer's
 * communicator? True for a Canary block's retransmission timer whose block
 * is complete (a complete block stays complete); lh_host_timer() then
 * returns at once, without even trying to send: whatever a kick could send
 * then, the transport's own lh_host_tx_ready() for the free NIC sends at
 * the same instant. A transport may drop such a timer instead of firing it.
 */
bool lh_host_timer_idle(const struct lh_host *h, uint64_t cookie);

/*
 * lh_frame_data_len - how many leading bytes of @frame (@len bytes, built
 * by a host) carry data. The rest is padding no host reads (the payload of
 * background traffic): a transport may drop it and deliver zeros, or
 * nothing but the length. @len for every other frame.
 */
uint32_t lh_frame_data_len(const uint8_t *frame, uint32_t len);

/*
 * lh_host_frame_len - for the transport's frame_get, while it runs: at
 * most how many bytes the host will write into the buffer it asks for (a
 * transport may hand out a buffer of that size). LH_FRAME_MAX otherwise.
 */
uint32_t lh_host_frame_len(const struct lh_host *h);

/*
 * lh_host_frame_route - for the transport's frame_get and frame_send, while
 * they run: the IPv4 destination the frame carries, when the host knows it
 * apart from the bytes (a background frame), with the flow hash a
 * switch would parse out of it (wire.h's lh_wire_dst), mixed by the
 * splitmix64 finaliser (lh_util.h's lh_hash64), in *@rhash (computed once
 * per message): a transport may route the frame without a parse. 0 when
 * not known (*@rhash untouched).
 */
uint32_t lh_host_frame_route(const struct lh_host *h, uint64_t *rhash);

enum lh_bg_pattern {
	/*
	 * The paper's random uniform pattern: message k of every host goes to
	 * its successor in a random cyclic order of the hosts drawn for round
	 * k (from @seed), so each host sends to a random host and receives
	 * from another random host; hosts move to their next round on their
	 * own.
	 */
	LH_BG_UNIFORM = 0,
	/* every message to an independently drawn random host (incast happens) */
	LH_BG_RANDOM,
};

/*
 * lh_host_background - send background traffic: messages of @msg_bytes
 * (UDP frames at line rate) to a peer of @peers (this host is @me among
 * them) chosen by @pattern, one after the other, until @until (0: until
 * the run ends). Return 0 or -EINVAL.
 */
int lh_host_background(struct lh_host *h, const struct lh_peer *peers, unsigned n, unsigned me,
		       enum lh_bg_pattern pattern, uint64_t seed, uint64_t msg_bytes, lh_time_t until);
/*
 * lh_host_background_load - before lh_host_background(): offer @load (0, 1]
 * of the line rate instead of sending back to back. Messages then arrive
 * as a Poisson process, the gaps between arrivals exponential with mean
 * (the message's wire time) / @load, drawn from the background seed and
 * this host's place; a message that arrives while others wait queues
 * behind them. Return 0 or -EINVAL.
 */
int lh_host_background_load(struct lh_host *h, double load);
/*
 * lh_host_background_volume - before lh_host_background(): send messages
 * of @bytes in all (whole messages: the last one started completes), then
 * nothing more; 0: no limit (the default). Return 0 or -EINVAL.
 */
int lh_host_background_volume(struct lh_host *h, uint64_t bytes);

struct lh_bg_stats {
	uint64_t messages;
	uint64_t frames_sent;
	uint64_t bytes_sent;
	uint64_t frames_recv;
	uint64_t bytes_recv;
	uint64_t wire_bytes_offered;	/* load < 1: wire bytes (frames, padded to 60 bytes, + 24 each) of the messages arrived */
	uint64_t wire_bytes_sent;	/* wire bytes (frames, padded to 60 bytes, + 24 each) sent */
};
const struct lh_bg_stats *lh_host_bg_stats(const struct lh_host *h);

/* ---- communicators and allreduce ---- */

/*
 * lh_comm_create - communicator of @n hosts (@peers, in rank order; this
 * host is @rank) for @tenant (0..255, unique among concurrent
 * communicators). NULL on bad arguments.
 */
struct lh_comm *lh_comm_create(struct lh_host *h, const struct lh_peer *peers, unsigned n, unsigned rank,
			       unsigned tenant);

/*
 * lh_allreduce - start a non-blocking allreduce of @count elements from @in
 * (or cfg->input) into @out (or cfg->on_block). One at a time per
 * communicator. Return the request, or NULL (-EINVAL cases: bad config,
 * one already running, a retx_timeout below lh_retx_timeout_min()).
 */
struct lh_req *lh_allreduce(struct lh_comm *c, const struct lh_ar_cfg *cfg, const int32_t *in, int32_t *out,
			    size_t count);

/*
 * lh_retx_timeout_min - the shortest cfg->retx_timeout lh_allreduce()
 * takes on a NIC of @rate_bps: one data frame's time on the wire (cfg's
 * algo and elements). Shorter, a host asks again before its own frame
 * has left, and the requests grow without bound. 0 for a bad @cfg.
 */
lh_time_t lh_retx_timeout_min(const struct lh_ar_cfg *cfg, uint64_t rate_bps);

bool lh_req_data_done(const struct lh_req *r);
bool lh_req_done(const struct lh_req *r);
const struct lh_ar_stats *lh_req_stats(const struct lh_req *r);

/*
 * What an unfinished allreduce waits for at one host (lh_req_wait): the
 * oldest thing it has not got, for a report on a run that did not finish.
 */
enum lh_wait_what {
	LH_WAIT_NONE = 0,	/* nothing: the completion barrier passed */
	LH_WAIT_SEND,		/* block @block is not sent yet (the window is full, or the NIC busy) */
	LH_WAIT_RESULT,		/* block @block's sum from its leader @peer (sent, @tries requests since) */
	LH_WAIT_FALLBACK,	/* ...after sending its data to leader @peer for the fallback */
	LH_WAIT_REISSUE,	/* block @block failed: its re-issue is held back until @next */
	LH_WAIT_CONTRIB,	/* leader of block @block: @count of the contributions (the next RECOVER or
				 * poll at @next, @tries so far) */
	LH_WAIT_PULL,		/* leader of block @block, its fallback: data of rank @peer asked for
				 * (@count ranks counted) */
	LH_WAIT_RING,		/* ring: packets of step @block from rank @peer (@tries NACKs since progress) */
	LH_WAIT_BARRIER,	/* the result is here: the completion barrier's DONE from rank @peer */
};

struct lh_ar_wait {
	uint32_t what;		/* enum lh_wait_what */
	uint32_t blocks_left;	/* blocks (ring: result packets) not yet here */
	uint32_t block;		/* the oldest of them (ring: the step); UINT32_MAX: none */
	uint32_t peer;		/* the rank waited on; UINT32_MAX: none in particular */
	uint32_t tries;		/* requests or retries since the last progress */
	uint32_t count;		/* LH_WAIT_CONTRIB, LH_WAIT_PULL: contributions counted */
	lh_time_t since;	/* when it was last sent or asked for (0: unknown) */
	lh_time_t next;		/* when the next retry is due (0: none armed) */
};

/* lh_req_wait - what request @r waits for now (*@w), LH_WAIT_NONE once done */
void lh_req_wait(const struct lh_req *r, struct lh_ar_wait *w);
/* lh_wait_name - "send", "result", "fallback", "reissue", "contributions", "pull", "ring", "barrier", "none" */
const char *lh_wait_name(unsigned what);

/* lh_algo_name - "canary", "static", "ring". */
const char *lh_algo_name(enum lh_algo a);

/* ---- memory ---- */

/*
 * lh_allreduce_mem - the bytes one host holds for an allreduce of @count
 * elements among @P hosts under @cfg, for as long as the request lives:
 * the host, its communicator (peer table shared, lh_host_share_peers) and
 * the request's state (per block, per led block, the ring's bookkeeping
 * and, with cfg->reliable, its copies of what it sent). Frames in flight
 * and the transport's own memory are not counted: it is what the request
 * needs at least. 0 for a configuration lh_allreduce() would refuse.
 */
size_t lh_allreduce_mem(const struct lh_ar_cfg *cfg, unsigned P, size_t count);

/*
 * lh_set_out_of_memory - libhost has no error path for memory (a host
 * that stops mid-allreduce leaves its peers waiting): when an allocation
 * fails it prints one line on stderr and aborts, or, once this was
 * called, calls @fn with the size it asked for. @fn must not return (if it
 * does, libhost aborts). NULL restores the default. Process-wide: call it
 * before any host exists.
 */
void lh_set_out_of_memory(void (*fn)(size_t bytes));

#endif /* CANARY_HOST_H */
