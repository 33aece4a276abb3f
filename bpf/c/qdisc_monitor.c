// SPDX-License-Identifier: GPL-2.0
/*
 * qdisc_monitor: how fast each emulated link's real queue drains.
 *
 * The link model (linkmodel.h) decides drops and CE marks on a virtual
 * FIFO, but the packets really wait in the egress veth's HTB qdisc, whose
 * dequeues set the emulated link's pace - unless the machine is too busy
 * to run them on time. As Mininet-HiFi did, this program measures them: a
 * raw tracepoint on every qdisc dequeue in the machine picks the packets
 * tc_shaped stamped with a watched port's mark, and whenever the previous
 * dequeue left the qdisc backlogged, the gap since it is the time the link
 * took to serialize the previous packet. User space compares the bytes
 * served in those gaps with their sum: the rate the link achieved while it
 * had work, against its configured rate.
 *
 * At the dequeues of a port of a plane (dq_stats.rq_port) it also
 * snapshots the qdisc's backlog into the plane's realq entry (realq.h):
 * the link model's view of the real queue.
 *
 * Updates of dq_ports are plain adds: a qdisc dequeues on one CPU at a
 * time (its running state serializes them), so one port's entry has one
 * writer; a port's realq snapshot has this one writer too.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "qdisc_monitor.h"

char LICENSE[] SEC("license") = "GPL";

/* TP_PROTO(struct Qdisc *qdisc, const struct netdev_queue *txq,
 *          int packets, struct sk_buff *skb); skb is NULL when the qdisc
 * had nothing to send (HTB throttled), a list head when it bulk-dequeued. */
SEC("raw_tracepoint/qdisc_dequeue")
int qdisc_dequeue(struct bpf_raw_tracepoint_args *ctx)
{
	struct Qdisc *q = (struct Qdisc *)ctx->args[0];
	int packets = (int)ctx->args[2];
	struct sk_buff *skb = (struct sk_buff *)ctx->args[3];
	struct dq_stats *st;
	__u32 mark, len, qlen;
	__u64 total;
	__u64 now;

	if (!skb || packets <= 0)
		return 0;
	mark = BPF_CORE_READ(skb, mark);
	if (!mark)
		return 0;
	st = bpf_map_lookup_elem(&dq_ports, &mark);
	if (!st)
		return 0;
	now = bpf_ktime_get_ns();
	len = BPF_CORE_READ(skb, len);
	qlen = BPF_CORE_READ(q, q.qlen);

	total = len;
	/* A bulk dequeue hands over a list: count every packet's bytes. */
	if (packets > 1) {
		struct sk_buff *next = BPF_CORE_READ(skb, next);

		for (int i = 1; i < MAX_BULK_DEQUEUE && i < packets && next; i++) {
			total += BPF_CORE_READ(next, len);
			next = BPF_CORE_READ(next, next);
		}
	}
	st->dequeues += packets;
	st->bytes += total;
	if (st->rq_port) {
		__u32 pp = st->rq_port - 1;
		struct real_queue *rq = bpf_map_lookup_elem(&realq, &pp);

		if (rq) {
			rq->snap_enq = *(volatile __u64 *)&rq->enq_bytes;
			rq->snap_backlog = BPF_CORE_READ(q, qstats.backlog);
			rq->snap_ns = now;
		}
	}
	if (packets == 1 && st->last_ns && st->last_qlen > 0 && now > st->last_ns) {
		st->busy_gaps += 1;
		st->busy_ns += now - st->last_ns;
		st->busy_bytes += st->last_len;
	}
	st->last_ns = now;
	st->last_len = len;
	/* After a bulk dequeue the gap to the next one is not one packet's. */
	st->last_qlen = packets == 1 ? qlen : 0;
	return 0;
}
