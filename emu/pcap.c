// SPDX-License-Identifier: MIT
/*
 * DOC: pcap.c - per-worker capture buffers merged into a pcapng file.
 * See pcap.h.
 *
 * The file is pcapng written here: a section header, one interface
 * description per tapped port in (node, port) order (Ethernet, no snap
 * length, nanosecond timestamps, named "FROM->TO" by the link's two ends
 * as the JSON report names links), then one enhanced packet block per
 * frame naming its interface. Every block is in this machine's byte
 * order, which the section header's magic tells readers.
 */
#include "emu/pcap.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/engine/engine.h"
#include "emu/engine/util.h"

struct rec {
	emu_time_t t;
	uint32_t node;
	uint16_t port;
	uint16_t len;
	uint64_t seq;
	uint8_t *data;
};

struct wbuf {
	struct rec *r;
	size_t n, cap;
	uint64_t seq;
	char pad[EMU_CACHELINE];
};

/* a tapped port: an interface of the file */
struct iface {
	uint32_t node;
	uint16_t port;
};

struct emu_pcap {
	char *path;
	unsigned nw;
	struct wbuf *w;
	const struct emu_fabric *fab;
	struct emu_engine *eng;
	struct iface *ifs;		/* in (node, port) order: the interface id is the index */
	uint32_t nifs;
};

static void tap(void *ctx, unsigned worker, uint32_t node, unsigned port, const struct emu_frame *f, emu_time_t t)
{
	struct emu_pcap *p = ctx;
	struct wbuf *b = &p->w[worker];

	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 1024;
		b->r = emu_xrealloc(b->r, b->cap * sizeof(*b->r));
	}
	struct rec *r = &b->r[b->n++];

	r->t = t;
	r->node = node;
	r->port = (uint16_t)port;
	r->len = (uint16_t)f->len;
	r->seq = b->seq++;
	r->data = emu_xcalloc(f->len ? f->len : 1, 1);
	memcpy(r->data, f->data, emu_frame_bytes(f));	/* padding that is not kept reads as zeros */
}

static int tap_link(struct emu_engine *eng, uint32_t node, unsigned port)
{
	struct emu_node *n = emu_engine_node(eng, node);

	if (emu_engine_tap_port(eng, node, port))
		return -EINVAL;
	return emu_engine_tap_port(eng, n->ports[port].peer_node, n->ports[port].peer_port);
}

/* tap_node - every link of @node, both directions; -EINVAL if it has none */
static int tap_node(struct emu_engine *eng, uint32_t node)
{
	struct emu_node *n = emu_engine_node(eng, node);
	unsigned tapped = 0;

	for (unsigned p = 0; p < n->nports; p++)
		tapped += tap_link(eng, node, p) == 0;
	return tapped ? 0 : -EINVAL;
}

/* tap_list - "S0/3,L1,H2/0": links by one end NODE/PORT, or every link of NODE. 0, or -EINVAL (said why). */
static int tap_list(struct emu_engine *eng, const char *links, char *err, size_t errlen)
{
	const struct emu_fabric *fab = emu_engine_fabric(eng);
	char buf[1024], *save = NULL;

	if (strlen(links) >= sizeof(buf)) {
		snprintf(err, errlen, "--pcap-links: the list is too long (at most %zu characters)", sizeof(buf) - 1);
		return -EINVAL;
	}
	snprintf(buf, sizeof(buf), "%s", links);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *slash = strrchr(tok, '/');
		char *end = NULL;
		unsigned long port = slash ? strtoul(slash + 1, &end, 10) : 0;

		if (slash && (!*(slash + 1) || *end || slash == tok)) {
			snprintf(err, errlen, "--pcap-links: '%s' is not NODE/PORT or NODE (e.g. L0/3 or S1)", tok);
			return -EINVAL;
		}
		if (slash)
			*slash = '\0';
		uint32_t node = emu_fabric_find(fab, tok);

		if (node == EMU_NONE32) {
			snprintf(err, errlen, "--pcap-links: no node named '%s'", tok);
			return -EINVAL;
		}
		if (slash ? tap_link(eng, node, (unsigned)port) : tap_node(eng, node)) {
			snprintf(err, errlen, "--pcap-links: %s has no linked port %lu", tok, port);
			return -EINVAL;
		}
	}
	return 0;
}

/* list_ifaces - the tapped ports, in (node, port) order */
static void list_ifaces(struct emu_pcap *p)
{
	for (int pass = 0; pass < 2; pass++) {
		p->nifs = 0;
		for (uint32_t i = 0; i < p->fab->nnodes; i++) {
			struct emu_node *n = emu_engine_node(p->eng, i);

			for (unsigned k = 0; k < n->nports; k++) {
				if (!(n->ports[k].rare & EMU_PORT_RARE_TAP))
					continue;
				if (pass)
					p->ifs[p->nifs] = (struct iface){ .node = i, .port = (uint16_t)k };
				p->nifs++;
			}
		}
		if (!pass)
			p->ifs = emu_xcalloc(p->nifs ? p->nifs : 1, sizeof(*p->ifs));
	}
}

struct emu_pcap *emu_pcap_open(struct emu_engine *eng, const char *path, const char *links, char *err,
			       size_t errlen)
{
	const struct emu_fabric *fab = emu_engine_fabric(eng);
	FILE *probe = fopen(path, "wb");

	if (!probe) {
		snprintf(err, errlen, "--pcap: cannot write '%s': %s", path, strerror(errno));
		return NULL;
	}
	fclose(probe);
	if (!links || !strcmp(links, "all")) {
		for (uint32_t i = 0; i < fab->nlinks; i++)
			tap_link(eng, fab->links[i].node[0], (unsigned)fab->links[i].port[0]);
	} else if (tap_list(eng, links, err, errlen)) {
		return NULL;
	}

	struct emu_pcap *p = emu_xcalloc(1, sizeof(*p));

	p->path = strdup(path);
	p->fab = fab;
	p->eng = eng;
	p->nw = emu_engine_workers(eng);
	p->w = emu_xcalloc(p->nw, sizeof(*p->w));
	list_ifaces(p);
	emu_engine_set_tap(eng, tap, p);
	return p;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- pcapng ---- */

#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_IDB 1u
#define PCAPNG_EPB 6u
#define PCAPNG_MAGIC 0x1A2B3C4Du
#define LINKTYPE_ETHERNET 1u
#define OPT_END 0
#define OPT_SHB_USERAPPL 4
#define OPT_IF_NAME 2
#define OPT_IF_DESCRIPTION 3
#define OPT_IF_TSRESOL 9

/* a block under construction: its body grows, then put() frames and writes it */
struct block {
	uint8_t *b;
	size_t n, cap;
};

static void add(struct block *k, const void *d, size_t len)
{
	if (k->n + len + 4 > k->cap) {
		k->cap = 2 * (k->n + len + 4) + 64;
		k->b = emu_xrealloc(k->b, k->cap);
	}
	memcpy(k->b + k->n, d, len);
	k->n += len;
	while (k->n % 4)
		k->b[k->n++] = 0;	/* every field and option ends on 32 bits */
}

static void add32(struct block *k, uint32_t v)
{
	add(k, &v, 4);
}

/* opt - one option: code, length, value padded to 32 bits */
static void opt(struct block *k, uint16_t code, const void *v, size_t len)
{
	uint16_t h[2] = { code, (uint16_t)len };

	add(k, h, 4);
	if (len)
		add(k, v, len);
}

/* put - write @type, the total length, the body and the total length again */
static void put(FILE *f, uint32_t type, struct block *k)
{
	uint32_t total = (uint32_t)(k->n + 12);

	fwrite(&type, 4, 1, f);
	fwrite(&total, 4, 1, f);
	fwrite(k->b, 1, k->n, f);
	fwrite(&total, 4, 1, f);
	k->n = 0;
}

/* end - "NODE/PORT" of (@node, @port) */
static void end_name(const struct emu_fabric *fab, uint32_t node, unsigned port, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%u", fab->nodes[node].name, port);
}

static void write_header(struct emu_pcap *p, FILE *f, struct block *k)
{
	static const char app[] = "canary-emu";
	uint16_t ver[2] = { 1, 0 };
	int64_t section = -1;	/* length not given */

	add32(k, PCAPNG_MAGIC);
	add(k, ver, 4);
	add(k, &section, 8);
	opt(k, OPT_SHB_USERAPPL, app, sizeof(app) - 1);
	opt(k, OPT_END, NULL, 0);
	put(f, PCAPNG_SHB, k);
	for (uint32_t i = 0; i < p->nifs; i++) {
		struct emu_node *n = emu_engine_node(p->eng, p->ifs[i].node);
		const struct emu_port *pt = &n->ports[p->ifs[i].port];
		char from[EMU_NAME_MAX + 8], to[EMU_NAME_MAX + 8], name[2 * EMU_NAME_MAX + 20], desc[3 * EMU_NAME_MAX + 80];
		uint16_t lt[2] = { LINKTYPE_ETHERNET, 0 };
		uint8_t resol = 9;	/* 10^-9 s */

		end_name(p->fab, p->ifs[i].node, p->ifs[i].port, from, sizeof(from));
		end_name(p->fab, pt->peer_node, pt->peer_port, to, sizeof(to));
		snprintf(name, sizeof(name), "%s->%s", from, to);
		snprintf(desc, sizeof(desc), "frames leaving %s for %s, captured as their first bit leaves", from, to);
		add(k, lt, 4);
		add32(k, 0);	/* snap length: none */
		opt(k, OPT_IF_NAME, name, strlen(name));
		opt(k, OPT_IF_DESCRIPTION, desc, strlen(desc));
		opt(k, OPT_IF_TSRESOL, &resol, 1);
		opt(k, OPT_END, NULL, 0);
		put(f, PCAPNG_IDB, k);
	}
}

/* iface_of - the interface id of (@node, @port) (it was tapped: it is there) */
static uint32_t iface_of(const struct emu_pcap *p, uint32_t node, uint16_t port)
{
	uint32_t lo = 0, hi = p->nifs;

	while (lo + 1 < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (p->ifs[mid].node < node || (p->ifs[mid].node == node && p->ifs[mid].port <= port))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static void write_frame(const struct emu_pcap *p, FILE *f, struct block *k, const struct rec *r)
{
	uint64_t ns = r->t / EMU_NS;

	add32(k, iface_of(p, r->node, r->port));
	add32(k, (uint32_t)(ns >> 32));
	add32(k, (uint32_t)ns);
	add32(k, r->len);
	add32(k, r->len);
	add(k, r->data, r->len);
	put(f, PCAPNG_EPB, k);
}

int emu_pcap_close(struct emu_pcap *p, char *err, size_t errlen)
{
	if (!p)
		return 0;
	size_t total = 0;
	int rc = 0;
	FILE *fp;

	for (unsigned i = 0; i < p->nw; i++)
		total += p->w[i].n;
	struct rec *all = emu_xmalloc((total + 1) * sizeof(*all));
	size_t k = 0;

	for (unsigned i = 0; i < p->nw; i++) {
		if (p->w[i].n)
			memcpy(all + k, p->w[i].r, p->w[i].n * sizeof(*all));
		k += p->w[i].n;
		free(p->w[i].r);
	}
	if (total)
		qsort(all, total, sizeof(*all), rec_cmp);
	fp = fopen(p->path, "wb");
	if (!fp) {
		snprintf(err, errlen, "--pcap: cannot write '%s': %s", p->path, strerror(errno));
		rc = -1;
	}
	struct block blk = { 0 };

	if (fp)
		write_header(p, fp, &blk);
	for (size_t i = 0; i < total; i++) {
		if (fp)
			write_frame(p, fp, &blk, &all[i]);
		free(all[i].data);
	}
	free(blk.b);
	errno = 0;
	if (fp && (fflush(fp) || ferror(fp))) {
		snprintf(err, errlen, "--pcap: writing '%s' failed: %s", p->path, errno ? strerror(errno) : "write error");
		rc = -1;
	}
	if (fp && fclose(fp) && !rc) {
		snprintf(err, errlen, "--pcap: writing '%s' failed: %s", p->path, strerror(errno));
		rc = -1;
	}
	free(all);
	free(p->w);
	free(p->ifs);
	free(p->path);
	free(p);
	return rc;
}
