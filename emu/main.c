// SPDX-License-Identifier: MIT
/*
 * DOC: main.c - canary-emu, the command line (DESIGN §9).
 *
 * Parses the options (every error names the option and exits 2), runs the
 * scenario once per algorithm of --algo (a comma list), prints a readable
 * comparison on stdout (or --json / --csv), and exits 0 only if every
 * allreduce of every run finished with the exact result on every host;
 * 1 if a result was wrong or a run could not finish; 2 for bad input.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/dist/dist.h"

#include "emu/report.h"
#include "emu/scenario.h"
#include "emu/units.h"
#include "emu/engine/util.h"

#define MAX_ALGOS 8

static void usage(FILE *f)
{
	fputs("usage: canary-emu [options]\n"
	      "  --topology SPEC      fattree2:leaves=32,spines=32,hosts=32 | fattree3:k=K | FILE\n"
	      "  --algo LIST          canary | static:N | ring, comma-separated (default ring,static:1,static:4,canary)\n"
	      "  --hosts N|P%         hosts in the allreduce(s), placed at random by the seed (default 50%)\n"
	      "  --size BYTES         data per host, suffixes KiB MiB GiB (default 4MiB)\n"
	      "  --elements N         int32 elements per packet, 1..256 (default 256)\n"
	      "  --concurrent K       K concurrent allreduces (tenants), hosts split evenly (default 1)\n"
	      "  --background NAME    none | uniform | random: the other hosts send traffic (default uniform:\n"
	      "                       each sends to a random host and receives from another, new peers per message;\n"
	      "                       random: destinations drawn independently, so receivers see incast)\n"
	      "  --bg-msg BYTES       background message size (default 64KiB)\n"
	      "  --timeout T          Canary switch timeout (default 1us)\n"
	      "  --timer NAME         exact | pktgen (default exact)\n"
	      "  --pktgen-tick T      pktgen clock period (default 1ns)\n"
	      "  --routing NAME       adaptive | ecmp | leastloaded (default adaptive)\n"
	      "  --noise P            probability that a host delays a send by 1us (e.g. 0.001 or 0.1%)\n"
	      "  --loss P             drop probability on every link (implies --lossy)\n"
	      "  --lossy              drop-tail Ethernet instead of lossless credit flow control\n"
	      "  --buffer BYTES       per-port buffer (default 128KiB)\n"
	      "  --priority NAME      none | collective: allreduce frames (Canary, ring) get their own\n"
	      "                       traffic class, served first, with its own buffer credits (default none)\n"
	      "  --fail SPEC          switch:S3@20us | link:L0/33@5us-30us | node:H5@1us (repeatable)\n"
	      "  --drop NODE/PORT#N   lose exactly the N-th frame sent on that port (repeatable)\n"
	      "  --profile NAME       tofino1 | tofino2 | unbounded (default tofino1)\n"
	      "  --descriptors N      descriptor table entries per switch (default: the profile's)\n"
	      "  --shards N           multicast shards (default: the fewest that fit)\n"
	      "  --table NAME         hash (default) | per-tenant: descriptor slots split statically among tenants\n"
	      "  --resources          print the switch program's Tofino resource report and exit\n"
	      "  --window N           blocks in flight per host (default: from bandwidth x delay)\n"
	      "  --retx-timeout T     host retransmission timeout (default 2 x RTT)\n"
	      "  --max-failures K     re-issues of a block before host-based fallback (default 3)\n"
	      "  --time-limit T       give up at this emulated time (default 100ms)\n"
	      "  --stall T            give up when no block completed for T of emulated time (default 5ms)\n"
	      "  --seed N             placement, inputs, roots, loss, noise (default 1)\n"
	      "  --workers N|per-node worker threads (default: cores available)\n"
	      "  --clock NAME         virtual | wall (default virtual)\n"
	      "  --dilation D|auto    wall clock: wall ns per emulated ns (default auto)\n"
	      "  --pcap FILE          write frames (real bytes, emulated timestamps) to FILE\n"
	      "  --pcap-link LIST     links to capture, NODE/PORT,... (default all)\n"
	      "  --json | --csv       machine-readable report on stdout\n"
	      "distributed (README: Running across machines):\n"
	      "  --processes P        split the run over P local processes (ranks) talking ZeroMQ\n"
	      "  --rank R --ranks P   this process is rank R of P; rank 0 coordinates and prints the report\n"
	      "  --coordinator EP     rank 0's endpoint, tcp://HOST:PORT (rank 0 binds it, the others connect)\n"
	      "  --bind ADDR          address of this rank's data socket, reachable by the others (default 127.0.0.1)\n"
	      "  --curve KEYFILE      authenticate and encrypt with ZeroMQ CURVE (keys from --curve-keygen)\n"
	      "  --curve-keygen DIR   write DIR/rank<i>.key for --ranks P ranks and exit\n"
	      "  --peer-timeout T     a rank silent this long is declared dead (default 5s)\n"
	      "  --progress | --no-progress   progress on stderr (default: when stderr is a terminal)\n"
	      "  --help\n", f);
}

static int bad(const char *opt, const char *val, const char *what)
{
	fprintf(stderr, "canary-emu: %s: '%s' %s\n", opt, val, what);
	return 2;
}

static int parse_algo(const char *s, enum lh_algo *a, unsigned *n)
{
	uint64_t v;

	if (!strcmp(s, "canary")) {
		*a = LH_ALGO_CANARY;
		*n = 1;
	} else if (!strcmp(s, "ring")) {
		*a = LH_ALGO_RING;
		*n = 1;
	} else if (!strncmp(s, "static:", 7) && !emu_parse_u64(s + 7, &v) && v >= 1 && v <= 64) {
		*a = LH_ALGO_STATIC;
		*n = (unsigned)v;
	} else if (!strcmp(s, "static")) {
		*a = LH_ALGO_STATIC;
		*n = 1;
	} else {
		return -EINVAL;
	}
	return 0;
}

static void progress(void *ctx, emu_time_t now, uint64_t done, uint64_t expect)
{
	const char *algo = ctx;
	char b[32];
	unsigned width = 30, fill = expect ? (unsigned)(width * done / expect) : 0;

	fprintf(stderr, "\r%-10s [", algo);
	for (unsigned i = 0; i < width; i++)
		fputc(i < fill ? '#' : '.', stderr);
	fprintf(stderr, "] %llu/%llu hosts done, emulated %s   ", (unsigned long long)done, (unsigned long long)expect,
		emu_fmt_time(now, b, sizeof(b)));
	fflush(stderr);
}

/*
 * The scenario's fingerprint: every argument except those that may differ
 * between ranks (distribution, workers, output), plus the build's record
 * sizes. Ranks with different fingerprints would not emulate the same run.
 */
static uint64_t fingerprint(int argc, char **argv)
{
	static const char *const skip[] = {
		"--processes", "--rank", "--ranks", "--coordinator", "--bind", "--curve", "--peer-timeout",
		"--workers", "--json", "--csv", "--progress", "--no-progress",
	};
	static const bool takes_value[] = { 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0 };
	uint64_t h = emu_hash64(EMU_DIST_VERSION ^ ((uint64_t)sizeof(struct emu_run_stats) << 16) ^
				((uint64_t)sizeof(struct emu_sw_stats) << 32));

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool skipped = false;

		for (size_t k = 0; k < sizeof(skip) / sizeof(skip[0]); k++) {
			size_t n = strlen(skip[k]);

			if (!strncmp(a, skip[k], n) && (a[n] == 0 || a[n] == '=')) {
				skipped = true;
				if (a[n] == 0 && takes_value[k])
					i++;
				break;
			}
		}
		if (skipped)
			continue;
		for (const char *c = a; *c; c++)
			h = emu_hash64(h ^ (uint8_t)*c);
		h = emu_hash64(h ^ 0x100);
	}
	return h;
}

/* rank 0 of --processes: wait for the children (kill them first if @kill_them). True if one failed. */
static bool reap(const pid_t *children, unsigned n, bool kill_them)
{
	bool failed = false;

	for (unsigned i = 1; i < n; i++) {
		int st;

		if (children[i] <= 0)
			continue;
		if (kill_them)
			kill(children[i], SIGTERM);
		if (waitpid(children[i], &st, 0) == children[i] && !kill_them &&
		    (!WIFEXITED(st) || WEXITSTATUS(st) != 0)) {
			fprintf(stderr, "canary-emu: rank %u (pid %d) %s %d\n", i, (int)children[i],
				WIFSIGNALED(st) ? "was killed by signal" : "exited with status",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			failed = true;
		}
	}
	return failed;
}

/* A rank other than 0 says what it did; the report is rank 0's. */
static void rank_line(struct emu_dist *d, const struct emu_scn_result *r)
{
	struct emu_dist_stats st;

	emu_dist_stats(d, &st);
	fprintf(stderr, "canary-emu: rank %u/%u: %s: %u workers, %llu events, %llu frame-hops, %.3f s; "
			"ZeroMQ so far: %llu msgs / %.1f MB sent, %llu rejected\n",
		emu_dist_rank(d), emu_dist_nranks(d), r->algo, r->run.workers, (unsigned long long)r->run.events,
		(unsigned long long)r->run.frame_hops, (double)r->run.wall_ns / 1e9, (unsigned long long)st.msgs_sent,
		(double)st.bytes_sent / 1e6, (unsigned long long)(st.rejected + st.auth_rejected));
}

int main(int argc, char **argv)
{
	struct emu_scn_cfg cfg;
	const char *algos = "ring,static:1,static:4,canary";
	enum { OUT_TEXT, OUT_JSON, OUT_CSV } out = OUT_TEXT;
	int want_progress = -1;
	bool resources = false;
	uint64_t v;
	double d;
	enum {
		O_TOPO = 256, O_ALGO, O_HOSTS, O_SIZE, O_ELEM, O_CONC, O_BG, O_BGMSG, O_TIMEOUT, O_TIMER, O_TICK,
		O_ROUTING, O_NOISE, O_LOSS, O_LOSSY, O_BUFFER, O_FAIL, O_PROFILE, O_DESC, O_SHARDS, O_RES, O_WINDOW,
		O_RETX, O_MAXF, O_LIMIT, O_SEED, O_WORKERS, O_CLOCK, O_DIL, O_PCAP, O_PCAPL, O_JSON, O_CSV, O_PROG,
		O_NOPROG, O_HELP, O_DROP, O_STALL, O_TABLE, O_PROCS, O_RANK, O_RANKS, O_COORD, O_BIND, O_CURVE,
		O_KEYGEN, O_PEERTO, O_PRIO,
	};
	static const struct option opts[] = {
		{ "topology", required_argument, NULL, O_TOPO }, { "algo", required_argument, NULL, O_ALGO },
		{ "hosts", required_argument, NULL, O_HOSTS }, { "size", required_argument, NULL, O_SIZE },
		{ "elements", required_argument, NULL, O_ELEM }, { "concurrent", required_argument, NULL, O_CONC },
		{ "background", required_argument, NULL, O_BG }, { "bg-msg", required_argument, NULL, O_BGMSG },
		{ "timeout", required_argument, NULL, O_TIMEOUT }, { "timer", required_argument, NULL, O_TIMER },
		{ "pktgen-tick", required_argument, NULL, O_TICK }, { "routing", required_argument, NULL, O_ROUTING },
		{ "noise", required_argument, NULL, O_NOISE }, { "loss", required_argument, NULL, O_LOSS },
		{ "lossy", no_argument, NULL, O_LOSSY }, { "buffer", required_argument, NULL, O_BUFFER },
		{ "priority", required_argument, NULL, O_PRIO },
		{ "fail", required_argument, NULL, O_FAIL }, { "profile", required_argument, NULL, O_PROFILE },
		{ "descriptors", required_argument, NULL, O_DESC }, { "shards", required_argument, NULL, O_SHARDS },
		{ "resources", no_argument, NULL, O_RES }, { "window", required_argument, NULL, O_WINDOW },
		{ "retx-timeout", required_argument, NULL, O_RETX }, { "max-failures", required_argument, NULL, O_MAXF },
		{ "time-limit", required_argument, NULL, O_LIMIT }, { "seed", required_argument, NULL, O_SEED },
		{ "workers", required_argument, NULL, O_WORKERS }, { "clock", required_argument, NULL, O_CLOCK },
		{ "dilation", required_argument, NULL, O_DIL }, { "pcap", required_argument, NULL, O_PCAP },
		{ "pcap-link", required_argument, NULL, O_PCAPL }, { "json", no_argument, NULL, O_JSON },
		{ "csv", no_argument, NULL, O_CSV }, { "progress", no_argument, NULL, O_PROG },
		{ "no-progress", no_argument, NULL, O_NOPROG }, { "drop", required_argument, NULL, O_DROP },
		{ "stall", required_argument, NULL, O_STALL }, { "table", required_argument, NULL, O_TABLE },
		{ "processes", required_argument, NULL, O_PROCS }, { "rank", required_argument, NULL, O_RANK },
		{ "ranks", required_argument, NULL, O_RANKS }, { "coordinator", required_argument, NULL, O_COORD },
		{ "bind", required_argument, NULL, O_BIND }, { "curve", required_argument, NULL, O_CURVE },
		{ "curve-keygen", required_argument, NULL, O_KEYGEN },
		{ "peer-timeout", required_argument, NULL, O_PEERTO }, { "help", no_argument, NULL, O_HELP }, { 0 },
	};
	int o;
	unsigned processes = 1, rank = 0, ranks = 0;
	bool have_rank = false;
	const char *keygen = NULL;
	struct emu_dist_cfg dcfg = { .endpoint_fd = -1, .timeout_ms = 5000 };

	emu_scenario_defaults(&cfg);
	opterr = 0;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		const char *a = optarg;

		switch (o) {
		case O_TOPO: cfg.topology = a; break;
		case O_ALGO: algos = a; break;
		case O_HOSTS: {
			size_t len = strlen(a);

			if (len && a[len - 1] == '%') {
				char tmp[32];

				snprintf(tmp, sizeof(tmp), "%.*s", (int)(len - 1), a);
				char *end;
				double pct = strtod(tmp, &end);

				if (!*tmp || *end || !(pct > 0 && pct <= 100))
					return bad("--hosts", a, "is not a percentage in (0, 100]");
				cfg.hosts = 0;
				cfg.hosts_pct = pct;
			} else if (emu_parse_u64(a, &v) || v == 0 || v > UINT32_MAX) {
				return bad("--hosts", a, "is not a host count or a percentage (e.g. 512 or 50%)");
			} else {
				cfg.hosts = (uint32_t)v;
			}
			break;
		}
		case O_SIZE:
			if (emu_parse_size(a, &v) || v < 4 || v % 4)
				return bad("--size", a, "is not a size in bytes, a multiple of 4 (e.g. 4MiB)");
			cfg.size_bytes = v;
			break;
		case O_ELEM:
			if (emu_parse_u64(a, &v) || v < 1 || v > 256)
				return bad("--elements", a, "is not in 1..256");
			cfg.elements = (unsigned)v;
			break;
		case O_CONC:
			if (emu_parse_u64(a, &v) || v < 1 || v > 255)
				return bad("--concurrent", a, "is not in 1..255");
			cfg.concurrent = (unsigned)v;
			break;
		case O_BG:
			if (!strcmp(a, "none")) {
				cfg.background = false;
			} else if (!strcmp(a, "uniform")) {
				cfg.background = true;
				cfg.bg_pattern = LH_BG_UNIFORM;
			} else if (!strcmp(a, "random")) {
				cfg.background = true;
				cfg.bg_pattern = LH_BG_RANDOM;
			} else {
				return bad("--background", a, "is not none, uniform or random");
			}
			break;
		case O_BGMSG:
			if (emu_parse_size(a, &v) || v == 0)
				return bad("--bg-msg", a, "is not a size in bytes");
			cfg.bg_msg = v;
			break;
		case O_TIMEOUT:
			if (emu_parse_time(a, &cfg.timeout) || cfg.timeout == 0)
				return bad("--timeout", a, "is not a time with a unit (e.g. 1us)");
			break;
		case O_TIMER:
			if (!strcmp(a, "exact"))
				cfg.timer = EMU_SW_TIMER_EXACT;
			else if (!strcmp(a, "pktgen"))
				cfg.timer = EMU_SW_TIMER_PKTGEN;
			else
				return bad("--timer", a, "is not exact or pktgen");
			break;
		case O_TICK:
			if (emu_parse_time(a, &cfg.pktgen_tick) || cfg.pktgen_tick == 0)
				return bad("--pktgen-tick", a, "is not a time with a unit (e.g. 1ns)");
			break;
		case O_ROUTING:
			if (emu_routing_parse(a, &cfg.routing))
				return bad("--routing", a, "is not adaptive, ecmp or leastloaded");
			break;
		case O_NOISE:
			if (emu_parse_prob(a, &cfg.noise))
				return bad("--noise", a, "is not a probability (e.g. 0.001 or 0.1%)");
			break;
		case O_LOSS:
			if (emu_parse_prob(a, &cfg.loss) || cfg.loss >= 1)
				return bad("--loss", a, "is not a probability below 1 (e.g. 0.01 or 1%)");
			break;
		case O_LOSSY: cfg.lossy = true; break;
		case O_PRIO:
			if (!strcmp(a, "collective"))
				cfg.priority = true;
			else if (!strcmp(a, "none"))
				cfg.priority = false;
			else
				return bad("--priority", a, "is not collective or none");
			break;
		case O_BUFFER:
			if (emu_parse_size(a, &v) || v < 4096 || v > (1ULL << 32))
				return bad("--buffer", a, "is not a size between 4KiB and 4GiB");
			cfg.buffer_bytes = v;
			break;
		case O_FAIL:
			if (cfg.nfail == EMU_SCN_MAX_FAIL)
				return bad("--fail", a, "is one too many (at most 32)");
			if (emu_fail_parse(a, &cfg.fail[cfg.nfail]))
				return bad("--fail", a, "is not switch:NAME@T[-T], node:NAME@T[-T] or link:NODE/PORT@T[-T]");
			cfg.nfail++;
			break;
		case O_DROP:
			if (cfg.ndrop == EMU_SCN_MAX_FAIL)
				return bad("--drop", a, "is one too many (at most 32)");
			if (emu_drop_parse(a, &cfg.drop[cfg.ndrop]))
				return bad("--drop", a, "is not NODE/PORT#N (lose the N-th frame sent on that port)");
			cfg.ndrop++;
			break;
		case O_PROFILE:
			if (!tofino_profile_get(a))
				return bad("--profile", a, "is not tofino1, tofino2 or unbounded");
			cfg.profile = a;
			break;
		case O_DESC:
			if (emu_parse_u64(a, &v) || v == 0 || v > (1u << 24))
				return bad("--descriptors", a, "is not a table size in 1..16777216");
			cfg.descriptors = (uint32_t)v;
			break;
		case O_SHARDS:
			if (emu_parse_u64(a, &v) || v == 0 || v > 64)
				return bad("--shards", a, "is not in 1..64");
			cfg.shards = (unsigned)v;
			break;
		case O_RES: resources = true; break;
		case O_WINDOW:
			if (emu_parse_u64(a, &v) || v == 0 || v > 1000000)
				return bad("--window", a, "is not a block count in 1..1000000");
			cfg.window = (unsigned)v;
			break;
		case O_RETX:
			if (emu_parse_time(a, &cfg.retx_timeout) || cfg.retx_timeout == 0)
				return bad("--retx-timeout", a, "is not a time with a unit (e.g. 20us)");
			break;
		case O_MAXF:
			if (emu_parse_u64(a, &v) || v > 1000)
				return bad("--max-failures", a, "is not in 0..1000");
			cfg.max_failures = (unsigned)v;
			break;
		case O_LIMIT:
			if (emu_parse_time(a, &cfg.limit) || cfg.limit == 0)
				return bad("--time-limit", a, "is not a time with a unit (e.g. 100ms)");
			break;
		case O_TABLE:
			if (!strcmp(a, "hash"))
				cfg.table_per_tenant = false;
			else if (!strcmp(a, "per-tenant"))
				cfg.table_per_tenant = true;
			else
				return bad("--table", a, "is not hash or per-tenant");
			break;
		case O_STALL:
			if (emu_parse_time(a, &cfg.stall))
				return bad("--stall", a, "is not a time with a unit (e.g. 5ms; 0 turns the watchdog off)");
			break;
		case O_SEED:
			if (emu_parse_u64(a, &cfg.seed))
				return bad("--seed", a, "is not a non-negative integer");
			break;
		case O_WORKERS:
			if (!strcmp(a, "per-node")) {
				cfg.per_node = true;
			} else if (emu_parse_u64(a, &v) || v == 0 || v > 4096) {
				return bad("--workers", a, "is not a count in 1..4096 or per-node");
			} else {
				cfg.workers = (unsigned)v;
				cfg.per_node = false;
			}
			break;
		case O_CLOCK:
			if (!strcmp(a, "virtual"))
				cfg.clock = EMU_CLOCK_VIRTUAL;
			else if (!strcmp(a, "wall"))
				cfg.clock = EMU_CLOCK_WALL;
			else
				return bad("--clock", a, "is not virtual or wall");
			break;
		case O_DIL:
			if (!strcmp(a, "auto")) {
				cfg.dilation = 0;
			} else {
				char *end;

				d = strtod(a, &end);
				if (*end || !(d > 0 && d < 1e12))
					return bad("--dilation", a, "is not a positive number or auto");
				cfg.dilation = d;
			}
			break;
		case O_PROCS:
			if (emu_parse_u64(a, &v) || v < 1 || v > EMU_DIST_MAX_RANKS)
				return bad("--processes", a, "is not a count in 1..64");
			processes = (unsigned)v;
			break;
		case O_RANK:
			if (emu_parse_u64(a, &v) || v >= EMU_DIST_MAX_RANKS)
				return bad("--rank", a, "is not a rank in 0..63");
			rank = (unsigned)v;
			have_rank = true;
			break;
		case O_RANKS:
			if (emu_parse_u64(a, &v) || v < 1 || v > EMU_DIST_MAX_RANKS)
				return bad("--ranks", a, "is not a count in 1..64");
			ranks = (unsigned)v;
			break;
		case O_COORD:
			if (strncmp(a, "tcp://", 6) || !strchr(a + 6, ':'))
				return bad("--coordinator", a, "is not tcp://HOST:PORT");
			dcfg.coordinator = a;
			break;
		case O_BIND: dcfg.bind = a; break;
		case O_CURVE: dcfg.curve = a; break;
		case O_KEYGEN: keygen = a; break;
		case O_PEERTO: {
			emu_time_t t;

			if (emu_parse_time(a, &t) || t < 100 * EMU_MS || t > 3600 * EMU_S)
				return bad("--peer-timeout", a, "is not a time in 100ms..1h");
			dcfg.timeout_ms = (unsigned)(t / EMU_MS);
			break;
		}
		case O_PCAP: cfg.pcap = a; break;
		case O_PCAPL: cfg.pcap_links = a; break;
		case O_JSON: out = OUT_JSON; break;
		case O_CSV: out = OUT_CSV; break;
		case O_PROG: want_progress = 1; break;
		case O_NOPROG: want_progress = 0; break;
		case O_HELP: usage(stdout); return 0;
		case '?':
		default:
			if (optopt)
				fprintf(stderr, "canary-emu: option needs a value or is unknown: -%c\n", optopt);
			else
				fprintf(stderr, "canary-emu: unknown option or missing value: %s\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "canary-emu: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}

	if (keygen) {
		char err[512];

		if (!ranks)
			return bad("--curve-keygen", keygen, "needs --ranks P");
		if (emu_dist_keygen(keygen, ranks, err, sizeof(err))) {
			fprintf(stderr, "canary-emu: %s\n", err);
			return 2;
		}
		printf("wrote %s/rank0.key .. %s/rank%u.key\n", keygen, keygen, ranks - 1);
		return 0;
	}
	if (have_rank && !ranks)
		return bad("--rank", "", "needs --ranks P");
	if (ranks && !have_rank)
		return bad("--ranks", "", "needs --rank R (or use --processes P)");
	if (have_rank && processes > 1)
		return bad("--processes", "", "and --rank are exclusive (--processes starts the ranks itself)");
	if (have_rank && rank >= ranks)
		return bad("--rank", "", "must be below --ranks");
	if (have_rank && rank > 0 && !dcfg.coordinator)
		return bad("--coordinator", "", "is needed by ranks other than 0");
	if (have_rank && rank == 0 && !dcfg.coordinator && ranks > 1)
		return bad("--coordinator", "", "is needed by rank 0 too (the endpoint it binds)");
	bool distributed = processes > 1 || (have_rank && ranks > 1);

	if (distributed && cfg.per_node)
		return bad("--workers", "per-node", "is not available across processes");
	if (distributed && cfg.pcap)
		return bad("--pcap", cfg.pcap, "is not available across processes (capture in a single-process run)");

	/* algorithms */
	struct { enum lh_algo a; unsigned n; char name[16]; } algo[MAX_ALGOS];
	unsigned nalgo = 0;
	char abuf[256], *save = NULL;

	snprintf(abuf, sizeof(abuf), "%s", algos);
	for (char *tok = strtok_r(abuf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (nalgo == MAX_ALGOS)
			return bad("--algo", algos, "lists too many algorithms (at most 8)");
		if (parse_algo(tok, &algo[nalgo].a, &algo[nalgo].n))
			return bad("--algo", tok, "is not canary, ring or static:N (N in 1..64)");
		snprintf(algo[nalgo].name, sizeof(algo[nalgo].name), "%s", tok);
		nalgo++;
	}
	if (!nalgo)
		return bad("--algo", algos, "names no algorithm");
	if (cfg.pcap && nalgo > 1)
		return bad("--pcap", cfg.pcap, "needs a single --algo (one run, one capture)");

	if (resources) {
		struct emu_scn_result res;
		char err[512];

		cfg.resources_only = true;
		int rc = emu_scenario_run(&cfg, &res, err, sizeof(err));

		if (rc == -EINVAL) {
			fprintf(stderr, "canary-emu: %s\n", err);
			return 2;
		}
		tofino_report(stdout, res.prof, &res.need);
		return res.need.fits ? 0 : 2;
	}

	pid_t children[EMU_DIST_MAX_RANKS] = { 0 };
	struct emu_dist *dist = NULL;

	if (distributed) {
		int pfd[2] = { -1, -1 };
		unsigned P = processes > 1 ? processes : ranks;

		if (processes > 1) {
			/* ranks 1..P-1 are children; they learn rank 0's endpoint through a pipe */
			if (pipe(pfd)) {
				perror("canary-emu: pipe");
				return 1;
			}
			fflush(NULL);
			for (unsigned i = 1; i < processes; i++) {
				pid_t pid = fork();

				if (pid < 0) {
					perror("canary-emu: fork");
					for (unsigned k = 1; k < i; k++)
						kill(children[k], SIGTERM);
					return 1;
				}
				if (pid == 0) {
					/* one whole record per read: see emu_dist_join() */
					static char ep[EMU_DIST_EP_RECORD + 1];

					prctl(PR_SET_PDEATHSIG, SIGTERM);
					close(pfd[1]);
					ssize_t n = read(pfd[0], ep, EMU_DIST_EP_RECORD);

					close(pfd[0]);
					if (n != EMU_DIST_EP_RECORD || !ep[0])
						_exit(1);	/* rank 0 is gone */
					ep[EMU_DIST_EP_RECORD] = 0;
					rank = i;
					dcfg.coordinator = ep;
					memset(children, 0, sizeof(children));
					break;
				}
				children[i] = pid;
			}
			if (rank == 0) {
				close(pfd[0]);
				dcfg.children = children;
				dcfg.endpoint_fd = pfd[1];
			}
		}
		/* workers of this rank: --workers, else the cores shared out among local ranks */
		if (!cfg.workers) {
			cpu_set_t cs;
			unsigned ncpu = sched_getaffinity(0, sizeof(cs), &cs) == 0 ? (unsigned)CPU_COUNT(&cs) : 1;

			cfg.workers = processes > 1 ? (ncpu / processes ? ncpu / processes : 1) : ncpu;
		}
		dcfg.rank = rank;
		dcfg.nranks = P;
		dcfg.workers = cfg.workers;
		dcfg.fingerprint = fingerprint(argc, argv);
		char err[512];
		bool bad_input;

		dist = emu_dist_join(&dcfg, err, sizeof(err), &bad_input);
		if (dcfg.endpoint_fd >= 0)
			close(dcfg.endpoint_fd);
		if (!dist) {
			fprintf(stderr, "canary-emu: rank %u: %s\n", rank, err);
			reap(children, P, true);
			return bad_input ? 2 : 1;
		}
		cfg.dist = dist;
		cfg.pin_offset = processes > 1;
		if (rank != 0)
			want_progress = 0;
	}
	bool show_progress = want_progress == 1 || (want_progress < 0 && isatty(2));

	if (out == OUT_JSON)
		show_progress = want_progress == 1;
	struct emu_scn_result res[MAX_ALGOS];
	unsigned nres = 0;
	int status = 0;
	struct report rep = { .out = stdout, .cfg = &cfg };

	for (unsigned i = 0; i < nalgo; i++) {
		char err[512];

		cfg.algo = algo[i].a;
		cfg.ntrees = algo[i].n;
		cfg.progress = show_progress ? progress : NULL;
		cfg.progress_ctx = algo[i].name;
		int rc = emu_scenario_run(&cfg, &res[nres], err, sizeof(err));

		if (show_progress)
			fputs("\r\033[K", stderr);
		if (rc == -EPIPE) {
			fprintf(stderr, "canary-emu: rank %u: %s\n", rank, err);
			status = 1;
			break;
		}
		if (dist && res[nres].partial) {
			rank_line(dist, &res[nres]);
			emu_scenario_result_fini(&res[nres]);
			continue;
		}
		if (rc == -ENOSPC) {
			fprintf(stderr, "canary-emu: %s\n", err);
			tofino_report(stderr, res[nres].prof, &res[nres].need);
			status = 2;
			break;
		}
		if (rc) {
			fprintf(stderr, "canary-emu: %s\n", err);
			status = 2;
			break;
		}
		if (!res[nres].exact) {
			status = status ? status : 1;
			fprintf(stderr, "canary-emu: %s: %s\n", res[nres].algo,
				res[nres].stuck[0] ? res[nres].stuck : "a result differs from the exact sum");
		}
		if (out == OUT_TEXT) {
			if (nres == 0)
				report_header(&rep);
			report_text_run(&rep, &res[nres]);
		}
		nres++;
	}
	/* what was computed is reported even if a later run failed */
	if (out == OUT_TEXT) {
		if (nres)
			report_text_end(&rep, res, nres);
	} else if (out == OUT_JSON) {
		if (nres)
			report_json(&rep, res, nres);
	} else {
		report_csv(&rep, res, nres);
	}
	for (unsigned i = 0; i < nres; i++)
		emu_scenario_result_fini(&res[i]);
	if (dist) {
		if (status == 2 || (status && rank == 0 && !nres))
			emu_dist_abort(dist, "rank stopped on an error");
		if (rank == 0 && reap(children, processes, status != 0) && !status)
			status = 1;
		emu_dist_close(dist);
	}
	return status;
}
