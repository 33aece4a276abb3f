package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/results"
)

// RunVerdict is one run's fidelity verdict in summary.json.
type RunVerdict struct {
	Cell       string           `json:"cell"`
	Repetition int              `json:"repetition"`
	Verdict    fidelity.Verdict `json:"verdict"`
	Reasons    []string         `json:"reasons,omitempty"`
	// CPUBusy is the share of all cores' time busy during the run (0: not
	// sampled), and Over how far it was past its worst WARN limit
	// (fidelity.Report.Over): what calibration aims its next trial with.
	CPUBusy float64 `json:"cpu_busy,omitempty"`
	Over    float64 `json:"over,omitempty"`
	// Steal is the share of all cores' time the hypervisor gave to other
	// guests during the run (fidelity.CPUStats.MeanSteal).
	Steal float64 `json:"steal,omitempty"`
}

// FidelitySummary is summary.json's fidelity: overall and per run.
type FidelitySummary struct {
	Verdict fidelity.Verdict `json:"verdict,omitempty"`
	Strict  bool             `json:"strict,omitempty"`
	Failed  bool             `json:"failed"` // the verdicts failed the scenario
	Runs    []RunVerdict     `json:"runs"`
	// Retried is how many tries were run again because the hypervisor
	// disturbed them (results.Meta.Retried); Runs are the tries that count.
	Retried int `json:"retried,omitempty"`
}

func fidelityOf(meta *results.Meta) FidelitySummary {
	s := FidelitySummary{Verdict: meta.Fidelity, Strict: meta.Strict, Failed: meta.FidelityFailed(), Retried: len(meta.Retried)}
	for _, r := range meta.Runs {
		rv := RunVerdict{Cell: r.Cell, Repetition: r.Repetition, Verdict: "-"}
		if r.Fidelity != nil {
			rv.Verdict, rv.Reasons, rv.Over = r.Fidelity.Verdict, r.Fidelity.Reasons, r.Fidelity.Over
			if c := r.Fidelity.CPU; c != nil {
				rv.CPUBusy, rv.Steal = c.MeanBusy, c.MeanSteal
			}
		}
		s.Runs = append(s.Runs, rv)
	}
	return s
}

// writeFidelity renders report.md's Fidelity section.
func writeFidelity(b *strings.Builder, f FidelitySummary) {
	b.WriteString("\n## Fidelity\n\nDo the numbers reflect the emulated network, or the machine? ")
	fmt.Fprintf(b, "WARN: CPU saturated more than %.0f%% of a run, senders that lost more than %.0f%% of their paced time to late departures or whose held departures left more than %.0f gap after their slots on average, a saturated link whose real queue served below %.0f%% of its rate while backlogged, link queues not measured, or link delays emulated late on average by more than %.0f packet time or %.0f%% of their round trip. ",
		100*fidelity.MaxCPUSaturated, 100*fidelity.MaxPacingLoss, fidelity.MaxPacingLateSlots, 100*fidelity.MinLinkRate, fidelity.MaxDelayLatePackets, 100*fidelity.MaxDelayLateRTT)
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
	if f.Retried > 0 {
		fmt.Fprintf(b, "\n%s: a WARN while the hypervisor took %.0f%% of the cores or more (steal) was run again with the same seed (--retry-disturbed); the tries that count are below, the others are kept in run.json (`retried`).\n", retriedLine(f.Retried), 100*fidelity.DisturbedSteal)
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

// WriteVerdicts tells the runs' fidelity verdicts on w, one line per run
// with its reasons below; nothing when no run was judged.
func WriteVerdicts(w io.Writer, f FidelitySummary) {
	if f.Verdict == "" {
		return
	}
	fmt.Fprintf(w, "fidelity: %s\n", f.Verdict)
	if f.Retried > 0 {
		fmt.Fprintf(w, "  %s, disturbed by the hypervisor (kept in run.json, retried)\n", retriedLine(f.Retried))
	}
	for _, r := range f.Runs {
		fmt.Fprintf(w, "  %s rep %d: %s", r.Cell, r.Repetition, r.Verdict)
		for _, why := range r.Reasons {
			fmt.Fprintf(w, "\n    %s", why)
		}
		fmt.Fprintln(w)
	}
}

// retriedLine is "1 run was run again" or "N runs were run again".
func retriedLine(n int) string {
	if n == 1 {
		return "1 run was run again"
	}
	return fmt.Sprintf("%d runs were run again", n)
}
