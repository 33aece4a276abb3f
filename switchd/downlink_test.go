package switchd_test

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/testlab"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd"
)

// Stages of a fat tree by the direction label of their egress ports.
var (
	uplinkStages   = []string{"E->A", "A->C"}
	downlinkStages = []string{"C->A", "A->E"}
)

// TestOfanDownlinkBalance runs a permutation-like all-to-many load across
// the pods of a k=4 fat tree in line-rate mode, once with ECMP and once
// with Ofan, and compares how evenly each stage's links carry it.
//
// Host i (pod p, index x among the pod's (k/2)^2 hosts) sends N packets on
// one flow (one socket, fixed ports) to host (p+s mod k, x+s mod (k/2)^2)
// for s = 1..k-1: one destination in every other pod, every host receives
// k-1 flows, every core link to a pod has the same ideal load. ECMP hashes
// each flow onto one path, so links carry whole flows and hash collisions
// overload some (Ofan paper, Fig. 3); Ofan spreads every destination's
// packets round robin at the edge and aggregation layers, so every link of
// a stage carries its share, downlinks included. Seeds and source ports
// are fixed: the outcome is deterministic.
func TestOfanDownlinkBalance(t *testing.T) {
	testlab.RequireRoot(t)
	const k, n, seed = 4, 240, 11
	balance := map[string]map[string]float64{}
	for _, policy := range []string{"ecmp", "ofan"} {
		t.Run(policy, func(t *testing.T) {
			balance[policy] = runAllToMany(t, k, n, switchd.Config{Mode: switchd.ModeLineRate, EdgePolicy: policy, AggPolicy: policy, Seed: seed})
		})
	}
	if t.Failed() || len(balance) != 2 {
		return
	}
	ecmp, ofan := balance["ecmp"], balance["ofan"]
	for _, stage := range append(slices.Clone(uplinkStages), downlinkStages...) {
		t.Logf("%s: max/mean per-port packets: ecmp %.3f, ofan %.3f", stage, ecmp[stage], ofan[stage])
		if ofan[stage] > 1.1 {
			t.Errorf("%s: ofan max/mean %.3f, want <= 1.1", stage, ofan[stage])
		}
		if ecmp[stage] < ofan[stage]+0.2 {
			t.Errorf("%s: ecmp max/mean %.3f is not clearly worse than ofan's %.3f", stage, ecmp[stage], ofan[stage])
		}
	}
}

// runAllToMany builds the lab, sends the load and returns max/mean of the
// per-port tx packet counts for every stage.
func runAllToMany(t *testing.T, k, n int, cfg switchd.Config) map[string]float64 {
	t.Helper()
	topo, err := topology.NewFatTree(k)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	l := buildLab(t, topo, cfg)
	built := time.Since(start)
	hosts := topo.Hosts()
	ctr := newRxCounter(t)
	for _, h := range hosts {
		ctr.attach(t, l, h.Name)
	}

	per := (k / 2) * (k / 2) // hosts per pod
	flows := 0
	start = time.Now()
	for i, h := range hosts {
		pod, x := i/per, i%per
		var dsts []netip.Addr
		for s := 1; s < k; s++ {
			dsts = append(dsts, hosts[((pod+s)%k)*per+(x+s)%per].Addr)
		}
		sendFlows(t, l, h, uint16(30000+i), dsts, n)
		flows += len(dsts)
	}
	sent := flows * n
	var got rxCount
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got = ctr.read(t); got.Packets >= uint64(sent) {
			break
		}
	}
	t.Logf("k=%d, %s: lab up in %v; %d flows x %d packets sent in %v, %d delivered",
		k, cfg.EdgePolicy, built.Round(time.Millisecond), flows, n, time.Since(start).Round(time.Millisecond), got.Packets)
	if got.Packets != uint64(sent) {
		t.Errorf("delivered %d of %d packets", got.Packets, sent)
	}

	stats, err := l.control().Stats()
	if err != nil {
		t.Fatal(err)
	}
	byStage := map[string][]uint64{}
	for _, p := range stats {
		byStage[p.Direction] = append(byStage[p.Direction], p.Counters.TxPackets)
	}
	out := map[string]float64{}
	for _, stage := range append(slices.Clone(uplinkStages), downlinkStages...) {
		tx := byStage[stage]
		var sum, hi uint64
		for _, v := range tx {
			sum += v
			hi = max(hi, v)
		}
		if sum == 0 {
			t.Fatalf("%s: no traffic on any port", stage)
		}
		mean := float64(sum) / float64(len(tx))
		out[stage] = float64(hi) / mean
		t.Logf("%s %d ports, mean %.0f, max/mean %.3f: %s", stage, len(tx), mean, out[stage], counts(tx))
	}
	return out
}

// sendFlows sends n datagrams from host h, bound to sport, to each of dsts
// (one flow per destination), interleaving the flows packet by packet and
// pausing after every 32 packets so no receive ring overflows.
func sendFlows(t *testing.T, l *lab, h *topology.Node, sport uint16, dsts []netip.Addr, n int) {
	t.Helper()
	err := nsutil.DoNamed(l.name(h.Name), func() error {
		c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(h.Addr, sport)))
		if err != nil {
			return err
		}
		defer c.Close()
		buf := make([]byte, 200) // data class: above the ACK threshold
		sent := 0
		for i := 0; i < n; i++ {
			for _, d := range dsts {
				if _, err := c.WriteToUDPAddrPort(buf, netip.AddrPortFrom(d, 7777)); err != nil {
					return err
				}
				if sent++; sent%32 == 0 {
					time.Sleep(200 * time.Microsecond)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("send from %s: %v", h.Name, err)
	}
}

func counts(v []uint64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, " ")
}
