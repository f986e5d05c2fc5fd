/* SPDX-License-Identifier: MIT */
/*
 * DOC: afpacket.h - raw Ethernet frames on a Linux interface through an
 * AF_PACKET socket with TPACKET_V2 receive and transmit rings (mmap).
 *
 * The kernel writes every frame the interface receives into a slot of the
 * receive ring and flags it TP_STATUS_USER; lh_afp_rx() hands the ready
 * slots to a callback in ring order and gives them back. Sending copies a
 * frame into the next free slot of the transmit ring and flags it
 * TP_STATUS_SEND_REQUEST; lh_afp_flush() asks the kernel to put the
 * flagged slots on the wire (one send() for many frames). The socket is
 * promiscuous (a real NIC then passes frames for the MACs of the emulated
 * hosts) and ignores the frames it sent itself.
 *
 * A slot is checked before its frame is read: offsets and lengths inside
 * the slot, a frame not cut short by the slot (snaplen == len), at least an
 * Ethernet header, at most LH_FRAME_MAX bytes. A slot that fails is counted
 * in rx_bad and skipped, so whatever arrives on the interface never reads
 * outside the ring. lh_afp_mem() runs the same receive code over a ring in
 * ordinary memory (the fuzz target and the tests use it).
 *
 * Linux only; not part of libcanaryhost.so's ABI (canary-allreduce and
 * canary-emu link it from libcanaryhost.a). One thread per struct lh_afp.
 */
#ifndef LH_AFPACKET_H
#define LH_AFPACKET_H

#include <stddef.h>
#include <stdint.h>

struct lh_afp;

struct lh_afp_stats {
	uint64_t rx_frames, rx_bytes;	/* handed to the callback */
	uint64_t rx_bad;		/* slots that failed the checks, skipped */
	uint64_t rx_own;		/* frames this socket sent, seen again, skipped */
	uint64_t rx_kernel_drops;	/* the ring was full (PACKET_STATISTICS) */
	uint64_t tx_frames, tx_bytes;
	uint64_t tx_full;		/* no free slot: the frame was not sent */
	uint64_t tx_errors;		/* refused by the kernel (too long for the link, ...) */
};

/*
 * lh_afp_open - open @ifname with rings of @slots slots each (a power of
 * two, 16..65536; 0: 1024). NULL with a one-line reason in @err (no such
 * interface, not permitted: needs CAP_NET_RAW, ...).
 */
struct lh_afp *lh_afp_open(const char *ifname, unsigned slots, char *err, size_t errlen);

/*
 * lh_afp_mem - the receive side over @ring (@slots slots of @slot_size
 * bytes, the TPACKET_V2 layout) in memory, without a socket: for tests and
 * fuzzing. Sends are counted and dropped. NULL if the geometry is bad.
 */
struct lh_afp *lh_afp_mem(void *ring, unsigned slots, unsigned slot_size);

/* lh_afp_close - close and unmap. Accepts NULL. */
void lh_afp_close(struct lh_afp *a);

/* lh_afp_fd - the socket, for poll() (POLLIN: a receive slot is ready); -1 for lh_afp_mem(). */
int lh_afp_fd(const struct lh_afp *a);

typedef void (*lh_afp_rx_fn)(void *arg, const uint8_t *frame, uint32_t len);

/*
 * lh_afp_rx - hand at most @max ready frames to @fn, in arrival order,
 * and return their slots to the kernel. @fn may send. Return the number
 * of slots consumed (frames passed, bad and own ones).
 */
size_t lh_afp_rx(struct lh_afp *a, lh_afp_rx_fn fn, void *arg, size_t max);

/* lh_afp_rx_ready - is a receive slot ready for lh_afp_rx()? No system call. */
int lh_afp_rx_ready(const struct lh_afp *a);

/*
 * lh_afp_rx_time - inside lh_afp_rx()'s callback: when the kernel received
 * the frame being handed over, CLOCK_REALTIME in ns (0: unknown).
 */
uint64_t lh_afp_rx_time(const struct lh_afp *a);

/*
 * lh_afp_send - copy @len bytes of @frame (14..LH_FRAME_MAX) into the next
 * transmit slot. Return 0, -ENOBUFS if no slot is free (counted in
 * tx_full), -EINVAL for a bad length. Nothing leaves before lh_afp_flush().
 */
int lh_afp_send(struct lh_afp *a, const uint8_t *frame, uint32_t len);

/* lh_afp_flush - put the queued frames on the wire. Return 0 or negative errno. */
int lh_afp_flush(struct lh_afp *a);

/* lh_afp_stats - counters; reads the kernel's drop count first. */
const struct lh_afp_stats *lh_afp_stats(struct lh_afp *a);

/*
 * lh_afp_link - what the system knows of @ifname: its MAC address, its
 * MTU and its speed in bit/s (0 when the driver reports none). Return 0
 * or negative errno.
 */
int lh_afp_link(const char *ifname, uint8_t mac[6], uint32_t *mtu, uint64_t *speed_bps);

#endif /* LH_AFPACKET_H */
