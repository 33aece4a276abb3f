// Package control is the protocol between the orchestrator and a host
// agent: JSON lines, commands on the agent's stdin and events on its
// stdout. One JSON object per line, UTF-8, "\n" terminated; integers are
// JSON numbers, durations are integer nanoseconds (fields ending in _ns),
// addresses are dotted IPv4 strings.
//
// # Commands (orchestrator to agent)
//
//	{"cmd":"configure","scheme":"rss+pfld","params":{"rss":{"sigma":16,"tau_ns":15000}},
//	 "cc":"mprdma","cc_params":{"mprdma":{"initial_window_bdp":1,"increase":1,"decrease":0.5,"min_window":1}},
//	 "transport":{"pacing_bps":100000000,"window_bytes":262144,"min_rto_ns":1000000,"mtu":1500},
//	 "name":"h0-0-0"}
//	{"cmd":"send","msg":17,"to":"10.2.0.2","bytes":1048576}
//	{"cmd":"stats"}
//	{"cmd":"stop"}
//
// configure must come first and only once: it picks the scheme (the names
// and parameter blocks of hostagent/scheme.New, typed), the congestion
// control (the names and blocks of hostagent/cc.New; cc left out is none,
// cc_params left out its defaults) and the transport settings (Transport;
// every field optional, 0 meaning the default). Every agent of a run must be configured with the same scheme
// before any of them sends, because a receiver runs the receiving half of
// its own scheme (PFLD's NACKs, for one), and datagrams that arrive before
// configure are dropped. The congestion control acts on the sending side
// only; receivers echo marks and timestamps whatever theirs. name labels the agent's records (default: its
// address).
//
// send starts a message of bytes bytes to the agent at address to, now.
// msg is the orchestrator's id for it, echoed in the events about it.
// Every message gets a flow of its own (a fresh flow id, its own subflows
// and EVs, its own pacing and window), so messages to the same or
// different peers proceed concurrently.
//
// stats asks for a stats event. stop ends the agent: it emits a flow event
// for every message not yet acknowledged (done false; those messages are
// abandoned), a final stats event, and exits with status 0. End of input
// is the same as stop.
//
// # Events (agent to orchestrator)
//
//	{"event":"ready","version":3,"addr":"10.0.0.2","port":4791}
//	{"event":"configured","scheme":"rss+pfld","params":{...},"cc":"mprdma","cc_params":{...},"transport":{...every field, defaults filled...},"name":"h0-0-0"}
//	{"event":"sent","msg":17,"record":{...transport.MessageRecord...}}
//	{"event":"received","from":"10.0.0.2","record":{...transport.ReceiveRecord...}}
//	{"event":"flow","msg":17,"done":true,"record":{...transport.FlowRecord...}}
//	{"event":"stats","final":true,"endpoint":{...},"conn":{...},"loop":{...},...}
//	{"event":"error","error":"send: unknown field \"byte\"","input":"{\"cmd\":\"send\",\"byte\":1}"}
//
// ready comes once, first, when the agent's sockets are open. sent comes
// when a message is fully acknowledged, followed by the flow event of its
// flow (done true). received comes at the receiving agent when a message
// has been delivered, every byte verified.
//
// Matching a delivery to its message: the sender's record and the
// receiver's record both carry the transport's flow id and per-flow
// message id, and the receiver's event names the sender's address, so
// (sender address, record.flow, record.msg) is the same key on both sides
// (MessageKey; Sent.Key and Received.Key). The wire header has no room
// for the orchestrator's id, and needs none.
//
// Record times (start_ns, end_ns, first_ns, at_ns) are CLOCK_MONOTONIC in
// nanoseconds, one time base for every agent on the machine.
//
// An error event reports a command that could not be decoded or carried
// out (with the offending input, shortened, and the msg id when there is
// one), or a problem of the agent itself. Decoding is strict: unknown
// commands, unknown fields, missing required fields, wrong types, trailing
// data and lines longer than MaxLine are errors. The agent never exits on
// a bad command.
package control
