package check

import (
	"testing"
	"time"

	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

const psnFabric = `topology: {kind: leafspine, leaves: 4, spines: 4, hosts_per_leaf: 4, links: {mtu: 4200}}
cc: dctcp
workload: {kind: all-to-all, size: 256KiB, max_parallel: 4}
repetitions: 2
`

// psnBehaviour: a cell's retransmissions, the spurious ones (before and
// after delivery) and its CCT.
type psnBehaviour struct {
	retx, spurious, late int
	cct                  time.Duration
}

func psnData(t *testing.T, file, compare string, of func(cfg *scenario.Config) psnBehaviour) *Data {
	sc := parseScenario(t, file, psnFabric+compare)
	return recorded(sc, file, func(c *scenario.Cell, rep int) *RunData {
		b := of(c.Config)
		r := runWith(flowsWith(240, b.cct, b.cct, 0, b.retx, b.spurious), &results.PacketCounts{SpuriousLate: uint64(b.late)})
		r.Meta.CCT = b.cct + time.Duration(rep)*time.Millisecond
		return r
	})
}

func psnInputs(t *testing.T, main func(transport string) psnBehaviour, ablation func(noFast, noPaths bool) psnBehaviour) Inputs {
	return Inputs{
		psnMain: psnData(t, psnMain, "compare: {transport: [psnpath, gapnack, rss+pfld]}\n",
			func(cfg *scenario.Config) psnBehaviour { return main(string(cfg.Transport)) }),
		psnAblation: psnData(t, psnAblation, "transport: psnpath\ncompare:\n  psnpath: [{k: 4}, {k: 4, no_fast_retx: true}, {k: 4, no_path_manager: true}]\n",
			func(cfg *scenario.Config) psnBehaviour {
				return ablation(cfg.PSNPath.NoFastRetx, cfg.PSNPath.NoPathManager)
			}),
	}
}

func TestPSNPathHolds(t *testing.T) {
	in := psnInputs(t, func(tr string) psnBehaviour {
		switch tr {
		case "psnpath":
			return psnBehaviour{retx: 400, spurious: 1, late: 1, cct: time.Second} // 2 of 400 per run: 0.5 %
		case "gapnack":
			return psnBehaviour{retx: 900, spurious: 400, late: 20, cct: 2 * time.Second}
		}
		return psnBehaviour{retx: 300, cct: time.Second}
	}, func(noFast, noPaths bool) psnBehaviour {
		switch {
		case noFast:
			return psnBehaviour{retx: 400, cct: 3 * time.Second}
		case noPaths:
			return psnBehaviour{retx: 800, cct: 1500 * time.Millisecond}
		}
		return psnBehaviour{retx: 400, cct: time.Second}
	})
	ev := evalPSNPath(in)
	wantVerdicts(t, ev.Claims, map[string]Verdict{"redundant": Holds, "below-gapnack": Holds, "goodput": Holds,
		"ablation-fast-retx": Holds, "ablation-path-switching": Holds})
	red := claimByID(t, ev.Claims, "redundant")
	if red.Measured != 0.5 || red.PaperValue != 0.8 {
		t.Errorf("redundant %v %% (paper %v), want 0.5: receivers' spurious copies, late ones included, over the senders' retransmissions", red.Measured, red.PaperValue)
	}
	if len(ev.Figures) != 1 || ev.Tables == "" {
		t.Errorf("%d figures, tables %q", len(ev.Figures), ev.Tables)
	}
}

func TestPSNPathDoesNotHold(t *testing.T) {
	in := psnInputs(t, func(tr string) psnBehaviour {
		switch tr {
		case "psnpath": // resends on reordering like the baseline, and is slower
			return psnBehaviour{retx: 400, spurious: 50, late: 30, cct: 2 * time.Second}
		case "gapnack":
			return psnBehaviour{retx: 400, spurious: 40, late: 10, cct: time.Second}
		}
		return psnBehaviour{retx: 300, cct: time.Second}
	}, func(noFast, noPaths bool) psnBehaviour {
		if noPaths { // switching paths hurt
			return psnBehaviour{retx: 400, cct: 900 * time.Millisecond}
		}
		return psnBehaviour{retx: 400, cct: time.Second}
	})
	wantVerdicts(t, evalPSNPath(in).Claims, map[string]Verdict{"redundant": DoesNotHold, "below-gapnack": DoesNotHold, "goodput": DoesNotHold,
		"ablation-fast-retx": DoesNotHold, "ablation-path-switching": DoesNotHold})
}

// TestPSNPathNothingToJudge: no retransmission at all is no evidence of
// precision; the ablation not run is no data.
func TestPSNPathNothingToJudge(t *testing.T) {
	in := psnInputs(t, func(string) psnBehaviour { return psnBehaviour{cct: time.Second} }, func(bool, bool) psnBehaviour { return psnBehaviour{cct: time.Second} })
	delete(in, psnAblation)
	wantVerdicts(t, evalPSNPath(in).Claims, map[string]Verdict{"redundant": NoData, "below-gapnack": NoData, "ablation-fast-retx": NoData})
}
