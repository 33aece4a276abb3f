package runner

import (
	"context"
	"fmt"

	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// cellLabs gives each cell of a run its lab. With Options.ReuseLab every
// cell reprograms that lab (reuseLab). Otherwise the run builds its own
// lab for the first cell and keeps it for every next cell whose fabric
// has the same shape (nodes, links, MTUs): lab.Store.Reprogram sets it up
// for the cell as a fresh build would (in place where the installed data
// plane can run the cell: every map written again, counters, queues and
// shaping reset), so cells stay independent without paying a build and a
// teardown each. A cell of another shape gets a new lab. close takes the
// run's lab down.
type cellLabs struct {
	opt   Options
	built *lab.State // the lab this run built, while it is up
}

// forCell returns the lab to run cell cfg on, its data plane seeded with
// seed.
func (c *cellLabs) forCell(ctx context.Context, cfg *scenario.Config, seed uint64) (*lab.State, error) {
	if c.opt.ReuseLab != "" {
		return reuseLab(ctx, c.opt, cfg, seed)
	}
	if c.built != nil {
		if lab.SameShape(c.built.Topology, cfg.Topo()) == nil {
			st, err := c.opt.Store.Reprogram(ctx, c.opt.LabName, DataPlaneOf(cfg, seed), cfg.Topo())
			if err == nil {
				c.built = st
				return st, nil
			}
			// A lab that cannot be reprogrammed is built again.
		}
		if err := c.close(); err != nil {
			return nil, err
		}
	}
	// The lab is the run's: a run killed before it could take it down
	// leaves a leftover that ftlab cleanup, or the next run of the same
	// lab name, removes.
	st, err := c.opt.Store.Up(ctx, c.opt.LabName, cfg.Topo(), lab.UpOptions{
		TopologyFile: cfg.Topology.Source, DataPlane: DataPlaneOf(cfg, seed), Owned: true,
		Reclaim: true, Reclaimed: Reclaimed(c.opt.Notice),
	})
	if err != nil {
		return nil, fmt.Errorf("build lab: %w", err)
	}
	c.built = st
	return st, nil
}

// close takes down the lab the run built, if it is up.
func (c *cellLabs) close() error {
	if c.built == nil {
		return nil
	}
	c.built = nil
	if err := c.opt.Store.Down(c.opt.LabName); err != nil {
		return fmt.Errorf("take lab down: %w", err)
	}
	return nil
}

// reuseLab reprograms an existing lab's data plane for a cell: the lab's
// namespaces and veths must be the cell's fabric (same nodes, links and
// MTUs); its link rates, buffers and ECN thresholds become the cell's
// (they are data-plane settings, so a scenario with rate or --rate can
// run on a lab built at the topology's own rates).
func reuseLab(ctx context.Context, opt Options, cfg *scenario.Config, seed uint64) (*lab.State, error) {
	st, err := opt.Store.Reprogram(ctx, opt.ReuseLab, DataPlaneOf(cfg, seed), cfg.Topo())
	if err != nil {
		return nil, fmt.Errorf("lab %s cannot run this scenario: %w", opt.ReuseLab, err)
	}
	return st, nil
}
