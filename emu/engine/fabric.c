// SPDX-License-Identifier: MIT
/*
 * DOC: fabric.c - building and validating fabric descriptions.
 *
 * Hosts get 10.0.0.0/8 addresses in host-index order starting at 10.0.0.1
 * and locally administered MACs 02:00:xx:xx:xx:xx; switches get MACs
 * 02:01:... and a 16-bit address equal to their switch index.
 */
#include "emu/engine/fabric.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/engine/event.h"
#include "emu/engine/frame.h"
#include "emu/engine/util.h"

_Static_assert(EMU_MTU_MAX + 14 == EMU_FRAME_MAX, "the largest MTU fills the largest frame");


struct emu_fabric *emu_fabric_create(void)
{
	struct emu_fabric *fab = emu_xcalloc(1, sizeof(*fab));

	fab->min_latency = EMU_TIME_INF;
	return fab;
}

void emu_fabric_destroy(struct emu_fabric *fab)
{
	if (!fab)
		return;
	free(fab->nodes);
	free(fab->links);
	free(fab->ports);
	free(fab->hosts);
	free(fab->switches);
	free(fab->attach_node);
	free(fab->attach_port);
	free(fab->attach_route);
	free(fab);
}

uint32_t emu_fabric_add_node(struct emu_fabric *fab, enum emu_node_kind kind, const char *name)
{
	if (fab->nnodes == fab->cap_nodes) {
		fab->cap_nodes = fab->cap_nodes ? 2 * fab->cap_nodes : 64;
		fab->nodes = emu_xrealloc(fab->nodes, fab->cap_nodes * sizeof(*fab->nodes));
	}
	uint32_t id = fab->nnodes++;
	struct emu_fab_node *n = &fab->nodes[id];

	memset(n, 0, sizeof(*n));
	n->kind = kind;
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->group = id;
	n->level = kind == EMU_NODE_HOST ? 0 : 1;
	return id;
}

uint32_t emu_fabric_add_link(struct emu_fabric *fab, uint32_t a, int pa, uint32_t b, int pb,
			     uint64_t rate_bps, emu_time_t latency)
{
	if (fab->nlinks == fab->cap_links) {
		fab->cap_links = fab->cap_links ? 2 * fab->cap_links : 64;
		fab->links = emu_xrealloc(fab->links, fab->cap_links * sizeof(*fab->links));
	}
	uint32_t id = fab->nlinks++;
	struct emu_fab_link *l = &fab->links[id];

	memset(l, 0, sizeof(*l));
	l->node[0] = a;
	l->node[1] = b;
	l->port[0] = pa;
	l->port[1] = pb;
	l->rate_bps[0] = l->rate_bps[1] = rate_bps;
	l->latency[0] = l->latency[1] = latency;
	l->mtu = EMU_DEFAULT_MTU;
	return id;
}

uint32_t emu_fabric_find(const struct emu_fabric *fab, const char *name)
{
	for (uint32_t i = 0; i < fab->nnodes; i++)
		if (!strcmp(fab->nodes[i].name, name))
			return i;
	return EMU_NONE32;
}

uint32_t emu_fabric_host_by_ip(const struct emu_fabric *fab, uint32_t ip)
{
	uint32_t idx = ip - EMU_HOST_IP_BASE;

	return idx < fab->nhosts ? idx : EMU_NONE32;
}

const char *emu_ipv4_str(uint32_t ip, char *buf)
{
	snprintf(buf, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
	return buf;
}

__attribute__((format(printf, 4, 5)))
static int fail(char *err, size_t errlen, uint32_t line, const char *fmt, ...)
{
	va_list ap;
	size_t off = 0;

	if (!err || !errlen)
		return -EINVAL;
	if (line)
		off = (size_t)snprintf(err, errlen, "line %u: ", line);
	if (off < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + off, errlen - off, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static uint32_t link_line(const struct emu_fab_link *l)
{
	return l->line;
}

/* 1. check every link and give links without a port number the next free one */
static int check_links(struct emu_fabric *fab, char *err, size_t errlen)
{
	uint32_t nn = fab->nnodes;
	uint32_t *nextfree = emu_xcalloc(nn, sizeof(*nextfree));
	int rc = 0;

	for (uint32_t i = 0; i < fab->nlinks && !rc; i++) {
		struct emu_fab_link *l = &fab->links[i];

		for (int s = 0; s < 2; s++) {
			if (l->node[s] >= nn) {
				rc = fail(err, errlen, link_line(l), "link %u names no node", i);
				goto out;
			}
			if (l->port[s] >= 0 && (uint32_t)l->port[s] + 1 > nextfree[l->node[s]])
				nextfree[l->node[s]] = (uint32_t)l->port[s] + 1;
		}
		const char *a = fab->nodes[l->node[0]].name, *b = fab->nodes[l->node[1]].name;

		if (l->node[0] == l->node[1]) {
			rc = fail(err, errlen, link_line(l), "%s is linked to itself", a);
			goto out;
		}
		for (int s = 0; s < 2 && !rc; s++) {
			if (l->rate_bps[s] == 0)
				rc = fail(err, errlen, link_line(l), "link %s-%s has a rate of zero", a, b);
			else if (l->latency[s] == 0)
				rc = fail(err, errlen, link_line(l),
					  "link %s-%s has a latency of zero (the engine needs lookahead)", a, b);
			else if (l->latency[s] > EMU_LATENCY_MAX)
				rc = fail(err, errlen, link_line(l), "link %s-%s: latency %.3f s is more than 1 s", a, b,
					  (double)l->latency[s] / EMU_S);
			else if (l->loss[s] < 0 || l->loss[s] > 1)
				rc = fail(err, errlen, link_line(l), "link %s-%s: loss probability %g is not in [0, 1]",
					  a, b, l->loss[s]);
		}
		if (!rc && (l->mtu < EMU_MTU_MIN || l->mtu > EMU_MTU_MAX))
			rc = fail(err, errlen, link_line(l), "link %s-%s: MTU %u is not in [%u, %u]", a, b, l->mtu,
				  EMU_MTU_MIN, EMU_MTU_MAX);
		for (int s = 0; s < 2 && !rc; s++)
			if (l->rate_bps[s] > EMU_RATE_MAX_BPS || l->rate_bps[s] < EMU_RATE_MIN_BPS)
				rc = fail(err, errlen, link_line(l), "link %s-%s: rate %llu bps is not in " EMU_RATE_RANGE,
					  a, b, (unsigned long long)l->rate_bps[s]);
	}
	if (!rc)
		for (uint32_t i = 0; i < fab->nlinks; i++)
			for (int s = 0; s < 2; s++)
				if (fab->links[i].port[s] < 0)
					fab->links[i].port[s] = (int32_t)nextfree[fab->links[i].node[s]]++;
out:
	free(nextfree);
	return rc;
}

/* 2. lay out the port table: node by node, each node's ports 0..max used */
static int layout_ports(struct emu_fabric *fab, char *err, size_t errlen)
{
	uint32_t nn = fab->nnodes, total = 0;
	uint32_t *maxport = emu_xcalloc(nn, sizeof(*maxport));
	int rc = 0;

	for (uint32_t i = 0; i < fab->nlinks; i++)
		for (int s = 0; s < 2; s++)
			if ((uint32_t)fab->links[i].port[s] + 1 > maxport[fab->links[i].node[s]])
				maxport[fab->links[i].node[s]] = (uint32_t)fab->links[i].port[s] + 1;
	for (uint32_t i = 0; i < nn; i++) {
		struct emu_fab_node *n = &fab->nodes[i];

		if (maxport[i] > 0xfffe) {
			rc = fail(err, errlen, n->line, "%s has too many ports", n->name);
			goto out;
		}
		if (n->kind == EMU_NODE_SWITCH && maxport[i] > EMU_SWITCH_PORTS_MAX) {
			rc = fail(err, errlen, n->line, "switch %s has %u ports; at most %u are supported",
				  n->name, maxport[i], EMU_SWITCH_PORTS_MAX);
			goto out;
		}
		n->port0 = total;
		n->nports = (uint16_t)maxport[i];
		total += maxport[i];
	}
	free(fab->ports);
	fab->ports = emu_xmalloc((total ? total : 1) * sizeof(*fab->ports));
	fab->nports = total;
	for (uint32_t i = 0; i < total; i++)
		fab->ports[i].link = EMU_NONE32;
	fab->min_latency = EMU_TIME_INF;
	for (uint32_t i = 0; i < fab->nlinks; i++) {
		struct emu_fab_link *l = &fab->links[i];

		for (int s = 0; s < 2; s++) {
			struct emu_fab_port *p = &fab->ports[fab->nodes[l->node[s]].port0 + (uint32_t)l->port[s]];

			if (p->link != EMU_NONE32) {
				rc = fail(err, errlen, link_line(l), "port %d of %s is used twice",
					  l->port[s], fab->nodes[l->node[s]].name);
				goto out;
			}
			p->link = i;
			p->side = (uint8_t)s;
			p->peer_node = l->node[!s];
			p->peer_port = (uint16_t)l->port[!s];
			if (l->latency[s] < fab->min_latency)
				fab->min_latency = l->latency[s];
		}
	}
out:
	free(maxport);
	return rc;
}

/* host number @h: index, address, and the switch port it hangs off */
static int index_host(struct emu_fabric *fab, struct emu_fab_node *n, uint32_t i, uint32_t h, char *err,
		      size_t errlen)
{
	uint32_t links = 0;

	n->index = h;
	fab->hosts[h] = i;
	n->ipv4 = emu_host_ipv4(h);
	emu_host_mac(h, n->mac);
	for (uint32_t p = 0; p < n->nports; p++)
		if (fab->ports[n->port0 + p].link != EMU_NONE32)
			links++;
	if (links == 0)
		return fail(err, errlen, n->line, "host %s has no link", n->name);
	if (links > 1 || n->nports != 1)
		return fail(err, errlen, n->line, "host %s has %u links on %u ports; hosts have one port (port 0)",
			    n->name, links, n->nports);
	const struct emu_fab_port *hp = &fab->ports[n->port0];

	if (fab->nodes[hp->peer_node].kind != EMU_NODE_SWITCH)
		return fail(err, errlen, n->line, "host %s is linked to host %s; hosts hang off switches", n->name,
			    fab->nodes[hp->peer_node].name);
	fab->attach_node[h] = hp->peer_node;
	fab->attach_port[h] = hp->peer_port;
	n->group = hp->peer_node;
	return 0;
}

/* 3. hosts and switches: indexes, addresses, attachment */
static int index_nodes(struct emu_fabric *fab, char *err, size_t errlen)
{
	uint32_t nn = fab->nnodes, h = 0, s = 0;

	fab->nhosts = fab->nswitches = 0;
	for (uint32_t i = 0; i < nn; i++)
		if (fab->nodes[i].kind == EMU_NODE_HOST)
			fab->nhosts++;
		else
			fab->nswitches++;
	free(fab->hosts);
	free(fab->switches);
	free(fab->attach_node);
	free(fab->attach_port);
	free(fab->attach_route);
	fab->hosts = emu_xcalloc(fab->nhosts + 1, sizeof(uint32_t));
	fab->switches = emu_xcalloc(fab->nswitches + 1, sizeof(uint32_t));
	fab->attach_node = emu_xcalloc(fab->nhosts + 1, sizeof(uint32_t));
	fab->attach_port = emu_xcalloc(fab->nhosts + 1, sizeof(uint16_t));
	fab->attach_route = emu_xcalloc(fab->nhosts + 1, sizeof(uint32_t));
	if (fab->nswitches > 0xffff)
		return fail(err, errlen, 0, "too many switches (%u; switch addresses are 16 bits)", fab->nswitches);
	for (uint32_t i = 0; i < nn; i++) {
		struct emu_fab_node *n = &fab->nodes[i];

		if (n->kind == EMU_NODE_HOST) {
			int rc = index_host(fab, n, i, h++, err, errlen);

			if (rc)
				return rc;
		} else {
			n->index = s;
			n->swaddr = (uint16_t)s;
			fab->switches[s] = i;
			n->mac[0] = 0x02;
			n->mac[1] = 0x01;
			n->mac[4] = (uint8_t)(s >> 8);
			n->mac[5] = (uint8_t)s;
			s++;
		}
	}
	if (fab->nhosts == 0)
		return fail(err, errlen, 0, "the fabric has no hosts");
	for (uint32_t i = 0; i < fab->nhosts; i++)
		fab->attach_route[i] = fab->nodes[fab->attach_node[i]].index << 16 | fab->attach_port[i];
	return 0;
}

/* 4. every node reachable from node 0? */
static int check_connected(const struct emu_fabric *fab, char *err, size_t errlen)
{
	uint32_t nn = fab->nnodes;
	uint32_t *stack = emu_xmalloc(nn * sizeof(*stack));
	uint8_t *seen = emu_xcalloc(nn, 1);
	uint32_t sp = 0, reached = 1;
	int rc = 0;

	stack[sp++] = 0;
	seen[0] = 1;
	while (sp) {
		uint32_t v = stack[--sp];
		const struct emu_fab_node *n = &fab->nodes[v];

		for (uint32_t p = 0; p < n->nports; p++) {
			const struct emu_fab_port *fp = &fab->ports[n->port0 + p];

			if (fp->link == EMU_NONE32 || seen[fp->peer_node])
				continue;
			seen[fp->peer_node] = 1;
			reached++;
			stack[sp++] = fp->peer_node;
		}
	}
	if (reached != nn) {
		uint32_t lost = 0;

		while (seen[lost])
			lost++;
		rc = fail(err, errlen, fab->nodes[lost].line, "the fabric is not connected: %s cannot reach %s",
			  fab->nodes[0].name, fab->nodes[lost].name);
	}
	free(stack);
	free(seen);
	return rc;
}

int emu_fabric_finalize(struct emu_fabric *fab, char *err, size_t errlen)
{
	int rc;

	if (fab->finalized)
		return 0;
	if (fab->nnodes == 0)
		return fail(err, errlen, 0, "the fabric has no nodes");
	if (fab->nnodes >= EMU_SRC_CONTROL)
		return fail(err, errlen, 0, "too many nodes (%u; at most %u)", fab->nnodes, EMU_SRC_CONTROL - 1);
	rc = check_links(fab, err, errlen);
	if (!rc)
		rc = layout_ports(fab, err, errlen);
	if (!rc)
		rc = index_nodes(fab, err, errlen);
	if (!rc)
		rc = check_connected(fab, err, errlen);
	if (!rc)
		fab->finalized = true;
	return rc;
}
