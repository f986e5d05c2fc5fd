// SPDX-License-Identifier: MIT
/*
 * DOC: pcap.c - per-worker capture buffers merged into a pcap file.
 * See pcap.h.
 */
#include "emu/pcap.h"

#include <errno.h>
#include <pcap/pcap.h>
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

struct emu_pcap {
	char *path;
	unsigned nw;
	struct wbuf *w;
	pcap_t *pd;
	pcap_dumper_t *dump;
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

struct emu_pcap *emu_pcap_open(struct emu_engine *eng, const char *path, const char *links, char *err,
			       size_t errlen)
{
	const struct emu_fabric *fab = emu_engine_fabric(eng);
	struct emu_pcap *p = emu_xcalloc(1, sizeof(*p));
	FILE *probe = fopen(path, "wb");

	if (!probe) {
		snprintf(err, errlen, "--pcap: cannot write '%s': %s", path, strerror(errno));
		free(p);
		return NULL;
	}
	fclose(probe);
	if (!links || !strcmp(links, "all")) {
		for (uint32_t i = 0; i < fab->nlinks; i++)
			tap_link(eng, fab->links[i].node[0], (unsigned)fab->links[i].port[0]);
	} else {
		char buf[1024], *save = NULL;

		snprintf(buf, sizeof(buf), "%s", links);
		for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			char *slash = strrchr(tok, '/');
			char *end = NULL;
			unsigned long port = slash ? strtoul(slash + 1, &end, 10) : 0;

			if (!slash || !*(slash + 1) || *end) {
				snprintf(err, errlen, "--pcap-link: '%s' is not NODE/PORT (e.g. L0/3)", tok);
				free(p);
				return NULL;
			}
			*slash = '\0';
			uint32_t node = emu_fabric_find(fab, tok);

			if (node == EMU_NONE32 || tap_link(eng, node, (unsigned)port)) {
				snprintf(err, errlen, "--pcap-link: %s has no linked port %lu", tok, port);
				free(p);
				return NULL;
			}
		}
	}
	p->path = strdup(path);
	p->nw = emu_engine_workers(eng);
	p->w = emu_xcalloc(p->nw, sizeof(*p->w));
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
	p->pd = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	fp = p->pd ? fopen(p->path, "wb") : NULL;
	p->dump = fp ? pcap_dump_fopen(p->pd, fp) : NULL;
	if (!p->dump) {
		snprintf(err, errlen, "--pcap: cannot write '%s': %s", p->path, fp ? pcap_geterr(p->pd) : strerror(errno));
		if (fp)
			fclose(fp);
		rc = -1;
	}
	for (size_t i = 0; i < total; i++) {
		if (p->dump) {
			struct pcap_pkthdr h = {
				.caplen = all[i].len,
				.len = all[i].len,
			};

			h.ts.tv_sec = (time_t)(all[i].t / EMU_S);
			/* nanosecond precision: tv_usec holds nanoseconds */
			h.ts.tv_usec = (suseconds_t)((all[i].t % EMU_S) / EMU_NS);
			pcap_dump((u_char *)p->dump, &h, all[i].data);
		}
		free(all[i].data);
	}
	if (p->dump) {
		/* pcap_dump_close() does not say whether the data reached the file */
		if (fflush(fp) || ferror(fp)) {
			snprintf(err, errlen, "--pcap: writing '%s' failed: %s", p->path,
				 errno ? strerror(errno) : "write error");
			rc = -1;
		}
		pcap_dump_close(p->dump);
	}
	if (p->pd)
		pcap_close(p->pd);
	free(all);
	free(p->w);
	free(p->path);
	free(p);
	return rc;
}
