package scenario

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var ignoreUnexported = cmpopts.IgnoreUnexported(Config{}, Fault{})

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

func TestDefaults(t *testing.T) {
	s := mustParse(t, minimal, nil)
	want := &Scenario{
		Name:  "s",
		File:  "s.yaml",
		Seeds: []uint64{1},
	}
	if diff := cmp.Diff(want, s, cmpopts.IgnoreFields(Scenario{}, "Cells")); diff != "" {
		t.Errorf("scenario (-want +got):\n%s", diff)
	}
	if len(s.Cells) != 1 || s.Cells[0].Name != "base" || s.Cells[0].Choices != nil {
		t.Fatalf("cells: %+v", s.Cells)
	}
	wantCfg := &Config{
		Topology: TopologyInfo{
			Name: "s", Spec: "kind: fattree\nk: 4\n", Kind: topology.FatTree, K: 4,
			Hosts: 16, Switches: 20, Links: 48,
		},
		DataPlane: Shaped,
		Policy:    Policy{LayerEdge: ECMP, LayerAgg: ECMP},
		Transport: TransportECMP,
		Params:    scheme.Params{ECMP: &scheme.ECMPParams{}},
		CC:        "none",
		Host: HostParams{Pacing: 0, Window: 256 << 10, RTO: "rfc6298", RTOAllowance: 4 * 2569920 * time.Nanosecond,
			MinRTO: 4 * 2569920 * time.Nanosecond, InitialRTO: 8 * 2569920 * time.Nanosecond, Header: 90},
		Workload:         workload.Spec{Kind: workload.Permutation, Size: workload.Fixed(1 << 20)},
		Faults:           []Fault{},
		Timeout:          60 * time.Second,
		ConvergenceDelay: 50 * time.Millisecond,
		// k=4 at 100 Mbit/s, MTU 1500: 6 hops x (1514 + 90) B x 8 /
		// 100 Mbit/s = 769.92 µs, plus 12 x 150 µs of processing.
		BaseRTT: 2569920 * time.Nanosecond,
		MaxRTT:  2569920 * time.Nanosecond, // every link at one rate
		// The same RTT without the 1.8 ms of processing, over the 1514-byte
		// frame time at 100 Mbit/s (121.12 us): 6.32 packets, and 21.19 as
		// emulated; processing is 1.8/2.566 of it.
		Regime: Regime{Dilation: 1, TopologyRateBps: 100e6, EmulatedRateBps: 100e6, FrameBytes: 1514,
			TopologyRTT: 769920 * time.Nanosecond, EmulatedRTT: 2569920 * time.Nanosecond,
			TopologyBDP: 769.92 / 121.12, EmulatedBDP: 2569.92 / 121.12, ProcessingShare: 1800 / 2569.92},
	}
	if diff := cmp.Diff(wantCfg, s.Cells[0].Config, ignoreUnexported, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if w := s.Cells[0].Config.Wire(); w != (workload.Wire{Header: 90, Payload: 1424}) {
		t.Errorf("wire %+v", w)
	}
	r := s.Cells[0].Runs[0]
	if r.Seed != 1 || len(r.Messages) != 16 || r.Bound == nil || len(r.Timeline) != 0 || len(r.Faults) != 0 {
		t.Errorf("run: seed %d, %d messages, bound %v, timeline %v, faults %v", r.Seed, len(r.Messages), r.Bound, r.Timeline, r.Faults)
	}
}

// TestBlockDefaults: every parameter block a cell uses is filled with its
// defaults; the others stay nil.
func TestBlockDefaults(t *testing.T) {
	s := mustParse(t, minimal+"policy: {edge: pofan, agg: ar}\ntransport: rss+pfld\n", nil)
	c := s.Cells[0].Config
	got := []any{c.Ofan, c.POfan, c.AR, c.RSS, c.PFLD, c.RACK, c.PSNPath, c.PLB, c.REPS}
	want := []any{
		&OfanParams{AckThreshold: 128},
		&POfanParams{Pipe: 4},
		&ARParams{Quantum: 1500},
		&RSSParams{Sigma: 16, Tau: c.BaseRTT, Jitter: c.BaseRTT / 10, Metric: "mean-rtt"},
		&PFLDParams{BitmapBits: 512, Periodic: 8},
		(*RACKParams)(nil), (*PSNPathParams)(nil), (*PLBParams)(nil), (*REPSParams)(nil),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("blocks (-want +got):\n%s", diff)
	}
	s = mustParse(t, minimal+"transport: psnpath\nhost: {pacing: 50Mbit, window: 32KiB}\npsnpath: {k: 8}\n", nil)
	c = s.Cells[0].Config
	if diff := cmp.Diff(psnpathDefaults(c.BaseRTT, func(p *PSNPathParams) { p.Paths = 8 }), c.PSNPath); diff != "" {
		t.Errorf("psnpath (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(HostParams{Pacing: 50_000_000, Window: 32 << 10, RTO: "rfc6298", RTOAllowance: 4 * c.BaseRTT,
		MinRTO: 4 * c.BaseRTT, InitialRTO: 8 * c.BaseRTT, Header: 90}, c.Host); diff != "" {
		t.Errorf("host (-want +got):\n%s", diff)
	}
	for _, tr := range []Transport{RSSRACK, PLB, REPS} {
		c := mustParse(t, minimal+"transport: "+string(tr)+"\n", nil).Cells[0].Config
		got := map[Transport]any{RSSRACK: c.RACK, PLB: c.PLB, REPS: c.REPS}[tr]
		want := map[Transport]any{
			RSSRACK: &RACKParams{ReoWnd: 0, ReoWndFrac: 0.25, Adaptive: true, MinRTTWindow: 1000 * c.BaseRTT, PTOSRTTs: 2},
			PLB:     &PLBParams{ECNThreshold: 0.05, Rounds: 1},
			REPS:    &REPSParams{Buffer: 16},
		}[tr]
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tr, diff)
		}
	}
}

// TestGapNACKUsesPSNPathBlock: the gapnack baseline runs PSN-PATH's sender
// and path manager, so a gapnack cell takes the psnpath block (and a
// psnpath block is used when only gapnack runs), resolved as for psnpath.
func TestGapNACKUsesPSNPathBlock(t *testing.T) {
	want := psnpathDefaults(0, func(p *PSNPathParams) {
		p.Paths, p.Beta, p.Explore, p.Remove, p.Interval = 8, 5, 0.9, 0.5, 2*time.Millisecond
	})
	block := "psnpath: {k: 8, beta: 5, explore_threshold: 0.9, remove_threshold: 0.5, interval: 2ms}\n"
	c := mustParse(t, minimal+"transport: gapnack\n"+block, nil).Cells[0].Config
	if c.Transport != GapNACK {
		t.Errorf("transport %q, want gapnack", c.Transport)
	}
	if diff := cmp.Diff(want, c.PSNPath); diff != "" {
		t.Errorf("gapnack's psnpath (-want +got):\n%s", diff)
	}
	if c.RSS != nil || c.PFLD != nil || c.RACK != nil || c.PLB != nil || c.REPS != nil {
		t.Errorf("gapnack cell has blocks it does not use: %+v", c)
	}
	c = mustParse(t, minimal+"transport: gapnack\n", nil).Cells[0].Config
	if diff := cmp.Diff(psnpathDefaults(c.BaseRTT, nil), c.PSNPath); diff != "" {
		t.Errorf("gapnack's default psnpath (-want +got):\n%s", diff)
	}

	s := mustParse(t, minimal+block+"rss: {sigma: 4}\ncompare:\n  transport: [psnpath, gapnack, rss+pfld]\n", nil)
	got := map[string]*PSNPathParams{}
	for _, cell := range s.Cells {
		got[cell.Name] = cell.Config.PSNPath
	}
	if diff := cmp.Diff(map[string]*PSNPathParams{
		"transport=psnpath": want, "transport=gapnack": want, "transport=rss+pfld": nil,
	}, got); diff != "" {
		t.Errorf("psnpath block per cell (-want +got):\n%s", diff)
	}
}

func TestMatrixExpansion(t *testing.T) {
	s := mustParse(t, minimal+"compare:\n  policy: [ecmp, ofan]\n  transport: [ecmp, rss, rss+pfld, rss+rack]\n", nil)
	type view struct {
		Name      string
		Policy    Policy
		Transport Transport
		Blocks    string // the parameter blocks present
	}
	var got []view
	for _, c := range s.Cells {
		var blocks []string
		for name, p := range map[string]bool{"ofan": c.Config.Ofan != nil, "rss": c.Config.RSS != nil, "pfld": c.Config.PFLD != nil, "rack": c.Config.RACK != nil} {
			if p {
				blocks = append(blocks, name)
			}
		}
		got = append(got, view{c.Name, c.Config.Policy, c.Config.Transport, strings.Join(sorted(blocks), " ")})
	}
	e, o := Policy{LayerEdge: ECMP, LayerAgg: ECMP}, Policy{LayerEdge: Ofan, LayerAgg: Ofan}
	want := []view{
		{"policy=ecmp,transport=ecmp", e, TransportECMP, ""},
		{"policy=ecmp,transport=rss", e, RSS, "rss"},
		{"policy=ecmp,transport=rss+pfld", e, RSSPFLD, "pfld rss"},
		{"policy=ecmp,transport=rss+rack", e, RSSRACK, "rack rss"},
		{"policy=ofan,transport=ecmp", o, TransportECMP, "ofan"},
		{"policy=ofan,transport=rss", o, RSS, "ofan rss"},
		{"policy=ofan,transport=rss+pfld", o, RSSPFLD, "ofan pfld rss"},
		{"policy=ofan,transport=rss+rack", o, RSSRACK, "ofan rack rss"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Axis{{"policy", []string{"ecmp", "ofan"}}, {"transport", []string{"ecmp", "rss", "rss+pfld", "rss+rack"}}}, s.Compare); diff != "" {
		t.Errorf("axes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Choice{{"policy", "ofan"}, {"transport", "rss+pfld"}}, s.Cells[6].Choices); diff != "" {
		t.Errorf("choices (-want +got):\n%s", diff)
	}
	// Cells share the seed, hence the workload.
	if !cmp.Equal(s.Cells[0].Runs[0].Messages, s.Cells[7].Runs[0].Messages) {
		t.Error("cells with the same seed run different messages")
	}
}

// TestCompareValues: values of every shape substitute into the file, and
// cells are labelled readably.
func TestCompareValues(t *testing.T) {
	src := `workload: {kind: permutation}
faults:
  - {kind: corrupt, links: [e0-0~a0-1]}
compare:
  policy: [ofan, {edge: ofan, agg: ecmp}]
  rss.sigma: [4, 8]
  faults[0].drop: [1e-4, 1%]
  workload.size: [64KiB, 128KiB..1MiB]
  topology: [topologies/a.yaml, {name: slow, kind: fattree, k: 4, links: {rate: 10Mbit}}]
  transport: [rss]
`
	files := map[string]string{"go.mod": "", "topologies/a.yaml": "kind: fattree\nk: 4\n"}
	s := mustParse(t, src, files)
	if len(s.Cells) != 32 {
		t.Fatalf("%d cells, want 32", len(s.Cells))
	}
	var names []string
	for _, c := range s.Cells[:3] {
		names = append(names, c.Name)
	}
	names = append(names, s.Cells[31].Name)
	want := []string{
		"policy=ofan,rss.sigma=4,faults[0].drop=1e-4,workload.size=64KiB,topology=a,transport=rss",
		"policy=ofan,rss.sigma=4,faults[0].drop=1e-4,workload.size=64KiB,topology=slow,transport=rss",
		"policy=ofan,rss.sigma=4,faults[0].drop=1e-4,workload.size=128KiB..1MiB,topology=a,transport=rss",
		"policy=edge:ofan+agg:ecmp,rss.sigma=8,faults[0].drop=1%,workload.size=128KiB..1MiB,topology=slow,transport=rss",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	last := s.Cells[31].Config
	got := []any{last.Policy, last.RSS.Sigma, last.Faults[0].Drop, last.Workload.Size, last.Topology.Name, last.Topo().Links[0].Up.RateBps}
	wantVals := []any{Policy{LayerEdge: Ofan, LayerAgg: ECMP}, 8, 0.01, workload.Size{Min: 128 << 10, Max: 1 << 20}, "slow", uint64(10_000_000)}
	if diff := cmp.Diff(wantVals, got); diff != "" {
		t.Errorf("last cell (-want +got):\n%s", diff)
	}
	if src := s.Cells[0].Config.Topology.Source; src != "topologies/a.yaml" {
		t.Errorf("topology source %q", src)
	}
}

// TestCompareFaultLists: whole fault lists compared are named by their
// faults: none for the empty list, a fault by its fields, two joined by
// "@", and a list with a nested value by its position.
func TestCompareFaultLists(t *testing.T) {
	src := `topology: {kind: fattree, k: 4}
workload: {kind: permutation}
compare:
  faults:
    - []
    - [{kind: corrupt, stage: agg-core, drop: 1e-3}]
    - [{kind: corrupt, stage: agg-core, drop: 1e-3}, {kind: down, random: 1}]
    - [{kind: corrupt, links: [e0-0~a0-1], drop: 1e-3}]
`
	s := mustParse(t, src, map[string]string{"go.mod": ""})
	var names []string
	for _, c := range s.Cells {
		names = append(names, c.Name)
	}
	want := []string{"faults=none", "faults=kind:corrupt+stage:agg-core+drop:1e-3",
		"faults=kind:corrupt+stage:agg-core+drop:1e-3@kind:down+random:1", "faults=4"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

// TestConvergenceDelay: a scenario sets how long switches keep routes
// through a failed link, and may compare delays; zero is refused (it
// would silently mean the default).
func TestConvergenceDelay(t *testing.T) {
	src := `workload: {kind: permutation}
topology: {kind: fattree, k: 4}
compare:
  convergence_delay: [20ms, 400ms]
`
	s := mustParse(t, src, map[string]string{"go.mod": ""})
	var got []time.Duration
	for _, c := range s.Cells {
		got = append(got, c.Config.ConvergenceDelay)
	}
	if diff := cmp.Diff([]time.Duration{20 * time.Millisecond, 400 * time.Millisecond}, got); diff != "" {
		t.Errorf("delays (-want +got):\n%s", diff)
	}
	_, err := parse(t, "workload: {kind: permutation}\ntopology: {kind: fattree, k: 4}\nconvergence_delay: 0s\n", map[string]string{"go.mod": ""})
	if err == nil || !strings.Contains(err.Error(), "convergence_delay: must be longer than 0s") {
		t.Errorf("zero delay: %v", err)
	}
}

// TestCompareCC: congestion controls compare like transports; each cell
// keeps the blocks of its own algorithm, with the RTT-relative defaults
// taken at the cell's base RTT, and runs them with any transport.
func TestCompareCC(t *testing.T) {
	src := `topology: {kind: fattree, k: 4}
workload: {kind: incast, senders: 8}
transport: rss+pfld
swift: {ai: 2}
compare:
  cc: [none, mprdma, swift]
`
	s := mustParse(t, src, nil)
	var names []string
	for _, c := range s.Cells {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"cc=none", "cc=mprdma", "cc=swift"}, names); diff != "" {
		t.Fatalf("cells (-want +got):\n%s", diff)
	}
	none, mp, sw := s.Cells[0].Config, s.Cells[1].Config, s.Cells[2].Config
	if none.CC != "none" || none.MPRDMA != nil || none.Swift != nil {
		t.Errorf("cc=none: cc %q, blocks %+v", none.CC, none.CCBlocks)
	}
	if mp.CC != "mprdma" || mp.MPRDMA == nil || mp.MPRDMA.Decrease != 0.5 || mp.Swift != nil {
		t.Errorf("cc=mprdma: cc %q, blocks %+v", mp.CC, mp.CCBlocks)
	}
	if sw.CC != "swift" || sw.Swift == nil || sw.Swift.AI != 2 || sw.Swift.BaseTarget != time.Duration(1.2*float64(sw.BaseRTT)) {
		t.Errorf("cc=swift: cc %q, blocks %+v (base RTT %v)", sw.CC, sw.CCBlocks, sw.BaseRTT)
	}
}

// TestTopologyLookup: a scenario in a subdirectory names topologies by
// their path from the repository root.
func TestTopologyLookup(t *testing.T) {
	files := map[string]string{
		"go.mod":                   "",
		"topologies/a.yaml":        "kind: fattree\nk: 4\n",
		"scenarios/x/s.yaml":       "topology: topologies/a.yaml\nworkload: {kind: tornado}\n",
		"scenarios/x/local.yaml":   "kind: fattree\nk: 6\n",
		"scenarios/x/s-local.yaml": "topology: local.yaml\nworkload: {kind: tornado}\n",
	}
	mustParse(t, minimal, files) // writes the files and enters the directory
	for file, want := range map[string]string{
		"scenarios/x/s.yaml":       "topologies/a.yaml",
		"scenarios/x/s-local.yaml": "scenarios/x/local.yaml",
	} {
		s, err := Load(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Cells[0].Config.Topology.Source; got != want {
			t.Errorf("%s: topology found at %q, want %q", file, got, want)
		}
	}
}

func TestFaultExpansion(t *testing.T) {
	src := minimal + `repetitions: 3
faults:
  - {kind: corrupt, random: 3, drop: 1e-3, direction: up}
  - {kind: degrade, at: 10ms, for: 5ms, rate: 25%, links: [a0-1~c1-0], direction: down}
  - {kind: flap, at: 20ms, for: 2ms, repeat: 2, links: [h0-0-0~e0-0]}
  - {kind: switch-down, at: 30ms, switches: [c1-1]}
  - {kind: switch-down, at: 40ms, for: 1ms, random: 1, layer: agg}
`
	s := mustParse(t, src, nil)
	runs := s.Cells[0].Runs
	if len(runs) != 3 || runs[0].Seed != 1 || runs[2].Seed != 3 {
		t.Fatalf("runs: %d, seeds %d..%d", len(runs), runs[0].Seed, runs[len(runs)-1].Seed)
	}
	// Random selections: recorded, distinct, above the hosts, from the seed.
	picks := map[string]bool{}
	for _, r := range runs {
		links := r.Faults[0].Links
		if len(links) != 3 || links[0] == links[1] || links[1] == links[2] {
			t.Fatalf("seed %d: picked %v", r.Seed, links)
		}
		for _, l := range links {
			if strings.HasPrefix(l, "h") {
				t.Errorf("seed %d: picked host link %s", r.Seed, l)
			}
		}
		picks[strings.Join(links, " ")] = true
		if sw := r.Faults[4].Switches; len(sw) != 1 || !strings.HasPrefix(sw[0], "a") {
			t.Errorf("seed %d: switch-down picked %v", r.Seed, sw)
		}
	}
	if len(picks) < 2 {
		t.Errorf("three seeds picked the same links: %v", picks)
	}
	again := mustParse(t, src, nil)
	if diff := cmp.Diff(runs, again.Cells[0].Runs, ignoreUnexported); diff != "" {
		t.Errorf("reloading changed the runs (-first +second):\n%s", diff)
	}
	// The timeline of the fixed faults.
	var got []string
	for _, a := range runs[0].Timeline {
		if a.Fault > 0 && a.Fault < 4 {
			got = append(got, a.String())
		}
	}
	want := []string{
		"10ms set-rate a0-1~c1-0 down 25Mbit",
		"15ms restore-rate a0-1~c1-0 down 100Mbit",
		"20ms link-down h0-0-0~e0-0",
		"22ms link-up h0-0-0~e0-0",
		"24ms link-down h0-0-0~e0-0",
		"26ms link-up h0-0-0~e0-0",
		"30ms link-down a0-1~c1-1", "30ms link-down a1-1~c1-1", "30ms link-down a2-1~c1-1", "30ms link-down a3-1~c1-1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	for i := 1; i < len(runs[0].Timeline); i++ {
		if runs[0].Timeline[i].At < runs[0].Timeline[i-1].At {
			t.Fatal("timeline out of order")
		}
	}
	// The resolved config keeps the selection as written.
	if f := s.Cells[0].Config.Faults[0]; f.Random != 3 || f.Links != nil {
		t.Errorf("config fault: %+v", f)
	}
}

// TestRandomAvoidsOverlap: random picks skip links another fault already
// changes at the same time, so they never produce an overlap error.
func TestRandomAvoidsOverlap(t *testing.T) {
	src := minimal + `seeds: [1, 2, 3, 4, 5, 6, 7, 8]
faults:
  - {kind: corrupt, drop: 1e-3, stage: agg-core}
  - {kind: corrupt, drop: 1e-3, random: 16}
`
	for _, r := range mustParse(t, src, nil).Cells[0].Runs {
		for _, l := range r.Faults[1].Links {
			if strings.HasPrefix(l, "a") {
				t.Errorf("seed %d: picked %s, which faults[0] already corrupts", r.Seed, l)
			}
		}
	}
	_, err := parse(t, minimal+"faults:\n  - {kind: corrupt, drop: 1e-3, stage: agg-core}\n  - {kind: corrupt, drop: 1e-3, random: 17}\n", nil)
	want := "s.yaml:5:41: faults[1].random: cannot pick 17: only 16 of the 32 candidates are free of other faults at the same time"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestDegradeAbsoluteAndLinkOverrides(t *testing.T) {
	s := mustParse(t, minimal+`links:
  - {from: a0-0, to: c0-0, rate: 40Mbit}
faults:
  - {kind: degrade, rate: 10Mbit, links: [a0-0~c0-0], for: 1s}
`, nil)
	var got []string
	for _, a := range s.Cells[0].Runs[0].Timeline {
		got = append(got, a.String())
	}
	want := []string{
		"0s set-rate a0-0~c0-0 up 10Mbit", "0s set-rate a0-0~c0-0 down 10Mbit",
		"1s restore-rate a0-0~c0-0 up 40Mbit", "1s restore-rate a0-0~c0-0 down 100Mbit",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]LinkOverride{{From: "a0-0", To: "c0-0", Rate: "40Mbit"}}, s.Cells[0].Config.Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
}

// TestBackToBackFaults: a fault that starts when another ends on the same
// link is not an overlap, and the timeline ends the first before starting
// the second, whatever their order in the file.
func TestBackToBackFaults(t *testing.T) {
	s := mustParse(t, minimal+`faults:
  - {kind: down, at: 10ms, for: 5ms, links: [e0-0~a0-1]}
  - {kind: down, at: 5ms, for: 5ms, links: [e0-0~a0-1]}
`, nil)
	var got []string
	for _, a := range s.Cells[0].Runs[0].Timeline {
		got = append(got, fmt.Sprintf("%s %d", a, a.Fault))
	}
	want := []string{
		"5ms link-down e0-0~a0-1 1", "10ms link-up e0-0~a0-1 1", "10ms link-down e0-0~a0-1 0", "15ms link-up e0-0~a0-1 0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline (-want +got):\n%s", diff)
	}
}

func TestLineRateHasNoBound(t *testing.T) {
	s := mustParse(t, minimal+"dataplane: linerate\n", nil)
	if b := s.Cells[0].Runs[0].Bound; b != nil {
		t.Errorf("linerate run has a bound %v", b)
	}
}

func TestResolvedJSON(t *testing.T) {
	s := mustParse(t, minimal+"transport: rss\nfaults:\n  - {kind: down, at: 1ms, links: [e0-0~a0-0]}\ncompare:\n  policy: [ecmp, ofan]\n", nil)
	data, err := JSON(s.Resolved())
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Format int
		Name   string
		Cells  []struct {
			Name   string
			Config map[string]any
			Runs   []map[string]any
		}
	}
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.Format != FormatVersion || back.Name != "s" || len(back.Cells) != 2 {
		t.Fatalf("record: %+v", back)
	}
	cfg := back.Cells[1].Config
	for _, key := range []string{"topology", "dataplane", "policy", "ofan", "trimming", "transport", "rss", "host", "workload", "faults", "timeout_ns"} {
		if _, ok := cfg[key]; !ok {
			t.Errorf("config has no %q: %v", key, cfg)
		}
	}
	for _, key := range []string{"pfld", "rack", "psnpath", "plb", "reps", "pofan", "ar"} {
		if _, ok := cfg[key]; ok {
			t.Errorf("config has %q, which the cell does not use", key)
		}
	}
	run := back.Cells[1].Runs[0]
	for _, key := range []string{"seed", "messages", "faults", "timeline", "cct_lower_bound"} {
		if _, ok := run[key]; !ok {
			t.Errorf("run has no %q", key)
		}
	}
	rec := s.Record(s.Cells[1], s.Cells[1].Runs[0])
	if rec.Cell != "policy=ofan" || rec.Scenario != "s" || rec.Run.Seed != 1 {
		t.Errorf("record %+v", rec)
	}
	if _, err := JSON(rec); err != nil {
		t.Error(err)
	}
}

// TestBoundWithDefaults checks the worked example of docs/scenarios.md:
// with the default header and MTU, a 14240-byte message is 10 packets of
// 1514 bytes; across the core its bound is 1.2112 ms + 5 x 121.12 us, and
// two of them into one host take 5 x 121.12 us + 30280 bytes at 100 Mbit/s.
func TestBoundWithDefaults(t *testing.T) {
	tests := []struct {
		hosts, matrix string
		want          time.Duration
	}{
		{"[h0-0-0, h3-0-0]", "[[0, 14240], [0, 0]]", 1211200 + 5*121120},
		{"[h0-0-0, h1-0-0, h3-0-0]", "[[0, 0, 14240], [0, 0, 14240], [0, 0, 0]]", 5*121120 + 2422400},
	}
	for _, tc := range tests {
		s := mustParse(t, "topology: {kind: fattree, k: 4}\nworkload: {kind: all-to-all-v, matrix: tm.yaml, hosts: "+tc.hosts+"}\n",
			map[string]string{"tm.yaml": tc.matrix + "\n"})
		if got := s.Cells[0].Runs[0].Bound.CCT; got != tc.want {
			t.Errorf("%s: bound %v, want %v", tc.matrix, got, tc.want)
		}
	}
}

// TestProbeHeadroom: probe_headroom takes a share of the buffer (a
// percentage or a fraction) or off, and reaches the data plane.
func TestProbeHeadroom(t *testing.T) {
	for _, c := range []struct {
		src  string
		want float64
	}{{"", 0}, {"probe_headroom: 1%\n", 0.01}, {"probe_headroom: 0.002\n", 0.002}, {"probe_headroom: off\n", 0}} {
		if got := mustParse(t, minimal+c.src, nil).Cells[0].Config.ProbeHeadroom; got != c.want {
			t.Errorf("%q: headroom %v, want %v", c.src, got, c.want)
		}
	}
}
