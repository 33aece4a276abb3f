package check

import "github.com/ftlab/ftlab/internal/topology"

// delays says the emulated propagation delays of a fabric's links.
func delays(t *topology.Topology) string { return "" }
