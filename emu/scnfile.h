/* SPDX-License-Identifier: MIT */
/*
 * DOC: scnfile.h - a scenario as key/value pairs: what the reports write
 * (the JSON "scenario" object, the CSV "# key=value" lines) and what
 * canary-emu --scenario reads back.
 *
 * Every key is the name of the option that sets it, every value a string
 * that option parses back to the same setting: times, rates and sizes are
 * written exactly, in the largest unit that divides them (1500ns, 40Gbps,
 * 128KiB), probabilities with 17 significant digits. A repeatable option
 * (--fail, --drop) is a list of values, applied in order; so is --timeout
 * when adaptive (its start value first). A flag is true or false; "auto"
 * leaves the default, resolved when the run starts (the figure it resolved
 * to is in the "resolved" object of the JSON report, which a re-run
 * ignores like "version").
 */
#ifndef EMU_SCNFILE_H
#define EMU_SCNFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "emu/scenario.h"

/* the scenario format reports write ("format"); --scenario refuses another */
#define SCNFILE_FORMAT 1
#define SCNFILE_MAX_ITEMS 64
#define SCNFILE_VAL 96

enum scnfile_kind { SCNFILE_STR, SCNFILE_LIST, SCNFILE_FLAG };

struct scnfile_item {
	const char *key;		/* the option's name */
	enum scnfile_kind kind;
	unsigned nval;			/* LIST: values, in order; FLAG: 1 (val[0] "true" or "false") */
	char (*val)[SCNFILE_VAL];
};

/* What the command line decides beyond the scenario's struct: the runs it makes. */
struct scnfile_runs {
	const char *algos;		/* --algo as given (a comma list) */
	uint64_t size_min, size_max;	/* --size; a sweep when they differ */
	unsigned size_factor;		/* sweep: each size is the previous one times this */
	uint64_t seed_min, seed_max;	/* --seed N, --seeds A-B */
};

struct scnfile {
	unsigned n;
	struct scnfile_item item[SCNFILE_MAX_ITEMS];
};

/*
 * emu_scnfile_describe - @cfg and @runs as key/value pairs into @d (every
 * scenario option, defaults included). Free with emu_scnfile_fini().
 */
void emu_scnfile_describe(struct scnfile *d, const struct emu_scn_cfg *cfg, const struct scnfile_runs *runs);
void emu_scnfile_fini(struct scnfile *d);

/* emu_scnfile_known - is @key one that emu_scnfile_describe() writes? */
bool emu_scnfile_known(const char *key);

/*
 * emu_scnfile_read - read the scenario of a canary-emu report at @path (the
 * JSON report's "scenario" object, or a CSV report's "# key=value" lines)
 * and call @apply(ctx, key, value) for each value in order (for a flag:
 * "true" or "false"); "version" too. "resolved" is skipped. Return 0, or
 * -EINVAL with the reason in @err ("line 3: ...", or why the file cannot
 * be read; @apply's own refusal, which it writes into its @err, follows
 * the line).
 */
int emu_scnfile_read(const char *path, int (*apply)(void *ctx, const char *key, const char *val, char *err, size_t errlen),
		 void *ctx, char *err, size_t errlen);

#endif /* EMU_SCNFILE_H */
