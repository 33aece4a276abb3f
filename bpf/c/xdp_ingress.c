// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_ingress: attached (native XDP) to every port of a switch.
 *
 * Both modes: PHY stage (admin state, corruption, rx counters), L3 sanity
 * (non-IPv4, malformed, to the switch itself, TTL), the ingress link's
 * propagation delay added to agents' packets (delay.h). Then
 *  - line-rate mode: route, choose the egress port, rewrite, and
 *    bpf_redirect_map into the DEVMAP (bypasses every qdisc);
 *  - shaped mode: XDP_PASS; tc_shaped forwards through the egress qdisc
 *    and makes the forwarding decision there (only there).
 * Multi-buffer aware (xdp.frags) so ports with an MTU above ~3.5 KB work.
 * One program serves every switch of a plane: the ingress ifindex names
 * the plane port, its port_cfg the switch (maps.h).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "delay.h"
#include "fwd.h"
#include "tap.h"

char LICENSE[] SEC("license") = "GPL";

TAP_DEFINE(tap_xdp, struct xdp_md, bpf_xdp_get_buff_len(ctx), bpf_xdp_load_bytes)

/* Capture hooks (tap.h): records of this frame on the tapped ports. */
#define TAP(emit, out, verdict, cause) \
	TAP_HOOK(tap_xdp, tap, ctx, cfg->id, emit, in_port, out, verdict, cause, 0)
#define DROP_IN(cause) \
	do { TAP(TAP_EMIT_IN, TAP_NO_PORT, TAP_DROP, cause); return XDP_DROP; } while (0)

SEC("xdp.frags")
int xdp_ingress(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct port_counters *ic, *ec;
	struct port_cfg *ipc, *epc;
	struct sw_cfg *cfg;
	struct pkt p = {};
	__u32 len, out_port, epp;
	long ipp, in_port;
	int res;
	__u32 tap;

	ipp = ifindex_port(ctx->ingress_ifindex);
	if (ipp < 0)
		return XDP_PASS; /* not a switch port: leave it alone */
	ipc = get_port(ipp);
	ic = get_ctr(ipp);
	if (!ipc || !ic)
		return XDP_ABORTED;
	cfg = get_cfg(ipc->sw);
	if (!cfg)
		return XDP_ABORTED;
	in_port = local_port(cfg, ipp);
	if (in_port < 0)
		return XDP_ABORTED;
	tap = tap_active(cfg->id);

	len = bpf_xdp_get_buff_len(ctx);
	if (phy_ingress(ipc, ic, len))
		DROP_IN(ipc->admin_up ? TAP_CAUSE_CORRUPT : TAP_CAUSE_LINK_DOWN);

	res = parse_frame(data, data_end, len, &p);
	if (res == PARSE_NON_IPV4) {
		ic->drop_non_ipv4 += 1;
		DROP_IN(TAP_CAUSE_NON_IPV4);
	}
	if (res != PARSE_OK) {
		ic->drop_malformed += 1;
		DROP_IN(TAP_CAUSE_MALFORMED);
	}
	if (cfg->addr && p.daddr == cfg->addr) {
		ic->to_local += 1;
		TAP(TAP_EMIT_IN, TAP_NO_PORT, TAP_LOCAL, 0);
		return XDP_PASS;
	}
	if (p.ttl <= 1) {
		ic->drop_ttl += 1;
		DROP_IN(TAP_CAUSE_TTL);
	}
	/* Both modes: the link the frame came in on adds its delay. */
	delay_ingress(data_end, &p, cfg, ipc, ic);
	if (cfg->mode == MODE_SHAPED)
		return XDP_PASS;

	res = fwd_decide(cfg, &p, in_port, 0, ic, &out_port);
	if (res == FWD_LOCAL) {
		ic->to_local += 1;
		TAP(TAP_EMIT_IN, TAP_NO_PORT, TAP_LOCAL, 0);
		return XDP_PASS;
	}
	if (res != FWD_PORT) {
		ic->drop_no_route += 1;
		DROP_IN(TAP_CAUSE_NO_ROUTE);
	}
	epp = cfg->port_base + out_port;
	epc = get_port(epp);
	ec = get_ctr(epp);
	if (!epc || !ec || !epc->configured) {
		ic->drop_no_route += 1;
		DROP_IN(TAP_CAUSE_NO_ROUTE);
	}
	if (!epc->admin_up) {
		ec->drop_link_down += 1;
		TAP(TAP_EMIT_IN | TAP_EMIT_OUT, out_port, TAP_DROP, TAP_CAUSE_LINK_DOWN);
		return XDP_DROP;
	}

	TAP(TAP_EMIT_IN, out_port, TAP_FORWARD, 0);
	rewrite_l2_ttl(data, p.iph, epc);
	ec->tx_packets += 1;
	ec->tx_bytes += len;
	TAP(TAP_EMIT_OUT, out_port, TAP_FORWARD, 0);
	return bpf_redirect_map(&tx_ports, epp, XDP_DROP);
}
