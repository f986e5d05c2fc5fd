// SPDX-License-Identifier: MIT
/*
 * DOC: scnfile.c - a scenario written as key/value pairs and read back.
 * See scnfile.h.
 *
 * The reader takes the whole report (one JSON object, or CSV whose
 * comment lines hold the scenario): a small recursive-descent JSON reader
 * that keeps the members of the top-level "scenario" object and skips
 * every other value, nested no deeper than JSON_DEPTH.
 */
#include "emu/scnfile.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "emu/engine/route.h"
#include "emu/engine/util.h"
#include "emu/units.h"

/* the keys, in the order they are written and applied */
static const char *const keys[] = {
	"topology", "algo", "hosts", "size", "seed", "seeds", "elements", "concurrent", "background", "bg-msg",
	"bg-load", "bg-volume", "routing", "router", "xbar-bw", "obuf", "adaptive-threshold", "lossy", "loss", "lossless", "buffer", "priority", "commit-ahead",
	"rate", "noise", "fail", "drop", "timeout", "timer", "pktgen-tick", "profile", "descriptors", "shards", "table",
	"window", "retx-timeout", "max-failures", "sketch", "time-limit", "stall", "clock", "dilation", "lag-bound",
	"max-lag",
};

bool emu_scnfile_known(const char *key)
{
	for (size_t i = 0; i < EMU_ARRAY_SIZE(keys); i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

struct unit {
	const char *name;
	uint64_t scale;
};

/* exact - @v in the largest unit of @u (largest first, the last 1) that divides it */
static void exact(char *buf, uint64_t v, const struct unit *u, size_t n)
{
	size_t i = 0;

	while (i + 1 < n && (v == 0 || v % u[i].scale))
		i++;
	snprintf(buf, SCNFILE_VAL, "%llu%s", (unsigned long long)(v / u[i].scale), u[i].name);
}

static void fmt_time(char *buf, emu_time_t t)
{
	static const struct unit u[] = {
		{ "s", 1000000000000ULL }, { "ms", 1000000000ULL }, { "us", 1000000ULL }, { "ns", 1000 }, { "ps", 1 },
	};

	exact(buf, t, u, EMU_ARRAY_SIZE(u));
}

static void fmt_rate(char *buf, uint64_t bps)
{
	static const struct unit u[] = {
		{ "Tbps", 1000000000000ULL }, { "Gbps", 1000000000ULL }, { "Mbps", 1000000 }, { "Kbps", 1000 }, { "bps", 1 },
	};

	exact(buf, bps, u, EMU_ARRAY_SIZE(u));
}

static void fmt_size(char *buf, uint64_t bytes)
{
	static const struct unit u[] = { { "GiB", 1ULL << 30 }, { "MiB", 1 << 20 }, { "KiB", 1024 }, { "B", 1 } };

	exact(buf, bytes, u, EMU_ARRAY_SIZE(u));
}

/* add - a new item @key of @kind with @nval empty values */
static struct scnfile_item *add(struct scnfile *d, const char *key, enum scnfile_kind kind, unsigned nval)
{
	struct scnfile_item *it = &d->item[d->n++];

	it->key = key;
	it->kind = kind;
	it->nval = nval;
	it->val = emu_xcalloc(nval ? nval : 1, sizeof(*it->val));
	return it;
}

/* one value, printf-style */
static void str(struct scnfile *d, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void str(struct scnfile *d, const char *key, const char *fmt, ...)
{
	struct scnfile_item *it = add(d, key, SCNFILE_STR, 1);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(it->val[0], SCNFILE_VAL, fmt, ap);
	va_end(ap);
}

static void flag(struct scnfile *d, const char *key, bool on)
{
	str(d, key, "%s", on ? "true" : "false");
	d->item[d->n - 1].kind = SCNFILE_FLAG;
}

static void time_or_auto(struct scnfile *d, const char *key, emu_time_t t)
{
	struct scnfile_item *it = add(d, key, SCNFILE_STR, 1);

	if (t == EMU_TIME_INF)
		snprintf(it->val[0], SCNFILE_VAL, "inf");
	else if (t)
		fmt_time(it->val[0], t);
	else
		snprintf(it->val[0], SCNFILE_VAL, "auto");
}

static void uint_or_auto(struct scnfile *d, const char *key, uint64_t v)
{
	if (v)
		str(d, key, "%llu", (unsigned long long)v);
	else
		str(d, key, "auto");
}

/* the run: topology, algorithms, hosts, sizes, seeds */
static void describe_runs(struct scnfile *d, const struct emu_scn_cfg *c, const struct scnfile_runs *r)
{
	struct scnfile_item *it;

	str(d, "topology", "%s", c->topology);
	str(d, "algo", "%s", r->algos);
	if (c->hosts)
		str(d, "hosts", "%u", c->hosts);
	else
		str(d, "hosts", "%.17g%%", c->hosts_pct);
	it = add(d, "size", SCNFILE_STR, 1);
	fmt_size(it->val[0], r->size_min);
	if (r->size_max != r->size_min) {
		char hi[SCNFILE_VAL];

		fmt_size(hi, r->size_max);
		snprintf(it->val[0] + strlen(it->val[0]), SCNFILE_VAL - strlen(it->val[0]), ":%s:x%u", hi,
			 r->size_factor);
	}
	if (r->seed_min == r->seed_max)
		str(d, "seed", "%llu", (unsigned long long)r->seed_min);
	else
		str(d, "seeds", "%llu-%llu", (unsigned long long)r->seed_min, (unsigned long long)r->seed_max);
	str(d, "elements", "%u", c->elements);
	str(d, "concurrent", "%u", c->concurrent);
	str(d, "background", "%s", !c->background ? "none" : c->bg_pattern == LH_BG_RANDOM ? "random" : "uniform");
	it = add(d, "bg-msg", SCNFILE_STR, 1);
	fmt_size(it->val[0], c->bg_msg);
	str(d, "bg-load", "%.17g", c->bg_load);
	it = add(d, "bg-volume", SCNFILE_STR, 1);
	fmt_size(it->val[0], c->bg_volume);
}

/* the network: routing, router, flow control, loss, failures */
static void describe_network(struct scnfile *d, const struct emu_scn_cfg *c)
{
	struct scnfile_item *it;

	str(d, "routing", "%s", emu_routing_name(c->routing));
	str(d, "router", "%s", c->router == EMU_ROUTER_FIFO ? "fifo" : c->xbar_arb == EMU_XBAR_RR ? "merlin:rr" : "merlin:lrs");
	it = add(d, "xbar-bw", SCNFILE_STR, 1);
	if (c->xbar_bps)
		fmt_rate(it->val[0], c->xbar_bps);
	else
		snprintf(it->val[0], SCNFILE_VAL, "auto");
	it = add(d, "obuf", SCNFILE_STR, 1);
	if (c->obuf_bytes)
		fmt_size(it->val[0], c->obuf_bytes);
	else
		snprintf(it->val[0], SCNFILE_VAL, "auto");
	if (c->adaptive_threshold > 0)
		str(d, "adaptive-threshold", "%.17g", c->adaptive_threshold);
	else
		str(d, "adaptive-threshold", "auto");
	flag(d, "lossy", c->lossy);
	str(d, "loss", "%.17g", c->loss);
	flag(d, "lossless", c->lossless);
	it = add(d, "buffer", SCNFILE_STR, 1);
	fmt_size(it->val[0], c->buffer_bytes ? c->buffer_bytes : emu_default_buffer(c->router));
	str(d, "priority", "%s", emu_tc_mode_names[c->priority]);
	it = add(d, "commit-ahead", SCNFILE_STR, 1);
	if (c->commit_idle)
		snprintf(it->val[0], SCNFILE_VAL, "idle");
	else
		fmt_size(it->val[0], c->commit_bytes ? c->commit_bytes : EMU_DEFAULT_COMMIT);
	it = add(d, "rate", SCNFILE_STR, 1);
	if (c->rate_bps)
		fmt_rate(it->val[0], c->rate_bps);
	else
		snprintf(it->val[0], SCNFILE_VAL, "auto");
	str(d, "noise", "%.17g", c->noise);
	it = add(d, "fail", SCNFILE_LIST, c->nfail);
	for (unsigned i = 0; i < c->nfail; i++) {
		const struct emu_fail *f = &c->fail[i];
		char down[SCNFILE_VAL], up[SCNFILE_VAL] = "";

		fmt_time(down, f->down);
		if (f->up != EMU_TIME_INF) {
			up[0] = '-';
			fmt_time(up + 1, f->up);
		}
		if (f->is_node)
			snprintf(it->val[i], SCNFILE_VAL, "node:%.32s@%.24s%.25s", f->node, down, up);
		else
			snprintf(it->val[i], SCNFILE_VAL, "link:%.32s/%d@%.24s%.25s", f->node, f->port, down, up);
	}
	it = add(d, "drop", SCNFILE_LIST, c->ndrop);
	for (unsigned i = 0; i < c->ndrop; i++)
		snprintf(it->val[i], SCNFILE_VAL, "%s/%u#%llu", c->drop[i].node, c->drop[i].port,
			 (unsigned long long)c->drop[i].nth);
}

/* the switches and the hosts */
static void describe_nodes(struct scnfile *d, const struct emu_scn_cfg *c)
{
	/* adaptive: the start value, then the range (--timeout T --timeout adaptive:FLOOR-CEIL) */
	struct scnfile_item *it = add(d, "timeout", c->timeout_adaptive ? SCNFILE_LIST : SCNFILE_STR,
				      c->timeout_adaptive ? 2 : 1);

	fmt_time(it->val[0], c->timeout);
	if (c->timeout_adaptive) {
		char lo[SCNFILE_VAL], hi[SCNFILE_VAL];

		fmt_time(lo, c->ato_floor);
		fmt_time(hi, c->ato_ceil);
		snprintf(it->val[1], SCNFILE_VAL, "adaptive:%.40s-%.40s", lo, hi);
	}
	str(d, "timer", "%s", c->timer == EMU_SW_TIMER_PKTGEN ? "pktgen" : "exact");
	time_or_auto(d, "pktgen-tick", c->pktgen_tick);
	str(d, "profile", "%s", c->profile);
	uint_or_auto(d, "descriptors", c->descriptors);
	uint_or_auto(d, "shards", c->shards);
	str(d, "table", "%s", c->table_per_tenant ? "per-tenant" : "hash");
	uint_or_auto(d, "window", c->window);
	time_or_auto(d, "retx-timeout", c->retx_timeout);
	str(d, "max-failures", "%u", c->max_failures);
	if (c->sketch == EMU_SCN_SKETCH_AUTO)
		str(d, "sketch", "auto");	/* not resolved: the topology did not load */
	else
		str(d, "sketch", "%u", c->sketch);
}

/* the run's limits and clock */
static void describe_run(struct scnfile *d, const struct emu_scn_cfg *c)
{
	time_or_auto(d, "time-limit", c->limit);
	if (c->stall)
		time_or_auto(d, "stall", c->stall);
	else
		str(d, "stall", "0");
	str(d, "clock", "%s", c->clock == EMU_CLOCK_WALL ? "wall" : "virtual");
	if (c->dilation > 0)
		str(d, "dilation", "%.17g", c->dilation);
	else
		str(d, "dilation", "auto");
	time_or_auto(d, "lag-bound", c->lag_bound_ns * EMU_NS);
	if (c->lag_max_ns)
		time_or_auto(d, "max-lag", c->lag_max_ns * EMU_NS);
	else
		str(d, "max-lag", "0");
}

void emu_scnfile_describe(struct scnfile *d, const struct emu_scn_cfg *cfg, const struct scnfile_runs *runs)
{
	d->n = 0;
	describe_runs(d, cfg, runs);
	describe_network(d, cfg);
	describe_nodes(d, cfg);
	describe_run(d, cfg);
}

void emu_scnfile_fini(struct scnfile *d)
{
	for (unsigned i = 0; d && i < d->n; i++)
		free(d->item[i].val);
	if (d)
		d->n = 0;
}

/* ---- reading ---- */

#define JSON_DEPTH 64

struct reader {
	const char *s, *p, *end;
	char *err;
	size_t errlen;
	int (*apply)(void *ctx, const char *key, const char *val, char *err, size_t errlen);
	void *ctx;
};

/* line - the line of @at in the file, for messages */
static unsigned line(const struct reader *r, const char *at)
{
	unsigned n = 1;

	for (const char *q = r->s; q < at && q < r->end; q++)
		n += *q == '\n';
	return n;
}

static int bad(struct reader *r, const char *what)
{
	snprintf(r->err, r->errlen, "line %u: %s", line(r, r->p), what);
	return -EINVAL;
}

static void ws(struct reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

/* utf8 - code point @cp as UTF-8 into @o (room for 4), its length */
static size_t utf8(uint32_t cp, char *o)
{
	if (cp < 0x80)
		return (size_t)(o[0] = (char)cp, 1);
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	o[0] = (char)(0xe0 | cp >> 12);
	o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[2] = (char)(0x80 | (cp & 0x3f));
	return 3;
}

/* string - a JSON string at r->p into @out (@len bytes, NUL-terminated); too long is an error */
static int string(struct reader *r, char *out, size_t len)
{
	size_t n = 0;

	if (r->p >= r->end || *r->p != '"')
		return bad(r, "a string expected");
	r->p++;
	while (r->p < r->end && *r->p != '"') {
		char c = *r->p++, tmp[4];
		size_t k = 1;

		tmp[0] = c;
		if ((unsigned char)c < 0x20)
			return bad(r, "a control character in a string");
		if (c == '\\') {
			if (r->p >= r->end)
				break;
			c = *r->p++;
			const char *esc = strchr("\"\\/bfnrt", c);

			if (esc && c != 'u') {
				tmp[0] = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"];
			} else if (c == 'u' && r->end - r->p >= 4) {
				char hex[5] = { 0 }, *e;

				memcpy(hex, r->p, 4);
				unsigned long cp = strtoul(hex, &e, 16);

				if (*e || !isxdigit((unsigned char)hex[0]))
					return bad(r, "a bad \\u escape");
				if (!cp)
					return bad(r, "\\u0000 in a string (a scenario value cannot hold a NUL)");
				r->p += 4;
				k = utf8((uint32_t)cp, tmp);
			} else {
				return bad(r, "a bad escape in a string");
			}
		}
		if (n + k >= len)
			return bad(r, "a string too long for a scenario value");
		memcpy(out + n, tmp, k);
		n += k;
	}
	if (r->p >= r->end)
		return bad(r, "a string without its closing quote");
	r->p++;
	out[n] = 0;
	return 0;
}

/* scalar - a number, true, false or null: its text into @out */
static int scalar(struct reader *r, char *out, size_t len)
{
	const char *q = r->p;

	while (q < r->end && (isalnum((unsigned char)*q) || *q == '.' || *q == '-' || *q == '+'))
		q++;
	if (q == r->p || (size_t)(q - r->p) >= len)
		return bad(r, "a value expected");
	memcpy(out, r->p, (size_t)(q - r->p));
	out[q - r->p] = 0;
	if (!isdigit((unsigned char)out[0]) && out[0] != '-' && strcmp(out, "true") && strcmp(out, "false") &&
	    strcmp(out, "null"))
		return bad(r, "a value expected");
	r->p = q;
	return 0;
}

static int skip(struct reader *r, unsigned depth);

/* next - after an item: 1 if a ',' follows (another item), 0 if @close (consumed), else -EINVAL */
static int next(struct reader *r, char close)
{
	ws(r);
	if (r->p < r->end && *r->p == ',') {
		r->p++;
		return 1;
	}
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return 0;
	}
	return bad(r, close == '}' ? "',' or '}' expected" : "',' or ']' expected");
}

/* member_key - a member's "key" and its ':' into @key (@len bytes) */
static int member_key(struct reader *r, char *key, size_t len)
{
	ws(r);
	if (string(r, key, len))
		return -EINVAL;
	ws(r);
	if (r->p >= r->end || *r->p != ':')
		return bad(r, "':' expected");
	r->p++;
	return 0;
}

/* empty - r->p is at an opening bracket: step over it; true if @close follows at once (consumed) */
static bool empty(struct reader *r, char close)
{
	r->p++;
	ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return true;
	}
	return false;
}

/* skip_items - the members of an object or the values of an array at r->p, each skipped */
static int skip_items(struct reader *r, unsigned depth, char close, bool keyed)
{
	char key[256];
	int more = !empty(r, close);

	while (more > 0) {
		if ((keyed && member_key(r, key, sizeof(key))) || skip(r, depth + 1))
			return -EINVAL;
		more = next(r, close);
	}
	return more;
}

static int skip(struct reader *r, unsigned depth)
{
	char tmp[64];

	ws(r);
	if (depth > JSON_DEPTH)
		return bad(r, "nested too deep");
	if (r->p >= r->end)
		return bad(r, "a value expected");
	if (*r->p == '{')
		return skip_items(r, depth, '}', true);
	if (*r->p == '[')
		return skip_items(r, depth, ']', false);
	if (*r->p == '"') {
		/* a string of any length */
		for (r->p++; r->p < r->end && *r->p != '"'; r->p++)
			if (*r->p == '\\')
				r->p++;
		if (r->p >= r->end)
			return bad(r, "a string without its closing quote");
		r->p++;
		return 0;
	}
	return scalar(r, tmp, sizeof(tmp));
}

/* control - the first control character of @s (C0, DEL or C1 as UTF-8; a tab is text), or 0 */
static unsigned control(const char *s)
{
	for (const unsigned char *q = (const unsigned char *)s; *q; q++) {
		if ((*q < 0x20 && *q != '\t') || *q == 0x7f)
			return *q;
		if (*q == 0xc2 && q[1] >= 0x80 && q[1] <= 0x9f)
			return q[1];
	}
	return 0;
}

/*
 * give - apply @key = @val, the file and line in front of @apply's reason.
 * A control character is refused here, before anything echoes it to a
 * terminal (no value a report writes has one).
 */
static int give(struct reader *r, const char *at, const char *key, const char *val)
{
	char why[256];
	unsigned cc = control(key) ? control(key) : control(val);

	if (cc) {
		snprintf(r->err, r->errlen, "line %u: a control character (U+%04X) in %s", line(r, at), cc,
			 control(key) ? "a key" : "a value");
		return -EINVAL;
	}
	if (!key[0] || strchr(key, '\t')) {
		snprintf(r->err, r->errlen, "line %u: %s", line(r, at), key[0] ? "a tab in a key" : "an empty key");
		return -EINVAL;
	}

	if (!r->apply(r->ctx, key, val, why, sizeof(why)))
		return 0;
	snprintf(r->err, r->errlen, "line %u: %s", line(r, at), why);
	return -EINVAL;
}

/* value - one member of "scenario": a string, a flag, a number or a list of strings */
static int value(struct reader *r, const char *key)
{
	char val[SCNFILE_VAL * 2];
	const char *at;

	ws(r);
	at = r->p;
	if (r->p < r->end && *r->p == '"')
		return string(r, val, sizeof(val)) ? -EINVAL : give(r, at, key, val);
	if (r->p < r->end && *r->p == '[') {
		int more = !empty(r, ']');

		while (more > 0) {
			ws(r);
			at = r->p;
			if (string(r, val, sizeof(val)) || give(r, at, key, val))
				return -EINVAL;
			more = next(r, ']');
		}
		return more;
	}
	if (scalar(r, val, sizeof(val)))
		return -EINVAL;
	return strcmp(val, "null") ? give(r, at, key, val) : 0;
}

/* scenario - the members of the "scenario" object at r->p */
static int scenario(struct reader *r)
{
	char key[64];
	int more;

	ws(r);
	if (r->p >= r->end || *r->p != '{')
		return bad(r, "\"scenario\" is not an object");
	more = !empty(r, '}');
	while (more > 0) {
		if (member_key(r, key, sizeof(key)))
			return -EINVAL;
		if (!strcmp(key, "resolved")) {
			if (skip(r, 1))
				return -EINVAL;
		} else if (value(r, key)) {
			return -EINVAL;
		}
		more = next(r, '}');
	}
	return more;
}

/* read_json - the top-level object's "scenario" member; the rest is checked and skipped */
static int read_json(struct reader *r)
{
	char key[256];
	bool found = false;
	int more;

	ws(r);
	if (r->p >= r->end || *r->p != '{')
		return bad(r, "not a canary-emu report (a JSON object or CSV expected)");
	more = !empty(r, '}');
	while (more > 0) {
		if (member_key(r, key, sizeof(key)))
			return -EINVAL;
		if (!strcmp(key, "scenario") && found)
			return bad(r, "a second \"scenario\" member (which one is meant?)");
		if (!strcmp(key, "scenario")) {
			found = true;
			if (scenario(r))
				return -EINVAL;
		} else if (skip(r, 1)) {
			return -EINVAL;
		}
		more = next(r, '}');
	}
	if (more < 0)
		return more;
	if (!found) {
		snprintf(r->err, r->errlen, "has no \"scenario\" object (a canary-emu --json report has one)");
		return -EINVAL;
	}
	ws(r);
	if (r->p < r->end)
		return bad(r, "more after the report's JSON object (one report per file)");
	return 0;
}

/* read_csv - the "# key=value" lines before the column names */
static int read_csv(struct reader *r)
{
	char buf[SCNFILE_VAL * 2 + 64];
	unsigned n = 0;

	while (r->p < r->end && *r->p == '#') {
		const char *eol = memchr(r->p, '\n', (size_t)(r->end - r->p));
		const char *at = r->p;

		if (!eol)
			eol = r->end;
		size_t len = (size_t)(eol - r->p);

		if (len && r->p[len - 1] == '\r')
			len--;	/* CRLF line ends */
		if (len >= sizeof(buf))
			return bad(r, "a line too long for a scenario value");
		if (memchr(r->p, 0, len))
			return bad(r, "a NUL byte in the line");
		memcpy(buf, r->p, len);
		buf[len] = 0;
		r->p = eol < r->end ? eol + 1 : eol;
		char *kv = buf + 1 + strspn(buf + 1, " "), *eq = strchr(kv, '=');

		if (!eq || eq == kv) {
			r->p = at;
			return bad(r, "not '# key=value'");
		}
		if (strlen(eq + 1) >= SCNFILE_VAL * 2) {
			r->p = at;
			return bad(r, "a value too long for a scenario value");
		}
		*eq = 0;
		if (give(r, at, kv, eq + 1))
			return -EINVAL;
		n++;
	}
	if (!n) {
		snprintf(r->err, r->errlen, "has no '# key=value' lines (a canary-emu --csv report starts with them)");
		return -EINVAL;
	}
	return 0;
}

int emu_scnfile_read(const char *path, int (*apply)(void *ctx, const char *key, const char *val, char *err, size_t errlen),
		 void *ctx, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	struct reader r = { .err = err, .errlen = errlen, .apply = apply, .ctx = ctx };
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int rc;

	if (!f) {
		snprintf(err, errlen, "cannot be opened: %s", strerror(errno));
		return -EINVAL;
	}
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			if (cap > (256u << 20)) {
				snprintf(err, errlen, "is larger than 256 MiB, not a report");
				fclose(f);
				free(buf);
				return -EINVAL;
			}
			buf = emu_xrealloc(buf, cap);
		}
		size_t k = fread(buf + n, 1, cap - n, f);

		n += k;
		if (k == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot be read: %s", strerror(errno));
		fclose(f);
		free(buf);
		return -EINVAL;
	}
	fclose(f);
	r.s = r.p = buf ? buf : "";
	r.end = r.s + n;
	ws(&r);
	rc = r.p < r.end && *r.p == '#' ? read_csv(&r) : read_json(&r);
	free(buf);
	return rc;
}
