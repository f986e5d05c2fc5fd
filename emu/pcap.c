// SPDX-License-Identifier: MIT
/*
 * DOC: pcap.c - per-worker capture buffers, spilled to disk in sorted
 * chunks when full, merged into a pcapng file that replaces the target
 * at the end. See pcap.h.
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
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emu/engine/engine.h"
#include "emu/engine/util.h"

/* a captured frame: its sort key and where its bytes are (offset in the worker's arena) */
struct rec {
	emu_time_t t;
	uint32_t node;
	uint16_t port;
	uint16_t len;
	uint64_t seq;
	uint64_t off;
};

/* a spilled chunk: sorted records, each REC_HDR bytes of key then its bytes, at [off, off + bytes) of the spill file */
struct chunk {
	uint64_t off, bytes;
};

#define REC_HDR 24	/* t 8, node 4, port 2, len 2, seq 8 */

struct wbuf {
	struct rec *r;
	size_t n, cap;
	uint8_t *arena;		/* the frames' bytes */
	size_t used, acap;
	uint64_t seq;
	struct chunk *ch;	/* spilled, in order */
	size_t nch, chcap;
	int err;		/* a spill failed: errno; nothing more is captured */
	char pad[EMU_CACHELINE];
};

/* a tapped port: an interface of the file */
struct iface {
	uint32_t node;
	uint16_t port;
};

struct emu_pcap {
	char *path;		/* the file asked for */
	char *dir;		/* its directory: the temporary files go there */
	bool direct;		/* not a regular file (a device, a pipe): written in place */
	FILE *out;		/* direct: the target, open from the start */
	int spill;		/* the spill file (unlinked), -1 until the first spill */
	int spill_err;		/* it could not be created: errno */
	_Atomic uint64_t spill_end;
	pthread_mutex_t spill_lock;	/* creating the spill file */
	size_t chunk_bytes;	/* a worker's buffer: records and bytes */
	unsigned nw;
	struct wbuf *w;
	const struct emu_fabric *fab;
	struct emu_engine *eng;
	struct iface *ifs;		/* in (node, port) order: the interface id is the index */
	uint32_t nifs;
};

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

/*
 * anon_file - an unnamed file in @dir open for writing (and reading):
 * O_TMPFILE, else a named one removed at once. Nothing is left behind
 * when the process dies. Return the descriptor or negative errno.
 */
static int anon_file(const char *dir)
{
#ifdef O_TMPFILE
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);

	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd >= 0 ? fd : -errno;
#endif
	size_t len = strlen(dir) + 32;
	char *name = emu_xmalloc(len);

	snprintf(name, len, "%s/.canary-pcap.XXXXXX", dir);
	int fd2 = mkstemp(name);
	int e = errno;

	if (fd2 >= 0)
		unlink(name);
	free(name);
	return fd2 >= 0 ? fd2 : -e;
}

/* spill_fd - the spill file, created on the first spill (in the file's directory, or the temporary one for a device) */
static int spill_fd(struct emu_pcap *p)
{
	int fd;

	pthread_mutex_lock(&p->spill_lock);
	if (p->spill < 0 && !p->spill_err) {
		fd = anon_file(p->direct ? (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp") : p->dir);
		if (fd >= 0)
			p->spill = fd;
		else
			p->spill_err = -fd;
	}
	fd = p->spill >= 0 ? p->spill : -p->spill_err;
	pthread_mutex_unlock(&p->spill_lock);
	return fd;
}

/* spill - sort @b's records and append them to the spill file as one chunk; the buffer is then empty */
static void spill(struct emu_pcap *p, struct wbuf *b)
{
	uint64_t bytes = (uint64_t)b->n * REC_HDR + b->used;
	int fd = spill_fd(p);
	uint8_t *stage = NULL;
	size_t cap = 256 * 1024, fill = 0;

	if (fd < 0) {
		b->err = -fd;
		goto out;
	}
	uint64_t off = atomic_fetch_add(&p->spill_end, bytes), at = off;

	qsort(b->r, b->n, sizeof(*b->r), rec_cmp);
	stage = emu_xmalloc(cap);
	for (size_t i = 0; i <= b->n; i++) {
		const struct rec *r = i < b->n ? &b->r[i] : NULL;

		if (fill && (!r || fill + REC_HDR + r->len > cap)) {
			for (size_t done = 0; done < fill;) {
				ssize_t k = pwrite(fd, stage + done, fill - done, (off_t)(at + done));

				if (k <= 0) {
					b->err = k < 0 ? errno : ENOSPC;
					goto out;
				}
				done += (size_t)k;
			}
			at += fill;
			fill = 0;
		}
		if (!r)
			break;
		memcpy(stage + fill, &r->t, 8);
		memcpy(stage + fill + 8, &r->node, 4);
		memcpy(stage + fill + 12, &r->port, 2);
		memcpy(stage + fill + 14, &r->len, 2);
		memcpy(stage + fill + 16, &r->seq, 8);
		memcpy(stage + fill + REC_HDR, b->arena + r->off, r->len);
		fill += REC_HDR + r->len;
	}
	if (b->nch == b->chcap) {
		b->chcap = b->chcap ? 2 * b->chcap : 16;
		b->ch = emu_xrealloc(b->ch, b->chcap * sizeof(*b->ch));
	}
	b->ch[b->nch++] = (struct chunk){ .off = off, .bytes = bytes };
out:
	free(stage);
	b->n = 0;
	b->used = 0;
}

static void tap(void *ctx, unsigned worker, uint32_t node, unsigned port, const struct emu_frame *f, emu_time_t t)
{
	struct emu_pcap *p = ctx;
	struct wbuf *b = &p->w[worker];
	size_t len = f->len;

	if (b->err)
		return;
	if (b->n && (b->n + 1) * sizeof(*b->r) + b->used + len > p->chunk_bytes) {
		spill(p, b);
		if (b->err)
			return;
	}
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 1024;
		b->r = emu_xrealloc(b->r, b->cap * sizeof(*b->r));
	}
	if (b->used + len > b->acap) {
		size_t want = 2 * (b->used + len) > 65536 ? 2 * (b->used + len) : 65536;

		if (want > p->chunk_bytes)
			want = b->used + len > p->chunk_bytes ? b->used + len : p->chunk_bytes;
		b->acap = want;
		b->arena = emu_xrealloc(b->arena, b->acap);
	}
	struct rec *r = &b->r[b->n++];

	r->t = t;
	r->node = node;
	r->port = (uint16_t)port;
	r->len = (uint16_t)len;
	r->seq = b->seq++;
	r->off = b->used;
	memset(b->arena + b->used, 0, len);
	memcpy(b->arena + b->used, f->data, emu_frame_bytes(f));	/* padding that is not kept reads as zeros */
	b->used += len;
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

/*
 * target - where the file goes: a regular file (or none yet) is written
 * beside it and renamed over it at the end, so that @path keeps its old
 * content until then; anything else (a device, a pipe) is opened now and
 * written in place. 0, or -errno said in @err.
 */
static int target(struct emu_pcap *p, const char *path, char *err, size_t errlen)
{
	struct stat st;
	int e;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		p->direct = true;
		p->out = fopen(path, "wb");
		if (p->out)
			return 0;
		e = errno;
		goto fail;
	}
	if (access(path, F_OK) == 0 && access(path, W_OK)) {
		e = errno;
		goto fail;
	}
	char *real = realpath(path, NULL);	/* a link is followed: the file it names is replaced */
	const char *name = real ? real : path;
	const char *slash = strrchr(name, '/');

	p->dir = slash ? strndup(name, slash == name ? 1 : (size_t)(slash - name)) : strdup(".");
	if (real) {
		free(p->path);
		p->path = real;
	}
	int fd = anon_file(p->dir);	/* the directory takes new files: the rename will work */

	if (fd < 0) {
		e = -fd;
		goto fail;
	}
	p->out = fdopen(fd, "w+b");
	if (p->out)
		return 0;
	e = errno;
	close(fd);
fail:
	snprintf(err, errlen, "--pcap: cannot write '%s': %s", path, strerror(e));
	return -e;
}

struct emu_pcap *emu_pcap_open(struct emu_engine *eng, const char *path, const char *links, char *err,
			       size_t errlen)
{
	const struct emu_fabric *fab = emu_engine_fabric(eng);
	struct emu_pcap *p = emu_xcalloc(1, sizeof(*p));

	p->path = strdup(path);
	p->spill = -1;
	pthread_mutex_init(&p->spill_lock, NULL);
	if (!p->path || target(p, path, err, errlen))
		goto fail;
	if (!links || !strcmp(links, "all")) {
		for (uint32_t i = 0; i < fab->nlinks; i++)
			tap_link(eng, fab->links[i].node[0], (unsigned)fab->links[i].port[0]);
	} else if (tap_list(eng, links, err, errlen)) {
		goto fail;
	}
	p->fab = fab;
	p->eng = eng;
	p->nw = emu_engine_workers(eng);
	p->w = emu_xcalloc(p->nw, sizeof(*p->w));
	p->chunk_bytes = EMU_PCAP_MEM / p->nw > (1u << 20) ? EMU_PCAP_MEM / p->nw : (1u << 20);
	list_ifaces(p);
	emu_engine_set_tap(eng, tap, p);
	return p;
fail:
	emu_pcap_close(p, false, NULL, 0);
	return NULL;
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

static void write_frame(const struct emu_pcap *p, FILE *f, struct block *k, const struct rec *r, const uint8_t *data)
{
	uint64_t ns = r->t / EMU_NS;

	add32(k, iface_of(p, r->node, r->port));
	add32(k, (uint32_t)(ns >> 32));
	add32(k, (uint32_t)ns);
	add32(k, r->len);
	add32(k, r->len);
	add(k, data, r->len);
	put(f, PCAPNG_EPB, k);
}

/* ---- the merge: one cursor per spilled chunk and per worker's records still in memory ---- */

#define CUR_BUF (128 * 1024)	/* a spilled chunk's read buffer: holds the largest record (REC_HDR + 65535) */

struct cursor {
	struct rec h;			/* the head record */
	const uint8_t *data;		/* its bytes */
	const struct wbuf *b;		/* in memory: the worker's sorted records */
	size_t i;
	int fd;				/* spilled: read from [off, end) through buf */
	uint64_t off, end;
	uint8_t *buf;
	size_t pos, fill;
};

/* cur_next - advance @c to its next record: 1, 0 at the end, negative errno when the spill file cannot be read */
static int cur_next(struct cursor *c)
{
	if (c->b) {
		if (c->i == c->b->n)
			return 0;
		c->h = c->b->r[c->i++];
		c->data = c->b->arena + c->h.off;
		return 1;
	}
	for (int pass = 0; pass < 2; pass++) {
		size_t have = c->fill - c->pos;

		if (have >= REC_HDR) {
			uint16_t len;

			memcpy(&len, c->buf + c->pos + 14, 2);
			if (have >= REC_HDR + (size_t)len) {
				const uint8_t *q = c->buf + c->pos;

				memcpy(&c->h.t, q, 8);
				memcpy(&c->h.node, q + 8, 4);
				memcpy(&c->h.port, q + 12, 2);
				c->h.len = len;
				memcpy(&c->h.seq, q + 16, 8);
				c->data = q + REC_HDR;
				c->pos += REC_HDR + len;
				return 1;
			}
		}
		if (pass || (!have && c->off == c->end))
			break;
		memmove(c->buf, c->buf + c->pos, have);	/* refill behind what is left */
		c->pos = 0;
		c->fill = have;
		while (c->fill < CUR_BUF && c->off < c->end) {
			size_t want = CUR_BUF - c->fill < c->end - c->off ? CUR_BUF - c->fill : (size_t)(c->end - c->off);
			ssize_t k = pread(c->fd, c->buf + c->fill, want, (off_t)c->off);

			if (k <= 0)
				return k < 0 ? -errno : -EIO;
			c->fill += (size_t)k;
			c->off += (uint64_t)k;
		}
	}
	return c->fill == c->pos && c->off == c->end ? 0 : -EIO;	/* a record cut short */
}

static bool cur_less(const struct cursor *a, const struct cursor *b)
{
	return rec_cmp(&a->h, &b->h) < 0;
}

static void sift_down(struct cursor **h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && cur_less(h[l], h[m]))
			m = l;
		if (l + 1 < n && cur_less(h[l + 1], h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct cursor *x = h[i];

		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

/*
 * merge - write the header and every record, in (time, node, port, order)
 * order, to p->out. 0 or negative errno (the spill could not be read).
 */
static int merge(struct emu_pcap *p)
{
	size_t nc = 0, k = 0;
	int rc = 0;
	struct block blk = { 0 };

	for (unsigned i = 0; i < p->nw; i++)
		nc += p->w[i].nch + 1;
	struct cursor *cs = emu_xcalloc(nc, sizeof(*cs));
	struct cursor **heap = emu_xcalloc(nc, sizeof(*heap));

	for (unsigned i = 0; i < p->nw; i++) {
		struct wbuf *b = &p->w[i];

		qsort(b->r, b->n, sizeof(*b->r), rec_cmp);
		cs[k++] = (struct cursor){ .b = b };
		for (size_t j = 0; j < b->nch; j++)
			cs[k++] = (struct cursor){ .fd = p->spill, .off = b->ch[j].off,
						   .end = b->ch[j].off + b->ch[j].bytes };
	}
	size_t n = 0;

	for (size_t i = 0; i < nc; i++) {
		if (!cs[i].b)
			cs[i].buf = emu_xmalloc(CUR_BUF);
		int r = cur_next(&cs[i]);

		if (r < 0 && !rc)
			rc = r;
		if (r > 0)
			heap[n++] = &cs[i];
	}
	for (size_t i = n; i-- > 0;)
		sift_down(heap, n, i);
	write_header(p, p->out, &blk);
	while (n && !rc) {
		write_frame(p, p->out, &blk, &heap[0]->h, heap[0]->data);
		if (ferror(p->out)) {
			rc = errno ? -errno : -EIO;	/* a full disk: stop here */
			break;
		}
		int r = cur_next(heap[0]);

		if (r < 0)
			rc = r;
		if (r <= 0)
			heap[0] = heap[--n];
		sift_down(heap, n, 0);
	}
	for (size_t i = 0; i < nc; i++)
		free(cs[i].buf);
	free(cs);
	free(heap);
	free(blk.b);
	return rc;
}

/*
 * commit - give the written file its name: link the unnamed file under a
 * temporary name beside the target, then rename it over the target (an
 * existing file is replaced whole or not at all). 0 or -errno.
 */
static int commit(struct emu_pcap *p)
{
	int fd = fileno(p->out);
	size_t len = strlen(p->path) + 32;
	char *tmp = emu_xmalloc(len), proc[64];
	int rc = 0, t;
	mode_t um = umask(0);

	umask(um);
	snprintf(tmp, len, "%s.XXXXXX", p->path);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (fchmod(fd, 0666 & ~um)) {
		rc = -errno;
		goto out;
	}
	/* a free temporary name: mkstemp picks it, the link takes its place */
	t = mkstemp(tmp);
	if (t < 0) {
		rc = -errno;
		goto out;
	}
	close(t);
	unlink(tmp);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW)) {
		rc = -errno;
		goto out;
	}
	if (rename(tmp, p->path)) {
		rc = -errno;
		unlink(tmp);
	}
out:
	free(tmp);
	return rc;
}

int emu_pcap_close(struct emu_pcap *p, bool keep, char *err, size_t errlen)
{
	if (!p)
		return 0;
	int rc = 0;
	const char *what = "writing";

	for (unsigned i = 0; p->w && i < p->nw && !rc; i++)
		if (p->w[i].err) {
			rc = -p->w[i].err;
			what = "spilling frames beside";
		}
	if (keep && p->out && !rc) {
		rc = merge(p);
		if (rc)
			what = ferror(p->out) ? "writing" : "reading back the frames spilled beside";
	}
	errno = 0;
	if (keep && p->out && !rc && (fflush(p->out) || ferror(p->out)))
		rc = errno ? -errno : -EIO;
	if (keep && p->out && !rc && !p->direct) {
		rc = commit(p);
		what = "naming";
	}
	if (p->out && fclose(p->out) && keep && !rc) {
		rc = -errno;
		what = "writing";
	}
	if (rc && keep && err)
		snprintf(err, errlen, "--pcap: %s '%s' failed: %s", what, p->path, strerror(-rc));
	if (p->spill >= 0)
		close(p->spill);
	for (unsigned i = 0; p->w && i < p->nw; i++) {
		free(p->w[i].r);
		free(p->w[i].arena);
		free(p->w[i].ch);
	}
	pthread_mutex_destroy(&p->spill_lock);
	free(p->w);
	free(p->ifs);
	free(p->dir);
	free(p->path);
	free(p);
	return rc;
}
