// SPDX-License-Identifier: MIT
/*
 * DOC: lhmock.h - the parts of a hand-driven libhost transport that the
 * libhost tests share: one transmit buffer (lhm_txbuf, which the test's
 * frame_send reads), a link that is never busy, a fixed random source and
 * timers that are not kept (a test that needs them keeps its own).
 */
#ifndef T_LHMOCK_H
#define T_LHMOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "libhost/canary_host.h"

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

#endif
