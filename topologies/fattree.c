// SPDX-License-Identifier: MIT
/*
 * DOC: fattree.c - two- and three-level fat-tree generators. See topo.h.
 *
 * Port numbering follows the usual convention of a switch's downward ports
 * first: a leaf's ports 0..H-1 face its hosts, H..H+S-1 its spines; a
 * spine's port i faces leaf i. In fattree3 an edge switch's ports 0..k/2-1
 * face hosts and k/2.. face the aggregation switches of its pod; an
 * aggregation switch's ports 0..k/2-1 face the pod's edges, k/2.. the
 * cores; core c's port p faces pod p.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/engine/fabric.h"
#include "emu/units.h"
#include "topologies/topo.h"

struct params {
	uint64_t leaves, spines, hosts, k;
	uint64_t rate;
	emu_time_t latency;
	uint64_t mtu;
};

int emu_topo_is_spec(const char *s)
{
	return !strncmp(s, "fattree2:", 9) || !strncmp(s, "fattree3:", 9) ||
	       !strcmp(s, "fattree2") || !strcmp(s, "fattree3");
}

static int parse_params(const char *gen, const char *args, struct params *p, char *err, size_t errlen)
{
	char buf[256];
	char *save = NULL;

	if (strlen(args) >= sizeof(buf)) {
		snprintf(err, errlen, "--topology: %s spec too long", gen);
		return -EINVAL;
	}
	strcpy(buf, args);
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		int rc;

		if (!eq) {
			snprintf(err, errlen, "--topology: %s: '%s' is not key=value", gen, kv);
			return -EINVAL;
		}
		*eq = '\0';
		const char *key = kv, *val = eq + 1;

		if (!strcmp(key, "leaves"))
			rc = emu_parse_u64(val, &p->leaves);
		else if (!strcmp(key, "spines"))
			rc = emu_parse_u64(val, &p->spines);
		else if (!strcmp(key, "hosts"))
			rc = emu_parse_u64(val, &p->hosts);
		else if (!strcmp(key, "k"))
			rc = emu_parse_u64(val, &p->k);
		else if (!strcmp(key, "rate"))
			rc = emu_parse_rate(val, &p->rate);
		else if (!strcmp(key, "latency"))
			rc = emu_parse_time(val, &p->latency);
		else if (!strcmp(key, "mtu"))
			rc = emu_parse_u64(val, &p->mtu);
		else {
			snprintf(err, errlen, "--topology: %s has no parameter '%s'", gen, key);
			return -EINVAL;
		}
		if (rc) {
			snprintf(err, errlen, "--topology: %s: bad value '%s' for %s%s", gen, val, key,
				 !strcmp(key, "rate") ? " (a rate with a unit in " EMU_RATE_RANGE ", e.g. 100G)" :
				 !strcmp(key, "latency") ? " (a time with a unit, e.g. 300ns)" : "");
			return -EINVAL;
		}
		if (!strcmp(key, "mtu") && (p->mtu < EMU_MTU_MIN || p->mtu > EMU_MTU_MAX)) {
			snprintf(err, errlen, "--topology: %s: mtu=%s is not in %u..%u", gen, val, EMU_MTU_MIN, EMU_MTU_MAX);
			return -EINVAL;
		}
	}
	return 0;
}

static void set_mtu(struct emu_fabric *fab, uint64_t mtu)
{
	for (uint32_t i = 0; i < fab->nlinks; i++)
		fab->links[i].mtu = (uint32_t)mtu;
}

static struct emu_fabric *fattree2(const struct params *p, char *err, size_t errlen)
{
	char name[EMU_NAME_MAX];

	if (p->leaves < 1 || p->spines < 1 || p->hosts < 1 || p->leaves > 4096 || p->spines > 4096 || p->hosts > 4096) {
		snprintf(err, errlen, "--topology: fattree2 needs 1 <= leaves, spines, hosts <= 4096");
		return NULL;
	}
	if (p->hosts + p->spines > EMU_SWITCH_PORTS_MAX || p->leaves > EMU_SWITCH_PORTS_MAX) {
		snprintf(err, errlen, "--topology: fattree2: a leaf needs hosts+spines = %llu ports, a spine %llu; at most %d",
			 (unsigned long long)(p->hosts + p->spines), (unsigned long long)p->leaves, EMU_SWITCH_PORTS_MAX);
		return NULL;
	}
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t L = (uint32_t)p->leaves, S = (uint32_t)p->spines, H = (uint32_t)p->hosts;

	for (uint32_t l = 0; l < L; l++) {
		snprintf(name, sizeof(name), "L%u", l);
		uint32_t id = emu_fabric_add_node(fab, EMU_NODE_SWITCH, name);

		fab->nodes[id].level = 1;
	}
	for (uint32_t s = 0; s < S; s++) {
		snprintf(name, sizeof(name), "S%u", s);
		uint32_t id = emu_fabric_add_node(fab, EMU_NODE_SWITCH, name);

		fab->nodes[id].level = 2;
	}
	for (uint32_t l = 0; l < L; l++)
		for (uint32_t h = 0; h < H; h++) {
			snprintf(name, sizeof(name), "H%u", l * H + h);
			uint32_t id = emu_fabric_add_node(fab, EMU_NODE_HOST, name);

			emu_fabric_add_link(fab, id, 0, l, (int)h, p->rate, p->latency);
		}
	for (uint32_t l = 0; l < L; l++)
		for (uint32_t s = 0; s < S; s++)
			emu_fabric_add_link(fab, l, (int)(H + s), L + s, (int)l, p->rate, p->latency);
	set_mtu(fab, p->mtu);
	snprintf(fab->spec, sizeof(fab->spec), "fattree2:leaves=%u,spines=%u,hosts=%u", L, S, H);
	return fab;
}

static struct emu_fabric *fattree3(const struct params *p, char *err, size_t errlen)
{
	char name[EMU_NAME_MAX];

	if (p->k < 2 || p->k % 2 || p->k > EMU_SWITCH_PORTS_MAX) {
		snprintf(err, errlen, "--topology: fattree3 needs an even k in [2, %d]", EMU_SWITCH_PORTS_MAX);
		return NULL;
	}
	struct emu_fabric *fab = emu_fabric_create();
	uint32_t k = (uint32_t)p->k, h = k / 2;
	uint32_t nedge = k * h, ncore = h * h;

	for (uint32_t e = 0; e < nedge; e++) {
		snprintf(name, sizeof(name), "E%u", e);
		uint32_t id = emu_fabric_add_node(fab, EMU_NODE_SWITCH, name);	/* may move fab->nodes */

		fab->nodes[id].level = 1;
	}
	for (uint32_t a = 0; a < nedge; a++) {
		snprintf(name, sizeof(name), "A%u", a);
		uint32_t id = emu_fabric_add_node(fab, EMU_NODE_SWITCH, name);

		fab->nodes[id].level = 2;
	}
	for (uint32_t c = 0; c < ncore; c++) {
		snprintf(name, sizeof(name), "C%u", c);
		uint32_t id = emu_fabric_add_node(fab, EMU_NODE_SWITCH, name);

		fab->nodes[id].level = 3;
	}
	uint32_t A0 = nedge, C0 = 2 * nedge;

	for (uint32_t e = 0; e < nedge; e++)
		for (uint32_t i = 0; i < h; i++) {
			snprintf(name, sizeof(name), "H%u", e * h + i);
			uint32_t id = emu_fabric_add_node(fab, EMU_NODE_HOST, name);

			emu_fabric_add_link(fab, id, 0, e, (int)i, p->rate, p->latency);
		}
	for (uint32_t pod = 0; pod < k; pod++)
		for (uint32_t e = 0; e < h; e++)
			for (uint32_t a = 0; a < h; a++)
				emu_fabric_add_link(fab, pod * h + e, (int)(h + a), A0 + pod * h + a, (int)e,
						    p->rate, p->latency);
	for (uint32_t pod = 0; pod < k; pod++)
		for (uint32_t a = 0; a < h; a++)
			for (uint32_t c = 0; c < h; c++)
				emu_fabric_add_link(fab, A0 + pod * h + a, (int)(h + c), C0 + a * h + c, (int)pod,
						    p->rate, p->latency);
	set_mtu(fab, p->mtu);
	snprintf(fab->spec, sizeof(fab->spec), "fattree3:k=%u", k);
	return fab;
}

struct emu_fabric *emu_topo_from_spec(const char *spec, char *err, size_t errlen)
{
	struct params p = {
		.leaves = 32, .spines = 32, .hosts = 32, .k = 4,
		.rate = EMU_DEFAULT_RATE_BPS, .latency = EMU_DEFAULT_LATENCY, .mtu = EMU_DEFAULT_MTU,
	};
	const char *colon = strchr(spec, ':');
	const char *args = colon ? colon + 1 : "";
	size_t glen = colon ? (size_t)(colon - spec) : strlen(spec);
	struct emu_fabric *fab = NULL;
	char ferr[256];

	if (glen == 8 && !strncmp(spec, "fattree2", 8)) {
		if (parse_params("fattree2", args, &p, err, errlen))
			return NULL;
		fab = fattree2(&p, err, errlen);
	} else if (glen == 8 && !strncmp(spec, "fattree3", 8)) {
		if (parse_params("fattree3", args, &p, err, errlen))
			return NULL;
		fab = fattree3(&p, err, errlen);
	} else {
		snprintf(err, errlen, "--topology: unknown generator '%.*s' (fattree2, fattree3, or a file)", (int)glen, spec);
		return NULL;
	}
	if (!fab)
		return NULL;
	if (emu_fabric_finalize(fab, ferr, sizeof(ferr))) {
		snprintf(err, errlen, "--topology %s: %s", spec, ferr);
		emu_fabric_destroy(fab);
		return NULL;
	}
	return fab;
}
