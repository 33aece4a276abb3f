/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maps.h: every map of a data plane. One plane (one load of the programs)
 * serves every switch of a lab, so that the kernel verifies each program
 * once and the XDP dispatcher sees one program, not one per switch: each
 * map holds all the switches' entries, a switch's at its own offsets
 * (sw_cfg: id, *_base, n_*). Each program object includes all of them;
 * the Go loader creates them once and hands the same maps to every object
 * (CollectionOptions.MapReplacements). Sizes are defaults: Go sets
 * MaxEntries to the plane's totals before load.
 */
#pragma once

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "structs.h"
#include "realq.h" /* realq: shared with qdisc_monitor */

/* Switch id -> its configuration and the offsets of its entries. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_cfg);
} cfg_map SEC(".maps");

/* Plane port (port_base + port) -> port configuration. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, struct port_cfg);
} ports SEC(".maps");

/* Ingress ifindex -> plane port. Ifindexes are the kernel's, per
 * namespace: a plane's ports must have distinct ones (the fabric gives
 * every lab port its own; tests map ifindex 1, lo). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} if2port SEC(".maps");

/* Plane port -> egress ifindex in its switch's namespace, for
 * bpf_redirect_map (line-rate mode). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} tx_ports SEC(".maps");

/* Plane port -> counters, per CPU (Go sums the CPUs). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, struct port_counters);
} counters SEC(".maps");

/* Plane port -> virtual FIFO state and queue statistics (spin-locked). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, struct fifo);
} fifos SEC(".maps");

/* (switch, destination prefix) -> route (down port, up group or local). */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, MAX_ROUTES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct route_key);
	__type(value, struct route_val);
} routes SEC(".maps");

/* group_base + valid set -> bitmap of currently valid uplink indexes
 * (route_val.vset). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_GROUPS);
	__type(key, __u32);
	__type(value, __u64);
} groups SEC(".maps");

/* id * MAX_UPLINKS + uplink index -> the switch's port number. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_UPLINKS);
	__type(key, __u32);
	__type(value, __u32);
} uplinks SEC(".maps");

/* Ofan/pofan pointers: ptr_base + ((group*N_CLASSES+class)*n_pipes+pipe). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_POINTERS);
	__type(key, __u32);
	__type(value, struct pointer);
} ptrs SEC(".maps");

/* Switch id -> the switch-wide pointer of the rr policy. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pointer);
} rr_ptr SEC(".maps");
