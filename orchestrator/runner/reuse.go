package runner

import (
	"context"
	"fmt"

	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/orchestrator/topology"
)

// reuseLab reprograms an existing lab's data plane for a cell, after
// checking that the lab's fabric is the cell's: same nodes, same links with
// the same parameters, so the results mean what the scenario says.
func reuseLab(ctx context.Context, opt Options, cfg *scenario.Config, seed uint64) (*lab.State, error) {
	st, err := opt.Store.Get(opt.ReuseLab)
	if err != nil {
		return nil, err
	}
	if err := sameFabric(st.Topology, cfg.Topo()); err != nil {
		return nil, fmt.Errorf("lab %s cannot run this scenario: %w", opt.ReuseLab, err)
	}
	return opt.Store.Reprogram(ctx, opt.ReuseLab, dataPlaneOf(cfg, seed))
}

// sameFabric reports how two topologies differ, if they do, in what a run
// depends on: nodes and addresses, links and their parameters.
func sameFabric(have, want *topology.Topology) error {
	if len(have.Nodes) != len(want.Nodes) || len(have.Links) != len(want.Links) {
		return fmt.Errorf("it has %d nodes and %d links, the scenario's topology %s has %d and %d",
			len(have.Nodes), len(have.Links), want.Name, len(want.Nodes), len(want.Links))
	}
	for i := range want.Nodes {
		if h, w := have.Nodes[i], want.Nodes[i]; h.Name != w.Name || h.Addr != w.Addr {
			return fmt.Errorf("node %d is %s (%s), the scenario's is %s (%s)", i, h.Name, h.Addr, w.Name, w.Addr)
		}
	}
	for i := range want.Links {
		h, w := have.Links[i], want.Links[i]
		if h.Name != w.Name || h.MTU != w.MTU || h.Up != w.Up || h.Down != w.Down {
			return fmt.Errorf("link %s differs: lab mtu %d, up %v, down %v; scenario mtu %d, up %v, down %v",
				w.Name, h.MTU, h.Up, h.Down, w.MTU, w.Up, w.Down)
		}
	}
	return nil
}
