// SPDX-License-Identifier: MIT
/*
 * DOC: fuzz-options.c - the parsers of option values: times, rates, sizes,
 * probabilities, counts (emu/units.c), failure and drop specs
 * (--fail, --drop) and topology generator specs (--topology).
 *
 * The first byte picks the parser, the rest is the value (up to the first
 * NUL). Properties besides memory safety: a parsed value starts with a
 * decimal digit or point (no white space, sign or hexadecimal); a parsed
 * count has only digits;
 * a parsed quantity equals the number times its unit (to rounding); a
 * rate has its unit and lies in the model's range; a
 * probability is in [0, 1]; a failure ends after it starts; a generated
 * fabric is finalized; a refused value gets a reason.
 */
#include <ctype.h>
#include <math.h>

#include "emu/engine/fabric.h"
#include "emu/scenario.h"
#include "emu/units.h"
#include "topologies/topo.h"
#include "t/fuzz/fuzz.h"

/* the value of @s before its unit, as the parsers read it */
static double number(const char *s, const char **unit)
{
	char *end;
	double v = strtod(s, &end);

	*unit = end;
	return v;
}

/* does @s start as the parsers want a number to: a decimal digit or point, not hex? */
static int decimal(const char *s)
{
	return (isdigit((unsigned char)s[0]) || s[0] == '.') && !(s[0] == '0' && (s[1] == 'x' || s[1] == 'X'));
}

/* is @got the rounding of @want? */
static int near(double want, uint64_t got)
{
	return fabs((double)got - want) <= 1 + want * 1e-12;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[512];
	size_t n = size ? size - 1 : 0;
	const char *unit;
	uint64_t u;
	emu_time_t t;
	double p;

	if (n >= sizeof(s))
		n = sizeof(s) - 1;
	if (size)
		memcpy(s, data + 1, n);
	s[n] = '\0';
	switch (size ? data[0] % 8 : 0) {
	case 0:
		if (!emu_parse_u64(s, &u)) {
			FUZZ_CHECK(isdigit((unsigned char)s[0]));
			FUZZ_CHECK(u == strtoull(s, NULL, 10));
		}
		break;
	case 1:
		if (!emu_parse_time(s, &t)) {
			double v = number(s, &unit);
			double scale = !strcasecmp(unit, "ps") ? 1 : !strcasecmp(unit, "ns") ? 1e3 :
				       !strcasecmp(unit, "us") ? 1e6 : !strcasecmp(unit, "ms") ? 1e9 : 1e12;

			FUZZ_CHECK(decimal(s) && near(v * scale, t));
		}
		break;
	case 2:
		if (!emu_parse_rate(s, &u))
			FUZZ_CHECK(decimal(s) && number(s, &unit) >= 0 && *unit && u >= EMU_RATE_MIN_BPS &&
				   u <= EMU_RATE_MAX_BPS);
		break;
	case 3:
		if (!emu_parse_size(s, &u))
			FUZZ_CHECK(decimal(s) && number(s, &unit) >= 0);
		break;
	case 4:
		if (!emu_parse_prob(s, &p))
			FUZZ_CHECK(decimal(s) && p >= 0 && p <= 1);
		break;
	case 5: {
		struct emu_fail f;

		if (!emu_fail_parse(s, &f)) {
			FUZZ_CHECK(f.up > f.down && f.node[0] && strlen(f.node) < EMU_NAME_MAX);
			FUZZ_CHECK(f.is_node ? f.port == -1 : f.port >= 0 && f.port <= 0xfffe);
		}
		break;
	}
	case 6: {
		struct emu_drop d;

		if (!emu_drop_parse(s, &d))
			FUZZ_CHECK(d.nth >= 1 && d.port <= 0xfffe && d.node[0] && strlen(d.node) < EMU_NAME_MAX);
		break;
	}
	default: {
		char err[256] = "";
		struct emu_fabric *fab = emu_topo_from_spec(s, err, sizeof(err));

		if (fab) {
			FUZZ_CHECK(fab->finalized && fab->nhosts >= 1 && fab->nswitches >= 1);
			emu_fabric_destroy(fab);
		} else {
			FUZZ_CHECK(err[0]);
		}
		(void)emu_topo_is_spec(s);
		break;
	}
	}
	char buf[64];

	(void)emu_fmt_time((emu_time_t)n * 1234567, buf, sizeof(buf));
	(void)emu_fmt_size((uint64_t)n * 1234567, buf, sizeof(buf));
	return 0;
}
