/* SPDX-License-Identifier: MIT */
/*
 * DOC: cores.h - how many cores are free for the workers.
 *
 * The default worker count: the cores this process may run on (its CPU
 * affinity), less the cores other processes keep busy, at least one. Busy
 * cores are read from the kernel's count of runnable tasks (the fourth
 * field of /proc/loadavg, which counts the reader too), the least of a few
 * samples a millisecond apart, so that a task that runs only for an
 * instant is not taken for a busy core. The count is machine-wide, so with
 * an affinity narrower than the machine the free cores are the fewer of
 * the allowed ones and the machine's cores less the busy ones.
 *
 * Results do not depend on the number of workers; only speed does. More
 * workers than free cores share cores with the busy processes, and each
 * window waits for the slowest worker.
 */
#ifndef EMU_CORES_H
#define EMU_CORES_H

/*
 * emu_cores_pick - the free cores from @allowed (the affinity's), @online
 * (the machine's) and @others (runnable tasks that are not ours). At least 1.
 */
unsigned emu_cores_pick(unsigned allowed, unsigned online, unsigned others);

/*
 * emu_cores_parse_loadavg - *@running from /proc/loadavg's text ("0.50
 * 0.40 0.30 3/120 4567"). Return 0, or -EINVAL if @text has no such field.
 */
int emu_cores_parse_loadavg(const char *text, unsigned *running);

/* emu_cores_free - the free cores now (sleeps ~2 ms to sample); at least 1. */
unsigned emu_cores_free(void);

#endif /* EMU_CORES_H */
