package routing

import (
	"fmt"
	"testing"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/google/go-cmp/cmp"
)

// TestNoFailures: with every link up, every valid set is every uplink and
// each role has the expected routes.
func TestNoFailures(t *testing.T) {
	type shape struct {
		Uplinks, Pointers int
		ValidSets         []uint64
		Kinds             string
	}
	tests := []struct {
		name string
		top  func(*testing.T) *topology.Topology
		want map[topology.Role]shape
	}{
		{"fattree k=4", func(t *testing.T) *topology.Topology { return newFatTree(t, 4) }, map[topology.Role]shape{
			topology.RoleEdge: {2, 8, []uint64{0b11}, "local 1 down 2 up 7 noroute 1"},
			topology.RoleAgg:  {2, 4, []uint64{0b11}, "local 1 down 2 up 3 noroute 0"},
			topology.RoleCore: {0, 0, nil, "local 1 down 4 up 0 noroute 0"},
		}},
		{"fattree k=6", func(t *testing.T) *topology.Topology { return newFatTree(t, 6) }, map[topology.Role]shape{
			topology.RoleEdge: {3, 18, []uint64{0b111}, "local 1 down 3 up 17 noroute 1"},
			topology.RoleAgg:  {3, 6, []uint64{0b111}, "local 1 down 3 up 5 noroute 0"},
			topology.RoleCore: {0, 0, nil, "local 1 down 6 up 0 noroute 0"},
		}},
		{"fattree k=8", func(t *testing.T) *topology.Topology { return newFatTree(t, 8) }, map[topology.Role]shape{
			topology.RoleEdge: {4, 32, []uint64{0b1111}, "local 1 down 4 up 31 noroute 1"},
			topology.RoleAgg:  {4, 8, []uint64{0b1111}, "local 1 down 4 up 7 noroute 0"},
			topology.RoleCore: {0, 0, nil, "local 1 down 8 up 0 noroute 0"},
		}},
		{"leafspine 4x2x4", func(t *testing.T) *topology.Topology { return newLeafSpine(t, 4, 2, 4) }, map[topology.Role]shape{
			topology.RoleLeaf:  {2, 4, []uint64{0b11}, "local 1 down 4 up 3 noroute 1"},
			topology.RoleSpine: {0, 0, nil, "local 1 down 4 up 0 noroute 0"},
		}},
		{"leafspine 8x64x1", func(t *testing.T) *topology.Topology { return newLeafSpine(t, 8, 64, 1) }, map[topology.Role]shape{
			topology.RoleLeaf:  {64, 8, []uint64{^uint64(0)}, "local 1 down 1 up 7 noroute 1"},
			topology.RoleSpine: {0, 0, nil, "local 1 down 8 up 0 noroute 0"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := tt.top(t)
			tables := compute(t, top, nil)
			if len(tables) != len(top.Switches()) {
				t.Fatalf("%d tables for %d switches", len(tables), len(top.Switches()))
			}
			for _, n := range top.Switches() {
				tb := tables[n.Name]
				got := shape{len(tb.Uplinks), tb.Pointers, tb.ValidSets, countKinds(tb)}
				if diff := cmp.Diff(tt.want[n.Role], got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", n.Name, diff)
				}
			}
		})
	}
}

func TestFatTreeK4Tables(t *testing.T) {
	tables := compute(t, newFatTree(t, 4), nil)
	want := map[string]*Table{
		"e0-0": {Switch: "e0-0", Uplinks: []int{2, 3}, Pointers: 8, ValidSets: []uint64{0b11}, Routes: []Route{
			noRoute("10.0.0.0/24"),
			local("10.0.0.1/32"),
			down("10.0.0.2/32", 0),
			down("10.0.0.3/32", 1),
			up("10.0.1.0/24", 1, 0),
			up("10.1.0.0/24", 2, 0),
			up("10.1.1.0/24", 3, 0),
			up("10.2.0.0/24", 4, 0),
			up("10.2.1.0/24", 5, 0),
			up("10.3.0.0/24", 6, 0),
			up("10.3.1.0/24", 7, 0),
		}},
		"a2-1": {Switch: "a2-1", Uplinks: []int{2, 3}, Pointers: 4, ValidSets: []uint64{0b11}, Routes: []Route{
			up("10.0.0.0/16", 0, 0),
			up("10.1.0.0/16", 1, 0),
			down("10.2.0.0/24", 0),
			down("10.2.1.0/24", 1),
			local("10.2.3.1/32"),
			up("10.3.0.0/16", 3, 0),
		}},
		"c1-0": {Switch: "c1-0", Routes: []Route{
			down("10.0.0.0/16", 0),
			down("10.1.0.0/16", 1),
			down("10.2.0.0/16", 2),
			down("10.3.0.0/16", 3),
			local("10.4.2.1/32"),
		}},
	}
	for name, w := range want {
		if diff := cmp.Diff(w, tables[name], netipEqual); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestFatTreeK8Spots(t *testing.T) {
	top := newFatTree(t, 8)
	tables := compute(t, top, nil)
	checks := [][2]string{
		{"e5-3", "10.5.3.4"}, {"e5-3", "10.5.2.2"}, {"e5-3", "10.7.0.5"}, {"e5-3", "10.5.3.1"},
		{"a5-2", "10.5.3.3"}, {"a5-2", "10.0.0.2"}, {"c2-3", "10.6.1.2"}, {"c2-3", "10.8.3.4"},
	}
	want := []string{
		"down h5-3-2", "up a5-0 a5-1 a5-2 a5-3", "up a5-0 a5-1 a5-2 a5-3", "local",
		"down e5-3", "up c2-0 c2-1 c2-2 c2-3", "down a6-2", "local",
	}
	var got []string
	for _, c := range checks {
		got = append(got, render(top, tables, c[0], c[1]))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if tb := tables["e5-3"]; tb.Routes[len(tb.Routes)-1] != up("10.7.3.0/24", 31, 0) {
		t.Errorf("e5-3 last route %+v", tb.Routes[len(tb.Routes)-1])
	}
}

func TestLeafSpineTables(t *testing.T) {
	tables := compute(t, newLeafSpine(t, 4, 2, 2), nil)
	want := map[string]*Table{
		"l1": {Switch: "l1", Uplinks: []int{2, 3}, Pointers: 4, ValidSets: []uint64{0b11}, Routes: []Route{
			up("10.0.0.0/24", 0, 0),
			noRoute("10.0.1.0/24"),
			local("10.0.1.1/32"),
			down("10.0.1.2/32", 0),
			down("10.0.1.3/32", 1),
			up("10.0.2.0/24", 2, 0),
			up("10.0.3.0/24", 3, 0),
		}},
		"s1": {Switch: "s1", Routes: []Route{
			down("10.0.0.0/24", 0),
			down("10.0.1.0/24", 1),
			down("10.0.2.0/24", 2),
			down("10.0.3.0/24", 3),
			local("10.1.2.1/32"),
		}},
	}
	for name, w := range want {
		if diff := cmp.Diff(w, tables[name], netipEqual); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestComputeErrors(t *testing.T) {
	top := newFatTree(t, 4)
	tests := []struct {
		name   string
		top    *topology.Topology
		failed map[int]bool
		want   string
	}{
		{"nil", nil, nil, "routing: nil topology"},
		{"negative link", top, map[int]bool{-1: true}, "routing: failed link -1 does not exist (fattree-k4 has links 0..47)"},
		{"link past end", top, map[int]bool{48: true}, "routing: failed link 48 does not exist (fattree-k4 has links 0..47)"},
		{"unknown kind", &topology.Topology{Kind: "ring"}, nil, `routing: unknown fabric kind "ring"`},
	}
	for _, tt := range tests {
		_, err := Compute(tt.top, tt.failed)
		if got := fmt.Sprint(err); got != tt.want {
			t.Errorf("%s: error %q, want %q", tt.name, got, tt.want)
		}
	}
	// A false entry is not a failure, even out of range.
	if _, err := Compute(top, map[int]bool{99: false}); err != nil {
		t.Errorf("false entry: %v", err)
	}
}
