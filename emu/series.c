// SPDX-License-Identifier: MIT
/* series.c - a run's time series as CSV, and a gnuplot script for it (series.h) */
#include "emu/series.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/engine/node.h"
#include "emu/engine/util.h"
#include "emu/host/host_model.h"
#include "emu/switch/canary_sw.h"

#define MAX_TIERS 16

struct dport {
	uint32_t node;
	uint16_t port;
	uint16_t tier;
};

struct emu_series {
	FILE *f;
	char path[4096];
	struct emu_engine *eng;
	const struct emu_fabric *fab;
	emu_time_t every, last;		/* the interval; the end of the last row */
	uint32_t nport;
	struct dport *port;
	unsigned ntier;
	uint8_t tier_lv[MAX_TIERS][2];	/* from level, to level */
	uint32_t tier_n[MAX_TIERS];	/* directed links */
	emu_time_t *busy;		/* busy_ps at the last row, per directed link */
	uint32_t nlink;			/* chosen directed links (columns of their own) */
	uint32_t *link;			/* ...their indices into port[], in the report's order */
	bool *chosen;			/* per directed link: among them */
	double *lutil;			/* ...the busy time of the interval (chosen links only) */
	uint64_t *lq;			/* ...the bytes queued at its end */
	uint64_t bg_rx;			/* background bytes received at the last row */
	struct emu_series_stats st;
	bool werr;
};

/* the bytes waiting on @p at @t: queued, and committed to start at @t or later (read only) */
static uint64_t queued_at(const struct emu_port *p, emu_time_t t)
{
	uint64_t b = p->qbytes;
	uint32_t cap = p->cq_cap;

	for (uint32_t k = 0; k < p->cq_n; k++) {
		const struct emu_txrec *r = &p->cq[(p->cq_head + k) & (cap - 1)];

		if (r->start >= t)
			b += r->len;
	}
	return b;
}

static unsigned tier_of(struct emu_series *s, unsigned from, unsigned to)
{
	unsigned i;

	from = from > 255 ? 255 : from;
	to = to > 255 ? 255 : to;
	for (i = 0; i < s->ntier; i++)
		if (s->tier_lv[i][0] == from && s->tier_lv[i][1] == to)
			return i;
	if (i == MAX_TIERS)
		return MAX_TIERS - 1;	/* more kinds of link than columns: the last one takes the rest */
	s->tier_lv[i][0] = (uint8_t)from;
	s->tier_lv[i][1] = (uint8_t)to;
	s->ntier++;
	return i;
}

/* choose - directed link @i (2 x link + direction) for columns of its own */
static void choose(struct emu_series *s, uint32_t i)
{
	if (!s->chosen[i]) {
		s->chosen[i] = true;
		s->nlink++;
	}
}

/*
 * pick_links - @links ("all", or NODE/PORT and NODE, comma-separated):
 * both directions of each link named, in the report's order. 0, or
 * -EINVAL with why in @err.
 */
static int pick_links(struct emu_series *s, const char *links, char *err, size_t errlen)
{
	const struct emu_fabric *fab = s->fab;
	char buf[1024], *save = NULL;

	s->chosen = emu_xcalloc(s->nport + 1, sizeof(*s->chosen));
	if (!strcmp(links, "all")) {
		for (uint32_t i = 0; i < s->nport; i++)
			choose(s, i);
	} else {
		if (strlen(links) >= sizeof(buf)) {
			snprintf(err, errlen, "--timeseries-links: the list is too long (at most %zu characters)",
				 sizeof(buf) - 1);
			return -EINVAL;
		}
		snprintf(buf, sizeof(buf), "%s", links);
		for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char *slash = strrchr(tok, '/'), *end = NULL;
			unsigned long port = slash ? strtoul(slash + 1, &end, 10) : 0;
			bool found = false;

			if (slash && (!slash[1] || *end || slash == tok)) {
				snprintf(err, errlen, "--timeseries-links: '%s' is not NODE/PORT or NODE (e.g. L0/3 or S1)",
					 tok);
				return -EINVAL;
			}
			if (slash)
				*slash = '\0';
			uint32_t node = emu_fabric_find(fab, tok);

			if (node == EMU_NONE32) {
				snprintf(err, errlen, "--timeseries-links: no node named '%s'", tok);
				return -EINVAL;
			}
			for (uint32_t i = 0; i < fab->nlinks; i++)
				for (int d = 0; d < 2; d++)
					if (fab->links[i].node[d] == node &&
					    (!slash || (unsigned long)fab->links[i].port[d] == port)) {
						choose(s, 2 * i);
						choose(s, 2 * i + 1);
						found = true;
					}
			if (!found) {
				snprintf(err, errlen, "--timeseries-links: %s has no linked port %lu", tok, port);
				return -EINVAL;
			}
		}
	}
	if (s->nlink > EMU_SERIES_MAX_LINKS) {
		snprintf(err, errlen, "--timeseries-links: '%s' is %u link directions, more than %u (two columns each): "
			 "name links or nodes (e.g. S0,L1/0)", links, s->nlink, EMU_SERIES_MAX_LINKS);
		return -EINVAL;
	}
	s->link = emu_xcalloc(s->nlink + 1, sizeof(*s->link));
	s->lutil = emu_xcalloc(s->nport + 1, sizeof(*s->lutil));
	s->lq = emu_xcalloc(s->nport + 1, sizeof(*s->lq));
	s->nlink = 0;
	for (uint32_t i = 0; i < s->nport; i++)
		if (s->chosen[i])
			s->link[s->nlink++] = i;
	return 0;
}

/* link_name - the sending end of directed link @i, NODE/PORT, into @out */
static const char *link_name(const struct emu_series *s, uint32_t i, char *out, size_t n)
{
	const struct dport *d = &s->port[i];

	snprintf(out, n, "%s/%u", s->fab->nodes[d->node].name, d->port);
	return out;
}

/* write the gnuplot script beside the CSV: four panels (five with links of their own), one PNG */
static int write_plot(const struct emu_series *s, const char *title, char *err, size_t errlen)
{
	char gp[4096 + 8], png[4096 + 8];
	size_t n = strlen(s->path);
	size_t stem = n > 4 && !strcmp(s->path + n - 4, ".csv") ? n - 4 : n;
	const char *base = strrchr(s->path, '/');

	base = base ? base + 1 : s->path;
	snprintf(gp, sizeof(gp), "%.*s.gp", (int)stem, s->path);
	snprintf(png, sizeof(png), "%.*s.png", (int)(stem - (size_t)(base - s->path)), base);
	FILE *f = fopen(gp, "w");

	if (!f) {
		snprintf(err, errlen, "--timeseries: cannot write '%s': %s", gp, strerror(errno));
		return -EIO;
	}
	/* the CSV and the PNG are named relative to the script's directory: gnuplot -c runs it from anywhere */
	fprintf(f, "# gnuplot %s: draws %s into %s\n", strrchr(gp, '/') ? strrchr(gp, '/') + 1 : gp, base, png);
	fprintf(f, "dir = ARG0[1:strstrt(ARG0, \"/\") ? strlen(ARG0) - strlen(system(\"basename \".ARG0)) : 0]\n");
	fprintf(f, "csv = dir.\"%s\"\n", base);
	fprintf(f, "set terminal pngcairo size 1000,%u noenhanced\nset output dir.\"%s\"\n", s->nlink ? 1375 : 1100, png);
	fprintf(f, "set datafile separator \",\"\nset key outside right top\nset grid\nset xrange [0:*]\n");
	fprintf(f, "set lmargin at screen 0.08\nset rmargin at screen 0.72\n");
	fprintf(f, "set multiplot layout %u,1 title \"%s\"\n", s->nlink ? 5 : 4, title);
	fprintf(f, "set xlabel \"emulated time (us)\"\n");
	fprintf(f, "set ylabel \"link utilization\"\nset yrange [0:*]\nplot ");
	for (unsigned i = 0; i < s->ntier; i++)
		fprintf(f, "%scsv using 1:%u with lines title \"%u->%u\"", i ? ", " : "", 2 + i, s->tier_lv[i][0],
			s->tier_lv[i][1]);
	fprintf(f, "\nset ylabel \"max queue (KiB)\"\nplot ");
	for (unsigned i = 0; i < s->ntier; i++)
		fprintf(f, "%scsv using 1:($%u/1024) with lines title \"%u->%u\"", i ? ", " : "", 2 + s->ntier + 2 * i,
			s->tier_lv[i][0], s->tier_lv[i][1]);
	unsigned c = 2 + 3 * s->ntier;
	fprintf(f, "\nset ylabel \"descriptors in use\"\n");
	fprintf(f, "plot csv using 1:%u with lines title \"all switches\", csv using 1:%u with lines title \"max per switch\"\n",
		c, c + 1);
	fprintf(f, "set ylabel \"bg goodput (Gb/s)\"\nset y2label \"allreduce delivered\"\n"
		   "set y2range [0:1]\nset y2tics\nplot csv using 1:%u with lines title \"background\", "
		   "csv using 1:%u axes x1y2 with lines title \"allreduce (right)\"\n", c + 2, c + 3);
	if (s->nlink) {
		/* the chosen links' utilization, the first 16 (the CSV has them all) */
		unsigned first = c + 4 + s->fab->nswitches;
		char name[EMU_NAME_MAX + 16];

		fprintf(f, "unset y2label\nunset y2tics\nset ylabel \"utilization, by link\"\nplot ");
		for (uint32_t k = 0; k < s->nlink && k < 16; k++)
			fprintf(f, "%scsv using 1:%u with lines title \"%s\"", k ? ", " : "", first + 2 * k,
				link_name(s, s->link[k], name, sizeof(name)));
		fputc('\n', f);
	}
	fprintf(f, "unset multiplot\n");
	if (fclose(f)) {
		snprintf(err, errlen, "--timeseries: cannot write '%s': %s", gp, strerror(errno));
		return -EIO;
	}
	return 0;
}

static void series_free(struct emu_series *s)
{
	free(s->port);
	free(s->busy);
	free(s->chosen);
	free(s->link);
	free(s->lutil);
	free(s->lq);
	free(s);
}

struct emu_series *emu_series_open(const char *path, emu_time_t every, const char *title, struct emu_engine *eng,
				   const struct emu_fabric *fab, const char *links, char *err, size_t errlen)
{
	char name[EMU_NAME_MAX + 16];
	struct emu_series *s = emu_xcalloc(1, sizeof(*s));

	if (strlen(path) >= sizeof(s->path)) {
		snprintf(err, errlen, "--timeseries: the path is too long");
		free(s);
		return NULL;
	}
	strcpy(s->path, path);
	s->eng = eng;
	s->fab = fab;
	s->every = every;
	s->nport = 2 * fab->nlinks;
	s->port = emu_xcalloc(s->nport + 1, sizeof(*s->port));
	s->busy = emu_xcalloc(s->nport + 1, sizeof(*s->busy));
	for (uint32_t i = 0; i < fab->nlinks; i++)
		for (int d = 0; d < 2; d++) {
			const struct emu_fab_link *l = &fab->links[i];
			unsigned t = tier_of(s, fab->nodes[l->node[d]].level, fab->nodes[l->node[!d]].level);

			s->port[2 * i + d] = (struct dport){ .node = l->node[d], .port = (uint16_t)l->port[d],
							     .tier = (uint16_t)t };
			s->tier_n[t]++;
		}
	if (links && pick_links(s, links, err, errlen))
		goto fail;
	s->f = fopen(path, "w");
	if (!s->f) {
		snprintf(err, errlen, "--timeseries: cannot write '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (write_plot(s, title, err, errlen))
		goto fail;
	fprintf(s->f, "# %s: every %.3f us, the interval ending at time_us; tiers FROM->TO by switch level (0: hosts)%s\n",
		title, (double)every / 1e6, s->nlink ? "; util_, queue_B_NODE/PORT: the link direction NODE/PORT sends on" : "");
	fputs("time_us", s->f);
	for (unsigned i = 0; i < s->ntier; i++)
		fprintf(s->f, ",util_%u->%u", s->tier_lv[i][0], s->tier_lv[i][1]);
	for (unsigned i = 0; i < s->ntier; i++)
		fprintf(s->f, ",qmax_B_%u->%u,qmean_B_%u->%u", s->tier_lv[i][0], s->tier_lv[i][1], s->tier_lv[i][0],
			s->tier_lv[i][1]);
	fputs(",desc_total,desc_max,bg_gbps,ar_delivered", s->f);
	for (uint32_t i = 0; i < fab->nswitches; i++)
		fprintf(s->f, ",desc_%s", fab->nodes[fab->switches[i]].name);
	for (uint32_t k = 0; k < s->nlink; k++) {
		link_name(s, s->link[k], name, sizeof(name));
		fprintf(s->f, ",util_%s,queue_B_%s", name, name);
	}
	fputc('\n', s->f);
	return s;
fail:
	if (s->f)
		fclose(s->f);
	series_free(s);
	return NULL;
}

/* one row: the state at @t, over the interval since the last row */
static void row(struct emu_series *s, emu_time_t t)
{
	const struct emu_fabric *fab = s->fab;
	double util[MAX_TIERS] = { 0 }, qsum[MAX_TIERS] = { 0 };
	uint64_t qmax[MAX_TIERS] = { 0 }, bg_rx = 0, dsum = 0, dmax = 0, delivered = 0, expect = 0;
	emu_time_t dt = t - s->last;
	FILE *f = s->f;

	for (uint32_t i = 0; i < s->nport; i++) {
		const struct dport *d = &s->port[i];
		const struct emu_port *p = &emu_engine_node(s->eng, d->node)->ports[d->port];
		/* busy_ps counts a committed frame whole: less what lies past @t */
		emu_time_t over = p->busy_until > t ? p->busy_until - t : 0;
		emu_time_t b = p->busy_ps > over ? p->busy_ps - over : 0;
		uint64_t q = queued_at(p, t);

		if (s->lutil)
			s->lutil[i] = 0;
		if (b > s->busy[i]) {
			util[d->tier] += (double)(b - s->busy[i]);
			if (s->lutil)
				s->lutil[i] = (double)(b - s->busy[i]);
			s->busy[i] = b;
		}
		if (s->lq)
			s->lq[i] = q;
		qsum[d->tier] += (double)q;
		if (q > qmax[d->tier])
			qmax[d->tier] = q;
	}
	for (uint32_t i = 0; i < fab->nhosts; i++) {
		const struct emu_host_state *h = emu_node_state(emu_engine_node(s->eng, fab->hosts[i]));

		if (!h)
			continue;
		if (h->lh)
			bg_rx += lh_host_bg_stats(h->lh)->bytes_recv;
		if (h->req) {
			delivered += h->delivered < h->cfg->count ? h->delivered : h->cfg->count;
			expect += h->cfg->count;
		}
	}
	fprintf(f, "%.6f", (double)t / 1e6);
	for (unsigned i = 0; i < s->ntier; i++)
		fprintf(f, ",%.6f", dt ? util[i] / (double)dt / s->tier_n[i] : 0);
	for (unsigned i = 0; i < s->ntier; i++)
		fprintf(f, ",%llu,%.1f", (unsigned long long)qmax[i], qsum[i] / s->tier_n[i]);
	for (uint32_t i = 0; i < fab->nswitches; i++) {
		uint64_t l = emu_sw_stats_of(emu_engine_node(s->eng, fab->switches[i]))->live;

		dsum += l;
		dmax = l > dmax ? l : dmax;
	}
	fprintf(f, ",%llu,%llu,%.4f,%.6f", (unsigned long long)dsum, (unsigned long long)dmax,
		dt ? (double)(bg_rx - s->bg_rx) * 8e3 / (double)dt : 0, expect ? (double)delivered / (double)expect : 0);
	s->bg_rx = bg_rx;
	for (uint32_t i = 0; i < fab->nswitches; i++)
		fprintf(f, ",%llu",
			(unsigned long long)emu_sw_stats_of(emu_engine_node(s->eng, fab->switches[i]))->live);
	for (uint32_t k = 0; k < s->nlink; k++)
		fprintf(f, ",%.6f,%llu", dt ? s->lutil[s->link[k]] / (double)dt : 0,
			(unsigned long long)s->lq[s->link[k]]);
	fputc('\n', f);
	s->last = t;
}

void emu_series_name(const char *base, const char *tag, char *out, size_t n)
{
	size_t len = strlen(base);
	size_t stem = len > 4 && !strcmp(base + len - 4, ".csv") ? len - 4 : len;
	char t[64];

	snprintf(t, sizeof(t), "%s", tag);
	for (char *p = t; *p; p++)
		if (*p == ':' || *p == '/')
			*p = '-';
	snprintf(out, n, "%.*s-%s%s", (int)stem, base, t, base + stem);
}

void emu_series_sample(void *ctx, emu_time_t t)
{
	struct emu_series *s = ctx;

	if (s->st.rows >= EMU_SERIES_MAX_ROWS) {
		s->st.dropped++;
		s->last = t;
		return;
	}
	uint64_t w0 = emu_wall_ns();

	row(s, t);
	s->st.rows++;
	uint64_t w = emu_wall_ns() - w0;

	s->st.wall_ns += w;
	if (w > s->st.max_ns)
		s->st.max_ns = w;
}

int emu_series_close(struct emu_series *s, emu_time_t end, struct emu_series_stats *st, char *err, size_t errlen)
{
	int rc = 0;

	if (!s)
		return 0;
	if (end > s->last)
		emu_series_sample(s, end);
	if (ferror(s->f) | fclose(s->f)) {
		snprintf(err, errlen, "--timeseries: cannot write '%s': %s", s->path, strerror(errno));
		rc = -EIO;
	}
	if (st)
		*st = s->st;
	series_free(s);
	return rc;
}
