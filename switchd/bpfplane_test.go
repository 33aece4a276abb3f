package switchd_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ftlab/ftlab/internal/bpffs"
	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/switchd"
	"github.com/ftlab/ftlab/switchd/routing"
)

type lab struct {
	topo    *topology.Topology
	name    func(string) string
	pinRoot string
	cfg     switchd.Config
}

func newLab(t *testing.T, file string, cfg switchd.Config) *lab {
	t.Helper()
	return newLabOf(t, testlab.Topology(t, file), cfg)
}

// newLabOf is newLab for a topology the caller may have edited.
func newLabOf(t *testing.T, topo *topology.Topology, cfg switchd.Config) *lab {
	t.Helper()
	l := &lab{topo: topo, name: testlab.Namer(testlab.Prefix(t)), pinRoot: filepath.Join(t.TempDir(), "bpf"), cfg: cfg.WithDefaults()}
	if err := l.cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := bpffs.Mount(l.pinRoot); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bpffs.Unmount(l.pinRoot) })
	if _, err := fabric.Build(context.Background(), topo, fabric.Options{Namespace: l.name}); err != nil {
		t.Fatal(err)
	}
	tables, err := routing.Compute(topo, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := switchd.InstallBPF(context.Background(), topo, l.cfg, tables, l.name, l.pinRoot); err != nil {
		t.Fatal(err)
	}
	t.Logf("data plane installed in %v", time.Since(start))
	return l
}

func (l *lab) pingAll(t *testing.T) *fabric.PingAllResult {
	t.Helper()
	res, err := fabric.PingAll(context.Background(), l.topo, l.name)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestPingAllEveryPolicy: every host reaches every other host through the
// eBPF switch with every policy, in both modes.
func TestPingAllEveryPolicy(t *testing.T) {
	testlab.RequireRoot(t)
	for _, mode := range []string{switchd.ModeLineRate, switchd.ModeShaped} {
		for _, policy := range switchd.PolicyNames() {
			if policy == "ar" && mode == switchd.ModeLineRate {
				continue // ar needs the link model
			}
			t.Run(fmt.Sprintf("%s/%s", mode, policy), func(t *testing.T) {
				l := newLab(t, "fattree-k4", switchd.Config{Mode: mode, EdgePolicy: policy, AggPolicy: policy, Seed: 1})
				res := l.pingAll(t)
				if res.OK != res.Total || res.Total != 16*15 {
					t.Errorf("pingall %d/%d; failed: %v", res.OK, res.Total, res.Failed())
				}
			})
		}
	}
}

// send sends n datagrams from host src to host dst on one socket: one
// 5-tuple, one flow.
func (l *lab) send(t *testing.T, src, dst string, n int) {
	t.Helper()
	s, _ := l.topo.Node(src)
	d, _ := l.topo.Node(dst)
	err := nsutil.DoNamed(l.name(src), func() error {
		// Unconnected: the destination's port-unreachable replies must
		// not fail the sends.
		c, err := net.ListenUDP("udp4", nil)
		if err != nil {
			return err
		}
		defer c.Close()
		to := net.UDPAddrFromAddrPort(netip.AddrPortFrom(d.Addr, 7777))
		buf := make([]byte, 200)
		for i := 0; i < n; i++ {
			if _, err := c.WriteToUDP(buf, to); err != nil {
				return err
			}
			if i%32 == 31 {
				time.Sleep(time.Millisecond) // stay below any queue limit
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("send from %s (%s): %v", src, s.Addr, err)
	}
	time.Sleep(50 * time.Millisecond)
}

// uplinkTx returns the packets each uplink of a switch sent.
func (l *lab) uplinkTx(t *testing.T, sw string) []uint64 {
	t.Helper()
	stats, err := l.control().Stats()
	if err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for _, p := range stats {
		if p.Switch == sw && strings.HasPrefix(p.Direction, "E->A") || p.Switch == sw && strings.HasPrefix(p.Direction, "A->C") {
			out = append(out, p.Counters.TxPackets)
		}
	}
	return out
}

func (l *lab) control() *switchd.Lab {
	return &switchd.Lab{Topo: l.topo, Config: l.cfg, Namespace: l.name, PinRoot: l.pinRoot}
}

// TestUplinkSpread sends one flow across pods and reads how the source
// edge and aggregation switches spread it over their uplinks: ECMP hashes
// the whole flow onto one uplink; RR and Ofan rotate packet by packet, so
// every uplink carries its share within one packet.
func TestUplinkSpread(t *testing.T) {
	testlab.RequireRoot(t)
	const n = 400
	for _, policy := range []string{"ecmp", "rr", "ofan", "pofan"} {
		t.Run(policy, func(t *testing.T) {
			l := newLab(t, "fattree-k4", switchd.Config{EdgePolicy: policy, AggPolicy: policy, Seed: 7})
			l.send(t, "h0-0-0", "h2-0-0", n)
			edge := l.uplinkTx(t, "e0-0")
			if len(edge) != 2 || edge[0]+edge[1] != n {
				t.Fatalf("e0-0 uplinks sent %v, want 2 uplinks carrying %d in all", edge, n)
			}
			if policy == "ecmp" {
				if edge[0] != n && edge[1] != n {
					t.Errorf("ecmp split one flow over both uplinks: %v", edge)
				}
				return
			}
			if d := int(edge[0]) - int(edge[1]); d < -1 || d > 1 {
				t.Errorf("%s: e0-0 uplinks %v, want an even split", policy, edge)
			}
			for _, agg := range []string{"a0-0", "a0-1"} {
				up := l.uplinkTx(t, agg)
				if d := int(up[0]) - int(up[1]); d < -1 || d > 1 {
					t.Errorf("%s: %s core uplinks %v, want an even split", policy, agg, up)
				}
			}
		})
	}
}

// TestLinkFailureReconverges fails an aggregation-core link in the eBPF
// switch: before reconvergence some pairs lose packets into the dead link
// (counted as link-down drops); after it every pair answers again; the
// repair restores the original routes.
func TestLinkFailureReconverges(t *testing.T) {
	testlab.RequireRoot(t)
	l := newLab(t, "fattree-k4", switchd.Config{EdgePolicy: "ecmp", AggPolicy: "ecmp", Seed: 3})
	ctl := l.control()
	link, _, _ := l.topo.LinkBetween("a0-0", "c0-0")
	if err := ctl.SetLinkUp(link, false); err != nil {
		t.Fatal(err)
	}
	if res := l.pingAll(t); res.OK == res.Total {
		t.Errorf("with %s failed and routes unchanged every pair answered", link.Name)
	}
	var linkDown uint64
	stats, err := ctl.Stats()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range stats {
		linkDown += p.Counters.DropLinkDown
	}
	if linkDown == 0 {
		t.Error("no link-down drops counted while the link was failed")
	}
	failed := map[int]bool{link.ID: true}
	if err := ctl.Reconverge(context.Background(), nil, failed); err != nil {
		t.Fatal(err)
	}
	if res := l.pingAll(t); res.OK != res.Total {
		t.Errorf("after reconvergence %d/%d; failed %v", res.OK, res.Total, res.Failed())
	}
	if err := ctl.SetLinkUp(link, true); err != nil {
		t.Fatal(err)
	}
	if err := ctl.Reconverge(context.Background(), failed, nil); err != nil {
		t.Fatal(err)
	}
	if res := l.pingAll(t); res.OK != res.Total {
		t.Errorf("after repair %d/%d", res.OK, res.Total)
	}
}
