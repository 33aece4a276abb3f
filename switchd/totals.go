package switchd

import "slices"

// DirectionTotals are the port statistics of one direction (E->A, A->C,
// ...) summed over its ports.
type DirectionTotals struct {
	Direction  string `json:"direction"`
	Ports      int    `json:"ports"`
	TxPackets  uint64 `json:"tx_packets"`
	TxBytes    uint64 `json:"tx_bytes"`
	Drops      uint64 `json:"drops"`
	CEMarked   uint64 `json:"ce_marked"`
	Trimmed    uint64 `json:"trimmed"`
	MaxBacklog uint64 `json:"max_backlog_bytes"`
	// MeanQueue is the mean over ports of each port's time-averaged
	// backlog.
	MeanQueue float64 `json:"mean_backlog_bytes"`
}

// TotalByDirection sums port statistics per direction, in path order
// (DirectionRank).
func TotalByDirection(ports []PortStats) []DirectionTotals {
	by := map[string]*DirectionTotals{}
	for _, p := range ports {
		t, ok := by[p.Direction]
		if !ok {
			t = &DirectionTotals{Direction: p.Direction}
			by[p.Direction] = t
		}
		c := p.Counters
		t.Ports++
		t.TxPackets += c.TxPackets
		t.TxBytes += c.TxBytes
		t.Drops += c.Drops()
		t.CEMarked += c.CEMarked
		t.Trimmed += c.Trimmed
		t.MaxBacklog = max(t.MaxBacklog, p.Queue.MaxBacklog)
		t.MeanQueue += p.Queue.MeanBacklog()
	}
	out := make([]DirectionTotals, 0, len(by))
	for _, t := range by {
		t.MeanQueue /= float64(t.Ports)
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b DirectionTotals) int { return DirectionRank(a.Direction) - DirectionRank(b.Direction) })
	return out
}
