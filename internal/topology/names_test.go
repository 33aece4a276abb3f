package topology

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInventoryAndNeighbors(t *testing.T) {
	top, err := NewFatTree(4)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := top.Node("e0-0")
	got := []string{top.Inventory(false), top.Neighbors(n)}
	want := []string{
		"this fattree k=4 has edge switches e0-0..e3-1, aggregation switches a0-0..a3-1, core switches c0-0..c1-1",
		"h0-0-0, h0-0-1, a0-0, a0-1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
