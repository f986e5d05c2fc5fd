// SPDX-License-Identifier: MIT
/*
 * DOC: fuzz-wire.c - the frame parsers of libhost/wire.c on arbitrary
 * bytes: the Canary header, IPv4, the UDP port, the routing destination.
 *
 * Besides "no crash, no read past the end", the properties: a Canary
 * frame that parses has a known opcode, its run id apart from the flags
 * (bits 5..4 of the flags byte, 0..3), 1 <= hosts, counter <= hosts,
 * whole elements within EMU_CANARY_MAX_ELEMENTS; building a frame from
 * the parsed header and elements gives back the same bytes; a routable
 * frame's destination is the one its header carries.
 */
#include "libhost/wire.h"
#include "t/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t rebuilt[LH_WIRE_MAX];
	uint32_t len = (uint32_t)(size < LH_WIRE_MAX ? size : LH_WIRE_MAX);
	struct emu_canary_hdr h;
	unsigned nelem = 0;
	uint32_t sip, dip;
	uint64_t hash;

	/* an exact-size copy, so ASan sees a read past @len */
	uint8_t *p = malloc(len ? len : 1);

	if (!p)
		abort();
	memcpy(p, data, len);

	if (lh_wire_canary_parse(p, len, &h, &nelem) == LH_WIRE_OK) {
		unsigned op = h.flags & EMU_CANARY_OP_MASK;
		int32_t el[EMU_CANARY_MAX_ELEMENTS];

		FUZZ_CHECK(op >= 1 && op <= EMU_CANARY_OP_MAX);
		FUZZ_CHECK(h.run < EMU_CANARY_RUNS && !(h.flags & EMU_CANARY_RUN_MASK) &&
			   h.run == (p[EMU_CANARY_FLAGS_OFF] & EMU_CANARY_RUN_MASK) >> EMU_CANARY_RUN_SHIFT);
		FUZZ_CHECK(h.hosts >= 1 && h.counter <= h.hosts);
		FUZZ_CHECK(nelem <= EMU_CANARY_MAX_ELEMENTS && EMU_CANARY_DATA_OFF + 4 * nelem == len);
		lh_wire_get_elems(el, p + EMU_CANARY_DATA_OFF, nelem);
		for (unsigned i = 0; i < nelem; i++)
			FUZZ_CHECK(el[i] == lh_wire_elem(p, i));
		uint32_t n = lh_wire_canary_build(rebuilt, p, p + 6, &h, el, nelem);

		FUZZ_CHECK(n == len && !memcmp(rebuilt, p, len));
		int32_t acc[EMU_CANARY_MAX_ELEMENTS] = { 0 };

		lh_wire_add_elems(acc, p + EMU_CANARY_DATA_OFF, nelem);
		FUZZ_CHECK(!memcmp(acc, el, nelem * sizeof(int32_t)));
	}
	if (lh_wire_ipv4(p, len, &sip, &dip) == LH_WIRE_OK) {
		FUZZ_CHECK(len >= EMU_ETH_HLEN + EMU_IPV4_HLEN && lh_wire_ethertype(p, len) == EMU_ETHERTYPE_IPV4);
		FUZZ_CHECK(sip == emu_get32(p + EMU_ETH_HLEN + 12) && dip == emu_get32(p + EMU_ETH_HLEN + 16));
	}
	int port = lh_wire_udp_dport(p, len);

	FUZZ_CHECK(port >= -1 && port <= 0xffff);
	if (lh_wire_dst(p, len, &dip, &hash) == LH_WIRE_OK) {
		uint16_t type = lh_wire_ethertype(p, len);

		FUZZ_CHECK(type == EMU_ETHERTYPE_CANARY || type == EMU_ETHERTYPE_IPV4);
		FUZZ_CHECK(dip == emu_get32(p + (type == EMU_ETHERTYPE_CANARY ? EMU_CANARY_OFF : EMU_ETH_HLEN + 16)));
	}
	for (int e = 0; e <= LH_WIRE_NERR; e++)
		FUZZ_CHECK(lh_wire_strerror((enum lh_wire_err)e) != NULL);
	free(p);
	return 0;
}
