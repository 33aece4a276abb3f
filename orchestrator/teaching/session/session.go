// Package session runs teaching labs on real fabrics: `ftlab lab start`
// brings a lab's fabric up through orchestrator/lab's Store (as `ftlab up`
// does) under a name derived from the lab and the student, applies the
// student's hidden faults, and records the session next to the lab's state
// and in the student's workspace; `ftlab lab run` runs a step's scenario
// on it, `ftlab lab check` evaluates checks against it, `reset` and `stop`
// end it.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/teaching"
	"github.com/ftlab/ftlab/switchd"
)

// recordFile is the session's copy next to the lab's state.
const recordFile = "teaching.json"

// Manager runs teaching sessions on a store of labs.
type Manager struct {
	Store   *lab.Store
	LabsDir string
	// Agents start the host agents of scenario runs.
	Agents          runner.AgentStarter
	Version, Commit string
	Features        map[string]bool
	Progress        func(runner.Progress)
}

// Active is a running session: its lab, record and variant.
type Active struct {
	Lab     *teaching.Lab
	Session *teaching.Session
	Facts   *teaching.Facts
}

// Options of Start.
type Options struct {
	Student   string
	Workspace string // default ./<lab>-<student>
	Name      string // the ftlab lab's name; default from lab and student
}

// LabName derives the ftlab lab name of a student's lab: the lab id and
// the student's name in lab-name letters, shortened with a hash of the
// name when they do not fit (lab names are at most lab.MaxNameLen).
func LabName(id, student string) string {
	clean := func(s string) string {
		var b strings.Builder
		for _, r := range strings.ToLower(s) {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
				b.WriteRune(r)
			case r == '-' || r == '_' || r == ' ' || r == '.':
				b.WriteByte('_')
			}
		}
		return strings.Trim(b.String(), "_")
	}
	norm := teaching.NormalizeStudent(student)
	base, who := clean(id), clean(norm)
	// Names that lost letters on the way ("Ünal" and "Ønal" are both
	// "nal") get the hash too, so they stay apart.
	lossless := who == strings.Trim(strings.NewReplacer(" ", "_", "-", "_", ".", "_").Replace(norm), "_")
	if name := base + "_" + who; len(name) <= lab.MaxNameLen && who != "" && lossless {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(teaching.NormalizeStudent(student)))
	tag := fmt.Sprintf("%04x", h.Sum32()&0xffff)
	base = base[:min(len(base), 7)]
	room := lab.MaxNameLen - len(base) - 1 - len(tag)
	return base + "_" + who[:min(len(who), room)] + tag
}

// Start brings up a student's lab: the fabric, their hidden faults, their
// workspace with the answers template, and the session record.
func (m *Manager) Start(ctx context.Context, id string, opt Options) (*Active, error) {
	l, err := teaching.Load(filepath.Join(m.LabsDir, id))
	if err != nil {
		return nil, err
	}
	student := teaching.NormalizeStudent(opt.Student)
	if student == "" {
		return nil, errors.New("no student name: give --student NAME (it seeds your variant of the lab)")
	}
	name := opt.Name
	if name == "" {
		name = LabName(l.ID, student)
	}
	if err := lab.ValidateName(name); err != nil {
		return nil, err
	}
	ws := opt.Workspace
	if ws == "" {
		ws = l.ID + "-" + strings.ReplaceAll(student, " ", "_")
	}
	if ws, err = filepath.Abs(ws); err != nil {
		return nil, err
	}
	labsDir, err := filepath.Abs(m.LabsDir)
	if err != nil {
		return nil, err
	}
	a := &Active{Lab: l, Facts: l.Draw(student), Session: &teaching.Session{
		Lab: l.ID, LabsDir: labsDir, Student: student, LabName: name, Workspace: ws,
		Started: time.Now().UTC(), Version: m.Version, Runs: map[string]teaching.SessionRun{},
	}}
	a.Session.Seed = a.Facts.Seed
	// A workspace of this lab and student (the lab went with a reboot or a
	// cleanup) resumes at its step, with its runs.
	if old, err := teaching.ReadSession(ws); err == nil && old.Lab == l.ID && old.Student == student {
		a.Session.Step, a.Session.Runs = min(old.Step, len(l.Steps)-1), old.Runs
		if a.Session.Runs == nil {
			a.Session.Runs = map[string]teaching.SessionRun{}
		}
	} else if err == nil {
		return nil, fmt.Errorf("workspace %s is %s's for lab %s: give another one (--workspace)", ws, old.Student, old.Lab)
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	if err := m.up(ctx, a); err != nil {
		return nil, err
	}
	answers := filepath.Join(ws, teaching.AnswersFile)
	if _, err := os.Stat(answers); os.IsNotExist(err) {
		tmpl, err := l.Template()
		if err == nil {
			err = os.WriteFile(answers, tmpl, 0o644)
		}
		if err != nil {
			return nil, errors.Join(err, m.Store.Down(name))
		}
	}
	if err := m.save(a); err != nil {
		return nil, errors.Join(err, m.Store.Down(name))
	}
	return a, nil
}

// dataPlane is the switch configuration the lab starts with: its policy,
// mode and convergence delay, hash seeds from the student's seed (every
// student's ECMP collides differently).
func dataPlane(l *teaching.Lab, seed uint64) (switchd.Config, error) {
	dp := switchd.Config{DataPlane: switchd.DataPlaneBPF, Mode: l.DataPlane.Mode, ConvergenceDelay: l.DataPlane.ConvergenceDelay, Seed: seed}
	var err error
	dp.EdgePolicy, dp.AggPolicy, err = switchd.ParsePolicyFlag(l.DataPlane.Policy)
	return dp.WithDefaults(), err
}

// up builds the fabric and applies the variant's faults; on failure
// nothing is left.
func (m *Manager) up(ctx context.Context, a *Active) error {
	dp, err := dataPlane(a.Lab, a.Facts.Seed)
	if err != nil {
		return err
	}
	st, err := m.Store.Up(ctx, a.Session.LabName, a.Lab.Topo, lab.UpOptions{TopologyFile: a.Lab.TopologyFile, DataPlane: dp})
	if err != nil {
		return err
	}
	if err := m.impair(st, a.Facts); err != nil {
		return errors.Join(err, m.Store.Down(st.Name))
	}
	return nil
}

// impair applies the variant's hidden faults to the lab's data plane.
func (m *Manager) impair(st *lab.State, f *teaching.Facts) error {
	ctl := m.Store.Control(st)
	for _, im := range f.Faults {
		a, b, _ := strings.Cut(im.Link, "~")
		l, _, ok := st.Topology.LinkBetween(a, b)
		if !ok {
			return fmt.Errorf("variant names link %s, which the lab does not have", im.Link)
		}
		for _, side := range im.Sides() {
			var err error
			switch im.Kind {
			case "corrupt":
				err = ctl.SetCorruption(l, side, im.Drop)
			case "degrade":
				err = ctl.SetRate(l, side, uint64(float64(l.Params(side).RateBps)*im.RateFraction))
			}
			if err != nil {
				return fmt.Errorf("variant fault on %s: %w", im.Link, err)
			}
		}
	}
	return nil
}

// save writes the session to the workspace and next to the lab's state.
func (m *Manager) save(a *Active) error {
	if err := a.Session.Write(); err != nil {
		return err
	}
	data, err := a.Session.Encode()
	if err != nil {
		return err
	}
	return m.Store.WriteFile(a.Session.LabName, recordFile, data)
}

// Find returns the running session of a lab id (empty: any) and student
// (empty: any); exactly one must match.
func (m *Manager) Find(id, student string) (*Active, error) {
	names, err := m.Store.List()
	if err != nil {
		return nil, err
	}
	student = teaching.NormalizeStudent(student)
	var found []*teaching.Session
	for _, n := range names {
		data, err := m.Store.ReadFile(n, recordFile)
		if err != nil {
			continue
		}
		var s teaching.Session
		if err := json.Unmarshal(data, &s); err != nil {
			continue
		}
		if (id == "" || s.Lab == id) && (student == "" || s.Student == student) {
			found = append(found, &s)
		}
	}
	switch len(found) {
	case 0:
		what := "no teaching lab is running"
		if id != "" || student != "" {
			what = fmt.Sprintf("no teaching lab %s for student %q is running", orAny(id), orAny(student))
		}
		return nil, fmt.Errorf("%s: start one with ftlab lab start ID --student NAME", what)
	case 1:
	default:
		var list []string
		for _, s := range found {
			list = append(list, fmt.Sprintf("%s (student %s, lab %s)", s.Lab, s.Student, s.LabName))
		}
		return nil, fmt.Errorf("several teaching labs are running: %s; say which with ID and --student", strings.Join(list, ", "))
	}
	s := found[0]
	// The workspace's copy is the student's: prefer it when it is there.
	if ws, err := teaching.ReadSession(s.Workspace); err == nil && ws.LabName == s.LabName {
		s = ws
	}
	l, err := teaching.Load(filepath.Join(s.LabsDir, s.Lab))
	if err != nil {
		return nil, err
	}
	return &Active{Lab: l, Session: s, Facts: l.Draw(s.Student)}, nil
}

func orAny(s string) string {
	if s == "" {
		return "(any)"
	}
	return s
}

// Reset takes the student's lab down and brings it up again at step 1,
// with the same variant; the workspace keeps answers and past runs, but
// the session forgets the runs and checks.
func (m *Manager) Reset(ctx context.Context, a *Active) error {
	if err := m.Store.Down(a.Session.LabName); err != nil && !errors.Is(err, lab.ErrNotFound) {
		return err
	}
	a.Session.Step, a.Session.Runs, a.Session.Started = 0, map[string]teaching.SessionRun{}, time.Now().UTC()
	for _, f := range []string{teaching.ReportFile, teaching.ResultsFile, teaching.JUnitFile} {
		if err := os.Remove(filepath.Join(a.Session.Workspace, f)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if err := m.up(ctx, a); err != nil {
		return err
	}
	return m.save(a)
}

// Stop takes the student's lab down; the workspace stays, to hand in.
func (m *Manager) Stop(a *Active) error { return m.Store.Down(a.Session.LabName) }
