package runner

import (
	"context"
	"fmt"

	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// reuseLab reprograms an existing lab's data plane for a cell: the lab's
// namespaces and veths must be the cell's fabric (same nodes, links and
// MTUs); its link rates, buffers and ECN thresholds become the cell's
// (they are data-plane settings, so a scenario with rate or --rate can
// run on a lab built at the topology's own rates).
func reuseLab(ctx context.Context, opt Options, cfg *scenario.Config, seed uint64) (*lab.State, error) {
	st, err := opt.Store.Reprogram(ctx, opt.ReuseLab, dataPlaneOf(cfg, seed), cfg.Topo())
	if err != nil {
		return nil, fmt.Errorf("lab %s cannot run this scenario: %w", opt.ReuseLab, err)
	}
	return st, nil
}
