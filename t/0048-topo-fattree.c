// SPDX-License-Identifier: MIT
/*
 * DOC: the topology generators and routing tables: node, port and link
 * counts of the paper's fabric and of 3-level fat trees of several radixes;
 * up/down shortest paths (every spine is a way up, exactly one way down);
 * bad specs are refused with the option named.
 */
#include <string.h>

#include "emu/engine/route.h"
#include "helpers.h"

int main(void)
{
	char err[256];

	plan(15);
	struct emu_fabric *f = t_fabric("fattree2:leaves=32,spines=32,hosts=32");

	ok(f->nhosts == 1024 && f->nswitches == 64 && f->nlinks == 1024 + 32 * 32,
	   "paper fabric: 1024 hosts, 64 switches, 2048 links");
	ok(f->nodes[emu_fabric_find(f, "L0")].nports == 64 && f->nodes[emu_fabric_find(f, "S0")].nports == 32,
	   "leaf: 64 ports, spine: 32");
	struct emu_routes *r = emu_routes_compute(f, NULL, NULL, 0);
	uint32_t l0 = emu_fabric_find(f, "L0"), s3 = emu_fabric_find(f, "S3");

	is_int(__builtin_popcountll(emu_routes_mask(r, f, l0, 40)), 32, "leaf to a host under another leaf: 32 ways up");
	is_u64(emu_routes_mask(r, f, l0, 5), 1ULL << 5, "leaf to its own host: its port");
	is_u64(emu_routes_mask(r, f, s3, 40), 1ULL << 1, "spine to host 40 (leaf 1): exactly one way down");
	emu_routes_destroy(r);
	/* with the link L0-S0 down, the way up avoids it */
	uint8_t *up = malloc(f->nlinks);

	memset(up, 1, f->nlinks);
	up[t_link_between(f, "L0", "S0")] = 0;
	r = emu_routes_compute(f, up, NULL, 1);
	ok(__builtin_popcountll(emu_routes_mask(r, f, l0, 40)) == 31 && !(emu_routes_mask(r, f, l0, 40) & (1ULL << 32)),
	   "L0-S0 down: 31 ways up, not through port 32");
	emu_routes_destroy(r);
	free(up);
	emu_fabric_destroy(f);

	static const unsigned ks[] = { 4, 8, 20 };

	for (unsigned i = 0; i < 3; i++) {
		char spec[32];
		unsigned k = ks[i];

		snprintf(spec, sizeof(spec), "fattree3:k=%u", k);
		f = t_fabric(spec);
		ok(f->nhosts == k * k * k / 4 && f->nswitches == 5 * k * k / 4 && f->nlinks == 3 * k * k * k / 4,
		   "%s: %u hosts, %u switches, %u links", spec, f->nhosts, f->nswitches, f->nlinks);
		r = emu_routes_compute(f, NULL, NULL, 0);
		uint32_t e0 = emu_fabric_find(f, "E0");
		/* host in the last pod: up through every aggregation switch of pod 0 */
		ok(__builtin_popcountll(emu_routes_mask(r, f, e0, f->nhosts - 1)) == (int)(k / 2),
		   "%s: edge to another pod: k/2 ways up", spec);
		emu_routes_destroy(r);
		emu_fabric_destroy(f);
	}
	ok(!emu_topo_from_spec("fattree3:k=5", err, sizeof(err)) && strstr(err, "--topology"), "odd k refused: %s", err);
	ok(!emu_topo_from_spec("fattree2:leaves=4,spines=40,hosts=30", err, sizeof(err)) && strstr(err, "ports"),
	   "a leaf with too many ports refused: %s", err);
	ok(!emu_topo_from_spec("fattree2:leaves=4,color=red", err, sizeof(err)) && strstr(err, "color"),
	   "unknown parameter named: %s", err);
	return done_testing();
}
