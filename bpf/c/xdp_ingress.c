// SPDX-License-Identifier: GPL-2.0
/*
 * xdp_ingress: attached (native XDP) to every port of a switch.
 *
 * Both modes: PHY stage (admin state, corruption, rx counters), L3 sanity
 * (non-IPv4, malformed, to the switch itself, TTL). Then
 *  - line-rate mode: route, choose the egress port, rewrite, and
 *    bpf_redirect_map into the DEVMAP (bypasses every qdisc);
 *  - shaped mode: XDP_PASS; tc_shaped forwards through the egress qdisc
 *    and makes the forwarding decision there (only there).
 * Multi-buffer aware (xdp.frags) so ports with an MTU above ~3.5 KB work.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "fwd.h"

char LICENSE[] SEC("license") = "GPL";

SEC("xdp.frags")
int xdp_ingress(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct port_counters *ic, *ec;
	struct port_cfg *ipc, *epc;
	struct sw_cfg *cfg;
	struct pkt p = {};
	__u32 len, out_port;
	int in_port, res;

	in_port = ifindex_port(ctx->ingress_ifindex);
	if (in_port < 0)
		return XDP_PASS; /* not a switch port: leave it alone */
	ipc = get_port(in_port);
	ic = get_ctr(in_port);
	cfg = get_cfg();
	if (!ipc || !ic || !cfg)
		return XDP_ABORTED;

	len = bpf_xdp_get_buff_len(ctx);
	if (phy_ingress(ipc, ic, len))
		return XDP_DROP;

	res = parse_frame(data, data_end, len, &p);
	if (res == PARSE_NON_IPV4) {
		ic->drop_non_ipv4 += 1;
		return XDP_DROP;
	}
	if (res != PARSE_OK) {
		ic->drop_malformed += 1;
		return XDP_DROP;
	}
	if (cfg->addr && p.daddr == cfg->addr) {
		ic->to_local += 1;
		return XDP_PASS;
	}
	if (p.ttl <= 1) {
		ic->drop_ttl += 1;
		return XDP_DROP;
	}
	if (cfg->mode == MODE_SHAPED)
		return XDP_PASS;

	res = fwd_decide(cfg, &p, in_port, 0, ic, &out_port);
	if (res == FWD_LOCAL) {
		ic->to_local += 1;
		return XDP_PASS;
	}
	if (res != FWD_PORT || out_port >= MAX_PORTS) {
		ic->drop_no_route += 1;
		return XDP_DROP;
	}
	epc = get_port(out_port);
	ec = get_ctr(out_port);
	if (!epc || !ec || !epc->configured) {
		ic->drop_no_route += 1;
		return XDP_DROP;
	}
	if (!epc->admin_up) {
		ec->drop_link_down += 1;
		return XDP_DROP;
	}

	rewrite_l2_ttl(data, p.iph, epc);
	ec->tx_packets += 1;
	ec->tx_bytes += len;
	return bpf_redirect_map(&tx_ports, out_port, XDP_DROP);
}
