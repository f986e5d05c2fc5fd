/* SPDX-License-Identifier: MIT */
/*
 * DOC: fabric.h - the static description of a fabric: nodes, ports, links.
 *
 * A fabric is built node by node and link by link (by the topology
 * generators in topologies/ or by the topology-file parser), then
 * emu_fabric_finalize() numbers the ports, gives hosts their IPv4 and MAC
 * addresses, and checks everything that would make a run meaningless: a
 * port used twice, a host without a link, a rate or an MTU of zero, a
 * fabric that is not connected. Errors come back as -EINVAL with a message
 * naming the node (and the topology-file line when the link has one).
 *
 * The description is immutable once finalized and shared read-only by every
 * worker; run-time state (queues, credits, link up/down) lives in the engine.
 */
#ifndef EMU_FABRIC_H
#define EMU_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emu/engine/time.h"

enum emu_node_kind {
	EMU_NODE_HOST = 0,
	EMU_NODE_SWITCH = 1,
};

#define EMU_NAME_MAX 32
#define EMU_NONE32 UINT32_MAX
/* Switch port masks (routing) are 64 bits wide. */
#define EMU_SWITCH_PORTS_MAX 64

#define EMU_DEFAULT_RATE_BPS 100000000000ULL
#define EMU_DEFAULT_LATENCY (300 * EMU_NS)
#define EMU_DEFAULT_MTU 1500
/* a link's latency: at most 1 s (emulated times stay far from 2^64 ps) */
#define EMU_LATENCY_MAX EMU_S
/* a link's IP MTU: at least a minimum Ethernet frame, at most EMU_FRAME_MAX with its 14-byte header */
#define EMU_MTU_MIN 64u
#define EMU_MTU_MAX 2034u

/*
 * The hosts' address plan (emu_fabric_finalize): host index @h is
 * 10.0.0.1 + h, its MAC 02:00 and h's four bytes. Computed, not read from
 * the node array, by whoever needs a random host's address per frame.
 */
#define EMU_HOST_IP_BASE 0x0a000001u	/* 10.0.0.1 */

static inline uint32_t emu_host_ipv4(uint32_t h)
{
	return EMU_HOST_IP_BASE + h;
}

static inline void emu_host_mac(uint32_t h, uint8_t mac[6])
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	mac[2] = (uint8_t)(h >> 24);
	mac[3] = (uint8_t)(h >> 16);
	mac[4] = (uint8_t)(h >> 8);
	mac[5] = (uint8_t)h;
}

struct emu_fab_node {
	char name[EMU_NAME_MAX];
	enum emu_node_kind kind;
	uint32_t port0;		/* first port in emu_fabric.ports */
	uint16_t nports;
	uint16_t level;		/* 0 host, 1 leaf/edge, 2 spine/aggregation, 3 core */
	uint32_t group;		/* partition hint; finalize sets hosts' to their switch's */
	uint32_t ipv4;		/* hosts: host order */
	uint8_t mac[6];
	uint16_t swaddr;	/* switches: 16-bit address carried in Canary headers */
	uint32_t index;		/* hosts: host index; switches: switch index */
	uint32_t line;		/* topology-file line that declared it (0: generated) */
};

struct emu_fab_port {
	uint32_t link;		/* EMU_NONE32 for an unconnected port */
	uint32_t peer_node;
	uint16_t peer_port;
	uint8_t side;		/* which end of the link this port is */
};

struct emu_fab_link {
	uint32_t node[2];
	int32_t port[2];	/* -1 before finalize: next free port */
	uint64_t rate_bps[2];	/* direction d: from node[d] to node[!d] */
	emu_time_t latency[2];
	uint32_t mtu;
	double loss[2];		/* injected drop probability per direction */
	uint32_t line;
};

struct emu_fabric {
	struct emu_fab_node *nodes;
	uint32_t nnodes;
	uint32_t cap_nodes;
	struct emu_fab_link *links;
	uint32_t nlinks;
	uint32_t cap_links;
	struct emu_fab_port *ports;	/* after finalize */
	uint32_t nports;
	uint32_t *hosts;		/* host index -> node id */
	uint32_t nhosts;
	uint32_t *switches;		/* switch index -> node id */
	uint32_t nswitches;
	uint32_t *attach_node;		/* host index -> switch node it hangs off */
	uint16_t *attach_port;		/* host index -> port on that switch */
	uint32_t *attach_route;		/* host index -> that switch's index << 16 | attach_port: routing's one load */
	emu_time_t min_latency;
	char spec[128];			/* what built it, for reports */
	bool finalized;
};

struct emu_fabric *emu_fabric_create(void);
/* emu_fabric_destroy - free the fabric. Accepts NULL. */
void emu_fabric_destroy(struct emu_fabric *fab);

/* emu_fabric_add_node - add a node; return its id. Cannot fail. */
uint32_t emu_fabric_add_node(struct emu_fabric *fab, enum emu_node_kind kind, const char *name);

/*
 * emu_fabric_add_link - join port @pa of @a and port @pb of @b (-1: the
 * next free port of that node) with the same rate and latency both ways.
 * Return the link id. Checks happen in emu_fabric_finalize().
 */
uint32_t emu_fabric_add_link(struct emu_fabric *fab, uint32_t a, int pa, uint32_t b, int pb,
			     uint64_t rate_bps, emu_time_t latency);

/* emu_fabric_find - node id by name, or EMU_NONE32. Linear; for parsers and tests. */
uint32_t emu_fabric_find(const struct emu_fabric *fab, const char *name);

/*
 * emu_fabric_finalize - number ports, address hosts, validate.
 * Return 0, or -EINVAL with a one-line reason in @err.
 */
int emu_fabric_finalize(struct emu_fabric *fab, char *err, size_t errlen);

static inline const struct emu_fab_port *emu_fabric_port(const struct emu_fabric *fab, uint32_t node, unsigned port)
{
	return &fab->ports[fab->nodes[node].port0 + port];
}

/* emu_fabric_host_by_ip - host index of IPv4 address @ip, or EMU_NONE32. */
uint32_t emu_fabric_host_by_ip(const struct emu_fabric *fab, uint32_t ip);

/* emu_ipv4_str - dotted quad of @ip (host order) into @buf (>= 16 bytes). */
const char *emu_ipv4_str(uint32_t ip, char *buf);

#endif /* EMU_FABRIC_H */
