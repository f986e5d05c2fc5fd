/* SPDX-License-Identifier: MIT */
/*
 * DOC: report.h - what canary-emu prints: a readable comparison (one row
 * per allreduce, nccl-tests style, then the fabric and the emulator), the
 * JSON report (keys listed in canary-emu(1)) and the CSV report.
 */
#ifndef EMU_REPORT_H
#define EMU_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "emu/scenario.h"
#include "emu/scnfile.h"

struct report {
	FILE *out;
	const struct emu_scn_cfg *cfg;
	const struct scnfile *scn;		/* the scenario, for the JSON and CSV reports */
	const struct scnfile_runs *runs;	/* the sizes and seeds swept */
	const char *version;
	int werrno;				/* the first write error of the text report (0: none) */
	bool list;				/* JSON: a list of runs even for one (more were to come) */
};

/* emu_report_header - the scenario (from the first run's @res) and the column names */
void emu_report_header(struct report *r, const struct emu_scn_result *res);
/* emu_report_text_run - the rows of @n runs that differ only in their seed: the means, and the time's range */
void emu_report_text_run(struct report *r, const struct emu_scn_result *res, unsigned n);
void emu_report_text_end(struct report *r, const struct emu_scn_result *res, unsigned n);
void emu_report_json(struct report *r, const struct emu_scn_result *res, unsigned n);
void emu_report_csv(struct report *r, const struct emu_scn_result *res, unsigned n);

#endif /* EMU_REPORT_H */
