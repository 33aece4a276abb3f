// Package switchd is the switch control plane of a lab: it installs the
// data plane into every switch namespace, programs ports, routes and the
// per-destination uplink sets computed by package routing, reconverges
// after link failures and reads the switches' counters.
//
// Two data planes are available: ftlab's eBPF switch (package bpf), with
// the policies ecmp, ofan, pofan, rr, random and ar, in line-rate or
// shaped mode; and the kernel's own IP forwarding (package kernelfwd), the
// reference. A lab's programs stay loaded after the ftlab process that
// installed them exits: they are pinned under the lab's bpffs directory,
// which down and cleanup remove.
package switchd
