/* SPDX-License-Identifier: MIT */
/*
 * DOC: series.h - a run's time series (canary-emu --timeseries): every
 * interval of emulated time, one CSV row of the state at its end, read
 * from the counters the run keeps anyway, between windows (the engine's
 * cfg.sample): link utilization and queue depth per tier (the levels a
 * directed link joins, 0 hosts, 1 leaves, ...), Canary descriptors in use
 * per switch, background goodput and the allreduce result elements
 * delivered; optionally, per chosen link, its utilization and queued
 * bytes; and a gnuplot script that draws them. Nothing runs per frame:
 * the cost is per interval, O(links + switches + hosts).
 */
#ifndef EMU_SERIES_H
#define EMU_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "emu/engine/engine.h"
#include "emu/engine/fabric.h"

/* rows written at most; later intervals are counted, not written */
#define EMU_SERIES_MAX_ROWS 1000000
/* directed links with columns of their own at most (two columns each) */
#define EMU_SERIES_MAX_LINKS 256

struct emu_series;

struct emu_series_stats {
	uint64_t rows;			/* rows written */
	uint64_t dropped;		/* intervals past EMU_SERIES_MAX_ROWS */
	uint64_t wall_ns;		/* wall time spent sampling and writing */
	uint64_t max_ns;		/* ...the longest row */
};

/*
 * emu_series_open - write @path (CSV) and beside it the gnuplot script
 * (@path with ".gp" for its ".csv", or added) for a run of @eng on @fab,
 * a row every @every of emulated time (set the engine's cfg.sample to
 * emu_series_sample with the returned context). @links (NULL: none)
 * chooses links for columns of their own, util_NODE/PORT and
 * queue_B_NODE/PORT per direction, named by the sending end as the
 * report's links are: "all", or NODE/PORT (that link) and NODE (all its
 * links), comma-separated; at most EMU_SERIES_MAX_LINKS directions.
 * NULL with a reason in @err.
 */
struct emu_series *emu_series_open(const char *path, emu_time_t every, const char *title, struct emu_engine *eng,
				   const struct emu_fabric *fab, const char *links, char *err, size_t errlen);
/*
 * emu_series_name - @base with "-TAG" before its ".csv" (or at its end),
 * ':' in @tag as '-': one file per algorithm. Into @out (@n bytes).
 */
void emu_series_name(const char *base, const char *tag, char *out, size_t n);
/* emu_series_sample - the engine's cfg.sample: the row for the interval ending at @t */
void emu_series_sample(void *ctx, emu_time_t t);
/*
 * emu_series_close - the last row, for the interval ending at @end (the
 * run's end) if that is past the last row; close; free. 0, or -EIO with
 * why in @err (the rows written so far stay).
 */
int emu_series_close(struct emu_series *s, emu_time_t end, struct emu_series_stats *st, char *err, size_t errlen);

#endif /* EMU_SERIES_H */
