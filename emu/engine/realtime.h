/* SPDX-License-Identifier: MIT */
/*
 * DOC: realtime.h - between the window planner and worker loop (engine.c)
 * and the wall clock (realtime.c). Private to the engine.
 */
#ifndef EMU_REALTIME_H
#define EMU_REALTIME_H

#include "emu/engine/engine_internal.h"

/* ---- realtime.c ---- */

/*
 * The real-time scheduler's timer wake-ups come late: by tens of
 * microseconds on a quiet machine, and on a virtual machine whose idle
 * vCPU the host descheduled by 0.2-3 ms now and then (measured on the
 * 2-core development VM: 10 ms sleeps woke up to 2.9 ms late). The scheduler
 * wakes early by 1.5 x the latest lateness seen, spinning the rest, so a
 * late wake-up costs one late window, not one every sleep. The margin
 * starts at EMU_OVERSLEEP_START (before anything was learned), decays by
 * 1/64 per sleep that was on time and stays below EMU_OVERSLEEP_MAX: the
 * spinning costs at most that much of each sleep's core time, where the
 * fabric is idle.
 */
#define EMU_OVERSLEEP_START 1000000ULL
#define EMU_OVERSLEEP_MAX 4000000ULL

/* emu_wall_now - the wall clock of the run (cfg.wall_now or CLOCK_MONOTONIC) */
uint64_t emu_wall_now(const struct emu_engine *eng);
/* emu_auto_dilation - --dilation auto's dilation for @wall_ns of wall time per @emu_ps emulated */
double emu_auto_dilation(uint64_t wall_ns, emu_time_t emu_ps);
/* emu_lagh_merge - add histogram @from into @h */
void emu_lagh_merge(struct emu_lagh *h, const struct emu_lagh *from);
/* emu_lagh_dist - the distribution @h holds (NULL: none) */
struct emu_lag_dist emu_lagh_dist(const struct emu_lagh *h);
/* emu_rt_window_pace - wall clock, lookahead windows: calibrate, then measure how late the window starts */
void emu_rt_window_pace(struct emu_engine *eng, emu_time_t next);
/* emu_rt_plan - the next window of a real-time run (waits for the wall clock or an outside input) */
void emu_rt_plan(struct emu_engine *eng, emu_time_t next);
/* emu_rt_wall_wait - lookahead windows on the wall clock: wait until the window's start is due */
void emu_rt_wall_wait(struct emu_engine *eng);
/* emu_rt_process - run a real-time window's events on @w, and record how late its last one ran */
void emu_rt_process(struct emu_worker *w);

/* ---- engine.c ---- */

/* emu_lookahead_end - the end of a lookahead window that starts at @next */
emu_time_t emu_lookahead_end(const struct emu_engine *eng, emu_time_t next);
/* emu_window_bounds - the next window is [@next, @end) */
void emu_window_bounds(struct emu_engine *eng, emu_time_t next, emu_time_t end);
/* emu_worker_process - run @w's events before @end */
void emu_worker_process(struct emu_worker *w, emu_time_t end);

#endif /* EMU_REALTIME_H */
