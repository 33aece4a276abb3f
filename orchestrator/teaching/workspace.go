package teaching

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SessionFile is a student's record in their workspace, and (a copy) next
// to the lab's state: which lab, which student and seed, where the work
// is, which step they are on and the runs they made. A workspace is what a
// student hands in.
const (
	SessionFile   = "session.json"
	RunsDir       = "runs"
	sessionFormat = 1
)

// Session is session.json.
type Session struct {
	Format  int    `json:"format"`
	Lab     string `json:"lab"`
	LabsDir string `json:"labs_dir"`
	Student string `json:"student"`
	Seed    uint64 `json:"seed"`
	// LabName is the ftlab lab the student works on.
	LabName   string    `json:"lab_name"`
	Workspace string    `json:"workspace"`
	Started   time.Time `json:"started"`
	Version   string    `json:"ftlab_version,omitempty"`
	// Step is the index of the step the student is on.
	Step int `json:"step"`
	// Runs are each step's latest run, directories relative to the
	// workspace.
	Runs map[string]SessionRun `json:"runs,omitempty"`
}

// SessionRun is one run of a step.
type SessionRun struct {
	Dir     string    `json:"dir"` // relative to the workspace; empty for traffic runs
	Mode    RunMode   `json:"mode"`
	Started time.Time `json:"started"`
	Verdict string    `json:"verdict,omitempty"`
	Summary string    `json:"summary,omitempty"` // one line, for traffic runs
}

// ReadSession reads a workspace's session.json.
func ReadSession(workspace string) (*Session, error) {
	var s Session
	if err := readJSON(filepath.Join(workspace, SessionFile), &s, &s.Format, sessionFormat); err != nil {
		return nil, err
	}
	return &s, nil
}

// Encode is session.json's content.
func (s *Session) Encode() ([]byte, error) {
	s.Format = sessionFormat
	data, err := json.MarshalIndent(s, "", "  ")
	return append(data, '\n'), err
}

// Write saves session.json in the workspace.
func (s *Session) Write() error {
	data, err := s.Encode()
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(s.Workspace, SessionFile), data)
}

// LoadRuns reads the summaries of a session's measured runs, found under
// workspace (which may have moved since: a submission copied elsewhere).
func LoadRuns(workspace string, s *Session) (map[string]*Run, error) {
	out := map[string]*Run{}
	for step, sr := range s.Runs {
		if sr.Mode != RunMeasure || sr.Dir == "" {
			continue
		}
		r, err := ReadRun(step, filepath.Join(workspace, sr.Dir))
		if err != nil {
			return nil, err
		}
		r.Dir = sr.Dir
		out[step] = r
	}
	return out, nil
}

// ReadRun reads a results directory's summary.json as a check sees it.
func ReadRun(step, dir string) (*Run, error) {
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, fmt.Errorf("run of step %s: %w", step, err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("run of step %s: %s: %w", step, filepath.Join(dir, "summary.json"), err)
	}
	r := &Run{Step: step, Dir: dir, Summary: doc}
	fid, _ := field(doc, "fidelity").(map[string]any)
	r.Verdict, _ = fid["verdict"].(string)
	runs, _ := fid["runs"].([]any)
	for _, rv := range runs {
		if v, _ := field(rv, "verdict").(string); v == "OK" {
			continue
		}
		reasons, _ := toStrings(field(rv, "reasons"))
		cell, _ := field(rv, "cell").(string)
		for _, why := range reasons {
			r.Reasons = append(r.Reasons, cell+": "+strings.TrimPrefix(strings.TrimPrefix(why, "WARN: "), "FAIL: "))
		}
	}
	return r, nil
}

// Template is a lab's answers template.
func (l *Lab) Template() ([]byte, error) { return os.ReadFile(filepath.Join(l.Dir, AnswersFile)) }
