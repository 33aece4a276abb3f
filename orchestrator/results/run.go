package results

import (
	"time"

	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"github.com/ftlab/ftlab/switchd"
)

// Meta is run.json: what was run, on what, and how every run went.
type Meta struct {
	Format      int                `json:"format"`
	Version     string             `json:"ftlab_version"`
	Commit      string             `json:"ftlab_commit"`
	Kernel      string             `json:"kernel"`
	CPU         string             `json:"cpu"`
	Cores       int                `json:"cores"`
	Started     time.Time          `json:"started"`
	Finished    time.Time          `json:"finished,omitempty"`
	Complete    bool               `json:"complete"`
	Interrupted string             `json:"interrupted,omitempty"`
	Scenario    *scenario.Scenario `json:"scenario"`
	Runs        []*Run             `json:"runs"`
	// Retried are the tries that did not count: runs whose WARN was
	// disturbed by the hypervisor (fidelity.Report.Disturbed) and were
	// run again with the same seed (runner Options.RetryDisturbed); the
	// try that counts is in Runs.
	Retried []*Run `json:"retried,omitempty"`
	// Fidelity is the worst verdict of the runs; Strict says whether WARN
	// failed the scenario.
	Fidelity fidelity.Verdict `json:"fidelity,omitempty"`
	Strict   bool             `json:"strict,omitempty"`
}

// Format is run.json's format version.
const Format = 1

// FidelityFailed reports whether the runs' verdicts fail the scenario: a
// FAIL always, a WARN under Strict.
func (m *Meta) FidelityFailed() bool {
	return m.Fidelity == fidelity.FAIL || (m.Strict && m.Fidelity == fidelity.WARN)
}

// Message is everything known about one workload message after a run:
// when the runner released it, the sender's record (when every packet was
// acknowledged) and the receiver's (when it was delivered, verified).
type Message struct {
	Message  workload.Message         `json:"message"`
	Released time.Duration            `json:"released_ns"` // from the run's start
	Done     time.Duration            `json:"done_ns"`     // delivered, from the run's start; 0 = not delivered
	Sent     *transport.MessageRecord `json:"sent,omitempty"`
	Received *transport.ReceiveRecord `json:"received,omitempty"`
}

// Delivered reports whether the message arrived and was verified.
func (m *Message) Delivered() bool { return m.Received != nil && m.Received.Verified }

// FCT is the flow completion time: release to delivery.
func (m *Message) FCT() time.Duration {
	if !m.Delivered() {
		return 0
	}
	return m.Done - m.Released
}

// Run is one repetition of one cell. Messages, Flows and Ports go to the
// CSV files, not run.json.
type Run struct {
	Cell       string                 `json:"cell"`
	Repetition int                    `json:"repetition"`
	Seed       uint64                 `json:"seed"`
	Status     string                 `json:"status"` // complete, timeout, interrupted, failed
	Error      string                 `json:"error,omitempty"`
	Started    time.Time              `json:"started"`
	Duration   time.Duration          `json:"duration_ns"`
	CCT        time.Duration          `json:"cct_ns"` // last delivery; 0 unless complete
	Bound      *workload.Bound        `json:"cct_lower_bound,omitempty"`
	Messages   []*Message             `json:"-"`
	Flows      []transport.FlowRecord `json:"-"`
	Ports      []switchd.PortStats    `json:"-"`
	Faults     []FaultEvent           `json:"faults,omitempty"`
	// StartMonoNs is CLOCK_MONOTONIC at the run's start, the time base of
	// the agents' records (Flows).
	StartMonoNs int64 `json:"start_mono_ns,omitempty"`
	// Fidelity says whether the run's numbers reflect the emulated network
	// (nil for a run that failed before it could be judged).
	Fidelity *fidelity.Report `json:"fidelity,omitempty"`
	// Packets are the hosts' own counts, summed over every agent (nil when
	// the agents did not report them).
	Packets *PacketCounts `json:"packets,omitempty"`
}

// PacketCounts are what the hosts' sockets sent and received over a run,
// by kind of packet, and what their endpoints made of it, summed over the
// lab's agents as they stopped. Unlike the switches' drop counters, which
// count every kind of packet, they say how many DATA copies the fabric
// lost: DataLost.
type PacketCounts struct {
	DataSent     uint64 `json:"data_sent"`     // DATA copies, retransmissions included
	DataReceived uint64 `json:"data_received"` // DATA copies that arrived, trimmed headers included
	// Trimmed are DATA copies that arrived as trimmed headers: their
	// payload was lost too.
	Trimmed         uint64 `json:"trimmed"`
	ControlSent     uint64 `json:"control_sent"` // ACKs and NACKs
	ControlReceived uint64 `json:"control_received"`
	ProbesSent      uint64 `json:"probes_sent"`
	ProbesReceived  uint64 `json:"probes_received"`
	// SpuriousLate are retransmitted copies that arrived after their
	// message had been delivered (the flow records count the earlier ones).
	SpuriousLate uint64 `json:"spurious_late"`
	// HostDrops are datagrams the hosts themselves lost: refused by the
	// kernel on send or dropped from a full receive buffer.
	HostDrops uint64 `json:"host_drops"`
}

// DataLost is the DATA copies whose payload did not arrive: dropped in
// the fabric (or a host) or trimmed. Every copy the senders sent has
// arrived or been lost by the time the agents stop, as the runner drains
// a complete run before stopping them.
func (c *PacketCounts) DataLost() uint64 {
	lost := c.Trimmed
	if c.DataSent > c.DataReceived {
		lost += c.DataSent - c.DataReceived
	}
	return lost
}

// Add adds o to c.
func (c *PacketCounts) Add(o PacketCounts) {
	c.DataSent += o.DataSent
	c.DataReceived += o.DataReceived
	c.Trimmed += o.Trimmed
	c.ControlSent += o.ControlSent
	c.ControlReceived += o.ControlReceived
	c.ProbesSent += o.ProbesSent
	c.ProbesReceived += o.ProbesReceived
	c.SpuriousLate += o.SpuriousLate
	c.HostDrops += o.HostDrops
}

// Run statuses.
const (
	StatusComplete    = "complete"
	StatusTimeout     = "timeout"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)

// FaultEvent is one fault action as it was applied.
type FaultEvent struct {
	At      time.Duration   `json:"at_ns"`      // when the timeline asked for it
	Applied time.Duration   `json:"applied_ns"` // when it took effect
	Action  scenario.Action `json:"action"`
	Error   string          `json:"error,omitempty"`
}
