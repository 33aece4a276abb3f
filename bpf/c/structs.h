/* SPDX-License-Identifier: GPL-2.0 */
/*
 * structs.h: map keys and values shared with Go. bpf2go generates the Go
 * types from the BTF of these definitions; keep every field explicitly
 * sized and padded so the layouts match without surprises.
 */
#pragma once

#include <linux/types.h>
#include <linux/bpf.h>
#include "consts.h"

/* One switch's configuration (cfg_map[id]). A plane's maps hold every
 * switch of a lab: the *_base fields say where this switch's entries
 * start in the shared arrays and the n_* fields how many it has; Go
 * writes them at load and the programs never index past them. */
struct sw_cfg {
	enum ftl_mode mode;
	enum ftl_policy policy;
	__u32 seed;       /* ECMP hash seed */
	__u32 addr;       /* identity address, network byte order; 0 = none */
	__u32 ack_thr;    /* IPv4 total length <= ack_thr: CLASS_ACK */
	__u32 pipe_size;  /* pofan: pipe = ingress port / pipe_size */
	__u32 n_pipes;    /* pofan: pipes per (group, class) */
	__u32 n_uplinks;  /* w: uplink indexes 0..w-1 exist */
	__u32 trim;       /* 1: trim data packets that do not fit (shaped) */
	__u32 ar_quantum; /* ar: backlog quantum in bytes (0 acts as 1) */
	__u32 probe_ppm;  /* shaped: millionths of each port's buffer only probes may use */
	__u32 agent_port; /* the agents' UDP port: delay.h stamps their packets; 0 = none */
	__u32 id;         /* this switch: cfg_map and rr_ptr index, route key, uplinks block */
	__u32 port_base;  /* ports, counters, fifos, tx_ports: port_base + port */
	__u32 n_ports;    /* ports 0..n_ports-1 exist */
	__u32 group_base; /* groups: group_base + valid set */
	__u32 n_groups;
	__u32 ptr_base;   /* ptrs: ptr_base + pointer index */
	__u32 n_ptrs;
	__u32 max_routes; /* bookkeeping for Go (Open): the programs do not read it */
};

/* Per-port configuration (ports[port_base + port]). */
struct port_cfg {
	__u32 ifindex;      /* the port's veth in the switch namespace */
	__u32 corrupt_thr;  /* drop on ingress if prandom32 < corrupt_thr */
	__u8 mac[6];        /* own MAC: source of frames sent on this port */
	__u8 peer_mac[6];   /* destination of frames sent on this port */
	__u8 configured;    /* 1 once the control plane wrote the port */
	__u8 admin_up;      /* 0: link failed, everything in or out is dropped */
	__u8 corrupt_all;   /* 1: probability 1.0, drop every frame */
	__u8 pad0;
	__s32 uplink;       /* uplink index of this port, -1 for downlinks */
	__u32 mark;         /* skb->mark of packets queued for the port (qdisc_monitor); 0 = none */
	__u32 delay_ns;     /* propagation delay of the link arriving here (delay.h); 0 = none */
	__u32 jitter_ns;    /* its jitter bound */
	__u32 sw;           /* the switch the port belongs to (cfg_map index) */
	__u32 pad1;
	__u64 rate_bps;     /* link model rate, bits per second; 0 = no model */
	__u64 buffer_bytes; /* link model buffer */
	__u64 ecn_bytes;    /* CE-mark ECT packets above this backlog; 0 = off */
	__u64 max_delay_ns; /* derived: U64_MAX / rate_bps (overflow clamp) */
	__u64 hist_width;   /* derived: histogram bucket width, bytes (>= 1) */
	__u64 realq_stale_ns; /* derived: age past which a real-queue snapshot is stale (realq.h) */
};

/* Per-port counters (counters[port_base + port], per CPU). Ingress causes are charged
 * to the ingress port, egress ones (tx, buffer, trimmed, ce) to the
 * egress port; link_down to whichever end is down. */
struct port_counters {
	__u64 rx_packets;
	__u64 rx_bytes;
	__u64 tx_packets;
	__u64 tx_bytes;
	__u64 drop_corrupt;
	__u64 drop_buffer;
	__u64 drop_link_down;
	__u64 drop_no_route;
	__u64 drop_ttl;
	__u64 drop_malformed;
	__u64 drop_non_ipv4;
	__u64 trimmed;
	__u64 ce_marked;
	__u64 to_local;
	__u64 ar_fallback; /* ar asked for in line-rate mode: random used */
	__u64 delay_unstamped; /* ingress: an agents' packet whose delay could not be added */
};

/* Virtual FIFO of one egress port (fifos[port_base + port]); shaped mode only. */
struct fifo {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 t_next;      /* ns (ktime) when the last accepted byte departs */
	__u64 t_first;     /* ns of the first arrival, 0 = none yet */
	__u64 t_last;      /* ns of the latest arrival */
	__u64 b_last;      /* backlog right after the latest arrival, bytes */
	__u64 packets;     /* accepted into the queue (incl. trimmed) */
	__u64 bytes;       /* accepted bytes (trimmed packets: trimmed size) */
	__u64 max_backlog; /* bytes, right after an enqueue */
	__u64 integ_lo;    /* time integral of the backlog, byte*ns, low word */
	__u64 integ_hi;    /* ... high word (128-bit accumulator) */
	__u64 lag_decided; /* arrivals dropped, trimmed or marked for the real queue, not the model's */
	__u64 hist[HIST_BUCKETS]; /* arrivals by backlog seen, bucket = buffer/16 */
};

/* LPM route key: the switch, then the destination address in network
 * byte order. prefixlen counts both: 32 (the switch, always matched
 * whole) + the address prefix length, so one trie holds every switch's
 * table and a lookup never matches another switch's route. */
struct route_key {
	__u32 prefixlen;
	__u32 sw;
	__u32 addr;
};

struct route_val {
	enum ftl_route_kind kind;
	__u32 arg;  /* port (ROUTE_DOWN) or pointer group (ROUTE_UP) */
	__u32 vset; /* ROUTE_UP: index of the valid set in the groups map */
};

/* Round-robin pointer (ofan/pofan/rr): next = order[counter % w]. */
struct pointer {
	__u32 counter;
	__u8 order[MAX_UPLINKS]; /* uplink indexes; rr ignores it (identity) */
};
