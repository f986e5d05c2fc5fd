// SPDX-License-Identifier: MIT
/*
 * DOC: afpacket.c - AF_PACKET TPACKET_V2 rings. See afpacket.h.
 *
 * One socket, two rings mapped back to back: receive first, then
 * transmit. Both walk their slots in order with one index each; a slot
 * belongs to the kernel or to us by its tp_status word, read with acquire
 * and written with release ordering (the kernel's side of the protocol).
 * Slots are 4 KiB, 16 to a 64 KiB block: the largest frame (LH_FRAME_MAX)
 * and the headers fit in one.
 */
#include "libhost/afpacket.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "libhost/canary_host.h"
#include "libhost/lh_util.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define SLOT_SIZE 4096u
#define BLOCK_SIZE (16 * SLOT_SIZE)
#define DEFAULT_SLOTS 512u
#define ETH_MIN 14u

struct lh_afp {
	int fd;
	uint8_t *map;		/* both rings (socket) or the caller's ring (mem) */
	size_t map_len;
	bool own_map;
	uint8_t *rx, *tx;
	unsigned slots, slot_size;
	unsigned rx_i, tx_i;
	unsigned tx_queued;	/* flagged since the last flush */
	uint64_t rx_time;	/* the kernel's stamp of the frame being handed over */
	struct lh_afp_stats st;
};

/* say - the reason into @err: the formatted text, then ": strerror(@e)" if @e */
static void say(char *err, size_t errlen, int e, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void say(char *err, size_t errlen, int e, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	n = vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	if (e && n >= 0 && (size_t)n < errlen)
		snprintf(err + n, errlen - (size_t)n, ": %s", strerror(e));
}

struct lh_afp *lh_afp_open(const char *ifname, unsigned slots, char *err, size_t errlen)
{
	struct lh_afp *a = NULL;
	int fd = -1, v;
	unsigned ifindex;

	if (!slots)
		slots = DEFAULT_SLOTS;
	if (slots < 16 || slots > 65536 || (slots & (slots - 1))) {
		say(err, errlen, 0, "ring of %u slots: not a power of two in 16..65536", slots);
		return NULL;
	}
	if (!ifname || !*ifname || strlen(ifname) >= IFNAMSIZ || !(ifindex = if_nametoindex(ifname))) {
		say(err, errlen, 0, "'%s' is not a network interface here", ifname ? ifname : "");
		return NULL;
	}
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (fd < 0) {
		say(err, errlen, errno, "AF_PACKET socket for '%s' (needs CAP_NET_RAW, e.g. root)", ifname);
		return NULL;
	}
	v = TPACKET_V2;
	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v))) {
		say(err, errlen, errno, "'%s': TPACKET_V2", ifname);
		goto fail;
	}
	v = 1;		/* a frame the kernel cannot send is skipped, not left blocking the ring */
	(void)setsockopt(fd, SOL_PACKET, PACKET_LOSS, &v, sizeof(v));
	(void)setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &v, sizeof(v));
	struct tpacket_req req = {
		.tp_block_size = BLOCK_SIZE, .tp_block_nr = slots * SLOT_SIZE / BLOCK_SIZE,
		.tp_frame_size = SLOT_SIZE, .tp_frame_nr = slots,
	};

	if (req.tp_block_nr == 0)
		req.tp_block_nr = 1, req.tp_frame_nr = BLOCK_SIZE / SLOT_SIZE, slots = req.tp_frame_nr;
	if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req))) {
		say(err, errlen, errno, "'%s': packet rings", ifname);
		goto fail;
	}
	a = lh_xcalloc(1, sizeof(*a));
	a->fd = -1;
	a->slots = slots;
	a->slot_size = SLOT_SIZE;
	a->map_len = 2 * (size_t)slots * SLOT_SIZE;
	a->map = mmap(NULL, a->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (a->map == MAP_FAILED) {
		say(err, errlen, errno, "'%s': mmap of the rings", ifname);
		a->map = NULL;
		goto fail;
	}
	a->own_map = true;
	a->rx = a->map;
	a->tx = a->map + (size_t)slots * SLOT_SIZE;
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = (int)ifindex,
	};

	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		say(err, errlen, errno, "'%s': bind", ifname);
		goto fail;
	}
	struct packet_mreq mr = { .mr_ifindex = (int)ifindex, .mr_type = PACKET_MR_PROMISC };

	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr))) {
		say(err, errlen, errno, "'%s': promiscuous mode", ifname);
		goto fail;
	}
	a->fd = fd;
	return a;
fail:
	if (a && a->map)
		munmap(a->map, a->map_len);
	free(a);
	close(fd);
	return NULL;
}

struct lh_afp *lh_afp_mem(void *ring, unsigned slots, unsigned slot_size)
{
	struct lh_afp *a;

	if (!ring || !slots || slot_size < TPACKET2_HDRLEN || slot_size % TPACKET_ALIGNMENT)
		return NULL;
	a = lh_xcalloc(1, sizeof(*a));
	a->fd = -1;
	a->rx = ring;
	a->slots = slots;
	a->slot_size = slot_size;
	return a;
}

void lh_afp_close(struct lh_afp *a)
{
	if (!a)
		return;
	if (a->own_map)
		munmap(a->map, a->map_len);
	if (a->fd >= 0)
		close(a->fd);
	free(a);
}

int lh_afp_fd(const struct lh_afp *a)
{
	return a->fd;
}

/*
 * slot_frame - the frame in receive slot @h of @size bytes, or NULL (and
 * why in *@own: true for a frame this socket sent). Every offset is
 * checked against the slot: what the kernel wrote is trusted no further.
 */
static const uint8_t *slot_frame(const struct tpacket2_hdr *h, unsigned size, uint32_t *len, bool *own)
{
	const unsigned sll_off = TPACKET_ALIGN(sizeof(struct tpacket2_hdr));
	uint32_t mac = h->tp_mac, snap = h->tp_snaplen;

	*own = false;
	if (sll_off + sizeof(struct sockaddr_ll) <= size) {
		const struct sockaddr_ll *sll = (const void *)((const uint8_t *)h + sll_off);

		if (sll->sll_pkttype == PACKET_OUTGOING) {
			*own = true;
			return NULL;
		}
	}
	if (mac < sizeof(struct tpacket2_hdr) || mac > size || snap > size - mac || snap != h->tp_len ||
	    snap < ETH_MIN || snap > LH_FRAME_MAX)
		return NULL;
	*len = snap;
	return (const uint8_t *)h + mac;
}

size_t lh_afp_rx(struct lh_afp *a, lh_afp_rx_fn fn, void *arg, size_t max)
{
	size_t n = 0;

	while (n < max) {
		struct tpacket2_hdr *h = (void *)(a->rx + (size_t)a->rx_i * a->slot_size);
		uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);

		if (!(status & TP_STATUS_USER))
			break;
		uint32_t len = 0;
		bool own;
		const uint8_t *f = slot_frame(h, a->slot_size, &len, &own);

		if (f) {
			a->st.rx_frames++;
			a->st.rx_bytes += len;
			a->rx_time = h->tp_sec ? (uint64_t)h->tp_sec * 1000000000u + h->tp_nsec : 0;
			fn(arg, f, len);
		} else if (own) {
			a->st.rx_own++;
		} else {
			a->st.rx_bad++;
		}
		__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		a->rx_i = a->rx_i + 1 == a->slots ? 0 : a->rx_i + 1;
		n++;
	}
	return n;
}

int lh_afp_rx_ready(const struct lh_afp *a)
{
	const struct tpacket2_hdr *h = (const void *)(a->rx + (size_t)a->rx_i * a->slot_size);

	return (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER) != 0;
}

uint64_t lh_afp_rx_time(const struct lh_afp *a)
{
	return a->rx_time;
}

int lh_afp_send(struct lh_afp *a, const uint8_t *frame, uint32_t len)
{
	if (len < ETH_MIN || len > LH_FRAME_MAX)
		return -EINVAL;
	if (!a->tx) {		/* lh_afp_mem: nowhere to send */
		a->st.tx_frames++;
		a->st.tx_bytes += len;
		return 0;
	}
	struct tpacket2_hdr *h = (void *)(a->tx + (size_t)a->tx_i * a->slot_size);
	uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);

	if (status == TP_STATUS_WRONG_FORMAT) {
		a->st.tx_errors++;
		status = TP_STATUS_AVAILABLE;
	}
	if (status != TP_STATUS_AVAILABLE) {
		a->st.tx_full++;
		/* the kernel may be done with slots it has not been asked to send yet */
		if (a->tx_queued)
			lh_afp_flush(a);
		return -ENOBUFS;
	}
	/* V2 without PACKET_TX_HAS_OFF: the data starts where the sockaddr_ll would */
	memcpy((uint8_t *)h + TPACKET2_HDRLEN - sizeof(struct sockaddr_ll), frame, len);
	h->tp_len = len;
	__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
	a->tx_i = a->tx_i + 1 == a->slots ? 0 : a->tx_i + 1;
	a->tx_queued++;
	a->st.tx_frames++;
	a->st.tx_bytes += len;
	return 0;
}

int lh_afp_flush(struct lh_afp *a)
{
	if (a->fd < 0 || !a->tx_queued)
		return 0;
	a->tx_queued = 0;
	if (send(a->fd, NULL, 0, MSG_DONTWAIT) < 0 && errno != EAGAIN && errno != ENOBUFS) {
		a->st.tx_errors++;
		return -errno;
	}
	return 0;
}

const struct lh_afp_stats *lh_afp_stats(struct lh_afp *a)
{
	if (a->fd >= 0) {
		struct tpacket_stats ks;
		socklen_t l = sizeof(ks);

		/* the kernel resets its counters on every read: accumulate */
		if (!getsockopt(a->fd, SOL_PACKET, PACKET_STATISTICS, &ks, &l))
			a->st.rx_kernel_drops += ks.tp_drops;
	}
	return &a->st;
}

int lh_afp_link(const char *ifname, uint8_t mac[6], uint32_t *mtu, uint64_t *speed_bps)
{
	struct ifreq ifr;
	int fd, rc = 0;

	if (!ifname || strlen(ifname) >= IFNAMSIZ)
		return -EINVAL;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		rc = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (!rc && ioctl(fd, SIOCGIFMTU, &ifr))
		rc = -errno;
	else if (!rc)
		*mtu = (uint32_t)ifr.ifr_mtu;
	close(fd);
	*speed_bps = 0;
	if (rc)
		return rc;
	char path[64 + IFNAMSIZ];
	FILE *f;
	long mbps;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &mbps) == 1 && mbps > 0)
			*speed_bps = (uint64_t)mbps * 1000000ULL;
		fclose(f);
	}
	return 0;
}
