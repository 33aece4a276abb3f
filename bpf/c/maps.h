/* SPDX-License-Identifier: GPL-2.0 */
/*
 * maps.h: every map of a switch instance. Each program object includes all
 * of them; the Go loader creates them once and hands the same maps to
 * every object (CollectionOptions.MapReplacements). Sizes are defaults:
 * the Go side may change MaxEntries before load.
 */
#pragma once

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "structs.h"

/* Switch configuration, a single entry. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sw_cfg);
} cfg_map SEC(".maps");

/* Port number -> port configuration. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, struct port_cfg);
} ports SEC(".maps");

/* Ingress ifindex -> port number (tests map ifindex 1, lo). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} if2port SEC(".maps");

/* Port number -> egress ifindex, for bpf_redirect_map (line-rate mode). */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} tx_ports SEC(".maps");

/* Port number -> counters, per CPU (Go sums the CPUs). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, struct port_counters);
} counters SEC(".maps");

/* Port number -> virtual FIFO state and queue statistics (spin-locked). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u32);
	__type(value, struct fifo);
} fifos SEC(".maps");

/* Destination prefix -> route (down port, up group or local). */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, MAX_ROUTES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct route_key);
	__type(value, struct route_val);
} routes SEC(".maps");

/* Valid set -> bitmap of currently valid uplink indexes (route_val.vset). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_GROUPS);
	__type(key, __u32);
	__type(value, __u64);
} groups SEC(".maps");

/* Uplink index -> port number. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_UPLINKS);
	__type(key, __u32);
	__type(value, __u32);
} uplinks SEC(".maps");

/* Ofan/pofan pointers, index ((group*N_CLASSES+class)*n_pipes+pipe). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_POINTERS);
	__type(key, __u32);
	__type(value, struct pointer);
} ptrs SEC(".maps");

/* The single switch-wide pointer of the rr policy. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pointer);
} rr_ptr SEC(".maps");
