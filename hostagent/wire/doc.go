// Package wire is the host agents' packet format: one versioned header in
// front of every UDP payload, and strict Marshal/Parse functions for it.
//
// # Layout
//
// All integers are big-endian (network byte order). Every packet starts with
// the 36-byte common header:
//
//	off size field    meaning
//	  0    2 magic    0x4654 ("FT"); anything else is not ours
//	  2    1 version  2
//	  3    1 type     DATA=1 ACK=2 NACK=3 TAIL=4 SECTION_END=5 PERIODIC=6 RTX=7
//	  4    1 flags    RETX=0x01 ECE=0x02 DUP=0x04 PROBE_ACK=0x08; others must be 0
//	  5    1 sfbits   log2 of the sender's subflow count sigma (0..15)
//	  6    2 ev       entropy value: the UDP source port the packet is sent from
//	  8    4 flow     flow id, chosen by the sender, unique per sender host
//	 12    4 msg      message id within the flow
//	 16    4 psn      32-bit packet sequence number (flow-wide, serial arithmetic)
//	 20    4 tsval    sender timestamp: low 32 bits of its clock in nanoseconds
//	 24    4 tsecr    tsval echoed from the packet this one answers (ACK, NACK)
//	 28    4 delay    propagation delay in ns of the links crossed so far:
//	                  0 from the sender, each switch adds the delay of the
//	                  link the packet arrived on (saturating)
//	 32    4 jitter   the sum of those links' jitter bounds, in ns, likewise
//
// followed by a type-specific part:
//
//	DATA (12 bytes, then the payload; 48 bytes of header in all)
//	 36    4 offset   byte offset of the payload in the message
//	 40    4 msglen   total message length in bytes
//	 44    2 length   payload length; must equal the bytes that follow
//	 46    2 path     PSN-to-path mapping (PathMap): active paths in bits
//	                  15..11, low 11 bits of the mapping's first PSN below;
//	                  0 for no mapping (then the whole halfword must be 0)
//
//	ACK (12 bytes; 48 in all). psn is the PSN acknowledged, tsecr its tsval.
//	With PROBE_ACK the ACK answers a probe: psn is the probe's PSN plus one
//	and is not itself acknowledged, so sack bit 0 covers the probe's PSN.
//	 36    4 cumack   every PSN before cumack has been received
//	 40    8 sack     bit i set: PSN psn-1-i has been received (i = 0..63)
//
//	NACK (4 + 4n bytes). psn, ev and tsecr name the trigger: the packet or
//	probe whose arrival proved the listed PSNs missing.
//	 36    2 count    n, 1..MaxNACKPSNs
//	 38    2 reserved must be 0
//	 40   4n psns     the missing PSNs
//
//	TAIL, SECTION_END, PERIODIC, RTX probes: no extra part (36 bytes). psn
//	is the PSN the probe speaks for: the last PSN sent on its EV section
//	(TAIL, SECTION_END, PERIODIC) or the retransmitted PSN (RTX).
//
// The header is 48 bytes on data packets (1.2% of a 4 KiB MTU) and 36 on
// probes. Fields are only as wide as their range needs; none is padding
// except the reserved halfword that keeps the NACK body aligned. (DATA's
// path halfword was reserved in the first layout; a zero there still means
// exactly what it meant, so packets of schemes without a mapping are
// unchanged.)
//
// # Why these fields
//
// ev duplicates the UDP source port so a receiver need not see the UDP
// header, and so ACKs and NACKs, which are sent from the EV of the packet
// they answer, echo that EV for free. sfbits lets a receiver know sigma
// without configuration (PFLD needs it to find a PSN's subflow
// predecessor). The initial PSN of a flow is InitialPSN(flow), so both ends
// know where a flow starts without a handshake. DUP on an ACK tells the
// sender that the acknowledged copy was a duplicate at the receiver, which
// is how the sender learns which retransmissions were spurious. path lets
// a PSN-PATH receiver find each packet's same-path predecessor and the
// mapping epoch (FPSN) it belongs to: the sender remaps paths at run time,
// and an epoch's first packets may be lost or overtaken, so the epoch
// travels in every packet rather than in a separate announcement. delay
// and jitter let links have propagation delays in a data plane that cannot
// hold packets back (no netem in the kernel): every switch adds its
// ingress link's delay in place (updating the UDP checksum), and the
// receiving host, which adds its own access link's, holds the packet until
// its arrival plus the sum (docs/delay.md). Any switch on any path can add
// to them because they sit at a fixed offset in every type, and version 1
// packets, which lack them, are refused rather than misread.
//
// # Validation
//
// Parse checks magic, version, type, flags (unknown bits and flags not
// allowed on the type), reserved fields, sfbits, the path map, lengths (the datagram must
// be exactly as long as the header says) and NACK counts. It never panics
// and returns a *ParseError that wraps one of the Err* sentinels, so a
// receiver can count malformed packets by kind.
package wire
