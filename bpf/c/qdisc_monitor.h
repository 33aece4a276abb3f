/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qdisc_monitor.h: the dequeue monitor's own definitions. It runs outside
 * the switches (one instance per process, on a machine-wide tracepoint)
 * and shares with them only the skb mark tc_shaped stamps (port_cfg.mark)
 * and, when loaded against a plane, that plane's realq map (realq.h), so
 * its bounds, its map value and its map live here rather than in the
 * switch's consts.h/structs.h/maps.h.
 */
#pragma once

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "realq.h"

enum qm_limits {
	MAX_WATCHED_PORTS = 16384, /* default size of dq_ports; Go sizes it per lab */
	MAX_BULK_DEQUEUE = 64,     /* packets of one bulk dequeue the program walks */
};

/* What the monitor measured of one port's real egress queue (dq_ports).
 * A busy gap is the time from one dequeue that left the qdisc backlogged
 * to the next: the link serializing the earlier packet, so busy_bytes
 * sums those earlier packets' lengths. */
struct dq_stats {
	__u64 dequeues;   /* packets dequeued */
	__u64 bytes;      /* their bytes (skb->len: the Ethernet frame) */
	__u64 busy_gaps;  /* dequeues that followed one leaving a backlog */
	__u64 busy_ns;    /* sum of those gaps */
	__u64 busy_bytes; /* bytes served in them */
	__u64 last_ns;    /* time of the latest dequeue */
	__u32 last_len;   /* its length */
	__u32 last_qlen;  /* packets it left in the qdisc */
	__u32 rq_port;    /* plane port + 1 whose realq entry these dequeues snapshot; 0 = none */
	__u32 pad;
};

/* The kernel's types, reduced to the fields read; CO-RE relocates each
 * access to this kernel's layout at load time. */
struct qdisc_skb_head {
	__u32 qlen;
} __attribute__((preserve_access_index));

struct gnet_stats_queue {
	__u32 backlog;
} __attribute__((preserve_access_index));

struct Qdisc {
	struct qdisc_skb_head q;
	struct gnet_stats_queue qstats;
} __attribute__((preserve_access_index));

struct sk_buff {
	struct sk_buff *next;
	unsigned int len;
	__u32 mark;
} __attribute__((preserve_access_index));

/* Watched ports, by their mark (port_cfg.mark): dequeue statistics. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_WATCHED_PORTS);
	__type(key, __u32);
	__type(value, struct dq_stats);
} dq_ports SEC(".maps");
