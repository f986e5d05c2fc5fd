// SPDX-License-Identifier: MIT
/*
 * DOC: runs that do not fit in memory, and runs cut short.
 *  - The estimate (what a run allocates at least, before it allocates it)
 *    against a given amount: refused with -ENOMEM and a message that says
 *    what it needs, what is available and what to reduce, naming the
 *    largest part (per-host allreduce state, input tables, the fabric).
 *  - The estimate is a lower bound: whole runs (Canary, and the ring under
 *    loss, which keeps what it sent) peak above it.
 *  - canary-emu: a run larger than any machine (27648 hosts x 3 GiB) exits
 *    2 at once with that message; under an address-space limit (ulimit -v)
 *    raised in 10 MiB steps the estimate refuses the run, then allocations
 *    fail during it, then it fits: the first two exit 2 with one line, none
 *    aborts (it used to be SIGABRT,
 *    "fatal: emu_xcalloc"). The allocators' and libhost's out-of-memory
 *    path is forced directly too. Not under the sanitizers (their shadow
 *    memory does not fit an address-space limit; they abort on a failed
 *    allocation themselves).
 *  - --time-limit and --stall end a run with its report (text, JSON, one
 *    and two processes): the rows are there, not exact, exit status 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/scenario.h"
#include "emu/engine/frame.h"
#include "emu/engine/util.h"
#include "emu/engine/xbar.h"
#include "libhost/canary_host.h"
#include "libhost/lh_util.h"
#include "shell.h"
#include "tap.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

#define EMU "emu/canary-emu"
#define SMALL " --topology fattree2:leaves=2,spines=2,hosts=2 --hosts 4 --size 8KiB --elements 32 --no-progress"

static void base(struct emu_scn_cfg *c)
{
	emu_scenario_defaults(c);
	c->topology = "fattree2:leaves=4,spines=2,hosts=4";
	c->hosts = 8;
	c->size_bytes = 64 * 1024;
	c->background = false;
	c->workers = 1;
	c->algo = LH_ALGO_CANARY;
}

/* refused with @avail bytes: -ENOMEM, the message has @want; *@est the estimate */
static void refused(struct emu_scn_cfg *c, uint64_t avail, const char *want, const char *what)
{
	struct emu_scn_result r;
	char err[512] = "";

	c->mem_available = avail;
	int rc = emu_scenario_run(c, &r, err, sizeof(err));

	ok(rc == -ENOMEM && strstr(err, "the run needs at least") && strstr(err, "are available (given)") &&
	   strstr(err, want) && r.mem_estimate > avail,
	   "%s, %llu bytes available: refused before it allocates, \"%s\"", what, (unsigned long long)avail, want);
	if (rc != -ENOMEM || !strstr(err, want))
		diag("rc %d: %s", rc, err);
	if (!rc)
		emu_scenario_result_fini(&r);
}

/* a whole run: exact, and its peak RSS is at least the estimate */
static void lower_bound(struct emu_scn_cfg *c, const char *what)
{
	struct emu_scn_result r;
	char err[256];

	c->mem_available = 0;
	int rc = emu_scenario_run(c, &r, err, sizeof(err));

	ok(rc == 0 && r.exact && r.mem_estimate > 0 && r.peak_rss >= r.mem_estimate,
	   "%s: exact; peak RSS %.1f MiB >= the estimate %.1f MiB", what, rc ? 0.0 : (double)r.peak_rss / (1 << 20),
	   rc ? 0.0 : (double)r.mem_estimate / (1 << 20));
	if (rc)
		diag("%s", err);
	else
		emu_scenario_result_fini(&r);
}

/* in a child: @fn, which must end the process; its exit status, -1 for a signal */
static int child(void (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		FILE *null = freopen("/dev/null", "w", stderr);

		(void)null;	/* the one line it prints is not the test's output */
		fn();
		_exit(99);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -2;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * The sizes come through a volatile so that the compiler (inlining the
 * allocators with link-time optimization) cannot see the overflow and warn.
 */
static volatile size_t huge_n = SIZE_MAX / 8;

static void huge_calloc(void)
{
	void *p = emu_xcalloc(huge_n, 16);	/* overflows */

	(void)p;
}

static void huge_malloc(void)
{
	void *p = emu_xmalloc(SIZE_MAX / 2);

	(void)p;
}

static void lh_default(void)
{
	void *p = lh_xcalloc(huge_n, 16);	/* overflows */

	(void)p;
}

/* frame chunks until the address space (limited to 512 MiB) runs out: it used to abort */
static void pool_exhausted(void)
{
	struct rlimit rl;
	struct emu_pool p;

	if (getrlimit(RLIMIT_AS, &rl))
		_exit(98);
	rl.rlim_cur = 512u << 20;
	if (setrlimit(RLIMIT_AS, &rl))
		_exit(98);
	emu_pool_init(&p);
	for (;;)
		emu_pool_grow(&p, EMU_FCLASS_MAX);
}

static void lh_handled(void)
{
	lh_set_out_of_memory(emu_out_of_memory);
	lh_default();
}

/* lh_xzalloc_lines of a size that wraps when rounded up to a line: the handler, not a short block */
static void lh_lines_wrap(void)
{
	lh_set_out_of_memory(emu_out_of_memory);
	void *p = lh_xzalloc_lines(huge_n * 8 + 7);	/* SIZE_MAX */

	free(p);
	_exit(0);
}

int main(void)
{
	struct emu_scn_cfg c;

	plan(26);

	/* 1. the estimate against a given amount, the largest part named */
	base(&c);
	c.topology = "fattree2:leaves=8,spines=8,hosts=8";
	c.hosts = 64;
	c.size_bytes = 512 << 20;	/* more than 256 MiB: no input tables */
	refused(&c, 64 << 20, "reduce --size or --hosts", "canary, 64 hosts x 512 MiB (per-host state)");
	base(&c);
	c.algo = LH_ALGO_RING;
	c.loss = 0.01;
	c.size_bytes = 8 << 20;
	refused(&c, 64 << 20, "the ring keeps what it sent", "ring under loss, 8 hosts x 8 MiB (copies of what it sent)");
	base(&c);
	c.hosts = 2;
	c.size_bytes = 64 << 20;
	refused(&c, 16 << 20, "reduce --size or --concurrent", "canary, 2 hosts x 64 MiB (input tables)");
	base(&c);
	c.topology = "fattree3:k=16";
	c.hosts = 2;
	c.size_bytes = 1024;
	refused(&c, 1 << 20, "reduce the fabric", "fattree3:k=16, 2 hosts x 1 KiB (the fabric)");
	{
		struct lh_ar_cfg ar = { .algo = LH_ALGO_RING, .elements = 256, .reliable = true };
		size_t m = lh_allreduce_mem(&ar, 8, 1 << 20);

		ok(m >= 2 * (1 << 20) * 4 * 7 / 8 && m < 3 * (1 << 20) * 4,
		   "lh_allreduce_mem: a reliable ring of 4 MiB among 8 keeps about 7/4 of it (%zu bytes)", m);
		ar.reliable = false;
		ok(lh_allreduce_mem(&ar, 8, 1 << 20) < m / 10, "...an unreliable one much less (%zu bytes)",
		   lh_allreduce_mem(&ar, 8, 1 << 20));
		ar.elements = 0;
		is_u64(lh_allreduce_mem(&ar, 8, 1 << 20), 0, "...0 for a configuration lh_allreduce() refuses");
	}

	{
		/* libhost's line-aligned allocation (its per-frame structs are laid out by lines) */
		static const size_t sz[] = { 1, 63, 64, 512, 552, 1416 };
		bool aligned = true, zero = true;

		for (size_t k = 0; k < sizeof(sz) / sizeof(sz[0]); k++) {
			unsigned char *p = lh_xzalloc_lines(sz[k]);

			memset(p, 0xa5, sz[k]);
			free(p);
			p = lh_xzalloc_lines(sz[k]);	/* most likely the block just freed */
			aligned &= (uintptr_t)p % 64 == 0;
			for (size_t i = 0; i < sz[k]; i++)
				zero &= p[i] == 0;
			unsigned char *q = lh_xzalloc_lines(sz[k]);	/* and one beside it */

			aligned &= (uintptr_t)q % 64 == 0;
			for (size_t i = 0; i < sz[k]; i++)
				zero &= q[i] == 0;
			free(p);
			free(q);
		}
		ok(aligned, "lh_xzalloc_lines: every block starts on a 64-byte line");
		ok(zero, "...zeroed, also where a freed block was filled");
	}

	/* 2. the estimate is a lower bound of what whole runs use */
	base(&c);
	c.size_bytes = 1 << 20;
	lower_bound(&c, "canary, 8 hosts x 1 MiB");
	base(&c);
	c.algo = LH_ALGO_RING;
	c.loss = 0.001;
	c.size_bytes = 4 << 20;
	lower_bound(&c, "ring under 0.1 % loss, 8 hosts x 4 MiB");
	base(&c);
	c.router = EMU_ROUTER_MERLIN;
	c.size_bytes = 1 << 20;
	lower_bound(&c, "canary under --router merlin, 8 hosts x 1 MiB");
	{
		/* the merlin router's state: 4 leaves of 6 ports, 2 spines of 4 */
		struct emu_scn_result r[2];
		char err[256];
		int rc[2];

		for (int m = 0; m < 2; m++) {
			base(&c);
			c.router = m ? EMU_ROUTER_MERLIN : EMU_ROUTER_FIFO;
			c.mem_available = 1;	/* refused: the estimate without the run */
			rc[m] = emu_scenario_run(&c, &r[m], err, sizeof(err));
		}
		ok(rc[0] == -ENOMEM && rc[1] == -ENOMEM &&
		   r[1].mem_estimate - r[0].mem_estimate == 4 * emu_xbar_mem_estimate(6) + 2 * emu_xbar_mem_estimate(4),
		   "--router merlin counts each switch's input and output state (%llu bytes more)",
		   (unsigned long long)(r[1].mem_estimate - r[0].mem_estimate));
	}

	/* 3. canary-emu: larger than any machine */
	int rc = sh(EMU " --topology fattree3:k=48 --hosts 27648 --size 3GiB --algo canary --no-progress");

	ok(rc == 2 && strstr(sh_out, "the run needs at least") && strstr(sh_out, "reduce --size or --hosts") &&
	   !strchr(strchr(sh_out, '\n') ? strchr(sh_out, '\n') + 1 : "", '\n'),
	   "27648 hosts x 3 GiB (about 1 TB): exit 2 at once, one line: what it needs and what to reduce");
	if (rc != 2)
		diag("exit %d: %.300s", rc, sh_out);

	/* 4. under an address-space limit, and the out-of-memory path itself */
	if (SANITIZED) {
		skip(9, "sanitizer build: no address-space limit, and failed allocations are the sanitizer's");
	} else {
		bool est = false, oom = false, clean = true, fits = false;
		unsigned mib;

		/* from a limit the estimate refuses up, in 10 MiB steps, until the run fits */
		for (mib = 100; mib <= 2000 && !fits; mib += 10) {
			rc = sh("(ulimit -v %u; exec " EMU " --topology fattree2:leaves=8,spines=8,hosts=8 --hosts 64 "
				"--size 64MiB --algo canary --workers 1 --no-progress --time-limit 5us)", mib << 10);
			bool e = strstr(sh_out, "the run needs at least") && strstr(sh_out, "(ulimit -v)");
			bool o = strstr(sh_out, "canary-emu: out of memory (allocating");

			est |= rc == 2 && e;
			oom |= rc == 2 && o;
			fits = rc == 1 && strstr(sh_out, "STUCK");	/* stopped at 5 us */
			if (rc < 0 || rc > 2 || strstr(sh_out, "fatal") || (rc == 2 && !e && !o) || (rc == 1 && !fits)) {
				clean = false;
				diag("ulimit -v %u MiB: exit %d: %.300s", mib, rc, sh_out);
			}
		}
		ok(clean && fits, "64 hosts x 64 MiB under ulimit -v from 100 MiB up: no run aborts; fits from %u MiB",
		   mib - 10);
		ok(est, "...a small limit: refused by the estimate, naming ulimit -v");
		ok(oom, "...a limit the estimate passes but the run outgrows: \"out of memory\", exit 2");
		rc = child(huge_calloc);
		ok(rc == 2, "emu_xcalloc of more than the address space: exit 2, no abort (%d)", rc);
		rc = child(huge_malloc);
		ok(rc == 2, "emu_xmalloc of half the address space: exit 2 (%d)", rc);
		rc = child(pool_exhausted);
		ok(rc == 2, "frame memory exhausted (emu_pool_grow under ulimit -v): exit 2, no abort (%d)", rc);
		rc = child(lh_default);
		ok(rc == -1, "libhost alone: its allocator aborts (a library has no exit status to choose)");
		rc = child(lh_handled);
		ok(rc == 2, "libhost with canary-emu's handler (lh_set_out_of_memory): exit 2 (%d)", rc);
		rc = child(lh_lines_wrap);
		ok(rc == 2, "lh_xzalloc_lines of SIZE_MAX (wraps when rounded to a line): the handler, exit 2 (%d)", rc);
	}

	/* 5. --time-limit and --stall end a run with its report */
	rc = sh(EMU SMALL " --algo canary,ring --time-limit 2us");
	ok(rc == 1 && strstr(sh_out, "  canary ") && strstr(sh_out, "  ring ") && strstr(sh_out, "STUCK") &&
	   strstr(sh_out, "# result: NOT all exact"),
	   "--time-limit 2us: exit 1, the text report with both rows (STUCK)");
	rc = sh(EMU SMALL " --algo canary,ring --time-limit 2us --json 2>/dev/null | python3 -c 'import json, sys; "
		"j = json.load(sys.stdin); r = j[\"runs\"]; "
		"sys.exit(0 if len(r) == 2 and not any(x[\"result_exact\"] for x in r) and "
		"all(0 < x[\"emulated_ns\"] <= 2000 for x in r) else 3)'; s=(${PIPESTATUS[@]}); exit $((s[0] * 10 + s[1]))");
	ok(rc == 10, "--time-limit --json: the JSON report of both runs, not exact, stopped "
	   "by 2 us (exit %d)", rc);
	rc = sh(EMU SMALL " --algo canary,ring --fail switch:L0@3us --stall 200us --processes 2 --json 2>/dev/null | "
		"python3 -c 'import json, sys; j = json.load(sys.stdin); r = j[\"runs\"]; "
		"sys.exit(0 if len(r) == 2 and not any(x[\"result_exact\"] for x in r) else 3)'; "
		"s=(${PIPESTATUS[@]}); exit $((s[0] * 10 + s[1]))");
	ok(rc == 10, "--stall, 2 processes, --json: the report of both runs, not exact (exit %d)", rc);
	return done_testing();
}
