package runner

import (
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/switchd"
)

// DataPlaneOf maps a cell's switch settings to the control plane's.
func DataPlaneOf(c *scenario.Config, seed uint64) switchd.Config {
	dp := switchd.Config{DataPlane: switchd.DataPlaneBPF, Seed: seed, Trim: c.Trimming, ProbeHeadroom: c.ProbeHeadroom,
		ConvergenceDelay: c.ConvergenceDelay}
	dp.Mode = switchd.ModeShaped
	if c.DataPlane == scenario.LineRate {
		dp.Mode = switchd.ModeLineRate
	}
	dp.EdgePolicy, dp.AggPolicy = string(c.Policy.Edge()), string(c.Policy.Agg())
	dp.SetPolicyParams(c.PolicyParams)
	return dp.WithDefaults()
}
