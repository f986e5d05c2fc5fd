/* SPDX-License-Identifier: MIT */
/*
 * DOC: pcap.h - capture the frames of chosen links to a pcapng file, with
 * emulated timestamps (nanoseconds, time 0 = start of the run), one
 * interface per tapped link direction, named by its two ends ("L0/3->S1/0").
 *
 * Every worker appends the frames of its tapped ports to its own buffer
 * (no lock on the data path); emu_pcap_close() merges them in (time, node,
 * port, order) order, which does not depend on the number of workers, and
 * writes them. A frame is captured when its first bit leaves the port
 * (at transmit), once per link direction tapped.
 */
#ifndef EMU_PCAP_H
#define EMU_PCAP_H

#include <stddef.h>

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
 * emu_pcap_close - write the file and free. Accepts NULL. Return 0, or -1
 * with the reason in @err when the file could not be written in full.
 */
int emu_pcap_close(struct emu_pcap *p, char *err, size_t errlen);

#endif /* EMU_PCAP_H */
