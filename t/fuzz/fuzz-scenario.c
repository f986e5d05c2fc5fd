// SPDX-License-Identifier: MIT
/*
 * DOC: fuzz-scenario.c - whole scenarios on tiny fabrics: what the option
 * and topology parsers accept is built and run, so that a value they let
 * through but the model cannot represent (a rate whose frames take less
 * than a picosecond, an MTU below the algorithm's packets, a latency near
 * 2^64 ps) shows up as a crash, a hang or a sanitizer report.
 *
 * The input is text. Its first line is a topology spec, or "file": then
 * the lines up to one that is "--" are a topology file. Each further line
 * is "NAME VALUE" with NAME one of rate, retx-timeout, loss, elements,
 * size, hosts, algo, timeout, fail, sketch, concurrent; values go through
 * the same parsers as canary-emu's options. Bounded: fabrics of at most 48
 * nodes, at most 16 KiB per host, 200 us of emulated time, one worker, and
 * retransmission timeouts either refused (below any frame's time) or at
 * least 1 us.
 *
 * Properties besides memory safety: the run either is refused with a
 * reason or ends, exact or saying why it did not.
 */
#include <errno.h>

#include "emu/engine/fabric.h"
#include "emu/scenario.h"
#include "emu/units.h"
#include "topologies/topo.h"
#include "t/fuzz/fuzz.h"

#define MAX_NODES 48

/* next_line - the next line of @in (NUL-terminated in place), or NULL at the end */
static char *next_line(char **in)
{
	char *s = *in, *nl;

	if (!s || !*s)
		return NULL;
	nl = strchr(s, '\n');
	if (nl) {
		*nl = '\0';
		*in = nl + 1;
	} else {
		*in = NULL;
	}
	return s;
}

/* option - apply "NAME VALUE" to @c; bad values are ignored (canary-emu refuses them) */
static void option(struct emu_scn_cfg *c, const char *name, const char *v)
{
	uint64_t u;
	emu_time_t t;
	double p;

	if (!strcmp(name, "rate") && !emu_parse_rate(v, &u))
		c->rate_bps = u;
	else if (!strcmp(name, "retx-timeout") && !emu_parse_time(v, &t) && (t < 6 || t >= EMU_US))
		c->retx_timeout = t;
	else if (!strcmp(name, "loss") && !emu_parse_prob(v, &p) && p < 1)
		c->loss = p;
	else if (!strcmp(name, "elements") && !emu_parse_u64(v, &u) && u >= 1 && u <= 256)
		c->elements = (unsigned)u;
	else if (!strcmp(name, "size") && !emu_parse_size(v, &u) && u >= 4 && u % 4 == 0 && u <= 16384)
		c->size_bytes = u;
	else if (!strcmp(name, "hosts") && !emu_parse_u64(v, &u) && u >= 1 && u <= MAX_NODES)
		c->hosts = (uint32_t)u;
	else if (!strcmp(name, "algo"))
		c->algo = !strcmp(v, "ring") ? LH_ALGO_RING : !strcmp(v, "static") ? LH_ALGO_STATIC : LH_ALGO_CANARY;
	else if (!strcmp(name, "timeout") && !emu_parse_time(v, &t) && t > 0)
		c->timeout = t;
	else if (!strcmp(name, "fail") && c->nfail < EMU_SCN_MAX_FAIL && !emu_fail_parse(v, &c->fail[c->nfail]))
		c->nfail++;
	else if (!strcmp(name, "sketch") && !emu_parse_u64(v, &u) && u <= LH_SKETCH_MAX)
		c->sketch = (unsigned)u;
	else if (!strcmp(name, "concurrent") && !emu_parse_u64(v, &u) && u >= 1 && u <= 4)
		c->concurrent = (unsigned)u;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *in = text, *line, err[512] = "";
	struct emu_scn_cfg c;
	struct emu_scn_result r;

	memcpy(text, data, size);
	text[size] = '\0';
	emu_scenario_defaults(&c);
	c.hosts = 4;
	c.size_bytes = 4096;
	c.background = false;
	c.workers = 1;
	c.limit = 200 * EMU_US;
	c.stall = 100 * EMU_US;
	c.mem_available = 256u << 20;
	c.algo = LH_ALGO_CANARY;
	c.ntrees = 1;
	line = next_line(&in);
	if (!line)
		goto out;
	if (!strcmp(line, "file")) {
		char *body = in, *end = body;

		/* the topology file: up to a line "--" */
		while (end && *end && strncmp(end, "--\n", 3) && strcmp(end, "--")) {
			char *nl = strchr(end, '\n');

			end = nl ? nl + 1 : end + strlen(end);
		}
		size_t n = end ? (size_t)(end - body) : strlen(body ? body : "");

		c.topology = fz_file((const uint8_t *)body, n);
		in = end && *end ? end + (end[2] == '\n' ? 3 : 2) : NULL;
		FUZZ_CHECK(c.topology);
	} else {
		c.topology = line;
	}
	/* tiny fabrics only: the run's cost must not follow the input's numbers */
	struct emu_fabric *fab = emu_topo_load(c.topology, err, sizeof(err));

	if (!fab) {
		FUZZ_CHECK(err[0]);
		goto out;
	}
	bool tiny = fab->nnodes <= MAX_NODES;

	emu_fabric_destroy(fab);
	if (!tiny)
		goto out;
	while ((line = next_line(&in))) {
		char *sp = strchr(line, ' ');

		if (sp) {
			*sp = '\0';
			option(&c, line, sp + 1);
		}
	}
	if (c.loss > 0)
		c.lossy = true;
	int rc = emu_scenario_run(&c, &r, err, sizeof(err));

	if (rc) {
		FUZZ_CHECK(rc == -EINVAL || rc == -ENOSPC || rc == -ENOMEM);
		FUZZ_CHECK(err[0]);
		goto out;
	}
	FUZZ_CHECK(r.exact || r.stuck[0]);
	emu_scenario_result_fini(&r);
out:
	free(text);
	return 0;
}
