// SPDX-License-Identifier: MIT
/*
 * DOC: replay.c - run a fuzz target's entry point over files, without
 * libFuzzer: `fuzz-X.replay FILE|DIR...` feeds every file (every regular
 * file of a directory, in name order) to LLVMFuzzerTestOneInput() once and
 * prints one TAP line per file. A crash, a sanitizer report (in sanitizer
 * builds) or a violated FUZZ_CHECK ends the program with a signal, which
 * the TAP harness reports as a failure. This keeps the corpora, and the
 * inputs that once crashed, tested by `make check` on machines without
 * clang.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "t/fuzz/fuzz.h"

static unsigned ran;

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 4096;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		size_t n = fread(buf + len, 1, cap - len, f);

		len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	printf("ok %u - %s (%zu bytes)\n", ++ran, path, len);
	fflush(stdout);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		if (!names)
			abort();
		names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2);
		if (!names[n])
			abort();
		sprintf(names[n++], "%s/%s", dir, e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), name_cmp);
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (!stat(names[i], &st) && S_ISREG(st.st_mode) && replay_file(names[i]))
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			rc = 1;
		} else if (S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i])) {
			rc = 1;
		}
	}
	printf("1..%u\n", ran);
	return rc || ran == 0;
}
