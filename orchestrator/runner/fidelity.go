package runner

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
)

// judge gathers a finished run's fidelity inputs and gives its verdict.
func judge(r *RunResult, cell *scenario.Cell, run *scenario.Run, cpu *fidelity.CPUStats) *fidelity.Report {
	in := fidelity.Inputs{
		CPU: cpu, Links: fidelity.SaturatedLinks(slices.Concat(r.Ports, r.hostPorts), rateChanged(run)), Pacing: fidelity.Pacing(r.Flows),
		Drops: fidelity.UnexplainedDrops(r.Ports), OrderChecked: orderChecked(cell.Config, run),
		LinksUnmeasured: r.linksUnmeasured,
	}
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
func overallFidelity(runs []*RunResult) fidelity.Verdict {
	var v fidelity.Verdict
	for _, r := range runs {
		if r.Fidelity != nil {
			v = fidelity.Worst(v, r.Fidelity.Verdict)
		}
	}
	return v
}

// fidelityFailed reports whether the verdicts fail the scenario: a FAIL
// always, a WARN under --strict.
func fidelityFailed(meta *RunMeta) bool {
	return meta.Fidelity == fidelity.FAIL || (meta.Strict && meta.Fidelity == fidelity.WARN)
}

func fidelityError(meta *RunMeta) error {
	if !fidelityFailed(meta) {
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

// RunVerdict is one run's fidelity verdict in summary.json.
type RunVerdict struct {
	Cell       string           `json:"cell"`
	Repetition int              `json:"repetition"`
	Verdict    fidelity.Verdict `json:"verdict"`
	Reasons    []string         `json:"reasons,omitempty"`
}

// FidelitySummary is summary.json's fidelity: overall and per run.
type FidelitySummary struct {
	Verdict fidelity.Verdict `json:"verdict,omitempty"`
	Strict  bool             `json:"strict,omitempty"`
	Failed  bool             `json:"failed"` // the verdicts failed the scenario
	Runs    []RunVerdict     `json:"runs"`
}

func fidelityOf(meta *RunMeta) FidelitySummary {
	s := FidelitySummary{Verdict: meta.Fidelity, Strict: meta.Strict, Failed: fidelityFailed(meta)}
	for _, r := range meta.Runs {
		rv := RunVerdict{Cell: r.Cell, Repetition: r.Repetition, Verdict: "-"}
		if r.Fidelity != nil {
			rv.Verdict, rv.Reasons = r.Fidelity.Verdict, r.Fidelity.Reasons
		}
		s.Runs = append(s.Runs, rv)
	}
	return s
}

// writeFidelity renders report.md's Fidelity section.
func writeFidelity(b *strings.Builder, f FidelitySummary) {
	b.WriteString("\n## Fidelity\n\nDo the numbers reflect the emulated network, or the machine? ")
	fmt.Fprintf(b, "WARN: CPU saturated more than %.0f%% of a run, senders' pacing error above %.0f%%, a saturated link whose real queue served below %.0f%% of its rate while backlogged, or link queues not measured. ",
		100*fidelity.MaxCPUSaturated, 100*fidelity.MaxPacingError, 100*fidelity.MinLinkRate)
	b.WriteString("FAIL: packets reordered within one path (same EV, checked when every layer runs ECMP and no link fails), or lost with no configured cause.\n\n")
	switch {
	case f.Verdict == "":
		b.WriteString("Overall: not judged (no run finished).\n")
	case f.Failed && f.Verdict == fidelity.WARN:
		fmt.Fprintf(b, "Overall: **%s**: the scenario **failed** (--strict counts WARN as a failure).\n", f.Verdict)
	case f.Failed:
		fmt.Fprintf(b, "Overall: **%s**: the scenario **failed**: its numbers do not reflect the emulated network.\n", f.Verdict)
	default:
		fmt.Fprintf(b, "Overall: **%s**.\n", f.Verdict)
	}
	if len(f.Runs) == 0 {
		return
	}
	b.WriteString("\n| cell | repetition | verdict | reasons |\n|---|---|---|---|\n")
	for _, r := range f.Runs {
		reasons := "-"
		if len(r.Reasons) > 0 {
			reasons = strings.ReplaceAll(strings.Join(r.Reasons, "; "), "|", "/")
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s |\n", r.Cell, r.Repetition, r.Verdict, reasons)
	}
}
