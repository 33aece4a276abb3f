package lab

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/ftlab/ftlab/internal/bpffs"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/switchd"
)

// newStore gives each test its own run directory and namespace prefix.
func newStore(t *testing.T) *Store {
	return &Store{Dir: t.TempDir(), Prefix: testlab.Prefix(t)}
}

func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"default", true}, {"k8_run2", true}, {"a", true},
		{"", false}, {"Demo", false}, {"my-lab", false}, {"1lab", false},
		{"../etc", false}, {"a/b", false}, {"abcdefghijklmnopq", false},
	} {
		if err := ValidateName(tc.name); (err == nil) != tc.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestLabOfNamespace(t *testing.T) {
	s := DefaultStore()
	for ns, want := range map[string]string{
		"ftlab-demo-h0-0-0": "demo", "ftlab-a-e1-1": "a", "ftlab-": "", "ftlab-Bad-x": "", "other-demo-x": "",
	} {
		got, ok := s.labOfNamespace(ns)
		if got != want || ok != (want != "") {
			t.Errorf("labOfNamespace(%q) = %q, %v; want %q", ns, got, ok, want)
		}
	}
}

func TestUpDown(t *testing.T) {
	testlab.RequireRoot(t)
	s := newStore(t)
	name := "demo"
	topo := testlab.Topology(t, "fattree-k4")
	st, err := s.Up(context.Background(), name, topo, UpOptions{TopologyFile: "fattree-k4.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if st.DataPlane.DataPlane != switchd.DataPlaneBPF || !bpffs.IsMounted(st.PinRoot) {
		t.Errorf("default data plane %q, pins at %s mounted=%v; want bpf pinned in the lab's bpffs",
			st.DataPlane.DataPlane, st.PinRoot, bpffs.IsMounted(st.PinRoot))
	}
	if st.Phase != PhaseUp || len(st.Namespaces) != 36 {
		t.Errorf("state = %s with %d namespaces, want up with 36", st.Phase, len(st.Namespaces))
	}
	got, err := s.Get(name)
	if err != nil || got.Phase != PhaseUp || got.Topology.K != 4 || len(got.Topology.Links) != 48 {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if _, err := s.Up(context.Background(), name, topo, UpOptions{DataPlane: switchd.Config{DataPlane: switchd.DataPlaneNone}}); !errors.Is(err, ErrExists) {
		t.Errorf("second Up: err = %v, want ErrExists", err)
	}
	if err := s.Down(name); err != nil {
		t.Fatal(err)
	}
	if left := testlab.Remaining(t, s.NamespacePrefix(name)); len(left) != 0 {
		t.Errorf("after Down: %v remain", left)
	}
	if bpffs.IsMounted(st.PinRoot) {
		t.Errorf("after Down: the lab's bpffs is still mounted at %s", st.PinRoot)
	}
	if _, err := os.Stat(s.labDir(name)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run directory still present: %v", err)
	}
	if err := s.Down(name); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Down: err = %v, want ErrNotFound", err)
	}
}

func TestTwoLabsSideBySide(t *testing.T) {
	testlab.RequireRoot(t)
	s := newStore(t)
	topo := testlab.Topology(t, "fattree-k4")
	a, b := "one", "two"
	for _, n := range []string{a, b} {
		if _, err := s.Up(context.Background(), n, topo, UpOptions{DataPlane: switchd.Config{DataPlane: switchd.DataPlaneNone}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Down(a); err != nil {
		t.Fatal(err)
	}
	if got := len(testlab.Remaining(t, s.NamespacePrefix(b))); got != len(topo.Nodes) {
		t.Errorf("down of %s left %s with %d namespaces, want %d", a, b, got, len(topo.Nodes))
	}
	if err := s.Down(b); err != nil {
		t.Fatal(err)
	}
}

func TestUpRefusesBusyAndLeftover(t *testing.T) {
	testlab.RequireRoot(t)
	s := newStore(t)
	name := "demo"
	// A record left by an up that was killed mid-build.
	if err := s.claim(name); err != nil {
		t.Fatal(err)
	}
	if err := s.write(&State{Name: name, Phase: PhaseBuilding}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Up(context.Background(), name, testlab.Topology(t, "fattree-k4"), UpOptions{DataPlane: switchd.Config{DataPlane: switchd.DataPlaneNone}})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("Up over leftover: err = %v, want ErrExists", err)
	}
	t.Log(err)
}

// TestUpReclaimsLeftovers: with Reclaim, Up removes a leftover of its
// name as Cleanup would (a killed run's lab, whose owner is gone; a build
// killed midway) and builds in its place, saying what it removed; a lab
// that is up for a user or a live owner, and a record it cannot read, are
// left alone and Up fails with ErrExists.
func TestUpReclaimsLeftovers(t *testing.T) {
	testlab.RequireRoot(t)
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	gone := Owner{PID: self.PID, Start: self.Start + 1} // this PID, another process
	topo := testlab.Topology(t, "fattree-k4")
	for _, tt := range []struct {
		name    string
		left    *State // nil: a directory without a record
		reclaim bool
	}{
		{"owner gone", &State{Phase: PhaseUp, Owner: &gone}, true},
		{"killed mid-build", &State{Phase: PhaseBuilding, PID: gone.PID}, true},
		{"up for a user", &State{Phase: PhaseUp}, false},
		{"up for a live owner", &State{Phase: PhaseUp, Owner: &self}, false},
		{"no record", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			name := "run"
			ns := s.NamespaceName(name, "h0-0-0")
			if err := s.claim(name); err != nil {
				t.Fatal(err)
			}
			if tt.left != nil {
				tt.left.Name, tt.left.Namespaces, tt.left.Topology = name, []string{ns}, topo
				if err := s.write(tt.left); err != nil {
					t.Fatal(err)
				}
			}
			h, err := nsutil.Create(ns, nil)
			if err != nil {
				t.Fatal(err)
			}
			h.Close()
			t.Cleanup(func() { _, _ = s.Cleanup(true) })

			var told []CleanupAction
			st, err := s.Up(context.Background(), name, topo, UpOptions{
				DataPlane: switchd.Config{DataPlane: switchd.DataPlaneNone}, Owned: true,
				Reclaim: true, Reclaimed: func(a CleanupAction) { told = append(told, a) },
			})
			if !tt.reclaim {
				if !errors.Is(err, ErrExists) || len(told) != 0 {
					t.Fatalf("Up over %s: err %v, told %+v; want ErrExists and nothing removed", tt.name, err, told)
				}
				if !nsutil.Exists(ns) {
					t.Errorf("Up removed %s of a lab that is not a leftover", ns)
				}
				return
			}
			if err != nil {
				t.Fatalf("Up over %s: %v", tt.name, err)
			}
			if len(told) != 1 || !told[0].Removed || told[0].Lab != name || len(told[0].Namespaces) != 1 {
				t.Errorf("told %+v; want the leftover lab %s with its 1 namespace, removed", told, name)
			}
			if st.Owner == nil || !st.Owner.Alive() {
				t.Errorf("the new lab's owner is %+v, want this process", st.Owner)
			}
			if got := len(testlab.Remaining(t, s.NamespacePrefix(name))); got != len(topo.Nodes) {
				t.Errorf("%d namespaces after Up, want the new lab's %d", got, len(topo.Nodes))
			}
		})
	}
}

// TestCleanup simulates an ftlab killed mid-build (a record in phase
// building, a few namespaces) and an orphan namespace without a record, next
// to a lab that is up and a namespace that is not ftlab's.
func TestCleanup(t *testing.T) {
	testlab.RequireRoot(t)
	s := newStore(t)
	topo := testlab.Topology(t, "fattree-k4")
	up, crashed, orphan := "running", "crashed", "orphan"
	if _, err := s.Up(context.Background(), up, topo, UpOptions{DataPlane: switchd.Config{DataPlane: switchd.DataPlaneNone}}); err != nil {
		t.Fatal(err)
	}
	if err := s.claim(crashed); err != nil {
		t.Fatal(err)
	}
	if err := s.write(&State{Name: crashed, Phase: PhaseBuilding, Namespaces: []string{s.NamespaceName(crashed, "h0-0-0")}}); err != nil {
		t.Fatal(err)
	}
	// Same lab and node names under another prefix: not this store's.
	foreign := testlab.Prefix(t) + "crashed-h0-0-0"
	for _, ns := range []string{s.NamespaceName(crashed, "h0-0-0"), s.NamespaceName(crashed, "e0-0"), s.NamespaceName(orphan, "c0-0"), foreign} {
		h, err := nsutil.Create(ns, nil)
		if err != nil {
			t.Fatal(err)
		}
		h.Close()
	}

	actions, err := s.Cleanup(false)
	if err != nil {
		t.Fatal(err)
	}
	removed := map[string]bool{}
	for _, a := range actions {
		removed[a.Lab] = a.Removed
	}
	if !removed[crashed] || !removed[orphan] || removed[up] {
		t.Errorf("cleanup actions = %+v; want %s and %s removed, %s kept", actions, crashed, orphan, up)
	}
	for _, n := range []string{crashed, orphan} {
		if left := testlab.Remaining(t, s.NamespacePrefix(n)); len(left) != 0 {
			t.Errorf("lab %s: %v remain", n, left)
		}
	}
	if got := len(testlab.Remaining(t, s.NamespacePrefix(up))); got != len(topo.Nodes) {
		t.Errorf("cleanup touched lab that is up: %d namespaces left, want %d", got, len(topo.Nodes))
	}
	if !nsutil.Exists(foreign) {
		t.Errorf("cleanup removed %s, which is not ftlab's", foreign)
	}
	if _, err := s.Cleanup(true); err != nil {
		t.Fatal(err)
	}
	if left := testlab.Remaining(t, s.NamespacePrefix(up)); len(left) != 0 {
		t.Errorf("cleanup --all left %v", left)
	}
}
