package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/internal/stats"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"github.com/ftlab/ftlab/switchd"
)

// SendOptions describe ad-hoc transfers on a lab that is up (ftlab send):
// Count messages of Bytes each from host Src to host Dst, one after the
// other (or all at once with Parallel), with a shipped transport.
type SendOptions struct {
	Store *lab.Store
	Lab   string
	// Agents starts the lab's host agents (InProcessAgents).
	Agents   AgentStarter
	Src, Dst string
	Bytes    uint64
	Count    int
	Parallel bool
	// Transport, congestion control ("" is none) and their parameters,
	// as scenario.AdHoc takes them.
	Transport string
	CC        string
	Params    []string
	Timeout   time.Duration
	Seed      uint64
	// Progress, if set, is told how the transfer goes about every
	// ProgressEvery (default 500 ms) until it ends.
	Progress      func(SendProgress)
	ProgressEvery time.Duration
}

// SendProgress is how a transfer is going: what the destination's edge
// switch has passed to it.
type SendProgress struct {
	Elapsed time.Duration
	// Bytes the edge switch sent to the destination host since the start
	// (headers included), and the rate of the last interval.
	Bytes   uint64
	RateBps float64
}

// SendResult is what an ad-hoc transfer measured.
type SendResult struct {
	Lab       string `json:"lab"`
	Src       string `json:"src"`
	Dst       string `json:"dst"`
	Transport string `json:"transport"`
	CC        string `json:"cc"`
	// Status is the run's: complete, timeout, interrupted or failed.
	Status   string           `json:"status"`
	Error    string           `json:"error,omitempty"`
	Duration time.Duration    `json:"duration_ns"`
	Messages []SentMessage    `json:"messages"`
	Summary  SendSummary      `json:"summary"`
	Fidelity *fidelity.Report `json:"fidelity,omitempty"`
	// Impairments in force on the lab during the transfer (ftlab link set).
	Impairments []lab.Impairment `json:"impairments,omitempty"`
}

// SentMessage is one message of a transfer.
type SentMessage struct {
	Bytes     uint64        `json:"bytes"`
	Delivered bool          `json:"delivered"` // arrived, every byte verified
	FCT       time.Duration `json:"fct_ns"`    // release to delivery
	// GoodputBps is the message's payload over its FCT.
	GoodputBps      float64 `json:"goodput_bps"`
	Packets         int     `json:"packets"`
	Retransmissions int     `json:"retransmissions"`
	RTOs            int     `json:"rtos"`
	NACKs           int     `json:"nacks"`
}

// SendSummary sums a transfer's messages up.
type SendSummary struct {
	Messages        int           `json:"messages"`
	Delivered       int           `json:"delivered"`
	Bytes           uint64        `json:"bytes"`
	FCTMin          time.Duration `json:"fct_min_ns"`
	FCTP50          time.Duration `json:"fct_p50_ns"`
	FCTMax          time.Duration `json:"fct_max_ns"`
	GoodputBps      float64       `json:"goodput_bps"` // delivered payload over the time from first release to last delivery
	Retransmissions int           `json:"retransmissions"`
	RTOs            int           `json:"rtos"`
	NACKs           int           `json:"nacks"`
}

// Send runs ad-hoc transfers on a lab that is up, as it is (its failed
// links and impairments stay), with the same in-process agents, counters
// and fidelity verdict as a scenario's run. A transfer that did not
// deliver every message returns its result and an error.
func Send(ctx context.Context, opt SendOptions) (*SendResult, error) {
	st, cell, err := sendCell(opt)
	if err != nil {
		return nil, err
	}
	if err := netio.HoldStamps(); err != nil { // before the agents' first arrival: see there
		return nil, err
	}
	release, err := opt.Store.LockTraffic(opt.Lab)
	if err != nil {
		return nil, err
	}
	defer release()

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	if opt.Progress != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			watchDestination(ctx, opt.Store.Control(st), st.Topology, opt)
		}()
	}
	var watches dequeueWatches
	r := runOnce(ctx, st, Options{Store: opt.Store, Agents: opt.Agents}, cell, cell.Runs[0], &watches)
	watches.reset()
	cancel()
	wg.Wait()

	res := resultOf(r, opt, st, cell)
	if r.Status == results.StatusFailed {
		return res, errors.New(r.Error)
	}
	if res.Summary.Delivered < res.Summary.Messages {
		return res, fmt.Errorf("%d of %d messages delivered (%s)", res.Summary.Delivered, res.Summary.Messages, r.Status)
	}
	return res, nil
}

// sendCell checks the options against the lab and makes the one-run cell
// of the transfer.
func sendCell(opt SendOptions) (*lab.State, *scenario.Cell, error) {
	st, err := opt.Store.Get(opt.Lab)
	if err != nil {
		return nil, nil, err
	}
	if st.Phase != lab.PhaseUp {
		return nil, nil, fmt.Errorf("lab %q is %s, not up", opt.Lab, st.Phase)
	}
	if st.DataPlane.DataPlane != switchd.DataPlaneBPF {
		return nil, nil, fmt.Errorf("lab %q runs the %s data plane; transfers are measured by the eBPF switch's counters (ftlab up --dataplane bpf)", opt.Lab, st.DataPlane.DataPlane)
	}
	if opt.Agents == nil {
		return nil, nil, errors.New("no host agents to send with")
	}
	t := st.Topology
	var errs []error
	for _, h := range []struct{ what, name string }{{"source", opt.Src}, {"destination", opt.Dst}} {
		if n, ok := t.Node(h.name); !ok || n.Role != topology.RoleHost {
			errs = append(errs, fmt.Errorf("%s %q is not a host of lab %s (hosts: %s)", h.what, h.name, opt.Lab, strings.Join(hostNames(t), ", ")))
		}
	}
	if opt.Src == opt.Dst && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("source and destination are both %s: a transfer needs two hosts", opt.Src))
	}
	if opt.Bytes == 0 {
		errs = append(errs, errors.New("size: a message needs at least 1 byte"))
	}
	if opt.Count < 1 {
		errs = append(errs, fmt.Errorf("count: %d; send at least 1 message", opt.Count))
	}
	cfg, err := scenario.ForLab(t, st.DataPlane, scenario.AdHoc{Transport: scenario.Transport(opt.Transport), CC: scenario.CCName(opt.CC), Params: opt.Params, Timeout: opt.Timeout})
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	seed := opt.Seed
	if seed == 0 {
		seed = 1
	}
	run := &scenario.Run{Seed: seed}
	for i := range opt.Count {
		m := workload.Message{ID: i, Src: opt.Src, Dst: opt.Dst, Bytes: opt.Bytes}
		if i > 0 && !opt.Parallel {
			m.After = []int{i - 1}
		}
		run.Messages = append(run.Messages, m)
	}
	return st, &scenario.Cell{Name: "send", Config: cfg, Runs: []*scenario.Run{run}}, nil
}

func hostNames(t *topology.Topology) []string {
	var out []string
	for _, h := range t.Hosts() {
		out = append(out, h.Name)
	}
	return out
}

// watchDestination reports, until ctx ends, what the destination's edge
// switch port has sent to it. The run zeroes the counters as it starts:
// a counter that went back is counted from 0.
func watchDestination(ctx context.Context, ctl *switchd.Lab, t *topology.Topology, opt SendOptions) {
	every := opt.ProgressEvery
	if every <= 0 {
		every = 500 * time.Millisecond
	}
	dst, _ := t.Node(opt.Dst)
	edge := t.Peer(dst.Ports[0])
	start, last := time.Now(), time.Now()
	var total, prev uint64
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			c, err := ctl.PortCounters(edge.Node, edge.Port)
			if err != nil {
				continue
			}
			d := c.TxBytes - prev
			if c.TxBytes < prev {
				d = c.TxBytes
			}
			prev = c.TxBytes
			total += d
			opt.Progress(SendProgress{Elapsed: now.Sub(start), Bytes: total, RateBps: float64(d) * 8 / now.Sub(last).Seconds()})
			last = now
		}
	}
}

// resultOf sums a transfer's run up.
func resultOf(r *results.Run, opt SendOptions, st *lab.State, cell *scenario.Cell) *SendResult {
	res := &SendResult{Lab: opt.Lab, Src: opt.Src, Dst: opt.Dst, Transport: opt.Transport, CC: string(cell.Config.CC), Status: r.Status, Error: r.Error,
		Duration: r.Duration, Fidelity: r.Fidelity, Impairments: st.Impairments, Messages: []SentMessage{}}
	s := &res.Summary
	var fcts []time.Duration
	var first, last time.Duration = -1, 0
	for _, m := range r.Messages {
		sm := SentMessage{Bytes: m.Message.Bytes, Delivered: m.Delivered(), FCT: m.FCT()}
		if rec := m.Sent; rec != nil {
			sm.Packets, sm.Retransmissions, sm.RTOs, sm.NACKs = rec.Packets, rec.Retransmissions, rec.RTOs, rec.NACKs
		}
		s.Messages++
		s.Retransmissions += sm.Retransmissions
		s.RTOs += sm.RTOs
		s.NACKs += sm.NACKs
		if sm.Delivered {
			sm.GoodputBps = float64(sm.Bytes) * 8 / sm.FCT.Seconds()
			s.Delivered++
			s.Bytes += sm.Bytes
			fcts = append(fcts, sm.FCT)
			if first < 0 || m.Released < first {
				first = m.Released
			}
			last = max(last, m.Done)
		}
		res.Messages = append(res.Messages, sm)
	}
	if len(fcts) > 0 {
		slices.Sort(fcts)
		s.FCTMin, s.FCTMax = fcts[0], fcts[len(fcts)-1]
		s.FCTP50 = stats.Median(fcts)
		if span := last - first; span > 0 {
			s.GoodputBps = float64(s.Bytes) * 8 / span.Seconds()
		}
	}
	return res
}
