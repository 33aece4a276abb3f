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

/* ---- bit helpers (no tables, no builtins the BPF backend may lack) ---- */

static __always_inline __u32 popcount64(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (__u32)((x * 0x0101010101010101ULL) >> 56);
}

/* Index of the lowest set bit of x != 0. */
static __always_inline __u32 lowest_bit(__u64 x)
{
	__u32 n = 0;

	if (!(x & 0xffffffffULL)) { n += 32; x >>= 32; }
	if (!(x & 0xffffULL)) { n += 16; x >>= 16; }
	if (!(x & 0xffULL)) { n += 8; x >>= 8; }
	if (!(x & 0xfULL)) { n += 4; x >>= 4; }
	if (!(x & 0x3ULL)) { n += 2; x >>= 2; }
	if (!(x & 0x1ULL)) { n += 1; }
	return n;
}

/* Index of the n-th (from 0) set bit of bm; n < popcount(bm). */
static __always_inline int nth_set_bit(__u64 bm, __u32 n)
{
	for (__u32 i = 0; i < MAX_UPLINKS; i++) {
		if (i >= n)
			break;
		bm &= bm - 1;
	}
	if (!bm)
		return UPLINK_NONE;
	return lowest_bit(bm);
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

/* Take the pointer's next valid uplink: v = counter++; the first valid
 * order[(v+i) % w]; skipped invalid entries are consumed by advancing the
 * counter by i as well. identity: order[x] = x (rr). */
static __always_inline int pointer_pick(struct pointer *ptr, __u64 valid, __u32 w, int identity)
{
	__u32 v = __sync_fetch_and_add(&ptr->counter, 1);
	__u32 base = v % w;

	/* One induction variable only (idx derives from the unknown base):
	 * the verifier then walks the loop once per i, not per (i, idx). */
	for (__u32 i = 0; i < MAX_UPLINKS; i++) {
		__u32 idx, u;

		if (i >= w)
			break;
		idx = base + i;
		if (idx >= w)
			idx -= w;
		u = identity ? idx : ptr->order[idx & (MAX_UPLINKS - 1)];
		if (u < MAX_UPLINKS && ((valid >> u) & 1)) {
			if (i)
				__sync_fetch_and_add(&ptr->counter, i);
			return u;
		}
	}
	return UPLINK_NONE;
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

/* The valid uplink whose egress FIFO has the least backlog, quantized by
 * quantum bytes; ties broken uniformly (reservoir sampling). */
static __always_inline int ar_pick(__u64 valid, __u32 w, __u32 quantum)
{
	__u64 now = bpf_ktime_get_ns(), best_q = ~0ULL;
	__u32 ties = 0;
	int best = UPLINK_NONE;

	if (!quantum)
		quantum = 1;
	for (__u32 u = 0; u < MAX_UPLINKS; u++) {
		__u32 key = u, *port;
		struct port_cfg *pc;
		struct fifo *q;
		__u64 b = 0, qb;

		if (u >= w)
			break;
		if (!((valid >> u) & 1))
			continue;
		port = bpf_map_lookup_elem(&uplinks, &key);
		if (!port)
			continue;
		pc = bpf_map_lookup_elem(&ports, port);
		q = bpf_map_lookup_elem(&fifos, port);
		if (pc && q)
			b = fifo_backlog_at(pc, READ_ONCE_U64(q->t_next), now);
		qb = b / quantum;
		if (qb < best_q) {
			best_q = qb;
			best = u;
			ties = 1;
		} else if (qb == best_q) {
			ties++;
			if (bpf_get_prandom_u32() % ties == 0)
				best = u;
		}
	}
	return best;
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
 * (non-inlined) function: the verifier checks its bounded loops once
 * instead of once per path of the caller. have_fifo = 0 (XDP): ar falls
 * back to random; the caller counts that. */
__noinline int choose_uplink(const struct sw_cfg *cfg, const struct flow *f)
{
	__u64 *validp, valid;
	struct pointer *ptr;
	struct pkt p = {};
	__u32 w, n, key, group, vset;

	if (!cfg || !f)
		return UPLINK_NONE;
	group = f->group;
	vset = f->vset;
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
		n = popcount64(valid);
		return nth_set_bit(valid, flow_hash(&p, cfg->seed) % n);
	case POLICY_OFAN:
	case POLICY_POFAN:
		key = pointer_index(cfg, group, f->tot_len <= cfg->ack_thr ? CLASS_ACK : CLASS_DATA,
				    f->in_port, cfg->policy == POLICY_POFAN);
		ptr = bpf_map_lookup_elem(&ptrs, &key);
		if (!ptr)
			return UPLINK_NONE;
		return pointer_pick(ptr, valid, w, 0);
	case POLICY_RR:
		key = 0;
		ptr = bpf_map_lookup_elem(&rr_ptr, &key);
		if (!ptr)
			return UPLINK_NONE;
		return pointer_pick(ptr, valid, w, 1);
	case POLICY_AR:
		if (f->have_fifo)
			return ar_pick(valid, w, cfg->ar_quantum);
		/* fall through: line-rate mode has no FIFO */
	case POLICY_RANDOM:
	default:
		n = popcount64(valid);
		return nth_set_bit(valid, bpf_get_prandom_u32() % n);
	}
}
