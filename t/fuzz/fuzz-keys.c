// SPDX-License-Identifier: MIT
/*
 * DOC: fuzz-keys.c - the CURVE key file reader (emu/dist/dist.c, as
 * --curve uses it) on arbitrary files.
 *
 * Properties: no crash, leak or undefined behaviour; a refused file
 * gets a reason that names the file.
 */
#include "emu/dist/dist.h"
#include "t/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size);
	char err[512] = "";

	FUZZ_CHECK(path);
	if (emu_dist_check_keyfile(path, err, sizeof(err))) {
		FUZZ_CHECK(err[0]);
		FUZZ_CHECK(strstr(err, path) != NULL);
	}
	return 0;
}
