// SPDX-License-Identifier: MIT
/*
 * DOC: report.c - text, JSON and CSV reports. See report.h.
 */
#include "emu/report.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emu/units.h"
#include "topologies/topo.h"
#include "emu/engine/util.h"

/* what the banner says of the traffic classes: nothing for the default (recovery) */
static const char *priority_banner(enum emu_tc_mode m)
{
	return m == EMU_TC_ONE ? ", one traffic class" : m == EMU_TC_COLLECTIVE ? ", collective priority" : "";
}

/* fmt_rate - "100 Gb/s", or "100-400 Gb/s" when the links differ */
/* utf8_len - bytes of the valid UTF-8 sequence at @p (at most @n), 0 if it is not one. */
/* merlin: the output buffer and the adaptive threshold the run used (their defaults resolved) */
static uint64_t merlin_obuf(const struct emu_scn_cfg *c)
{
	return c->obuf_bytes ? c->obuf_bytes : EMU_MERLIN_OBUF;
}

static double merlin_threshold(const struct emu_scn_cfg *c)
{
	return c->adaptive_threshold > 0 ? c->adaptive_threshold : EMU_DEFAULT_ADAPTIVE_THRESHOLD;
}

static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len;
	uint32_t cp, min;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		len = 2, cp = p[0] & 0x1f, min = 0x80;
	else if ((p[0] & 0xf0) == 0xe0)
		len = 3, cp = p[0] & 0x0f, min = 0x800;
	else if ((p[0] & 0xf8) == 0xf0)
		len = 4, cp = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/*
 * json_str - @s as a JSON string: quotes, backslashes and control
 * characters escaped, bytes that are not UTF-8 replaced by U+FFFD.
 */
static void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);

	fputc('"', f);
	for (size_t i = 0; i < n;) {
		size_t len = utf8_len(p + i, n - i);

		if (!len) {
			fputs("\\ufffd", f);
			i++;
		} else if (len > 1) {
			fwrite(p + i, 1, len, f);
			i += len;
		} else {
			unsigned char c = p[i++];

			if (c == '"' || c == '\\')
				fprintf(f, "\\%c", c);
			else if (c == '\n')
				fputs("\\n", f);
			else if (c == '\t')
				fputs("\\t", f);
			else if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

void emu_report_topo_hash(const void *p, size_t len, char out[32])
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a, 64 bits: a change detector, not a signature */

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	snprintf(out, 32, "fnv1a64:%016llx", (unsigned long long)h);
}

/* embeddable - lines of printable ASCII (tabs too) of at most REPORT_TOPO_LINE_MAX bytes, the last ended */
static bool embeddable(const char *p, size_t len)
{
	size_t col = 0;

	if (len > REPORT_TOPO_CONTENT_MAX || (len && p[len - 1] != '\n'))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (p[i] == '\n') {
			col = 0;
			continue;
		}
		if ((p[i] < 0x20 && p[i] != '\t') || p[i] > 0x7e || ++col > REPORT_TOPO_LINE_MAX)
			return false;
	}
	return true;
}

int emu_report_topo_init(struct report_topo *t, const char *topology)
{
	char *buf = NULL, *abs;
	size_t n = 0, cap = 0, k;
	FILE *f;

	memset(t, 0, sizeof(*t));
	if (emu_topo_is_spec(topology) || (strchr(topology, ':') && access(topology, F_OK) != 0))
		return 0;	/* a generator (topo_load's rule) */
	if (!(f = fopen(topology, "rb")))
		return -errno;
	do {
		if (n == cap)
			buf = emu_xrealloc(buf, cap = cap ? 2 * cap : 65536);
		k = fread(buf + n, 1, cap - n, f);
		n += k;
	} while (k);
	if (ferror(f)) {
		int e = errno ? errno : EIO;

		fclose(f);
		free(buf);
		return -e;
	}
	fclose(f);
	t->file = true;
	emu_report_topo_hash(buf, n, t->hash);
	if ((abs = realpath(topology, NULL))) {
		if (strlen(abs) < sizeof(t->path))
			snprintf(t->path, sizeof(t->path), "%s", abs);
		free(abs);
	}
	if (embeddable(buf, n)) {
		t->content = emu_xrealloc(buf, n + 1);
		t->content[n] = 0;
	} else {
		free(buf);
	}
	return 0;
}

void emu_report_topo_fini(struct report_topo *t)
{
	if (!t)
		return;
	free(t->content);
	t->content = NULL;
}

/* csv_str - @s as a quoted CSV field (RFC 4180: a quote is doubled). */
static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static const char *fmt_rates(const struct emu_scn_result *res, char *buf, size_t len)
{
	if (res->rate_min_bps == res->rate_max_bps)
		snprintf(buf, len, "%g Gb/s", (double)res->rate_min_bps / 1e9);
	else
		snprintf(buf, len, "%g-%g Gb/s", (double)res->rate_min_bps / 1e9, (double)res->rate_max_bps / 1e9);
	return buf;
}

/* fmt_short_time - "300 ns", "1.5 us": a configured time, without trailing zeros */
static const char *fmt_short_time(emu_time_t t, char *buf, size_t len)
{
	if (t >= EMU_MS)
		snprintf(buf, len, "%g ms", (double)t / 1e9);
	else if (t >= EMU_US)
		snprintf(buf, len, "%g us", (double)t / 1e6);
	else
		snprintf(buf, len, "%g ns", (double)t / 1e3);
	return buf;
}

static const char *fmt_latencies(const struct emu_scn_result *res, char *buf, size_t len)
{
	char a[32], b[32];

	if (res->latency_min == res->latency_max)
		snprintf(buf, len, "%s", fmt_short_time(res->latency_min, a, sizeof(a)));
	else
		snprintf(buf, len, "%s-%s", fmt_short_time(res->latency_min, a, sizeof(a)),
			 fmt_short_time(res->latency_max, b, sizeof(b)));
	return buf;
}

/* width - a printf width for @s that counts "µ" (two bytes) as one column */
/*
 * host_window - the hosts' window in @res: the mean over every block
 * completion of every host (the window moves with the adaptive timeout's
 * hint), the largest in *@max.
 */
static double host_window(const struct emu_scn_result *res, unsigned *max)
{
	uint64_t sum = 0, n = 0;

	*max = 0;
	for (unsigned i = 0; i < res->nar; i++) {
		sum += res->ar[i].window_sum;
		n += res->ar[i].window_n;
		if (res->ar[i].window > *max)
			*max = res->ar[i].window;
	}
	return n ? (double)sum / (double)n : 0;
}

/* The adaptive timeout's start: --timeout's value within [floor, ceil], as the switches clamp it. */
static emu_time_t ato_start(const struct emu_scn_cfg *c)
{
	return c->timeout < c->ato_floor ? c->ato_floor : c->timeout > c->ato_ceil ? c->ato_ceil : c->timeout;
}

static int width(int w, const char *s)
{
	return strstr(s, "µ") ? w + 1 : w;
}

/* report_flush - the report so far to its file; the first write error's errno is kept for the message */
static void report_flush(struct report *r)
{
	errno = 0;
	if ((fflush(r->out) || ferror(r->out)) && !r->werrno)
		r->werrno = errno ? errno : EIO;
}

static bool sweep(const struct report *r)
{
	return r->runs && (r->runs->size_max > r->runs->size_min || r->runs->seed_max > r->runs->seed_min);
}

static unsigned nseeds(const struct report *r)
{
	return r->runs ? (unsigned)(r->runs->seed_max - r->runs->seed_min + 1) : 1;
}

/* the label of a run in the text report's per-run sections: its algorithm, and its size and seed in a sweep */
#define LABEL_W(r) (sweep(r) ? 26 : 9)
static const char *label(const struct report *r, const struct emu_scn_result *res, char *buf, size_t len)
{
	char sz[32];

	if (!sweep(r))
		return res->algo;
	emu_fmt_size(res->size_bytes, sz, sizeof(sz));
	snprintf(buf, len, "%s %s seed %llu", res->algo, sz, (unsigned long long)res->seed);
	return buf;
}

/* algbw - as nccl-tests: bytes per host over the time, in GB/s (10^9 bytes/s) */
static double algbw(double goodput_gbps)
{
	return goodput_gbps / 8;
}

/* busbw - algbw x 2(n-1)/n: what each host's link carried, for an allreduce of @n hosts */
static double busbw(double goodput_gbps, unsigned n)
{
	return n ? algbw(goodput_gbps) * 2 * (n - 1) / n : 0;
}

/* run_busbw - the mean over the run's allreduces */
static double run_busbw(const struct emu_scn_result *res)
{
	double sum = 0;

	for (unsigned i = 0; i < res->nar; i++)
		sum += busbw(res->ar[i].goodput_gbps, res->ar[i].hosts);
	return res->nar ? sum / res->nar : 0;
}

/* the spread of a figure over seeds: mean, sample standard deviation (n - 1), min, max */
struct spread {
	double mean, sd, min, max;
};

static struct spread spread_of(const double *v, unsigned n)
{
	struct spread s = { .min = n ? v[0] : 0, .max = n ? v[0] : 0 };
	double ss = 0;

	for (unsigned k = 0; k < n; k++) {
		s.mean += v[k];
		s.min = v[k] < s.min ? v[k] : s.min;
		s.max = v[k] > s.max ? v[k] : s.max;
	}
	s.mean = n ? s.mean / n : 0;
	for (unsigned k = 0; k < n; k++)
		ss += (v[k] - s.mean) * (v[k] - s.mean);
	s.sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
	return s;
}

/*
 * row_stats - allreduce @i of @n runs that differ in their seed: the
 * spread of its time (us) and goodput (Gb/s), and algbw and busbw from the
 * mean time (nccl-tests: the bandwidths of the mean time, not the mean of
 * the bandwidths).
 */
struct row_stats {
	struct spread t, gp;
	double algbw, busbw;
};

static struct row_stats row_stats(const struct emu_scn_result *res, unsigned n, unsigned i)
{
	double *v = emu_xcalloc(n ? n : 1, sizeof(*v));
	struct row_stats s;
	const struct emu_scn_ar *a0 = &res[0].ar[i];

	for (unsigned k = 0; k < n; k++)
		v[k] = (double)res[k].ar[i].runtime / 1e6;
	s.t = spread_of(v, n);
	for (unsigned k = 0; k < n; k++)
		v[k] = res[k].ar[i].goodput_gbps;
	s.gp = spread_of(v, n);
	free(v);
	if (n == 1) {
		/* one seed: as the run's own figures, to the last bit */
		s.algbw = algbw(a0->goodput_gbps);
		s.busbw = busbw(a0->goodput_gbps, a0->hosts);
		return s;
	}
	/* us: bytes per us / 1000 = GB/s */
	s.algbw = s.t.mean > 0 ? (double)a0->size_bytes / s.t.mean / 1e3 : 0;
	s.busbw = a0->hosts ? s.algbw * 2 * (a0->hosts - 1) / a0->hosts : 0;
	return s;
}

#define AVG_MAX_ALGOS 16

/*
 * avg_busbw - nccl-tests' closing figure, per algorithm: the mean over the
 * rows (size, allreduce) of their busbw (from the mean time over the
 * seeds). The runs come size by size, then algorithm, then seed (main.c's
 * run_all), @ns of a row next to each other. Return the algorithms found
 * (their first run in @first[], the mean in @avg[]), at most AVG_MAX_ALGOS.
 */
static unsigned avg_busbw(const struct emu_scn_result *res, unsigned n, unsigned ns, unsigned first[AVG_MAX_ALGOS],
			  double avg[AVG_MAX_ALGOS], unsigned rows[AVG_MAX_ALGOS])
{
	unsigned na = 0;

	for (unsigned g = 0; ns && g + ns <= n; g += ns) {
		unsigned a = 0;

		while (a < na && strcmp(res[first[a]].algo, res[g].algo))
			a++;
		if (a == na) {
			if (na == AVG_MAX_ALGOS)
				continue;
			first[na] = g, avg[na] = 0, rows[na] = 0, na++;
		}
		for (unsigned i = 0; i < res[g].nar; i++) {
			avg[a] += row_stats(&res[g], ns, i).busbw;
			rows[a]++;
		}
	}
	for (unsigned a = 0; a < na; a++)
		avg[a] = rows[a] ? avg[a] / rows[a] : 0;
	return na;
}

void emu_report_header(struct report *r, const struct emu_scn_result *res)
{
	const struct emu_scn_cfg *c = r->cfg;
	char sz[80], to[96], rate[48], lat[48], buf[32], bg[32];

	emu_fmt_time(c->timeout, to, sizeof(to));
	if (c->timeout_adaptive) {
		char lo[32], hi[32], st[32];

		snprintf(to, sizeof(to), "adaptive %s-%s from %s", emu_fmt_time(c->ato_floor, lo, sizeof(lo)),
			 emu_fmt_time(c->ato_ceil, hi, sizeof(hi)), emu_fmt_time(ato_start(c), st, sizeof(st)));
	}

	fprintf(r->out, "# canary-emu: %s, %u hosts, links %s, %s per hop, buffer %s per port, %s routing, %s%s%s\n",
		res->topology, res->hosts_total, fmt_rates(res, rate, sizeof(rate)), fmt_latencies(res, lat, sizeof(lat)),
		emu_fmt_size(c->buffer_bytes ? c->buffer_bytes : emu_default_buffer(c->router), buf, sizeof(buf)),
		emu_routing_name(c->routing),
		c->lossy || (c->loss > 0 && !c->lossless) ? "lossy (drop-tail)" : "lossless (credits)", c->loss > 0 ? " + injected loss" : "",
		priority_banner(c->priority));
	char seeds[64];

	if (r->runs && r->runs->size_max > r->runs->size_min) {
		char hi[32];

		emu_fmt_size(r->runs->size_min, buf, sizeof(buf));
		snprintf(sz, sizeof(sz), "%s to %s x%u", buf, emu_fmt_size(r->runs->size_max, hi, sizeof(hi)),
			 r->runs->size_factor);
	} else {
		emu_fmt_size(res->size_bytes, sz, sizeof(sz));
	}
	if (nseeds(r) > 1)
		snprintf(seeds, sizeof(seeds), "seeds %llu-%llu (a row: the mean over %u seeds)",
			 (unsigned long long)r->runs->seed_min, (unsigned long long)r->runs->seed_max, nseeds(r));
	else
		snprintf(seeds, sizeof(seeds), "seed %llu", (unsigned long long)res->seed);
	char sk[48] = "";

	if (c->sketch)
		snprintf(sk, sizeof(sk), " (Canary: %u of them the sketch)", c->sketch);
	fprintf(r->out, "# allreduce: %u hosts (%.0f %%), %s per host, %u element%s/packet%s; switches: timeout %s (%s timer), "
			"profile %s; %s\n",
		res->ar_hosts, res->hosts_total ? 100.0 * res->ar_hosts / res->hosts_total : 0,
		sz, c->elements, c->elements == 1 ? "" : "s", sk,
		to, c->timer == EMU_SW_TIMER_EXACT ? "exact" : "pktgen", c->profile, seeds);
	if (c->router == EMU_ROUTER_MERLIN)
		fprintf(r->out, "# router: merlin (input buffers, crossbar %.1f Gbps per port, %s arbitration, "
				"%llu B output buffers, adaptive threshold %g)\n", (double)res->xbar_bps / 1e9,
			c->xbar_arb == EMU_XBAR_RR ? "round-robin" : "least-recently-served",
			(unsigned long long)merlin_obuf(c), merlin_threshold(c));
	else
		fprintf(r->out, "# router: fifo (one egress queue per port%s)\n",
			c->priority == EMU_TC_ONE ? "" : " and traffic class");
	if (c->background && res->bg_hosts)
		fprintf(r->out, "# background: %s, %s messages, from the other %u hosts (%.0f %%), each offering %s\n",
			c->bg_pattern == LH_BG_UNIFORM ? "uniform" : "random", emu_fmt_size(c->bg_msg, bg, sizeof(bg)),
			res->bg_hosts, res->hosts_total ? 100.0 * res->bg_hosts / res->hosts_total : 0,
			c->bg_load < 1 ? "a share of its line rate (--bg-load)" : "its line rate (back to back)");
	else
		fprintf(r->out, "# background: none\n");
	bool range = nseeds(r) > 1;

	fprintf(r->out, "#\n# %-9s %9s %6s %3s %11s", "algo", "size", "hosts", "ar", "time(us)");
	if (range)
		fprintf(r->out, " %9s %11s %11s", "sd(us)", "min(us)", "max(us)");
	fprintf(r->out, " %11s %11s", "barrier(us)", "goodput");
	if (range)
		fprintf(r->out, " %8s %8s %8s", "gp-sd", "gp-min", "gp-max");
	fprintf(r->out, " %9s %9s %6s %8s %8s %10s %10s %8s %6s %6s %6s\n", "algbw",
		"busbw", "exact", "frm/host", "ldr-rx", "stragglers", "collisions", "restores", "retx", "fails", "fallbk");
	fprintf(r->out, "# %-9s %9s %6s %3s %11s", "", "(B/host)", "", "", range ? "(mean)" : "");
	if (range)
		fprintf(r->out, " %9s %11s %11s", "", "", "");
	fprintf(r->out, " %11s %11s", "", range ? "(Gb/s,mean)" : "(Gb/s)");
	if (range)
		fprintf(r->out, " %8s %8s %8s", "(Gb/s)", "(Gb/s)", "(Gb/s)");
	fprintf(r->out, " %9s %9s %6s %8s %8s %10s %10s %8s %6s %6s %6s\n", "(GB/s)", "(GB/s)",
		"", "", "", "", "", "", "", "", "");
	report_flush(r);
}

/* the mean of a counter over @n runs, allreduce @i, at @off in struct emu_scn_ar */
static unsigned long long mean_u64(const struct emu_scn_result *res, unsigned n, unsigned i, size_t off)
{
	double sum = 0;

	for (unsigned k = 0; k < n; k++)
		sum += (double)*(const uint64_t *)((const char *)&res[k].ar[i] + off);
	return (unsigned long long)(sum / n + 0.5);
}

#define MEAN(field) mean_u64(res, n, i, offsetof(struct emu_scn_ar, field))

void emu_report_text_run(struct report *r, const struct emu_scn_result *res, unsigned n)
{
	for (unsigned i = 0; i < res[0].nar; i++) {
		struct row_stats st = row_stats(res, n, i);
		double bar = 0, strag = 0, coll = 0;
		const char *exact = "yes";

		for (unsigned k = 0; k < n; k++) {
			const struct emu_scn_ar *a = &res[k].ar[i];

			bar += (double)a->barrier / 1e6;
			strag += (double)res[k].sw.stragglers;
			coll += (double)res[k].sw.collisions;
			if (!a->exact)
				exact = a->finished && strcmp(exact, "STUCK") ? "WRONG" : "STUCK";
		}
		fprintf(r->out, "  %-9s %9llu %6u %3u %11.2f", res[0].algo, (unsigned long long)res[0].ar[i].size_bytes,
			res[0].ar[i].hosts, res[0].ar[i].tenant, st.t.mean);
		if (nseeds(r) > 1)
			fprintf(r->out, " %9.2f %11.2f %11.2f", st.t.sd, st.t.min, st.t.max);
		fprintf(r->out, " %11.2f %11.2f", bar / n, st.gp.mean);
		if (nseeds(r) > 1)
			fprintf(r->out, " %8.2f %8.2f %8.2f", st.gp.sd, st.gp.min, st.gp.max);
		/* one seed: algbw = goodput / 8 exactly as before (the time is the mean of one) */
		fprintf(r->out, " %9.3f %9.3f %6s %8llu %8llu %10.0f %10.0f %8llu %6llu %6llu %6llu\n",
			st.algbw, st.busbw, exact, MEAN(frames_per_host), MEAN(leader_frames), strag / n,
			coll / n, MEAN(restorations), MEAN(retransmissions), MEAN(failures), MEAN(fallbacks));
	}
	report_flush(r);
}

static void histogram(const struct emu_scn_result *res, unsigned h[11])
{
	memset(h, 0, 11 * sizeof(*h));
	for (uint32_t i = 0; i < res->nlinks; i++) {
		double u = res->link_util[i];
		unsigned b = u <= 0 ? 0 : (unsigned)(u * 10) + 1;

		h[b > 10 ? 10 : b]++;
	}
}

/* lag_line - "; events ran behind their wall time: p50 ... p99 ... max ... (N samples)" */
static void lag_line(FILE *f, const char *what, const struct emu_lag_dist *d)
{
	if (!d->samples)
		return;
	fprintf(f, "; %s behind their wall time: p50 %.3f ms, p99 %.3f ms, max %.3f ms (%llu samples)", what,
		(double)d->p50_ns / 1e6, (double)d->p99_ns / 1e6, (double)d->max_ns / 1e6,
		(unsigned long long)d->samples);
}

/*
 * wall_line - the wall clock's verdict against its stated bound: kept up
 * only if no paced window started more than the bound behind; otherwise
 * how many windows were late and whether the run caught up by the end.
 */
static void wall_line(FILE *f, const struct emu_run_stats *st)
{
	double bound = (double)st->lag_bound_ns / 1e6;

	fprintf(f, "  dilation %g, lag max %.3f ms mean %.3f ms, ", st->dilation, (double)st->max_lag_ns / 1e6,
		(double)st->mean_lag_ns / 1e6);
	if (!st->paced_windows)
		fprintf(f, "not paced (the run ended while the dilation was being calibrated)");
	else if (st->kept_up)
		fprintf(f, "kept up (every window within %.3f ms of its time)", bound);
	else
		fprintf(f, "did NOT keep up: %llu of %llu windows more than %.3f ms late, %s",
			(unsigned long long)st->late_windows, (unsigned long long)st->paced_windows, bound,
			st->final_lag_ns > st->lag_bound_ns ? "still late at the end" : "caught up by the end");
	lag_line(f, "events", &st->event_lag);
	lag_line(f, "injected frames", &st->inject_lag);
}

/*
 * text_completion - per run and allreduce, the distribution of the hosts'
 * completion times and the last hosts
 */
static void text_completion(struct report *r, const struct emu_scn_result *res, unsigned n)
{
	char lb[96];

	fprintf(r->out, "#\n# hosts' completion (us, the start to a host holding its whole result; nearest-rank "
			"percentiles over the\n# emulated hosts that finished): min, p50, p99, max, and the last hosts, "
			"slowest first\n");
	for (unsigned k = 0; k < n; k++)
		for (unsigned i = 0; i < res[k].nar; i++) {
			const struct emu_scn_ar *a = &res[k].ar[i];

			fprintf(r->out, "  %-*s ar %-3u %u hosts", LABEL_W(r), label(r, &res[k], lb, sizeof(lb)), a->tenant,
				a->done_hosts);
			if (a->done_hosts)
				fprintf(r->out, ": min %.2f p50 %.2f p99 %.2f max %.2f; last", (double)a->done_min / 1e6,
					(double)a->done_p50 / 1e6, (double)a->done_p99 / 1e6, (double)a->done_max / 1e6);
			for (unsigned j = 0; j < a->nlast; j++)
				fprintf(r->out, "%s %s %.2f", j ? "," : "", a->last[j].host, (double)a->last[j].t / 1e6);
			fputc('\n', r->out);
		}
}

void emu_report_text_end(struct report *r, const struct emu_scn_result *res, unsigned n)
{
	char lb[96];

	fprintf(r->out, "#\n# ar: allreduce (tenant); time: until every host holds the whole result; barrier: until the\n"
			"# completion barrier passed; goodput: size x 8 / time; algbw: size / time in GB/s (10^9 bytes/s);\n"
			"# busbw: algbw x 2(n-1)/n for n hosts (nccl-tests' figures); frm/host: frames sent per host; ldr-rx:\n"
			"# reduce frames that reached a block's leader; stragglers: contributions after a switch flushed;\n"
			"# collisions: blocks that found their switch slot taken; restores: subtrees a leader rebuilt;\n"
			"# retx: retransmission requests; fails: failed blocks; fallbk: blocks reduced at the leader\n");
	for (unsigned k = 0; k < n; k++)
		if (res[k].nattached) {
			fprintf(r->out, "# --attach: the rows count what the emulated hosts did (time, retx, fails, ...); the\n"
					"# attached hosts' own retransmission requests and results are in their reports\n");
			break;
		}
	if (nseeds(r) > 1)
		fprintf(r->out, "# --seeds: a row is over its %u seeds: time the mean, sd its sample standard deviation, min\n"
				"# and max its range; goodput the mean of the seeds' goodputs, gp-sd/min/max its spread;\n"
				"# algbw and busbw from the mean time (as nccl-tests); counters the mean (rounded); below,\n"
				"# one row per run\n", nseeds(r));
	text_completion(r, res, n);
	fprintf(r->out, "#\n# fabric: utilization of the %u directed links (busy time / emulated time): mean over all\n"
			"# links, mean over the busy ones (that carried a frame), idle links, links per 10 %% bucket;\n"
			"# bg offered/carried: the background's load, share of each background host's line rate\n",
		n ? res[0].nlinks : 0);
	fprintf(r->out, "# %-*s %8s %8s %6s %6s %6s %6s %6s %6s %6s %6s %6s %6s %6s  %s\n", LABEL_W(r), "algo", "mean", "busy",
		"idle", "0-10", "10-20", "20-30", "30-40", "40-50", "50-60", "60-70", "70-80", "80-90", "90+",
		"drops q/loss/down, bg GB, bg offered/carried");
	for (unsigned k = 0; k < n; k++) {
		unsigned h[11];

		histogram(&res[k], h);
		fprintf(r->out, "  %-*s %7.1f%% %7.1f%%", LABEL_W(r), label(r, &res[k], lb, sizeof(lb)), 100 * res[k].util_mean, 100 * res[k].util_mean_busy);
		for (int i = 0; i < 11; i++)
			fprintf(r->out, " %6u", h[i]);
		fprintf(r->out, "  %llu/%llu/%llu, %.3f, %.1f%%/%.1f%%\n", (unsigned long long)res[k].drops_queue,
			(unsigned long long)res[k].drops_loss, (unsigned long long)res[k].drops_down,
			(double)res[k].bg_bytes / 1e9, 100 * res[k].bg_offered, 100 * res[k].bg_carried);
	}
	fprintf(r->out, "#\n# switches: descriptors (peak / mean per switch), reduce frames in, aggregated, "
			"timeouts (static: sums sent up), broadcasts dropped, recirculation waits\n");
	for (unsigned k = 0; k < n; k++)
		fprintf(r->out, "  %-*s peak %llu mean %.2f, reduce-in %llu, aggregated %llu, timeouts %llu (+%llu early), "
				"bcast-dropped %llu, recirc-delayed %llu\n",
			LABEL_W(r), label(r, &res[k], lb, sizeof(lb)), (unsigned long long)res[k].desc_peak, res[k].desc_mean,
			(unsigned long long)res[k].sw.reduce_rx, (unsigned long long)res[k].sw.aggregated,
			(unsigned long long)(res[k].sw.flushes + res[k].sw.tree_up), (unsigned long long)res[k].sw.early_flushes,
			(unsigned long long)res[k].sw.bcast_dropped, (unsigned long long)res[k].sw.recirc_delayed);
	for (unsigned k = 0; k < n && r->cfg->timeout_adaptive; k++) {
		if (!res[k].sw.ato_claims)
			continue;
		unsigned wmax;
		double wmean = host_window(&res[k], &wmax);
		fprintf(r->out, "  %-*s adaptive timeout: mean %.3f us (leaves %.3f, level 2 %.3f, level 3 %.3f; "
				"as the root %.3f), range %.3f-%.3f us over %llu descriptors; "
				"%llu completed blocks stepped it down, %llu stragglers up; hosts' window %.1f blocks on average, up to %u\n",
			LABEL_W(r), label(r, &res[k], lb, sizeof(lb)), (double)res[k].sw.ato_sum / (double)res[k].sw.ato_claims / 1e6,
			res[k].ato_mean_level[1] / 1e6, res[k].ato_mean_level[2] / 1e6, res[k].ato_mean_level[3] / 1e6,
			res[k].ato_mean_root / 1e6, (double)res[k].sw.ato_min / 1e6, (double)res[k].sw.ato_max / 1e6,
			(unsigned long long)res[k].sw.ato_claims, (unsigned long long)res[k].sw.ato_samples,
			(unsigned long long)res[k].sw.ato_up, wmean, wmax);
	}
	fprintf(r->out, "#\n# emulator\n# %-*s %12s %9s %12s %10s %8s %10s\n", LABEL_W(r), "algo", "emulated", "wall(s)",
		"frame-hops", "Mhops/s", "workers", "peak RSS");
	for (unsigned k = 0; k < n; k++) {
		char t[32];

		emu_fmt_time(res[k].run.emulated, t, sizeof(t));
		fprintf(r->out, "  %-*s %*s %9.3f %12llu %10.2f %8u %7.0f MiB", LABEL_W(r), label(r, &res[k], lb, sizeof(lb)),
			width(12, t), t, (double)res[k].run.wall_ns / 1e9,
			(unsigned long long)res[k].run.frame_hops, res[k].run.frame_hops_per_s / 1e6, res[k].run.workers,
			(double)res[k].peak_rss / 1048576.0);
		if (res[k].series.rows)
			fprintf(r->out, ", time series %llu rows at %.1f us of wall time each (max %.1f)",
				(unsigned long long)res[k].series.rows,
				(double)res[k].series.wall_ns / (double)res[k].series.rows / 1e3,
				(double)res[k].series.max_ns / 1e3);
		if (r->cfg->clock == EMU_CLOCK_WALL)
			wall_line(r->out, &res[k].run);
		if (res[k].dist_ranks > 1)
			fprintf(r->out, "  %u ranks, ZeroMQ %.1f msgs %.1f KB per window, %llu rejected",
				res[k].dist_ranks,
				res[k].dist_windows ? (double)res[k].dist_msgs / (double)res[k].dist_windows : 0,
				res[k].dist_windows ? (double)res[k].dist_bytes / (double)res[k].dist_windows / 1e3 : 0,
				(unsigned long long)res[k].dist_rejected);
		fputc('\n', r->out);
	}
	for (unsigned k = 0; k < n; k++)
		for (unsigned i = 0; i < res[k].nattached; i++) {
			const struct emu_scn_attached *a = &res[k].attached[i];

			fprintf(r->out, "# attached %s on %s (rank %u, tenant %u): %llu frames in, %llu out, %llu bad, "
				"%llu overruns, %llu faster than the link, %llu retransmission requests, %llu of another run, "
				"%llu not sent; %s\n",
				a->node, a->ifname, a->rank, a->tenant, (unsigned long long)a->st.in_frames,
				(unsigned long long)a->st.out_frames, (unsigned long long)a->st.in_bad,
				(unsigned long long)a->st.in_overrun, (unsigned long long)a->st.in_fast,
				(unsigned long long)a->st.in_retx_req, (unsigned long long)a->st.in_other_run,
				(unsigned long long)a->st.out_dropped,
				a->st.quiet ? "done (barrier passed, then quiet)" :
				a->st.barrier_passed ? "barrier passed, still talking" : "barrier NOT passed");
		}
	bool all = n > 0;

	for (unsigned k = 0; k < n; k++)
		all = all && res[k].exact;
	if (r->runs && r->runs->size_max > r->runs->size_min) {
		unsigned first[AVG_MAX_ALGOS], rows[AVG_MAX_ALGOS];
		double avg[AVG_MAX_ALGOS];
		unsigned na = avg_busbw(res, n, nseeds(r), first, avg, rows);

		fprintf(r->out, "#\n# average bus bandwidth (the mean of the rows' busbw, as nccl-tests):");
		for (unsigned a = 0; a < na; a++)
			fprintf(r->out, "%s %s %.3f GB/s", a ? "," : "", res[first[a]].algo, avg[a]);
		fputc('\n', r->out);
	}
	fprintf(r->out, "#\n# result: %s\n", all ? "every allreduce exact on every host" : "NOT all exact (see above)");
	report_flush(r);
}

/* json_lag - a lag distribution of the wall clock: samples and quantiles, ns */
static void json_lag(FILE *f, const char *ind, const char *name, const struct emu_lag_dist *d)
{
	fprintf(f, "%s  \"%s\": {\"samples\": %llu, \"p50_ns\": %llu, \"p99_ns\": %llu, \"max_ns\": %llu},\n", ind, name,
		(unsigned long long)d->samples, (unsigned long long)d->p50_ns, (unsigned long long)d->p99_ns,
		(unsigned long long)d->max_ns);
}

/* json_attached - the hosts that were real processes (--attach), with their interfaces' counters */
static void json_attached(FILE *f, const struct emu_scn_result *res, const char *ind)
{
	fprintf(f, "%s  \"attached\": [\n", ind);
	for (unsigned i = 0; i < res->nattached; i++) {
		const struct emu_scn_attached *a = &res->attached[i];

		fprintf(f, "%s    {\"host\": ", ind);
		json_str(f, a->node);
		fprintf(f, ", \"interface\": ");
		json_str(f, a->ifname);
		fprintf(f, ", \"tenant\": %u, \"rank\": %u, \"frames_in\": %llu, \"bytes_in\": %llu, "
			   "\"bad_frames\": %llu, \"overruns\": %llu, \"retx_requests\": %llu, \"fast_frames\": %llu, "
			   "\"ahead_max_ns\": %llu, \"other_run_frames\": %llu, "
			   "\"frames_out\": %llu, \"bytes_out\": %llu, \"out_dropped\": %llu, \"barrier_passed\": %s, \"went_quiet\": %s}%s\n",
			a->tenant, a->rank, (unsigned long long)a->st.in_frames, (unsigned long long)a->st.in_bytes,
			(unsigned long long)a->st.in_bad, (unsigned long long)a->st.in_overrun,
			(unsigned long long)a->st.in_retx_req, (unsigned long long)a->st.in_fast,
			(unsigned long long)a->st.in_ahead_max, (unsigned long long)a->st.in_other_run,
			(unsigned long long)a->st.out_frames, (unsigned long long)a->st.out_bytes,
			(unsigned long long)a->st.out_dropped, a->st.barrier_passed ? "true" : "false",
			a->st.quiet ? "true" : "false", i + 1 < res->nattached ? "," : "");
	}
	fprintf(f, "%s  ],\n%s  \"lag_exceeded\": %s,\n", ind, ind, res->run.lag_exceeded ? "true" : "false");
}

/*
 * json_identity - what makes the report stand alone, read back by
 * --scenario: the scenario format, the sources, the topology file's hash,
 * path and (small) content as a list of lines
 */
static void json_identity(const struct report *r, const char *ind)
{
	FILE *f = r->out;

	fprintf(f, "%s  \"format\": %d,\n%s  \"source\": ", ind, SCNFILE_FORMAT, ind);
	json_str(f, r->source ? r->source : "unknown");
	fputs(",\n", f);
	if (!r->topo || !r->topo->file)
		return;
	fprintf(f, "%s  \"topology_hash\": \"%s\",\n", ind, r->topo->hash);
	if (r->topo->path[0]) {
		fprintf(f, "%s  \"topology_path\": ", ind);
		json_str(f, r->topo->path);
		fputs(",\n", f);
	}
	if (!r->topo->content)
		return;
	fprintf(f, "%s  \"topology_content\": [", ind);
	for (const char *p = r->topo->content, *e; *p; p = e + 1) {
		char line[REPORT_TOPO_LINE_MAX + 1];

		e = strchr(p, '\n');
		snprintf(line, sizeof(line), "%.*s", (int)(e - p), p);
		fputs(p == r->topo->content ? "" : ", ", f);
		json_str(f, line);
	}
	fputs("],\n", f);
}

/*
 * json_scenario - the "scenario" member (scnfile.h): "version", the
 * options that made the report, and what their defaults resolved to
 */
static void json_scenario(const struct report *r, const struct emu_scn_result *res, const char *ind)
{
	const struct emu_scn_cfg *c = r->cfg;
	const struct tofino_profile *prof = emu_tofino_profile_get(c->profile);
	FILE *f = r->out;

	fprintf(f, "%s\"scenario\": {\n%s  \"version\": ", ind, ind);
	json_str(f, r->version ? r->version : "unknown");
	fputs(",\n", f);
	for (unsigned i = 0; i < r->scn->n; i++) {
		const struct scnfile_item *it = &r->scn->item[i];

		fprintf(f, "%s  \"%s\": ", ind, it->key);
		if (it->kind == SCNFILE_FLAG) {
			fputs(it->val[0], f);
		} else if (it->kind == SCNFILE_LIST) {
			fputc('[', f);
			for (unsigned k = 0; k < it->nval; k++) {
				fputs(k ? ", " : "", f);
				json_str(f, it->val[k]);
			}
			fputc(']', f);
		} else {
			json_str(f, it->val[0]);
		}
		fputs(",\n", f);
	}
	json_identity(r, ind);
	char obuf[48] = "";

	if (c->router == EMU_ROUTER_MERLIN)	/* only there: the default model's reports keep their keys */
		snprintf(obuf, sizeof(obuf), "\"obuf_bytes\": %llu, ", (unsigned long long)merlin_obuf(c));
	fprintf(f, "%s  \"resolved\": {\"hosts_total\": %u, \"allreduce_hosts\": %u, \"background_hosts\": %u, "
		   "\"link_rate_bps\": [%llu, %llu], \"link_latency_ns\": [%.3f, %.3f], \"buffer_bytes\": %llu, "
		   "\"xbar_bps\": %llu, %s\"descriptors\": %u, \"workers\": %u}\n%s},\n",
		ind, res->hosts_total, res->ar_hosts, res->bg_hosts, (unsigned long long)res->rate_min_bps,
		(unsigned long long)res->rate_max_bps, (double)res->latency_min / 1e3, (double)res->latency_max / 1e3,
		(unsigned long long)(c->buffer_bytes ? c->buffer_bytes : emu_default_buffer(c->router)),
		(unsigned long long)res->xbar_bps, obuf, c->descriptors ? c->descriptors : prof ? prof->max_descriptors : 0,
		res->run.workers, ind);
}

/* csv_scenario - the scenario as "# key=value" lines, "# version=..." first (a list: a line per value) */
static void csv_scenario(const struct report *r)
{
	fprintf(r->out, "# version=%s\n", r->version ? r->version : "unknown");
	for (unsigned i = 0; i < r->scn->n; i++)
		for (unsigned k = 0; k < r->scn->item[i].nval; k++)
			fprintf(r->out, "# %s=%s\n", r->scn->item[i].key, r->scn->item[i].val[k]);
	fprintf(r->out, "# format=%d\n# source=%s\n", SCNFILE_FORMAT, r->source ? r->source : "unknown");
	if (!r->topo || !r->topo->file)
		return;
	fprintf(r->out, "# topology_hash=%s\n", r->topo->hash);
	if (r->topo->path[0])
		fprintf(r->out, "# topology_path=%s\n", r->topo->path);
	for (const char *p = r->topo->content, *e; p && *p; p = e + 1) {
		e = strchr(p, '\n');
		fprintf(r->out, "# topology_content=%.*s\n", (int)(e - p), p);
	}
}

/* json_what - what ran: algorithm, fabric, sizes, seed, and its outcome */
static void json_what(FILE *f, const struct emu_scn_result *res, const struct emu_scn_cfg *c, const char *ind)
{
	fprintf(f, "%s  \"algo\": ", ind);
	json_str(f, res->algo);
	fprintf(f, ",\n%s  \"topology\": ", ind);
	json_str(f, res->topology);
	fputs(",\n", f);
	fprintf(f, "%s  \"hosts\": %u,\n", ind, res->ar_hosts);
	fprintf(f, "%s  \"hosts_total\": %u,\n", ind, res->hosts_total);
	fprintf(f, "%s  \"background_hosts\": %u,\n", ind, res->bg_hosts);
	fprintf(f, "%s  \"size_bytes\": %llu,\n", ind, (unsigned long long)res->size_bytes);
	fprintf(f, "%s  \"elements\": %u,\n", ind, c->elements);
	fprintf(f, "%s  \"concurrent\": %u,\n", ind, res->nar);
	fprintf(f, "%s  \"seed\": %llu,\n", ind, (unsigned long long)res->seed);
	fprintf(f, "%s  \"run_id\": %u,\n", ind, res->run_id);
	fprintf(f, "%s  \"priority\": \"%s\",\n", ind, emu_tc_mode_names[c->priority]);
	fprintf(f, "%s  \"runtime_ns\": %.3f,\n", ind, (double)res->runtime / 1e3);
	fprintf(f, "%s  \"goodput_gbps\": %.6f,\n", ind, res->goodput_gbps);
	fprintf(f, "%s  \"algbw_GBps\": %.6f,\n", ind, algbw(res->goodput_gbps));
	fprintf(f, "%s  \"busbw_GBps\": %.6f,\n", ind, run_busbw(res));
	fprintf(f, "%s  \"result_exact\": %s,\n", ind, res->exact ? "true" : "false");
	fprintf(f, "%s  \"stuck\": ", ind);
	if (res->stuck[0])
		json_str(f, res->stuck);
	else
		fputs("null", f);
	fputs(",\n", f);
}

/* json_protocol - the protocol's counters (summed over the allreduces) and the switches' */
static void json_protocol(FILE *f, const struct emu_scn_result *res, const struct emu_scn_cfg *c, const char *ind)
{
	uint64_t retx = 0, fb = 0, rs = 0, fails = 0, re = 0;

	for (unsigned i = 0; i < res->nar; i++) {
		retx += res->ar[i].retransmissions;
		fb += res->ar[i].fallbacks;
		rs += res->ar[i].restorations;
		fails += res->ar[i].failures;
		re += res->ar[i].reissues;
	}
	fprintf(f, "%s  \"stragglers\": %llu,\n", ind, (unsigned long long)res->sw.stragglers);
	fprintf(f, "%s  \"collisions\": %llu,\n", ind, (unsigned long long)res->sw.collisions);
	fprintf(f, "%s  \"restorations\": %llu,\n", ind, (unsigned long long)rs);
	fprintf(f, "%s  \"retransmissions\": %llu,\n", ind, (unsigned long long)retx);
	fprintf(f, "%s  \"other_run_frames\": %llu,\n", ind, (unsigned long long)res->other_run);
	fprintf(f, "%s  \"failures\": %llu,\n", ind, (unsigned long long)fails);
	fprintf(f, "%s  \"reissues\": %llu,\n", ind, (unsigned long long)re);
	fprintf(f, "%s  \"fallbacks\": %llu,\n", ind, (unsigned long long)fb);
	if (res->sketch) {
		/* only where the hosts used the sketch: reports without it stay as they were */
		uint64_t rc = 0, rh = 0, rd = 0, pr = 0, rl = 0, rb = 0, rsd = 0;

		for (unsigned i = 0; i < res->nar; i++) {
			rc += res->ar[i].recoveries;
			rh += res->ar[i].recovered;
			rd += res->ar[i].retx_deferred;
			pr += res->ar[i].probes;
			rl += res->ar[i].recovered_late;
			rb += res->ar[i].rebroadcasts;
			rsd += res->ar[i].resends;
		}
		fprintf(f, "%s  \"sketch\": %u,\n%s  \"recoveries\": %llu,\n%s  \"recovered\": %llu,\n"
			   "%s  \"retx_deferred\": %llu,\n%s  \"probes\": %llu,\n", ind, res->sketch, ind,
			(unsigned long long)rc, ind, (unsigned long long)rh, ind, (unsigned long long)rd, ind,
			(unsigned long long)pr);
		fprintf(f, "%s  \"recovered_late\": %llu,\n", ind, (unsigned long long)rl);
		fprintf(f, "%s  \"rebroadcasts\": %llu,\n%s  \"resends\": %llu,\n", ind, (unsigned long long)rb, ind,
			(unsigned long long)rsd);
	}
	fprintf(f, "%s  \"descriptors_peak\": %llu,\n", ind, (unsigned long long)res->desc_peak);
	fprintf(f, "%s  \"descriptors_mean\": %.4f,\n", ind, res->desc_mean);
	fprintf(f, "%s  \"switch_reduce_in\": %llu,\n", ind, (unsigned long long)res->sw.reduce_rx);
	fprintf(f, "%s  \"switch_aggregated\": %llu,\n", ind, (unsigned long long)res->sw.aggregated);
	fprintf(f, "%s  \"switch_timeouts\": %llu,\n", ind, (unsigned long long)res->sw.flushes);
	if (c->timeout_adaptive) {
		unsigned wmax;
		double wmean = host_window(res, &wmax);

		fprintf(f, "%s  \"timeout_adaptive\": {\"floor_ns\": %.3f, \"ceil_ns\": %.3f, \"start_ns\": %.3f, "
			   "\"descriptors\": %llu, \"mean_ns\": %.3f, \"min_ns\": %.3f, \"max_ns\": %.3f, "
			   "\"mean_ns_level\": [%.3f, %.3f, %.3f], \"mean_ns_root\": %.3f, \"samples\": %llu, "
			   "\"samples_up\": %llu, \"host_window_mean\": %.3f, \"host_window_max\": %u},\n",
			ind, (double)c->ato_floor / 1e3, (double)c->ato_ceil / 1e3, (double)ato_start(c) / 1e3,
			(unsigned long long)res->sw.ato_claims,
			res->sw.ato_claims ? (double)res->sw.ato_sum / (double)res->sw.ato_claims / 1e3 : 0,
			(double)res->sw.ato_min / 1e3, (double)res->sw.ato_max / 1e3, res->ato_mean_level[1] / 1e3,
			res->ato_mean_level[2] / 1e3, res->ato_mean_level[3] / 1e3, res->ato_mean_root / 1e3,
			(unsigned long long)res->sw.ato_samples,
			(unsigned long long)res->sw.ato_up, wmean, wmax);
	}
	fprintf(f, "%s  \"bcast_dropped\": %llu,\n", ind, (unsigned long long)res->sw.bcast_dropped);
	fprintf(f, "%s  \"malformed\": %llu,\n", ind, (unsigned long long)res->sw.malformed);
}

/* json_links - link utilization, drops, background traffic (and the router when not the default) */
static void json_links(FILE *f, const struct emu_scn_result *res, const struct emu_scn_cfg *c, const char *ind)
{
	fprintf(f, "%s  \"link_util_mean\": %.6f,\n", ind, res->util_mean);
	fprintf(f, "%s  \"link_util\": [", ind);
	for (uint32_t i = 0; i < res->nlinks; i++)
		fprintf(f, "%s%.4f", i ? "," : "", res->link_util[i]);
	fprintf(f, "],\n");
	/* the same utilizations with the link named by its ends */
	fprintf(f, "%s  \"links\": [", ind);
	for (uint32_t i = 0; res->links && i < res->nlinks; i++) {
		fprintf(f, "%s{\"from\": ", i ? ", " : "");
		json_str(f, res->links[i].from);
		fputs(", \"to\": ", f);
		json_str(f, res->links[i].to);
		fprintf(f, ", \"util\": %.4f}", res->link_util[i]);
	}
	fprintf(f, "],\n");
	fprintf(f, "%s  \"drops_queue\": %llu,\n", ind, (unsigned long long)res->drops_queue);
	fprintf(f, "%s  \"drops_loss\": %llu,\n", ind, (unsigned long long)res->drops_loss);
	fprintf(f, "%s  \"drops_down\": %llu,\n", ind, (unsigned long long)res->drops_down);
	fprintf(f, "%s  \"background_bytes\": %llu,\n", ind, (unsigned long long)res->bg_bytes);
	if (c->bg_volume)
		fprintf(f, "%s  \"bg_volume\": %llu,\n", ind, (unsigned long long)c->bg_volume);
	/* only off the defaults, so that reports of the default model stay as they were */
	if (c->router == EMU_ROUTER_MERLIN || c->bg_load < 1) {
		fprintf(f, "%s  \"router\": \"%s\",\n", ind,
			c->router == EMU_ROUTER_FIFO ? "fifo" : c->xbar_arb == EMU_XBAR_RR ? "merlin:rr" : "merlin:lrs");
		fprintf(f, "%s  \"xbar_bps\": %llu,\n", ind, (unsigned long long)res->xbar_bps);
		if (c->router == EMU_ROUTER_MERLIN)
			fprintf(f, "%s  \"obuf_bytes\": %llu,\n%s  \"adaptive_threshold\": %.6f,\n", ind,
				(unsigned long long)merlin_obuf(c), ind, merlin_threshold(c));
		fprintf(f, "%s  \"bg_load\": %.6f,\n", ind, c->bg_load);
		fprintf(f, "%s  \"background_offered\": %.6f,\n", ind, res->bg_offered);
		fprintf(f, "%s  \"background_carried\": %.6f,\n", ind, res->bg_carried);
	}
}

/* json_engine - figures of the emulator, not of the emulated network */
static void json_engine(FILE *f, const struct emu_scn_result *res, const struct emu_scn_cfg *c, const char *ind)
{
	fprintf(f, "%s  \"emulated_ns\": %.3f,\n", ind, (double)res->run.emulated / 1e3);
	fprintf(f, "%s  \"wall_s\": %.6f,\n", ind, (double)res->run.wall_ns / 1e9);
	fprintf(f, "%s  \"frame_hops\": %llu,\n", ind, (unsigned long long)res->run.frame_hops);
	fprintf(f, "%s  \"frame_hops_per_s\": %.1f,\n", ind, res->run.frame_hops_per_s);
	fprintf(f, "%s  \"events\": %llu,\n", ind, (unsigned long long)res->run.events);
	fprintf(f, "%s  \"queue_events\": %llu,\n", ind, (unsigned long long)res->run.queue_events);
	fprintf(f, "%s  \"workers\": %u,\n", ind, res->run.workers);
	fprintf(f, "%s  \"peak_rss_bytes\": %llu,\n", ind, (unsigned long long)res->peak_rss);
	fprintf(f, "%s  \"mem_estimate_bytes\": %llu,\n", ind, (unsigned long long)res->mem_estimate);
	if (res->series.rows)
		fprintf(f, "%s  \"timeseries\": {\"rows\": %llu, \"dropped\": %llu, \"wall_ns\": %llu, \"max_row_ns\": %llu},\n",
			ind, (unsigned long long)res->series.rows, (unsigned long long)res->series.dropped,
			(unsigned long long)res->series.wall_ns, (unsigned long long)res->series.max_ns);
	if (res->dist_ranks <= 1)
		fprintf(f, "%s  \"partition\": {\"windows\": %llu, \"events_critical\": %llu, \"cross_events\": %llu},\n", ind,
			(unsigned long long)res->run.windows, (unsigned long long)res->run.events_critical,
			(unsigned long long)res->run.cross_events);
	if (res->dist_ranks > 1)
		fprintf(f, "%s  \"distributed\": {\"ranks\": %u, \"windows\": %llu, \"zmq_msgs\": %llu, \"zmq_bytes\": %llu, "
			   "\"msgs_per_window\": %.2f, \"bytes_per_window\": %.1f, \"rejected\": %llu},\n",
			ind, res->dist_ranks, (unsigned long long)res->dist_windows, (unsigned long long)res->dist_msgs,
			(unsigned long long)res->dist_bytes,
			res->dist_windows ? (double)res->dist_msgs / (double)res->dist_windows : 0,
			res->dist_windows ? (double)res->dist_bytes / (double)res->dist_windows : 0,
			(unsigned long long)res->dist_rejected);
	if (c->clock == EMU_CLOCK_WALL)
		fprintf(f, "%s  \"dilation\": %g,\n%s  \"max_lag_ns\": %llu,\n%s  \"mean_lag_ns\": %llu,\n"
			   "%s  \"lag_bound_ns\": %llu,\n%s  \"paced_windows\": %llu,\n%s  \"late_windows\": %llu,\n"
			   "%s  \"kept_up\": %s,\n",
			ind, res->run.dilation, ind, (unsigned long long)res->run.max_lag_ns, ind,
			(unsigned long long)res->run.mean_lag_ns, ind, (unsigned long long)res->run.lag_bound_ns, ind,
			(unsigned long long)res->run.paced_windows, ind, (unsigned long long)res->run.late_windows, ind,
			res->run.kept_up ? "true" : "false");
	if (c->clock == EMU_CLOCK_WALL) {
		json_lag(f, ind, "event_lag", &res->run.event_lag);
		json_lag(f, ind, "inject_lag", &res->run.inject_lag);
	}
	if (res->nattached)
		json_attached(f, res, ind);
}

/* json_completion - "completion": the hosts' completion times of allreduce @a and its last hosts */
static void json_completion(FILE *f, const struct emu_scn_ar *a)
{
	fprintf(f, "\"completion\": {\"hosts\": %u, \"min_ns\": %.3f, \"p50_ns\": %.3f, \"p99_ns\": %.3f, "
		   "\"max_ns\": %.3f, \"last\": [", a->done_hosts, (double)a->done_min / 1e3, (double)a->done_p50 / 1e3,
		(double)a->done_p99 / 1e3, (double)a->done_max / 1e3);
	for (unsigned k = 0; k < a->nlast; k++) {
		fprintf(f, "%s{\"host\": ", k ? ", " : "");
		json_str(f, a->last[k].host);
		fprintf(f, ", \"ns\": %.3f}", (double)a->last[k].t / 1e3);
	}
	fputs("]}", f);
}

/* json_waits - an unfinished allreduce's first hosts without their result, and what each waits for */
static void json_waits(FILE *f, const struct emu_scn_ar *a)
{
	fputs(", \"waiting\": [", f);
	for (unsigned k = 0; k < a->nwait; k++) {
		const struct emu_scn_wait *w = &a->wait[k];
		char why[512];

		emu_scn_wait_describe(why, sizeof(why), w);
		fprintf(f, "%s{\"host\": ", k ? ", " : "");
		json_str(f, w->host);
		fprintf(f, ", \"waits_for\": \"%s\", \"blocks_left\": %u, ", lh_wait_name(w->w.what), w->w.blocks_left);
		if (w->w.block == UINT32_MAX)
			fputs("\"block\": null", f);
		else
			fprintf(f, "\"block\": %u", w->w.block);
		fputs(", \"peer\": ", f);
		if (w->peer[0])
			json_str(f, w->peer);
		else
			fputs("null", f);
		fprintf(f, ", \"tries\": %u, \"count\": %u, \"since_ns\": %.3f, \"text\": ", w->w.tries, w->w.count,
			(double)w->w.since / 1e3);
		json_str(f, why);
		fputs("}", f);
	}
	fputs("]", f);
}

/* json_allreduces - one object per allreduce */
static void json_allreduces(FILE *f, const struct emu_scn_result *res, const char *ind)
{
	fprintf(f, "%s  \"allreduces\": [\n", ind);
	for (unsigned i = 0; i < res->nar; i++) {
		const struct emu_scn_ar *a = &res->ar[i];

		fprintf(f, "%s    {\"tenant\": %u, \"hosts\": %u, \"size_bytes\": %llu, \"runtime_ns\": %.3f, "
			   "\"barrier_ns\": %.3f, \"goodput_gbps\": %.6f, \"algbw_GBps\": %.6f, \"busbw_GBps\": %.6f, "
			   "\"result_exact\": %s, \"finished\": %s, "
			   "\"mismatches\": %llu, \"frames_per_host\": %llu, \"leader_frames\": %llu, "
			   "\"retransmissions\": %llu, \"failures\": %llu, \"reissues\": %llu, \"fallbacks\": %llu, "
			   "\"polls\": %llu, "
			   "\"restorations\": %llu, \"collisions_seen\": %llu, \"noise_delays\": %llu, \"window\": %u, "
			   "\"retx_timeout_ns\": %.3f, ",
			ind, a->tenant, a->hosts, (unsigned long long)a->size_bytes, (double)a->runtime / 1e3,
			(double)a->barrier / 1e3, a->goodput_gbps, algbw(a->goodput_gbps), busbw(a->goodput_gbps, a->hosts),
			a->exact ? "true" : "false",
			a->finished ? "true" : "false", (unsigned long long)a->mismatches,
			(unsigned long long)a->frames_per_host, (unsigned long long)a->leader_frames,
			(unsigned long long)a->retransmissions, (unsigned long long)a->failures,
			(unsigned long long)a->reissues, (unsigned long long)a->fallbacks,
			(unsigned long long)a->polls, (unsigned long long)a->restorations, (unsigned long long)a->collisions_seen,
			(unsigned long long)a->noise_delays, a->window, (double)a->retx_timeout / 1e3);
		json_completion(f, a);
		json_waits(f, a);
		fprintf(f, "}%s\n", i + 1 < res->nar ? "," : "");
	}
	fprintf(f, "%s  ]\n%s}", ind, ind);
}

static void json_run(const struct report *r, const struct emu_scn_result *res, const char *ind)
{
	FILE *f = r->out;
	const struct emu_scn_cfg *c = r->cfg;

	fprintf(f, "%s{\n", ind);
	json_what(f, res, c, ind);
	json_protocol(f, res, c, ind);
	json_links(f, res, c, ind);
	json_engine(f, res, c, ind);
	json_allreduces(f, res, ind);
}

/* json_spread - , "key": {"mean": , "stddev": , "min": , "max": } (stddev: the sample's, n - 1) */
static void json_spread(FILE *f, const char *key, struct spread s, double scale)
{
	fprintf(f, ", \"%s\": {\"mean\": %.6f, \"stddev\": %.6f, \"min\": %.6f, \"max\": %.6f}", key, s.mean * scale,
		s.sd * scale, s.min * scale, s.max * scale);
}

/*
 * json_rows - a sweep's rows: one per size, algorithm and allreduce, the
 * spread of the time and the goodput over the seeds, algbw and busbw from
 * the mean time. The runs come in that order, the seeds of a row next to
 * each other (main.c's run_all).
 */
static void json_rows(const struct report *r, const struct emu_scn_result *res, unsigned n)
{
	unsigned ns = nseeds(r);
	bool first = true;

	fprintf(r->out, "  \"rows\": [");
	for (unsigned g = 0; g + ns <= n; g += ns)
		for (unsigned i = 0; i < res[g].nar; i++) {
			const struct emu_scn_result *x = &res[g];
			struct row_stats st = row_stats(x, ns, i);
			bool exact = true;

			fprintf(r->out, "%s\n    {\"algo\": ", first ? "" : ",");
			first = false;
			json_str(r->out, x->algo);
			fprintf(r->out, ", \"size_bytes\": %llu, \"tenant\": %u, \"hosts\": %u, \"seeds\": %u",
				(unsigned long long)x->ar[i].size_bytes, x->ar[i].tenant, x->ar[i].hosts, ns);
			for (unsigned k = 0; k < ns; k++)
				exact = exact && x[k].ar[i].exact;
			json_spread(r->out, "runtime_ns", st.t, 1e3);
			json_spread(r->out, "goodput_gbps", st.gp, 1);
			fprintf(r->out, ", \"algbw_GBps\": %.6f, \"busbw_GBps\": %.6f", st.algbw, st.busbw);
			fprintf(r->out, ", \"result_exact\": %s}", exact ? "true" : "false");
		}
	fprintf(r->out, "\n  ],\n");
	if (r->runs->size_max > r->runs->size_min) {
		unsigned fa[AVG_MAX_ALGOS], rows[AVG_MAX_ALGOS];
		double avg[AVG_MAX_ALGOS];
		unsigned na = avg_busbw(res, n, ns, fa, avg, rows);

		fprintf(r->out, "  \"average_busbw_GBps\": {");
		for (unsigned k = 0; k < na; k++) {
			fputs(k ? ", " : "", r->out);
			json_str(r->out, res[fa[k]].algo);
			fprintf(r->out, ": %.6f", avg[k]);
		}
		fprintf(r->out, "},\n");
	}
}

void emu_report_json(struct report *r, const struct emu_scn_result *res, unsigned n)
{
	fprintf(r->out, "{\n");
	if (r->scn)
		json_scenario(r, &res[0], "  ");
	if (sweep(r))
		json_rows(r, res, n);
	fprintf(r->out, "  \"runs\": [\n");
	for (unsigned i = 0; i < n; i++) {
		json_run(r, &res[i], "    ");
		fprintf(r->out, "%s\n", i + 1 < n ? "," : "");
	}
	fprintf(r->out, "  ]\n}\n");
}

void emu_report_csv(struct report *r, const struct emu_scn_result *res, unsigned n)
{
	if (r->scn)
		csv_scenario(r);
	fprintf(r->out, "algo,topology,tenant,hosts,size_bytes,elements,seed,runtime_ns,barrier_ns,goodput_gbps,"
			"result_exact,stragglers,collisions,restorations,retransmissions,failures,fallbacks,"
			"descriptors_peak,link_util_mean,drops_queue,drops_loss,drops_down,emulated_ns,wall_s,"
			"frame_hops,frame_hops_per_s,workers,peak_rss_bytes,algbw_GBps,busbw_GBps\n");
	for (unsigned k = 0; k < n; k++)
		for (unsigned i = 0; i < res[k].nar; i++) {
			const struct emu_scn_ar *a = &res[k].ar[i];

			fprintf(r->out, "%s,", res[k].algo);
			csv_str(r->out, res[k].topology);
			fprintf(r->out, ",%u,%u,%llu,%u,%llu,%.3f,%.3f,%.6f,%s,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.6f,"
					"%llu,%llu,%llu,%.3f,%.6f,%llu,%.1f,%u,%llu,%.6f,%.6f\n",
				a->tenant, a->hosts, (unsigned long long)a->size_bytes,
				r->cfg->elements, (unsigned long long)res[k].seed, (double)a->runtime / 1e3,
				(double)a->barrier / 1e3, a->goodput_gbps, a->exact ? "true" : "false",
				(unsigned long long)res[k].sw.stragglers, (unsigned long long)res[k].sw.collisions,
				(unsigned long long)a->restorations, (unsigned long long)a->retransmissions,
				(unsigned long long)a->failures, (unsigned long long)a->fallbacks,
				(unsigned long long)res[k].desc_peak, res[k].util_mean,
				(unsigned long long)res[k].drops_queue, (unsigned long long)res[k].drops_loss,
				(unsigned long long)res[k].drops_down, (double)res[k].run.emulated / 1e3,
				(double)res[k].run.wall_ns / 1e9, (unsigned long long)res[k].run.frame_hops,
				res[k].run.frame_hops_per_s, res[k].run.workers, (unsigned long long)res[k].peak_rss,
				algbw(a->goodput_gbps), busbw(a->goodput_gbps, a->hosts));
		}
}
