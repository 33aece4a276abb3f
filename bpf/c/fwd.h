/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fwd.h: the forwarding stage shared by XDP (line-rate) and TC (shaped):
 * route lookup, egress port choice, MAC rewrite and TTL decrement.
 */
#pragma once

#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parse.h"
#include "csum.h"
#include "policy.h"

enum fwd_result {
	FWD_PORT = 0,  /* out of *out_port */
	FWD_LOCAL = 1, /* to the switch itself */
	FWD_NONE = 2,  /* no route or no valid uplink */
};

static __always_inline struct sw_cfg *get_cfg(__u32 sw)
{
	return bpf_map_lookup_elem(&cfg_map, &sw);
}

/* Port and counters by plane port (port_base + port). */
static __always_inline struct port_cfg *get_port(__u32 pp)
{
	return bpf_map_lookup_elem(&ports, &pp);
}

static __always_inline struct port_counters *get_ctr(__u32 pp)
{
	return bpf_map_lookup_elem(&counters, &pp);
}

/* Plane port of an ingress ifindex, or -1 if it is not a switch port. */
static __always_inline long ifindex_port(__u32 ifindex)
{
	__u32 *pp = bpf_map_lookup_elem(&if2port, &ifindex);

	if (!pp)
		return -1;
	return *pp;
}

/* The switch-local number of plane port pp, or -1 if pp is not one of the
 * switch's ports. */
static __always_inline long local_port(const struct sw_cfg *cfg, __u32 pp)
{
	if (pp < cfg->port_base || pp - cfg->port_base >= cfg->n_ports)
		return -1;
	return pp - cfg->port_base;
}

/* Route lookup and, going up, the policy's uplink. *out_port is the
 * switch-local egress port, below cfg->n_ports. */
static __always_inline int fwd_decide(const struct sw_cfg *cfg, const struct pkt *p,
				      __u32 in_port, int have_fifo, struct port_counters *ic,
				      __u32 *out_port)
{
	struct route_key key = { .prefixlen = 64, .sw = cfg->id, .addr = p->daddr };
	struct route_val *rt;
	__u32 *port;
	__u32 u;
	int up;

	rt = bpf_map_lookup_elem(&routes, &key);
	if (!rt)
		return FWD_NONE;
	switch (rt->kind) {
	case ROUTE_DOWN:
		if (rt->arg >= cfg->n_ports)
			return FWD_NONE;
		*out_port = rt->arg;
		return FWD_PORT;
	case ROUTE_LOCAL:
		return FWD_LOCAL;
	case ROUTE_UP:
		break;
	default:
		return FWD_NONE;
	}
	{
		struct flow f = {
			.saddr = p->saddr, .daddr = p->daddr, .ports = p->ports,
			.proto = p->proto, .tot_len = p->tot_len, .in_port = in_port,
			.group = rt->arg, .vset = rt->vset, .have_fifo = have_fifo,
		};

		up = choose_uplink(cfg, &f);
		if (cfg->policy == POLICY_AR && !have_fifo)
			ic->ar_fallback += 1;
	}
	if (up < 0)
		return FWD_NONE;
	u = cfg->id * MAX_UPLINKS + up;
	port = bpf_map_lookup_elem(&uplinks, &u);
	if (!port || *port >= cfg->n_ports)
		return FWD_NONE;
	*out_port = *port;
	return FWD_PORT;
}

/* Source MAC = egress port, destination = its peer; TTL - 1 with the
 * IPv4 checksum updated incrementally. The caller checked ttl > 1. */
static __always_inline void rewrite_l2_ttl(void *data, struct iphdr *iph,
					   const struct port_cfg *epc)
{
	struct ethhdr *eth = data;
	__u16 *ttl_word = (__u16 *)&iph->ttl; /* ttl, protocol */
	__u16 old = *ttl_word;

	__builtin_memcpy(eth->h_dest, epc->peer_mac, ETH_ALEN);
	__builtin_memcpy(eth->h_source, epc->mac, ETH_ALEN);
	iph->ttl -= 1;
	csum_replace_u16(&iph->check, old, *ttl_word);
}

/* Set CE on an ECT packet, checksum updated incrementally. */
static __always_inline void set_ce(struct iphdr *iph)
{
	__u16 *word = (__u16 *)iph; /* version/ihl, tos */
	__u16 old = *word;

	iph->tos |= 0x3;
	csum_replace_u16(&iph->check, old, *word);
}

/* Ingress PHY stage: 0 = go on, otherwise the frame is dropped (counted). */
static __always_inline int phy_ingress(const struct port_cfg *ipc, struct port_counters *ic,
				       __u32 len)
{
	ic->rx_packets += 1;
	ic->rx_bytes += len;
	if (!ipc->admin_up) {
		ic->drop_link_down += 1;
		return -1;
	}
	if (ipc->corrupt_all || (ipc->corrupt_thr && bpf_get_prandom_u32() < ipc->corrupt_thr)) {
		ic->drop_corrupt += 1;
		return -1;
	}
	return 0;
}
