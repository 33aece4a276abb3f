/* SPDX-License-Identifier: GPL-2.0 */
/*
 * linkmodel.h: the virtual FIFO of an egress port (shaped mode).
 *
 * A port serializes at rate_bps. t_next is the time at which the last
 * accepted byte has left, so the backlog at time now is
 * max(0, t_next - now) * rate_bps / 8e9 bytes. An arrival that would
 * overflow buffer_bytes is tail-dropped (or trimmed); an accepted one moves
 * t_next to max(t_next, now) + len * 8e9 / rate_bps. The model adds no
 * delay itself: the htb/tbf qdisc at the same rate on the egress veth
 * does the real waiting, the model decides drops, marks and statistics.
 *
 * The real queue (realq.h): when the dequeue monitor reports that the
 * qdisc holds more than the model's backlog (the machine served the link
 * slower than its rate), drops, trims and marks follow the real backlog;
 * the model's own state and statistics stay those of the ideal link, and
 * lag_decided counts the arrivals whose verdict the real queue changed.
 *
 * Probe headroom (Ordered Chaos IV-B4, off unless configured): the last
 * reserve bytes of the buffer take only ftlab's header-only probes; every
 * other packet sees a buffer that much smaller.
 *
 * Overflow: delay * rate_bps is clamped by max_delay_ns (= U64_MAX /
 * rate_bps, computed in Go); len * BIT_NS < 2^50 for len < 64 KiB.
 */
#pragma once

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include "structs.h"

/* A plain racy read of a u64 (atomic on 64-bit targets), for ar. */
#define READ_ONCE_U64(x) (*(volatile __u64 *)&(x))

enum lm_verdict {
	LM_FWD = 0,      /* forward unchanged */
	LM_FWD_CE = 1,   /* forward with CE set */
	LM_FWD_PRIO = 2, /* header-only packet while trimming: priority class */
	LM_TRIM = 3,     /* trim to headers, priority class */
	LM_DROP = 4,     /* tail drop: buffer full */
};

/* What the link model needs to know about one arrival. */
struct lm_pkt {
	__u32 len;      /* frame length */
	__u32 trim_len; /* frame length after trimming; 0 = cannot be trimmed */
	__u64 reserve;  /* bytes of the buffer only probes may use */
	__u8 is_data;   /* CLASS_DATA */
	__u8 ect;       /* ECT(0) or ECT(1) */
	__u8 trim_on;   /* switch trims */
	__u8 is_probe;  /* an ftlab probe: may use the reserve */
	__u32 pad;
	__u64 real;     /* bytes in the port's real queue (realq_backlog); 0 = unknown */
};

/* The buffer an arrival may fill: all of it for probes, less the probe
 * reserve for everything else. */
static __always_inline __u64 fifo_limit(const struct port_cfg *pc, const struct lm_pkt *lp)
{
	if (lp->is_probe)
		return pc->buffer_bytes;
	return pc->buffer_bytes > lp->reserve ? pc->buffer_bytes - lp->reserve : 0;
}

/* Backlog in bytes of a FIFO with departure time t_next at time now. */
static __always_inline __u64 fifo_backlog_at(const struct port_cfg *pc, __u64 t_next, __u64 now)
{
	__u64 d;

	if (t_next <= now || !pc->rate_bps)
		return 0;
	d = t_next - now;
	if (d > pc->max_delay_ns)
		d = pc->max_delay_ns;
	return d * pc->rate_bps / BIT_NS;
}

/* Add x to the 128-bit accumulator (hi, lo). */
static __always_inline void add128(__u64 *hi, __u64 *lo, __u64 x)
{
	__u64 s = *lo + x;

	if (s < x)
		*hi += 1;
	*lo = s;
}

/* Integrate the draining backlog over [t_last, now]: it falls linearly
 * from b_last to `backlog` (its value at min(now, t_next), 0 once the
 * queue emptied), so the trapezoid is exact. Bound: (b_last + backlog) *
 * span < 2^64 holds while buffer^2 * 8e9 / rate_bps < 9e18. */
static __always_inline void fifo_integrate(struct fifo *q, __u64 backlog, __u64 now)
{
	__u64 t0 = q->t_last, end;

	if (q->t_next <= t0 || now <= t0 || !q->b_last)
		return;
	end = now < q->t_next ? now : q->t_next;
	add128(&q->integ_hi, &q->integ_lo, ((q->b_last + backlog) * (end - t0)) >> 1);
}

/* The verdict for an arrival that finds backlog bytes queued. */
static __always_inline int fifo_decide(const struct port_cfg *pc, const struct lm_pkt *lp, __u64 backlog)
{
	if (lp->trim_on && !lp->is_data && !lp->is_probe) {
		/* Header-only packets go to the priority class when trimming
		 * is on (NDP-style): they use link time but never the buffer.
		 * Not the transport's probes: they are low priority (Ordered
		 * Chaos IV-B) and must queue behind the data they speak for, or
		 * a probe overtakes the packets of its own path and the receiver
		 * takes them for lost. */
		return LM_FWD_PRIO;
	}
	if (backlog + lp->len > fifo_limit(pc, lp))
		return lp->trim_on && lp->trim_len ? LM_TRIM : LM_DROP;
	if (pc->ecn_bytes && backlog > pc->ecn_bytes && lp->ect)
		return LM_FWD_CE;
	return LM_FWD;
}

/* One arrival at egress port pc/q at time now. Runs under the FIFO lock:
 * no helper calls in here. Returns an lm_verdict. */
static __always_inline int fifo_arrive(struct fifo *q, const struct port_cfg *pc,
				       const struct lm_pkt *lp, __u64 now)
{
	__u64 backlog, bucket, acc, start;
	int verdict;

	backlog = fifo_backlog_at(pc, q->t_next, now);
	if (!q->t_first) {
		q->t_first = now;
		q->t_last = now;
	}
	fifo_integrate(q, backlog, now);
	if (now > q->t_last)
		q->t_last = now;
	q->b_last = backlog;
	bucket = backlog / (pc->hist_width ? pc->hist_width : 1);
	if (bucket >= HIST_BUCKETS)
		bucket = HIST_BUCKETS - 1;
	q->hist[bucket & (HIST_BUCKETS - 1)] += 1;

	verdict = fifo_decide(pc, lp, lp->real > backlog ? lp->real : backlog);
	if (lp->real > backlog && verdict != fifo_decide(pc, lp, backlog))
		q->lag_decided += 1;
	if (verdict == LM_DROP)
		return LM_DROP; /* b_last = backlog: nothing joined */
	acc = verdict == LM_TRIM ? lp->trim_len : lp->len;

	start = q->t_next > now ? q->t_next : now;
	q->t_next = start + acc * BIT_NS / pc->rate_bps;
	q->b_last = backlog + acc;
	q->packets += 1;
	q->bytes += acc;
	if (backlog + acc > q->max_backlog)
		q->max_backlog = backlog + acc;
	return verdict;
}
