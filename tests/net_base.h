/* tests/net_base.h — the network model of one link as the net tests start from: no loss,
 * whole-message units, netem's defaults left to net_cfg_defaults, a reliable transport's
 * timers (rto 1 ms doubling to 8 ms, 15 resends) ready for tests that switch to it. */
#ifndef EMU_TESTS_NET_BASE_H
#define EMU_TESTS_NET_BASE_H

#include <string.h>
#include "emu/net/net.h"

static inline struct net_cfg cfg_base(void)
{
	struct net_cfg c;

	memset(&c, 0, sizeof(c));
	c.ge_r = c.ge_1h = c.ge_1k = NET_UNSET;
	c.p31 = c.p32 = c.p23 = c.p14 = NET_UNSET;
	c.slot_max = -1;	/* as tc's slot MIN without MAX: slot_min */
	c.unit = UNIT_MESSAGE;
	c.timeout = 1000000;
	c.rto = 1000000;
	c.rto_max = 8000000;
	c.max_retries = 15;
	return c;
}

#endif
