package fabric

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/orchestrator/topology"
)

// BenchmarkUpDown measures a full build (namespaces, veths, addresses,
// routes, neighbours, sysctls, offloads) and its removal for k = 4, 8, 16,
// against a baseline measured in the same run: the bare kernel objects
// (the same namespaces and veth pairs, nothing configured) made one after
// another the straightforward way. Reported: seconds for each, and the
// ratios full/bare.
//
//	go test -run '^$' -bench UpDown -benchtime 1x ./orchestrator/fabric
func BenchmarkUpDown(b *testing.B) {
	testlab.RequireRoot(b)
	for _, k := range []int{4, 8, 16} {
		topo := testlab.Topology(b, fmt.Sprintf("fattree-k%d", k))
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			var up, down, bareUp, bareDown time.Duration
			for i := 0; i < b.N; i++ {
				prefix := testlab.Prefix(b)
				bu, bd := bareUpDown(b, topo, testlab.Namer(prefix))
				settle()
				prefix = testlab.Prefix(b)
				t0 := time.Now()
				if _, err := Build(context.Background(), topo, Options{Namespace: testlab.Namer(prefix)}); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := Remove(testlab.Remaining(b, prefix)); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				settle()
				up, down = up+t1.Sub(t0), down+t2.Sub(t1)
				bareUp, bareDown = bareUp+bu, bareDown+bd
			}
			n := float64(b.N)
			b.ReportMetric(up.Seconds()/n, "up-s")
			b.ReportMetric(down.Seconds()/n, "down-s")
			b.ReportMetric(bareUp.Seconds()/n, "bare-up-s")
			b.ReportMetric(bareDown.Seconds()/n, "bare-down-s")
			b.ReportMetric(up.Seconds()/bareUp.Seconds(), "up/bare")
			b.ReportMetric(down.Seconds()/bareDown.Seconds(), "down/bare")
		})
	}
}

// settle gives the kernel time to finish destroying removed namespaces in
// the background, so one measurement does not pay for the last.
func settle() { time.Sleep(2 * time.Second) }

// bareUpDown is the baseline: every namespace, then every veth pair, made
// sequentially with no configuration, then every namespace deleted.
func bareUpDown(b *testing.B, topo *topology.Topology, name func(string) string) (up, down time.Duration) {
	t0 := time.Now()
	handles := make(map[string]netns.NsHandle, len(topo.Nodes))
	defer func() {
		for _, h := range handles {
			h.Close()
		}
	}()
	for _, n := range topo.Nodes {
		h, err := nsutil.Create(name(n.Name), nil)
		if err != nil {
			b.Fatal(err)
		}
		handles[n.Name] = h
	}
	root, err := netlink.NewHandle()
	if err != nil {
		b.Fatal(err)
	}
	defer root.Close()
	for _, l := range topo.Links {
		veth := &netlink.Veth{
			LinkAttrs:     netlink.LinkAttrs{Name: l.A.Ifname, Namespace: netlink.NsFd(handles[l.A.Node]), Flags: net.FlagUp},
			PeerName:      l.B.Ifname,
			PeerNamespace: netlink.NsFd(handles[l.B.Node]),
		}
		if err := root.LinkAdd(veth); err != nil {
			b.Fatalf("bare veth %s: %v", l.Name, err)
		}
	}
	up = time.Since(t0)
	t1 := time.Now()
	for _, n := range topo.Nodes {
		if err := nsutil.Delete(name(n.Name)); err != nil {
			b.Fatal(err)
		}
	}
	return up, time.Since(t1)
}
