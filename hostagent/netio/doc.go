// Package netio is the packet I/O the host agent's transport is written
// against: send a datagram to a peer from a chosen entropy value (the UDP
// source port, which the fabric's ECMP hashes) with a chosen ECN codepoint,
// and receive datagrams with the EV they were sent from and the ECN
// codepoint they arrived with (CE if a switch marked them).
//
// Two implementations exist: the sim package's virtual network, and
// SocketConn, raw IPv4 sending (the EV as UDP source port, ECT(0)) and a
// UDP receiving socket (IP_RECVTOS for CE) inside a host namespace. The
// contract both keep:
//
//   - Send is called only from the event loop. It must not keep the payload
//     slice after it returns (copy it, or transmit before returning), and it
//     must not block for long: a full socket buffer is reported as an error
//     (the transport counts it as a local drop; RTO recovers).
//   - Received datagrams are handed to a Receiver on the event loop, one at
//     a time. Datagram.Payload is only valid during the call, so the reader
//     may reuse its buffers (recvmmsg batches). A socket implementation
//     reads on its own goroutine and posts each batch to the loop (see
//     clock.Loop.Post).
//   - Datagrams may be lost, duplicated, reordered across EVs and truncated;
//     the transport copes. Within one EV (one ECMP path) the network is
//     expected to be FIFO, which is what PFLD's loss detection relies on.
//
// A socket implementation sets the codepoint with IP_TOS/IPV6_TCLASS (or
// in the raw IP header), reads it back with IP_RECVTOS, and chooses the
// source port per datagram (a raw socket, or one bound socket per EV in
// use). EV 0 is a valid entropy value; an implementation that cannot send
// from port 0 must say so (the transport also carries the EV in its header).
package netio
