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
)

// ocScenario mirrors oc-incast.yaml / oc-tornado.yaml's compared keys on
// a fabric without delays.
func ocScenario(t *testing.T, workload string) *scenario.Scenario {
	return ocScenarioN(t, workload, 2)
}

func ocScenarioN(t *testing.T, workload string, seeds int) *scenario.Scenario {
	return parseScenario(t, "oc.yaml", `topology: {kind: leafspine, leaves: 4, spines: 4, hosts_per_leaf: 4, links: {mtu: 4200}}
cc: mprdma
workload: `+workload+`
repetitions: `+fmt.Sprint(seeds)+`
compare:
  trimming: [false, true]
  faults:
    - []
    - [{kind: corrupt, stage: leaf-spine, drop: 1e-3}]
  transport: [ecmp, plb, rps, reps, rss, rss+rack, rss+pfld]
`)
}

// ocBehaviour is what each scheme does in a recorded run: its tail FCT,
// RTOs, retransmissions and spurious ones, and the DATA copies lost.
type ocBehaviour struct {
	tail                 time.Duration
	rtos, retx, spurious int
	lost                 uint64
	verdict              fidelity.Verdict
}

func ocData(t *testing.T, file, workload string, flows int, of func(transport string, corrupt bool) ocBehaviour) *Data {
	return ocDataN(t, file, workload, 2, flows, of)
}

func ocDataN(t *testing.T, file, workload string, seeds, flows int, of func(transport string, corrupt bool) ocBehaviour) *Data {
	return recorded(ocScenarioN(t, workload, seeds), file, func(c *scenario.Cell, rep int) *RunData {
		b := of(string(c.Config.Transport), corruption(c.Config) > 0)
		pc := &results.PacketCounts{DataSent: 1000 + b.lost, DataReceived: 1000}
		r := runWith(flowsWith(flows, 800*time.Millisecond, b.tail, b.rtos, b.retx, b.spurious), pc)
		if b.verdict != "" {
			r.Meta.Fidelity = &fidelity.Report{Verdict: b.verdict}
		}
		return r
	})
}

// ocHolding is what each scheme does when every claim holds: with
// corruption, RSS+PFLD's tail a third of ECMP's, 1 RTO against 40,
// exactly the lost packets resent; RACK-TLP resending delivered ones.
func ocHolding(transport string, corrupt bool) ocBehaviour {
	b := ocBehaviour{tail: 900 * time.Millisecond}
	if !corrupt {
		return b
	}
	switch transport {
	case "ecmp":
		b = ocBehaviour{tail: 3 * time.Second, rtos: 40, retx: 12, lost: 12}
	case "rss+pfld":
		b = ocBehaviour{tail: time.Second, rtos: 1, retx: 12, lost: 12}
	case "rss+rack":
		b = ocBehaviour{tail: 1500 * time.Millisecond, rtos: 2, retx: 30, spurious: 18, lost: 12}
	}
	return b
}

func TestOrderedChaosHolds(t *testing.T) {
	good := ocHolding
	in := Inputs{ocIncast: ocData(t, ocIncast, "{kind: incast, senders: 8}", 52, good), ocTornado: ocData(t, ocTornado, "{kind: tornado}", 56, good)}
	ev := evalOrderedChaos(in)
	want := map[string]Verdict{}
	for _, c := range ev.Claims {
		want[c.ID] = Holds
	}
	wantVerdicts(t, ev.Claims, want)
	if len(ev.Claims) != 9 {
		t.Errorf("%d claims, want 9 (3 p99; RTOs, exactness and RACK for each workload)", len(ev.Claims))
	}
	p99 := claimByID(t, ev.Claims, "incast-p99-notrim")
	if p99.Measured != 1.0/3 || p99.PaperValue != 0.5 {
		t.Errorf("incast p99 ratio %v (paper %v), want 1/3 of ECMP's", p99.Measured, p99.PaperValue)
	}
	if len(ev.Figures) != 2 || ev.Tables == "" {
		t.Errorf("%d figures, tables %d bytes", len(ev.Figures), len(ev.Tables))
	}
}

func TestOrderedChaosDoesNotHold(t *testing.T) {
	bad := func(transport string, corrupt bool) ocBehaviour {
		b := ocBehaviour{tail: 900 * time.Millisecond}
		if !corrupt {
			return b
		}
		switch transport {
		case "ecmp":
			b = ocBehaviour{tail: 2 * time.Second, rtos: 40, retx: 12, lost: 12}
		case "rss+pfld": // barely faster, RTOs a quarter of ECMP's, resending what arrived
			b = ocBehaviour{tail: 1800 * time.Millisecond, rtos: 10, retx: 14, spurious: 2, lost: 12}
		case "rss+rack":
			b = ocBehaviour{tail: 1800 * time.Millisecond, retx: 12, lost: 12}
		}
		return b
	}
	in := Inputs{ocIncast: ocData(t, ocIncast, "{kind: incast, senders: 8}", 52, bad), ocTornado: ocData(t, ocTornado, "{kind: tornado}", 56, bad)}
	ev := evalOrderedChaos(in)
	want := map[string]Verdict{}
	for _, c := range ev.Claims {
		want[c.ID] = DoesNotHold
	}
	wantVerdicts(t, ev.Claims, want)
}

// TestOrderedChaosInconclusive: numbers that hold on a WARN run, too few
// flows for a p99, a run that timed out, and a missing scheme.
func TestOrderedChaosInconclusive(t *testing.T) {
	of := func(verdict fidelity.Verdict) func(string, bool) ocBehaviour {
		return func(transport string, corrupt bool) ocBehaviour {
			b := ocBehaviour{tail: 900 * time.Millisecond, verdict: verdict}
			if corrupt && transport == "ecmp" {
				b.tail, b.rtos, b.retx, b.lost = 3*time.Second, 40, 12, 12
			}
			return b
		}
	}
	ev := evalOrderedChaos(Inputs{ocIncast: ocData(t, ocIncast, "{kind: incast, senders: 8}", 52, of(fidelity.WARN))})
	wantVerdicts(t, ev.Claims, map[string]Verdict{"incast-p99-notrim": Inconclusive, "incast-rtos": Inconclusive, "tornado-rtos": NoData})

	few := evalOrderedChaos(Inputs{ocIncast: ocData(t, ocIncast, "{kind: incast, senders: 8}", 8, of(fidelity.OK))})
	wantVerdicts(t, few.Claims, map[string]Verdict{"incast-p99-notrim": Inconclusive, "incast-rtos": Holds})

	d := ocData(t, ocIncast, "{kind: incast, senders: 8}", 52, of(fidelity.OK))
	for i := range d.Runs {
		if d.Runs[i].Meta.Cell == d.ocCell(ocCond{false, true}, "rss+pfld").Cell.Name && d.Runs[i].Meta.Repetition == 1 {
			d.Runs[i].Meta.Status = results.StatusTimeout
			d.Runs[i].Rows.Flows[3].Delivered = false
		}
	}
	wantVerdicts(t, evalOrderedChaos(Inputs{ocIncast: d}).Claims, map[string]Verdict{"incast-p99-notrim": Inconclusive, "incast-p99-trim": Holds})

	d = ocData(t, ocIncast, "{kind: incast, senders: 8}", 52, of(fidelity.OK))
	var kept []RunData
	for _, r := range d.Runs {
		if r.Meta.Cell != d.ocCell(ocCond{true, true}, "rss+rack").Cell.Name {
			kept = append(kept, r)
		}
	}
	d.Runs = kept
	cs := evalOrderedChaos(Inputs{ocIncast: d}).Claims
	if c := claimByID(t, cs, "incast-rack-spurious"); c.Verdict != DoesNotHold || !strings.Contains(c.Detail, "not run") {
		// rss+rack ran without trimming only: judged on that half, saying what is missing.
		t.Errorf("rack claim with one cell missing: %s (%s)", c.Verdict, c.Why)
	}
}

// TestOrderedChaosPairsOKSeeds: a WARN run leaves its seed out of the
// cells it is compared with; with 3 of 4 seeds left the claims are judged
// on them (and say so), with 2 of 4 they are INCONCLUSIVE.
func TestOrderedChaosPairsOKSeeds(t *testing.T) {
	good := ocHolding
	warnAt := func(d *Data, transport string, repsWarn ...int) {
		name := d.ocCell(ocCond{false, true}, transport).Cell.Name
		for i := range d.Runs {
			if d.Runs[i].Meta.Cell == name && slices.Contains(repsWarn, d.Runs[i].Meta.Repetition) {
				d.Runs[i].Meta.Fidelity = &fidelity.Report{Verdict: fidelity.WARN}
			}
		}
	}
	d := ocDataN(t, ocIncast, "{kind: incast, senders: 8}", 4, 40, good)
	warnAt(d, "ecmp", 2)
	cs := evalOrderedChaos(Inputs{ocIncast: d}).Claims
	wantVerdicts(t, cs, map[string]Verdict{"incast-p99-notrim": Holds, "incast-rtos": Holds, "incast-p99-trim": Holds})
	if c := claimByID(t, cs, "incast-p99-notrim"); !strings.Contains(c.Detail, "judged on the 3 of 4 seeds") {
		t.Errorf("p99 claim on 3 of 4 seeds does not say so: %s", c.Detail)
	}

	d = ocDataN(t, ocIncast, "{kind: incast, senders: 8}", 4, 40, good)
	warnAt(d, "ecmp", 0)
	warnAt(d, "rss+pfld", 3)
	cs = evalOrderedChaos(Inputs{ocIncast: d}).Claims
	wantVerdicts(t, cs, map[string]Verdict{"incast-p99-notrim": Inconclusive, "incast-p99-trim": Holds})
	if c := claimByID(t, cs, "incast-p99-notrim"); !strings.Contains(c.Detail, "2 of 4 seeds have every run OK") {
		t.Errorf("p99 claim with 2 of 4 seeds OK: %s", c.Detail)
	}
}
