// SPDX-License-Identifier: MIT
/*
 * DOC: lh_wire_elems_differ() (libhost/wire.c), the scenario's result
 * check, finds every difference: for every length from 0 to 300 elements
 * (the vector steps, the tail and both together), at two offsets from an
 * aligned address, equal buffers are equal, and one flipped bit in any
 * single element, at every position and in each of its four bytes, differs.
 */
#include <string.h>

#include "libhost/wire.h"
#include "tap.h"

#define NMAX 300

int main(void)
{
	static uint8_t a[4 * NMAX + 8], b[4 * NMAX + 8];
	unsigned equal_wrong = 0, missed = 0, cases = 0;

	plan(2);
	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i * 37 + 11);
	for (unsigned off = 0; off < 8; off += 5) {
		for (size_t n = 0; n <= NMAX; n++) {
			memcpy(b, a, sizeof(a));
			equal_wrong += lh_wire_elems_differ(a + off, b + off, n);
			for (size_t k = 0; k < n; k++)
				for (unsigned bit = 0; bit < 32; bit += 9) {
					uint8_t *p = b + off + 4 * k + bit / 8;

					*p ^= (uint8_t)(1u << (bit % 8));
					missed += !lh_wire_elems_differ(a + off, b + off, n);
					*p ^= (uint8_t)(1u << (bit % 8));
					cases++;
				}
			/* a difference just past the end is not looked at */
			b[off + 4 * n] ^= 1;
			equal_wrong += lh_wire_elems_differ(a + off, b + off, n);
		}
	}
	is_int(equal_wrong, 0, "0-%d elements at offsets 0 and 5: equal (also with a difference just past the end)",
	       NMAX);
	is_int(missed, 0, "...one flipped bit in any one element: every one of %u found", cases);
	return done_testing();
}
