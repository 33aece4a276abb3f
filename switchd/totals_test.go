package switchd

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/bpf"
)

func TestTotalByDirection(t *testing.T) {
	port := func(dir string, tx, drops, maxB uint64) PortStats {
		return PortStats{Direction: dir, Counters: bpf.PortCounters{TxPackets: tx, TxBytes: 1000 * tx, DropBuffer: drops, CEMarked: 1, Trimmed: 2},
			Queue: bpf.QueueStats{MaxBacklog: maxB}}
	}
	got := TotalByDirection([]PortStats{port("A->C", 5, 0, 10), port("E->A", 1, 2, 30), port("E->A", 3, 1, 20), port("C->A", 0, 0, 0)})
	want := []DirectionTotals{
		{Direction: "E->A", Ports: 2, TxPackets: 4, TxBytes: 4000, Drops: 3, CEMarked: 2, Trimmed: 4, MaxBacklog: 30},
		{Direction: "A->C", Ports: 1, TxPackets: 5, TxBytes: 5000, CEMarked: 1, Trimmed: 2, MaxBacklog: 10},
		{Direction: "C->A", Ports: 1, CEMarked: 1, Trimmed: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := TotalByDirection(nil); len(got) != 0 {
		t.Errorf("no ports: %v", got)
	}
}
