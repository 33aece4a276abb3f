// Package capture records what crosses the ports of a lab, as pcapng
// (one interface per port, a comment on every packet naming the port, the
// direction and, at a switch, what the switch did with it) or as text.
//
// Switch ports are read through the data plane's capture tap (package
// bpf, c/tap.h): the programs themselves copy each frame's first bytes
// into a per-switch ring buffer, so the capture sees what the switch sees
// in both modes, frames that XDP redirects past every socket included,
// with the verdict (forwarded and where, dropped and why, trimmed, CE
// marked). Host ports are read with an AF_PACKET socket in the host's
// namespace (hosts run no forwarding program).
//
// One capture at a time may read a switch's tap; a second one on the
// same switch is refused. A filter (see ParseFilter and docs/capture.md)
// selects frames by ftlab header fields (type, flow, message, PSN, EV,
// flags), addresses, direction and verdict.
package capture
