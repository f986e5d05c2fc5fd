// SPDX-License-Identifier: MIT
/*
 * DOC: hw/canary.p4 against the emulator: the Canary header's fields,
 * widths and order against wire.h, the element count, the
 * EtherType and opcodes, the table size, and the stateful ALUs (one
 * Register per descriptor register and per element, one for the ECMP
 * ActionSelector) against the tofino1 resource model for the same
 * configuration (32 elements, 32K descriptors, 32 ports: 42 of 48 with
 * adaptive routing, 39 with -DCANARY_NO_ADAPTIVE, ECMP only, 43 with
 * -DCANARY_ADAPTIVE_TIMEOUT: r_ato, as the model counts --timeout adaptive),
 * one element table per element register, and the adaptive timeout's
 * constants against the emulator's defaults.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/switch/canary_sw.h"
#include "emu/switch/tofino.h"
#include "libhost/wire.h"
#include "tap.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* the fields of "header NAME { bit<W> f; ... }" in order */
static int fields(const char *src, const char *name, char names[][32], int *widths, int max)
{
	char open[64];
	const char *p, *end;
	int n = 0;

	snprintf(open, sizeof(open), "header %s {", name);
	p = strstr(src, open);
	if (!p)
		return -1;
	p += strlen(open);
	end = strchr(p, '}');
	while (p < end && n < max) {
		const char *b = strstr(p, "bit<");

		if (!b || b > end)
			break;
		int w;
		char f[32];

		if (sscanf(b, "bit<%d> %31[a-z_0-9]", &w, f) != 2)
			break;
		widths[n] = w;
		strcpy(names[n], f);
		n++;
		p = strchr(b, ';') + 1;
	}
	return n;
}

static int count(const char *src, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(src, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* occurrences of @needle inside the @open ... #endif blocks (not nested) */
static int count_in(const char *src, const char *open, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(src, open); p; p = strstr(p + 1, open)) {
		const char *end = strstr(p, "#endif");

		if (!end)
			break;
		for (const char *q = strstr(p, needle); q && q < end; q = strstr(q + 1, needle))
			n++;
	}
	return n;
}

/* the value of "const bit<W> NAME = V;", or -1 */
static long constant(const char *src, const char *name)
{
	char key[64];

	for (const char *p = strstr(src, "const bit<"); p; p = strstr(p + 1, "const bit<")) {
		const char *q = strchr(p, '>');

		snprintf(key, sizeof(key), " %s = ", name);
		if (q && !strncmp(q + 1, key, strlen(key)))
			return strtol(q + 1 + strlen(key), NULL, 0);
	}
	return -1;
}

/* the one-hot predicate of a Tofino 1 stateful ALU: bit (cmplo + 2 x cmphi) */
static long pred(int cmplo, int cmphi)
{
	return 1L << (cmplo + 2 * cmphi);
}

static long define(const char *src, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "#define %s ", name);
	p = strstr(src, key);
	return p ? strtol(p + strlen(key), NULL, 0) : -1;
}

int main(void)
{
	char *src = slurp("hw/canary.p4");
	char names[64][32];
	int widths[64];

	if (!src)
		skip_all("hw/canary.p4 not found (run from the top directory)");
	plan(24);

	/* the header, field by field, as wire.h lays it out */
	static const struct {
		const char *name;
		int bits;
		int off;	/* byte offset in the Canary header, from wire.c */
	} want[] = {
		{ "dst", 32, 0 }, { "id", 32, 4 }, { "counter", 16, 8 }, { "hosts", 16, 10 },
		{ "children", 32, 12 }, { "switch_addr", 16, 16 }, { "bypass", 1, 18 }, { "multicast", 1, 18 },
		{ "run", 2, 18 }, { "opcode", 4, 18 },
	};
	int n = fields(src, "canary_h", names, widths, 64);
	int same = n == 10, bits = 0;

	for (int i = 0; same && i < n; i++) {
		if (strcmp(names[i], want[i].name) || widths[i] != want[i].bits || bits / 8 != want[i].off) {
			diag("field %d: %s bit<%d> at byte %d, expected %s bit<%d> at byte %d", i, names[i], widths[i],
			     bits / 8, want[i].name, want[i].bits, want[i].off);
			same = 0;
		}
		bits += widths[i];
	}
	ok(same, "canary_h: the ten fields of wire.h in the paper's order, with wire.h's widths and offsets");
	is_int(bits, 8 * EMU_CANARY_HLEN, "canary_h is %d bytes, as EMU_CANARY_HLEN", EMU_CANARY_HLEN);
	ok(EMU_CANARY_F_BYPASS == 0x80 && EMU_CANARY_F_MULTICAST == 0x40 && EMU_CANARY_RUN_MASK == 0x30 &&
	   EMU_CANARY_RUN_SHIFT == 4 && EMU_CANARY_RUNS == 4 && EMU_CANARY_OP_MASK == 0x0f &&
	   EMU_CANARY_OP_MAX <= EMU_CANARY_OP_MASK,
	   "flags byte: bypass bit 7, multicast bit 6, run bits 5..4, opcode bits 3..0 in both");

	int ne = fields(src, "data_h", names, widths, 64), allw = ne == 32;

	for (int i = 0; i < ne; i++)
		allw = allw && widths[i] == 32;
	ok(allw, "data_h: 32 elements of bit<32> (one Tofino-1 pass)");

	ok(strstr(src, "ETHERTYPE_CANARY = 0x88B5") && EMU_ETHERTYPE_CANARY == 0x88B5, "EtherType 0x88B5 in both");
	char op[64];
	int ops = 1;

	snprintf(op, sizeof(op), "OP_REDUCE = %d;", EMU_CANARY_OP_REDUCE);
	ops = ops && strstr(src, op);
	snprintf(op, sizeof(op), "OP_BCAST = %d;", EMU_CANARY_OP_BCAST);
	ops = ops && strstr(src, op);
	snprintf(op, sizeof(op), "OP_RESTORE = %d;", EMU_CANARY_OP_RESTORE);
	ops = ops && strstr(src, op);
	ok(ops, "opcodes REDUCE, BCAST, RESTORE have wire.h's values");

	struct emu_tofino_need need, ecmp;

	emu_tofino_need(emu_tofino_profile_get("tofino1"), 32, 32768, 32, 0, true, &need);
	emu_tofino_need(emu_tofino_profile_get("tofino1"), 32, 32768, 32, 0, false, &ecmp);
	is_int(define(src, "N_DESC"), need.descriptors, "N_DESC = the tofino1 table (%u)", need.descriptors);
	struct emu_tofino_need ato;

	emu_tofino_need_ato(emu_tofino_profile_get("tofino1"), 32, 32768, 32, 0, true, true, &ato);
	int regs = count(src, "Register<"), adapt = count_in(src, "#ifndef CANARY_NO_ADAPTIVE", "Register<"),
	    atoregs = count_in(src, "#ifdef CANARY_ADAPTIVE_TIMEOUT", "Register<"),
	    sels = count(src, "ActionSelector(ecmp_members");

	is_int(sels, 1, "one ECMP ActionSelector");
	is_int(regs - atoregs + sels, need.salu,
	       "default build (adaptive): one stateful ALU per register and the selector: %d + %d = the model's %u",
	       regs - atoregs, sels, need.salu);
	is_int(regs - atoregs - adapt + sels, ecmp.salu, "-DCANARY_NO_ADAPTIVE: %d + %d = the model's %u with ECMP",
	       regs - atoregs - adapt, sels, ecmp.salu);
	is_int(atoregs, 1, "-DCANARY_ADAPTIVE_TIMEOUT: one more register (r_ato)");
	is_int(regs + sels, ato.salu, "-DCANARY_ADAPTIVE_TIMEOUT: %d + %d = the model's %u with --timeout adaptive", regs,
	       sels, ato.salu);
	ok(!ato.fits && ato.stages == 13, "...which does not fit tofino1 beside the adaptive next hop (%u stages; bf-p4c: 15)",
	   ato.stages);
	struct emu_tofino_need ato_ecmp;

	emu_tofino_need_ato(emu_tofino_profile_get("tofino1"), 32, 32768, 32, 0, false, true, &ato_ecmp);
	ok(regs - adapt + sels == (int)ato_ecmp.salu && ato_ecmp.stages == 12 && ato_ecmp.fits,
	   "-DCANARY_ADAPTIVE_TIMEOUT -DCANARY_NO_ADAPTIVE (compiled): %d + %d = the model's %u with ECMP, in %u stages",
	   regs - adapt, sels, ato_ecmp.salu, ato_ecmp.stages);
	ok(strstr(src, "void apply(inout bit<32> v, out bit<32> rv) { rv = v + md.ato_base; }") &&
		   strstr(src, "md.ato_base = ig_prsr_md.global_tstamp[31:0] | 2;") &&
		   strstr(src, "md.ato_base = ATO_FLOOR_NS;") && strstr(src, "if (v == 0) { v = md.deadline; rv = ELEM_ADD; }") &&
		   strstr(src, "(int<32>)(md.now - v) >= ATO_FLOOR_NS"),
	   "adaptive timeout: r_ato's read returns now + Q - floor for a REDUCE (stored by r_tstate) and Q otherwise; "
	   "the clock packet flushes at stored + floor, the emulator's first arrival + Q");
	ok(define(src, "ATO_FLOOR_NS") * EMU_NS == EMU_ATO_FLOOR &&
		   (define(src, "ATO_FLOOR_NS") + define(src, "ATO_SPAN_NS")) * EMU_NS == EMU_ATO_CEIL,
	   "adaptive timeout: floor %ld ns and ceiling %ld ns as the emulator's", define(src, "ATO_FLOOR_NS"),
	   define(src, "ATO_FLOOR_NS") + define(src, "ATO_SPAN_NS"));
	ok(define(src, "ATO_UP_NS") * EMU_NS == EMU_ATO_UP && define(src, "ATO_DOWN_NS") * EMU_NS == EMU_ATO_DOWN &&
		   define(src, "ATO_FLOOR_NS") % 4 == 0 && define(src, "ATO_UP_NS") % 4 == 0 &&
		   define(src, "ATO_DOWN_NS") % 4 == 0 && define(src, "TIMEOUT_NS") % 4 == 0,
	   "adaptive timeout: steps +%ld / -%ld ns as the emulator's, floor, steps and start multiples of 4 ns "
	   "(the deadline keeps bit 1 of now)",
	   define(src, "ATO_UP_NS"), define(src, "ATO_DOWN_NS"));
	is_int(adapt, 3, "adaptive routing: 3 registers (depth per up port, least-loaded port, last report)");
	is_int(count(src, "Register<bit<32>, bit<15>>(N_DESC, 0) r_e"), 32, "32 element registers");
	is_int(count(src, "key = { md.elem_op : exact; }"), 32, "32 element tables keyed by the operation r_tstate returns");

	/*
	 * r_id: a dual-word stateful ALU of Tofino 1 outputs a stored word or
	 * its predicate, not a constant picked by a condition (bf-p4c: "cannot
	 * output constant from Register"); the answers are the predicate's bits
	 */
	const char *rid = strstr(src, "Register<id_pair_t, bit<15>>");
	const char *rid_end = rid ? strstr(rid, "(r_id) id_read") : NULL;
	int preds = 0, consts = 0;

	for (const char *q = rid ? strstr(rid, "this.predicate(") : NULL; q && q < rid_end; q = strstr(q + 1, "this.predicate("))
		preds++;
	for (const char *q = rid ? strstr(rid, "rv = ID_") : NULL; q && q < rid_end; q = strstr(q + 1, "rv = ID_"))
		consts++;
	ok(rid && rid_end && preds == 2 && consts == 0 && !strstr(src, "rv = ID_") &&
		   strstr(rid, "rv = this.predicate(v.lo == 0, v.lo == hdr.canary.id);") &&
		   strstr(rid, "rv = this.predicate(v.lo == hdr.canary.id, v.hi == md.again_id);"),
	   "r_id's id_reduce and id_bcast answer with the stateful ALU's predicate, no action returns a constant "
	   "(%d predicates, %d constants)", preds, consts);
	ok(constant(src, "ID_HELD") == pred(0, 0) && constant(src, "ID_NEW") == pred(1, 0) &&
		   constant(src, "ID_SAME") == pred(0, 1),
	   "REDUCE answers as the predicate of (lo == 0, lo == id): held %ld, new %ld, same %ld",
	   constant(src, "ID_HELD"), constant(src, "ID_NEW"), constant(src, "ID_SAME"));
	ok(constant(src, "ID_NONE") == pred(0, 0) && constant(src, "ID_FIRST") == pred(1, 0) &&
		   constant(src, "ID_AGAIN") == pred(0, 1) && constant(src, "ID_BOTH") == pred(1, 1) &&
		   strstr(src, "md.id_res == ID_FIRST || md.id_res == ID_BOTH") &&
		   strstr(src, "md.id_res == ID_AGAIN && hdr.canary.children[1:1] == 1"),
	   "BCAST answers as the predicate of (lo == id, hi == again_id); both counts as the first broadcast, "
	   "the broadcast again only when marked");

	/* again_id: set by the parser for a BCAST marked again, the mark being wire.h's bit */
	const char *sel = strstr(src, "transition select(hdr.canary.opcode, hdr.canary.children[1:1])");
	const char *again = strstr(src, "state parse_again {");
	const char *again_end = again ? strstr(again, "}") : NULL;
	const char *set = again ? strstr(again, "md.again_id = hdr.canary.id;") : NULL;

	ok(EMU_CANARY_BCAST_AGAIN == 1u << 1 && sel && strstr(sel, "(OP_BCAST, 1): parse_again;") &&
		   count(src, "md.again_id = hdr.canary.id;") == 1 && set && set < again_end &&
		   strstr(src, "v.hi == md.again_id"),
	   "again_id: the BCAST's id only when marked again (children bit 1, wire.h's EMU_CANARY_BCAST_AGAIN), "
	   "set by the parser, compared with hi");
	free(src);
	return done_testing();
}
