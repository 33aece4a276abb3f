package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
