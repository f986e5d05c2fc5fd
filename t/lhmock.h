// SPDX-License-Identifier: MIT
/*
 * DOC: lhmock.h - the parts of a hand-driven libhost transport that the
 * libhost tests share: one transmit buffer (lhm_txbuf, which the test's
 * frame_send reads, lhm_sent_canary parses), a clock the test moves
 * (lhm_now_ps), a link that is never busy, a fixed random source, timers
 * that are not kept (a test that needs them keeps its own) and an input
 * (lhm_input: element i is 100 + i on every rank).
 */
#ifndef T_LHMOCK_H
#define T_LHMOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "libhost/canary_host.h"
#include "libhost/wire.h"

static uint8_t lhm_txbuf[LH_FRAME_MAX];

static inline uint8_t *lhm_frame_get(void *ctx, void **handle)
{
	(void)ctx;
	*handle = lhm_txbuf;
	return lhm_txbuf;
}

static inline bool lhm_tx_idle(void *ctx)
{
	(void)ctx;
	return false;
}

static inline uint64_t lhm_random(void *ctx)
{
	(void)ctx;
	return 42;
}

static inline void lhm_timer_none(void *ctx, lh_time_t at, uint64_t cookie)
{
	(void)ctx;
	(void)at;
	(void)cookie;
}

static lh_time_t lhm_now_ps;

static inline lh_time_t lhm_now(void *ctx)
{
	(void)ctx;
	return lhm_now_ps;
}

/* the header of the Canary frame of @len bytes just sent; false if it is none */
static inline bool lhm_sent_canary(uint32_t len, struct emu_canary_hdr *h)
{
	unsigned n;

	return lh_wire_canary_parse(lhm_txbuf, len, h, &n) == LH_WIRE_OK;
}

static inline void lhm_input(void *arg, size_t off, int32_t *out, size_t n)
{
	(void)arg;
	for (size_t i = 0; i < n; i++)
		out[i] = 100 + (int32_t)(off + i);
}

#endif
