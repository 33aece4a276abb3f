/* SPDX-License-Identifier: GPL-2.0 */
/*
 * realq.h: what a shaped port's real egress queue holds, shared by the
 * switch (tc_shaped counts what it hands the qdisc) and qdisc_monitor
 * (snapshots what the qdisc holds), so the link model can see the real
 * queue when the machine serves it slower than the link rate.
 *
 * The model (linkmodel.h) drains its virtual FIFO at the configured rate.
 * When softirq work or HTB's timer runs late the qdisc serves less, and
 * over a sustained overload the difference adds up: at 99.5% of the rate
 * a 100 Mbit/s port's real queue outgrew a 64 KiB buffer by 100 KB in two
 * seconds (switchd's agreement test). Drops and marks then follow a
 * shorter queue than the one packets wait in, and the buffer in packets,
 * one of the ratios a transport sees, is not the configured one. With the
 * monitor running, the model decides on the longer of its own backlog
 * and the real one, so a lagging machine emulates a slightly slower link
 * with the configured buffer rather than the right link with a deeper
 * one (the rate shortfall is judged on its own: fidelity.MinLinkRate).
 *
 * What the qdisc holds is read from the qdisc itself: at every dequeue
 * it counts, qdisc_monitor stores the qdisc's backlog (qstats.backlog)
 * with tc_shaped's count of bytes handed to it so far, and the real
 * backlog at any later time is that snapshot plus what was handed over
 * since. Counting dequeues instead would drift: the qdisc_dequeue
 * tracepoint does not see every dequeue (measured on Linux 6.18: 8-40 of
 * 8000 bursty frames through HTB went unseen, with no recursion misses),
 * and every unseen one would stay in the estimate for good; a snapshot
 * is corrected by the next dequeue seen.
 *
 * Without a monitor no snapshot is taken: the entry goes stale (none
 * within port_cfg.realq_stale_ns) and the model decides alone, so a
 * monitor that exits, even killed, leaves the switch as it was.
 */
#pragma once

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* One port's real egress queue (realq[port_base + port]). Bytes are the
 * skb's length at the qdisc: the Ethernet frame. */
struct real_queue {
	__u64 enq_bytes;    /* handed to the qdisc by tc_shaped (atomic adds: any CPU) */
	__u64 snap_enq;     /* enq_bytes when the latest snapshot was taken */
	__u64 snap_backlog; /* the qdisc's backlog right after that dequeue */
	__u64 snap_ns;      /* when (CLOCK_MONOTONIC); 0 = never */
};

/* Plane port -> its real egress queue's byte counts. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 128); /* MAX_PORTS; Go sizes it with the plane */
	__type(key, __u32);
	__type(value, struct real_queue);
} realq SEC(".maps");

/* Bytes in the port's real queue at now, or 0 if unknown (no entry, no
 * snapshot, or one older than stale_ns: port_cfg.realq_stale_ns, which Go
 * derives from the rate as four jumbo frame times plus 20 ms, since a
 * backlogged qdisc dequeues at least once per frame time and an idle one
 * has nothing to correct). Plain racy reads: a u64 load is atomic, and
 * fields read across a concurrent snapshot are off by the packets of one
 * dequeue at most. */
static __always_inline __u64 realq_backlog(const struct real_queue *rq, __u64 stale_ns, __u64 now)
{
	__u64 at, enq, snap;

	if (!rq)
		return 0;
	at = *(volatile const __u64 *)&rq->snap_ns;
	/* at > now: a snapshot on another CPU since this program read now. */
	if (!at || (now > at && now - at > stale_ns))
		return 0;
	enq = *(volatile const __u64 *)&rq->enq_bytes;
	snap = *(volatile const __u64 *)&rq->snap_enq;
	return *(volatile const __u64 *)&rq->snap_backlog + (enq > snap ? enq - snap : 0);
}
