// SPDX-License-Identifier: MIT
/*
 * DOC: realtime.c - the wall clock: pacing the windows of a run with
 * --clock wall (calibrating an auto dilation, measuring how late windows
 * start), and the real-time scheduler of a run with one worker (windows
 * of every event due by the wall clock's now, the wait in between
 * watching the outside inputs of attached interfaces, waking early by
 * what timer wake-ups overshoot). engine.c plans windows and calls in
 * here; see realtime.h.
 */
#include "emu/engine/realtime.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Calibration stretch of --dilation auto, in wall nanoseconds. */
#define EMU_CALIBRATE_NS 10000000ULL

/* wall_now - the wall clock of the run (cfg.wall_now or CLOCK_MONOTONIC). */
uint64_t emu_wall_now(const struct emu_engine *eng)
{
	return eng->cfg.wall_now ? eng->cfg.wall_now(eng->cfg.wall_ctx) : emu_wall_ns();
}

/*
 * The smallest dilation of the form 1.25^k that leaves 50 % headroom over
 * the measured wall time per emulated time (the machine's load varies).
 */
double emu_auto_dilation(uint64_t wall_ns, emu_time_t emu_ps)
{
	double r = (double)wall_ns / ((double)emu_ps / 1000.0) * 1.5;
	double d = 1;

	while (d < r)
		d *= 1.25;
	return d;
}

/*
 * lag_give_up - the run cannot keep pace with the wall clock: stop it at
 * @next and record the pace it kept since it was last on time (emulated
 * per wall time while it fell behind, running flat out), from which a
 * caller can say what it sustains.
 */
static void lag_give_up(struct emu_engine *eng, uint64_t now, emu_time_t next)
{
	uint64_t w0 = eng->caught_wall ? eng->caught_wall : eng->wall0;
	emu_time_t e0 = eng->caught_wall ? eng->caught_emu : eng->emu0;
	double wall = (double)(now - w0), emu = (double)(next - e0) / 1000.0;

	eng->st.lag_exceeded = true;
	eng->st.pace = wall > 0 ? emu / wall * eng->dilation : 0;
	eng->st.stopped = true;
	eng->st.emulated = next;
	eng->done = true;
}

static unsigned lagh_bucket(uint64_t v)
{
	if (v < 16)
		return (unsigned)v;
	unsigned e = 63 - (unsigned)__builtin_clzll(v);	/* >= 4: v in [2^e, 2^(e+1)) */

	return 16 + (e - 4) * 16 + (unsigned)((v >> (e - 4)) & 15);
}

/* the largest value of bucket @i (the top bucket's wraps to UINT64_MAX) */
static uint64_t lagh_top(unsigned i)
{
	if (i < 16)
		return i;
	unsigned e = (i - 16) / 16 + 4, m = (i - 16) % 16;

	return ((uint64_t)(16 + m + 1) << (e - 4)) - 1;
}

static void lagh_add(struct emu_lagh *h, uint64_t v)
{
	h->n++;
	h->b[lagh_bucket(v)]++;
	if (v > h->max)
		h->max = v;
}

void emu_lagh_merge(struct emu_lagh *h, const struct emu_lagh *from)
{
	for (unsigned i = 0; i < EMU_LAGH_BUCKETS; i++)
		h->b[i] += from->b[i];
	h->n += from->n;
	if (from->max > h->max)
		h->max = from->max;
}

/* the smallest bucket top at or above @num/@den of the samples, never above the max */
static uint64_t lagh_quantile(const struct emu_lagh *h, uint64_t num, uint64_t den)
{
	uint64_t want = (h->n * num + den - 1) / den, seen = 0;

	for (unsigned i = 0; i < EMU_LAGH_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want && seen)
			return lagh_top(i) < h->max ? lagh_top(i) : h->max;
	}
	return h->max;
}

struct emu_lag_dist emu_lagh_dist(const struct emu_lagh *h)
{
	if (!h || !h->n)
		return (struct emu_lag_dist){ 0 };
	return (struct emu_lag_dist){
		.samples = h->n,
		.p50_ns = lagh_quantile(h, 1, 2),
		.p99_ns = lagh_quantile(h, 99, 100),
		.max_ns = h->max,
	};
}

/* the wall time (the run's clock) at which emulated time @t is due; pacing only */
static uint64_t wall_of(const struct emu_engine *eng, emu_time_t t)
{
	return eng->wall0 + (uint64_t)((double)(t - eng->emu0) / 1000.0 * eng->dilation);
}

/* the emulated time due at wall time @now: the latest t with wall_of(t) <= now; pacing only */
static emu_time_t emu_at(const struct emu_engine *eng, uint64_t now)
{
	if (now <= eng->wall0)
		return eng->emu0;
	emu_time_t t = eng->emu0 + (emu_time_t)((double)(now - eng->wall0) * 1000.0 / eng->dilation);

	while (t > eng->emu0 && wall_of(eng, t) > now)	/* rounding */
		t--;
	return t;
}

/* wall clock, before pacing: calibrate (auto dilation); pacing starts at @now for @next */
static void pace_start(struct emu_engine *eng, uint64_t now, emu_time_t next)
{
	if (eng->wall_origin && eng->dilation > 0) {
		eng->wall0 = eng->wall_origin;
		eng->emu0 = 0;
		eng->pacing = true;
		return;
	}
	if (!eng->wall0) {
		eng->wall0 = now;
		eng->emu0 = next;
	}
	if (eng->dilation > 0 ||
	    (now - eng->wall0 > EMU_CALIBRATE_NS && ++eng->calib_windows > 200 && next > eng->emu0)) {
		if (eng->dilation <= 0)
			eng->dilation = emu_auto_dilation(now - eng->wall0, next - eng->emu0);
		eng->pacing = true;
		eng->wall0 = now;
		eng->emu0 = next;
	}
}

/* wall clock, pacing: how late the window whose first event is @next starts at @now */
static void pace_lag(struct emu_engine *eng, uint64_t now, emu_time_t next)
{
	uint64_t target = wall_of(eng, next);

	if (now > target) {
		uint64_t lag = now - target;

		lagh_add(eng->event_h, lag);
		eng->st.final_lag_ns = lag;
		eng->lag_sum += lag;
		if (lag > eng->st.max_lag_ns)
			eng->st.max_lag_ns = lag;
		if (lag > eng->cfg.lag_bound_ns)
			eng->st.late_windows++;
		if (eng->cfg.lag_max_ns && lag > eng->cfg.lag_max_ns)
			lag_give_up(eng, now, next);
	} else {
		lagh_add(eng->event_h, 0);
		eng->st.final_lag_ns = 0;
		eng->caught_wall = now;
		eng->caught_emu = next;
	}
	eng->lag_windows++;
}

/* wall clock, lookahead windows: calibrate, then measure how late the window starts */
void emu_rt_window_pace(struct emu_engine *eng, emu_time_t next)
{
	if (eng->cfg.clock != EMU_CLOCK_WALL)
		return;
	uint64_t now = emu_wall_now(eng);

	eng->first_paced = !eng->pacing;
	if (!eng->pacing)
		pace_start(eng, now, next);
	else
		pace_lag(eng, now, next);
}

/*
 * watch_wake - real time: every watch that is ready (@pfd: or its fd
 * polled readable) and has no wake pending gets one at the emulated time
 * of wall time @now, or at the end of the window last run if that is later
 * (what ran stays before). A wake is pending until the queue's earliest
 * event is later than it (it ran). Return the earliest wake queued
 * (EMU_TIME_INF: none).
 */
static emu_time_t watch_wake(struct emu_engine *eng, uint64_t now, bool polled)
{
	struct emu_worker *w = &eng->workers[0];
	emu_time_t t = emu_at(eng, now), first = EMU_TIME_INF;

	if (t < eng->win_end && eng->win_end != EMU_TIME_INF)
		t = eng->win_end;
	for (unsigned i = 0; i < eng->nwatch; i++) {
		struct emu_watch *x = &eng->watch[i];

		if (x->pending && emu_evq_min_time(&w->q) <= x->pending_t)
			continue;
		x->pending = false;
		if (!(x->ready && x->ready(x->ctx)) && !(polled && (eng->pfd[i].revents & POLLIN)))
			continue;
		x->pending = true;
		x->pending_t = t;
		emu_timer_at(&eng->nodes[x->node], t, x->cookie);
		first = t;
	}
	return first;
}

static void learn_oversleep(struct emu_engine *eng, uint64_t late)
{
	uint64_t m = eng->oversleep - eng->oversleep / 64;

	if (late + late / 2 > m)
		m = late + late / 2;
	eng->oversleep = m < EMU_OVERSLEEP_MAX ? m : EMU_OVERSLEEP_MAX;
}

/*
 * rt_wait - real time: wait from wall time *@now until @next is due or a
 * watch wakes, whichever comes first: sleep (in ppoll() on the watched
 * fds) while far from it, then spin, checking the watches. Return the
 * window's first event (a wake may come before @next), the wall time then
 * in *@now.
 */
static emu_time_t rt_wait(struct emu_engine *eng, emu_time_t next, uint64_t *now)
{
	uint64_t target = wall_of(eng, next);
	uint64_t spin = eng->cfg.spin_ns ? eng->cfg.spin_ns : 400000;
	bool polled = false;

	for (;;) {
		emu_time_t wake = eng->nwatch ? watch_wake(eng, *now, polled) : EMU_TIME_INF;
		uint64_t asked = 0;

		if (wake != EMU_TIME_INF || *now >= target)
			return wake < next ? wake : next;
		polled = false;
		if (eng->cfg.wall_sleep) {
			eng->cfg.wall_sleep(eng->cfg.wall_ctx, target);
		} else if (target - *now > spin + eng->oversleep) {
			uint64_t d = target - *now - spin * 3 / 4 - eng->oversleep;
			struct timespec ts = { .tv_sec = (time_t)(d / 1000000000), .tv_nsec = (long)(d % 1000000000) };

			asked = *now + d;
			if (eng->nwatch) {
				for (unsigned i = 0; i < eng->nwatch; i++)
					eng->pfd[i].revents = 0;
				polled = ppoll(eng->pfd, eng->nwatch, &ts, NULL) > 0;
			} else {
				nanosleep(&ts, NULL);
			}
		} else {
			emu_cpu_relax();
		}
		*now = emu_wall_now(eng);
		if (asked && !polled)
			learn_oversleep(eng, *now > asked ? *now - asked : 0);
	}
}

/*
 * rt_plan - the window of a real-time run: wait until the next event is
 * due (or an outside input wakes the run), then take every event due by
 * the wall clock's now. Before pacing starts (auto dilation calibrating)
 * windows are one lookahead, run flat out.
 */
void emu_rt_plan(struct emu_engine *eng, emu_time_t next)
{
	uint64_t now = emu_wall_now(eng);
	bool first = false;

	if (!eng->pacing) {
		pace_start(eng, now, next);
		if (!eng->pacing) {
			emu_window_bounds(eng, next, emu_lookahead_end(eng, next));
			return;
		}
		first = true;	/* wall0, emu0 = now, next: not late */
	}
	next = rt_wait(eng, next, &now);
	emu_time_t due = emu_at(eng, now);

	emu_window_bounds(eng, next, (due > next ? due : next) + 1);
	eng->first_paced = first;
	if (!first)
		pace_lag(eng, now, next);
}

/* lookahead windows: wait until the window's start is due */
void emu_rt_wall_wait(struct emu_engine *eng)
{
	if (eng->cfg.clock != EMU_CLOCK_WALL || !eng->pacing)
		return;
	uint64_t target = wall_of(eng, eng->win_start);

	if (eng->cfg.wall_sleep) {
		eng->cfg.wall_sleep(eng->cfg.wall_ctx, target);
		return;
	}
	/* sleep while far from the target (timer wake-ups overshoot), then spin */
	uint64_t spin = eng->cfg.spin_ns ? eng->cfg.spin_ns : 400000;

	for (;;) {
		uint64_t now = emu_wall_ns();

		if (now >= target)
			return;
		if (target - now > spin) {
			uint64_t d = target - now - spin * 3 / 4;
			struct timespec ts = { .tv_sec = (time_t)(d / 1000000000), .tv_nsec = (long)(d % 1000000000) };

			nanosleep(&ts, NULL);
		} else {
			emu_cpu_relax();
		}
	}
}

/*
 * rt_process - a real-time window: its events in stretches of at most one
 * lookahead (the windows a run with lookahead windows would have), back to
 * plan_window() as soon as a node asked to stop or completed (the end it
 * sets is then the same); then how late the window's last event ran.
 */
void emu_rt_process(struct emu_worker *w)
{
	struct emu_engine *eng = w->eng;
	emu_time_t end = eng->win_end, t;
	uint64_t done = w->done;

	for (;;) {
		/* the worker's earliest: the queue's, or a transmit wake run ahead that waits (port.c) */
		t = emu_evq_min_time(&w->q);
		if (w->later_min < t)
			t = w->later_min;
		if (t >= end)
			break;
		emu_time_t e = t + (eng->lookahead ? eng->lookahead : 1);

		emu_worker_process(w, e < t || e > end ? end : e);
		if (w->stop_req != EMU_TIME_INF || w->done != done)
			break;
	}
	if (eng->pacing) {
		uint64_t now = emu_wall_now(eng), due = wall_of(eng, w->now);

		/* not the window that starts the pacing: with an origin (--start-at) it catches up the set-up */
		if (!eng->first_paced)
			lagh_add(eng->event_h, now > due ? now - due : 0);
	}
}

int emu_node_watch(struct emu_node *n, int fd, bool (*ready)(void *ctx), void *ctx, uint64_t cookie)
{
	struct emu_engine *eng = n->w->eng;

	if (!eng->realtime || eng->cfg.dilation <= 0)
		return -ENOTSUP;
	eng->watch = emu_xrealloc(eng->watch, (eng->nwatch + 1) * sizeof(*eng->watch));
	eng->pfd = emu_xrealloc(eng->pfd, (eng->nwatch + 1) * sizeof(*eng->pfd));
	eng->watch[eng->nwatch] = (struct emu_watch){
		.fd = fd, .ready = ready, .ctx = ctx, .cookie = cookie, .node = n->id,
	};
	eng->pfd[eng->nwatch] = (struct pollfd){ .fd = fd, .events = POLLIN };
	eng->nwatch++;
	return 0;
}

void emu_node_injected(struct emu_node *n, uint64_t wall)
{
	struct emu_worker *w = n->w;
	struct emu_engine *eng = w->eng;

	if (eng->cfg.clock != EMU_CLOCK_WALL || !eng->pacing || !wall)
		return;
	uint64_t due = wall_of(eng, w->now);

	if (!w->inject_h)
		w->inject_h = emu_xcalloc(1, sizeof(*w->inject_h));
	lagh_add(w->inject_h, due > wall ? due - wall : 0);
}

