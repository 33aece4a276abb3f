// Package bpf is the data plane of ftlab's switches: eBPF programs (C in
// c/, compiled by bpf2go) and a small typed Go API to load them once for
// all the switches of a lab ([Plane]), attach them and configure each
// switch ([Switch]).
//
// # Model
//
// A switch is a network namespace whose ports are veths. One [Plane]
// (programs plus maps) serves every switch of a lab, each at its own
// offsets in the maps; a port finds its switch by its ingress ifindex, so
// the plane's ports need distinct ifindexes across namespaces. The control
// plane calls a [Switch]'s methods on an OS thread that is inside the
// switch's namespace when ifindexes are involved (attach, SetPort's DEVMAP
// entry): they are resolved in the calling thread's namespace. [Load]
// gives a plane of one switch.
//
// Ports are numbered 0..MaxPorts-1 by the control plane (downlinks first,
// then uplinks, as in the topology model). Routes live in an LPM trie keyed
// by destination prefix and are DOWN (one port), UP (a group: the policy
// picks one of the group's valid uplinks) or LOCAL. A group's valid set is
// a 64-bit bitmap of uplink indexes; uplink index u is port Uplinks[u].
// Every policy chooses among the same valid set: ecmp (flow hash with a
// per-switch seed), ofan/pofan (per-destination round-robin pointers whose
// order and start the control plane writes; pofan has one pointer per
// ingress pipe), rr (one identity-order pointer for the switch), random, and
// ar (least backlogged uplink in the link model, quantized, ties random).
// A route's group names its pointers; its valid set (by default the same
// index, see [UpSet]) names the bitmap it chooses from.
//
// # Two modes
//
// Line-rate mode: xdp_ingress does everything and forwards with
// bpf_redirect_map into a DEVMAP. XDP_REDIRECT bypasses every qdisc of the
// egress veth, so there is no queue: links run as fast as the CPU.
//
// Shaped mode: xdp_ingress does only the PHY stage (admin state, random
// corruption loss, rx counters) and the L3 sanity checks (non-IPv4,
// malformed, to-local, TTL), then XDP_PASS. tc_shaped (TC ingress, a
// direct-action cls_bpf filter) routes,
// chooses the uplink, runs the egress port's virtual FIFO (tail drop,
// trimming, ECN CE marking, queue statistics) and forwards with
// bpf_redirect(ifindex, 0), which does go through the egress veth's qdisc:
// the htb/tbf the control plane installs at the link rate makes the real
// waiting. The forwarding decision is made once, in TC; nothing is handed
// from XDP to TC through XDP metadata. Reasons: BPF_PROG_TEST_RUN cannot
// feed metadata to a TC program, so a metadata-driven TC program could not
// be tested on its own; ar wants the FIFO state at the moment of the
// enqueue; and pointer counters then advance exactly once per packet. The
// cost is a second header parse (a few ns).
//
// A plane loads only the programs it needs (Options.Programs, see
// [ProgramsFor]): xdp_ingress always, tc_shaped for shaped mode (the
// default loads both), xdp_pass only when asked for. [Switch.AttachPort]
// attaches the plane's port programs (XDP native, and TC ingress if
// tc_shaped is loaded); with both, mode changes are a SetConfig away.
// Shaped mode, and attaching a program that was not loaded, fail with
// [ErrNotLoaded]. XDP_REDIRECT into a veth needs NAPI on the receiving
// peer: attach the xdp_pass program ([Switch.AttachXDPPass], load it with
// [ProgXDPPass]) to host-facing peer veths, or turn GRO on there. In shaped
// mode turn GRO off on switch ports, or the link model accounts GRO
// super-packets as one packet.
//
// # Load cost
//
// Loading is mostly the kernel verifier. The uplink choice is written so
// that it verifies in a few thousand instructions: no bounded loops over
// the 64 uplinks (loop-free bit search; the pointer skip scan and the ar
// scan run under bpf_loop, needing Linux 5.17+), and the DEVMAP is created
// without BTF (the kernel refuses BTF on it only after allocating it, then
// frees it behind an RCU barrier). BenchmarkLoad measures it; see README.md.
//
// # Pinning
//
// With a PinDir (a bpffs directory) the plane and every later attachment
// are pinned and outlive the process; [OpenPlane] reopens them and
// [Plane.Unpin] releases them. See README.md for the layout.
//
// # Counters
//
// Per port, per CPU (summed by [Switch.PortCounters]): rx (every frame
// that arrived, before any drop), tx (forwarded out of the port), drops by
// cause, trimmed, CE marked, to-local. Ingress causes are charged to the
// ingress port; egress ones (tx, buffer, trimmed, CE, link down at the
// egress) to the egress port. [Switch.QueueStats] returns the FIFO
// statistics: packets and bytes accepted, max backlog, the time integral
// of the backlog (mean = integral / elapsed) and a histogram of the
// backlog seen by arriving packets.
package bpf
