// SPDX-License-Identifier: MIT
/*
 * DOC: recovery with the missing-set sketch (--sketch K), each case forced
 * and checked on the counters and the result: one lost contribution is
 * asked for directly (no failure, no re-issue), three lost contributions
 * likewise, a lost aggregate of four hosts with K = 4 (decoded) and K = 1
 * (too many missing: the paper's failure and re-issue), and 1 % loss on
 * every link, where the paper's recovery fails blocks until they fall back
 * to reduction at the leader (the loss collapse) and the sketch keeps
 * every block off that path. A contribution that is late, not lost (one
 * host behind a link of 2 us or 20 us): a little late triggers no RECOVER;
 * late past the leader's quiet period it is asked for, but the tree's copy
 * arriving first is counted (recovered_late) and the allreduce takes no
 * longer than without the sketch. A broadcast lost on the root's uplink
 * to a spine: a second broadcast dies at the root, the third goes down
 * the whole tree (BCAST "again") instead of a unicast per host behind the
 * lost link. The stall watchdog against the hosts'
 * timeouts: a run that only waits on a retransmission timeout longer than
 * --stall finishes, as with the default; one that cannot finish (a leaf
 * failed for good) is still called stuck. Bad --sketch values are refused.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "scn.h"

static void base(struct emu_scn_cfg *c)
{
	t_scn_base(c);
	c->algo = LH_ALGO_CANARY;
	c->workers = 1;
}

/* four hosts on one switch, 4 KiB, H1's third frame (a reduce) lost */
static void one_lost_frame(struct emu_scn_cfg *c)
{
	base(c);
	c->topology = "fattree2:leaves=1,spines=1,hosts=4";
	c->hosts = 4;
	c->size_bytes = 4096;
	emu_drop_parse("H1/0#3", &c->drop[0]);
	c->ndrop = 1;
}

/*
 * eight hosts on one switch, 256 KiB in frames of 64 elements (1093 blocks),
 * sketch 4, frame @drop lost: a broadcast on its way
 */
static void lost_bcast(struct emu_scn_cfg *c, const char *drop)
{
	base(c);
	c->topology = "fattree2:leaves=1,spines=1,hosts=8";
	c->hosts = 8;
	c->size_bytes = 256 * 1024;
	c->sketch = 4;
	emu_drop_parse(drop, &c->drop[0]);
	c->ndrop = 1;
}


/* four hosts on one switch, H3's link @lat long: its contributions come late, none is lost */
static bool late_topo(char *path, const char *lat)
{
	char body[512];
	int fd = mkstemp(path);
	int n = snprintf(body, sizeof(body),
			 "defaults rate=100G latency=300ns mtu=1500\nswitch L0 level=1\n"
			 "host H0\nhost H1\nhost H2\nhost H3\n"
			 "link H0 L0\nlink H1 L0\nlink H2 L0\nlink H3 L0 latency=%s\n", lat);

	if (fd < 0)
		return false;
	bool good = write(fd, body, (size_t)n) == n;

	close(fd);
	return good;
}

static void late(const char *lat, bool asked)
{
	struct emu_scn_cfg c;
	struct emu_scn_result r;
	char path[] = "/tmp/canary-late-XXXXXX";
	char what[64];

	if (!late_topo(path, lat)) {
		ok(0, "temp topology file");
		return;
	}
	base(&c);
	c.topology = path;
	c.hosts = 4;
	c.size_bytes = 4096;
	snprintf(what, sizeof(what), "late by %s, no sketch", lat);
	ok(t_scn_try(&c, &r, what) && r.exact, "%s: exact", what);
	emu_time_t plain = r.runtime;

	emu_scenario_result_fini(&r);
	c.sketch = 4;
	snprintf(what, sizeof(what), "late by %s, sketch 4", lat);
	ok(t_scn_try(&c, &r, what) && r.exact, "%s: exact", what);
	is_int(r.drops_loss + r.drops_queue, 0, "...nothing lost");
	is_int(r.ar[0].failures, 0, "...no block failed");
	if (asked) {
		/* past the quiet period: asked, but the tree's copy came first and counted */
		ok(r.ar[0].recovered > 0, "...late past the quiet period: %llu contributions asked for",
		   (unsigned long long)r.ar[0].recovered);
		is_int(r.ar[0].recovered_late, r.ar[0].recovered, "...every one counted from the tree's late copy");
	} else {
		is_int(r.ar[0].recoveries, 0, "...a little late: no RECOVER");
		is_int(r.ar[0].recovered_late, 0, "...and nothing to count late");
	}
	/* the sketch's 4 elements make 4 more blocks of 60 than of 64: a few frame times */
	ok(r.runtime < plain + plain / 50, "...done at %.2f us, without the sketch %.2f us",
	   (double)r.runtime / 1e6, (double)plain / 1e6);
	emu_scenario_result_fini(&r);
	unlink(path);
}

int main(void)
{
	struct emu_scn_cfg c;
	struct emu_scn_result r;
	char err[256];

	plan(83);

	late("2us", false);
	late("20us", true);

	/* one lost reduce frame, four hosts on one switch: the paper fails and re-issues the block */
	one_lost_frame(&c);
	ok(t_scn_try(&c, &r, "one lost frame, paper") && r.exact, "one lost frame, no sketch: exact");
	is_int(r.ar[0].failures, 1, "...the block failed once");
	is_int(r.ar[0].reissues, 3, "...and the three other hosts re-issued it");
	emu_scenario_result_fini(&r);

	/* the same with a sketch of 4: the leader names the missing host and asks it */
	c.sketch = 4;
	ok(t_scn_try(&c, &r, "one lost frame, sketch 4") && r.exact, "one lost frame, sketch 4: exact");
	is_int(r.drops_loss, 1, "exactly one frame lost");
	is_int(r.ar[0].failures, 0, "no block failed");
	is_int(r.ar[0].reissues, 0, "nothing re-issued");
	is_int(r.ar[0].recoveries, 1, "one block recovered");
	is_int(r.ar[0].recovered, 1, "...from exactly one host, asked directly");
	is_int(r.ar[0].recovered_late, 0, "...lost, not late: counted from its direct copy");
	emu_scenario_result_fini(&r);

	/* three hosts' frames lost, two leaves */
	base(&c);
	c.topology = "fattree2:leaves=2,spines=1,hosts=4";
	c.hosts = 8;
	c.size_bytes = 8192;
	c.sketch = 4;
	emu_drop_parse("H1/0#3", &c.drop[0]);
	emu_drop_parse("H2/0#3", &c.drop[1]);
	emu_drop_parse("H5/0#3", &c.drop[2]);
	c.ndrop = 3;
	ok(t_scn_try(&c, &r, "three lost frames, sketch 4") && r.exact, "three lost frames: exact");
	is_int(r.drops_loss, 3, "three frames lost");
	is_int(r.ar[0].failures, 0, "no block failed");
	is_int(r.ar[0].recovered, 3, "the three contributions were asked for directly");
	ok(r.ar[0].recoveries >= 1 && r.ar[0].recoveries <= 3, "...in %llu block(s)",
	   (unsigned long long)r.ar[0].recoveries);
	emu_scenario_result_fini(&r);

	/* a leaf's aggregate of four hosts lost on its way up */
	base(&c);
	c.topology = "fattree2:leaves=2,spines=1,hosts=4";
	c.hosts = 8;
	c.size_bytes = 8192;
	c.sketch = 4;
	emu_drop_parse("L0/4#5", &c.drop[0]);
	c.ndrop = 1;
	ok(t_scn_try(&c, &r, "lost aggregate, sketch 4") && r.exact, "lost aggregate of four hosts, sketch 4: exact");
	is_int(r.drops_loss, 1, "one frame lost");
	is_int(r.ar[0].failures, 0, "no block failed");
	is_int(r.ar[0].recovered, 4, "the four hosts behind it were asked directly");
	emu_scenario_result_fini(&r);
	c.sketch = 1;
	ok(t_scn_try(&c, &r, "lost aggregate, sketch 1") && r.exact, "the same with sketch 1: exact");
	is_int(r.ar[0].recoveries, 0, "four missing do not decode with one element: no recovery");
	is_int(r.ar[0].failures, 1, "...the paper's rule: the block failed");
	is_int(r.ar[0].reissues, 7, "...and was re-issued by the seven other hosts");
	emu_scenario_result_fini(&r);

	/*
	 * The leader's broadcast of a block lost on its own link (H0's 497th
	 * frame: the broadcast of block 472): every other host misses it and
	 * probes. One second broadcast through the tree reaches them all (the
	 * switch still holds the descriptor); at most the first prober gets a
	 * unicast copy, not one per host.
	 */
	lost_bcast(&c, "H0/0#497");
	ok(t_scn_try(&c, &r, "broadcast lost at its leader") && r.exact, "broadcast lost on the leader's link: exact");
	is_int(r.drops_loss, 1, "...one frame lost");
	is_int(r.ar[0].recoveries + r.ar[0].failures, 0, "...no reduce frame: nothing recovered, nothing failed");
	is_int(r.ar[0].probes, 7, "...the seven other hosts probed");
	is_int(r.ar[0].rebroadcasts, 1, "...the leader broadcast the block once more");
	ok(r.ar[0].resends <= 1, "...and resent it to %llu host(s) alone", (unsigned long long)r.ar[0].resends);
	is_int(r.ar[0].retransmissions, 0, "...no host waited for its timeout");
	emu_scenario_result_fini(&r);

	/*
	 * The broadcast of the last block but three, lost on its way to H3
	 * (the switch's 1093rd frame to it): no later block comes back to
	 * show it is late, so the tail timer probes; the host does not wait
	 * for its retransmission timeout.
	 */
	lost_bcast(&c, "L0/3#1093");
	ok(t_scn_try(&c, &r, "broadcast lost at the end") && r.exact, "a last broadcast lost: exact");
	is_int(r.drops_loss, 1, "...one frame lost");
	ok(r.ar[0].probes >= 1 && r.ar[0].probes <= 2, "...the host probed (%llu)", (unsigned long long)r.ar[0].probes);
	is_int(r.ar[0].resends, 1, "...the leader resent the block to it");
	is_int(r.ar[0].retransmissions, 0, "...no host waited for its timeout");
	emu_scenario_result_fini(&r);

	/*
	 * A broadcast lost below a switch it had passed: the root leaf's
	 * uplink to the spine (L0's 104th frame there: the broadcast of a
	 * block led on L0), so the 32 hosts of the other leaf miss it. The
	 * second broadcast dies at the root, which passed the first. With a
	 * retransmission timeout long enough that their second probes come
	 * first, the leader answers 15 of them with unicast copies and then
	 * (LH_AGAIN_PROBES: 16) sends the block down the whole tree again (the
	 * switches kept the ports for it): 15 unicast copies, not 32. With
	 * the default timeout the hosts' requests come first: each still gets
	 * its copy (the broadcast again may take the path that lost the
	 * first), and the broadcast again goes out all the same.
	 */
	base(&c);
	c.topology = "fattree2:leaves=2,spines=1,hosts=32";
	c.hosts = 64;
	c.size_bytes = 256 * 1024;
	c.sketch = 4;
	c.retx_timeout = 100 * EMU_US;
	emu_drop_parse("L0/32#104", &c.drop[0]);
	c.ndrop = 1;
	ok(t_scn_try(&c, &r, "broadcast lost above a leaf") && r.exact, "broadcast lost on the root's uplink: exact");
	is_int(r.drops_loss, 1, "...one frame lost");
	is_int(r.ar[0].recoveries + r.ar[0].failures + r.ar[0].retransmissions, 0,
	       "...nothing recovered, failed or asked after a timeout");
	is_int(r.sw.bcast_dropped, 1, "...the second broadcast died at the root");
	is_int(r.ar[0].rebroadcasts, 2, "...and the leader broadcast it a third time, down the whole tree");
	is_int(r.ar[0].resends, 15, "...after 15 unicast copies to the 32 hosts behind the lost link");
	emu_scenario_result_fini(&r);
	c.retx_timeout = 0;
	ok(t_scn_try(&c, &r, "broadcast lost above a leaf, default timeout") && r.exact, "the same, default timeout: exact");
	is_int(r.ar[0].retransmissions, 31, "...31 hosts asked after their timeout");
	/* the first probe's copy and one per request */
	is_int(r.ar[0].resends, r.ar[0].retransmissions + 1, "...each request got its unicast copy");
	is_int(r.ar[0].rebroadcasts, 2, "...and the broadcast went down the whole tree again");
	emu_scenario_result_fini(&r);

	/* the loss collapse: 1 % loss on every link, 32 hosts */
	base(&c);
	c.topology = "fattree2:leaves=4,spines=4,hosts=8";
	c.hosts = 32;
	c.size_bytes = 256 * 1024;
	c.elements = 256;
	c.loss = 0.01;
	/* seed 2: in seed 1 the paper's recovery gets every block through without a fallback (seeds 2-4 have 32-96) */
	c.seed = 2;
	c.sketch = 0;	/* the paper's recovery: by default a lossy fabric gets the sketch */
	ok(t_scn_try(&c, &r, "1% loss, paper") && r.exact, "1%% loss, no sketch: exact");
	ok(r.ar[0].fallbacks > 0, "...blocks fell back to reduction at their leader (%llu host fallbacks)",
	   (unsigned long long)r.ar[0].fallbacks);
	uint64_t paper_failures = r.ar[0].failures;

	emu_scenario_result_fini(&r);
	c.sketch = 8;
	ok(t_scn_try(&c, &r, "1% loss, sketch 8") && r.exact, "1%% loss, sketch 8: exact");
	ok(r.drops_loss > 100, "%llu frames lost", (unsigned long long)r.drops_loss);
	is_int(r.ar[0].fallbacks, 0, "no block fell back to the leader incast");
	ok(r.ar[0].recoveries > 0 && r.ar[0].recovered >= r.ar[0].recoveries,
	   "%llu blocks recovered from %llu hosts asked directly", (unsigned long long)r.ar[0].recoveries,
	   (unsigned long long)r.ar[0].recovered);
	ok(r.ar[0].failures * 4 < paper_failures, "failures %llu, a quarter of the paper's %llu at most",
	   (unsigned long long)r.ar[0].failures, (unsigned long long)paper_failures);
	ok(r.ar[0].probes > 0, "%llu early requests for overtaken blocks", (unsigned long long)r.ar[0].probes);
	emu_scenario_result_fini(&r);

	/*
	 * --lossless: the same loss on the credit fabric, 16 of the 32 hosts
	 * in the allreduce, the others sending background. No queue overflows (a lost frame takes no credit, so none
	 * leaks); only the injected loss is lost, and the result is exact.
	 */
	c.background = true;
	c.lossless = true;
	c.hosts = 16;
	ok(t_scn_try(&c, &r, "1% loss, sketch 8, background, credit fabric") && r.exact,
	   "1%% loss on the credit fabric with background: exact");
	is_int(r.drops_queue, 0, "...no queue drop");
	ok(r.drops_loss > 100, "...%llu frames lost to the injected loss", (unsigned long long)r.drops_loss);
	emu_scenario_result_fini(&r);
	c.lossy = true;
	c.lossless = false;
	ok(t_scn_try(&c, &r, "1% loss, sketch 8, background, drop-tail") && r.exact, "...the same drop-tail: exact");
	ok(r.drops_queue > 0, "...where %llu frames overflowed a queue", (unsigned long long)r.drops_queue);
	emu_scenario_result_fini(&r);
	c.background = false;
	c.lossy = false;
	c.hosts = 32;

	/* the same under two workers and with one: same counters (determinism) */
	c.workers = 2;
	ok(t_scn_try(&c, &r, "1% loss, sketch 8, 2 workers") && r.exact, "two workers: exact");
	uint64_t rt2 = r.runtime, rec2 = r.ar[0].recovered;

	emu_scenario_result_fini(&r);
	c.workers = 1;
	ok(t_scn_try(&c, &r, "1% loss, sketch 8, 1 worker") && r.exact, "one worker: exact");
	ok(r.runtime == rt2 && r.ar[0].recovered == rec2, "same runtime and recoveries for 1 and 2 workers");
	emu_scenario_result_fini(&r);

	/* waiting on a timeout is not stuck: one lost frame, the paper's recovery, --stall 10 us */
	one_lost_frame(&c);
	ok(t_scn_try(&c, &r, "one lost frame, default stall") && r.exact, "one lost frame, default --stall: exact");
	emu_time_t want = r.runtime;

	emu_scenario_result_fini(&r);
	c.stall = 10 * EMU_US;
	ok(t_scn_try(&c, &r, "one lost frame, stall 10 us") && r.exact && !r.run.stalled,
	   "--stall 10 us, below the hosts' timeout: exact, not stopped");
	ok(r.runtime == want && r.ar[0].failures == 1, "...at the same %.2f us, after the same failure",
	   (double)r.runtime / 1e6);
	emu_scenario_result_fini(&r);

	/* stuck is still stuck: the second leaf fails for good, its hosts never contribute */
	base(&c);
	c.topology = "fattree2:leaves=2,spines=1,hosts=2";
	c.hosts = 4;
	c.size_bytes = 4096;
	c.stall = 10 * EMU_US;
	emu_fail_parse("switch:L1@0us", &c.fail[0]);
	c.nfail = 1;
	ok(t_scn_try(&c, &r, "a leaf failed for good") && !r.exact && r.run.stalled, "a leaf failed for good: stuck");
	ok(strstr(r.stuck, "no block completed") != NULL, "...the watchdog says so: %s", r.stuck);
	ok(r.run.wait_max > 0 && r.run.emulated <= r.run.last_progress + 2 * r.run.wait_max + EMU_US,
	   "...stopped at %.1f us: within twice the longest timeout (%.1f us) of the last progress",
	   (double)r.run.emulated / 1e6, (double)r.run.wait_max / 1e6);
	emu_scenario_result_fini(&r);

	/* bad values */
	base(&c);
	c.sketch = 64;	/* = elements */
	ok(emu_scenario_run(&c, &r, err, sizeof(err)) != 0 && strstr(err, "--sketch"), "sketch = elements refused: %s",
	   err);
	c.sketch = LH_SKETCH_MAX + 1;
	c.elements = 256;
	ok(emu_scenario_run(&c, &r, err, sizeof(err)) != 0 && strstr(err, "--sketch"), "sketch 17 refused: %s", err);
	return done_testing();
}
