// SPDX-License-Identifier: MIT
/*
 * DOC: a run split over processes (ranks) talking ZeroMQ gives the
 * single-process JSON, field for field except wall time, speed, workers,
 * memory and the ZeroMQ traffic itself: for 2, 3 and 4 local processes
 * (--processes) and for ranks started one by one with different worker
 * counts (--rank/--ranks/--coordinator), with background traffic, loss,
 * failures, dropped frames, noise and concurrent tenants; also with CURVE.
 * Faults: a rank killed mid-run or frozen (SIGSTOP) stops the others
 * within seconds with a message naming it, exit 1 and no report; a rank
 * with another scenario is refused (exit 2); malformed and foreign join
 * messages and CURVE clients with unknown keys are refused and counted;
 * the message header and event-record checks refuse every malformed case.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "emu/engine/chan.h"
#include "emu/dist/dist.h"
#include "emu/engine/engine.h"
#include "emu/engine/event.h"
#include "emu/engine/frame.h"
#include "shell.h"
#include "tap.h"

#define EMU "emu/canary-emu"
/* lines that may differ between a single-process and a distributed run */
#define VOLATILE "wall_s|frame_hops_per_s|queue_events|\"workers\"|peak_rss|mem_estimate|distributed|partition|dilation|lag_ns|kept_up"

static char dir[64];


static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int port_base(void)
{
	return 20000 + (int)(getpid() % 20000);
}

/* the same scenario, one process vs split ways; compare the filtered JSON */
static void same_results(const char *name, const char *args)
{
	int rc1 = sh(EMU " %s --json --workers 1 --no-progress > %s/one.json", args, dir);

	ok(rc1 == 0 || rc1 == 1, "%s: single process runs (exit %d)", name, rc1);
	if (rc1 != 0 && rc1 != 1)
		diag("%s", sh_out);
	for (unsigned p = 2; p <= 4; p++) {
		int rc = sh(EMU " %s --json --processes %u --no-progress > %s/p.json", args, p, dir);

		if (rc != rc1)
			diag("exit %d vs %d: %s", rc, rc1, sh_out);
		int same = sh("diff <(grep -vE '%s' %s/one.json) <(grep -vE '%s' %s/p.json) > /dev/null && "
			      "grep -q '\"ranks\": %u' %s/p.json", VOLATILE, dir, VOLATILE, dir, p, dir);

		ok(rc == rc1 && same == 0, "%s: --processes %u gives the single-process results", name, p);
	}
	/* ranks started one by one with 1, 2 and 1 workers */
	int port = port_base() + 11;
	int rc = sh("(" EMU " %s --json --rank 1 --ranks 3 --workers 2 --coordinator tcp://127.0.0.1:%d > /dev/null 2>&1 &"
		    " " EMU " %s --json --rank 2 --ranks 3 --workers 1 --coordinator tcp://127.0.0.1:%d > /dev/null 2>&1 &"
		    " " EMU " %s --json --rank 0 --ranks 3 --workers 1 --coordinator tcp://127.0.0.1:%d --no-progress > %s/r.json;"
		    " s=$?; wait; exit $s)", args, port, args, port, args, port, dir);
	int same = sh("diff <(grep -vE '%s' %s/one.json) <(grep -vE '%s' %s/r.json)", VOLATILE, dir, VOLATILE, dir);

	ok(rc == rc1 && same == 0, "%s: ranks with 1+2+1 workers give the single-process results", name);
	if (same)
		diag("%s", sh_out);
}

static void check_headers(void)
{
	struct emu_dist_hdr h = {
		.magic = EMU_DIST_MAGIC, .version = EMU_DIST_VERSION, .type = EMU_DIST_WINDOW,
		.run_id = 77, .rank = 1, .len = 8,
	};
	size_t len = sizeof(h) + 8;

	ok(emu_dist_check_header(&h, len, 77, 3, 0) == NULL, "header: a good WINDOW passes");
	ok(emu_dist_check_header(&h, 10, 77, 3, 0) != NULL, "header: shorter than a header is refused");
	ok(emu_dist_check_header(&h, len + 1, 77, 3, 0) != NULL, "header: length mismatch is refused");
	ok(emu_dist_check_header(&h, len, 78, 3, 0) != NULL, "header: another run id is refused");
	h.rank = 3;
	ok(emu_dist_check_header(&h, len, 77, 3, 0) != NULL, "header: rank out of range is refused");
	h.rank = 0;
	ok(emu_dist_check_header(&h, len, 77, 3, 0) != NULL, "header: a message from oneself is refused");
	h.rank = 1;
	h.magic ^= 1;
	ok(emu_dist_check_header(&h, len, 77, 3, 0) != NULL, "header: bad magic is refused");
	h.magic ^= 1;
	h.version = 9;
	ok(emu_dist_check_header(&h, len, 77, 3, 0) != NULL, "header: unknown version is refused");
	h.version = EMU_DIST_VERSION;
	h.type = 99;
	ok(emu_dist_check_header(&h, len, 77, 3, 0) != NULL, "header: unknown type is refused");
}

static int ok_node_any(void *arg, uint32_t node, uint32_t port)
{
	(void)arg;
	return node < 10 && port < 4;
}

struct sinkctx {
	struct emu_ev *v;
	unsigned *n;
};

static void sink(void *arg, const struct emu_ev *ev)
{
	struct sinkctx *sc = arg;

	if (*sc->n < 4)
		sc->v[(*sc->n)++] = *ev;
}

/* event records as a remote channel writes them, checked as a receiver does */
static void check_records(void)
{
	struct emu_pool pool;
	struct emu_chan *tx, *rx;
	uint8_t buf[8192];

	emu_pool_init(&pool);
	tx = emu_chan_remote_create(0, 1, &pool);
	rx = emu_chan_remote_create(0, 1, &pool);
	struct emu_frame *f = emu_pool_get(&pool);

	f->len = 77;
	memset(f->data, 0xab, f->len);
	f->user = 42;
	f->hops = 3;
	f->tc = 1;
	struct emu_ev e1 = { .t = 5000, .key = 9, .frame = f, .node = 2, .type = EMU_EV_FRAME, .port = 1 };
	struct emu_ev e2 = { .t = 6000, .key = 10, .arg = 1500, .node = 3, .type = EMU_EV_CREDIT, .port = 0 };

	tx->ops->send(tx, &e1);
	tx->ops->send(tx, &e2);
	/* the buffer went back to the pool: the class must come from the record, not from it */
	struct emu_frame *reuse = emu_pool_get(&pool);

	reuse->tc = 0;
	emu_pool_put(&pool, reuse);
	size_t n = emu_chan_remote_pending(tx);

	ok(n == 32 + 32 + 80 + 32 && emu_chan_remote_min_time(tx) == 5000, "records: %zu bytes, min time 5000", n);
	emu_chan_remote_take(tx, buf);
	ok(emu_chan_remote_check(buf, n, 5000, ok_node_any, NULL) == 2, "records: a good buffer has 2 events");
	ok(emu_chan_remote_check(buf, n, 5001, ok_node_any, NULL) < 0, "records: an event before the window is refused");
	ok(emu_chan_remote_check(buf, n - 8, 0, ok_node_any, NULL) < 0, "records: a truncated buffer is refused");
	ok(emu_chan_remote_check(buf, 40, 0, ok_node_any, NULL) < 0, "records: a cut frame record is refused");
	uint8_t bad[sizeof(buf)];

	memcpy(bad, buf, n);
	uint32_t big = EMU_FRAME_MAX + 8;

	memcpy(bad + 32 + 16, &big, 4);	/* frame length */
	ok(emu_chan_remote_check(bad, n, 0, ok_node_any, NULL) < 0, "records: an oversized frame length is refused");
	memcpy(bad, buf, n);
	uint32_t node = 99;

	memcpy(bad + 24, &node, 4);
	ok(emu_chan_remote_check(bad, n, 0, ok_node_any, NULL) < 0, "records: a node the receiver does not own is refused");
	memcpy(bad, buf, n);
	uint16_t type = EMU_EV_TIMER;

	memcpy(bad + 28, &type, 2);
	ok(emu_chan_remote_check(bad, n, 0, ok_node_any, NULL) < 0, "records: an event type that cannot cross a link is refused");
	memcpy(bad, buf, n);
	bad[32 + 26] = EMU_TC_N;	/* the frame record's traffic class */
	ok(emu_chan_remote_check(bad, n, 0, ok_node_any, NULL) < 0, "records: a traffic class the engine does not have is refused");
	/* and back into events and a frame */
	struct emu_ev got[4];
	unsigned ng = 0;

	emu_chan_remote_feed(rx, buf, n);
	struct sinkctx sc = { got, &ng };

	size_t drained = rx->ops->drain(rx, sink, &sc);

	ok(drained == 2 && ng == 2 && got[0].type == EMU_EV_FRAME && got[0].frame->len == 77 &&
		   got[0].frame->user == 42 && got[0].frame->hops == 3 && got[0].frame->tc == 1 &&
		   got[0].frame->data[76] == 0xab &&
		   got[1].arg == 1500 && got[1].t == 6000 && got[1].key == 10,
	   "records: events, the frame's bytes and its traffic class come back intact");
	if (ng)
		emu_pool_put(&pool, got[0].frame);
	emu_chan_destroy(tx);
	emu_chan_destroy(rx);
	emu_pool_fini(&pool);
}


/* a child rank killed with SIGKILL mid-run */
static void kill_rank(void)
{
	const char *args = "--topology fattree2:leaves=16,spines=16,hosts=16 --size 16MiB --hosts 128 --algo canary "
			   "--background uniform --no-progress";
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), EMU " %s --processes 3 > %s/k.out 2> %s/k.err", args, dir, dir);
	pid_t pid = fork();

	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	usleep(1500000);
	/* the shell's child is rank 0; its children are ranks 1 and 2 */
	int rc = sh("r0=$(pgrep -P %d -f 'canary-emu'); r2=$(pgrep -P $r0 | tail -1); kill -9 $r2 && echo killed $r2",
		    (int)pid);
	double t0 = now_s();
	int st;

	waitpid(pid, &st, 0);
	double dt = now_s() - t0;

	ok(rc == 0 && strstr(sh_out, "killed"), "a child rank was killed mid-run");
	sh("cat %s/k.err; printf 'stdout bytes: '; wc -c < %s/k.out", dir, dir);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "killed rank: exit 1 (status %d)", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	ok(strstr(sh_out, "rank 2") && strstr(sh_out, "killed by signal 9") != NULL, "killed rank: the message names rank 2 and the signal");
	ok(strstr(sh_out, "stdout bytes: 0") != NULL, "killed rank: no report printed");
	/*
	 * rank 0 polls its children every 100 ms while it waits; after a
	 * failure it lingers at most 200 ms. The bound only says "no hang":
	 * 30 s of slack for a loaded or sanitized machine.
	 */
	ok(dt < 0.1 + 0.2 + 30, "killed rank: the others stopped (%.1f s; bound 30.3 s)", dt);
	if (!strstr(sh_out, "rank 2"))
		diag("%s", sh_out);
}

/* a rank frozen with SIGSTOP: the others notice the silence */
static void frozen_rank(void)
{
	const char *args = "--topology fattree2:leaves=16,spines=16,hosts=16 --size 16MiB --hosts 128 --algo canary "
			   "--background uniform --no-progress --peer-timeout 500ms";
	int port = port_base() + 12;
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "(" EMU " %s --rank 1 --ranks 3 --workers 1 --coordinator tcp://127.0.0.1:%d 2> %s/f1.err &"
		 " " EMU " %s --rank 2 --ranks 3 --workers 1 --coordinator tcp://127.0.0.1:%d 2> %s/f2.err & echo $! > %s/f2.pid;"
		 " " EMU " %s --rank 0 --ranks 3 --workers 1 --coordinator tcp://127.0.0.1:%d > %s/f.out 2> %s/f0.err;"
		 " s=$?; kill -9 $(cat %s/f2.pid); wait; exit $s)",
		 args, port, dir, args, port, dir, dir, args, port, dir, dir, dir);
	pid_t pid = fork();

	if (pid == 0) {
		execl("/bin/bash", "bash", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	usleep(1500000);
	sh("kill -STOP $(cat %s/f2.pid)", dir);
	double t0 = now_s();
	int st;

	waitpid(pid, &st, 0);
	double dt = now_s() - t0;

	sh("cat %s/f0.err %s/f1.err; printf 'stdout bytes: '; wc -c < %s/f.out", dir, dir, dir);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "frozen rank: rank 0 exits 1");
	/*
	 * rank 0 may find rank 2 silent itself ("rank 2 stopped answering", or
	 * "rank 1 2" when rank 1 already waits on rank 2 too), or first hear
	 * rank 1's ABORT saying so: either way the message names rank 2
	 */
	ok(strstr(sh_out, "rank 0: distributed run failed: ") && strstr(sh_out, " 2 stopped answering"),
	   "frozen rank: rank 0 names rank 2");
	if (!strstr(sh_out, " 2 stopped answering"))
		diag("%s", sh_out);
	ok(strstr(sh_out, "rank 1: distributed run failed") != NULL, "frozen rank: rank 1 stops too");
	ok(strstr(sh_out, "stdout bytes: 0") != NULL, "frozen rank: no report printed");
	/*
	 * A silent peer is declared dead --peer-timeout (500 ms) after this
	 * rank did its own part of the step (window 0: building the scenario);
	 * then 200 ms of linger. The bound only says "no hang": 30 s of slack.
	 */
	ok(dt < 10 * 0.5 + 0.2 + 30, "frozen rank: stopped %.1f s after the freeze (bound 35.2 s)", dt);
	if (!strstr(sh_out, "rank 2 stopped"))
		diag("%s", sh_out);
}

static void join_errors(void)
{
	const char *args = "--topology fattree2:leaves=4,spines=4,hosts=4 --size 64KiB --hosts 8 --algo canary --no-progress";
	int port = port_base() + 13;

	/*
	 * another scenario: the rank is refused at once (exit 2, says why);
	 * rank 0 keeps waiting (the HELLO could be a stranger's) until its
	 * join deadline (10 x --peer-timeout), then exits 2 naming the refusal
	 */
	int rc = sh("(" EMU " %s --peer-timeout 200ms --rank 0 --ranks 2 --coordinator tcp://127.0.0.1:%d > /dev/null &"
		    " sleep 0.3; " EMU " %s --seed 9 --rank 1 --ranks 2 --coordinator tcp://127.0.0.1:%d; s=$?; wait $!; s0=$?;"
		    " echo statuses $s $s0)", args, port, args, port);
	ok(rc == 0 && strstr(sh_out, "statuses 2 2") && strstr(sh_out, "refused rank 1: a different scenario") &&
	   strstr(sh_out, "the coordinator refused rank 1: a different scenario"),
	   "a rank with another scenario: both exit 2 and say why");
	/* rank 0 waited 10 x --peer-timeout (50 s by default); now one without CURVE */
	double t0 = now_s();

	rc = sh("(" EMU " %s --rank 0 --ranks 2 --coordinator tcp://127.0.0.1:%d > /dev/null &"
		" sleep 0.3; " EMU " %s --seed 9 --rank 1 --ranks 2 --coordinator tcp://127.0.0.1:%d; s=$?; wait $!; s0=$?;"
		" echo statuses $s $s0)", args, port + 30, args, port + 30);
	double dt = now_s() - t0;

	ok(strstr(sh_out, "statuses 2 2") && strstr(sh_out, "the run cannot start: refused rank 1") && dt < 5 + 5,
	   "...rank 0 stops one --peer-timeout (5 s) after the refusal: %.1f s (it waited 50 s)", dt);
	if (!strstr(sh_out, "statuses 2 2"))
		diag("%s", sh_out);
	if (!strstr(sh_out, "statuses 2 2") || !strstr(sh_out, "refused rank 1: a different"))
		diag("%s", sh_out);

	/*
	 * The fingerprint is the parsed scenario and the fabric it builds:
	 * the same options spelt otherwise and in another order join; the
	 * same topology path with other contents does not.
	 */
	int fport = port_base() + 20;

	rc = sh("(" EMU " %s --rank 1 --ranks 2 --coordinator tcp://127.0.0.1:%d > /dev/null &"
		" " EMU " --no-progress --algo=canary --hosts=8 --size=64KiB --topology=fattree2:leaves=4,spines=4,hosts=4"
		" --rank 0 --ranks 2 --coordinator tcp://127.0.0.1:%d; s=$?; wait $!; echo statuses $s $?)", args, fport, fport);
	ok(rc == 0 && strstr(sh_out, "statuses 0 0") && strstr(sh_out, "every allreduce exact"),
	   "the same scenario spelt --opt=value and in another order: the ranks join, the result is exact");
	if (!strstr(sh_out, "statuses 0 0"))
		diag("%s", sh_out);
	fport++;
	sh("printf 'switch L0\\nhost H0\\nhost H1\\nlink H0 L0\\nlink H1 L0\\n' > %s/fp.topo", dir);
	rc = sh("(" EMU " --topology %s/fp.topo --hosts 2 --size 4KiB --algo canary --no-progress --peer-timeout 200ms"
		" --rank 0 --ranks 2 --coordinator tcp://127.0.0.1:%d > /dev/null & sleep 0.5;"
		" printf 'switch L0\\nhost H0\\nhost H1\\nlink H0 L0 latency=1us\\nlink H1 L0\\n' > %s/fp.topo;"
		" " EMU " --topology %s/fp.topo --hosts 2 --size 4KiB --algo canary --no-progress --rank 1 --ranks 2"
		" --coordinator tcp://127.0.0.1:%d; s=$?; wait $!; echo statuses $s $?)", dir, fport, dir, dir, fport);
	ok(strstr(sh_out, "statuses 2 2") && strstr(sh_out, "a different scenario"),
	   "the same topology path with other contents: refused as a different scenario (both exit 2)");
	if (!strstr(sh_out, "statuses 2 2"))
		diag("%s", sh_out);

	/*
	 * a rank built from other sources: a copy of canary-emu whose source
	 * id (the hash of its sources, in the fingerprint) is patched. Its
	 * options are the same; it is refused (it used to join: the
	 * fingerprint covered the protocol version and two struct sizes).
	 */
	rc = sh("python3 -c 'import sys; b = open(\"" EMU "\", \"rb\").read(); k = b\"canary-source-id:\"; "
		"i = b.index(k) + len(k); new = b\"0123456789abcdef\" if b[i:i + 16] != b\"0123456789abcdef\" "
		"else b\"fedcba9876543210\"; open(sys.argv[1], \"wb\").write(b[:i] + new + b[i + 16:])' %s/other-build && "
		"chmod 755 %s/other-build && (" EMU " %s --peer-timeout 200ms --rank 0 --ranks 2 "
		"--coordinator tcp://127.0.0.1:%d > /dev/null & sleep 0.3; %s/other-build %s --rank 1 --ranks 2 "
		"--coordinator tcp://127.0.0.1:%d; s=$?; wait $!; echo statuses $s $?)",
		dir, dir, args, port + 31, dir, args, port + 31);
	ok(strstr(sh_out, "statuses 2 2") && strstr(sh_out, "the coordinator refused rank 1: a different scenario"),
	   "a rank built from other sources (its source id differs) is refused: both exit 2");
	if (!strstr(sh_out, "statuses 2 2"))
		diag("%s", sh_out);

	/* garbage at the coordinator, then a real rank: the run completes, the garbage is counted */
	port++;
	pid_t pid = fork();

	if (pid == 0) {
		char a[512];

		snprintf(a, sizeof(a), EMU " %s --json --rank 0 --ranks 2 --coordinator tcp://127.0.0.1:%d > %s/g.json 2> %s/g.err",
			 args, port, dir, dir);
		execl("/bin/sh", "sh", "-c", a, (char *)NULL);
		_exit(127);
	}
	usleep(300000);
	void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_DEALER);
	char ep[64];
	int linger = 1000;

	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", port);
	zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
	zmq_connect(s, ep);
	struct emu_dist_hdr h = { .magic = EMU_DIST_MAGIC, .version = EMU_DIST_VERSION, .type = EMU_DIST_HELLO, .rank = 1 };
	uint8_t msg[4096] = { 0 };

	zmq_send(s, "xyz", 3, 0);				/* 1: shorter than a header */
	h.magic = 0x12345678;
	memcpy(msg, &h, sizeof(h));
	zmq_send(s, msg, sizeof(h), 0);				/* 2: bad magic */
	h.magic = EMU_DIST_MAGIC;
	h.version = 7;
	memcpy(msg, &h, sizeof(h));
	zmq_send(s, msg, sizeof(h), 0);				/* 3: bad version */
	h.version = EMU_DIST_VERSION;
	h.len = 4000;
	memcpy(msg, &h, sizeof(h));
	zmq_send(s, msg, sizeof(h) + 10, 0);			/* 4: length lies */
	h.len = 10;
	memcpy(msg, &h, sizeof(h));
	zmq_send(s, msg, sizeof(h) + 10, 0);			/* 5: a HELLO of the wrong size */
	h.rank = 5;
	h.len = 0;
	memcpy(msg, &h, sizeof(h));
	zmq_send(s, msg, sizeof(h), 0);				/* 6: rank out of range */
	/*
	 * A stranger's well-formed HELLO (216 bytes: fingerprint, ranks,
	 * workers, endpoint, key): another scenario, then another --ranks.
	 * Refused and counted; rank 0 goes on waiting for the real rank 1.
	 */
	uint8_t hello[176] = { 0 };
	uint64_t fp = 0x1234;
	uint32_t nr = 2, wk = 1;

	memcpy(hello, &fp, 8);
	memcpy(hello + 8, &nr, 4);
	memcpy(hello + 12, &wk, 4);
	memcpy(hello + 16, "tcp://127.0.0.1:1", 18);
	h.rank = 1;
	h.len = sizeof(hello);
	memcpy(msg, &h, sizeof(h));
	memcpy(msg + sizeof(h), hello, sizeof(hello));
	zmq_send(s, msg, sizeof(h) + sizeof(hello), 0);		/* 7: another scenario */
	nr = 3;
	memcpy(msg + sizeof(h) + 8, &nr, 4);
	zmq_send(s, msg, sizeof(h) + sizeof(hello), 0);		/* 8: another --ranks */
	usleep(300000);
	zmq_close(s);
	/* 1 MiB at the join socket: dropped by libzmq, never reaches rank 0 (not counted) */
	void *big = zmq_socket(ctx, ZMQ_DEALER);
	size_t bigsz = 1 << 20;
	uint8_t *bigmsg = calloc(1, bigsz);

	zmq_setsockopt(big, ZMQ_LINGER, &linger, sizeof(linger));
	zmq_connect(big, ep);
	h.len = (uint32_t)(bigsz - sizeof(h));
	memcpy(bigmsg, &h, sizeof(h));
	zmq_send(big, bigmsg, bigsz, 0);
	free(bigmsg);
	usleep(300000);
	zmq_close(big);
	zmq_ctx_term(ctx);
	/* a raw ZMTP/1.0 frame header claiming 2^60 bytes: refused before any allocation */
	sh("exec 3<>/dev/tcp/127.0.0.1/%d && printf '\\377\\020\\0\\0\\0\\0\\0\\0\\0\\0' >&3 && sleep 0.3", port);
	rc = sh(EMU " %s --rank 1 --ranks 2 --coordinator tcp://127.0.0.1:%d", args, port);
	int st;

	waitpid(pid, &st, 0);
	int grc = sh("grep -c '\"rejected\": 8}' %s/g.json; grep -c result_exact.*true %s/g.json", dir, dir);

	ok(rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && grc == 0,
	   "six malformed and two foreign join messages are refused and counted (8), an oversized one never arrives, "
	   "the real rank joins, the result is exact");
	if (grc || rc || !WIFEXITED(st) || WEXITSTATUS(st))
		sh("cat %s/g.err; grep distributed %s/g.json", dir, dir), diag("%s", sh_out);
}

/* spawn - run @argv with stdout and stderr to files; its pid */
static pid_t spawn(const char *const argv[], const char *out, const char *err)
{
	pid_t pid = fork();

	if (pid == 0) {
		FILE *o = freopen(out, "w", stdout), *e = freopen(err, "w", stderr);

		(void)o;
		(void)e;
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	return pid;
}

/* rss_kib - VmRSS of @pid in KiB, 0 if gone */
static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/*
 * A stranger floods the coordinator port: 3 000 refused join requests
 * while rank 0 waits for rank 1 (the log stays a few lines), then up to
 * 200 000 messages of 1 200 bytes (240 MB) within 3 s while the run goes
 * (under the wall clock, so that it lasts): rank 0's memory stays within
 * 32 MiB of what it was, and the run ends exact. Rank 0 used to never read
 * the coordinator socket again after the join, with no bound on its queue,
 * and log every refusal.
 */
static void flood(void)
{
	int port = port_base() + 19;
	char ep[64], f0[128], e0[128], f1[128], e1[128];

	snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%d", port);
	snprintf(f0, sizeof(f0), "%s/fl0.json", dir);
	snprintf(e0, sizeof(e0), "%s/fl0.err", dir);
	snprintf(f1, sizeof(f1), "%s/fl1.out", dir);
	snprintf(e1, sizeof(e1), "%s/fl1.err", dir);
	const char *a0[] = { EMU, "--topology", "fattree2:leaves=4,spines=4,hosts=4", "--size", "64KiB", "--hosts", "8",
		       "--algo", "canary", "--background", "none", "--no-progress", "--clock", "wall", "--dilation",
		       "400000", "--workers", "1", "--json", "--rank", "0", "--ranks", "2", "--coordinator", ep, NULL };
	const char *a1[sizeof(a0) / sizeof(a0[0])];

	memcpy(a1, a0, sizeof(a0));
	a1[20] = "1";
	pid_t r0 = spawn(a0, f0, e0);

	usleep(300000);
	void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_DEALER);
	int zero = 0, hwm = 1000000;
	struct emu_dist_hdr h = { .magic = EMU_DIST_MAGIC, .version = EMU_DIST_VERSION, .type = EMU_DIST_HELLO,
				  .rank = 9 };
	static uint8_t msg[1200];
	unsigned sent = 0;

	zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
	zmq_setsockopt(s, ZMQ_SNDHWM, &hwm, sizeof(hwm));
	zmq_connect(s, ep);
	memcpy(msg, &h, sizeof(h));
	for (int i = 0; i < 3000; i++)	/* a HELLO from rank 9 of 2: refused, one by one */
		zmq_send(s, msg, sizeof(h), 0);
	usleep(500000);
	pid_t r1 = spawn(a1, f1, e1);

	usleep(500000);		/* joined: the flood after the join */
	long before = rss_kib(r0), peak = before;
	double t0 = now_s();

	memset(msg, 0x5a, sizeof(msg));
	while (sent < 200000 && now_s() - t0 < 3) {
		if (zmq_send(s, msg, sizeof(msg), ZMQ_DONTWAIT) == (int)sizeof(msg))
			sent++;
		else
			usleep(1000);
		if (sent % 4096 == 0) {
			long r = rss_kib(r0);

			peak = r > peak ? r : peak;
		}
	}
	usleep(500000);
	long r = rss_kib(r0);

	peak = r > peak ? r : peak;
	zmq_close(s);
	zmq_ctx_term(ctx);
	int st0, st1;

	waitpid(r1, &st1, 0);
	waitpid(r0, &st0, 0);
	ok(before > 0 && peak - before < 32 * 1024,
	   "flood at the coordinator after the join (%u messages of 1200 bytes offered in 3 s): rank 0's memory "
	   "grew %ld KiB (bound 32 MiB)", sent, peak - before);
	ok(WIFEXITED(st0) && WEXITSTATUS(st0) == 0 && WIFEXITED(st1) && WEXITSTATUS(st1) == 0 &&
	   sh("grep -q 'result_exact\": true' %s", f0) == 0, "...the run goes on and ends exact");
	int lines = sh("grep -c 'refused a join request' %s", e0) == 0 ? atoi(sh_out) : 0;

	ok(lines >= 1 && lines <= 10 && sh("grep -q 'join requests (not logged one by one)\\|more since the last line' %s",
					    e0) == 0,
	   "3000 refused join requests: %d log lines, the rest counted", lines);
	if (!WIFEXITED(st0) || WEXITSTATUS(st0) || lines > 10 || lines < 1)
		sh("head -c 600 %s; tail -3 %s", e0, e1), diag("%s", sh_out);
}

static void curve(const char *args)
{
	int port = port_base() + 15;

	ok(sh(EMU " --curve-keygen %s/keys --ranks 2 && " EMU " --curve-keygen %s/other --ranks 2", dir, dir) == 0,
	   "--curve-keygen writes key files");
	int rc = sh("(" EMU " %s --curve %s/keys/rank1.key --rank 1 --ranks 2 --coordinator tcp://127.0.0.1:%d > /dev/null &"
		    " " EMU " %s --json --curve %s/keys/rank0.key --rank 0 --ranks 2 --coordinator tcp://127.0.0.1:%d > %s/c.json;"
		    " s=$?; wait; exit $s)", args, dir, port, args, dir, port, dir);
	int same = sh("diff <(grep -vE '%s' %s/one.json) <(grep -vE '%s' %s/c.json)", VOLATILE, dir, VOLATILE, dir);

	ok(rc == 0 && same == 0, "CURVE: two ranks with their own keys give the single-process results");
	if (rc || same)
		sh("cat %s/c.json | head -5", dir), diag("exit %d: %s", rc, sh_out);
	/* a client whose key is not in the coordinator's allow list */
	port++;
	sh("(grep secret %s/other/rank1.key; grep -v secret %s/keys/rank1.key) > %s/rogue.key; chmod 644 %s/rogue.key",
	   dir, dir, dir, dir);
	ok(sh(EMU " %s --curve %s/rogue.key --rank 1 --ranks 2 --coordinator tcp://127.0.0.1:%d", args, dir, port) == 2 &&
	   strstr(sh_out, "is accessible by others (mode 644)"), "CURVE: a key file others can read is refused (exit 2)");
	sh("chmod 600 %s/rogue.key", dir);
	rc = sh("(" EMU " %s --curve %s/keys/rank0.key --rank 0 --ranks 2 --coordinator tcp://127.0.0.1:%d --peer-timeout 200ms"
		" > /dev/null & sleep 0.2; " EMU " %s --curve %s/rogue.key --rank 1 --ranks 2 --peer-timeout 200ms"
		" --coordinator tcp://127.0.0.1:%d; s=$?; wait $!; echo statuses $s $?)", args, dir, port, args, dir, port);
	ok(strstr(sh_out, "statuses 1 1") && strstr(sh_out, "1 unknown keys") && strstr(sh_out, "is this rank's key allowed"),
	   "CURVE: an unknown client key is refused and counted; both ranks stop (exit 1)");
	if (!strstr(sh_out, "1 unknown keys"))
		diag("%s", sh_out);
	/* with CURVE the mismatched HELLO comes from a listed key: both sides stop at once */
	double t0 = now_s();

	rc = sh("(" EMU " %s --curve %s/keys/rank0.key --rank 0 --ranks 2 --coordinator tcp://127.0.0.1:%d > /dev/null &"
		" sleep 0.3; " EMU " %s --seed 9 --curve %s/keys/rank1.key --rank 1 --ranks 2 --coordinator tcp://127.0.0.1:%d;"
		" s=$?; wait $!; echo statuses $s $?)", args, dir, port + 1, args, dir, port + 1);
	double dt = now_s() - t0;

	ok(strstr(sh_out, "statuses 2 2") && strstr(sh_out, "the run cannot start: refused rank 1: a different scenario") &&
	   dt < 4, "CURVE: a rank with another scenario: both exit 2 at once (%.1f s)", dt);
	if (!strstr(sh_out, "statuses 2 2"))
		diag("%s", sh_out);
	ok(sh(EMU " %s --curve /nonexistent.key --processes 2", args) == 2 && strstr(sh_out, "--curve"),
	   "CURVE: a missing key file is bad input (exit 2)");
	/* the key file reader says why in negative errno, beside the line for the user */
	char err[512], path[600];
	int missing = emu_dist_check_keyfile("/nonexistent.key", err, sizeof(err));

	snprintf(path, sizeof(path), "%s/open.key", dir);
	sh("cp %s/keys/rank1.key %s && chmod 644 %s", dir, path, path);
	int readable = emu_dist_check_keyfile(path, err, sizeof(err));

	sh("echo 'secret nokey' > %s && chmod 600 %s", path, path);
	int bad = emu_dist_check_keyfile(path, err, sizeof(err));

	snprintf(path, sizeof(path), "%s/keys/rank1.key", dir);
	ok(missing == -ENOENT && readable == -EACCES && bad == -EINVAL && emu_dist_check_keyfile(path, err, sizeof(err)) == 0,
	   "emu_dist_check_keyfile: -ENOENT missing, -EACCES readable by others, -EINVAL malformed, 0 good (%d %d %d)",
	   missing, readable, bad);
}

/* two ranks in their own network namespaces, joined by a veth pair (needs root) */
static void netns(const char *args)
{
	int id = (int)(getpid() % 100000);

	if (geteuid() != 0 || sh("ip netns add cA%d && ip netns add cB%d", id, id)) {
		sh("ip netns del cA%d; ip netns del cB%d", id, id);
		skip(1, "network namespaces: not root or not permitted here");
		return;
	}
	int rc = sh("set -e; ip link add vA%d type veth peer name vB%d;"
		    " ip link set vA%d netns cA%d; ip link set vB%d netns cB%d;"
		    " ip -n cA%d addr add 10.77.0.1/24 dev vA%d; ip -n cB%d addr add 10.77.0.2/24 dev vB%d;"
		    " ip -n cA%d link set vA%d up; ip -n cB%d link set vB%d up;"
		    " ip -n cA%d link set lo up; ip -n cB%d link set lo up;"
		    " ip netns exec cA%d " EMU " %s --json --rank 0 --ranks 2 --coordinator tcp://10.77.0.1:5555 --bind 10.77.0.1"
		    " > %s/ns.json & sleep 0.3;"
		    " ip netns exec cB%d " EMU " %s --rank 1 --ranks 2 --coordinator tcp://10.77.0.1:5555 --bind 10.77.0.2"
		    " > /dev/null; wait $!",
		    id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, args, dir, id, args);
	int same = rc ? 1 : sh("diff <(grep -vE '%s' %s/one.json) <(grep -vE '%s' %s/ns.json)", VOLATILE, dir, VOLATILE, dir);

	ok(rc == 0 && same == 0, "two ranks in network namespaces over a veth pair give the single-process results");
	if (rc || same)
		diag("%s", sh_out);
	sh("ip netns del cA%d; ip netns del cB%d", id, id);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/canary-dist-%d", (int)getpid());
	if (mkdir(dir, 0700)) {
		skip_all("cannot make a temporary directory");
		return 0;
	}
	check_headers();
	check_records();
	same_results("background, 3 algorithms",
		     "--topology fattree2:leaves=8,spines=8,hosts=8 --size 128KiB --hosts 32 --algo canary,static:4,ring "
		     "--background uniform");
	same_results("loss, a switch failure, 2 tenants",
		     "--topology fattree2:leaves=8,spines=8,hosts=8 --size 64KiB --hosts 24 --algo canary,static:2 "
		     "--background uniform --loss 0.002 --fail switch:S1@20us --concurrent 2");
	same_results("3-level fat tree, a dropped frame, noise, lossy",
		     "--topology fattree3:k=4 --size 64KiB --hosts 10 --algo canary,ring --noise 0.01 --drop H1/0#5 --lossy");
	curve("--topology fattree3:k=4 --size 64KiB --hosts 10 --algo canary,ring --noise 0.01 --drop H1/0#5 --lossy");
	netns("--topology fattree3:k=4 --size 64KiB --hosts 10 --algo canary,ring --noise 0.01 --drop H1/0#5 --lossy");
	join_errors();
	flood();
	kill_rank();
	frozen_rank();
	/* many local ranks start at once and read rank 0's endpoint from one pipe */
	int fails = 0;

	for (int i = 0; i < 8; i++)
		fails += sh(EMU " --topology fattree2:leaves=4,spines=4,hosts=4 --size 16KiB --hosts 8 --algo canary "
			    "--processes 8 --workers 1 --no-progress > /dev/null") != 0;
	ok(fails == 0, "8 local ranks started 8 times: every run joins and finishes (%d failed)", fails);
	if (fails)
		diag("%s", sh_out);
	ok(sh(EMU " --processes 2 --rank 1 --ranks 2") == 2 && strstr(sh_out, "--processes"),
	   "--processes with --rank is refused (exit 2)");
	ok(sh(EMU " --rank 1 --ranks 2") == 2 && strstr(sh_out, "--coordinator"), "--rank without --coordinator: exit 2");
	ok(sh(EMU " --processes 2 --workers per-node") == 2, "--workers per-node across processes: exit 2");
	sh("rm -rf %s", dir);
	done_testing();
}
