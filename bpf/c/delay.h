/* SPDX-License-Identifier: GPL-2.0 */
/*
 * delay.h: link propagation delay, accumulated in ftlab's transport header.
 *
 * The kernel has no qdisc that holds packets back (no netem, fq or etf),
 * so links cannot delay packets themselves. Instead every switch adds, at
 * ingress, the delay and the jitter bound of the link the packet arrived
 * on to two 32-bit words of ftlab's header (hostagent/wire: offsets 28
 * and 32 of the UDP payload, in every packet type), saturating, and
 * patches the UDP checksum incrementally (RFC 1624). The receiving host's
 * agent adds its own access link's and holds the packet until its arrival
 * plus the sum (docs/delay.md). Only UDP to the agents' port whose payload
 * starts with ftlab's magic and version 2 is touched; everything else
 * passes as it came. A port without delay or jitter costs one test.
 */
#pragma once

#include <linux/types.h>
#include <linux/in.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include "csum.h"
#include "parse.h"
#include "consts.h"
#include "structs.h"

/* What delay_stamp did with a packet. */
enum delay_result {
	DELAY_STAMPED = 0,    /* the words now include this link */
	DELAY_NOT_OURS = 1,   /* not an agents' packet: untouched */
	DELAY_UNREACHED = 2,  /* an agents' packet whose header is not in the linear data */
};

static __always_inline __u32 sat_add_u32(__u32 a, __u32 b)
{
	__u32 s = a + b;

	return s < a ? 0xffffffff : s;
}

/* Adds add to the big-endian u32 at w (two halfwords, 2-byte aligned) and
 * updates the UDP checksum *check for the change (unless it is 0: none). */
static __always_inline void add_be32(__u16 *w, __u32 add, __u16 *check)
{
	__u16 hi = w[0], lo = w[1];
	__u32 v = sat_add_u32(((__u32)bpf_ntohs(hi) << 16) | bpf_ntohs(lo), add);
	__u16 nhi = bpf_htons(v >> 16), nlo = bpf_htons(v & 0xffff);

	w[0] = nhi;
	w[1] = nlo;
	if (*check) {
		csum_replace_u16(check, hi, nhi);
		csum_replace_u16(check, lo, nlo);
		if (!*check)
			*check = 0xffff; /* a computed 0 travels as all ones (RFC 768) */
	}
}

/* Adds the ingress link's delay and jitter bound (ipc) to an agents'
 * packet. p was parsed from [data, data_end). */
static __always_inline int delay_stamp(void *data_end, const struct pkt *p, const struct sw_cfg *cfg,
				       const struct port_cfg *ipc)
{
	struct udphdr *udp;
	__u8 *ft;

	if (p->proto != IPPROTO_UDP || p->frag || !cfg->agent_port)
		return DELAY_NOT_OURS;
	udp = (void *)p->iph + p->ihl_bytes;
	if ((void *)(udp + 1) > data_end)
		return DELAY_UNREACHED;
	if (udp->dest != bpf_htons(cfg->agent_port))
		return DELAY_NOT_OURS;
	ft = (void *)(udp + 1);
	if ((__u32)p->tot_len < p->ihl_bytes + UDP_HDR_LEN + FTL_COMMON_LEN)
		return DELAY_NOT_OURS; /* too short to be ours */
	if ((void *)(ft + FTL_COMMON_LEN) > data_end)
		return DELAY_UNREACHED;
	if (ft[0] != (FTL_MAGIC >> 8) || ft[1] != (FTL_MAGIC & 0xff) || ft[2] != FTL_VERSION)
		return DELAY_NOT_OURS;
	add_be32((__u16 *)(ft + FTL_DELAY_OFF), ipc->delay_ns, &udp->check);
	add_be32((__u16 *)(ft + FTL_JITTER_OFF), ipc->jitter_ns, &udp->check);
	return DELAY_STAMPED;
}

/* The hook: stamp if the ingress link has a delay or jitter, count an
 * agents' packet that could not be stamped. */
static __always_inline void delay_ingress(void *data_end, const struct pkt *p, const struct sw_cfg *cfg,
					  const struct port_cfg *ipc, struct port_counters *ic)
{
	if (!(ipc->delay_ns | ipc->jitter_ns))
		return;
	if (delay_stamp(data_end, p, cfg, ipc) == DELAY_UNREACHED)
		ic->delay_unstamped += 1;
}
