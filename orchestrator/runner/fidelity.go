package runner

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
)

// judge gathers a finished run's fidelity inputs and gives its verdict:
// hostPorts are the hosts' egress ports as the dequeue monitor saw them,
// linksUnmeasured why the links' real queues were not measured.
func judge(r *results.Run, hostPorts []switchd.PortStats, linksUnmeasured string, cell *scenario.Cell, run *scenario.Run, cpu *fidelity.CPUStats) *fidelity.Report {
	in := fidelity.Inputs{
		CPU: cpu, Links: fidelity.SaturatedLinks(slices.Concat(r.Ports, hostPorts), rateChanged(run)), Pacing: fidelity.Pacing(r.Flows),
		Drops: fidelity.UnexplainedDrops(r.Ports), OrderChecked: orderChecked(cell.Config, run),
		LinksUnmeasured: linksUnmeasured,
	}
	received := make([]*transport.ReceiveRecord, 0, len(r.Messages))
	for _, m := range r.Messages {
		received = append(received, m.Received)
	}
	var packetNs float64
	if g := cell.Config.Regime; g.EmulatedRateBps > 0 {
		packetNs = float64(g.FrameBytes) * 8 / float64(g.EmulatedRateBps) * 1e9
	}
	in.Delay = fidelity.Delay(r.Flows, received, packetNs)
	for _, m := range r.Messages {
		if rec := m.Received; rec != nil {
			in.ReorderedSameEV += rec.ReorderedSameEV
			if f := rec.FirstReorder; f != nil && in.ReorderExample == "" {
				in.ReorderExample = fmt.Sprintf("%s from %s, flow %d PSN %d after PSN %d on EV %d, %s into the run",
					rec.Host, rec.Peer, rec.Flow, f.PSN, f.After, f.EV, time.Duration(f.AtNs-r.StartMonoNs).Round(time.Microsecond))
			}
		}
	}
	rep := fidelity.Judge(in)
	return &rep
}

// rateChanged names the links whose rate a fault changes in the run: their
// configured rate is not the one they ran at throughout.
func rateChanged(run *scenario.Run) map[string]bool {
	m := map[string]bool{}
	for _, a := range run.Timeline {
		if a.Op == scenario.OpSetRate {
			m[a.Link] = true
		}
	}
	return m
}

// orderChecked reports whether an EV is one FIFO path in a run: every
// layer hashes (ECMP; the other policies spread one EV over paths) and no
// link goes down (rerouting around it moves an EV to another path).
func orderChecked(cfg *scenario.Config, run *scenario.Run) bool {
	for _, p := range cfg.Policy {
		if pol, err := switchd.LookupPolicy(string(p)); err != nil || !pol.PerFlow {
			return false
		}
	}
	for _, a := range run.Timeline {
		if a.Op == scenario.OpLinkDown {
			return false
		}
	}
	return true
}

// overallFidelity is the worst verdict of the runs that were judged; empty
// when none was.
func overallFidelity(runs []*results.Run) fidelity.Verdict {
	var v fidelity.Verdict
	for _, r := range runs {
		if r.Fidelity != nil {
			v = fidelity.Worst(v, r.Fidelity.Verdict)
		}
	}
	return v
}

// fidelityError is the error of runs whose verdicts fail the scenario: a
// FAIL always, a WARN under --strict.
func fidelityError(meta *results.Meta) error {
	if !meta.FidelityFailed() {
		return nil
	}
	if meta.Fidelity == fidelity.WARN {
		return fmt.Errorf("%w: WARN, which --strict counts as a failure (see report.md, Fidelity)", ErrFidelity)
	}
	return fmt.Errorf("%w: FAIL: the numbers do not reflect the emulated network (see report.md, Fidelity)", ErrFidelity)
}

// ErrFidelity is wrapped by the error Run returns when the runs' fidelity
// verdicts fail the scenario (a FAIL, or a WARN with Strict); the results
// are complete and written.
var ErrFidelity = errors.New("fidelity check")
