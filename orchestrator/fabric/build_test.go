package fabric

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/ftlab/ftlab/internal/ethtool"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
)

func build(t *testing.T, topo *topology.Topology) (prefix string) {
	t.Helper()
	prefix = testlab.Prefix(t)
	if _, err := Build(context.Background(), topo, Options{Namespace: testlab.Namer(prefix)}); err != nil {
		t.Fatalf("Build: %v", err)
	}
	return prefix
}

func TestBuildEveryLinkCarriesPackets(t *testing.T) {
	testlab.RequireRoot(t)
	for _, name := range []string{"fattree-k4", "leafspine-4x2"} {
		t.Run(name, func(t *testing.T) {
			topo := testlab.Topology(t, name)
			prefix := build(t, topo)
			if got := len(testlab.Remaining(t, prefix)); got != len(topo.Nodes) {
				t.Errorf("namespaces = %d, want %d", got, len(topo.Nodes))
			}
			live := Inspect(context.Background(), topo, testlab.Namer(prefix), 0)
			for _, l := range topo.Links {
				for _, ep := range []topology.Endpoint{l.A, l.B} {
					i := live[ep.Node].Interfaces[ep.Ifname]
					if !i.Up() || i.MAC != ep.MAC.String() || i.MTU != l.MTU {
						t.Errorf("%s: %s/%s = %+v, want up, mac %s, mtu %d", l.Name, ep.Node, ep.Ifname, i, ep.MAC, l.MTU)
					}
				}
			}
			results := ProbeLinks(context.Background(), topo, testlab.Namer(prefix), 0)
			if len(results) != 2*len(topo.Links) {
				t.Fatalf("probes = %d, want %d", len(results), 2*len(topo.Links))
			}
			for _, r := range results {
				if !r.OK {
					t.Errorf("probe %s %s->%s: %s", r.Link, r.From, r.To, r.Error)
				}
			}
			if err := Remove(testlab.Remaining(t, prefix)); err != nil {
				t.Fatal(err)
			}
			if left := testlab.Remaining(t, prefix); len(left) != 0 {
				t.Errorf("after Remove: %v remain", left)
			}
		})
	}
}

// TestHostSettings checks the per-namespace kernel settings the data plane
// relies on, read back from the kernel.
func TestHostSettings(t *testing.T) {
	testlab.RequireRoot(t)
	topo := testlab.Topology(t, "fattree-k4")
	prefix := build(t, topo)
	host := topo.Hosts()[5]
	edge := topo.Peer(host.Ports[0])
	edgeNode, _ := topo.Node(edge.Node)
	err := nsutil.DoNamed(testlab.Namer(prefix)(host.Name), func() error {
		ifname := topo.Links[host.Ports[0].Link].End(host.Ports[0].Side).Ifname
		if on, err := ethtool.TxChecksum(ifname); err != nil || on {
			t.Errorf("tx checksum offload on=%v err=%v, want off", on, err)
		}
		if on, err := ethtool.GRO(ifname); err != nil || !on {
			t.Errorf("gro on=%v err=%v, want on", on, err)
		}
		for _, key := range []string{"net/ipv6/conf/all/disable_ipv6", "net/ipv6/conf/" + ifname + "/disable_ipv6"} {
			if b, err := os.ReadFile(filepath.Join("/proc/sys", key)); err != nil || strings.TrimSpace(string(b)) != "1" {
				t.Errorf("%s = %q (%v), want 1", key, b, err)
			}
		}
		// One queue each way: an emulated link is one FIFO (see build.go).
		if l, err := netlink.LinkByName(ifname); err != nil || l.Attrs().NumTxQueues != 1 || l.Attrs().NumRxQueues != 1 {
			t.Errorf("%s: %v, want one tx and one rx queue (err %v)", ifname, l, err)
		}
		routes, err := netlink.RouteGet(net.ParseIP("10.3.1.2"))
		if err != nil {
			return err
		}
		if len(routes) != 1 || !routes[0].Gw.Equal(edgeNode.Addr.AsSlice()) {
			t.Errorf("route to a far host = %+v, want via %s", routes, edgeNode.Addr)
		}
		neighs, err := netlink.NeighList(0, netlink.FAMILY_V4)
		if err != nil {
			return err
		}
		found := false
		for _, n := range neighs {
			if n.IP.Equal(edgeNode.Addr.AsSlice()) {
				found = n.State == netlink.NUD_PERMANENT && n.HardwareAddr.String() == edge.MAC.String()
			}
		}
		if !found {
			t.Errorf("no permanent neighbour %s -> %s in %v", edgeNode.Addr, edge.MAC, neighs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestBuildRollsBack injects a failure into each pass and checks that the
// failed build leaves no namespace behind.
func TestBuildRollsBack(t *testing.T) {
	testlab.RequireRoot(t)
	topo := testlab.Topology(t, "fattree-k4")
	for _, s := range []stage{stageNamespaces, stageLinks, stageConfig} {
		t.Run(string(s), func(t *testing.T) {
			prefix := testlab.Prefix(t)
			var n atomic.Int32
			injected := errors.New("injected failure")
			testHookBeforeNode = func(got stage, node string) error {
				if got == s && n.Add(1) == 7 {
					return fmt.Errorf("node %s: %w", node, injected)
				}
				return nil
			}
			t.Cleanup(func() { testHookBeforeNode = nil })
			_, err := Build(context.Background(), topo, Options{Namespace: testlab.Namer(prefix)})
			if !errors.Is(err, injected) {
				t.Fatalf("Build error = %v, want the injected failure", err)
			}
			if !strings.Contains(err.Error(), string(s)) {
				t.Errorf("error %q does not name the pass %q", err, s)
			}
			if left := testlab.Remaining(t, prefix); len(left) != 0 {
				t.Errorf("after failed build: %d namespaces remain: %v", len(left), left)
			}
		})
	}
}

func TestBuildCancelled(t *testing.T) {
	testlab.RequireRoot(t)
	topo := testlab.Topology(t, "fattree-k4")
	prefix := testlab.Prefix(t)
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	testHookBeforeNode = func(s stage, _ string) error {
		if s == stageLinks && n.Add(1) == 3 {
			cancel()
		}
		return nil
	}
	t.Cleanup(func() { testHookBeforeNode = nil })
	if _, err := Build(ctx, topo, Options{Namespace: testlab.Namer(prefix)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Build error = %v, want context.Canceled", err)
	}
	if left := testlab.Remaining(t, prefix); len(left) != 0 {
		t.Errorf("after cancelled build: %v remain", left)
	}
}

func TestRemoveIsIdempotent(t *testing.T) {
	testlab.RequireRoot(t)
	topo := testlab.Topology(t, "fattree-k4")
	prefix := build(t, topo)
	names := testlab.Remaining(t, prefix)
	for i := 0; i < 2; i++ {
		if err := Remove(names); err != nil {
			t.Fatalf("Remove #%d: %v", i+1, err)
		}
	}
}
