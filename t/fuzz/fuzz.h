/* SPDX-License-Identifier: MIT */
/*
 * DOC: fuzz.h - shared by the libFuzzer targets in t/fuzz/.
 *
 * A target is one C file that defines LLVMFuzzerTestOneInput(). It is built
 * twice: by clang with -fsanitize=fuzzer,address,undefined for `make fuzz`,
 * and by the normal compiler, linked with replay.c, into a program that
 * runs the committed corpus (t/0100-fuzz-corpus.py, part of `make check`).
 * So a target must not rely on anything clang-specific, must be
 * deterministic, and must leave no state behind between inputs.
 *
 * FUZZ_CHECK() states a property the code under test must keep (a parsed
 * value stays in range, a rebuilt frame equals the parsed one); unlike
 * assert() it stays on under -DNDEBUG, so the replay checks it too.
 *
 * struct fuzz_in reads the input as a little program: bytes, 16-bit
 * numbers, length-prefixed chunks; reading past the end gives zeros and
 * empty chunks, so every input is a valid program.
 */
#ifndef T_FUZZ_H
#define T_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(c)                                                                            \
	do {                                                                                     \
		if (!(c)) {                                                                      \
			fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #c); \
			abort();                                                                 \
		}                                                                                \
	} while (0)

struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fz_u8(struct fuzz_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static inline uint16_t fz_u16(struct fuzz_in *in)
{
	uint16_t hi = fz_u8(in);

	return (uint16_t)(hi << 8 | fz_u8(in));
}

/* fz_chunk - the next chunk: a 16-bit length (capped at @max), then that many bytes (fewer at the end). */
static inline const uint8_t *fz_chunk(struct fuzz_in *in, size_t max, size_t *len)
{
	size_t n = fz_u16(in);
	const uint8_t *p = in->p;

	if (n > max)
		n = max;
	if (n > in->n)
		n = in->n;
	in->p += n;
	in->n -= n;
	*len = n;
	return p;
}

/*
 * fz_file - a path whose contents are @data (for parsers that take a file
 * name): a memory file, rewritten on every call, named through /proc.
 * Return the path (static storage), or NULL if the system has no memfd.
 */
static inline const char *fz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("fuzz-input", 0);
		if (fd < 0)
			return NULL;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		/* private, as a key file must be */
		if (fchmod(fd, 0600))
			return NULL;
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		return NULL;
	return path;
}

#endif /* T_FUZZ_H */
