/* SPDX-License-Identifier: GPL-2.0 */
/*
 * parse.h: bounds-checked Ethernet/IPv4/UDP parsing shared by XDP and TC.
 * Works on the linear area [data, data_end); frame_len is the whole frame
 * (XDP multi-buffer: bpf_xdp_get_buff_len; TC: skb->len), so a packet
 * longer than its first buffer is still judged by its real length.
 */
#pragma once

#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/in.h>
#include <bpf/bpf_endian.h>
#include "consts.h"

#define IP_MF_OFFSET_MASK 0x3fff /* MF flag and fragment offset */
#define UDP_HDR_LEN 8
#define TCP_MIN_HDR_LEN 20

enum parse_result {
	PARSE_OK = 0,
	PARSE_NON_IPV4 = 1, /* ARP, IPv6, VLAN, ...: switches are IPv4-only */
	PARSE_MALFORMED = 2, /* truncated frame or inconsistent IPv4 header */
};

/* What the forwarding stage needs to know about a packet. */
struct pkt {
	struct iphdr *iph; /* verified: the whole IPv4 header is linear */
	__u32 len;         /* frame length including Ethernet */
	__u32 saddr;       /* network byte order */
	__u32 daddr;       /* network byte order */
	__u32 ports;       /* first 4 transport bytes (sport, dport), 0 if none */
	__u16 tot_len;     /* IPv4 total length, host order */
	__u16 ihl_bytes;   /* IPv4 header length in bytes */
	__u8 proto;
	__u8 ttl;
	__u8 tos;
	__u8 frag;         /* 1: a fragment (MF set or offset != 0) */
};

static __always_inline int parse_frame(void *data, void *data_end, __u32 frame_len,
				       struct pkt *p)
{
	struct ethhdr *eth = data;
	struct iphdr *iph;
	__u32 ihl;

	if ((void *)(eth + 1) > data_end)
		return PARSE_MALFORMED;
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return PARSE_NON_IPV4;

	iph = (void *)(eth + 1);
	if ((void *)(iph + 1) > data_end)
		return PARSE_MALFORMED;
	if (iph->version != 4 || iph->ihl < 5)
		return PARSE_MALFORMED;
	ihl = (__u32)iph->ihl * 4;
	if ((void *)iph + ihl > data_end)
		return PARSE_MALFORMED;

	p->iph = iph;
	p->len = frame_len;
	p->tot_len = bpf_ntohs(iph->tot_len);
	p->ihl_bytes = ihl;
	if (p->tot_len < ihl || (__u32)p->tot_len + ETH_HLEN > frame_len)
		return PARSE_MALFORMED;
	p->saddr = iph->saddr;
	p->daddr = iph->daddr;
	p->proto = iph->protocol;
	p->ttl = iph->ttl;
	p->tos = iph->tos;
	p->frag = (iph->frag_off & bpf_htons(IP_MF_OFFSET_MASK)) != 0;
	p->ports = 0;

	/* Ports only from unfragmented packets: every fragment of a datagram
	 * then hashes alike. The transport header must fit the IP packet. */
	if (!p->frag && (p->proto == IPPROTO_UDP || p->proto == IPPROTO_TCP)) {
		__u32 need = p->proto == IPPROTO_UDP ? UDP_HDR_LEN : TCP_MIN_HDR_LEN;
		__u32 *l4 = (void *)iph + ihl;

		if (ihl + need > p->tot_len)
			return PARSE_MALFORMED;
		if ((void *)(l4 + 1) > data_end)
			return PARSE_MALFORMED;
		p->ports = *l4;
	}
	return PARSE_OK;
}

/* Data vs header-only packet, by IPv4 total length. */
static __always_inline __u32 pkt_class(const struct pkt *p, __u32 ack_thr)
{
	return p->tot_len <= ack_thr ? CLASS_ACK : CLASS_DATA;
}

/* Whether a parsed packet is a probe of ftlab's transport: unfragmented
 * UDP whose payload is exactly a probe header with the magic and a probe
 * type. The header's first bytes must be in the linear area. */
static __always_inline int is_ftl_probe(const struct pkt *p, void *data_end)
{
	__u8 *w = (__u8 *)p->iph + p->ihl_bytes + UDP_HDR_LEN;

	if (p->proto != IPPROTO_UDP || p->frag || p->tot_len != p->ihl_bytes + UDP_HDR_LEN + FTL_PROBE_LEN)
		return 0;
	if ((void *)(w + FTL_TYPE_OFF + 1) > data_end)
		return 0;
	if (((__u16)w[0] << 8 | w[1]) != FTL_MAGIC)
		return 0;
	return w[FTL_TYPE_OFF] >= FTL_PROBE_FIRST && w[FTL_TYPE_OFF] <= FTL_PROBE_LAST;
}
