/* SPDX-License-Identifier: GPL-2.0 */
/*
 * policy.h: choice of an uplink for a route of kind ROUTE_UP.
 *
 * Every policy chooses among the same valid set, the route's bitmap of
 * uplink indexes (bit u = uplink u, u < n_uplinks), and returns an uplink
 * index; uplinks[u] gives the port. UPLINK_NONE: no valid uplink. The
 * route's group names its ofan/pofan pointers; its valid set is usually
 * the same index but may be shared between groups.
 */
#pragma once

#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include "maps.h"
#include "parse.h"
#include "linkmodel.h"

#define UPLINK_NONE (-1)

_Static_assert((MAX_UPLINKS & (MAX_UPLINKS - 1)) == 0, "MAX_UPLINKS must be a power of two");
_Static_assert(MAX_UPLINKS == 64, "valid sets are u64 bitmaps");

/* ---- bit helpers: no loops ----
 *
 * Load time is verification time. A bounded loop over the 64 uplinks
 * costs the verifier one walk of its body per iteration and per path
 * into it (it was ~50k of the ~55k instructions each program took to
 * verify). The helpers below are loop-free, so each step is checked once;
 * the scans that do need a loop (pointer skip, ar) run under bpf_loop,
 * whose callback the verifier checks on its own. */

/* Hide a value from the optimizer: keeps a bounds mask the verifier needs
 * that clang proved redundant, and stops clang from turning bit tricks
 * into count-trailing-zeros with a lookup table in .rodata. */
#define opaque(x) asm volatile("" : "+r"(x))

#define BM_M1 0x5555555555555555ULL
#define BM_M2 0x3333333333333333ULL
#define BM_M4 0x0f0f0f0f0f0f0f0fULL
#define BM_L8 0x0101010101010101ULL

static __always_inline __u32 popcount64(__u64 x)
{
	x = x - ((x >> 1) & BM_M1);
	x = (x & BM_M2) + ((x >> 2) & BM_M2);
	x = (x + (x >> 4)) & BM_M4;
	return (__u32)((x * BM_L8) >> 56);
}

/* Index of the lowest set bit of x != 0: the number of zeros below it. */
static __always_inline __u32 lowest_bit(__u64 x)
{
	__u64 low = x & -x;

	opaque(low);
	return popcount64(low - 1);
}

/* Index of the n-th (from 0) set bit of bm, n = r % popcount(bm), or
 * UPLINK_NONE if bm is 0. No loop: a binary search over halves of 32, 16,
 * 8, 4, 2 and 1 bits, steered by population counts from one SWAR count
 * (b2: set bits per bit pair, b4: per nibble, s: byte j holds the set
 * bits of bytes 0..j), so the verifier walks each step once. Sets within
 * the low byte (up to 8 uplinks) skip the first three steps. The steps
 * branch rather than mask: for one flow they go the same way packet
 * after packet, and predicted branches measured ~10 ns/packet faster
 * than the branch-free form. */
static __always_inline int nth_set_bit(__u64 bm, __u32 r)
{
	__u64 b2 = bm - ((bm >> 1) & BM_M1);
	__u64 b4 = (b2 & BM_M2) + ((b2 >> 2) & BM_M2);
	__u64 k, c, pos = 0;
	__u32 cnt;

	if (bm <= 0xff) {
		cnt = (b4 & 0xf) + ((b4 >> 4) & 0xf);
		if (!cnt)
			return UPLINK_NONE;
		k = r % cnt;
	} else {
		__u64 s = ((b4 + (b4 >> 4)) & BM_M4) * BM_L8;

		cnt = s >> 56;
		k = r % cnt;
		/* 32: bits 0..31 are bytes 0..3 */
		if (k >= ((s >> 24) & 0xff))
			pos = 32;
		/* 16: the bits below pos + 16 are bytes 0..pos/8 + 1 */
		if (k >= ((s >> (pos + 8)) & 0xff))
			pos += 16;
		/* 8: the bits below pos + 8 are bytes 0..pos/8 */
		if (k >= ((s >> pos) & 0xff))
			pos += 8;
		/* rank within byte pos/8: drop the bits of bytes 0..pos/8 - 1 */
		k -= ((s << 8) >> pos) & 0xff;
	}
	/* 4, 2, 1 within the byte */
	c = (b4 >> pos) & 0xf;
	if (k >= c) {
		pos += 4;
		k -= c;
	}
	c = (b2 >> pos) & 0x3;
	if (k >= c) {
		pos += 2;
		k -= c;
	}
	if (k >= ((bm >> pos) & 1))
		pos += 1;
	return (int)(pos & (MAX_UPLINKS - 1));
}

/* ---- flow hash: xor-multiply-xorshift rounds over the 5-tuple words ---- */

#define FH_MUL1 0x8f5d3b27U
#define FH_MUL2 0xc2b4a96dU
#define FH_INIT 0x6a09e667U

static __always_inline __u32 fh_mix(__u32 h, __u32 w)
{
	h ^= w;
	h ^= h >> 15;
	h *= FH_MUL1;
	h ^= h >> 13;
	h *= FH_MUL2;
	h ^= h >> 16;
	return h;
}

/* Hash of (saddr, daddr, proto, sport, dport) under a per-switch seed.
 * Mirrored in Go (flowHash in the tests). */
static __always_inline __u32 flow_hash(const struct pkt *p, __u32 seed)
{
	__u32 h = fh_mix(FH_INIT, seed);

	h = fh_mix(h, p->saddr);
	h = fh_mix(h, p->daddr);
	h = fh_mix(h, p->ports);
	h = fh_mix(h, p->proto);
	return h;
}

/* ---- pointers (ofan, pofan, rr) ---- */

/* State of the scan for the first valid entry after the pointer's own
 * (bpf_loop callback context, on the caller's stack). */
struct skip_scan {
	struct pointer *ptr;
	__u64 valid;
	__u32 w, base;
	__u32 skip; /* out: offset i of the first valid entry */
	int u;      /* out: its uplink, UPLINK_NONE if none */
};

/* bpf_loop callback: look at order[(base + i + 1) % w]. The verifier
 * checks it once, not once per offset. */
static int skip_step(__u32 i, void *data)
{
	struct skip_scan *sc = data;
	__u32 off = i + 1, idx, u;

	if (off >= sc->w)
		return 1;
	idx = sc->base + off;
	if (idx >= sc->w)
		idx -= sc->w;
	u = sc->ptr->order[idx & (MAX_UPLINKS - 1)];
	if (u < MAX_UPLINKS && ((sc->valid >> u) & 1)) {
		sc->skip = off;
		sc->u = u;
		return 1;
	}
	return 0;
}

/* Take the pointer's next valid uplink: v = counter++; the first valid
 * order[(v+i) % w]; skipped invalid entries are consumed by advancing the
 * counter by i as well. identity: order[x] = x (rr). valid has no bit at
 * or above w. */
static __always_inline int pointer_pick(struct pointer *ptr, __u64 valid, __u32 w, int identity)
{
	__u32 v = __sync_fetch_and_add(&ptr->counter, 1);
	__u32 base = v % w, skip;
	int u;

	opaque(base); /* base < w <= MAX_UPLINKS: keep the mask for the verifier */
	/* The common case: the pointer's own entry is valid (i = 0). */
	u = identity ? base : ptr->order[base & (MAX_UPLINKS - 1)];
	if (u < MAX_UPLINKS && ((valid >> u) & 1))
		return u;

	if (identity) {
		/* The first valid index at or after base, else the lowest
		 * one (wrapping around w); i = (u - base) mod w. */
		__u64 ahead = valid & (~0ULL << (base & (MAX_UPLINKS - 1)));

		if (!valid)
			return UPLINK_NONE;
		u = lowest_bit(ahead ? ahead : valid);
		skip = (__u32)u >= base ? (__u32)u - base : (__u32)u + w - base;
	} else {
		struct skip_scan sc = {
			.ptr = ptr, .valid = valid, .w = w, .base = base, .u = UPLINK_NONE,
		};

		if (w > 1)
			bpf_loop(w - 1, skip_step, &sc, 0);
		if (sc.u == UPLINK_NONE)
			return UPLINK_NONE;
		u = sc.u;
		skip = sc.skip;
	}
	__sync_fetch_and_add(&ptr->counter, skip);
	return u;
}

static __always_inline __u32 pointer_index(const struct sw_cfg *cfg, __u32 group, __u32 class,
					   __u32 in_port, int piped)
{
	__u32 n_pipes = 1, pipe = 0;

	if (piped && cfg->n_pipes > 1) {
		n_pipes = cfg->n_pipes;
		pipe = cfg->pipe_size ? in_port / cfg->pipe_size : 0;
		if (pipe >= n_pipes)
			pipe %= n_pipes;
	}
	return (group * N_CLASSES + class) * n_pipes + pipe;
}

/* ---- adaptive routing ---- */

/* State of the ar scan (bpf_loop callback context, on the caller's stack). */
struct ar_scan {
	__u64 valid;
	__u64 now;
	__u64 best_q; /* least quantized backlog so far */
	__u32 quantum;
	__u32 ties;   /* uplinks seen at best_q */
	__u32 uplink_base, port_base, n_ports; /* the switch's entries (sw_cfg) */
	int best;
};

/* Compare uplink u, if valid, with the best so far. */
static __always_inline void ar_consider(struct ar_scan *sc, __u32 u)
{
	__u64 b = 0, qb;
	__u32 key = sc->uplink_base + (u & (MAX_UPLINKS - 1)), *port, pp;
	struct port_cfg *pc;
	struct fifo *q;

	if (!((sc->valid >> (u & (MAX_UPLINKS - 1))) & 1))
		return;
	port = bpf_map_lookup_elem(&uplinks, &key);
	if (!port || *port >= sc->n_ports)
		return;
	pp = sc->port_base + *port;
	pc = bpf_map_lookup_elem(&ports, &pp);
	q = bpf_map_lookup_elem(&fifos, &pp);
	if (pc && q)
		b = fifo_backlog_at(pc, READ_ONCE_U64(q->t_next), sc->now);
	qb = b / sc->quantum;
	if (qb < sc->best_q) {
		sc->best_q = qb;
		sc->best = u;
		sc->ties = 1;
	} else if (qb == sc->best_q) {
		sc->ties++;
		if (bpf_get_prandom_u32() % sc->ties == 0)
			sc->best = u;
	}
}

/* bpf_loop callback: uplinks 2i and 2i + 1 (two per call halves the
 * calls; the verifier checks the callback once, not once per uplink). */
static int ar_step(__u32 i, void *data)
{
	struct ar_scan *sc = data;

	ar_consider(sc, 2 * i);
	ar_consider(sc, 2 * i + 1);
	return 0;
}

/* The valid uplink whose egress FIFO has the least backlog, quantized by
 * quantum bytes; ties broken uniformly (reservoir sampling). Uplinks are
 * looked at in increasing index order; valid has no bit at or above w. */
static __always_inline int ar_pick(const struct sw_cfg *cfg, __u64 valid, __u32 w)
{
	struct ar_scan sc = {
		.valid = valid, .now = bpf_ktime_get_ns(), .best_q = ~0ULL,
		.quantum = cfg->ar_quantum ? cfg->ar_quantum : 1, .best = UPLINK_NONE,
		.uplink_base = cfg->id * MAX_UPLINKS, .port_base = cfg->port_base,
		.n_ports = cfg->n_ports,
	};

	bpf_loop((w + 1) / 2, ar_step, &sc, 0);
	return sc.best;
}

/* ---- the choice ---- */

/* The packet facts a policy may use (a stack struct: the argument of a
 * global function must be plain memory). */
struct flow {
	__u32 saddr, daddr, ports, proto; /* 5-tuple words, as in struct pkt */
	__u32 tot_len;                     /* IPv4 total length: data or ack class */
	__u32 in_port;
	__u32 group;     /* pointer group */
	__u32 vset;      /* valid set */
	__u32 have_fifo; /* caller runs the link model (TC, shaped) */
};

/* Uplink index for a packet of group f->group, or UPLINK_NONE. A global
 * (non-inlined) function: the verifier checks it once, on its own,
 * instead of once per path of the caller. have_fifo = 0 (XDP): ar falls
 * back to random; the caller counts that. */
__noinline int choose_uplink(const struct sw_cfg *cfg, const struct flow *f)
{
	__u64 *validp, valid;
	struct pointer *ptr;
	struct pkt p = {};
	__u32 w, key, group, vset;

	if (!cfg || !f)
		return UPLINK_NONE;
	group = f->group;
	if (f->vset >= cfg->n_groups)
		return UPLINK_NONE;
	vset = cfg->group_base + f->vset;
	validp = bpf_map_lookup_elem(&groups, &vset);
	if (!validp)
		return UPLINK_NONE;
	w = cfg->n_uplinks;
	if (w > MAX_UPLINKS)
		w = MAX_UPLINKS;
	valid = *validp;
	if (w < MAX_UPLINKS)
		valid &= (1ULL << w) - 1;
	if (!valid)
		return UPLINK_NONE;

	switch (cfg->policy) {
	case POLICY_ECMP:
		p.saddr = f->saddr;
		p.daddr = f->daddr;
		p.ports = f->ports;
		p.proto = f->proto;
		return nth_set_bit(valid, flow_hash(&p, cfg->seed));
	case POLICY_OFAN:
	case POLICY_POFAN:
		key = pointer_index(cfg, group, f->tot_len <= cfg->ack_thr ? CLASS_ACK : CLASS_DATA,
				    f->in_port, cfg->policy == POLICY_POFAN);
		if (key >= cfg->n_ptrs)
			return UPLINK_NONE;
		key += cfg->ptr_base;
		ptr = bpf_map_lookup_elem(&ptrs, &key);
		if (!ptr)
			return UPLINK_NONE;
		return pointer_pick(ptr, valid, w, 0);
	case POLICY_RR:
		key = cfg->id;
		ptr = bpf_map_lookup_elem(&rr_ptr, &key);
		if (!ptr)
			return UPLINK_NONE;
		return pointer_pick(ptr, valid, w, 1);
	case POLICY_AR:
		if (f->have_fifo)
			return ar_pick(cfg, valid, w);
		/* fall through: line-rate mode has no FIFO */
	case POLICY_RANDOM:
	default:
		return nth_set_bit(valid, bpf_get_prandom_u32());
	}
}
