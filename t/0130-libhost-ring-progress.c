// SPDX-License-Identifier: MIT
/*
 * DOC: the progress a run reports (what canary-emu --progress estimates
 * the time left from) moves from the start for the ring too: the ring
 * delivers no result element in its first half (reduce-scatter), so the
 * share of the result delivered stayed at 0 until half-time and the
 * estimate came late. Progress reports before half-time must show work
 * done, never more than the whole, and never go back.
 */
#include <string.h>

#include "emu/scenario.h"
#include "tap.h"

#define MAXS 4096

static struct sample {
	emu_time_t now;
	uint64_t done, expect;
} smp[MAXS];
static unsigned nsmp;

static void progress(void *ctx, emu_time_t now, uint64_t done, uint64_t expect)
{
	(void)ctx;
	if (nsmp < MAXS)
		smp[nsmp++] = (struct sample){ now, done, expect };
}

int main(void)
{
	struct emu_scn_cfg c;
	struct emu_scn_result r;
	char err[256];

	plan(3);
	emu_scenario_defaults(&c);
	c.topology = "fattree2:leaves=16,spines=4,hosts=16";
	c.hosts = 256;
	c.size_bytes = 1u << 20;	/* 1 KiB per host and step: little pipelining within a chunk */
	c.algo = LH_ALGO_RING;
	c.background = false;
	c.workers = 1;
	c.progress = progress;
	int rc = emu_scenario_run(&c, &r, err, sizeof(err));

	ok(rc == 0 && r.exact, "ring, 256 hosts, 1 MiB: exact (%s)", rc ? err : "ran");
	unsigned early = 0, early_moved = 0;
	bool sane = nsmp > 0;

	for (unsigned i = 0; i < nsmp; i++) {
		if (smp[i].now < r.runtime * 45 / 100) {
			early++;
			early_moved += smp[i].done > 0;
		}
		sane = sane && smp[i].done <= smp[i].expect && smp[i].expect == 256 * (c.size_bytes / 4) &&
		       (i == 0 || smp[i].done >= smp[i - 1].done);
	}
	diag("%u progress reports, %u before 45 %% of the runtime (%.1f us)", nsmp, early, (double)r.runtime / 1e6);
	ok(sane, "progress: at most the whole (256 hosts x 256 Ki elements), never going back");
	if (!early)
		skip(1, "no progress report before half-time (the run was too fast for the 100 ms reports)");
	else
		ok(early_moved == early, "every report before half-time shows work done (%u of %u)", early_moved, early);
	emu_scenario_result_fini(&r);
	return done_testing();
}
