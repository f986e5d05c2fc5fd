// SPDX-License-Identifier: MIT
/*
 * DOC: the host-based fallback is pulled, not an incast (libhost/canary.c,
 * lead_pull): a leader asks at most a round trip of hosts for their data at
 * a time, so a block that falls back among many hosts does not overflow
 * the leader's switch port.
 *
 * 48 hosts on one switch, drop-tail queues of 24 KiB (24 full frames), one
 * contribution lost (--drop), no re-issue allowed: the block falls back to
 * its leader, which needs 47 frames of data. Asked all at once, they would
 * arrive together and about half would be dropped at the leader's port;
 * pulled, none is. Checked for Canary (with and without the sketch, whose
 * recovery is turned off by losing more than it can name) and for static
 * trees, exact, on one worker and two (same runtime).
 */
#include <stdio.h>
#include <string.h>

#include "scn.h"

static void base(struct emu_scn_cfg *c, enum lh_algo algo)
{
	t_scn_base(c);
	c->algo = algo;
	c->ntrees = 1;
	c->topology = "fattree2:leaves=2,spines=2,hosts=48";
	c->hosts = 96;
	c->elements = 256;
	c->size_bytes = 16 * 1024;
	c->lossy = true;
	c->buffer_bytes = 48 * 1024;
	c->max_failures = 0;
	c->workers = 1;
}


static void check(struct emu_scn_cfg *c, const char *what)
{
	struct emu_scn_result r;

	if (!t_scn_try(c, &r, what)) {
		ok(0, "%s: ran", what);
		return;
	}
	ok(r.exact, "%s: exact", what);
	ok(r.ar[0].fallbacks > 0, "...blocks fell back to their leader (%llu host fallbacks)",
	   (unsigned long long)r.ar[0].fallbacks);
	ok(r.drops_loss >= 1, "...%llu frames lost on purpose", (unsigned long long)r.drops_loss);
	is_int(r.drops_queue, 0, "...no frame dropped at a full queue");
	emu_time_t rt = r.runtime;

	emu_scenario_result_fini(&r);
	c->workers = 2;
	ok(t_scn_try(c, &r, what) && r.exact && r.runtime == rt, "...two workers: exact, same runtime");
	emu_scenario_result_fini(&r);
	c->workers = 1;
}

int main(void)
{
	struct emu_scn_cfg c;

	base(&c, LH_ALGO_CANARY);
	c.sketch = 0;	/* the paper's recovery: by default a lossy fabric gets the sketch */
	emu_drop_parse("H1/0#1", &c.drop[0]);
	c.ndrop = 1;
	check(&c, "Canary, one contribution lost");

	/* the sketch names up to 2 missing hosts: lose 3 contributions of the same block */
	base(&c, LH_ALGO_CANARY);
	c.sketch = 2;
	emu_drop_parse("H1/0#1", &c.drop[0]);
	emu_drop_parse("H2/0#1", &c.drop[1]);
	emu_drop_parse("H3/0#1", &c.drop[2]);
	c.ndrop = 3;
	check(&c, "Canary, sketch 2, three contributions lost");

	base(&c, LH_ALGO_STATIC);
	emu_drop_parse("H1/0#1", &c.drop[0]);
	c.ndrop = 1;
	check(&c, "static tree, one contribution lost");
	return done_testing();
}
