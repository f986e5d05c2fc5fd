// SPDX-License-Identifier: MIT
/*
 * DOC: lh_units.c - quantities with units. See lh_units.h. No libm: the
 * library links with libc alone, so rounding is a cast of a value known
 * to be non-negative and below 2^64 (the cast truncates, which is floor).
 */
#include "libhost/lh_units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/*
 * A value starts with a decimal digit or a point: strtod() and strtoull()
 * would also skip leading white space, take a sign after it (" -1" is
 * 2^64 - 1 to strtoull), and read hexadecimal, "inf" and "nan".
 */
static bool decimal_start(const char *s)
{
	return s && (isdigit((unsigned char)s[0]) || s[0] == '.') && !(s[0] == '0' && (s[1] == 'x' || s[1] == 'X'));
}

static int split_number(const char *s, double *num, const char **unit)
{
	char *end;

	if (!decimal_start(s))
		return -EINVAL;
	errno = 0;
	*num = strtod(s, &end);
	if (errno || end == s || !isfinite(*num) || *num < 0)
		return -EINVAL;
	*unit = end;
	return 0;
}

struct unit {
	const char *name;
	double scale;
};

static int scale_by(const char *unit, const struct unit *u, size_t n, double *scale)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(unit, u[i].name)) {
			*scale = u[i].scale;
			return 0;
		}
	return -EINVAL;
}

int lh_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!decimal_start(s) || s[0] == '.')
		return -EINVAL;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);

	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

int lh_parse_time(const char *s, uint64_t *out)
{
	static const struct unit u[] = {
		{ "ps", 1 }, { "ns", 1e3 }, { "us", 1e6 }, { "ms", 1e9 }, { "s", 1e12 },
	};
	double num, scale;
	const char *unit;

	if (split_number(s, &num, &unit) || !*unit || scale_by(unit, u, sizeof(u) / sizeof(u[0]), &scale))
		return -EINVAL;
	double v = num * scale;

	if (v >= 1.8e19)
		return -EINVAL;
	*out = (uint64_t)(v + 0.5);	/* floor: v >= 0; not llround(): a long long ends at 9.2e18 */
	return 0;
}

int lh_parse_rate(const char *s, uint64_t *bps)
{
	static const struct unit u[] = {
		{ "bps", 1 }, { "K", 1e3 }, { "Kbps", 1e3 }, { "M", 1e6 }, { "Mbps", 1e6 },
		{ "G", 1e9 }, { "Gbps", 1e9 }, { "T", 1e12 }, { "Tbps", 1e12 },
	};
	double num, scale;
	const char *unit;

	if (split_number(s, &num, &unit) || scale_by(unit, u, sizeof(u) / sizeof(u[0]), &scale))
		return -EINVAL;
	double v = num * scale;

	if (!(v >= LH_RATE_MIN_BPS && v <= LH_RATE_MAX_BPS))
		return -EINVAL;
	*bps = (uint64_t)(v + 0.5);	/* floor (v >= 0) */
	return 0;
}

int lh_parse_size(const char *s, uint64_t *bytes)
{
	static const struct unit u[] = {
		{ "", 1 }, { "B", 1 }, { "K", 1024 }, { "KiB", 1024 }, { "KB", 1000 },
		{ "M", 1048576 }, { "MiB", 1048576 }, { "MB", 1e6 },
		{ "G", 1073741824.0 }, { "GiB", 1073741824.0 }, { "GB", 1e9 },
	};
	double num, scale;
	const char *unit;

	if (split_number(s, &num, &unit) || scale_by(unit, u, sizeof(u) / sizeof(u[0]), &scale))
		return -EINVAL;
	double v = num * scale;

	if (v >= 1.8e19 || v != (double)(uint64_t)v)	/* a whole number */
		return -EINVAL;
	*bytes = (uint64_t)v;
	return 0;
}

int lh_parse_prob(const char *s, double *p)
{
	double num;
	const char *unit;

	if (split_number(s, &num, &unit))
		return -EINVAL;
	if (!strcmp(unit, "%"))
		num /= 100;
	else if (*unit)
		return -EINVAL;
	if (num > 1)
		return -EINVAL;
	*p = num;
	return 0;
}

int lh_parse_epoch(const char *s, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0, scale = 1000000000ULL;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (sec > (UINT64_MAX / 1000000000ULL - 10) / 10)	/* so that sec x 1e9 + frac fits */
			return -EINVAL;
		sec = sec * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (scale == 1)
				return -EINVAL;	/* finer than a nanosecond */
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;
		}
	}
	if (*p)
		return -EINVAL;
	*ns = sec * 1000000000ULL + frac;
	return 0;
}
