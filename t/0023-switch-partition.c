// SPDX-License-Identifier: MIT
/*
 * DOC: a descriptor table split among more tenants than it has slots
 * (--table per-tenant with --descriptors below --concurrent). The slot of
 * a block was tenant x (descriptors / tenants) + ..., past the end of the
 * table once the share rounded to 0 (found by the switch fuzz target; the
 * command line reached it too, a heap overflow under ASan). Now the
 * command line refuses it with a message naming the options (exit 2), and
 * the switch model refuses to start with such a configuration; a table of
 * exactly one slot per tenant still gives exact results.
 */
#include <errno.h>

#include "script.h"
#include "shell.h"

#define EMU "emu/canary-emu"
#define SMALL " --topology fattree2:leaves=2,spines=1,hosts=4 --hosts 6 --size 1KiB --elements 1 --algo canary --no-progress"

int main(void)
{
	plan(5);

	int rc = sh(EMU SMALL " --descriptors 1 --concurrent 3 --table per-tenant");

	ok(rc == 2 && strstr(sh_out, "--table per-tenant") && strstr(sh_out, "--descriptors 3"),
	   "1 descriptor for 3 tenants: exit 2, naming --table per-tenant and --descriptors 3 (exit %d)", rc);
	rc = sh(EMU SMALL " --descriptors 3 --concurrent 3 --table per-tenant");
	ok(rc == 0 && strstr(sh_out, "every allreduce exact on every host"),
	   "3 descriptors for 3 tenants: runs, exact (exit %d)", rc);
	rc = sh(EMU SMALL " --descriptors 1 --concurrent 3");
	ok(rc == 0 && strstr(sh_out, "every allreduce exact on every host"),
	   "1 descriptor for 3 tenants, hashed table: runs, exact (exit %d)", rc);

	/* the model itself: partition 3 over 1 slot does not start */
	struct emu_sw_cfg cfg = {
		.descriptors = 1, .timeout = EMU_US, .timer = EMU_SW_TIMER_EXACT, .passes = 1, .ports_per_pipe = 16,
		.partition = 3,
	};
	struct emu_engine_cfg ec = { .workers = 1, .seed = 1 };
	struct script sc[2] = { { .ntx = 0 } };
	struct emu_fabric *fab = star(2);
	uint32_t lip = fab->nodes[fab->hosts[0]].ipv4;

	sc[1].tx[0] = reduce_frame(0, lip, 2u << 24 | 5, 1, 2, 1, 1);	/* tenant 2: slot 2 of a 1-slot table */
	sc[1].ntx = 1;
	struct emu_engine *eng = t_engine(fab, &ec);

	emu_engine_set_model(eng, 0, &emu_sw_ops, &cfg);
	for (unsigned i = 0; i < 2; i++)
		emu_engine_set_model(eng, 1 + i, &script_ops, &sc[i]);
	is_int(emu_engine_run(eng), -EINVAL, "a switch with partition 3 over 1 descriptor refuses to start");
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);

	cfg.partition = 1;
	fab = star(2);
	eng = t_engine(fab, &ec);
	emu_engine_set_model(eng, 0, &emu_sw_ops, &cfg);
	for (unsigned i = 0; i < 2; i++)
		emu_engine_set_model(eng, 1 + i, &script_ops, &sc[i]);
	ok(emu_engine_run(eng) == 0 && emu_sw_stats_of(emu_engine_node(eng, 0))->allocated == 1,
	   "...partition 1 over 1 descriptor starts and takes the block");
	emu_engine_destroy(eng);
	emu_fabric_destroy(fab);
	return done_testing();
}
