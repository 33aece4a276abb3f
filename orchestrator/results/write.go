package results

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The raw files of a results directory.
const (
	RunFile      = "run.json"
	FlowsFile    = "flows.csv"
	LinksFile    = "links.csv"
	SubflowsFile = "subflows.csv"
)

// NewDir creates a new results directory named name under parent; two
// runs started in the same second get name and name-2, never one
// directory.
func NewDir(parent, name string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("results: %w", err)
	}
	for i := 1; ; i++ {
		dir := filepath.Join(parent, name)
		if i > 1 {
			dir += fmt.Sprintf("-%d", i)
		}
		switch err := os.Mkdir(dir, 0o755); {
		case err == nil:
			return dir, nil
		case !errors.Is(err, os.ErrExist) || i >= 1000:
			return "", fmt.Errorf("results: %w", err)
		}
	}
}

// MakeDir creates dir, which must not exist yet: results are never
// written over.
func MakeDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}

// Writer appends each finished run to the CSV files as soon as it ends,
// so an interrupted scenario keeps every run that completed.
type Writer struct {
	flows, links, subflows *os.File
	fw, lw, sw             *csv.Writer
}

// NewWriter creates dir's CSV files, with their headers.
func NewWriter(dir string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	w := &Writer{}
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

// Add appends one run's rows and flushes them to disk.
func (w *Writer) Add(r Rows) error {
	for _, row := range r.Flows {
		if err := w.fw.Write(row.record()); err != nil {
			return err
		}
	}
	for _, row := range r.Links {
		if err := w.lw.Write(row.record()); err != nil {
			return err
		}
	}
	for _, row := range r.Subflows {
		if err := w.sw.Write(row.record()); err != nil {
			return err
		}
	}
	w.fw.Flush()
	w.lw.Flush()
	w.sw.Flush()
	return errors.Join(w.fw.Error(), w.lw.Error(), w.sw.Error())
}

// Close flushes and closes the files.
func (w *Writer) Close() error {
	w.fw.Flush()
	w.lw.Flush()
	w.sw.Flush()
	e1, e2, e3 := w.flows.Close(), w.links.Close(), w.subflows.Close()
	return errors.Join(e1, e2, e3)
}

// WriteMeta writes run.json to dir, atomically.
func WriteMeta(dir string, m *Meta) error { return WriteJSON(dir, RunFile, m) }

// WriteJSON writes v to name in dir, atomically.
func WriteJSON(dir, name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(dir, name, append(data, '\n'))
}

// writeAtomic writes data to name in dir through a temporary file, so a
// reader sees the old file or the new one, never half of one.
func writeAtomic(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}
