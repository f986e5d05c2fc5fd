// SPDX-License-Identifier: MIT
/*
 * DOC: t/scn.h - run one scenario from a test and say what came out (diag).
 */
#ifndef T_SCN_H
#define T_SCN_H

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

#endif
