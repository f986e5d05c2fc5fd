/* SPDX-License-Identifier: MIT */
/*
 * DOC: pcap.h - capture the frames of chosen links to a pcapng file, with
 * emulated timestamps (nanoseconds, time 0 = start of the run), one
 * interface per tapped link direction, named by its two ends ("L0/3->S1/0").
 *
 * Every worker appends the frames of its tapped ports to its own buffer
 * (no lock on the data path); a full buffer is sorted and spilled as one
 * chunk to an unnamed file beside the capture, so memory stays within
 * EMU_PCAP_MEM whatever the run sends. emu_pcap_close() merges the chunks
 * and what is still in memory in (time, node, port, order) order, which
 * does not depend on the number of workers, into an unnamed file that
 * replaces the target only then (a device or a pipe is written in place).
 * A frame is captured when its first bit leaves the port (at transmit),
 * once per link direction tapped.
 */
#ifndef EMU_PCAP_H
#define EMU_PCAP_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The capture's buffers, all workers together (at least 1 MiB each); the
 * merge reads each spilled chunk through 128 KiB more (one chunk per
 * EMU_PCAP_MEM / workers captured).
 */
#define EMU_PCAP_MEM (64ULL << 20)

struct emu_engine;
struct emu_pcap;

/*
 * emu_pcap_open - capture @links ("S0/3,L1": both directions of the link
 * on that node's port, of every link of L1; NULL or "all": every link) of
 * @eng into @path.
 * Return NULL with a reason in @err (bad link, cannot write).
 */
struct emu_pcap *emu_pcap_open(struct emu_engine *eng, const char *path, const char *links, char *err,
			       size_t errlen);
/*
 * emu_pcap_close - with @keep, write the file and put it in place of the
 * target; without, leave the target as it was. Free. Accepts NULL.
 * Return 0, or negative errno with the reason in @err when the file could
 * not be written in full (the target is then left as it was).
 */
int emu_pcap_close(struct emu_pcap *p, bool keep, char *err, size_t errlen);

#endif /* EMU_PCAP_H */
