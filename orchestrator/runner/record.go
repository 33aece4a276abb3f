package runner

import (
	"time"

	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"github.com/ftlab/ftlab/switchd"
)

// MessageResult is everything known about one workload message after a
// run: when the runner released it, the sender's record (when every packet
// was acknowledged) and the receiver's (when it was delivered, verified).
type MessageResult struct {
	Message  workload.Message         `json:"message"`
	Released time.Duration            `json:"released_ns"` // from the run's start
	Done     time.Duration            `json:"done_ns"`     // delivered, from the run's start; 0 = not delivered
	Sent     *transport.MessageRecord `json:"sent,omitempty"`
	Received *transport.ReceiveRecord `json:"received,omitempty"`
}

// Delivered reports whether the message arrived and was verified.
func (m *MessageResult) Delivered() bool { return m.Received != nil && m.Received.Verified }

// FCT is the flow completion time: release to delivery.
func (m *MessageResult) FCT() time.Duration {
	if !m.Delivered() {
		return 0
	}
	return m.Done - m.Released
}

// RunResult is one repetition of one cell.
type RunResult struct {
	Cell       string                 `json:"cell"`
	Repetition int                    `json:"repetition"`
	Seed       uint64                 `json:"seed"`
	Status     string                 `json:"status"` // complete, timeout, interrupted, failed
	Error      string                 `json:"error,omitempty"`
	Started    time.Time              `json:"started"`
	Duration   time.Duration          `json:"duration_ns"`
	CCT        time.Duration          `json:"cct_ns"` // last delivery; 0 unless complete
	Bound      *workload.Bound        `json:"cct_lower_bound,omitempty"`
	Messages   []*MessageResult       `json:"-"`
	Flows      []transport.FlowRecord `json:"-"`
	Ports      []switchd.PortStats    `json:"-"`
	// linksUnmeasured: why the links' real queues were not measured.
	linksUnmeasured string
	// hostPorts are the hosts' egress ports as the dequeue monitor saw
	// them (no counters: hosts run no data plane).
	hostPorts []switchd.PortStats
	Faults    []FaultEvent `json:"faults,omitempty"`
	// StartMonoNs is CLOCK_MONOTONIC at the run's start, the time base of
	// the agents' records (Flows).
	StartMonoNs int64 `json:"start_mono_ns,omitempty"`
	// Fidelity says whether the run's numbers reflect the emulated network
	// (nil for a run that failed before it could be judged).
	Fidelity *fidelity.Report `json:"fidelity,omitempty"`

	paths *pathMap // EV to first-hop uplink; nil unless the edge runs ECMP
}

// Run statuses.
const (
	StatusComplete    = "complete"
	StatusTimeout     = "timeout"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
)
