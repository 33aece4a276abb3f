// Package cc is the host agent's congestion control: a registry of
// algorithms (none, dctcp, mprdma, nscc, swift), their parameter blocks,
// and their per-flow controllers as transport.CongestionControl values.
//
// Every controller keeps one window for its whole flow, whatever the
// flow's transport does with paths: RSS's sigma subflows, PSN-PATH's k
// paths and RPS's per-packet entropies all draw from it, as Ordered Chaos
// runs MPRDMA ("RSS controls where packets go while MPRDMA controls how
// fast they are sent", V-A). The transport paces every flow at its window
// over its smoothed RTT, at most the host's line rate, as an RDMA NIC
// does, and lets a flow with nothing in flight send one packet whatever
// its window.
//
//   - none: no congestion control; fixed pacing at host.pacing and the
//     fixed window host.window (Ofan's analysis, section 2.2).
//   - dctcp: RFC 8257. alpha, the smoothed fraction of marked bytes, is
//     updated once per window of data; the first mark of a window cuts the
//     window by alpha/2, once per window. Growth is RFC 5681's (slow start,
//     then one MSS per window), from RFC 6928's 10-packet initial window; a
//     loss halves the window once per window (fast recovery), a timeout
//     restarts slow start from one packet.
//   - mprdma: MP-RDMA's congestion control (Lu et al., NSDI 2018), a
//     DCTCP-like window without alpha, updated on every ACK: +1/cwnd
//     packet without ECE, -1/2 packet with it. One window over all paths,
//     so the flow gains one packet per round trip however many it uses.
//   - nscc: Ultra Ethernet's NSCC (UE specification 1.0; htsim's model), the
//     four cases of ECN by queueing delay: proportional increase (unmarked,
//     under target), fair increase (unmarked, over target), multiplicative
//     decrease (marked, over target, once per base RTT), nothing (marked,
//     under target: a path's problem, not the flow's); increases are
//     gathered and applied every few packets; quick adapt sets the window
//     to what was delivered after a loss or a long queue.
//   - swift: Swift (Kumar et al., SIGCOMM 2020): a delay target (base,
//     plus a per-hop term, plus flow scaling that gives small windows a
//     larger target), additive increase below it, multiplicative decrease
//     above it proportional to the excess, at most once per round trip,
//     windows below one packet.
//
// What each reproduces of its source and what not is in
// docs/congestion-control.md.
package cc
