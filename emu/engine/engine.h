/* SPDX-License-Identifier: MIT */
/*
 * DOC: engine.h - the parallel, deterministic, frame-level fabric engine.
 *
 * The engine runs a finalized struct emu_fabric: every node (host or
 * switch) runs a model plugged in through a const struct emu_model_ops;
 * every port has an egress queue (bytes) and a serializer; every link
 * direction a rate, a latency and an optional injected loss. Frames are real
 * bytes (frame.h) moved by pointer.
 *
 * Flow control: by default the fabric is lossless with credit-based flow
 * control. A frame that arrives on port p occupies p's ingress buffer
 * (buffer_bytes) until it leaves the node (its transmission starts) or the
 * model frees it; then a credit goes back upstream, arriving one link
 * latency later. A sender transmits only when the receiver's buffer has room
 * for the whole frame, so nothing is ever dropped for lack of space.
 * With .lossy the egress queue is drop-tail at buffer_bytes and no credits
 * exist.
 *
 * Parallelism: the nodes are partitioned over worker threads (pinned with
 * hwloc); a leaf switch and its hosts stay together. Workers advance in
 * conservative windows of the smallest link latency: inside a window a
 * worker processes its own events in (time, key) order; events for other
 * partitions go through channels (chan.h) and are delivered before the next
 * window; empty stretches are skipped. The order of events at a node never
 * depends on the partitioning (event.h), and every node draws from its own
 * random stream, so a run is bit-identical for any number of workers.
 *
 * Models call the emu_node_* / emu_send / emu_timer_at functions below from
 * their callbacks only (they run on the node's worker thread).
 */
#ifndef EMU_ENGINE_H
#define EMU_ENGINE_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/engine/event.h"
#include "emu/engine/fabric.h"
#include "emu/engine/frame.h"
#include "emu/engine/rng.h"
#include "emu/engine/route.h"
#include "emu/engine/time.h"
#include "emu/engine/util.h"

struct emu_engine;
struct emu_worker;
struct emu_chan;
struct emu_node;

/*
 * struct emu_model_ops - a node model. Fill it with designated initializers.
 * @state_size: bytes of per-node state the engine allocates (zeroed)
 * @init:    once, on the node's worker before time 0 runs; may send frames
 *           and arm timers. @arg is what emu_engine_set_model() was given.
 *           Return 0 or negative errno (the run is aborted).
 * @rx:      a frame arrived on @port. The model owns it: forward it with
 *           emu_send() or release it with emu_frame_free(). Its route
 *           cache (frame.h) is cleared: the model may rewrite it.
 * @route:   optional, instead of @rx for a model that forwards frames as
 *           they are: the port @f (arrived on @port) leaves by, which
 *           the engine then sends it on as emu_send() would, with no call
 *           between (the common hop of a forwarding switch; @f's bytes
 *           as they arrived, so its traffic class is the one its sender
 *           gave it, not computed again); or a
 *           negative errno when the model sent, kept or freed @f itself.
 *           @f's route cache is as the last switch left it: a model that
 *           may rewrite @f clears it (rdst = EMU_RDST_NONE) first.
 * @timer:   a timer armed with emu_timer_at() fired (not while the node is down).
 * @timer_idle: optional; would @timer(@cookie) do nothing at all (no state,
 *           no frame, no timer), now and at any later time until it is due?
 *           The engine may then drop the timer unfired.
 * @txdone:  optional; @port's serializer went idle with an empty queue.
 * @link:    optional; the link on @port went down or up.
 * @state:   optional; the node itself failed or recovered.
 * @fini:    optional; when the engine is destroyed (after stats were read).
 */
struct emu_model_ops {
	const char *name;
	size_t state_size;
	int (*init)(struct emu_node *n, void *arg);
	void (*rx)(struct emu_node *n, struct emu_frame *f, unsigned port);
	int (*route)(struct emu_node *n, struct emu_frame *f, unsigned port);
	void (*timer)(struct emu_node *n, uint64_t cookie);
	bool (*timer_idle)(struct emu_node *n, uint64_t cookie);
	void (*txdone)(struct emu_node *n, unsigned port);
	void (*link)(struct emu_node *n, unsigned port, bool up);
	void (*state)(struct emu_node *n, bool up);
	void (*fini)(struct emu_node *n);
};

struct emu_port_stats {
	/* a port's counters (struct emu_port keeps them where a frame-hop writes them: emu_port_stats()) */
	uint64_t tx_frames, tx_bytes;
	uint64_t rx_frames, rx_bytes;
	emu_time_t busy_ps;		/* serializer busy time within the run (a frame on the wire at its end counts up to it) */
	uint64_t q_peak_bytes;		/* egress queue high-water mark */
	uint64_t in_peak_bytes;		/* ingress buffer high-water mark (lossless) */
	uint64_t drops_queue;		/* lossy: egress queue full */
	uint64_t drops_loss;		/* injected loss */
	uint64_t drops_down;		/* sent into / in flight on a down link */
	uint64_t drops_mtu;		/* larger than the link's MTU */
	uint64_t credit_stalls;		/* times the head frame waited for credit */
};

/*
 * Traffic classes (cfg.tc_mode): with EMU_TC_RECOVERY, the frames of an
 * allreduce's recovery (Canary requests, resends, failures, fallback and
 * direct data, polls: emu_canary_recovery(); IPv4 with DSCP
 * EMU_DSCP_RECOVERY) go to class 1; with EMU_TC_COLLECTIVE every
 * collective frame does (Canary EtherType, IPv4 with DSCP
 * EMU_DSCP_COLLECTIVE or EMU_DSCP_RECOVERY); everything else is class 0.
 * Each port has one egress queue per class served in strict priority, and
 * each ingress buffer one credit pool of buffer_bytes per class
 * (per-priority flow control, as PFC), so a class never waits for the
 * other's buffer. With EMU_TC_ONE every frame is class 0.
 */
#define EMU_TC_N 2

enum emu_tc_mode {
	EMU_TC_ONE = 0,		/* one class: every frame shares the queues */
	EMU_TC_RECOVERY,	/* recovery frames first */
	EMU_TC_COLLECTIVE,	/* every collective frame first */
	EMU_TC_MODES
};

/* --priority's name of each mode, in enum emu_tc_mode's order */
extern const char *const emu_tc_mode_names[EMU_TC_MODES];

/*
 * A credit on its way back from the peer, as a link's ring holds it (see
 * emu_port.rq): when it arrives (t), and its key's sequence << 24 |
 * class << 14 | bytes (w). The key's node is the ring's (emu_port.rq_src),
 * the link generation its port's: 16 bytes, four a cache line.
 */
struct emu_credit {
	emu_time_t t;
	uint64_t w;
};

/*
 * One that does not fit that (of another generation, node or size, or
 * held when the link changed state): its key, and bytes (31 bits) |
 * class (bit 31) | link generation (high word).
 */
struct emu_credit_x {
	emu_time_t t;
	uint64_t key;
	uint64_t arg;
};

/*
 * A frame committed to the wire ahead of its start (see emu_port.commit_ps):
 * when its first bit leaves, its length and class. Until then its bytes
 * count as queued.
 */
struct emu_txrec {
	emu_time_t start;
	uint32_t len;
	uint32_t tc;
};

/* struct emu_port's variants: the full path, the fast one with one traffic class, with two */
enum { EMU_PORT_FULL, EMU_PORT_FAST_ONE, EMU_PORT_FAST_TC };

/* struct emu_port's rare bits: what commit() does only when set */
#define EMU_PORT_RARE_TAP 1u	/* captured (pcap) */
#define EMU_PORT_RARE_LOSS 2u	/* loss_thresh or drop_nth set */

struct emu_port {
	/*
	 * Laid out by what a frame-hop touches, a cache line each (the array
	 * is cache-line aligned and a port is six lines). A port that sends
	 * a frame on the fast path touches lines 1 and 2 (the serializer, the
	 * checks and the transmit counters), and line 3 when frames wait in
	 * its queue or were committed ahead of their start; one that receives
	 * it line 0 only (the link, the ingress buffer and its high-water
	 * mark, the receive counters); giving back the buffer space of a
	 * frame it received (a credit to the peer) line 0 too, and the ring
	 * entry the credit goes to. The counters are plain fields where they
	 * are written; emu_port_stats() assembles struct emu_port_stats for
	 * readers.
	 */
	/* line 0: the link as the ingress side sees it, the ingress buffer and its peak, a ring of credits (see rq) */
	alignas(EMU_CACHELINE) emu_time_t latency;	/* of what this port sends (tx_latency: its copy) */
	uint64_t in_bytes;		/* lossless: bytes held in this port's ingress buffer */
	/*
	 * Credits on their way back to a serializer, not yet applied, in the
	 * order they were given: rq_n entries from rq[0], of rq_cap, a
	 * power of two (none while 0). On a link within one worker they are
	 * those this port owes its peer, kept here, where giving back buffer
	 * space writes them; on a link to another worker or process, those that
	 * came back to this port's own serializer (see credq_of() in
	 * port.c). Those due by now are applied, each to its class if of the
	 * link's generation, when the head of the serializer's highest
	 * non-empty class does not fit the credits it has (they only add up:
	 * a head that fits without them fits with them) and when the ring is
	 * full (absorb_credits() in port.c): the same sums as if each had
	 * been an event. The ring's credits are of this port's link
	 * generation and their keys of node rq_src, summed at once; those
	 * that are not (the link changed state, a credit from another
	 * process) wait in rqx, and while it holds any or the ring is over
	 * 2^20 entries (rq_mixed) each is applied one by one. Only while the
	 * serializer waits for credit (rq_stalled) are they real events,
	 * since one of them has to wake it.
	 */
	struct emu_credit *rq;
	uint32_t rq_n, rq_cap;
	/*
	 * gen + 1 while a frame of this generation gives its buffer back
	 * into the ring (up, no channel, not rq_stalled), else 0: the one
	 * test of the give-back's common case (port.c, rq_refresh()).
	 */
	uint32_t rq_gen1;
	bool rq_stalled;
	bool rq_mixed;
	bool connected;
	bool up;
	/* rx_frames and rx_bytes apart: side by side GCC adds them as one vector (6 instructions, not 3) */
	uint64_t rx_frames;
	uint64_t in_peak_bytes;		/* lossless: in_bytes' high-water mark */
	uint64_t rx_bytes;
	/* line 1: the serializer, its credits, and what commit() reads besides */
	alignas(EMU_CACHELINE) emu_time_t busy_until;
	uint64_t ps_per_byte;		/* 8e12 / rate when exact, else 0 */
	int64_t credits[EMU_TC_N];	/* free bytes in the peer's ingress buffer, per class */
	emu_time_t tx_latency;		/* = latency, here for commit() */
	struct emu_chan *chan;		/* to the peer's worker, NULL if same worker */
	/*
	 * How far ahead of its start a queued frame is committed to the
	 * wire: frames leave the queue while the serializer is busy for at
	 * most this long (0: only when it is idle), unless a frame of the
	 * higher class was queued here before quiet_until. See port.c.
	 */
	emu_time_t quiet_until;
	uint32_t commit_ps;
	uint32_t tx_gen;		/* = gen, here for commit() */
	/* line 2: emu_send()'s checks, the transmit counters, the queue's and the committed frames' counts */
	alignas(EMU_CACHELINE) uint64_t tx_frames;
	uint64_t tx_bytes;
	emu_time_t busy_ps;		/* serializer busy time within the run (a frame on the wire at its end counts up to it) */
	uint64_t q_peak_bytes;		/* egress queue high-water mark */
	/*
	 * Where a frame sent here arrives: the peer's node and port, with
	 * peer_evtype (EMU_EV_FRAME) between them, as struct emu_ev has
	 * node, type and port, so that commit() writes the three with one
	 * copy (peer_ev).
	 */
	union {
		struct {
			uint32_t peer_node;
			uint16_t peer_evtype;
			uint16_t peer_port;
		};
		uint64_t peer_ev;
	};
	uint16_t mtu_frame;		/* largest frame: MTU + 14 */
	/*
	 * mtu_frame + 1 on an EMU_PORT_FAST_ONE port, else 0: a frame
	 * shorter takes the fast path with one test (send_variant() in
	 * port.c). Set with variant.
	 */
	uint16_t fast_len;
	uint32_t qframes;
	/*
	 * The port's variant (EMU_PORT_*), chosen when it is set up and
	 * recomputed when a condition it depends on changes
	 * (emu_port_refresh() in port.c): a fast one for the common case,
	 * FIFO router, lossless, no rare bits, link and node up, an exact
	 * wire time, whose path tests none of these per frame; else
	 * EMU_PORT_FULL.
	 */
	uint8_t variant;
	/*
	 * What a frame committed here must do besides the common case
	 * (EMU_PORT_RARE_*): a capture, a loss draw, a forced drop. 0 on
	 * the fast path: commit() tests it once.
	 */
	uint8_t rare;
	bool stalled;			/* waits for credit (mirrored in the ring's rq_stalled) */
	bool txdone_pending;		/* a wake (EMU_EV_TXDONE) is queued */
	/*
	 * Frames committed to the wire that start after the time they were
	 * committed, in start order: a ring of cq_cap, a power of two (none
	 * while 0); cbytes_tc their bytes per class. Those that started by
	 * now leave it when the queue's bytes are read (port.c, cq_settle).
	 */
	uint32_t cq_n, cq_head, cq_cap;
	/* line 3: the egress queue, per class, and the committed frames */
	alignas(EMU_CACHELINE) struct emu_frame *qhead[EMU_TC_N];
	uint64_t qbytes;		/* all classes */
	uint64_t qbytes_tc[EMU_TC_N];
	uint64_t cbytes_tc[EMU_TC_N];
	struct emu_txrec *cq;
	/* line 4: the queue's tails, the peer, the link's generation */
	alignas(EMU_CACHELINE) struct emu_frame *qtail[EMU_TC_N];
	struct emu_port *peer;		/* the peer's port (connected ports): its ring holds our credits */
	uint64_t rate_bps;
	uint64_t drop_nth;		/* drop the n-th frame sent (1-based; 0: none) */
	uint64_t rq_src;		/* EMU_EV_KEY(node, 0) of the ring's credits' keys (see rq) */
	uint32_t gen;			/* link generation: bumps on every state change (tx_gen, rq_gen1: its copies) */
	/* line 5: seldom read */
	alignas(EMU_CACHELINE) uint64_t loss_thresh;	/* drop if rng < loss_thresh (0: no loss) */
	uint64_t drops_queue, drops_loss, drops_down, drops_mtu, credit_stalls;	/* see struct emu_port_stats */
	struct emu_credit_x *rqx;	/* the credits that do not fit the ring (see rq): rqx_n of rqx_cap */
	uint32_t rqx_n, rqx_cap;
};
_Static_assert(sizeof(struct emu_port) == 6 * EMU_CACHELINE, "struct emu_port: six cache lines, laid out by use");
_Static_assert(offsetof(struct emu_port, busy_until) == EMU_CACHELINE &&
	       offsetof(struct emu_port, tx_frames) == 2 * EMU_CACHELINE &&
	       offsetof(struct emu_port, qhead) == 3 * EMU_CACHELINE &&
	       offsetof(struct emu_port, qtail) == 4 * EMU_CACHELINE &&
	       offsetof(struct emu_port, in_peak_bytes) < EMU_CACHELINE &&
	       offsetof(struct emu_port, loss_thresh) == 5 * EMU_CACHELINE,
	       "struct emu_port: each line's fields in it (prefetch_ahead() in engine.c fetches line 0 for a frame)");
_Static_assert(offsetof(struct emu_ev, type) - offsetof(struct emu_ev, node) ==
		       offsetof(struct emu_port, peer_evtype) - offsetof(struct emu_port, peer_node) &&
	       offsetof(struct emu_ev, port) - offsetof(struct emu_ev, node) ==
		       offsetof(struct emu_port, peer_port) - offsetof(struct emu_port, peer_node) &&
	       offsetof(struct emu_ev, port) + 2 - offsetof(struct emu_ev, node) == sizeof(uint64_t) &&
	       offsetof(struct emu_port, peer_ev) == offsetof(struct emu_port, peer_node),
	       "struct emu_port: peer_ev is struct emu_ev's node, type and port");
_Static_assert(EMU_MTU_MAX + 14 + 1 <= UINT16_MAX, "struct emu_port: mtu_frame and fast_len fit 16 bits");

/* @p's counters, as readers see them */
static inline struct emu_port_stats emu_port_stats(const struct emu_port *p)
{
	return (struct emu_port_stats){
		.tx_frames = p->tx_frames, .tx_bytes = p->tx_bytes, .rx_frames = p->rx_frames, .rx_bytes = p->rx_bytes,
		.busy_ps = p->busy_ps, .q_peak_bytes = p->q_peak_bytes, .in_peak_bytes = p->in_peak_bytes,
		.drops_queue = p->drops_queue, .drops_loss = p->drops_loss, .drops_down = p->drops_down,
		.drops_mtu = p->drops_mtu, .credit_stalls = p->credit_stalls,
	};
}


struct emu_node {
	/*
	 * What every event of the node reads first, its key included, in one
	 * cache line (the array is cache-line aligned), then its timers, then
	 * the rest.
	 */
	alignas(EMU_CACHELINE) uint32_t id;
	uint16_t nports;
	bool up;
	bool host;			/* fn->kind == EMU_NODE_HOST, here for emu_route() */
	struct emu_worker *w;
	struct emu_engine *eng;
	const struct emu_model_ops *ops;
	void *state;
	struct emu_port *ports;
	struct emu_xbar *xb;		/* merlin router (xbar.h); NULL: the FIFO egress model */
	/*
	 * The key of the node's next event: EMU_EV_KEY(id, per-source
	 * sequence), kept whole so that an event takes it with one increment
	 * (the sequence cannot reach 2^EMU_SEQ_BITS in any run).
	 */
	uint64_t key;
	/*
	 * Pending timers of a model with ops->timer_idle, ordered on (t, key).
	 * Only the earliest is always in the worker's event queue (a "wake");
	 * the others wait here, so a host with a timer per block in flight
	 * costs the event queue one entry, not one far-future event per block,
	 * and the idle ones can leave unfired. Timers mostly come in time
	 * order: those go at the tail of a sorted ring; one earlier than all
	 * into the ring (shifting a few on) or a small heap; the others,
	 * out of order, into an unsorted log until a timer fires (port.c,
	 * tlog_sweep()). Other models' timers are events of their own
	 * (emu_timer_at()).
	 */
	struct emu_evfifo tfifo;	/* EMU_EV_TIMER events, sorted; port = 1: woken */
	struct emu_heap theap;		/* the same, far out of order */
	struct emu_ev *tlog;		/* the same, out of order and not the earliest: unsorted, never woken */
	uint32_t tlog_n, tlog_cap;
	alignas(EMU_CACHELINE) const struct emu_fab_node *fn;
	struct emu_rng rng;
	void *arg;
	bool open_loop;			/* emu_node_open_loop() */
};
_Static_assert(sizeof(struct emu_node) == 3 * EMU_CACHELINE, "struct emu_node: three cache lines, laid out by use");

/*
 * Switch queueing models. FIFO: a frame goes straight to its output's
 * egress queue and holds its ingress buffer (the credit) until it starts on
 * the wire. MERLIN: an input-queued router after SST/Merlin's hr_router
 * (xbar.h): per-input, per-class FIFOs whose heads are routed on the
 * output buffers' occupancy, a crossbar arbitrated per output (least
 * recently served, or round robin), an output buffer per port and class.
 * Hosts are the same NIC in both.
 */
enum emu_router {
	EMU_ROUTER_FIFO = 0,
	EMU_ROUTER_MERLIN,
};

enum emu_xbar_arb {
	EMU_XBAR_LRS = 0,		/* least recently served requester first */
	EMU_XBAR_RR,			/* round robin over requesters, per output */
};

enum emu_clock {
	EMU_CLOCK_VIRTUAL = 0,
	EMU_CLOCK_WALL,
};

/* wall clock: the lag bound of cfg.lag_bound_ns when 0 */
#define EMU_LAG_BOUND_NS 2000000ULL

struct emu_engine_cfg {
	unsigned workers;		/* 0: one per core available to the process */
	bool per_node;			/* a pinned thread per node */
	bool lossy;			/* drop-tail instead of credit-based lossless */
	enum emu_tc_mode tc_mode;	/* which frames get class 1 (strict priority, own credits) */
	bool no_pin;			/* do not pin workers */
	bool no_ahead;			/* open-loop sources' wakes are queue events too (port.c; results alike) */
	uint64_t buffer_bytes;		/* per port; 0: emu_default_buffer(router) */
	enum emu_router router;		/* switch queueing model */
	enum emu_xbar_arb xbar_arb;	/* merlin: crossbar arbitration */
	uint64_t xbar_bps;		/* merlin: crossbar rate per port; 0: EMU_XBAR_SPEEDUP x the fastest link */
	uint64_t obuf_bytes;		/* merlin: output buffer per port and class; 0: EMU_MERLIN_OBUF */
	/*
	 * merlin, adaptive routing: the natural up port is kept while its
	 * output buffer has at least this share free; 0: EMU_DEFAULT_ADAPTIVE_THRESHOLD
	 */
	double adaptive_threshold;
	/*
	 * FIFO ports: a queued frame is committed to the wire (its departure
	 * and arrival fixed, one event at the peer) while the serializer is
	 * busy for less than this many bytes' time; 0: EMU_DEFAULT_COMMIT.
	 * With one traffic class the window changes no result, only the
	 * wakes a backlog costs. A frame of the higher class waits behind
	 * those committed before it: at most this much (strict priority
	 * holds among the frames not yet committed), and only the first
	 * after a quiet spell: for EMU_COMMIT_QUIET after a frame of the
	 * higher class was queued on a port, the port commits only when
	 * its wire is idle, so strict priority is exact. @commit_idle: commit
	 * only when the serializer is idle (strict priority exact, one wake
	 * per queued frame).
	 */
	uint64_t commit_bytes;
	bool commit_idle;
	uint64_t seed;
	enum emu_clock clock;
	double dilation;		/* wall: wall ns per emulated ns; 0: auto */
	emu_time_t end;			/* stop at this emulated time; 0: no limit */
	enum emu_routing routing;	/* the policy models read with emu_node_routing() */
	/*
	 * wall: the run kept up if no window started more than this behind
	 * its wall-clock target (0: EMU_LAG_BOUND_NS)
	 */
	uint64_t lag_bound_ns;
	uint64_t lag_max_ns;		/* wall: give up when the lag passes this (0: never); see lag_exceeded */
	uint64_t spin_ns;		/* wall: spin (not sleep) when the next window is closer (0: 400 us) */
	/*
	 * wall: the clock in ns (NULL: CLOCK_MONOTONIC) and the wait until a
	 * time of it (NULL: sleep, then spin on the clock). Tests inject both
	 * to drive time themselves. @wall_sleep runs on every worker at once.
	 */
	uint64_t (*wall_now)(void *ctx);
	void (*wall_sleep)(void *ctx, uint64_t until_ns);
	void *wall_ctx;
	/* called between windows (main-thread-safe: all workers wait) about
	 * every 100 ms of wall time, with the emulated time and completions */
	void (*progress)(void *ctx, emu_time_t now, uint64_t done, uint64_t expect);
	void *progress_ctx;
	/*
	 * called between windows (all workers wait) for every multiple t of
	 * @sample_every, once every event before t ran and none at or after
	 * it (windows are cut there): the state at t, for any worker count;
	 * 0: never. Not in the wall-clock mode or across processes.
	 */
	emu_time_t sample_every;
	void (*sample)(void *ctx, emu_time_t t);
	void *sample_ctx;
	/* watchdog: with completions expected, stop when no node reported
	 * progress (emu_node_progress) for this long, or for twice the
	 * longest wait a node announced (emu_node_waits) if that is longer;
	 * 0: no watchdog */
	emu_time_t stall;
	/* distributed (dist.h): this process runs the workers of its rank;
	 * @workers must then be its count as given to emu_dist_join() */
	struct emu_dist *dist;
	bool pin_offset;		/* pin to PUs after those of lower ranks (local ranks) */
};

#define EMU_DEFAULT_BUFFER (128 * 1024)
#define EMU_DEFAULT_ADAPTIVE_THRESHOLD 0.5	/* hr_router's fat tree: adaptive_threshold */
/*
 * merlin's defaults for what the paper does not state: the point fitted on
 * its baseline figures (bench/merlin-fit.py, bench/README section 10):
 * input buffers (--buffer) 8 KiB, output buffers (--obuf) 128 KiB, the
 * crossbar (--xbar-bw) 1.5 x the fastest link (150 Gb/s on 100 Gb/s links)
 */
#define EMU_MERLIN_IBUF (8 * 1024)
#define EMU_MERLIN_OBUF (128 * 1024)
#define EMU_XBAR_SPEEDUP 1.5

/* emu_default_buffer - the buffer per port and class when none is given: 8 KiB input buffers under merlin */
static inline uint64_t emu_default_buffer(enum emu_router r)
{
	return r == EMU_ROUTER_MERLIN ? EMU_MERLIN_IBUF : EMU_DEFAULT_BUFFER;
}
#define EMU_DEFAULT_COMMIT (4 * 1024)
#define EMU_COMMIT_QUIET (10 * EMU_US)

/* a distribution of lags, in wall ns: quantiles within 1/16 (bucket tops), the max exact */
struct emu_lag_dist {
	uint64_t samples;
	uint64_t p50_ns, p99_ns, max_ns;
};

struct emu_run_stats {
	emu_time_t emulated;		/* time of the last processed event / stop time */
	uint64_t wall_ns;
	uint64_t events;		/* queue events and credit returns */
	uint64_t queue_events;		/* ...of which went through the event queue */
	uint64_t frame_hops;		/* frames put on a link */
	uint64_t windows;
	/*
	 * The critical path of the partition: over windows, the sum of the
	 * largest worker's events in that window (this process's workers).
	 * events / events_critical is the speedup the partitioning allows
	 * when an event costs the same everywhere and barriers are free.
	 */
	uint64_t events_critical;
	uint64_t cross_events;		/* events that crossed partitions */
	uint64_t spilled;		/* ...of which did not fit a ring */
	unsigned workers;
	double frame_hops_per_s;
	/*
	 * wall clock mode: a window's lag is how far behind its target
	 * (wall0 + emulated x dilation) it started; the mean is over the paced
	 * windows. Kept up: some windows were paced (auto dilation paces after
	 * calibrating) and max_lag_ns <= lag_bound_ns, every window on time
	 * within the bound; late_windows of paced_windows were not.
	 */
	double dilation;
	uint64_t max_lag_ns;
	uint64_t final_lag_ns;
	uint64_t mean_lag_ns;
	uint64_t lag_bound_ns;
	uint64_t paced_windows;
	uint64_t late_windows;		/* lag above the bound */
	bool kept_up;
	/*
	 * Real-time runs (the wall clock with one worker) as distributions:
	 * @event_lag samples every paced window twice, how far behind its
	 * wall time the window's first event ran and how far its last one
	 * did (so the events in between, run in time order, lie within);
	 * @inject_lag every frame from outside (emu_node_injected()).
	 */
	struct emu_lag_dist event_lag, inject_lag;
	bool lag_exceeded;		/* ended because the lag passed cfg.lag_max_ns */
	double pace;			/* ...then: emulated time per wall time since pacing began (< 1) */
	bool stopped;			/* ended by emu_stop()/cfg.end rather than running dry */
	uint64_t done;			/* emu_node_done() calls */
	bool stalled;			/* ended by the watchdog */
	emu_time_t last_progress;	/* time of the last emu_node_progress() (or of the first event) */
	emu_time_t wait_max;		/* the longest emu_node_waits() */
	emu_time_t last_done;		/* time of the latest */
	uint64_t pool_frames;		/* frames carved from chunks (memory use) */
	emu_time_t last_event;		/* of this process's workers */
};

/*
 * emu_engine_create - runtime for @fab (finalized; must outlive the engine).
 * Return NULL with a reason in @err on a bad configuration.
 */
struct emu_engine *emu_engine_create(const struct emu_fabric *fab, const struct emu_engine_cfg *cfg,
				     char *err, size_t errlen);
/*
 * emu_engine_mem_estimate - the bytes an engine for @fab allocates at
 * least: its nodes and ports and @nroutes routing tables (one, plus one
 * per distinct time of a scheduled failure or repair). Not counted: the
 * models' state, frames and events in flight.
 */
uint64_t emu_engine_mem_estimate(const struct emu_fabric *fab, unsigned nroutes);
/* emu_engine_destroy - run the models' fini, free everything. Accepts NULL. */
void emu_engine_destroy(struct emu_engine *eng);

/* emu_engine_set_model - plug @ops into @node with @arg for init. Before run. */
void emu_engine_set_model(struct emu_engine *eng, uint32_t node, const struct emu_model_ops *ops, void *arg);

/*
 * emu_engine_schedule_link / _node - take a link or a node down (@up false)
 * or up at emulated time @t. Frames on a link when it goes down are lost;
 * routing tables are recomputed and published (RCU) at exactly @t.
 * Before run. Return 0 or -EINVAL.
 */
int emu_engine_schedule_link(struct emu_engine *eng, uint32_t link, emu_time_t t, bool up);
int emu_engine_schedule_node(struct emu_engine *eng, uint32_t node, emu_time_t t, bool up);

/*
 * emu_engine_set_wall_origin - wall clock at a fixed dilation: emulated
 * time 0 is due at @wall_ns of the run's clock (cfg.wall_now's, else
 * CLOCK_MONOTONIC), not at the start of the first window, so that an
 * emulated time falls on a chosen wall-clock instant (--start-at). What
 * is due before the run starts runs at once; that first window is not
 * counted late. Before run.
 */
void emu_engine_set_wall_origin(struct emu_engine *eng, uint64_t wall_ns);

/*
 * emu_engine_set_stall_origin - the stall watchdog counts from emulated
 * time @t at the earliest: the nodes hold their sends until then on
 * purpose (--attach-hold, --start-at), which is not a stall. Before run.
 */
void emu_engine_set_stall_origin(struct emu_engine *eng, emu_time_t t);

/* emu_engine_expect_done - stop once @count emu_node_done() calls happened. Before run. */
void emu_engine_expect_done(struct emu_engine *eng, uint64_t count);

/*
 * A tap sees every frame put on a tapped port: on the sending node's
 * worker (@worker), at the time its first bit leaves. Before run.
 */
typedef void (*emu_tap_fn)(void *ctx, unsigned worker, uint32_t node, unsigned port, const struct emu_frame *f,
			   emu_time_t t);
void emu_engine_set_tap(struct emu_engine *eng, emu_tap_fn fn, void *ctx);
/* emu_engine_tap_port - tap (node, port); return -EINVAL if there is no such linked port. */
int emu_engine_tap_port(struct emu_engine *eng, uint32_t node, unsigned port);
unsigned emu_engine_workers(const struct emu_engine *eng);
/* emu_engine_xbar_bps - the merlin router's crossbar rate per port (0 under the FIFO model) */
uint64_t emu_engine_xbar_bps(const struct emu_engine *eng);

/* emu_engine_drop_nth - lose the @n-th frame (1-based) sent on (node, port). Before run. */
int emu_engine_drop_nth(struct emu_engine *eng, uint32_t node, unsigned port, uint64_t n);

/* emu_engine_run - run to completion. Return 0 or the first init error. */
int emu_engine_run(struct emu_engine *eng);

const struct emu_run_stats *emu_engine_stats(const struct emu_engine *eng);
struct emu_node *emu_engine_node(struct emu_engine *eng, uint32_t id);
unsigned emu_engine_partition(const struct emu_engine *eng, uint32_t node);
/* emu_engine_node_local - does this process run @node (always, unless distributed)? */
bool emu_engine_node_local(const struct emu_engine *eng, uint32_t node);
/* emu_engine_error - why emu_engine_run() failed (a distributed run broke), or "" */
const char *emu_engine_error(const struct emu_engine *eng);
const struct emu_fabric *emu_engine_fabric(const struct emu_engine *eng);

/*
 * ---- called by models, on the node's worker ----
 * A node's clock, frames, completion and hold: node.h (node.c). Sends,
 * frees, timers and the port queries: port.h (port.c). The routing choice:
 * route.h (route.c). Outside input of a real-time run: below (engine.c).
 */

/*
 * emu_node_watch - a source of input from outside the emulation (an
 * attached interface): while a real-time run (the wall clock, one worker,
 * a fixed dilation) waits for the wall clock, it wakes when @ready(@ctx)
 * is true (a check without a system call, made between windows and while
 * spinning) or @fd (-1: none) polls readable, and calls @n's timer with
 * @cookie at the emulated time of that instant: no earlier than any event
 * already run, at most one such wake pending at a time. Call from @init.
 * Return 0, or -ENOTSUP for any other run (the virtual clock, several
 * workers, auto dilation, --processes): the model must poll by itself.
 */
int emu_node_watch(struct emu_node *n, int fd, bool (*ready)(void *ctx), void *ctx, uint64_t cookie);

/*
 * emu_node_injected - a frame from outside that arrived at wall time @wall
 * (the run's clock, cfg.wall_now's or CLOCK_MONOTONIC) enters the fabric
 * now: its lag (the wall time emulated "now" is due, minus @wall; 0 if
 * earlier) joins the run's injected-frame lag distribution. @wall 0:
 * arrival unknown, nothing counted. Wall clock only (else a no-op).
 */
void emu_node_injected(struct emu_node *n, uint64_t wall);

#include "emu/engine/node.h"
#include "emu/engine/port.h"

#endif /* EMU_ENGINE_H */
