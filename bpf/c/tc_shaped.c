// SPDX-License-Identifier: GPL-2.0
/*
 * tc_shaped: TC ingress on every port of a switch in shaped mode.
 *
 * xdp_ingress has already done the PHY stage and the L3 sanity checks and
 * passed the frame. Here: route, choose the egress port (ar sees the
 * FIFOs), run the egress port's virtual FIFO (drop / trim / CE mark /
 * statistics, seeing the real queue too: realq.h), rewrite and
 * bpf_redirect(ifindex, 0) so the packet waits in the egress veth's qdisc
 * (htb/tbf at the link rate). In line-rate
 * mode, and for packets to the switch itself, it passes. Attached as a
 * direct-action cls_bpf filter on the port's ingress qdisc.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include "fwd.h"
#include "linkmodel.h"
#include "tap.h"

char LICENSE[] SEC("license") = "GPL";

TAP_DEFINE(tap_skb, struct __sk_buff, ctx->len, bpf_skb_load_bytes)

/* Capture hooks (tap.h): records of this frame on the tapped ports. */
#define TAP(emit, out, verdict, cause, flags) \
	TAP_HOOK(tap_skb, tap, skb, cfg->id, emit, in_port, out, verdict, cause, (flags) | TAP_F_TC)
#define SHOT_IN(cause) \
	do { TAP(TAP_EMIT_IN, TAP_NO_PORT, TAP_DROP, cause, 0); return TC_ACT_SHOT; } while (0)

#define HDR_LINEAR (ETH_HLEN + MAX_IP_HDR + L4_HDR_PULL)

/* Frame length after trimming, or 0 if the packet cannot be trimmed
 * (only unfragmented UDP longer than its trimmed size). */
static __always_inline __u32 trim_length(const struct pkt *p)
{
	__u32 tl = ETH_HLEN + p->ihl_bytes + UDP_HDR_LEN + TRIM_KEEP;

	if (p->proto != IPPROTO_UDP || p->frag || p->len <= tl)
		return 0;
	return tl;
}

/* Cut the frame to trim_len: IPv4 total length (checksum updated), UDP
 * length, UDP checksum 0 (allowed for IPv4), then shrink the skb. */
static __always_inline int trim_packet(struct __sk_buff *skb, const struct pkt *p,
				       void *data_end, __u32 trim_len)
{
	struct iphdr *iph = p->iph;
	struct udphdr *udp = (void *)iph + p->ihl_bytes;
	__u16 old_tot = iph->tot_len;
	__u16 new_tot = bpf_htons(p->ihl_bytes + UDP_HDR_LEN + TRIM_KEEP);

	if ((void *)(udp + 1) > data_end)
		return -1;
	iph->tot_len = new_tot;
	csum_replace_u16(&iph->check, old_tot, new_tot);
	udp->len = bpf_htons(UDP_HDR_LEN + TRIM_KEEP);
	udp->check = 0;
	return bpf_skb_change_tail(skb, trim_len, 0) ? -1 : 0;
}

SEC("tc")
int tc_shaped(struct __sk_buff *skb)
{
	struct port_counters *ic, *ec;
	struct real_queue *rq = NULL;
	struct port_cfg *ipc, *epc;
	struct lm_pkt lp = {};
	struct sw_cfg *cfg;
	struct pkt p = {};
	void *data, *data_end;
	__u32 out_port, linear, epp;
	long ipp, in_port;
	int res, verdict = LM_FWD;
	__u32 tap, tflags;

	ipp = ifindex_port(skb->ifindex);
	if (ipp < 0)
		return TC_ACT_OK;
	ipc = get_port(ipp);
	if (!ipc)
		return TC_ACT_OK;
	cfg = get_cfg(ipc->sw);
	if (!cfg || cfg->mode != MODE_SHAPED)
		return TC_ACT_OK;
	in_port = local_port(cfg, ipp);
	ic = get_ctr(ipp);
	if (in_port < 0 || !ic)
		return TC_ACT_SHOT;
	tap = tap_active(cfg->id);

	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	linear = data_end - data;
	if (linear < HDR_LINEAR && skb->len > linear) {
		bpf_skb_pull_data(skb, skb->len < HDR_LINEAR ? skb->len : HDR_LINEAR);
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
	}

	/* The same checks as XDP (which normally caught these already). */
	res = parse_frame(data, data_end, skb->len, &p);
	if (res == PARSE_NON_IPV4) {
		ic->drop_non_ipv4 += 1;
		SHOT_IN(TAP_CAUSE_NON_IPV4);
	}
	if (res != PARSE_OK) {
		ic->drop_malformed += 1;
		SHOT_IN(TAP_CAUSE_MALFORMED);
	}
	if (cfg->addr && p.daddr == cfg->addr)
		return TC_ACT_OK; /* counted by xdp_ingress */
	if (p.ttl <= 1) {
		ic->drop_ttl += 1;
		SHOT_IN(TAP_CAUSE_TTL);
	}

	res = fwd_decide(cfg, &p, in_port, 1, ic, &out_port);
	if (res == FWD_LOCAL) {
		ic->to_local += 1;
		TAP(TAP_EMIT_IN, TAP_NO_PORT, TAP_LOCAL, 0, 0);
		return TC_ACT_OK;
	}
	if (res != FWD_PORT) {
		ic->drop_no_route += 1;
		SHOT_IN(TAP_CAUSE_NO_ROUTE);
	}
	epp = cfg->port_base + out_port;
	epc = get_port(epp);
	ec = get_ctr(epp);
	if (!epc || !ec || !epc->configured) {
		ic->drop_no_route += 1;
		SHOT_IN(TAP_CAUSE_NO_ROUTE);
	}
	if (!epc->admin_up) {
		ec->drop_link_down += 1;
		TAP(TAP_EMIT_IN | TAP_EMIT_OUT, out_port, TAP_DROP, TAP_CAUSE_LINK_DOWN, 0);
		return TC_ACT_SHOT;
	}

	lp.len = p.len;
	lp.trim_len = trim_length(&p);
	lp.is_data = pkt_class(&p, cfg->ack_thr) == CLASS_DATA;
	lp.ect = (p.tos & 0x3) == 1 || (p.tos & 0x3) == 2;
	lp.trim_on = cfg->trim != 0;
	if (cfg->probe_ppm || lp.trim_on)
		lp.is_probe = is_ftl_probe(&p, data_end);
	if (cfg->probe_ppm)
		lp.reserve = epc->buffer_bytes * cfg->probe_ppm / PPM;
	if (epc->rate_bps) {
		struct fifo *q = bpf_map_lookup_elem(&fifos, &epp);

		rq = bpf_map_lookup_elem(&realq, &epp);
		if (q) {
			__u64 now = bpf_ktime_get_ns();

			lp.real = realq_backlog(rq, epc->realq_stale_ns, now);
			bpf_spin_lock(&q->lock);
			verdict = fifo_arrive(q, epc, &lp, now);
			bpf_spin_unlock(&q->lock);
		}
	}
	if (verdict == LM_DROP) {
		ec->drop_buffer += 1;
		TAP(TAP_EMIT_IN | TAP_EMIT_OUT, out_port, TAP_DROP, TAP_CAUSE_BUFFER, 0);
		return TC_ACT_SHOT;
	}

	tflags = (verdict == LM_TRIM ? TAP_F_TRIMMED : 0) | (verdict == LM_FWD_CE ? TAP_F_CE : 0);
	TAP(TAP_EMIT_IN, out_port, TAP_FORWARD, 0, tflags);
	rewrite_l2_ttl(data, p.iph, epc);
	if (verdict == LM_FWD_CE) {
		set_ce(p.iph);
		ec->ce_marked += 1;
	}
	skb->priority = (verdict == LM_FWD_PRIO || verdict == LM_TRIM) ? TRIM_PRIORITY : 0;
	if (verdict == LM_TRIM) {
		if (trim_packet(skb, &p, data_end, lp.trim_len)) {
			ec->drop_buffer += 1;
			TAP(TAP_EMIT_OUT, out_port, TAP_DROP, TAP_CAUSE_BUFFER, 0);
			return TC_ACT_SHOT;
		}
		ec->trimmed += 1;
	}
	ec->tx_packets += 1;
	ec->tx_bytes += skb->len;
	if (rq)
		__sync_fetch_and_add(&rq->enq_bytes, skb->len);
	/* Lets qdisc_monitor find the packet when the link dequeues it (the
	 * mark is scrubbed when the veth hands it to the peer namespace). */
	skb->mark = epc->mark;
	TAP(TAP_EMIT_OUT, out_port, TAP_FORWARD, 0, tflags);
	return bpf_redirect(epc->ifindex, 0);
}
