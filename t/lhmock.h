// SPDX-License-Identifier: MIT
/*
 * DOC: lhmock.h - the parts of a hand-driven libhost transport that the
 * libhost tests share: a link that is never busy, a fixed random source
 * and timers that are not kept (a test that needs them keeps its own).
 */
#ifndef T_LHMOCK_H
#define T_LHMOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "libhost/canary_host.h"

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
