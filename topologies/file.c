// SPDX-License-Identifier: MIT
/*
 * DOC: file.c - the topology file format. One declaration per line:
 *
 *   # a comment (also after a declaration)
 *   defaults rate=100G latency=300ns mtu=1500   (for the links below it)
 *   switch S0 level=2                           (level: 1 leaf ... for reports/trees)
 *   host H0
 *   link H0 L0:3 rate=25G latency=1us loss=0.001
 *
 * A port given as NAME:PORT is that port; without it the next free one.
 * Every error is reported as "FILE:LINE: what", and the finished fabric is
 * validated (ports used twice, hosts without a link, zero rates, an
 * unconnected fabric) before anything runs. Outside comments a line holds
 * printable ASCII only, at most 1023 bytes and 32 words; error messages
 * therefore never echo other bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/engine/fabric.h"
#include "emu/units.h"
#include "topologies/topo.h"

struct linkopts {
	uint64_t rate;
	emu_time_t latency;
	uint64_t mtu;
	double loss;
};

static int parse_opts(char **tok, int ntok, struct linkopts *o, char *why, size_t whylen)
{
	for (int i = 0; i < ntok; i++) {
		char *eq = strchr(tok[i], '=');
		int rc;

		if (!eq) {
			snprintf(why, whylen, "'%s' is not key=value", tok[i]);
			return -EINVAL;
		}
		*eq = '\0';
		const char *k = tok[i], *v = eq + 1;

		if (!strcmp(k, "rate"))
			rc = emu_parse_rate(v, &o->rate);
		else if (!strcmp(k, "latency"))
			rc = emu_parse_time(v, &o->latency);
		else if (!strcmp(k, "mtu"))
			rc = emu_parse_u64(v, &o->mtu);
		else if (!strcmp(k, "loss"))
			rc = emu_parse_prob(v, &o->loss);
		else {
			snprintf(why, whylen, "unknown link option '%s' (rate, latency, mtu, loss)", k);
			return -EINVAL;
		}
		if (rc) {
			snprintf(why, whylen, "bad %s '%s'%s", k, v,
				 !strcmp(k, "rate") ? " (a rate with a unit in " EMU_RATE_RANGE ", e.g. 100G)" :
				 !strcmp(k, "latency") ? " (a time with a unit, e.g. 300ns)" : "");
			return -EINVAL;
		}
		if (!strcmp(k, "mtu") && (o->mtu < EMU_MTU_MIN || o->mtu > EMU_MTU_MAX)) {
			snprintf(why, whylen, "mtu %s is not in %u..%u", v, EMU_MTU_MIN, EMU_MTU_MAX);
			return -EINVAL;
		}
	}
	return 0;
}

static int endpoint(struct emu_fabric *fab, char *s, uint32_t *node, int *port, char *why, size_t whylen)
{
	char *colon = strchr(s, ':');

	*port = -1;
	if (colon) {
		uint64_t p;

		*colon = '\0';
		if (emu_parse_u64(colon + 1, &p) || p > 0xfffe) {
			snprintf(why, whylen, "bad port '%s' of %s", colon + 1, s);
			return -EINVAL;
		}
		*port = (int)p;
	}
	*node = emu_fabric_find(fab, s);
	if (*node == EMU_NONE32) {
		snprintf(why, whylen, "no switch or host named '%s' (declare it before the link)", s);
		return -EINVAL;
	}
	return 0;
}

#define LINE_MAX_BYTES 1023
#define MAX_WORDS 32

/* line_check - @n bytes of a line: the first byte that may not be there, or NULL. */
static const char *line_check(const char *line, size_t n, char *why, size_t whylen)
{
	const char *nul = memchr(line, '\0', n);
	const char *hash = memchr(line, '#', n);

	if (nul) {
		snprintf(why, whylen, "a NUL byte at column %zu", (size_t)(nul - line) + 1);
		return nul;
	}
	for (const char *p = line; p < (hash ? hash : line + n); p++) {
		unsigned char c = (unsigned char)*p;

		if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c >= 0x7f) {
			snprintf(why, whylen, "byte 0x%02x at column %zu is not printable ASCII (allowed in comments only)", c,
				 (size_t)(p - line) + 1);
			return p;
		}
	}
	return NULL;
}

/* split_words - @line's words before any '#' into @tok; their number, or -1 (@why) past MAX_WORDS */
static int split_words(char *line, char **tok, char *why, size_t whylen)
{
	char *save = NULL, *hash = strchr(line, '#');
	int ntok = 0;

	if (hash)
		*hash = '\0';
	char *t = strtok_r(line, " \t\r\n", &save);

	for (; t && ntok < MAX_WORDS; t = strtok_r(NULL, " \t\r\n", &save))
		tok[ntok++] = t;
	if (t) {
		snprintf(why, whylen, "more than %d words", MAX_WORDS);
		return -1;
	}
	return ntok;
}

/* decl_node - "switch NAME [level=N]" or "host NAME" on line @lineno. Return 0, or -EINVAL (@why). */
static int decl_node(struct emu_fabric *fab, char **tok, int ntok, unsigned lineno, char *why, size_t whylen)
{
	bool sw = tok[0][0] == 's';

	if (ntok < 2) {
		snprintf(why, whylen, "%s needs a name", tok[0]);
		return -EINVAL;
	}
	if (strlen(tok[1]) >= EMU_NAME_MAX || strchr(tok[1], ':') || strchr(tok[1], '/')) {
		snprintf(why, whylen, "bad name '%s' (at most %d characters, no ':' or '/')", tok[1], EMU_NAME_MAX - 1);
		return -EINVAL;
	}
	if (emu_fabric_find(fab, tok[1]) != EMU_NONE32) {
		snprintf(why, whylen, "'%s' is declared twice", tok[1]);
		return -EINVAL;
	}
	uint32_t id = emu_fabric_add_node(fab, sw ? EMU_NODE_SWITCH : EMU_NODE_HOST, tok[1]);

	fab->nodes[id].line = lineno;
	for (int i = 2; i < ntok; i++) {
		uint64_t lv;

		if (sw && !strncmp(tok[i], "level=", 6) && !emu_parse_u64(tok[i] + 6, &lv) && lv >= 1 && lv < 16) {
			fab->nodes[id].level = (uint16_t)lv;
			continue;
		}
		snprintf(why, whylen, "unknown %s option '%s'", tok[0], tok[i]);
		return -EINVAL;
	}
	return 0;
}

/* decl_link - "link A[:PORT] B[:PORT] [options]" on line @lineno, options after @def. Return 0, or -EINVAL (@why). */
static int decl_link(struct emu_fabric *fab, char **tok, int ntok, const struct linkopts *def, unsigned lineno,
		     char *why, size_t whylen)
{
	uint32_t a, b;
	int pa, pb;
	struct linkopts o = *def;

	if (ntok < 3) {
		snprintf(why, whylen, "link needs two ends: link A[:PORT] B[:PORT] [options]");
		return -EINVAL;
	}
	if (endpoint(fab, tok[1], &a, &pa, why, whylen) || endpoint(fab, tok[2], &b, &pb, why, whylen) ||
	    parse_opts(tok + 3, ntok - 3, &o, why, whylen))
		return -EINVAL;
	uint32_t l = emu_fabric_add_link(fab, a, pa, b, pb, o.rate, o.latency);

	fab->links[l].mtu = (uint32_t)(o.mtu > UINT32_MAX ? UINT32_MAX : o.mtu);
	fab->links[l].loss[0] = fab->links[l].loss[1] = o.loss;
	fab->links[l].line = lineno;
	return 0;
}

/* decl_parse - one declaration (@ntok > 0 words) on line @lineno. Return 0, or -EINVAL (@why). */
static int decl_parse(struct emu_fabric *fab, char **tok, int ntok, struct linkopts *def, unsigned lineno,
		      char *why, size_t whylen)
{
	if (!strcmp(tok[0], "defaults"))
		return parse_opts(tok + 1, ntok - 1, def, why, whylen) ? -EINVAL : 0;
	if (!strcmp(tok[0], "switch") || !strcmp(tok[0], "host"))
		return decl_node(fab, tok, ntok, lineno, why, whylen);
	if (!strcmp(tok[0], "link"))
		return decl_link(fab, tok, ntok, def, lineno, why, whylen);
	snprintf(why, whylen, "unknown declaration '%s' (switch, host, link, defaults)", tok[0]);
	return -EINVAL;
}

/* topo_finish - check the whole fabric (emu_fabric_finalize); its errors name @path:line. Return 0, or -EINVAL. */
static int topo_finish(struct emu_fabric *fab, const char *path, char *err, size_t errlen)
{
	char ferr[256];

	if (emu_fabric_finalize(fab, ferr, sizeof(ferr))) {
		/* finalize says "line N: ..." when it knows the line */
		unsigned ln;

		if (sscanf(ferr, "line %u:", &ln) == 1)
			snprintf(err, errlen, "%s:%u:%s", path, ln, strchr(ferr, ':') + 1);
		else
			snprintf(err, errlen, "%s: %s", path, ferr);
		return -EINVAL;
	}
	snprintf(fab->spec, sizeof(fab->spec), "%s", path);
	return 0;
}

/*
 * emu_topo_from_file - a fabric from a topology file: each line checked,
 * split into words and declared (decl_parse), then the whole checked
 * (topo_finish). NULL with one line in @err naming path:line.
 */
struct emu_fabric *emu_topo_from_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, why[256];
	size_t cap = 0;
	ssize_t n;
	unsigned lineno = 0;
	struct linkopts def = { .rate = EMU_DEFAULT_RATE_BPS, .latency = EMU_DEFAULT_LATENCY, .mtu = EMU_DEFAULT_MTU };

	if (!f) {
		snprintf(err, errlen, "--topology: cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	struct emu_fabric *fab = emu_fabric_create();

	errno = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		char *tok[MAX_WORDS];
		int ntok;

		lineno++;
		why[0] = '\0';
		if (line_check(line, (size_t)n, why, sizeof(why)))
			goto bad;
		if ((size_t)n > LINE_MAX_BYTES + (line[n - 1] == '\n')) {
			snprintf(err, errlen, "%s:%u: line too long (more than %d bytes)", path, lineno, LINE_MAX_BYTES);
			goto fail;
		}
		ntok = split_words(line, tok, why, sizeof(why));
		if (ntok < 0 || (ntok > 0 && decl_parse(fab, tok, ntok, &def, lineno, why, sizeof(why))))
			goto bad;
		continue;
bad:
		snprintf(err, errlen, "%s:%u: %s", path, lineno, why);
		goto fail;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "--topology: cannot read '%s': %s", path, errno ? strerror(errno) : "read error");
		goto fail;
	}
	fclose(f);
	f = NULL;
	free(line);
	line = NULL;
	if (topo_finish(fab, path, err, errlen))
		goto fail;
	return fab;
fail:
	if (f)
		fclose(f);
	free(line);
	emu_fabric_destroy(fab);
	return NULL;
}

struct emu_fabric *emu_topo_load(const char *s, char *err, size_t errlen)
{
	bool spec = emu_topo_is_spec(s) || (strchr(s, ':') && access(s, F_OK) != 0);
	/* "name:params" that is not a file is meant as a generator */
	struct emu_fabric *fab = spec ? emu_topo_from_spec(s, err, errlen) : emu_topo_from_file(s, err, errlen);

	if (fab && fab->nhosts < 2) {
		snprintf(err, errlen, "%s%s: the fabric has %u host%s; an allreduce needs at least 2", spec ? "--topology " : "",
			 s, fab->nhosts, fab->nhosts == 1 ? "" : "s");
		emu_fabric_destroy(fab);
		return NULL;
	}
	return fab;
}
