/* SPDX-License-Identifier: MIT */
/*
 * DOC: peers_file.h - the peer table of real hosts, read from a file of
 * lines "RANK IPV4 MAC" (blank lines and lines starting with # skipped;
 * "# rate BPS" gives the real hosts' link rate, "# run N" the run id).
 * canary-allreduce --peers and libcanarympi's CANARY_MPI_PEERS read it;
 * canary-emu --attach-peers writes it.
 */
#ifndef LH_PEERS_FILE_H
#define LH_PEERS_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "libhost/canary_host.h"

/*
 * lh_peers_file_read - @path into @p (@n ranks, each listed once). Return
 * 0, or a negative errno with @err (@errlen bytes) saying why, naming the
 * file and, for a bad line, its number.
 */
int lh_peers_file_read(const char *path, struct lh_peer *p, unsigned n, char *err, size_t errlen);

/*
 * lh_peers_file_rate - the link rate a "# rate BPS" line of @path names
 * (canary-emu --attach-peers writes the emulated link's), bit/s; 0 if
 * none or unreadable.
 */
uint64_t lh_peers_file_rate(const char *path);

/*
 * lh_peers_file_run - the run id (0..3) a "# run N" line of @path names
 * (canary-emu --attach-peers writes its run's); -1 if none or unreadable.
 */
int lh_peers_file_run(const char *path);

#endif
