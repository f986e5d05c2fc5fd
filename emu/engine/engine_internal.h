/* SPDX-License-Identifier: MIT */
/*
 * DOC: engine_internal.h - the engine's private state, shared by engine.c
 * (windows, workers, control) and port.c (the per-frame data path).
 */
#ifndef EMU_ENGINE_INTERNAL_H
#define EMU_ENGINE_INTERNAL_H

#include <poll.h>
#include <pthread.h>
#include <stdalign.h>

#include "emu/engine/barrier.h"
#include "emu/engine/chan.h"
#include "emu/engine/engine.h"
#include "emu/engine/util.h"

/*
 * struct emu_lagh - a histogram of lags in ns: values below 16 exact, then
 * 16 buckets per power of two (a bucket spans 1/16 of its lower bound).
 */
#define EMU_LAGH_BUCKETS (16 + 60 * 16)
struct emu_lagh {
	uint64_t n, max;
	uint64_t b[EMU_LAGH_BUCKETS];
};

/* struct emu_watch - an outside input of a real-time run (emu_node_watch()) */
struct emu_watch {
	int fd;
	bool (*ready)(void *ctx);
	void *ctx;
	uint64_t cookie;
	uint32_t node;
	bool pending;		/* a wake at pending_t is queued and has not run */
	emu_time_t pending_t;
};

struct emu_worker {
	unsigned id;
	struct emu_engine *eng;
	pthread_t thread;
	struct emu_evq q;
	struct emu_pool pool;
	emu_time_t now;
	uint64_t cur_key;	/* key of the event being processed */
	emu_time_t hold;	/* emu_node_hold_until(): frames sent start no earlier */
	/* an open-loop node's transmit wake, to run ahead when the event ends (port.c, emu_port_ahead) */
	struct emu_node *ahead_n;
	bool in_process;	/* in process(): what happens outside (init, channel drains) takes no slot */
	struct emu_ev ahead_ev;
	/* such wakes due after the window: run ahead in the next one (emu_port_ahead_window) */
	struct emu_ev *later;
	uint32_t nlater, later_cap;
	emu_time_t later_min;		/* the earliest of them, EMU_TIME_INF if none */
	uint32_t *nodes;
	uint32_t nnodes;
	struct emu_chan **in;
	uint32_t nin;
	struct emu_chan **out;
	uint32_t nout;
	struct emu_chan **rin;	/* from workers of other processes */
	uint32_t nrin;
	int init_rc;
	/* stats */
	uint64_t events;	/* queue events and credit returns */
	uint64_t qevents;	/* events popped from the queue (credits that became events included) */
	uint64_t events_mark;	/* events at the start of the window (critical path) */
	uint64_t frame_hops;
	emu_time_t progress_t;	/* 1 + time of the latest emu_node_progress(), 0: none */
	emu_time_t wait_max;	/* the longest emu_node_waits() so far */
	struct emu_lagh *inject_h;	/* emu_node_injected(), allocated at the first */
	/* published at the window barrier */
	alignas(EMU_CACHELINE) emu_time_t next_local;
	emu_time_t stop_req;
	emu_time_t last_event;
	uint64_t done;
	emu_time_t done_max;
};

struct emu_ctl_action {
	emu_time_t t;
	uint32_t seq;
	uint32_t id;
	bool is_node;
	bool up;
};

struct emu_engine {
	const struct emu_fabric *fab;
	struct emu_engine_cfg cfg;
	struct emu_node *nodes;
	struct emu_port *ports;
	struct emu_worker *workers;
	unsigned nworkers;		/* in this process */
	unsigned wbase;			/* global id of workers[0] */
	unsigned wtotal;		/* workers of all processes */
	struct emu_dist *dist;
	struct emu_chan **rout;		/* channels to other processes */
	uint32_t nrout;
	struct emu_chan **rin;		/* channels from other processes */
	uint32_t nrin;
	bool dist_failed;
	char err[256];
	uint32_t *part;
	emu_time_t lookahead;
	struct emu_barrier bar;
	bool ran;

	/* window plan, written by the serial section of the barrier */
	emu_time_t win_start;
	emu_time_t win_end;
	emu_time_t stop_at;
	bool done;
	uint64_t expect_done;
	uint64_t ndone;
	bool stall_armed;		/* the watchdog has a start time */
	emu_time_t sample_next;		/* cfg.sample_every: the next sample's time */
	emu_time_t stall_origin;	/* ... not before this one (emu_engine_set_stall_origin) */

	/* routing, RCU-published */
	struct emu_routes *routes;
	struct emu_routes **snapshots;	/* one per distinct action time */
	size_t nsnap;

	/* control schedule and the control thread */
	struct emu_ctl_action *act;
	size_t nact;
	size_t capact;
	size_t next_act;
	size_t next_snap;
	pthread_t ctl_thread;
	pthread_mutex_t ctl_lock;
	pthread_cond_t ctl_cond;
	struct emu_routes *ctl_publish;	/* request: publish this */
	bool ctl_quit;

	/* wall clock */
	uint64_t wall0;
	emu_time_t emu0;
	double dilation;
	bool pacing;
	uint64_t wall_origin;		/* emu_engine_set_wall_origin (0: the first window's start) */
	bool first_paced;		/* this window starts the pacing: its lag is not measured */
	uint64_t oversleep;		/* real time: wake this much earlier than asked (learn_oversleep) */
	uint64_t last_progress;
	uint64_t lag_sum;
	uint64_t caught_wall;		/* wall clock: when the run last was on time... */
	emu_time_t caught_emu;		/* ...and its emulated time then */
	uint64_t lag_windows;
	uint64_t calib_windows;
	/*
	 * real time (the wall clock, one worker, no other process): windows
	 * run every event due by now, the wait in between watches the outside
	 */
	bool realtime;
	struct emu_watch *watch;
	struct pollfd *pfd;		/* the watches' fds, for ppoll() */
	unsigned nwatch;
	struct emu_lagh *event_h;	/* the event lag samples (wall clock) */

	struct emu_run_stats st;
	void *hwtopo;
	emu_tap_fn tap;
	void *tap_ctx;
};

#endif /* EMU_ENGINE_INTERNAL_H */
