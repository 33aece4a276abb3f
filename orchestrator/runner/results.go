package runner

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Result files in a run directory.
const (
	RunFile      = "run.json"
	FlowsFile    = "flows.csv"
	LinksFile    = "links.csv"
	SubflowsFile = "subflows.csv"
	SummaryFile  = "summary.json"
	ReportFile   = "report.md"
)

// writer appends each finished run to the result files as soon as it ends,
// so an interrupted scenario keeps every run that completed.
type writer struct {
	dir                    string
	flows, links, subflows *os.File
	fw, lw, sw             *csv.Writer
}

func newWriter(dir string) (*writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	w := &writer{dir: dir}
	var err error
	if w.flows, err = os.Create(filepath.Join(dir, FlowsFile)); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	if w.links, err = os.Create(filepath.Join(dir, LinksFile)); err != nil {
		w.flows.Close()
		return nil, fmt.Errorf("results: %w", err)
	}
	if w.subflows, err = os.Create(filepath.Join(dir, SubflowsFile)); err != nil {
		w.flows.Close()
		w.links.Close()
		return nil, fmt.Errorf("results: %w", err)
	}
	w.fw, w.lw, w.sw = csv.NewWriter(w.flows), csv.NewWriter(w.links), csv.NewWriter(w.subflows)
	_ = w.fw.Write(flowsHeader)
	_ = w.lw.Write(linksHeader)
	_ = w.sw.Write(subflowsHeader)
	return w, nil
}

// addRun appends one run's messages and ports and flushes them to disk.
func (w *writer) addRun(r *RunResult) error {
	for _, row := range flowRowsOf(r) {
		if err := w.fw.Write(row.record()); err != nil {
			return err
		}
	}
	for _, row := range linkRowsOf(r) {
		if err := w.lw.Write(row.record()); err != nil {
			return err
		}
	}
	for _, row := range subflowRowsOf(r) {
		if err := w.sw.Write(row.record()); err != nil {
			return err
		}
	}
	w.fw.Flush()
	w.lw.Flush()
	w.sw.Flush()
	return errors.Join(w.fw.Error(), w.lw.Error(), w.sw.Error())
}

func (w *writer) close() error {
	w.fw.Flush()
	w.lw.Flush()
	w.sw.Flush()
	e1, e2, e3 := w.flows.Close(), w.links.Close(), w.subflows.Close()
	return errors.Join(e1, e2, e3)
}

// writeJSON writes v to name in the run directory, atomically.
func writeJSON(dir, name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, name+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

// readCSV reads a result CSV, checks its header and parses every row,
// naming the file and line of the first bad one.
func readCSV[T any](path string, header []string, parse func([]string) (T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || fmt.Sprint(recs[0]) != fmt.Sprint(header) {
		return nil, fmt.Errorf("%s: not an ftlab results file (unexpected header)", path)
	}
	out := make([]T, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		row, err := parse(rec)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+2, err)
		}
		out = append(out, row)
	}
	return out, nil
}
