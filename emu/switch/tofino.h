/* SPDX-License-Identifier: MIT */
/*
 * DOC: tofino.h - the Tofino resource model.
 *
 * A profile says what one switch pipeline offers; emu_tofino_need() computes
 * what the Canary switch program needs for a run's configuration, and
 * emu_tofino_report() prints it in the spirit of bf-p4c's resource summary
 * (used / available / %), marking every line over budget. A run whose
 * program does not fit refuses to start.
 *
 * What the program needs (paper sec. 4, 5.1):
 *   stateful ALUs  one per element of a pass (the same ALUs serve every
 *                  pass) + one per other descriptor register: id, counter,
 *                  hosts, leader address, first arrival + state (one
 *                  register, as hw/canary.p4 compiled with bf-p4c needs),
 *                  the children bitmap (one 32-bit register per 32
 *                  ports), and the ECMP action selector. 32 elements on a
 *                  32-port switch: 32 + 7 = 39 of 48, as hw/canary.p4
 *                  compiled with bf-p4c and as the paper's prototype.
 *   stages         the dependency chain of hw/canary.p4: r_id, then the
 *                  descriptor registers, then counter + elements +
 *                  selector: 11 of 12 for that configuration.
 *   passes         ceil(elements / elements_per_pass); each extra pass is a
 *                  recirculation through the pipeline (the emulated switch
 *                  charges it against the pipeline's packet rate).
 *   SRAM           every register array holds one 32-bit word per
 *                  descriptor; 4 words per 128-bit SRAM row, 1024 rows per
 *                  block; plus the port one-hot table and the multicast
 *                  shard table of sec. 4.2.
 *   multicast      2^(p/s) * s group entries for p ports in s shards.
 *
 * The adaptive timeout (--timeout adaptive, rule in canary_sw.h) adds one
 * stateful ALU: r_ato (the timeout Q per allreduce and role, 512 x 32 bit).
 * Every Canary frame reads it in the stage after the leader_local lookup
 * that gives the role (bf-p4c refuses a register a table's two actions
 * index differently), beside r_id: a REDUCE gets now + Q - floor, which
 * the descriptor's state register keeps instead of the first arrival, so
 * the clock packet's test needs no extra register; a broadcast gets Q,
 * which it adds to its switch field for the hosts' window (a saturating
 * add and a min with the ceiling). A straggler (its REDUCE finds the
 * descriptor flushed) and a broadcast that frees a descriptor each leave a
 * 64 B mirror copy through the loopback port, which comes back as a sample
 * packet (one more logical table, the mirror session) and steps r_ato up
 * or down. The first stage then holds no ALU and the second two, which the
 * stage count follows: 12 stages with ECMP, as hw/canary.p4 compiled; 13
 * with the adaptive next hop (bf-p4c: 15), which does not fit tofino1.
 */
#ifndef EMU_TOFINO_H
#define EMU_TOFINO_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct tofino_profile {
	const char *name;
	unsigned stages;
	unsigned salu_per_stage;
	unsigned elements_per_pass;
	uint32_t max_descriptors;
	unsigned tables_per_stage;
	unsigned sram_blocks_per_stage;	/* 1024 x 128 b each */
	unsigned max_ports;
	uint64_t mcast_entries;		/* multicast group entries */
	double pipe_gpps;		/* packets per ns per pipeline (recirculation budget) */
	unsigned ports_per_pipe;
	bool unbounded;
};

struct emu_tofino_need {
	unsigned elements;
	unsigned passes;
	unsigned ports;
	unsigned shards;
	uint32_t descriptors;
	unsigned salu;
	unsigned salu_regs;		/* stateful ALUs other than elements */
	bool adaptive;			/* adaptive next hop (3 stateful ALUs) */
	bool adaptive_timeout;		/* adaptive timeout (1 stateful ALU) */
	unsigned stages;
	unsigned tables;
	uint64_t sram_blocks;
	uint64_t mcast_entries;
	bool fits;
	char why[160];			/* first resource over budget */
};

/* emu_tofino_profile_get - profile by name (tofino1, tofino2, unbounded), or NULL. */
const struct tofino_profile *emu_tofino_profile_get(const char *name);

/*
 * emu_tofino_need - what the program needs for @elements per packet, a table of
 * @descriptors, @ports switch ports and @shards multicast shards (0: the
 * smallest count that fits). Sets ->fits and ->why.
 */
void emu_tofino_need(const struct tofino_profile *p, unsigned elements, uint32_t descriptors, unsigned ports,
		 unsigned shards, bool adaptive, struct emu_tofino_need *out);

/* emu_tofino_need_ato - emu_tofino_need(), plus the adaptive timeout if @adaptive_timeout. */
void emu_tofino_need_ato(const struct tofino_profile *p, unsigned elements, uint32_t descriptors, unsigned ports,
		     unsigned shards, bool adaptive, bool adaptive_timeout, struct emu_tofino_need *out);

/* emu_tofino_report - the bf-p4c-style table, over-budget lines marked "<-- over". */
void emu_tofino_report(FILE *f, const struct tofino_profile *p, const struct emu_tofino_need *n);

#endif /* EMU_TOFINO_H */
