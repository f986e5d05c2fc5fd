/* SPDX-License-Identifier: MIT */
/*
 * DOC: xbar.h - the merlin switch queueing model: an input-queued router
 * after SST/Merlin's hr_router, as the engine's data path (port.c) calls it.
 * Each parameter is named beside its hr_router counterpart.
 *
 * A frame a switch forwards (emu_send) does not go to its output's egress
 * queue: it joins the FIFO of the input port it arrived on, in its traffic
 * class, and holds that input buffer (the upstream's credit; --buffer,
 * hr_router's input_buf_size, 8 KiB by default) while it waits. Only the head of each
 * (input, class) FIFO may cross the crossbar, so a head whose output is
 * busy blocks the frames behind it even when their outputs are idle
 * (head-of-line blocking, as in hr_router). Frames the switch program makes
 * itself (broadcast copies, aggregated results: no input port) wait in one
 * FIFO per (output, class) that competes like an input.
 *
 * Routing. A frame sent with a choice of ports (emu_send_pick: the up ports
 * of a fat tree toward its destination) is routed when it becomes the head
 * of its input FIFO, as topo_fattree::route_packet() is called for the new
 * head of an input VC: the natural port (topo_fattree's destination rule,
 * emu_xbar_natural(): the ((dst / down_route_factor) % up ports)-th up
 * port; the flow hash's for a frame with no host destination) is kept
 * while its output buffer of the frame's class has at least thresh =
 * adaptive_threshold x obuf bytes free (--adaptive-threshold, 0.5), else
 * the port with the most free bytes wins, ties to the natural port, then to the lower port. A frame
 * with one port (down routes, static trees) is routed already. A frame the
 * switch makes is routed when it is made (it queues at its output).
 *
 * The crossbar moves one frame per input and per output at a time, each
 * taking len * 8 / xbar_bps (--xbar-bw, hr_router's xbar_bw; 1.5 x the
 * fastest link by default). An output that is free picks, among the heads
 * that want it whose input is free and for which its output buffer has room
 * (obuf bytes per class: --obuf, hr_router's output_buf_size; 128 KiB by
 * default), the least recently served (LRS: a global grant
 * stamp per requester, ties to the lower (port, class), hr_router's
 * xbar_arb_lru order) or the next in round-robin order after the one it
 * served last. A granted frame leaves its input buffer at once (the credit
 * goes upstream) and enters the output buffer, the port's egress queue,
 * which sends under credits exactly as the FIFO model's: strict priority
 * between classes, a class only when the peer's buffer has room. A frame
 * leaves the output buffer when it starts on the wire: the output buffer's
 * free bytes are hr_router's xbar_in_credits (taken when a packet crosses
 * the crossbar, returned when it leaves on the link). The crossbar adds no
 * latency of its own; it limits rates and orders inputs.
 *
 * Timing. Under merlin a frame reaches the next hop (switch or host) one
 * link latency after its first bit left (port.c), as SST's PortControl
 * and LinkControl send a whole packet on the link when its transmission
 * starts: cut-through in effect, while the wire stays busy for the frame
 * time. (SST adds one cycle of the link's time base, which is left out.)
 * The FIFO model stays store-and-forward: one latency after the last bit.
 *
 * Arbitration is event-driven: on a new head, when an output's crossbar
 * transfer or an input's ends (EMU_EV_XBAR, posted only when someone
 * waits), and when a frame leaves an output buffer for the wire. All of it
 * runs on the node's worker in (time, key) order, so runs stay identical
 * for any partition.
 */
#ifndef EMU_XBAR_H
#define EMU_XBAR_H

#include "emu/engine/engine_internal.h"

/* emu_xbar_create - the router state of switch @n (EMU_ROUTER_MERLIN) */
struct emu_xbar *emu_xbar_create(const struct emu_node *n, const struct emu_engine_cfg *cfg, uint64_t xbar_bps);
/* emu_xbar_mem_estimate - bytes emu_xbar_create allocates for a switch of @nports ports */
uint64_t emu_xbar_mem_estimate(unsigned nports);
/* emu_xbar_destroy - free it (frames still queued belong to the pools). Accepts NULL. */
void emu_xbar_destroy(struct emu_xbar *xb);

/*
 * emu_xbar_send - queue @f (class @c, checked by emu_send) for output @port
 * at its input; arbitrate if it became a head. Return 0 or -ENOBUFS (lossy:
 * the input buffer is full; @f freed, the drop counted on its input port).
 */
int emu_xbar_send(struct emu_node *n, unsigned port, struct emu_frame *f, unsigned c);
/* emu_xbar_out_ready - output @port's buffer lost a frame to the wire: it may take another */
void emu_xbar_out_ready(struct emu_node *n, unsigned port);
/* emu_xbar_wake - EMU_EV_XBAR for @port (@input: the input side, else the output side) */
void emu_xbar_wake(struct emu_node *n, unsigned port, bool input);
/*
 * emu_xbar_natural - the natural port of a frame for host index @dst among
 * @mask (two or more ports): topo_fattree's up route, the
 * ((dst / down_route_factor) % ports)-th port of @mask, down_route_factor
 * being the hosts below one down port of the switch (1 on a leaf). A
 * frame with no host destination (@dst EMU_NONE32) takes the flow hash's
 * (@rhash: its mixed value, emu_hash64()).
 */
unsigned emu_xbar_natural(const struct emu_node *n, uint64_t mask, uint32_t dst, uint64_t rhash);
/* emu_xbar_link_down - @port's link died: frames waiting at any input for it are lost */
void emu_xbar_link_down(struct emu_node *n, unsigned port);

#endif /* EMU_XBAR_H */
