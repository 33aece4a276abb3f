package workload

import (
	"testing"

	"github.com/ftlab/ftlab/internal/topology"
)

func fatTree(t *testing.T, k int) *Fabric {
	t.Helper()
	top, err := topology.NewFatTree(k)
	if err != nil {
		t.Fatal(err)
	}
	return FabricOf(top)
}

func leafSpine(t *testing.T, leaves, spines, hosts int) *Fabric {
	t.Helper()
	top, err := topology.NewLeafSpine(leaves, spines, hosts)
	if err != nil {
		t.Fatal(err)
	}
	return FabricOf(top)
}

func generate(t *testing.T, s Spec, f *Fabric, seed uint64) []Message {
	t.Helper()
	msgs, err := s.Generate(f, seed)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckOrder(msgs); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// pairs reduces messages to "src>dst" strings for compact comparisons.
func pairs(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Src + ">" + m.Dst
	}
	return out
}

// counts returns how many messages each host sends and receives.
func counts(msgs []Message) (sent, received map[string]int) {
	sent, received = map[string]int{}, map[string]int{}
	for _, m := range msgs {
		sent[m.Src]++
		received[m.Dst]++
	}
	return sent, received
}
