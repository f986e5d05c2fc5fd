// SPDX-License-Identifier: MIT
/*
 * DOC: the option value parsers (emu/units.c) on the forms fuzzing found
 * accepted by mistake: leading white space, a sign after it (" -1" was
 * 2^64 - 1), hexadecimal, and times past 2^63 ps (llround() overflowed);
 * and the ordinary forms, to the exact value.
 */
#include <errno.h>

#include "emu/units.h"
#include "tap.h"

/* @s as printable text (white space escaped), for the test's name */
static const char *shown(const char *s)
{
	static char buf[64];
	size_t o = 0;

	for (; *s && o < sizeof(buf) - 3; s++) {
		if (*s == '\n' || *s == '\t') {
			buf[o++] = '\\';
			buf[o++] = *s == '\n' ? 'n' : 't';
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = 0;
	return buf;
}

static void no_u64(const char *s)
{
	uint64_t v = 12345;

	ok(emu_parse_u64(s, &v) == -EINVAL && v == 12345, "count '%s' refused", shown(s));
}

static void no_time(const char *s)
{
	emu_time_t t = 12345;

	ok(emu_parse_time(s, &t) == -EINVAL && t == 12345, "time '%s' refused", shown(s));
}

int main(void)
{
	uint64_t v;
	emu_time_t t;
	double p;

	plan(40);
	no_u64(" -1");
	no_u64("\n7");
	no_u64("\t42");
	no_u64("-1");
	no_u64("+1");
	no_u64("0x10");
	no_u64(".5");
	no_u64("");
	ok(emu_parse_u64("18446744073709551615", &v) == 0 && v == UINT64_MAX, "count 2^64 - 1 accepted exactly");
	ok(emu_parse_u64("18446744073709551616", &v) == -EINVAL, "count 2^64 refused");
	no_time(" 5ns");
	no_time(" -0ns");
	no_time("0x1p4ns");
	no_time("infns");
	no_time("nanus");
	ok(emu_parse_time("1e19ps", &t) == 0 && t == 10000000000000000000ULL,
	   "time 1e19 ps = 10^19 exactly (llround gave %llu)", (unsigned long long)t);
	ok(emu_parse_time("9.3e6s", &t) == 0 && t == 9300000000000000000ULL, "time 9.3e6 s past 2^63 ps, exact");
	ok(emu_parse_time("1.8e7s", &t) == -EINVAL, "time 1.8e7 s (past 2^64 ps) refused");
	ok(emu_parse_time(".5us", &t) == 0 && t == 500000, "time .5us = 500000 ps");
	ok(emu_parse_time("300ns", &t) == 0 && t == 300000, "time 300ns = 300000 ps");
	ok(emu_parse_rate("100T", &v) == 0 && v == 100000000000000ULL, "rate 100T = 10^14 bps exact (the largest)");
	ok(emu_parse_rate("1Mbps", &v) == 0 && v == 1000000, "rate 1Mbps (the smallest)");
	ok(emu_parse_rate("1e19bps", &v) == -EINVAL, "rate 1e19 bps refused (a frame would take less than 1 ps)");
	ok(emu_parse_rate("10000T", &v) == -EINVAL, "rate 10000T refused");
	ok(emu_parse_rate("999K", &v) == -EINVAL, "rate 999K refused (below 1 Mb/s)");
	ok(emu_parse_rate("100", &v) == -EINVAL, "rate '100' refused: no unit");
	ok(emu_parse_rate("100G", &v) == 0 && v == 100000000000ULL, "rate 100G = 100 Gb/s");
	no_time("100");
	ok(emu_parse_rate(" 100G", &v) == -EINVAL, "rate ' 100G' refused");
	ok(emu_parse_size("\n4KiB", &v) == -EINVAL, "size '\\n4KiB' refused");
	ok(emu_parse_prob(" 0.5", &p) == -EINVAL, "probability ' 0.5' refused");
	/* wall-clock instants (--start-at): whole seconds to the nanosecond, no float on the way */
	ok(lh_parse_epoch("1764230000", &v) == 0 && v == 1764230000000000000ULL, "instant 1764230000 s");
	ok(lh_parse_epoch("1764230000.123456789", &v) == 0 && v == 1764230000123456789ULL,
	   "instant with 9 decimals, exact");
	ok(lh_parse_epoch("1764230000.5", &v) == 0 && v == 1764230000500000000ULL, "instant with 1 decimal");
	ok(lh_parse_epoch("18446744063.999999999", &v) == 0 && v == 18446744063999999999ULL, "largest instant");
	v = 7;
	ok(lh_parse_epoch("18446744074", &v) == -EINVAL && v == 7, "instant past 2^64 ns refused");
	ok(lh_parse_epoch("1764230000.1234567891", &v) == -EINVAL, "instant finer than 1 ns refused");
	ok(lh_parse_epoch("1764230000.", &v) == -EINVAL, "instant '1764230000.' refused");
	ok(lh_parse_epoch(" 1764230000", &v) == -EINVAL, "instant ' 1764230000' refused");
	ok(lh_parse_epoch("2s", &v) == -EINVAL, "instant '2s' refused");
	return done_testing();
}
