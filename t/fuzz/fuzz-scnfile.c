// SPDX-License-Identifier: MIT
/*
 * DOC: fuzz-scnfile.c - the scenario file reader (emu/scnfile.c, as
 * canary-emu --scenario uses it) on arbitrary files: JSON and CSV reports.
 *
 * Properties: no crash, leak or undefined behaviour; every key and value
 * handed on is a C string shorter than the reader's buffers, with no
 * control character but a tab (so nothing a message echoes can drive a
 * terminal), and a key is never empty; a refused file gets a reason, and
 * a value the caller refuses is reported on its line ("line N: ...").
 */
#include <errno.h>

#include "emu/scnfile.h"
#include "t/fuzz/fuzz.h"

static int apply(void *ctx, const char *key, const char *val, char *err, size_t errlen)
{
	unsigned *n = ctx;

	FUZZ_CHECK(key[0]);
	FUZZ_CHECK(strlen(key) < 256 && strlen(val) < 2 * SCNFILE_VAL);
	for (const unsigned char *q = (const unsigned char *)key; *q; q++)
		FUZZ_CHECK(*q >= 0x20 && *q != 0x7f && !(*q == 0xc2 && q[1] >= 0x80 && q[1] <= 0x9f));
	for (const unsigned char *q = (const unsigned char *)val; *q; q++)
		FUZZ_CHECK((*q >= 0x20 || *q == '\t') && *q != 0x7f && !(*q == 0xc2 && q[1] >= 0x80 && q[1] <= 0x9f));
	(*n)++;
	if (!strcmp(key, "refuse")) {
		snprintf(err, errlen, "refused");
		return -EINVAL;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size);
	char err[640] = "";
	unsigned n = 0;

	FUZZ_CHECK(path);
	if (emu_scnfile_read(path, apply, &n, err, sizeof(err))) {
		FUZZ_CHECK(err[0]);
		if (strstr(err, "refused"))
			FUZZ_CHECK(!strncmp(err, "line ", 5));
	}
	return 0;
}
