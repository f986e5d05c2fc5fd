// SPDX-License-Identifier: MIT
/*
 * DOC: t/scn.h - run one scenario from a test and say what came out (diag):
 * t_scn_run() with the headline figures, t_scn_try() with the recovery's
 * counters under a name; t_scn_base() the small lossless base the
 * recovery tests change one thing of.
 */
#ifndef T_SCN_H
#define T_SCN_H

#include <stdbool.h>

#include "emu/scenario.h"
#include "tap.h"

static inline int t_scn_run(const struct emu_scn_cfg *c, struct emu_scn_result *r)
{
	char err[256];
	int rc = emu_scenario_run(c, r, err, sizeof(err));

	if (rc)
		diag("scenario: %s", err);
	else
		diag("%s%s: %u tenant(s), runtime %.2f us, goodput %.1f Gb/s, exact %d, stragglers %llu, retx %llu, "
		     "background %llu B, queue drops %llu", r->algo, c->priority ? " (priority)" : "", r->nar,
		     (double)r->runtime / 1e6, r->goodput_gbps, r->exact, (unsigned long long)r->sw.stragglers,
		     (unsigned long long)r->ar[0].retransmissions, (unsigned long long)r->bg_bytes,
		     (unsigned long long)r->drops_queue);
	return rc;
}

/* t_scn_base - the defaults, no background, 64 elements per frame, 50 ms of emulated time at most */
static inline void t_scn_base(struct emu_scn_cfg *c)
{
	emu_scenario_defaults(c);
	c->background = false;
	c->elements = 64;
	c->limit = 50 * EMU_MS;
}

/*
 * t_scn_try - run @c into @r and say so under @what: false (and why) if
 * the scenario was refused; else true, with the first allreduce's recovery
 * counters, and why the run stopped when the result is not exact.
 */
static inline bool t_scn_try(const struct emu_scn_cfg *c, struct emu_scn_result *r, const char *what)
{
	char err[256];
	int rc = emu_scenario_run(c, r, err, sizeof(err));

	if (rc) {
		diag("%s: %s", what, err);
		return false;
	}
	const struct emu_scn_ar *a = &r->ar[0];

	diag("%s (%s): exact %d, runtime %.1f us, stragglers %llu, collisions %llu, restorations %llu, retx %llu, "
	     "failures %llu, reissues %llu, fallbacks %llu, noise %llu", what, r->algo, r->exact,
	     (double)r->runtime / 1e6, (unsigned long long)r->sw.stragglers, (unsigned long long)r->sw.collisions,
	     (unsigned long long)a->restorations, (unsigned long long)a->retransmissions,
	     (unsigned long long)a->failures, (unsigned long long)a->reissues, (unsigned long long)a->fallbacks,
	     (unsigned long long)a->noise_delays);
	diag("%s: recoveries %llu, recovered %llu, probes %llu, deferred %llu, rebroadcasts %llu, resends %llu, "
	     "drops queue/loss/down %llu/%llu/%llu", what, (unsigned long long)a->recoveries,
	     (unsigned long long)a->recovered, (unsigned long long)a->probes, (unsigned long long)a->retx_deferred,
	     (unsigned long long)a->rebroadcasts, (unsigned long long)a->resends, (unsigned long long)r->drops_queue,
	     (unsigned long long)r->drops_loss, (unsigned long long)r->drops_down);
	if (!r->exact)
		diag("%s: %s", what, r->stuck);
	return true;
}

#endif
