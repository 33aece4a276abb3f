// Package transport is the host agent's reliable message transport: an
// Endpoint per host that sends messages over flows and receives them,
// delivering every message exactly once and verified byte for byte,
// whatever the network loses, duplicates or reorders.
//
// # Event loop
//
// An Endpoint is single-threaded: it is driven by a clock.Clock (timers)
// and a netio.Conn (datagrams in, through HandleDatagram), and every call
// into it, from timers, received datagrams or the application, must come
// from that clock's event loop. There are no locks: the same code runs in
// sim's virtual time and, later, on real sockets under a clock.Loop.
//
// # Sender
//
// A Flow is a PSN space to one peer. Messages queued on it are cut into
// packets of at most MaxSegment payload bytes, numbered with consecutive
// 32-bit PSNs starting at wire.InitialPSN(flow id). Packets leave through a
// pacer while the bytes in flight stay under a window: Config.Rate and
// Config.Window without congestion control; with one (Config.CC, a
// CongestionControl from package hostagent/cc) the flow's controller's
// window, one for all the flow's subflows and paths, paced at window over
// SRTT, Config.Rate and Config.Window capping both. Probes and
// retransmissions go before new data.
// Every DATA packet is acknowledged by its own ACK, which also carries a
// cumulative PSN and a 64-PSN selective bitmap, so a lost ACK is covered by
// the next ones; ACKs echo the data packet's timestamp (RTT samples) and
// its CE mark. Loss is declared on a NACK (positive evidence from the
// receiver, see below), by the scheme (sender-side detection such as RACK,
// through SenderEnv.DeclareLost), or by the retransmission timeout: RFC
// 6298 estimation with a configurable minimum and exponential backoff, the
// last resort of every scheme. On expiry every packet whose latest copy is
// older than the RTO is declared lost.
//
// A NACK is accepted only when it is evidence about the copy it would
// replace: the PSN's latest copy must have gone out on the NACK trigger's
// EV (one FIFO path) before the trigger. A NACK raised by stale evidence,
// for example a second data packet revealing a hole that is already being
// retransmitted, is ignored. This is what keeps receiver-driven schemes
// free of spurious retransmissions.
//
// # Receiver
//
// A receiver needs no reorder buffer: each packet names its message,
// offset and message length, and is verified where it lands (the way an
// RDMA NIC places data). Payloads are a deterministic pseudo-random
// pattern keyed by (flow, message, byte offset), so the receiver checks
// every byte against the pattern without the sender shipping checksums or
// either side storing data. A message is delivered once all of its byte
// range has arrived; PSNs seen before are duplicates (acknowledged with
// DUP, never delivered twice). Packets that fail to parse or to verify are
// counted and dropped.
//
// # Schemes
//
// Path choice and extra loss detection belong to a Scheme (package
// scheme): per flow it picks each packet's entropy value, hears of every
// transmission, ACK, NACK and timeout, may send probes and set timers, and
// on the receiving side sees every DATA packet and probe and may NACK. The
// engine knows nothing of subflows or sections.
package transport
