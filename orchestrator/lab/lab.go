package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/switchd"
)

// ErrExists says a lab of that name already exists.
var ErrExists = errors.New("lab already exists")

// ErrNotFound says there is no lab of that name.
var ErrNotFound = errors.New("no such lab")

// UpOptions tune Up.
type UpOptions struct {
	TopologyFile string         // recorded for status
	Workers      int            // parallel build workers; 0 picks a default
	DataPlane    switchd.Config // what forwards; zero value: the eBPF switch with defaults
	// Owned makes the lab belong to the calling process (State.Owner), as
	// a run's lab does: once the process is gone, even killed, the lab is
	// a leftover that Cleanup removes.
	Owned bool
	// Reclaim removes a leftover of the same name first, as Cleanup would
	// (a lab whose owner is gone, or whose build or teardown was
	// interrupted), instead of failing with ErrExists: a run killed by the
	// user leaves its lab, and the next run of that name takes its place.
	// A lab that is up for a live or no owner, one a live ftlab process
	// holds, and one without a readable record are never touched.
	// Reclaimed, if set, is told what was removed.
	Reclaim   bool
	Reclaimed func(CleanupAction)
}

// Up builds the fabric of t as lab name. A second Up of a name that exists
// fails with ErrExists. If the build fails or ctx is cancelled, nothing of
// the lab remains.
func (s *Store) Up(ctx context.Context, name string, t *topology.Topology, opt UpOptions) (st *State, err error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	dp := opt.DataPlane.WithDefaults()
	if err := dp.Validate(); err != nil {
		return nil, fmt.Errorf("lab %q: data plane: %w", name, err)
	}
	err = s.claim(name)
	if errors.Is(err, os.ErrExist) && opt.Reclaim {
		if a, rerr := s.reclaim(name); rerr != nil {
			return nil, rerr
		} else if a.Removed {
			if opt.Reclaimed != nil {
				opt.Reclaimed(a)
			}
			err = s.claim(name)
		}
	}
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, s.existsError(name)
		}
		return nil, fmt.Errorf("lab %q: %w", name, err)
	}
	release, err := s.lock(name)
	if err != nil {
		_ = s.forget(name)
		return nil, err
	}
	defer release()

	planned := make([]string, 0, len(t.Nodes))
	for i := range t.Nodes {
		planned = append(planned, s.NamespaceName(name, t.Nodes[i].Name))
	}
	st = &State{
		Namespaces:   planned,
		Name:         name,
		Phase:        PhaseBuilding,
		Created:      time.Now().UTC(),
		TopologyFile: opt.TopologyFile,
		Topology:     t,
		DataPlane:    dp,
		PinRoot:      s.pinRoot(name),
	}
	if opt.Owned {
		o, err := Self()
		if err != nil {
			_ = s.forget(name)
			return nil, fmt.Errorf("lab %q: its owner: %w", name, err)
		}
		st.Owner = &o
	}
	defer func() {
		if err != nil {
			// Build already removed what it made; sweep the prefix too
			// in case the failure came from outside the build.
			if _, rerr := s.removeLab(name, planned); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
	}()
	// The record exists before the first namespace does.
	if err := s.write(st); err != nil {
		return nil, err
	}
	tm, dpTime, err := Build(ctx, t, s.Control(st), fabric.Options{Namespace: s.Namer(name), Workers: opt.Workers})
	if err != nil {
		return nil, fmt.Errorf("lab %q: %w", name, err)
	}
	st.Timings, st.DataPlaneTime = &tm, dpTime
	st.Phase = PhaseUp
	if err := s.write(st); err != nil {
		return nil, err
	}
	return st, nil
}

// Build builds the fabric of t (fo, with the data plane's transmit
// queue lengths) and installs ctl's data plane the fastest way: before
// the links come up if it can (switchd.Lab.InstallsBeforeUp), else after.
// It returns the build's timings and the data plane's install time.
func Build(ctx context.Context, t *topology.Topology, ctl *switchd.Lab, fo fabric.Options) (fabric.Timings, time.Duration, error) {
	fo.TxQueueLen = ctl.TxQueueLen
	if ctl.InstallsBeforeUp() {
		fo.DataPlane = ctl.Install
	}
	tm, err := fabric.Build(ctx, t, fo)
	if err != nil || fo.DataPlane != nil {
		return tm, tm.DataPlane, err
	}
	t0 := time.Now()
	err = ctl.Install(ctx)
	return tm, time.Since(t0), err
}

func (s *Store) existsError(name string) error {
	st, err := s.Read(name)
	switch {
	case err != nil:
		return fmt.Errorf("lab %q: %w (its record is unreadable: %v); run `ftlab cleanup`", name, ErrExists, err)
	case st.Phase == PhaseUp && st.Owner != nil && !st.Owner.Alive():
		return fmt.Errorf("lab %q: %w, left by pid %d, which is gone: run `ftlab cleanup`", name, ErrExists, st.Owner.PID)
	case st.Phase == PhaseUp:
		return fmt.Errorf("lab %q: %w (up since %s, topology %s); take it down first: ftlab down --name %s",
			name, ErrExists, st.Created.Local().Format(time.DateTime), st.Topology.Name, name)
	default:
		return fmt.Errorf("lab %q: %w in phase %q (pid %d); if that process is gone, run `ftlab cleanup`",
			name, ErrExists, st.Phase, st.PID)
	}
}

// CleanupTimeout bounds how long removing a lab waits for the kernel to
// destroy its namespaces (fabric.RemoveWait).
const CleanupTimeout = 30 * time.Second

// Down removes a lab: its namespaces, with every link in them, and its
// record. Down of a lab that does not exist returns ErrNotFound.
func (s *Store) Down(name string) error {
	_, err := s.TakeDown(name)
	return err
}

// TakeDown is Down, and says how long the kernel took to destroy the
// lab's namespaces: Down waits for that (at most CleanupTimeout), so that
// whatever comes next (another lab's build) does not wait behind it.
func (s *Store) TakeDown(name string) (fabric.Cleanup, error) {
	if err := ValidateName(name); err != nil {
		return fabric.Cleanup{}, err
	}
	if _, err := os.Stat(s.labDir(name)); errors.Is(err, os.ErrNotExist) {
		// Still sweep stray namespaces of that name: down must leave
		// nothing, even when the record was lost.
		stray, lerr := nsutil.List(s.NamespacePrefix(name))
		if lerr != nil {
			return fabric.Cleanup{}, lerr
		}
		if len(stray) == 0 {
			return fabric.Cleanup{}, fmt.Errorf("lab %q: %w", name, ErrNotFound)
		}
		return fabric.RemoveWait(context.Background(), stray, CleanupTimeout)
	}
	release, err := s.lock(name)
	if err != nil {
		return fabric.Cleanup{}, err
	}
	defer release()
	var recorded []string
	if st, err := s.Read(name); err == nil {
		recorded = st.Namespaces
		st.Phase = PhaseTearing
		if err := s.write(st); err != nil {
			return fabric.Cleanup{}, err
		}
	}
	return s.removeLab(name, recorded)
}

// removeLab deletes the recorded namespaces and any other with the lab's
// prefix, waiting for the kernel to destroy them, then the run directory.
// The caller holds the lock.
func (s *Store) removeLab(name string, recorded []string) (fabric.Cleanup, error) {
	stray, err := nsutil.List(s.NamespacePrefix(name))
	if err != nil {
		return fabric.Cleanup{}, err
	}
	c, err := fabric.RemoveWait(context.Background(), union(recorded, stray), CleanupTimeout)
	if err != nil {
		return c, fmt.Errorf("lab %q: %w", name, err)
	}
	return c, s.forget(name)
}

func union(a, b []string) []string {
	seen := make(map[string]bool, len(a)+len(b))
	var out []string
	for _, s := range append(append([]string(nil), a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Get returns a lab's record.
func (s *Store) Get(name string) (*State, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	st, err := s.Read(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("lab %q: %w", name, ErrNotFound)
	}
	return st, err
}

// CleanupAction is one thing Cleanup did or left alone, and why.
type CleanupAction struct {
	Lab        string   `json:"lab"`
	Removed    bool     `json:"removed"`
	Namespaces []string `json:"namespaces,omitempty"` // the lab's namespaces: removed, or kept with it
	Reason     string   `json:"reason"`
}

// Cleanup removes every ftlab leftover: labs whose build or teardown was
// interrupted (their lock is free but they are not up), labs that belong
// to a process that is gone (a killed `ftlab run`'s), records without a
// readable state, and namespaces with ftlab's prefix that no lab records.
// Other labs that are up are kept unless all is set. Labs a live ftlab
// process is working on are never touched.
func (s *Store) Cleanup(all bool) ([]CleanupAction, error) {
	var actions []CleanupAction
	var errs []error
	labs, err := s.List()
	if err != nil {
		return nil, err
	}
	for _, name := range labs {
		a, err := s.cleanupLab(name, all)
		if err != nil {
			errs = append(errs, err)
		}
		actions = append(actions, a)
	}
	// Namespaces with ftlab's prefix whose lab has no record.
	nss, err := nsutil.List(s.Prefix)
	if err != nil {
		return actions, errors.Join(append(errs, err)...)
	}
	orphans := map[string][]string{}
	for _, ns := range nss {
		lab, ok := s.labOfNamespace(ns)
		if !ok {
			continue // not a name ftlab makes: not ours to remove
		}
		if _, err := os.Stat(s.labDir(lab)); err == nil {
			continue
		}
		orphans[lab] = append(orphans[lab], ns)
	}
	var names []string
	for lab := range orphans {
		names = append(names, lab)
	}
	sort.Strings(names)
	for _, lab := range names {
		a := CleanupAction{Lab: lab, Removed: true, Namespaces: orphans[lab], Reason: "namespaces without a record"}
		if err := fabric.Remove(orphans[lab]); err != nil {
			errs = append(errs, err)
			a.Removed = false
			a.Reason = err.Error()
		}
		actions = append(actions, a)
	}
	return actions, errors.Join(errs...)
}

// reclaim removes lab name if it is a leftover whose record is readable
// (see UpOptions.Reclaim); a lab in use, or whose record cannot be read,
// is left as it is, Removed false.
func (s *Store) reclaim(name string) (CleanupAction, error) {
	if _, err := s.Read(name); err != nil {
		return CleanupAction{Lab: name}, nil
	}
	return s.cleanupLab(name, false)
}

// leftover says whether Cleanup removes lab name, whose record is st (or
// could not be read: rerr), and why; all removes labs that are up too.
func leftover(name string, st *State, rerr error, all bool) (reason string, remove bool) {
	switch {
	case rerr != nil:
		return "record unreadable or missing", true
	case st.Phase == PhaseUp && st.Owner != nil && !st.Owner.Alive():
		return fmt.Sprintf("its owner (pid %d) is gone", st.Owner.PID), true
	case st.Phase == PhaseUp && !all && st.Owner != nil:
		return fmt.Sprintf("lab is up, in use by pid %d (use --all to remove it anyway)", st.Owner.PID), false
	case st.Phase == PhaseUp && !all:
		return "lab is up (use --all, or ftlab down --name " + name + ")", false
	case st.Phase == PhaseUp:
		return "lab is up (--all)", true
	default:
		return fmt.Sprintf("interrupted while %s (pid %d gone)", st.Phase, st.PID), true
	}
}

func (s *Store) cleanupLab(name string, all bool) (CleanupAction, error) {
	a := CleanupAction{Lab: name}
	if ValidateName(name) != nil {
		// Not a name ftlab gives: a stray directory in our run dir.
		a.Removed, a.Reason = true, "invalid lab directory"
		return a, s.forget(name)
	}
	release, err := s.lock(name)
	if err != nil {
		a.Reason = "in use by a running ftlab process"
		if !errors.Is(err, ErrBusy) {
			a.Reason = err.Error()
			return a, err
		}
		return a, nil
	}
	defer release()
	st, rerr := s.Read(name)
	present, _ := nsutil.List(s.NamespacePrefix(name))
	a.Namespaces = present
	var remove bool
	if a.Reason, remove = leftover(name, st, rerr, all); !remove {
		return a, nil
	}
	var recorded []string
	if st != nil {
		recorded = st.Namespaces
	}
	if _, err := s.removeLab(name, recorded); err != nil {
		a.Reason = err.Error()
		return a, err
	}
	a.Removed = true
	return a, nil
}
