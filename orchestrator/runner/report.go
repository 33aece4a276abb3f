package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// summaryOf summarizes every cell of meta's scenario that has runs, in the
// scenario's order.
func summaryOf(meta *RunMeta, byCell map[string][]runRows) *Summary {
	sum := &Summary{Scenario: meta.Scenario.Name, Complete: meta.Complete, Fidelity: fidelityOf(meta)}
	for _, c := range meta.Scenario.Cells {
		if runs := byCell[c.Name]; len(runs) > 0 {
			sum.Cells = append(sum.Cells, summarize(c.Name, runs))
		}
	}
	return sum
}

// Report rebuilds summary.json, report.md and the plots of a results
// directory from its raw files (run.json, flows.csv, links.csv,
// subflows.csv) and returns the summary.
func Report(dir string) (*Summary, error) {
	data, err := os.ReadFile(filepath.Join(dir, RunFile))
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var meta RunMeta
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, fmt.Errorf("report: %s: %w", filepath.Join(dir, RunFile), err)
	}
	if meta.Scenario == nil {
		return nil, fmt.Errorf("report: %s has no scenario", filepath.Join(dir, RunFile))
	}
	flows, err := readCSV(filepath.Join(dir, FlowsFile), flowsHeader, parseFlowRow)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	links, err := readCSV(filepath.Join(dir, LinksFile), linksHeader, parseLinkRow)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	subflows, err := readCSV(filepath.Join(dir, SubflowsFile), subflowsHeader, parseSubflowRow)
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // results from before subflows.csv have none
		return nil, fmt.Errorf("report: %w", err)
	}
	type key struct {
		cell string
		rep  int
	}
	index := map[key]*runRows{}
	byCell := map[string][]runRows{}
	order := []key{}
	for _, r := range meta.Runs {
		k := key{r.Cell, r.Repetition}
		rr := &runRows{status: r.Status, cct: r.CCT}
		if r.Bound != nil {
			rr.bound = r.Bound.CCT
		}
		index[k] = rr
		order = append(order, k)
	}
	for _, f := range flows {
		if rr, ok := index[key{f.Cell, f.Repetition}]; ok {
			rr.flows = append(rr.flows, f)
		}
	}
	for _, l := range links {
		if rr, ok := index[key{l.Cell, l.Repetition}]; ok {
			rr.links = append(rr.links, l)
		}
	}
	subByCell := map[string][]subflowRow{}
	for _, s := range subflows {
		if _, ok := index[key{s.Cell, s.Repetition}]; ok {
			subByCell[s.Cell] = append(subByCell[s.Cell], s)
		}
	}
	for _, k := range order {
		byCell[k.cell] = append(byCell[k.cell], *index[k])
	}
	sum := summaryOf(&meta, byCell)
	if err := writeJSON(dir, SummaryFile, sum); err != nil {
		return nil, err
	}
	return sum, errors.Join(writeReportFile(dir, &meta, sum), writePlots(dir, plotCells(sum), byCell),
		writePathsPlot(dir, pathCells(&meta, sum), subByCell))
}
