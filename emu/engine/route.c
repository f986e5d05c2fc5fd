// SPDX-License-Identifier: MIT
/*
 * DOC: route.c - all-pairs shortest paths between switches by one BFS per
 * destination switch (O(switches x links)); a host is routed through its
 * attachment switch. See route.h.
 */
#include "emu/engine/route.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emu/engine/fabric.h"
#include "emu/engine/util.h"

struct emu_routes *emu_routes_compute(const struct emu_fabric *fab, const uint8_t *link_up,
				      const uint8_t *node_up, uint64_t version)
{
	struct emu_routes *r = emu_xcalloc(1, sizeof(*r));
	uint32_t nsw = fab->nswitches;

	r->nsw = nsw;
	r->version = version;
	r->mask = emu_xcalloc((size_t)nsw * nsw + 1, sizeof(uint64_t));
	r->link_up = emu_xmalloc(fab->nlinks + 1);
	r->node_up = emu_xmalloc(fab->nnodes + 1);
	if (link_up)
		memcpy(r->link_up, link_up, fab->nlinks);
	else
		memset(r->link_up, 1, fab->nlinks);
	if (node_up)
		memcpy(r->node_up, node_up, fab->nnodes);
	else
		memset(r->node_up, 1, fab->nnodes);

	uint32_t *dist = emu_xmalloc((nsw + 1) * sizeof(uint32_t));
	uint32_t *queue = emu_xmalloc((nsw + 1) * sizeof(uint32_t));

	for (uint32_t d = 0; d < nsw; d++) {
		uint32_t dnode = fab->switches[d];
		uint32_t qh = 0, qt = 0;

		for (uint32_t i = 0; i < nsw; i++)
			dist[i] = UINT32_MAX;
		if (!r->node_up[dnode])
			continue;
		dist[d] = 0;
		queue[qt++] = d;
		while (qh < qt) {
			uint32_t v = queue[qh++];
			const struct emu_fab_node *n = &fab->nodes[fab->switches[v]];

			for (uint32_t p = 0; p < n->nports; p++) {
				const struct emu_fab_port *fp = &fab->ports[n->port0 + p];

				if (fp->link == EMU_NONE32 || !r->link_up[fp->link])
					continue;
				const struct emu_fab_node *m = &fab->nodes[fp->peer_node];

				if (m->kind != EMU_NODE_SWITCH || !r->node_up[fp->peer_node] || dist[m->index] != UINT32_MAX)
					continue;
				dist[m->index] = dist[v] + 1;
				queue[qt++] = m->index;
			}
		}
		for (uint32_t s = 0; s < nsw; s++) {
			if (s == d || dist[s] == UINT32_MAX)
				continue;
			const struct emu_fab_node *n = &fab->nodes[fab->switches[s]];
			uint64_t m = 0;

			for (uint32_t p = 0; p < n->nports; p++) {
				const struct emu_fab_port *fp = &fab->ports[n->port0 + p];

				if (fp->link == EMU_NONE32 || !r->link_up[fp->link])
					continue;
				const struct emu_fab_node *peer = &fab->nodes[fp->peer_node];

				if (peer->kind == EMU_NODE_SWITCH && dist[peer->index] + 1 == dist[s])
					m |= 1ULL << p;
			}
			r->mask[(size_t)s * nsw + d] = m;
		}
	}
	free(dist);
	free(queue);
	return r;
}

void emu_routes_destroy(struct emu_routes *r)
{
	if (!r)
		return;
	free(r->mask);
	free(r->link_up);
	free(r->node_up);
	free(r);
}

uint64_t emu_routes_mask_sw(const struct emu_routes *r, const struct emu_fabric *fab, uint32_t sw, uint32_t dst)
{
	return r->mask[(size_t)fab->nodes[sw].index * r->nsw + fab->nodes[dst].index];
}

uint64_t emu_routes_mask(const struct emu_routes *r, const struct emu_fabric *fab, uint32_t sw, uint32_t dst_host)
{
	uint32_t att = fab->attach_node[dst_host];

	if (att == sw)
		return 1ULL << fab->attach_port[dst_host];
	return emu_routes_mask_sw(r, fab, sw, att);
}

int emu_routing_parse(const char *s, enum emu_routing *out)
{
	if (!strcmp(s, "adaptive"))
		*out = EMU_ROUTE_ADAPTIVE;
	else if (!strcmp(s, "ecmp"))
		*out = EMU_ROUTE_ECMP;
	else if (!strcmp(s, "leastloaded"))
		*out = EMU_ROUTE_LEASTLOADED;
	else
		return -EINVAL;
	return 0;
}

const char *emu_routing_name(enum emu_routing r)
{
	switch (r) {
	case EMU_ROUTE_ADAPTIVE: return "adaptive";
	case EMU_ROUTE_ECMP: return "ecmp";
	case EMU_ROUTE_LEASTLOADED: return "leastloaded";
	}
	return "?";
}
