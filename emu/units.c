// SPDX-License-Identifier: MIT
/*
 * DOC: units.c - quantities with units, printed. See units.h (the parsers
 * are libhost's, libhost/lh_units.c).
 */
#include "emu/units.h"

#include <math.h>
#include <stdio.h>

const char *emu_fmt_time(emu_time_t t, char *buf, size_t len)
{
	if (t >= EMU_S)
		snprintf(buf, len, "%.3f s", (double)t / 1e12);
	else if (t >= EMU_MS)
		snprintf(buf, len, "%.3f ms", (double)t / 1e9);
	else if (t >= EMU_US)
		snprintf(buf, len, "%.3f us", (double)t / 1e6);
	else
		snprintf(buf, len, "%.3f ns", (double)t / 1e3);
	return buf;
}

const char *emu_fmt_size(uint64_t b, char *buf, size_t len)
{
	static const char *const name[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int i = 0;

	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	if (v == floor(v))
		snprintf(buf, len, "%.0f %s", v, name[i]);
	else
		snprintf(buf, len, "%.2f %s", v, name[i]);
	return buf;
}
