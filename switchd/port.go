package switchd

import (
	"fmt"

	"github.com/ftlab/ftlab/bpf"
)

// PortCounters reads one switch port's counters (eBPF data plane): what
// a live view polls, cheaper than Stats' every port of every switch.
func (l *Lab) PortCounters(node string, port int) (Counters, error) {
	if l.Config.DataPlane != DataPlaneBPF {
		return Counters{}, fmt.Errorf("per-port counters need the eBPF data plane (this lab runs %s)", l.Config.DataPlane)
	}
	var c Counters
	err := l.withSwitch(node, func(sw *bpf.Switch) error {
		var err error
		c, err = sw.PortCounters(port)
		return err
	})
	return c, err
}
