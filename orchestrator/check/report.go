package check

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/results"
)

// The files of a checks report directory, besides the figures.
const (
	ReportFile = "report.md"
	JSONFile   = "checks.json"
)

// MarshalJSON writes the claim's numbers as null where there is none
// (NaN), which encoding/json cannot write.
func (c Claim) MarshalJSON() ([]byte, error) {
	type plain Claim
	out := struct {
		plain
		PaperValue *float64 `json:"paper_value"`
		Measured   *float64 `json:"measured"`
		Ratio      *float64 `json:"ratio"`
	}{plain: plain(c), PaperValue: finite(c.PaperValue), Measured: finite(c.Measured), Ratio: finite(c.Ratio)}
	return json.Marshal(out)
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// writeReport writes checks.json and report.md into the report's
// directory.
func writeReport(rep *Report) error {
	if err := results.WriteJSON(rep.Dir, JSONFile, rep); err != nil {
		return err
	}
	var b strings.Builder
	Markdown(&b, rep)
	return os.WriteFile(filepath.Join(rep.Dir, ReportFile), []byte(b.String()), 0o644)
}

// Markdown renders the report: a summary table, then a section per
// check with its claims, regime, deviations, figures and data.
func Markdown(w io.Writer, rep *Report) {
	mode := "full"
	if rep.Quick {
		mode = "quick (reduced scenarios: the pipeline, not the claims)"
	}
	fmt.Fprintf(w, "# ftlab paper checks\n\nRun %s, %s, %s. Verdict: **%s**.\n\n",
		rep.Started.Format(time.RFC3339), rep.Finished.Sub(rep.Started).Round(time.Second), mode, rep.Verdict())
	fmt.Fprintf(w, "A claim HOLDS when its numbers satisfy its rule on runs whose fidelity verdict is OK. A seed in which one of the runs a claim compares is not OK is left out of all of them, so comparisons stay paired; when fewer than %.0f%% of the seeds (at least %d) remain, the claim is INCONCLUSIVE whatever the numbers say, and so it is when the data is too thin (fewer than %d delivered flows for a 99th percentile, runs that timed out). NO DATA: the claim's cells did not run, or nothing happened that it speaks of.\n\n", 100*MinOKShare, MinOKSeeds, MinFlows)
	fmt.Fprintf(w, "| check | paper | verdict | claims | time |\n|---|---|---|---|---|\n")
	for _, r := range rep.Results {
		fmt.Fprintf(w, "| [%s](#%s) | %s | **%s** | %s | %.0f s |\n", r.Name, anchor(r), r.Paper, r.Verdict, tally(r.Claims), r.Seconds)
	}
	for _, e := range rep.Errors {
		fmt.Fprintf(w, "\nCould not be evaluated: %s\n", e)
	}
	if rep.Interrupted != "" {
		fmt.Fprintf(w, "\n**Incomplete**: %s; the checks after it did not run.\n", rep.Interrupted)
	}
	for _, r := range rep.Results {
		section(w, r)
	}
}

func anchor(r Result) string {
	return strings.ToLower(strings.NewReplacer(" ", "-", ":", "", ",", "", "(", "", ")", "", "+", "", ".", "").Replace(r.Name + ": " + r.Title))
}

// tally counts claims by verdict: "3 HOLDS, 1 DOES NOT HOLD".
func tally(cs []Claim) string {
	n := map[Verdict]int{}
	for _, c := range cs {
		n[c.Verdict]++
	}
	var parts []string
	for _, v := range []Verdict{Holds, DoesNotHold, Inconclusive, NoData} {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	return strings.Join(parts, ", ")
}

func section(w io.Writer, r Result) {
	fmt.Fprintf(w, "\n## %s: %s\n\n%s. Verdict: **%s**.\n\n%s\n\n", r.Name, r.Title, r.Paper, r.Verdict, r.Setup)
	fmt.Fprintf(w, "| claim | paper | ftlab | ftlab/paper | rule | fidelity | verdict |\n|---|---|---|---|---|---|---|\n")
	for _, c := range r.Claims {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | **%s** |\n", cell(c.Text), cell(c.Paper), c.MeasuredText(), c.RatioText(),
			cell(c.Rule), orDash(string(c.Fidelity)), c.Verdict)
	}
	fmt.Fprintln(w)
	for _, c := range r.Claims {
		fmt.Fprintf(w, "- **%s** (%s): %s", c.ID, c.Verdict, c.Detail)
		if c.Why != "" {
			fmt.Fprintf(w, " *%s.*", c.Why)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nRegime and runs:\n\n| scenario | rate | regime | link delays (emulated) | runs | fidelity | results |\n|---|---|---|---|---|---|---|\n")
	for _, s := range r.Runs {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %d (%d cells x %d seeds) | %s | %s |\n", s.File, cell(s.Rate), cell(s.Regime), orDash(s.Delays),
			s.Runs, s.Cells, s.Seeds, fidelityText(s), s.Dir)
	}
	if r.Skipped != "" {
		fmt.Fprintf(w, "\nNot run: %s.\n", r.Skipped)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "\nError: %s\n", cell(e))
	}
	for _, s := range r.Runs {
		if s.RunError != "" {
			fmt.Fprintf(w, "\n%s reported: %s\n", s.File, cell(s.RunError))
		}
	}
	if len(r.Deviations) > 0 {
		fmt.Fprintf(w, "\nWhere this differs from the paper:\n\n")
		for _, d := range r.Deviations {
			fmt.Fprintf(w, "- %s\n", d)
		}
	}
	for _, f := range r.Figures {
		if strings.HasSuffix(f, ".png") {
			fmt.Fprintf(w, "\n![%s](%s)\n", strings.TrimSuffix(f, ".png"), f)
		}
	}
	if len(r.Figures) > 0 {
		fmt.Fprintf(w, "\nEach figure is also written as SVG (same name, .svg).\n")
	}
	if r.Tables != "" {
		fmt.Fprintf(w, "\n%s\n", r.Tables)
	}
}

// fidelityText counts a scenario's runs by verdict: "OK (12 OK)",
// "WARN (3 OK, 9 WARN)", "OK (12 OK, 2 run again after ...)".
func fidelityText(s ScenarioResult) string {
	var parts []string
	for _, v := range []fidelity.Verdict{fidelity.OK, fidelity.WARN, fidelity.FAIL} {
		if n := s.FidelityCounts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, v))
		}
	}
	if s.Retried > 0 {
		parts = append(parts, fmt.Sprintf("%d run again after the hypervisor disturbed them", s.Retried))
	}
	return fmt.Sprintf("%s (%s)", orDash(s.Fidelity), strings.Join(parts, ", "))
}

func cell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", "/"), "\n", " ") }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteText prints the report for a terminal: the summary, then each
// check's claims (paper, ftlab, ratio, verdict) and regime.
func WriteText(w io.Writer, rep *Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tPAPER\tVERDICT\tCLAIMS\tTIME")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0fs\n", r.Name, r.Paper, r.Verdict, tally(r.Claims), r.Seconds)
	}
	_ = tw.Flush()
	for _, r := range rep.Results {
		fmt.Fprintf(w, "\n== %s: %s (%s)\n", r.Name, r.Verdict, r.Paper)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  CLAIM\tPAPER\tFTLAB\tRATIO\tFIDELITY\tVERDICT")
		for _, c := range r.Claims {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", c.ID, shorten(c.Paper, 28), c.MeasuredText(), c.RatioText(), orDash(string(c.Fidelity)), c.Verdict)
		}
		_ = tw.Flush()
		for _, c := range r.Claims {
			fmt.Fprintf(w, "  %s: %s\n    rule: %s\n    data: %s\n", c.ID, c.Text, c.Rule, c.Detail)
			if c.Why != "" {
				fmt.Fprintf(w, "    why %s: %s\n", c.Verdict, c.Why)
			}
		}
		for _, s := range r.Runs {
			fmt.Fprintf(w, "  %s: %d runs, fidelity %s, %.0fs\n    rate: %s\n    regime: %s\n", s.File, s.Runs, fidelityText(s), s.Seconds, s.Rate, s.Regime)
			if s.Delays != "" {
				fmt.Fprintf(w, "    link delays: %s\n", s.Delays)
			}
			fmt.Fprintf(w, "    results: %s\n", s.Dir)
		}
		if r.Skipped != "" {
			fmt.Fprintf(w, "  not run: %s\n", r.Skipped)
		}
		for _, e := range r.Errors {
			fmt.Fprintf(w, "  error: %s\n", e)
		}
	}
	for _, e := range rep.Errors {
		fmt.Fprintf(w, "\ncould not be evaluated: %s\n", e)
	}
	if rep.Interrupted != "" {
		fmt.Fprintf(w, "\nincomplete: %s; the checks after it did not run\n", rep.Interrupted)
	}
	if rep.Dir != "" {
		fmt.Fprintf(w, "\nreport: %s\n", filepath.Join(rep.Dir, ReportFile))
	}
}

func shorten(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
