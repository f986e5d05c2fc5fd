// SPDX-License-Identifier: MIT
/*
 * DOC: canary-emu as a user meets it: bad options and topology files get a
 * one-line reason naming the option or FILE:LINE and exit status 2; a
 * scenario that cannot finish exits 1 and says where it is stuck; the JSON
 * report has the documented keys and agrees with the text summary; the
 * default comparison has the four algorithms with exact results;
 * --resources prints 39 of 48 stateful ALUs with ECMP (81.25 %) and 42 with adaptive routing (87.50 %), as
 * hw/canary.p4 compiled; a pcap reads back through tshark
 * and the Lua dissector with the right fields.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shell.h"
#include "tap.h"

#define EMU "emu/canary-emu"
#define SMALL " --topology fattree2:leaves=2,spines=2,hosts=2 --hosts 4 --size 8KiB --elements 32 --no-progress"



static void bad_opt(const char *args, const char *expect)
{
	int rc = sh(EMU " %s", args);

	ok(rc == 2 && strstr(sh_out, expect), "'%s' -> exit 2 and \"%s\"", args, expect);
	if (rc != 2 || !strstr(sh_out, expect))
		diag("exit %d, said: %s", rc, sh_out);
}

static void bad_file(const char *body, const char *expect)
{
	char path[] = "/tmp/canary-topo-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, body, strlen(body)) < 0) {
		ok(0, "temp file");
		return;
	}
	close(fd);
	int rc = sh(EMU " --topology %s --algo canary", path);
	char want[256];

	snprintf(want, sizeof(want), "%s:%s", path, expect);
	ok(rc == 2 && strstr(sh_out, want), "topology file -> exit 2 and \"FILE:%s\"", expect);
	if (rc != 2 || !strstr(sh_out, want))
		diag("exit %d, said: %s", rc, sh_out);
	unlink(path);
}

/* the command's output is exactly one line */
static bool one_line(void)
{
	char *nl = strchr(sh_out, '\n');

	return nl && nl[1] == 0;
}

static void one_line_error(const char *args, const char *expect)
{
	int rc = sh(EMU " %s", args);

	ok(rc == 2 && one_line() && strstr(sh_out, expect), "'%s' -> exit 2, one line: \"%s\"", args, expect);
	if (rc != 2 || !one_line() || !strstr(sh_out, expect))
		diag("exit %d, said: %s", rc, sh_out);
}

/* a number of the run's JSON report: after its "scenario" object, whose values are strings */
static double json_num(const char *key)
{
	char k[64];
	const char *p = strstr(sh_out, "\"resolved\": ");

	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(p ? p : sh_out, k);
	return p ? atof(p + strlen(k)) : -1;
}

/* limits named, write errors, escaping */
static void hardening(void)
{
	bad_opt("--size 4GiB", "--size: 4294967296 bytes are 4194304 blocks of 256 elements; with --max-failures 3 at "
			       "most 3435973632 bytes fit");
	bad_opt("--size 64MiB --elements 1 --max-failures 1000", "with --max-failures 1000 at most 66972 bytes fit");
	bad_opt("--algo ring,canary --size 256MiB --elements 1", "--size: 268435456 bytes");
	bad_opt("--coordinator tcp://127.0.0.1:99999 --rank 0 --ranks 2", "--coordinator: 'tcp://127.0.0.1:99999'");
	bad_opt(SMALL " --drop H1/0#3 --drop H1/0#22", "--drop: H1/0 is given twice (one lost frame per port)");
	bad_opt("--coordinator tcp://:5555 --rank 1 --ranks 2", "--coordinator");

	/* topology files: words past the 32nd, a NUL byte, a directory, bytes that are not printable */
	char many[1024] = "switch L0\nhost H0\nhost H1\nlink H0 L0\nlink H1 L0";

	for (int i = 0; i < 29; i++)
		strcat(many, " rate=1G");
	strcat(many, " bogus=1\n");
	bad_file(many, "5: more than 32 words");
	bad_file("switch L0\nhost H\033[31mX\nhost H1\n", "2: byte 0x1b at column 7 is not printable ASCII");
	ok(!strchr(sh_out, '\033'), "a topology file's bytes are not echoed to the terminal");
	{
		char path[] = "/tmp/canary-topo-XXXXXX";
		int fd = mkstemp(path);
		static const char body[] = "switch L0\nhost H0\0zz\nhost H1\nlink H0 L0\nlink H1 L0\n";

		if (fd >= 0 && write(fd, body, sizeof(body) - 1) > 0) {
			close(fd);
			int rc = sh(EMU " --topology %s --algo canary", path);

			ok(rc == 2 && strstr(sh_out, ":2: a NUL byte at column 8"), "a NUL byte in a topology file: FILE:2, exit 2");
			unlink(path);
		} else {
			ok(0, "temp file");
		}
	}
	bad_opt("--topology /tmp --algo canary", "--topology: cannot read '/tmp': Is a directory");

	/* --stall 0: no watchdog; the run below stops by itself (--stall 200us would stop it at 203 us) */
	int rc = sh(EMU SMALL " --algo canary --fail switch:L0@3us --stall 0 --time-limit 1ms");

	ok(rc == 1 && strstr(sh_out, "without their whole result") && !strstr(sh_out, "no block completed since"),
	   "--stall 0 turns the watchdog off (exit 1: stuck, not stalled)");
	if (rc != 1)
		diag("exit %d: %s", rc, sh_out);

	/*
	 * A host that goes down and comes back resumes: the timers that came
	 * due while it was down fire when it returns (they used to be lost and
	 * the run stalled). Every algorithm finishes exact.
	 */
	static const char *const windows[] = { "10us-30us", "50us-80us" };

	for (int i = 0; i < 2; i++) {
		rc = sh(EMU " --topology fattree2:leaves=4,spines=4,hosts=4 --hosts 16 --size 256KiB --algo canary,ring,static:2 "
			"--no-progress --fail node:H5@%s", windows[i]);
		ok(rc == 0 && strstr(sh_out, "every allreduce exact"),
		   "--fail node:H5@%s (down, then back): every algorithm finishes exact", windows[i]);
		if (rc)
			diag("exit %d: %s", rc, sh_out);
	}

	/*
	 * The soak's finding: static trees, 1 % loss, a host down 3-22 us. A
	 * leader that fell back got the tree's result, stopped asking, and
	 * waited forever for the data of a host that had the result too.
	 */
	rc = sh(EMU " --topology fattree2:leaves=4,spines=4,hosts=4 --hosts 13 --size 64KiB --algo static:4 "
		"--seed 620809633 --loss 0.01 --background none --concurrent 2 --fail node:H11@3us-22us --no-progress");
	ok(rc == 0 && strstr(sh_out, "every allreduce exact"),
	   "static:4, 1%% loss, two tenants, H11 down 3-22 us: finishes exact");
	if (rc)
		diag("exit %d: %s", rc, sh_out);

	/*
	 * Utilization is busy time within the run: links busy to the end
	 * showed 1.0019-1.0051 here (the last frame counted whole).
	 */
	rc = sh("for s in 1 2 3 4 5; do " EMU " --topology fattree2:leaves=4,spines=4,hosts=4 --size 64KiB --algo canary,ring "
		"--seed $s --no-progress --json || exit 1; done | python3 -c 'import json, sys; d = json.JSONDecoder(); "
		"t = sys.stdin.read().strip(); u = []\nwhile t:\n j, n = d.raw_decode(t); t = t[n:].strip(); "
		"u += [max(r[\"link_util\"]) for r in j[\"runs\"]]\nprint(\"%%d runs, busiest link %%.4f\" %% (len(u), max(u))); "
		"sys.exit(0 if len(u) == 10 and 0.99 < max(u) <= 1 else 3)'");
	ok(rc == 0, "busy links to the end of 10 runs: utilization at most 1 (%s)", strtok(sh_out, "\n"));

	/* a report that cannot be written is a failure with a message */
	static const char *const outs[] = { "--json", "--csv", "" };

	for (int i = 0; i < 3; i++) {
		rc = sh(EMU SMALL " --algo canary %s > /dev/full", outs[i]);
		ok(rc == 1 && strstr(sh_out, "cannot write the report to standard output: No space left on device"),
		   "report%s%s to /dev/full: exit 1 and says so, with the errno", *outs[i] ? " " : "", outs[i]);
	}
	rc = sh(EMU " --help > /dev/full");
	ok(rc == 1 && strstr(sh_out, "cannot write --help or --version to standard output: No space left") && one_line(),
	   "--help to /dev/full: exit 1 and says so");
	rc = sh(EMU " --version > /dev/full");
	ok(rc == 1 && strstr(sh_out, "No space left on device") && one_line(),
	   "--version to /dev/full: exit 1 and says so");

	static const char *const infos[] = { "--resources", "--curve-keygen /tmp/canary-cli-keys --ranks 2" };

	sh("rm -rf /tmp/canary-cli-keys");	/* --curve-keygen does not overwrite keys */
	for (int i = 0; i < 2; i++) {
		rc = sh(EMU " %s > /dev/full", infos[i]);
		ok(rc == 1 && strstr(sh_out, "cannot write the") && strstr(sh_out, "No space left on device") && one_line(),
		   "%s to /dev/full: exit 1 and one line says so", infos[i]);
	}
	sh("rm -rf /tmp/canary-cli-keys");
	/* one line, once: not a table, not once per local rank */
	rc = sh(EMU SMALL " --algo canary --descriptors 16777216");
	ok(rc == 2 && one_line() && strstr(sh_out, "descriptors: 16777216 requested, 32768 available"),
	   "--descriptors 16777216: one line, exit 2");
	rc = sh(EMU SMALL " --algo canary --descriptors 16777216 --processes 8");
	ok(rc == 2 && one_line(), "...with --processes 8: once, not once per rank");
	if (!one_line())
		diag("%s", sh_out);
	rc = sh(EMU SMALL " --algo canary --processes 16");
	ok(rc == 2 && one_line() && strstr(sh_out, "--workers"), "--processes 16 on 8 nodes: one line, exit 2");
	/*
	 * SIGINT during the second run (the wall clock stretches them: 1 KiB
	 * ends within about 1 s, 1 MiB would take 17 s at least): --json and
	 * --csv print the run that finished, still valid, exit 130. The signal
	 * goes once a progress line (5 s into the second run; the first is too
	 * short to print one) says the first run is over, however slow the
	 * machine.
	 */
	static const char *const fmt[] = { "--json", "--csv", "--json" };
	static const char *const check[] = {
		"j = json.load(sys.stdin); r = j[\"runs\"]; sys.exit(0 if len(r) == 1 and r[0][\"algo\"] == \"canary\" "
		"and r[0][\"size_bytes\"] == 1024 and r[0][\"result_exact\"] else 3)",
		"r = list(csv.DictReader(l for l in sys.stdin if l[0] != \"#\")); sys.exit(0 if len(r) == 1 and r[0][\"algo\"] == \"canary\" "
		"and r[0][\"size_bytes\"] == \"1024\" else 3)",
	};
	/* SIGTERM (what kill and timeout send) keeps them too: 128 + 15 */
	static const char *const sig[] = { "INT", "INT", "TERM" };
	static const char *const end[] = { "status 130 0", "status 130 0", "status 143 0" };

	for (int i = 0; i < 3; i++) {
		/* the last run's progress file goes first: the loop could read it before the shell truncates it */
		rc = sh("rm -f /tmp/canary-cli-int.%d.err; "
			EMU " --topology fattree2:leaves=8,spines=8,hosts=8 --hosts 64 --elements 16 --workers 1 "
			"--background none --algo canary --size 1KiB:1MiB:x1024 --clock wall --dilation 100000 --progress %s "
			"> /tmp/canary-cli-int.%d 2> /tmp/canary-cli-int.%d.err & p=$!; "
			"until grep -q '^canary-emu: canary:' /tmp/canary-cli-int.%d.err || ! kill -0 $p 2>/dev/null; do sleep 0.1; done; "
			"kill -%s $p; wait $p; s=$?; cat /tmp/canary-cli-int.%d.err; python3 -c 'import csv, json, sys; "
			"%s' < /tmp/canary-cli-int.%d; echo status $s $?", (int)getpid(), fmt[i], (int)getpid(), (int)getpid(),
			(int)getpid(), sig[i], (int)getpid(), check[i % 2], (int)getpid());
		ok(rc == 0 && strstr(sh_out, end[i]) &&
		   strstr(sh_out, "interrupted: the report has the 1 run(s) that finished"),
		   "SIG%s in the second run with %s: the first run's report, valid, exit %.3s", sig[i], fmt[i],
		   end[i] + 7);
		if (!strstr(sh_out, end[i]))
			diag("%s", sh_out);
	}
	sh("rm -f /tmp/canary-cli-int.%d /tmp/canary-cli-int.%d.err", (int)getpid(), (int)getpid());
	rc = sh(EMU SMALL " --algo canary --pcap /dev/full > /dev/null");
	ok(rc == 1 && strstr(sh_out, "--pcap: writing '/dev/full' failed"), "--pcap /dev/full: exit 1 and says so");
	if (rc != 1)
		diag("exit %d: %s", rc, sh_out);

	/* a topology path with a quote, a backslash and a byte that is not UTF-8 */
	const char *body = "switch L0\nhost H0\nhost H1\nlink H0 L0\nlink H1 L0\n";
	char path[] = "/tmp/canary-q\"b\\\xff-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, body, strlen(body)) < 0) {
		ok(0, "temp file");
		ok(0, "temp file");
		return;
	}
	close(fd);
	FILE *f = fopen("/tmp/canary-cli-topo.path", "w");

	if (f) {
		fputs(path, f);
		fclose(f);
	}
	rc = sh(EMU " --topology \"$(cat /tmp/canary-cli-topo.path)\" --hosts 2 --size 4KiB --elements 16 --algo canary "
		"--no-progress --json | perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>); "
		"binmode STDOUT, \":utf8\"; print $j->{runs}[0]{topology}, \"\\n\"'");
	char want[64];

	snprintf(want, sizeof(want), "/tmp/canary-q\"b\\\xef\xbf\xbd-%s\n", path + strlen(path) - 6);
	ok(rc == 0 && !strcmp(sh_out, want), "--json: a quote, a backslash and a non-UTF-8 byte in the topology path "
					     "give valid JSON (the byte as U+FFFD)");
	if (rc || strcmp(sh_out, want))
		diag("exit %d: %s", rc, sh_out);
	rc = sh(EMU " --topology \"$(cat /tmp/canary-cli-topo.path)\" --hosts 2 --size 4KiB --elements 16 --algo canary "
		"--no-progress --csv | tail -1 | cut -d, -f2");
	snprintf(want, sizeof(want), "\"/tmp/canary-q\"\"b\\\xff-%s\"\n", path + strlen(path) - 6);
	ok(rc == 0 && !strcmp(sh_out, want), "--csv: the quote in the topology path is doubled");
	if (rc || strcmp(sh_out, want))
		diag("exit %d: %s", rc, sh_out);
	unlink(path);
	unlink("/tmp/canary-cli-topo.path");
}

int main(void)
{
	int rc;

	plan(58 + 33 + 3 + 28 + 3);

	/* options */
	bad_opt("--hosts abc", "--hosts");
	bad_opt("--hosts 0", "--hosts");
	bad_opt("--size 3", "--size");
	bad_opt("--priority high", "--priority: 'high' is not none, recovery or collective");
	bad_opt("--elements 0", "--elements");
	bad_opt("--elements 300", "--elements");
	bad_opt("--algo foo", "--algo");
	bad_opt("--algo static:0", "--algo");
	bad_opt("--routing zigzag", "--routing");
	bad_opt("--timeout 5", "--timeout");
	bad_opt("--loss 2", "--loss");
	bad_opt("--workers 0", "--workers");
	bad_opt("--fail switch:S0", "--fail");
	bad_opt("--profile tofino9", "--profile");
	bad_opt("--frobnicate", "unknown option");
	bad_opt("--topology fattree9:k=4", "--topology");
	bad_opt("--topology fattree2:leaves=0", "--topology");
	bad_opt("--topology fattree3:k=3", "--topology");
	bad_opt("--topology /nonexistent/file", "cannot open");
	bad_opt("--hosts 5000 --algo canary", "--hosts");
	bad_opt(SMALL " --algo canary --fail switch:S9@1us", "--fail");
	ok(sh(EMU SMALL " --algo static:1 --hosts 9") == 2 && strstr(sh_out, "--hosts") && !strstr(sh_out, "algo,") &&
	   !strstr(sh_out, "# algo"), "an input error found by the scenario prints the reason only, no empty report");

	/* errors are one line naming the option, with a hint; conventions */
	one_line_error("--frobnicate", "unknown option '--frobnicate' (canary-emu --help lists them)");
	one_line_error("--size", "--size: needs a value (BYTES; see canary-emu --help)");
	one_line_error("--json=yes", "--json: takes no value");
	one_line_error("--json --csv", "--csv: cannot be combined with --json");
	one_line_error("--csv --no-progress --json", "--json: cannot be combined with --csv");
	one_line_error("--lossy --lossless --loss 0.01", "--lossless: cannot be combined with --lossy (one flow control)");
	one_line_error("--lossless", "--lossless: only applies with --loss P (the fabric is lossless without it)");
	one_line_error("--lossless --loss 0", "--lossless: only applies with --loss P (the fabric is lossless without it)");
	one_line_error("--elements 300", "--elements: '300' is not in 1..256");
	one_line_error("stray", "unexpected argument 'stray'");
	rc = sh(EMU " --version");
	ok(rc == 0 && !strncmp(sh_out, "canary-emu ", 11) && one_line(), "--version: one line, exit 0 (%.*s)",
	   (int)strcspn(sh_out, "\n"), sh_out);
	rc = sh(EMU " -h");
	ok(rc == 0 && !strncmp(sh_out, "usage: canary-emu", 17) && strstr(sh_out, "--topology SPEC") &&
	   strstr(sh_out, "canary-emu(1)"), "-h: the option list, pointing at canary-emu(1), exit 0");
	char *h = strdup(sh_out);

	ok(sh(EMU " --help") == 0 && h && !strcmp(h, sh_out), "--help is the same as -h");
	free(h);

	/* topology files */
	bad_file("switch L0\nhost H0\nhost H1\nlink H0 L0:0\nlink H1 L0:0\n", "5: port 0 of L0 is used twice");
	bad_file("switch L0\nhost H0\nhost H1\nlink H0 L0\n", "3: host H1 has no link");
	bad_file("switch L0\nhost H0\nlink H0 L0 rate=0\n", "3: bad rate '0'");

	/* quantities: a unit, and a range the model represents (rates, MTUs, latencies) */
	bad_opt("--rate 100", "--rate: '100' is not a rate with a unit in 1Mbps..100Tbps");
	bad_opt("--rate 10000T", "--rate: '10000T' is not a rate with a unit in 1Mbps..100Tbps");
	bad_opt("--xbar-bw 120", "--xbar-bw");
	bad_opt("--topology fattree2:rate=10", "--topology: fattree2: bad value '10' for rate (a rate with a unit");
	bad_opt("--topology fattree3:k=4,rate=10000T", "--topology: fattree3: bad value '10000T' for rate");
	bad_opt("--topology fattree2:mtu=4294967282", "--topology: fattree2: mtu=4294967282 is not in 64..2034");
	bad_opt("--topology fattree2:mtu=4294968796", "--topology: fattree2: mtu=4294968796 is not in 64..2034");
	bad_opt("--topology fattree2:latency=300", "--topology: fattree2: bad value '300' for latency");
	bad_opt("--topology fattree2:latency=2s", "latency 2.000 s is more than 1 s");
	bad_file("defaults rate=100\nswitch L0\nhost H0\nlink H0 L0\n", "1: bad rate '100' (a rate with a unit");
	bad_file("switch L0\nhost H0\nlink H0 L0 rate=10000T\n", "3: bad rate '10000T'");
	bad_file("switch L0\nhost H0\nlink H0 L0 mtu=4294967282\n", "3: mtu 4294967282 is not in 64..2034");
	bad_file("switch L0\nhost H0\nlink H0 L0 mtu=4294968796\n", "3: mtu 4294968796 is not in 64..2034");
	/* the smallest MTU that works: 19 + 4 x elements (Canary), 44 + 4 x elements (ring) */
	bad_opt("--topology fattree2:leaves=2,spines=2,hosts=2,mtu=1042 --hosts 4 --size 8KiB --algo canary",
		"--elements 256: Canary frames need an MTU of at least 1043 bytes, but link H0-L0 has 1042; use an mtu "
		"of 1043 or more, or --elements 255 or fewer");
	bad_opt("--topology fattree2:leaves=2,spines=2,hosts=2,mtu=1067 --hosts 4 --size 8KiB --algo ring",
		"--elements 256: ring frames need an MTU of at least 1068 bytes");
	ok(sh(EMU " --topology fattree2:leaves=2,spines=2,hosts=2,mtu=1043 --hosts 4 --size 8KiB --algo canary,static:2 "
	      "--no-progress") == 0 &&
	   sh(EMU " --topology fattree2:leaves=2,spines=2,hosts=2,mtu=1068 --hosts 4 --size 8KiB --algo ring --no-progress") == 0,
	   "...with those MTUs the runs are exact");
	/* a retransmission timeout shorter than a data frame's time on the wire livelocked (millions of resends) */
	bad_opt(SMALL " --algo canary --retx-timeout 1ns",
		"--retx-timeout: 1.000 ns is shorter than one Canary data frame (161 bytes) takes on a 100 Gb/s link "
		"(14.800 ns)");
	bad_opt(SMALL " --algo ring --retx-timeout 5ns --rate 10G", "--retx-timeout: 5.000 ns is shorter than one ring");
	ok(sh(EMU SMALL " --algo canary --retx-timeout 15ns") == 0, "...--retx-timeout of one frame time runs, exact");
	rc = sh("libhost/tools/canary-allreduce --rate 1");
	ok(rc == 2 && strstr(sh_out, "--rate: '1' is not a rate with a unit"), "canary-allreduce --rate 1: exit 2, no unit");
	if (rc != 2)
		diag("exit %d: %s", rc, sh_out);
	bad_file("switch L0\nswitch L1\nhost H0\nhost H1\nlink H0 L0\nlink H1 L1\n", "2: the fabric is not connected");
	bad_file("switch L0\nhost H0\nwire H0 L0\n", "3: unknown declaration 'wire'");
	bad_file("switch L0\nhost H0\nlink H0 L9\n", "3: no switch or host named 'L9'");

	/* a good file runs */
	{
		char path[] = "/tmp/canary-topo-XXXXXX";
		int fd = mkstemp(path);
		const char *body = "# two leaves, one spine\ndefaults rate=100G latency=300ns\n"
				   "switch L0 level=1\nswitch L1 level=1\nswitch S0 level=2\n"
				   "host H0\nhost H1\nhost H2\nhost H3\n"
				   "link H0 L0\nlink H1 L0\nlink H2 L1\nlink H3 L1\nlink L0 S0\nlink L1 S0 latency=500ns\n";

		if (fd >= 0 && write(fd, body, strlen(body)) > 0) {
			close(fd);
			rc = sh(EMU " --topology %s --hosts 4 --size 4KiB --elements 16 --algo canary,ring --no-progress", path);

			ok(rc == 0 && strstr(sh_out, "every allreduce exact"), "a topology file runs: exact, exit 0");
			unlink(path);
		} else {
			ok(0, "temp file");
		}
	}

	/* exit status 1: cannot finish in time */
	rc = sh(EMU SMALL " --algo canary --time-limit 2us");

	ok(rc == 1 && strstr(sh_out, "without their whole result"), "a run that cannot finish: exit 1, says where it is stuck");
	rc = sh(EMU SMALL " --algo canary --fail switch:L0@3us --stall 200us");
	ok(rc == 1 && strstr(sh_out, "no block completed since"), "a run that stops making progress: exit 1 after --stall");

	/* JSON */
	rc = sh(EMU SMALL " --algo canary --json");
	static const char *const keys[] = {
		"algo", "hosts", "size_bytes", "runtime_ns", "goodput_gbps", "result_exact", "stragglers", "collisions",
		"restorations", "retransmissions", "fallbacks", "link_util", "emulated_ns", "wall_s", "frame_hops",
		"frame_hops_per_s", "workers", "peak_rss_bytes",
	};
	bool all = rc == 0;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		char k[64];

		snprintf(k, sizeof(k), "\"%s\":", keys[i]);
		if (!strstr(sh_out, k)) {
			diag("missing JSON key %s", keys[i]);
			all = false;
		}
	}
	ok(all, "--json has every key README.md names");
	ok(strstr(sh_out, "\"result_exact\": true") && json_num("hosts") == 4 && json_num("size_bytes") == 8192,
	   "--json: exact, 4 hosts, 8192 bytes");
	double rt = json_num("runtime_ns"), gp = json_num("goodput_gbps");

	ok(rt > 0 && gp > 0 && gp > 8192 * 8 / rt * 0.999 && gp < 8192 * 8 / rt * 1.001,
	   "--json: goodput = size x 8 / runtime (%.3f Gb/s, %.1f ns)", gp, rt);
	FILE *jf = fopen("/tmp/canary-cli.json", "w");

	if (jf) {
		fputs(sh_out, jf);
		fclose(jf);
	}
	ok(sh("perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>)->{runs}[0]; exit(@{$j->{link_util}} == 2 * 8 ? 0 : 1)' "
	      "< /tmp/canary-cli.json") == 0, "--json parses (JSON::PP) and link_util has one entry per directed link");
	ok(sh("perl -MJSON::PP -e 'local $/; my $j = decode_json(<STDIN>)->{runs}[0]; my ($l, $u) = ($j->{links}, $j->{link_util}); "
	      "exit 1 unless @$l == @$u; for my $i (0 .. $#$l) { exit 2 unless $l->[$i]{util} == $u->[$i] && "
	      "$l->[$i]{from} =~ m{^[A-Z]\\d+/\\d+$} && $l->[$i]{to} =~ m{^[A-Z]\\d+/\\d+$} } "
	      "exit($l->[0]{from} eq \"H0/0\" && $l->[0]{to} eq \"L0/0\" && $l->[1]{from} eq \"L0/0\" ? 0 : 3)' "
	      "< /tmp/canary-cli.json") == 0,
	   "--json links: one {from, to, util} per directed link, util = link_util's, both ends NODE/PORT (H0/0 -> L0/0 first)");
	/* the same run as text agrees */
	rc = sh(EMU SMALL " --algo canary");
	char want[64];

	snprintf(want, sizeof(want), "%.2f", rt / 1000);
	ok(rc == 0 && strstr(sh_out, want), "the text summary shows the same runtime (%s us)", want);

	/* the default comparison, on a small fabric */
	rc = sh(EMU " --topology fattree2:leaves=4,spines=4,hosts=4 --size 64KiB --no-progress");
	int rows = 0;
	const char *names[] = { "ring ", "static:1 ", "static:4 ", "canary " };

	for (int i = 0; i < 4; i++) {
		char *p = strstr(sh_out, names[i]);

		if (p && strstr(p, " yes "))
			rows++;
	}
	ok(rc == 0 && rows == 4, "default algorithms: ring, static:1, static:4, canary, all exact");
	ok(strstr(sh_out, "# canary-emu: fattree2:leaves=4,spines=4,hosts=4, 16 hosts, links 100 Gb/s, 300 ns per hop, "
			  "buffer 128 KiB per port, adaptive routing, lossless (credits)\n") &&
	   strstr(sh_out, "# allreduce: 8 hosts (50 %), 64 KiB per host, 256 elements/packet; switches: timeout 1.000 us") &&
	   strstr(sh_out, "# router: fifo (one egress queue per port and traffic class)\n") &&
	   strstr(sh_out, "# background: uniform, 64 KiB messages, from the other 8 hosts (50 %), each offering its line "
			  "rate (back to back)\n"),
	   "the header names the fabric (rate, latency, buffer, routing), the switch model, the allreduce and the "
	   "background");
	ok(strstr(sh_out, "time(us)") && !strstr(sh_out, "µ") && strstr(sh_out, "# ar: allreduce (tenant);") && strstr(sh_out, "ldr-rx:") &&
	   strstr(sh_out, "fallbk: blocks reduced at the leader") && strstr(sh_out, "mean over the busy ones"),
	   "times in us (no µ, as nccl-tests); a legend for the abbreviated columns and the link figures");

	/* the header names the flow control the run used: --lossless keeps credits under --loss */
	rc = sh(EMU " --topology fattree2:leaves=2,spines=2,hosts=2 --size 4KiB --algo canary --background none "
		"--no-progress --loss 0.001 --lossless");
	ok(rc == 0 && strstr(sh_out, ", adaptive routing, lossless (credits) + injected loss\n"),
	   "--loss --lossless: the header says lossless (credits) + injected loss");
	rc = sh(EMU " --topology fattree2:leaves=2,spines=2,hosts=2 --size 4KiB --algo canary --background none "
		"--no-progress --loss 0.001");
	ok(rc == 0 && strstr(sh_out, ", adaptive routing, lossy (drop-tail) + injected loss\n"),
	   "--loss alone: lossy (drop-tail) + injected loss");

	/* the adaptive timeout starts from --timeout's value within the floor and ceiling */
	rc = sh(EMU " --topology fattree2:leaves=4,spines=4,hosts=4 --size 4KiB --algo canary --background none "
		"--no-progress --routing ecmp --timeout 20us --timeout adaptive:200ns-2us");
	ok(rc == 0 && strstr(sh_out, "switches: timeout adaptive 200.000 ns-2.000 us from 2.000 us "),
	   "--timeout 20us --timeout adaptive:200ns-2us: the header shows the start the switches take (2 us)");
	rc = sh(EMU " --topology fattree2:leaves=4,spines=4,hosts=4 --size 4KiB --algo canary --background none "
		"--no-progress --routing ecmp --json --timeout 50ns --timeout adaptive");
	ok(rc == 0 && strstr(sh_out, "\"floor_ns\": 200.000, \"ceil_ns\": 8000.000, \"start_ns\": 200.000,"),
	   "--timeout 50ns --timeout adaptive: JSON start_ns is the floor (200 ns)");
	/* on tofino1 the adaptive timeout fits beside ECMP only, as hw/canary.p4 compiles */
	rc = sh(EMU " --topology fattree2:leaves=4,spines=4,hosts=4 --size 4KiB --algo canary --background none "
		"--no-progress --timeout adaptive");
	ok(rc == 2 && strstr(sh_out, "MAU stages: 13 needed, 12 available") && strstr(sh_out, "--routing ecmp"),
	   "--timeout adaptive with the adaptive next hop on tofino1: refused (exit 2), the fix named");
	rc = sh(EMU " --topology fattree2:leaves=4,spines=4,hosts=4 --size 4KiB --algo canary --background none "
		"--no-progress --timeout adaptive --profile tofino2");
	ok(rc == 0 && strstr(sh_out, "switches: timeout adaptive ") && strstr(sh_out, ", profile tofino2;") &&
	   strstr(sh_out, "adaptive timeout: mean ") && strstr(sh_out, "result: every allreduce exact"),
	   "--timeout adaptive with the adaptive next hop on tofino2: runs adaptive, its figures shown, exact");

	/* resources */
	rc = sh(EMU " --resources --elements 32 --routing ecmp --topology fattree2:leaves=16,spines=16,hosts=16");
	ok(rc == 0 && strstr(sh_out, "81.25%") && strstr(sh_out, "fits"), "--resources: the paper's prototype configuration at 81.25%% (39 of 48)");
	rc = sh(EMU " --resources --elements 32 --topology fattree2:leaves=16,spines=16,hosts=16");
	ok(rc == 0 && strstr(sh_out, "87.50%") && strstr(sh_out, "adaptive routing") && strstr(sh_out, "fits"),
	   "--resources: with adaptive routing (the default) 87.50%% (42 of 48)");
	rc = sh(EMU " --resources --descriptors 65536");
	ok(rc == 2 && strstr(sh_out, "<-- over"), "--resources past the budget: exit 2, the line marked");
	rc = sh(EMU " --resources --descriptors 65536 2>&1 >/dev/null");
	ok(rc == 2 && one_line() && strstr(sh_out, "canary-emu: the switch program does not fit tofino1: "),
	   "--resources past the budget: one line on stderr says why (the table is on stdout)");

	/* pcap through tshark and the Lua dissector */
	if (sh("command -v tshark") != 0) {
		skip(8, "tshark not installed");
	} else {
		rc = sh(EMU " --algo canary --topology fattree2:leaves=2,spines=1,hosts=2 --hosts 4 --size 2KiB --elements 8 "
			"--background none --no-progress --pcap /tmp/canary-cli.pcap --pcap-links L0/0");
		ok(rc == 0, "--pcap run");
		rc = sh("tshark -X lua_script:hw/wireshark/canary.lua -r /tmp/canary-cli.pcap -T fields -e canary.opcode "
			"-e canary.seq -e canary.counter -e canary.hosts -e canary.elements -e eth.type | grep -v '^Running'");
		/* H0 (rank 0) sends blocks 1,2,3,5,6,7 to their leaders: REDUCE, counter 1 of 4, 8 elements */
		ok(rc == 0 && strstr(sh_out, "1\t1\t1\t4\t8\t0x88b5") && strstr(sh_out, "1\t7\t1\t4\t8\t0x88b5") &&
		   strstr(sh_out, "\t8\t"), "tshark decodes opcode, id, counter, hosts, elements from the pcap");
		if (rc != 0)
			diag("%s", sh_out);
		/* pcapng: one interface per captured link direction, named by its ends; a node captures all its links */
		rc = sh(EMU " --algo canary --topology fattree2:leaves=2,spines=1,hosts=2 --hosts 4 --size 2KiB --elements 8 "
			"--background none --no-progress --pcap /tmp/canary-cli.pcapng --pcap-links L0,S0/1 && "
			"capinfos -I /tmp/canary-cli.pcapng | grep -E 'Number of interfaces|Name = ' | tr -s ' ' && "
			"tshark -X lua_script:hw/wireshark/canary.lua -r /tmp/canary-cli.pcapng -T fields "
			"-e frame.interface_name -e canary.opcode | grep -v '^Running' | sort | uniq -c | sort -k2");
		ok(rc == 0 && strstr(sh_out, "Number of interfaces in file: 8\n") &&
		   strstr(sh_out, "Name = L0/0->H0/0\n Name = L0/1->H1/0\n Name = L0/2->S0/0\n Name = L1/2->S0/1\n"
				  " Name = S0/0->L0/2\n Name = S0/1->L1/2\n Name = H0/0->L0/0\n Name = H1/0->L0/1\n"),
		   "--pcap-links L0,S0/1: pcapng with 8 interfaces, one per link direction, named FROM->TO as JSON names "
		   "links");
		bool each = rc == 0;
		static const char *const ifn[] = { "H0/0->L0/0\t1", "L0/0->H0/0\t2", "L0/2->S0/0\t1", "S0/0->L0/2\t2",
						    "L1/2->S0/1\t1", "S0/1->L1/2\t2" };

		for (size_t i = 0; i < sizeof(ifn) / sizeof(ifn[0]); i++)
			each = each && strstr(sh_out, ifn[i]);
		ok(each, "tshark and the dissector decode every interface: reduce frames (1) up, broadcasts (2) down");
		if (!each)
			diag("%s", sh_out);
		one_line_error("--algo canary --topology fattree2:leaves=2,spines=1,hosts=2 --hosts 4 --size 2KiB "
			       "--no-progress --pcap /tmp/canary-cli.pcapng --pcap-links L0,X9",
			       "--pcap-links: no node named 'X9'");
		/* ring frames carry the collective DSCP (the class --priority collective serves first) */
		rc = sh(EMU " --algo ring --topology fattree2:leaves=2,spines=1,hosts=2 --hosts 4 --size 2KiB --elements 8 "
			"--background none --no-progress --pcap /tmp/canary-cli-ring.pcap --pcap-links L0/0 && "
			"tshark -r /tmp/canary-cli-ring.pcap -T fields -e ip.dsfield.dscp -e ip.checksum.status "
			"-o ip.check_checksum:TRUE | sort | uniq -c");
		ok(rc == 0 && strstr(sh_out, " 46\t1") && !strstr(sh_out, "\t0"),
		   "tshark: ring frames carry DSCP 46 and a good IPv4 checksum");
		if (rc != 0 || !strstr(sh_out, " 46\t1"))
			diag("%s", sh_out);
		/* a lost ring frame: the NACK and the data sent again carry the recovery DSCP (48) */
		rc = sh(EMU " --algo ring --topology fattree2:leaves=2,spines=1,hosts=2 --hosts 4 --size 2KiB --elements 8 "
			"--background none --no-progress --drop H1/0#3 --pcap /tmp/canary-cli-ring.pcap && "
			"tshark -r /tmp/canary-cli-ring.pcap -T fields -e ip.dsfield.dscp -e ip.checksum.status "
			"-o ip.check_checksum:TRUE | sort | uniq -c");
		ok(rc == 0 && strstr(sh_out, " 46\t1") && strstr(sh_out, " 48\t1") && !strstr(sh_out, "\t0"),
		   "tshark: a ring's NACK and resent data carry DSCP 48, the rest 46");
		if (rc != 0 || !strstr(sh_out, " 48\t1"))
			diag("%s", sh_out);
		/* the run id: every Canary frame of the run carries it, the dissector shows it */
		rc = sh(EMU " --algo canary --topology fattree2:leaves=2,spines=1,hosts=2 --hosts 4 --size 2KiB --elements 8 "
			"--background none --no-progress --run-id 3 --pcap /tmp/canary-cli.pcap && "
			"tshark -X lua_script:hw/wireshark/canary.lua -r /tmp/canary-cli.pcap -T fields -e canary.run "
			"-e canary.opcode | grep -v '^Running' | sort | uniq -c");
		ok(rc == 0 && strstr(sh_out, " 3\t1\n") && strstr(sh_out, " 3\t2\n") && !strstr(sh_out, " 0\t") &&
		   !strstr(sh_out, " 1\t") && !strstr(sh_out, " 2\t"),
		   "--run-id 3: every Canary frame in the pcap carries run id 3 (canary.run), REDUCE and BCAST alike");
		if (rc != 0)
			diag("%s", sh_out);
	}
	/* a sweep's runs carry consecutive run ids, modulo 4 */
	rc = sh(EMU " --algo canary --topology fattree2:leaves=2,spines=1,hosts=2 --hosts 4 --size 2KiB --elements 8 "
		"--background none --no-progress --seeds 1-3 --run-id 3 --json 2>/dev/null | grep -E '\"(run_id|other_run_frames)\"' "
		"| tr -d ' \n'");
	ok(rc == 0 && !strcmp(sh_out, "\"run_id\":3,\"other_run_frames\":0,\"run_id\":0,\"other_run_frames\":0,"
				      "\"run_id\":1,\"other_run_frames\":0,"),
	   "--seeds 1-3 --run-id 3: the runs carry run ids 3, 0, 1; no frame of another run");
	if (rc != 0)
		diag("%s", sh_out);
	one_line_error("--run-id 4", "--run-id: '4' is not a run id in 0..3");
	hardening();
	return done_testing();
}
