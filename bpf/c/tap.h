/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h: the capture tap of a switch (ftlab capture).
 *
 * A tapped port has every frame that arrives on it (IN, with the switch's
 * verdict) and every frame the switch sends or drops at its egress (OUT)
 * copied, its first snaplen bytes, into a ring buffer that the capture
 * process reads. Each switch of a plane has its own tap configuration
 * (tap_cfg[id]) and its own ring slot (tap_rings[id]): a capture puts a
 * ring of its own there while it runs, so switches nobody captures cost
 * no ring memory. It sees what the switch sees in both modes, including
 * what XDP redirects past every qdisc and AF_PACKET socket.
 *
 * Cost when nothing is captured: one ARRAY lookup per packet (inlined by
 * the verifier) and a test of tap_cfg[id].active at each exit. The copy itself
 * is a global function (tap_xdp, tap_skb): the verifier checks it once on
 * its own instead of once per path into it, so the hooks add little to
 * load time either.
 *
 * Record: struct tap_hdr, then caplen bytes of the frame. IN records of
 * forwarded frames are taken before the MAC rewrite and TTL decrement (the
 * frame as it arrived); OUT records after them and after trimming and CE
 * marking (the frame as it leaves). OUT records of frames dropped at the
 * egress (buffer full, link down) hold the frame as it arrived.
 */
#pragma once

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "consts.h"

enum tap_limits {
	TAP_SNAP_MAX = 4096,        /* largest snaplen: bytes of a frame copied */
	TAP_RING_BYTES = 1 << 22,   /* ring buffer size (a power of two, >= page) */
	TAP_MASK_WORDS = MAX_PORTS / 64, /* u64 words of a port bitmap */
};

/* Which way a frame crossed the tapped port. */
enum tap_dir {
	TAP_IN = 1,  /* arrived on the port */
	TAP_OUT = 2, /* sent (or dropped at the egress) of the port */
};

/* What the switch did with the frame. */
enum tap_verdict {
	TAP_FORWARD = 1, /* forwarded out of peer_port */
	TAP_DROP = 2,    /* dropped, see cause */
	TAP_LOCAL = 3,   /* to the switch itself */
};

/* Drop causes: the counters of struct port_counters. */
enum tap_cause {
	TAP_CAUSE_NONE = 0,
	TAP_CAUSE_LINK_DOWN = 1,
	TAP_CAUSE_CORRUPT = 2,
	TAP_CAUSE_NON_IPV4 = 3,
	TAP_CAUSE_MALFORMED = 4,
	TAP_CAUSE_TTL = 5,
	TAP_CAUSE_NO_ROUTE = 6,
	TAP_CAUSE_BUFFER = 7,
};

/* Record flags. */
enum tap_flag {
	TAP_F_TRIMMED = 1, /* trimmed to its headers (shaped mode) */
	TAP_F_CE = 2,      /* CE-marked by this switch */
	TAP_F_TC = 4,      /* taken by tc_shaped (else xdp_ingress) */
};

/* No port: peer_port of records without one. */
#define TAP_NO_PORT 0xff

/* Which ports of a switch are tapped (tap_cfg[id]); written by the
 * capture process. */
struct tap_cfg {
	__u32 active;                  /* 0: no capture runs, the hooks do nothing */
	__u32 snaplen;                 /* bytes copied per frame, 1..TAP_SNAP_MAX */
	__u64 in[TAP_MASK_WORDS];      /* bit p: copy frames arriving on port p */
	__u64 out[TAP_MASK_WORDS];     /* bit p: copy frames leaving port p */
	__u64 lost;                    /* records the ring had no room for */
};

/* Header of one ring record. */
struct tap_hdr {
	__u64 ts_ns;    /* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	__u32 len;      /* frame length */
	__u16 caplen;   /* frame bytes that follow */
	__u8 port;      /* the tapped port */
	__u8 dir;       /* enum tap_dir */
	__u8 verdict;   /* enum tap_verdict */
	__u8 cause;     /* enum tap_cause (TAP_DROP) */
	__u8 peer_port; /* IN: egress port; OUT: ingress port; TAP_NO_PORT */
	__u8 flags;     /* enum tap_flag */
	__u32 pad;
};

/* Scratch space of one record (per CPU): the ring copies from here. */
struct tap_buf {
	struct tap_hdr h;
	__u8 data[TAP_SNAP_MAX];
};

/* Switch id -> its tap configuration (Go sizes it to the plane). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tap_cfg);
} tap_cfg SEC(".maps");

/* The ring of one capture: records to the capture process. */
struct tap_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, TAP_RING_BYTES);
};

/* Switch id -> the ring of the capture running on it, if any. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct tap_ring);
} tap_rings SEC(".maps");

/* Per-CPU scratch record. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tap_buf);
} tap_scratch SEC(".maps");

/* What a hook tells the tap, packed into one scalar so the global
 * function takes plain arguments: the IN port, the OUT port (either may be
 * TAP_NO_PORT), verdict, cause, flags, which records to emit and the
 * switch. */
enum tap_emit {
	TAP_EMIT_IN = 1,  /* an IN record on in_port */
	TAP_EMIT_OUT = 2, /* an OUT record on out_port */
};

#define TAP_META(sw, emit, in_port, out_port, verdict, cause, flags)                      \
	((__u64)(in_port) | (__u64)(out_port) << 8 | (__u64)(verdict) << 16 |             \
	 (__u64)(cause) << 24 | (__u64)(flags) << 32 | (__u64)(emit) << 40 |              \
	 (__u64)(sw) << 48)
#define TAP_META_SW(meta) ((__u32)((meta) >> 48))

/* The gate, once per packet: nonzero while some capture runs. Kept as an
 * unknown scalar (loaded from the map) so the verifier does not fork its
 * states on it. */
static __always_inline __u32 tap_active(__u32 sw)
{
	struct tap_cfg *c = bpf_map_lookup_elem(&tap_cfg, &sw);

	return c ? c->active : 0;
}

static __always_inline int tap_port_set(const __u64 *mask, __u32 port)
{
	if (port >= MAX_PORTS)
		return 0;
	return (mask[(port >> 6) & (TAP_MASK_WORDS - 1)] >> (port & 63)) & 1;
}

/* Fills the scratch record's header for one direction; returns the record
 * or NULL if that direction of that port is not tapped. */
static __always_inline struct tap_buf *tap_begin(struct tap_cfg *c, void *ring, __u64 meta,
						 __u32 dir, __u32 len, __u32 *caplen)
{
	__u32 zero = 0, port, peer, snap;
	struct tap_buf *b;

	if (dir == TAP_IN) {
		port = meta & 0xff;
		peer = (meta >> 8) & 0xff;
		if (!tap_port_set(c->in, port))
			return NULL;
	} else {
		port = (meta >> 8) & 0xff;
		peer = meta & 0xff;
		if (!tap_port_set(c->out, port))
			return NULL;
	}
	/* A reader that stopped (killed) leaves the ring full: count the
	 * record lost before copying anything. */
	if (bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) + sizeof(struct tap_buf) > TAP_RING_BYTES) {
		__sync_fetch_and_add(&c->lost, 1);
		return NULL;
	}
	b = bpf_map_lookup_elem(&tap_scratch, &zero);
	if (!b)
		return NULL;
	snap = c->snaplen;
	if (snap > len)
		snap = len;
	if (snap > TAP_SNAP_MAX)
		snap = TAP_SNAP_MAX;
	b->h.ts_ns = bpf_ktime_get_ns();
	b->h.len = len;
	b->h.caplen = snap;
	b->h.port = port;
	b->h.dir = dir;
	b->h.verdict = (meta >> 16) & 0xff;
	b->h.cause = (meta >> 24) & 0xff;
	b->h.peer_port = peer;
	b->h.flags = (meta >> 32) & 0xff;
	b->h.pad = 0;
	*caplen = snap;
	return b;
}

static __always_inline void tap_commit(struct tap_cfg *c, void *ring, struct tap_buf *b, __u32 caplen)
{
	if (caplen > TAP_SNAP_MAX)
		return;
	if (bpf_ringbuf_output(ring, b, sizeof(b->h) + caplen, 0))
		__sync_fetch_and_add(&c->lost, 1);
}

/* The hooks: call only while tap_active(). Each emits the records meta
 * asks for whose port is tapped. */
#define TAP_DEFINE(name, ctx_t, get_len, load)                                             \
	__attribute__((noinline)) int name(ctx_t *ctx, __u64 meta)                         \
	{                                                                                  \
		__u32 sw = TAP_META_SW(meta);                                              \
		struct tap_cfg *c = bpf_map_lookup_elem(&tap_cfg, &sw);                    \
		__u32 emit = (meta >> 40) & 0xff, len, caplen = 0, i;                      \
		struct tap_buf *b;                                                         \
		void *ring;                                                                \
                                                                                           \
		if (!ctx || !c)                                                            \
			return 0;                                                          \
		ring = bpf_map_lookup_elem(&tap_rings, &sw);                               \
		if (!ring) { /* armed, but its capture put no ring: none reads */          \
			__sync_fetch_and_add(&c->lost, 1);                                 \
			return 0;                                                          \
		}                                                                          \
		len = get_len;                                                             \
		for (i = TAP_IN; i <= TAP_OUT; i++) {                                      \
			if (!(emit & i))                                                   \
				continue;                                                  \
			b = tap_begin(c, ring, meta, i, len, &caplen);                     \
			if (!b || caplen == 0 || caplen > TAP_SNAP_MAX)                    \
				continue;                                                  \
			if (load(ctx, 0, b->data, caplen))                                 \
				continue;                                                  \
			tap_commit(c, ring, b, caplen);                                    \
		}                                                                          \
		return 0;                                                                  \
	}

/* Hook call: forward the arguments of one exit to the program's tap. */
#define TAP_HOOK(fn, on, ctx, sw, emit, in_port, out_port, verdict, cause, flags)          \
	do {                                                                               \
		if (on)                                                                    \
			fn(ctx, TAP_META(sw, emit, in_port, out_port, verdict, cause, flags)); \
	} while (0)
