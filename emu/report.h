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

/*
 * A topology file as the report records it: its content's hash, its
 * absolute path and, for a small text file, its content (so that
 * --scenario can check or rebuild it). Nothing for a generator spec.
 */
#define REPORT_TOPO_CONTENT_MAX 4096	/* bytes embedded at most */
#define REPORT_TOPO_LINE_MAX 160	/* ...in lines of at most this many bytes */

struct report_topo {
	bool file;			/* the topology is a file */
	char hash[32];			/* "fnv1a64:" and 16 hex digits */
	char path[SCNFILE_VAL];		/* absolute ("" when longer than a scenario value) */
	char *content;			/* NULL: not embedded (larger, long lines, not printable ASCII) */
};

/*
 * emu_report_topo_init - the identity of --topology @topology into @t: nothing
 * (t->file false) for a generator spec. Return 0, or -errno when the file
 * cannot be read. Free with emu_report_topo_fini().
 */
int emu_report_topo_init(struct report_topo *t, const char *topology);
void emu_report_topo_fini(struct report_topo *t);

/* emu_report_topo_hash - "fnv1a64:XXXXXXXXXXXXXXXX" of @len bytes at @p into @out (32 bytes) */
void emu_report_topo_hash(const void *p, size_t len, char out[32]);

struct report {
	FILE *out;
	const struct emu_scn_cfg *cfg;
	const struct scnfile *scn;		/* the scenario, for the JSON and CSV reports */
	const struct scnfile_runs *runs;	/* the sizes and seeds swept */
	const char *version;
	const char *source;			/* the sources' hash (--version) */
	const struct report_topo *topo;		/* the topology file, or NULL */
	int werrno;				/* the first write error of the text report (0: none) */
};

/* emu_report_header - the scenario (from the first run's @res) and the column names */
void emu_report_header(struct report *r, const struct emu_scn_result *res);
/* emu_report_text_run - the rows of @n runs that differ only in their seed: the means, and the time's range */
void emu_report_text_run(struct report *r, const struct emu_scn_result *res, unsigned n);
void emu_report_text_end(struct report *r, const struct emu_scn_result *res, unsigned n);
void emu_report_json(struct report *r, const struct emu_scn_result *res, unsigned n);
void emu_report_csv(struct report *r, const struct emu_scn_result *res, unsigned n);

#endif /* EMU_REPORT_H */
