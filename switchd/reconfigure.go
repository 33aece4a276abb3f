package switchd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/internal/bpffs"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd/routing"
)

// Reconfigure puts l.Config (and l.Topo's link parameters) into the eBPF
// data plane already installed in the lab's fabric, without loading or
// attaching anything, and leaves it as a fresh Install of l.Config would:
// every switch's configuration, ports (up, no corruption, the topology's
// rates, buffers and ECN thresholds), uplinks, valid sets, routes (those
// of a fabric without failures; others are deleted) and pointers (their
// starts from the seed) are written again, counters and queues zeroed,
// and the shaping renewed, hosts' included: the HTB trees get the new
// rates, and a tree with packets queued or drops counted is made anew
// (shaping.Renew), so nothing a result reads carries over. (The kernel's
// own cumulative byte and packet counts of qdiscs and interfaces are not
// reset; no result reads them.) Scenario cells use it to run back to
// back on one lab, each independent of the one before.
//
// It returns false, having changed nothing, if the installed plane
// cannot run l.Config: not the eBPF data plane, a program the mode needs
// was not loaded (a line-rate plane for a shaped cell), or a table is too
// small (pOfan with smaller pipes than the plane was sized for). Uninstall
// and Install then.
func (l *Lab) Reconfigure(ctx context.Context) (bool, error) {
	cfg := l.Config
	if err := cfg.Validate(); err != nil {
		return false, err
	}
	if cfg.DataPlane != DataPlaneBPF || !bpffs.IsMounted(l.PinRoot) {
		return false, nil
	}
	plane, err := bpf.OpenPlane(PlaneDir(l.PinRoot))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer plane.Close()
	tables, err := routing.Compute(l.Topo, nil)
	if err != nil {
		return false, err
	}
	if !l.planeFits(plane, tables) {
		return false, nil
	}
	routes, err := plane.Routes()
	if err != nil {
		return false, err
	}
	swIndex := switchIndexes(l.Topo)
	err = inEveryNode(ctx, l.Topo, l.Namespace, func(i int, n *topology.Node) error {
		if n.Role == topology.RoleHost {
			return setupHost(l.Topo, n, cfg, &reprogram{})
		}
		h, links, err := openPorts(l.Topo, n)
		if err != nil {
			return err
		}
		defer h.Close()
		sw := plane.Switch(swIndex[n.Name])
		re := &reprogram{routes: routes[sw.ID()]}
		if err := re.readQdiscs(h); err != nil {
			return err
		}
		return programSwitch(l.Topo, n, i, cfg, tables[n.Name], sw, l.PinRoot, h, links, re)
	})
	if err != nil {
		return true, fmt.Errorf("reconfigure eBPF data plane: %w", err)
	}
	return true, nil
}

// planeFits reports whether an installed plane can run l.Config: it has
// the mode's programs, one switch per topology switch, and tables at
// least as big as an install of l.Config would make.
func (l *Lab) planeFits(p *bpf.Plane, tables map[string]*routing.Table) bool {
	mode := bpf.ModeLineRate
	if l.Config.Mode == ModeShaped {
		mode = bpf.ModeShaped
	}
	need := bpf.ProgramsFor(mode)
	switches := l.Topo.Switches()
	if p.Programs()&need != need || p.Len() != len(switches) {
		return false
	}
	for i, n := range switches {
		want := sizes(l.Topo, n, tables[n.Name], l.Config.pipesOf(n))
		have := p.Switch(i).Sizes()
		if have.MaxPorts < want.MaxPorts || have.MaxRoutes < want.MaxRoutes ||
			have.MaxGroups < want.MaxGroups || have.MaxPointers < want.MaxPointers {
			return false
		}
	}
	return true
}
