package lab

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/switchd"
)

// Control is the lab's switch control plane.
func (s *Store) Control(st *State) *switchd.Lab {
	ns := s.Namer(st.Name)
	return &switchd.Lab{Topo: st.Topology, Config: st.DataPlane, Namespace: ns, PinRoot: st.PinRoot,
		SetCable: func(l *topology.Link, up bool) error { return fabric.SetLinkState(st.Topology, ns, l, up) }}
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
	l, err := LinkBetween(st.Topology, a, b)
	if err != nil {
		return "", fmt.Errorf("lab %q: %w", name, err)
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

// Reprogram replaces a lab's data plane with dp, leaving it as a fresh
// install of dp would: where the installed eBPF plane can run dp it is
// reconfigured in place (switchd.Lab.Reconfigure: every map written again,
// counters, queues and shaping reset; nothing reloaded or reattached),
// otherwise the old data plane is uninstalled and dp installed on the same
// fabric. links, if not nil, gives the link parameters (rates, buffers,
// ECN thresholds) to install, on a topology of the lab's shape (same
// nodes, links and MTUs); it is recorded as the lab's topology. The lab
// must be up and have no failed links.
func (s *Store) Reprogram(ctx context.Context, name string, dp switchd.Config, links *topology.Topology) (*State, error) {
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
	if links != nil {
		if err := SameShape(st.Topology, links); err != nil {
			return nil, fmt.Errorf("lab %q: %w", name, err)
		}
	}
	t0 := time.Now()
	old := s.Control(st)
	st.DataPlane = dp
	st.Impairments = nil // the new data plane runs the topology's links
	if links != nil {
		// The link parameters are the data plane's to set (HTB rates,
		// the link model); the namespaces and veths stay as they are.
		st.Topology = links
	}
	ctl := s.Control(st)
	none := func(err error) (*State, error) {
		// The fabric is intact but forwards nothing: say so in the record.
		_ = ctl.Uninstall(ctx)
		st.DataPlane = switchd.Config{DataPlane: switchd.DataPlaneNone}
		_ = s.write(st)
		return nil, fmt.Errorf("lab %q: install data plane: %w (the lab now has none)", name, err)
	}
	// The installed plane, configured afresh, if it can run dp: nothing
	// to load or attach.
	inPlace, err := ctl.Reconfigure(ctx)
	if err != nil {
		return none(err)
	}
	if !inPlace {
		if err := old.Uninstall(ctx); err != nil {
			return nil, fmt.Errorf("lab %q: %w", name, err)
		}
		if err := ctl.Install(ctx); err != nil {
			return none(err)
		}
	}
	st.DataPlaneTime = time.Since(t0)
	st.DataPlaneReused = inPlace
	return st, s.write(st)
}

// SameShape reports how two topologies differ, if they do, in what the
// fabric's namespaces and veths are: nodes and addresses, links and their
// MTU. Rates, buffers and ECN thresholds are the data plane's.
func SameShape(have, want *topology.Topology) error {
	if len(have.Nodes) != len(want.Nodes) || len(have.Links) != len(want.Links) {
		return fmt.Errorf("it has %d nodes and %d links, topology %s has %d and %d",
			len(have.Nodes), len(have.Links), want.Name, len(want.Nodes), len(want.Links))
	}
	for i := range want.Nodes {
		if h, w := have.Nodes[i], want.Nodes[i]; h.Name != w.Name || h.Addr != w.Addr {
			return fmt.Errorf("node %d is %s (%s), topology %s has %s (%s)", i, h.Name, h.Addr, want.Name, w.Name, w.Addr)
		}
	}
	for i := range want.Links {
		if h, w := have.Links[i], want.Links[i]; h.Name != w.Name || h.MTU != w.MTU {
			return fmt.Errorf("link %d is %s with MTU %d, topology %s has %s with MTU %d", i, h.Name, h.MTU, want.Name, w.Name, w.MTU)
		}
	}
	return nil
}
