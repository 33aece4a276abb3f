package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ftlab/ftlab/orchestrator/results"
)

// The files a report writes into a results directory, besides the plots.
const (
	SummaryFile = "summary.json"
	ReportFile  = "report.md"
)

// Write writes set's summary.json, report.md and plots into dir and
// returns the summary. It writes everything it can: a file that fails
// leaves the others written.
func Write(dir string, set *results.Set) (*Summary, error) {
	byCell := set.ByCell()
	sum := summaryOf(set.Meta, byCell)
	subflows := map[string][]results.SubflowRow{}
	for cell, runs := range byCell {
		for _, r := range runs {
			subflows[cell] = append(subflows[cell], r.Subflows...)
		}
	}
	return sum, errors.Join(results.WriteJSON(dir, SummaryFile, sum), writeReportFile(dir, set.Meta, sum), writePlots(dir, plotCells(sum), byCell),
		writePathsPlot(dir, pathCells(set.Meta, sum), subflows))
}

// Rebuild rebuilds summary.json, report.md and the plots of a results
// directory from its raw files (run.json, flows.csv, links.csv,
// subflows.csv) and returns the summary.
func Rebuild(dir string) (*Summary, error) {
	set, err := results.Read(dir)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return Write(dir, set)
}

// Load returns a results directory's summary: its summary.json, or, when
// it has none, the one Rebuild makes.
func Load(dir string) (*Summary, error) {
	data, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return Rebuild(dir)
	}
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, SummaryFile), err)
	}
	return &s, nil
}
