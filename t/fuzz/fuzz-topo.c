// SPDX-License-Identifier: MIT
/*
 * DOC: fuzz-topo.c - the topology file parser (topologies/file.c) and the
 * fabric checks behind it (emu_fabric_finalize) on arbitrary files.
 *
 * Properties: a file either gives a finalized fabric with at least one
 * host, every host linked, every port used once; or an error that names
 * the file.
 */
#include "emu/engine/fabric.h"
#include "topologies/topo.h"
#include "t/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size);
	char err[512] = "";

	FUZZ_CHECK(path);
	struct emu_fabric *fab = emu_topo_from_file(path, err, sizeof(err));

	if (!fab) {
		FUZZ_CHECK(err[0]);
		FUZZ_CHECK(strstr(err, path) != NULL);
		return 0;
	}
	FUZZ_CHECK(fab->finalized && fab->nhosts >= 1);
	for (uint32_t h = 0; h < fab->nhosts; h++)
		FUZZ_CHECK(fab->nodes[fab->hosts[h]].nports >= 1);
	for (uint32_t l = 0; l < fab->nlinks; l++)
		FUZZ_CHECK(fab->links[l].node[0] < fab->nnodes && fab->links[l].node[1] < fab->nnodes);
	emu_fabric_destroy(fab);
	return 0;
}
