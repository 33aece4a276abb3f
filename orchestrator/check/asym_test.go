package check

import (
	"math"
	"testing"
	"time"

	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// asymScenario mirrors oc-asymmetry-uplink.yaml: l0's uplink to s1 at a
// fifth of the rate, tornado traffic.
func asymScenario(t *testing.T) *scenario.Scenario {
	return parseScenario(t, "asym.yaml", `topology: {kind: leafspine, leaves: 4, spines: 4, hosts_per_leaf: 4, links: {rate: 400Mbit, mtu: 4200}}
links:
  - {from: l0, to: s1, rate: 80Mbit}
transport: rss+pfld
cc: mprdma
workload: {kind: tornado, size: 16MiB}
repetitions: 2
`)
}

// asymRun records l0's four flows to l3, 16 subflows each, starting four
// on each uplink; by moveBy tau every subflow on the slow uplink but one
// per flow has moved to uplink 0 (never, when moveBy is 0).
func asymRun(sc *scenario.Scenario, moveBy float64) func(*scenario.Cell, int) *RunData {
	return func(c *scenario.Cell, rep int) *RunData {
		top := c.Config.Topo()
		tau := c.Config.RSS.Tau
		at := func(taus float64) time.Duration { return time.Duration(taus * float64(tau)) }
		r := &RunData{Meta: &results.Run{CCT: at(100)}}
		for h := 0; h < 4; h++ {
			src := top.Hosts()[h].Name               // h0-0..h0-3 under l0
			dst := top.Hosts()[len(top.Hosts())-1-h] // their tornado peers under l3
			r.Rows.Flows = append(r.Rows.Flows, results.FlowRow{Src: src, Dst: dst.Name, Delivered: true, Done: at(100), FCT: at(100)})
			moved := 0
			for s := 0; s < 16; s++ {
				up := s % 4
				r.Rows.Subflows = append(r.Rows.Subflows, results.SubflowRow{Host: src, Peer: dst.Addr.String(), Flow: uint32(h), Subflow: s,
					At: at(0.1 * float64(s)), Uplink: up, Uplinks: 4, Reason: "initial"})
				if up == 1 && moveBy > 0 && moved < 3 {
					moved++
					r.Rows.Subflows = append(r.Rows.Subflows, results.SubflowRow{Host: src, Peer: dst.Addr.String(), Flow: uint32(h), Subflow: s,
						At: at(moveBy * float64(moved) / 3), Uplink: 0, Uplinks: 4, Reason: "reroute"})
				}
			}
		}
		// A flow between leaves without a slow path is not counted.
		r.Rows.Subflows = append(r.Rows.Subflows, results.SubflowRow{Host: top.Hosts()[4].Name, Peer: top.Hosts()[11].Addr.String(), Flow: 9, Uplink: 1, Uplinks: 4})
		return r
	}
}

func TestAsymmetry(t *testing.T) {
	sc := asymScenario(t)
	for _, tt := range []struct {
		name            string
		moveBy          float64
		wantShare, want Verdict
	}{
		{"converges in 6 tau", 6, Holds, Holds},
		// the last quarter's mean is 10 %: within 5 points, but reached late
		{"converges too late", 90, Holds, DoesNotHold},
		{"stays even", 0, DoesNotHold, DoesNotHold},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ev := evalAsymmetry(Inputs{asymUplink: recorded(sc, asymUplink, asymRun(sc, tt.moveBy))})
			share, conv := claimByID(t, ev.Claims, "uplink-share"), claimByID(t, ev.Claims, "uplink-converge")
			if math.Abs(share.PaperValue-6.25) > 1e-9 {
				t.Errorf("capacity share %v %%, want 6.25 (80 of 1280 Mbit/s)", share.PaperValue)
			}
			wantShare := tt.wantShare
			if share.Verdict != wantShare || conv.Verdict != tt.want {
				t.Errorf("share %s (%s), converge %s (%s); want %s, %s\n%s", share.Verdict, share.MeasuredText(), conv.Verdict, conv.MeasuredText(), wantShare, tt.want, share.Detail)
			}
			if c := claimByID(t, ev.Claims, "spines-share"); c.Verdict != NoData {
				t.Errorf("spines case without data: %s", c.Verdict)
			}
			if len(ev.Figures) != 1 {
				t.Errorf("%d figures", len(ev.Figures))
			}
		})
	}
}

// TestPathCapacities: capacities per uplink come from the scenario's
// links, the bottleneck of the way up and the way down.
func TestPathCapacities(t *testing.T) {
	top := parseScenario(t, "s.yaml", `topology: {kind: leafspine, leaves: 4, spines: 4, hosts_per_leaf: 4, links: {rate: 400Mbit}}
links:
  - {from: l0, to: s1, rate: 80Mbit}
  - {between: [l3, s3], rate: 100Mbit}
workload: {kind: tornado}
`).Cells[0].Config.Topo()
	got := pathCapacities(top, "h0-0", "h3-3")
	want := []float64{400e6, 80e6, 400e6, 100e6}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("capacities %v, want %v", got, want)
		}
	}
	if s := slowShare(got); math.Abs(s-180.0/980) > 1e-9 {
		t.Errorf("slow share %v", s)
	}
	if pathCapacities(top, "h0-0", "h0-1") != nil {
		t.Error("hosts under one leaf have paths")
	}
}
