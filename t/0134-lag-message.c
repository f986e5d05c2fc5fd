// SPDX-License-Identifier: MIT
/*
 * DOC: the --max-lag message (emu_scn_lag_message). A run that kept a
 * measured pace below real time is told the link rate it sustains: the
 * fastest link's rate scaled by the pace, never above it. A pace of 0 (none
 * measured) or above 1 (the lag came at once, in one window, not over a
 * stretch) suggests no rate at all: the campaign's run had a pace of 231
 * and was told its 100 Gb/s links would do at 23166195 Mb/s.
 */
#include <string.h>

#include "emu/scenario.h"
#include "tap.h"

int main(void)
{
	struct emu_run_stats run;
	char m[512];
	const uint64_t rate = 100000000000ULL;	/* 100 Gb/s */

	plan(4);
	memset(&run, 0, sizeof(run));
	run.final_lag_ns = 1200000000ULL;
	run.emulated = 4 * EMU_MS;

	run.pace = 231.66;
	emu_scn_lag_message(m, sizeof(m), &run, 1000000000ULL, rate);
	ok(strstr(m, "fell 1200.0 ms behind real time (--max-lag 1000.0 ms)") && !strstr(m, "Mb/s") &&
	   strstr(m, "lower --rate or raise --max-lag"), "a pace of 231 (the lag at once): no rate suggested: %s", m);

	run.pace = 0;
	emu_scn_lag_message(m, sizeof(m), &run, 1000000000ULL, rate);
	ok(!strstr(m, "Mb/s") && strstr(m, "raise --max-lag"), "no pace measured: no rate suggested: %s", m);

	run.pace = 0.25;
	emu_scn_lag_message(m, sizeof(m), &run, 2000000ULL, rate);
	ok(strstr(m, "(--max-lag 2.0 ms)") && strstr(m, "it kept 25% of real time") &&
	   strstr(m, "links of about 25000 Mb/s here; lower --rate"), "a pace of 0.25 at 100 Gb/s: about 25000 Mb/s: %s",
	   m);

	run.pace = 0.999;
	emu_scn_lag_message(m, sizeof(m), &run, 2000000ULL, rate);
	ok(strstr(m, "about 99900 Mb/s") != NULL, "a pace just below real time: just below the links' rate: %s", m);
	return done_testing();
}
