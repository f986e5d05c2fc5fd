/* SPDX-License-Identifier: MIT */
/*
 * DOC: tap.h - a small Test Anything Protocol producer for the t/ programs.
 *
 * Header-only. plan() or done_testing() prints the plan; ok()/is_int()/
 * is_u64() print one "ok N - description" line each; diag() writes "# ..."
 * to stderr. Every call takes one mutex, so several threads may report at
 * once (the numbering stays dense and the lines never interleave).
 * done_testing() returns the exit status prove expects: 0 when every test
 * passed and the plan was met.
 */
#ifndef TAP_H
#define TAP_H

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t tap_lock = PTHREAD_MUTEX_INITIALIZER;
static int tap_planned = -1;
static int tap_run;
static int tap_failed;

static inline void plan(int n)
{
	pthread_mutex_lock(&tap_lock);
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
	pthread_mutex_unlock(&tap_lock);
}

static inline __attribute__((noreturn)) void skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	exit(0);
}

static inline __attribute__((format(printf, 1, 2))) void diag(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&tap_lock);
	fputs("# ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	pthread_mutex_unlock(&tap_lock);
}

static inline int tap_vok(int cond, const char *fmt, va_list ap)
{
	pthread_mutex_lock(&tap_lock);
	tap_run++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_run);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&tap_lock);
	return cond;
}

static inline __attribute__((format(printf, 2, 3))) int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vok(cond, fmt, ap);
	va_end(ap);
	return r;
}

/* skip - record @n tests as skipped, with @why. */
static inline void skip(int n, const char *why)
{
	pthread_mutex_lock(&tap_lock);
	for (int i = 0; i < n; i++)
		printf("ok %d # skip %s\n", ++tap_run, why);
	fflush(stdout);
	pthread_mutex_unlock(&tap_lock);
}

#define is_int(got, want, ...) tap_is_i64((int64_t)(got), (int64_t)(want), __VA_ARGS__)
#define is_u64(got, want, ...) tap_is_u64((uint64_t)(got), (uint64_t)(want), __VA_ARGS__)

static inline __attribute__((format(printf, 3, 4))) int tap_is_i64(int64_t got, int64_t want, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vok(got == want, fmt, ap);
	va_end(ap);
	if (!r)
		diag("    got: %" PRId64 "\n#   expected: %" PRId64, got, want);
	return r;
}

static inline __attribute__((format(printf, 3, 4))) int tap_is_u64(uint64_t got, uint64_t want, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap_vok(got == want, fmt, ap);
	va_end(ap);
	if (!r)
		diag("    got: %" PRIu64 "\n#   expected: %" PRIu64, got, want);
	return r;
}

static inline int done_testing(void)
{
	pthread_mutex_lock(&tap_lock);
	if (tap_planned < 0) {
		printf("1..%d\n", tap_run);
		tap_planned = tap_run;
	}
	fflush(stdout);
	int bad = tap_failed || tap_run != tap_planned;
	if (tap_run != tap_planned)
		fprintf(stderr, "# planned %d tests but ran %d\n", tap_planned, tap_run);
	pthread_mutex_unlock(&tap_lock);
	return bad ? 1 : 0;
}

#endif /* TAP_H */
