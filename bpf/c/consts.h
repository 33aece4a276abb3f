/* SPDX-License-Identifier: GPL-2.0 */
/*
 * consts.h: named bounds and enumerations shared by every program and,
 * through bpf2go (-type), by the Go package. Enumerations rather than
 * macros so that the Go side gets the same values generated.
 */
#pragma once

/* Compile-time bounds. Map sizes default to these and may be lowered or
 * raised from Go (CollectionSpec MaxEntries) before load, except where a
 * comment says the bound is structural. */
enum ftl_limits {
	MAX_PORTS = 128,       /* ports per switch; bounds port numbers */
	MAX_UPLINKS = 64,      /* structural: valid sets are u64 bitmaps */
	MAX_GROUPS = 256,      /* default size of the group table */
	MAX_ROUTES = 4096,     /* default size of the LPM route table */
	MAX_POINTERS = 4096,   /* default size of the ofan/pofan pointer table */
	N_CLASSES = 2,         /* ofan traffic classes: data, ack */
	HIST_BUCKETS = 16,     /* queue histogram buckets of buffer/16 each */
	TRIM_KEEP = 64,        /* bytes of transport payload kept by trimming */
	TRIM_PRIORITY = 0x10010, /* skb->priority of trimmed/header packets: htb class 1:10 */
	MAX_IP_HDR = 60,       /* largest IPv4 header (IHL 15) */
	L4_HDR_PULL = 20,      /* transport bytes wanted in the linear area */
};

/* Forwarding mode of a switch. */
enum ftl_mode {
	MODE_LINE_RATE = 0, /* XDP redirects through a DEVMAP: no qdisc, no queue */
	MODE_SHAPED = 1,    /* XDP passes, TC redirects through the egress qdisc */
};

/* Uplink choice policy for routes of kind ROUTE_UP. */
enum ftl_policy {
	POLICY_ECMP = 0,   /* flow hash over valid uplinks */
	POLICY_OFAN = 1,   /* per-destination round-robin pointers */
	POLICY_POFAN = 2,  /* ofan with pointers per ingress pipe */
	POLICY_RR = 3,     /* one round-robin pointer for the whole switch */
	POLICY_RANDOM = 4, /* uniformly random valid uplink */
	POLICY_AR = 5,     /* least backlogged valid uplink (shaped mode) */
};

/* What a route does with a packet. */
enum ftl_route_kind {
	ROUTE_NONE = 0,  /* unused: a zero value is not a route */
	ROUTE_DOWN = 1,  /* arg = the one egress port */
	ROUTE_UP = 2,    /* arg = pointer group, vset = valid set: the policy picks */
	ROUTE_LOCAL = 3, /* to the switch itself: pass to the kernel */
};

/* Ofan pointer classes. */
enum ftl_class {
	CLASS_DATA = 0, /* IPv4 total length > ack threshold */
	CLASS_ACK = 1,  /* header-only packets: total length <= ack threshold */
};

/* ftlab's transport header as the switch sees it (hostagent/wire,
 * version 2): a probe is header-only, its UDP payload the bare common
 * header. Switches know it to give probes the buffer headroom of Ordered
 * Chaos IV-B4 (a deployment would mark them with a traffic class instead)
 * and to add link delays to it (delay.h). */
enum ftl_wire {
	FTL_MAGIC = 0x4654,      /* "FT", big-endian, at payload offset 0 */
	FTL_VERSION = 2,         /* payload offset 2; the first with the delay words */
	FTL_TYPE_OFF = 3,        /* payload offset of the type byte */
	FTL_PROBE_FIRST = 4,     /* TAIL */
	FTL_PROBE_LAST = 7,      /* RTX; SECTION_END and PERIODIC between */
	FTL_DELAY_OFF = 28,      /* u32, ns, network byte order: delay so far */
	FTL_JITTER_OFF = 32,     /* u32, ns: jitter bound so far */
	FTL_COMMON_LEN = 36,     /* the common header, every type starts with it */
	FTL_PROBE_LEN = FTL_COMMON_LEN, /* UDP payload bytes of a probe */
};

/* 64-bit constants cannot be enumerators. */
#define NS_PER_SEC 1000000000ULL
#define BIT_NS (8ULL * NS_PER_SEC) /* bits*ns per byte*s: len*BIT_NS/rate_bps = ns */
#define PPM 1000000ULL              /* parts per million: sw_cfg.probe_ppm */
