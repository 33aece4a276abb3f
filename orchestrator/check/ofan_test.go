package check

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ftlab/ftlab/orchestrator/fidelity"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
	"github.com/ftlab/ftlab/orchestrator/workload"
)

const ofanFabric = `topology: {kind: fattree, k: 4, links: {mtu: 4200, buffer: 8MiB, ecn: 80KB}}
`

// queueRows are one run's ports: four per fabric stage, the first with
// the largest backlog and busiest by share.
func queueRows(backlog uint64, share float64) []results.LinkRow {
	var rows []results.LinkRow
	for _, d := range FabricStages {
		for i := 0; i < 4; i++ {
			r := results.LinkRow{Direction: d, TxPackets: 1000, MaxBacklog: backlog / 2}
			if i == 0 {
				r.MaxBacklog = backlog
				r.TxPackets = uint64(3000 * share / (4 - share)) // share x the mean of the four
			}
			rows = append(rows, r)
		}
	}
	return rows
}

func ofanQueueData(t *testing.T, backlog func(policy string, size uint64) uint64, ofanShare float64) *Data {
	return ofanQueueSeeds(t, 1, backlog, ofanShare, nil)
}

// ofanQueueSeeds is ofanQueueData with seeds repetitions, the runs that
// verdict names (policy, size, repetition) judged by it.
func ofanQueueSeeds(t *testing.T, seeds int, backlog func(policy string, size uint64) uint64, ofanShare float64,
	verdict func(policy string, size uint64, rep int) fidelity.Verdict) *Data {
	sc := parseScenario(t, ofanQueues, ofanFabric+fmt.Sprintf(`transport: ecmp
pofan: {pipe: 2}
workload: {kind: permutation, inter_pod: true}
ar: {quantum: 80KB}
repetitions: %d
compare:
  policy: [ecmp, random, ar, pofan, ofan]
  workload.size: [64KiB, 1MiB, 4MiB]
`, seeds))
	return recorded(sc, ofanQueues, func(c *scenario.Cell, rep int) *RunData {
		p := string(c.Config.Policy.Edge())
		share := 1.4
		if p == "ofan" {
			share = ofanShare
		}
		r := runWith(nil, nil)
		r.Rows.Links = queueRows(backlog(p, c.Config.Workload.Size.Max), share)
		if verdict != nil {
			r.Meta.Fidelity = &fidelity.Report{Verdict: verdict(p, c.Config.Workload.Size.Max, rep)}
		}
		return r
	})
}

// TestOfanQueuesLeaveOutSeeds: the queue claims compare every policy at
// both sizes; a seed with one run that is not OK is left out of all of
// them, and the claims are judged on the rest while enough remain.
func TestOfanQueuesLeaveOutSeeds(t *testing.T) {
	backlog := func(p string, size uint64) uint64 {
		if p == "ofan" || p == "pofan" {
			return 20_000
		}
		return size / 64
	}
	warnIn := func(seeds ...int) func(string, uint64, int) fidelity.Verdict {
		return func(p string, size uint64, rep int) fidelity.Verdict {
			if p == "ofan" && size == 64<<10 && slices.Contains(seeds, rep) {
				return fidelity.WARN
			}
			return fidelity.OK
		}
	}
	ids := []string{"queues-flat", "queues-grow", "downlinks-balanced"}
	for _, tt := range []struct {
		name string
		warn []int
		want Verdict
	}{
		{"every seed OK", nil, Holds},
		{"one seed of four left out", []int{2}, Holds},
		{"two of four: too few left", []int{0, 3}, Inconclusive},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var tables strings.Builder
			claims := ofanQueueClaims(ofanQueueSeeds(t, 4, backlog, 1.02, warnIn(tt.warn...)), &tables)
			want := map[string]Verdict{}
			for _, id := range ids {
				want[id] = tt.want
			}
			wantVerdicts(t, claims, want)
			if len(tt.warn) == 1 && !strings.Contains(claimByID(t, claims, "queues-flat").Detail, "judged on the 3 of 4 seeds") {
				t.Errorf("detail does not say which seeds were judged: %s", claimByID(t, claims, "queues-flat").Detail)
			}
		})
	}
}

func ofanCCData(t *testing.T, increase func(scheme, cc string) float64) (*Data, *Data) {
	run := func(scheme string) func(*scenario.Cell, int) *RunData {
		return func(c *scenario.Cell, rep int) *RunData {
			s := scheme
			if s == "" {
				s = string(c.Config.Policy.Edge())
			}
			bound := time.Second
			r := runWith(nil, nil)
			r.Meta.Bound = &workload.Bound{CCT: bound}
			r.Meta.CCT = time.Duration(float64(bound) * (1 + increase(s, string(c.Config.CC)) + 0.001*float64(rep)))
			return r
		}
	}
	cc := parseScenario(t, ofanCC, ofanFabric+"pofan: {pipe: 2}\nworkload: {kind: permutation, inter_pod: true, size: 4MB}\ntransport: ecmp\nar: {quantum: 80KB}\nrepetitions: 3\ncompare:\n  policy: [ofan, pofan, ar]\n  cc: [dctcp, nscc, swift]\n")
	reps := parseScenario(t, ofanREPS, ofanFabric+"workload: {kind: permutation, inter_pod: true, size: 4MB}\ntransport: reps\nrepetitions: 3\ncompare:\n  cc: [dctcp, nscc, swift]\n")
	return recorded(cc, ofanCC, run("")), recorded(reps, ofanREPS, run("reps"))
}

func TestOfanHolds(t *testing.T) {
	q := ofanQueueData(t, func(p string, size uint64) uint64 {
		if p == "ofan" || p == "pofan" {
			return 20_000 // flat
		}
		return size / 64 // grows with the message
	}, 1.02)
	cc, reps := ofanCCData(t, func(s, a string) float64 {
		switch {
		case s == "ofan" || s == "pofan":
			return 0.01
		case a == "dctcp":
			return 2.5 // 3.5x Ofan's CCT
		}
		return 0.15
	})
	ev := evalOfan(Inputs{ofanQueues: q, ofanCC: cc, ofanREPS: reps})
	want := map[string]Verdict{}
	for _, c := range ev.Claims {
		want[c.ID] = Holds
	}
	wantVerdicts(t, ev.Claims, want)
	if len(ev.Claims) != 7 || len(ev.Figures) != 2 {
		t.Errorf("%d claims, %d figures; want 7 and 2", len(ev.Claims), len(ev.Figures))
	}
	if g := claimByID(t, ev.Claims, "queues-grow"); g.PaperValue != 8 {
		t.Errorf("the paper's growth from 64 KiB to 4 MiB is sqrt(64) = 8; got %v", g.PaperValue)
	}
}

func TestOfanDoesNotHold(t *testing.T) {
	q := ofanQueueData(t, func(p string, size uint64) uint64 {
		if p == "random" {
			return 30_000 // flat: random spraying did not grow
		}
		return size / 64 // Ofan grew too
	}, 1.5)
	cc, reps := ofanCCData(t, func(s, a string) float64 {
		switch {
		case s == "ofan" || s == "pofan":
			return 0.3 // a large increase even for Ofan
		case s == "reps" && a == "nscc":
			return 0.2 // REPS faster than Ofan under NSCC
		}
		return 0.4
	})
	ev := evalOfan(Inputs{ofanQueues: q, ofanCC: cc, ofanREPS: reps})
	wantVerdicts(t, ev.Claims, map[string]Verdict{"queues-flat": DoesNotHold, "queues-grow": DoesNotHold, "downlinks-balanced": DoesNotHold,
		"dctcp-ofan-small": DoesNotHold, "dctcp-spray-severalfold": DoesNotHold, "nscc-ofan-favoured": DoesNotHold, "swift-ofan-favoured": Holds})
	// Without the REPS scenario (--quick) its claims have no data.
	wantVerdicts(t, evalOfan(Inputs{ofanQueues: q, ofanCC: cc}).Claims, map[string]Verdict{"dctcp-spray-severalfold": NoData, "dctcp-ofan-small": DoesNotHold})
}
