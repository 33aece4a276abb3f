package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ftlab/ftlab/switchd"
)

// Control is the lab's switch control plane.
func (s *Store) Control(st *State) *switchd.Lab {
	return &switchd.Lab{Topo: st.Topology, Config: st.DataPlane, Namespace: s.Namer(st.Name), PinRoot: st.PinRoot}
}

// SetLink fails (up = false) or repairs the link between nodes a and b of a
// lab: at once in the data plane, then, after the lab's convergence delay,
// every switch reconverges to routes that avoid (or use again) the link.
// It returns the link's name.
func (s *Store) SetLink(ctx context.Context, name, a, b string, up bool) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	release, err := s.lock(name)
	if err != nil {
		return "", err
	}
	defer release()
	st, err := s.Get(name)
	if err != nil {
		return "", err
	}
	if st.Phase != PhaseUp {
		return "", fmt.Errorf("lab %q is %s, not up", name, st.Phase)
	}
	l, _, ok := st.Topology.LinkBetween(a, b)
	if !ok {
		return "", fmt.Errorf("lab %q has no link between %q and %q", name, a, b)
	}
	previous := switchd.FailedSet(st.Failed)
	if previous[l.ID] == !up {
		return l.Name, nil // already in that state
	}
	failed := switchd.FailedSet(st.Failed)
	if up {
		delete(failed, l.ID)
	} else {
		failed[l.ID] = true
	}
	ctl := s.Control(st)
	if err := ctl.SetLinkUp(l, up); err != nil {
		return "", err
	}
	st.Failed = switchd.FailedList(failed)
	if err := s.write(st); err != nil {
		return "", err
	}
	select {
	case <-ctx.Done():
		return "", errors.Join(ctx.Err(), fmt.Errorf("link %s changed but the switches did not reconverge; repeat the command", l.Name))
	case <-time.After(st.DataPlane.ConvergenceDelay):
	}
	if err := ctl.Reconverge(ctx, previous, failed); err != nil {
		return "", err
	}
	return l.Name, nil
}

// FailedLinks returns the names of a lab's failed links.
func FailedLinks(st *State) []string {
	var out []string
	for _, id := range st.Failed {
		if id >= 0 && id < len(st.Topology.Links) {
			out = append(out, st.Topology.Links[id].Name)
		}
	}
	slices.Sort(out)
	return out
}

// Reprogram replaces a lab's data plane with dp: everything the old one
// pinned is released (its programs detach) and dp is installed on the same
// fabric. The lab must be up and have no failed links.
func (s *Store) Reprogram(ctx context.Context, name string, dp switchd.Config) (*State, error) {
	dp = dp.WithDefaults()
	if err := dp.Validate(); err != nil {
		return nil, fmt.Errorf("lab %q: data plane: %w", name, err)
	}
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	release, err := s.lock(name)
	if err != nil {
		return nil, err
	}
	defer release()
	st, err := s.Get(name)
	if err != nil {
		return nil, err
	}
	if st.Phase != PhaseUp {
		return nil, fmt.Errorf("lab %q is %s, not up", name, st.Phase)
	}
	if len(st.Failed) > 0 {
		return nil, fmt.Errorf("lab %q has failed links (%s): repair them first (ftlab link up)", name, strings.Join(FailedLinks(st), ", "))
	}
	if err := switchd.Remove(st.PinRoot); err != nil {
		return nil, err
	}
	st.DataPlane = dp
	t0 := time.Now()
	if err := s.Control(st).Install(ctx); err != nil {
		// The fabric is intact but forwards nothing: say so in the record.
		st.DataPlane = switchd.Config{DataPlane: switchd.DataPlaneNone}
		_ = s.write(st)
		return nil, fmt.Errorf("lab %q: install data plane: %w (the lab now has none)", name, err)
	}
	st.DataPlaneTime = time.Since(t0)
	return st, s.write(st)
}
