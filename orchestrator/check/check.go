// Package check runs ftlab's paper checks: small scenarios under
// scenarios/paper/ that test a claim of a paper (Ofan, Ordered Chaos,
// PSN-PATH) at a scale one machine can emulate, and says whether the
// claim holds in ftlab's measurements. A claim that does not hold is a
// finding, reported with its data, not an error.
package check

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/report"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// Run is one finished scenario run of a check.
type Run struct {
	Dir      string
	Scenario *scenario.Scenario
	Summary  *report.Summary
}

// Check is one paper claim and how to test it.
type Check struct {
	Name      string   `json:"name"`
	Paper     string   `json:"paper"`
	Claim     string   `json:"claim"`
	ScaleDown string   `json:"scale_down"`
	Scenarios []string `json:"scenarios"` // file names under the paper scenarios directory
	// Note says what the check could not do as the paper did.
	Note     string                            `json:"note,omitempty"`
	Evaluate func(runs []Run) (Outcome, error) `json:"-"`
}

// Checks are the shipped paper checks, in order.
var Checks = []Check{
	{
		Name:  "ofan",
		Paper: "Ofan Fig. 3, Fig. 4",
		Claim: "as the permutation message grows (64 KiB to 4 MiB), max and mean queue per stage stay flat for Ofan and pOfan " +
			"while ECMP, random and AR grow; Ofan's downlink stages are balanced",
		ScaleDown: "k=4 fat tree (4 MiB buffers), inter-pod permutation of 64 KiB and 4 MiB, transport ecmp, 1 seed",
		Scenarios: []string{"ofan-queues.yaml"},
		Note: fmt.Sprintf("flat: worst max backlog over E->A..A->E grows at most x%.0f (or by < %d B); grows: at least x%.0f; balanced: busiest downlink port <= %.2f x mean packets",
			FlatFactor, FlatSlack, GrowFactor, BalancedShare),
		Evaluate: func(runs []Run) (Outcome, error) {
			return EvalOfan(runs[0].Summary, "64KiB", "4MiB", []string{"ofan", "pofan"}, []string{"ecmp", "random", "ar"})
		},
	},
	{
		Name:  "ordered-chaos",
		Paper: "Ordered Chaos (RSS+PFLD), incast and tornado with corruption",
		Claim: "8:1 incast and tornado with corruption drops: RSS+PFLD's p99 FCT below RSS with RTO only and below ECMP; " +
			"RTOs at least 90% fewer than ECMP; retransmissions equal drops (no spurious ones)",
		ScaleDown: "k=4 fat tree, 512 KiB messages, corruption 1e-3 on every fabric link (paper: 5e-5 at 400 Gbit/s), 2 seeds",
		Scenarios: []string{"oc-incast.yaml", "oc-tornado.yaml"},
		Note:      "retx equal drops is judged as: no spurious retransmissions and needed retransmissions <= switch drops (drops of ACKs need no retransmission)",
		Evaluate: func(runs []Run) (Outcome, error) {
			var ms []string
			holds := true
			for _, r := range runs {
				o, err := EvalOrderedChaos(r.Summary)
				if err != nil {
					return Outcome{}, err
				}
				ms = append(ms, strings.TrimPrefix(r.Summary.Scenario, "paper-oc-")+": "+o.Measurement)
				holds = holds && o.Holds
			}
			return Outcome{Measurement: strings.Join(ms, " | "), Holds: holds}, nil
		},
	},
	{
		Name:  "psn-path",
		Paper: "PSN-PATH section 7.2",
		Claim: "redundant retransmissions at or below 1% (paper: 0.8%) with cross-path reordering and loss, " +
			"fewer than a global-gap NACK receiver's",
		ScaleDown: "k=4 fat tree, a0-1 at a quarter of the rate (cross-path delay differences), 2 agg-core links corrupting 1e-2, all-to-all of 64 KiB, 2 seeds",
		Scenarios: []string{"psnpath-redundant.yaml"},
		Note: "the global-gap NACK receiver is the gapnack transport, ftlab's miniature of the paper's multipath IRN baseline " +
			"(PSN-PATH's sender and path manager, a receiver that NACKs any gap in the global PSN order); " +
			"holds when psnpath's redundant share is at most 1% and below gapnack's; rss+pfld is shown for comparison",
		Evaluate: func(runs []Run) (Outcome, error) { return EvalPSNPath(runs[0].Summary) },
	},
	{
		Name:      "rss-asymmetry",
		Paper:     "Ordered Chaos V-A (RSS under asymmetry)",
		Claim:     "the degraded path's share of subflows converges to its capacity share",
		ScaleDown: "k=4 fat tree with every a0-1 link at a quarter of the rate (capacity share 20%), tornado of 2 MiB, RSS sigma=16, 2 seeds",
		Scenarios: []string{"rss-asymmetry.yaml"},
		Note: fmt.Sprintf("subflows of flows to or from pod 0; a subflow is on the degraded path when its EV hashes to the source edge's uplink towards aggregation index 1; "+
			"start = first EV, end = last EV; holds within +-%.0f points", 100*ShareTolerance),
		Evaluate: func(runs []Run) (Outcome, error) {
			samples, err := degradedSamples(runs[0], "a0-1")
			if err != nil {
				return Outcome{}, err
			}
			return EvalAsymmetry(samples, 12.5/(50+12.5))
		},
	},
}

// Lookup returns the named checks (all when names is empty).
func Lookup(names []string) ([]Check, error) {
	if len(names) == 0 {
		return Checks, nil
	}
	var out []Check
	for _, n := range names {
		found := false
		for _, c := range Checks {
			if c.Name == n {
				out, found = append(out, c), true
			}
		}
		if !found {
			var all []string
			for _, c := range Checks {
				all = append(all, c.Name)
			}
			return nil, fmt.Errorf("unknown check %q (checks: %s)", n, strings.Join(all, ", "))
		}
	}
	return out, nil
}

// Result is one check's outcome.
type Result struct {
	Check
	Outcome
	Fidelity string   `json:"fidelity"` // worst verdict of the check's runs
	Dirs     []string `json:"results"`
	// Rates say at what link rate each scenario ran, and why.
	Rates []string `json:"rates"`
	// RunError is what a run reported besides its results (e.g. a
	// fidelity FAIL); the check is still evaluated on the results.
	RunError string `json:"run_error,omitempty"`
}

// Options configure RunChecks.
type Options struct {
	Dir    string // the paper scenarios directory
	Runner runner.Options
	// Load loads a scenario file; default scenario.Load. ftlab check
	// passes its own to apply --rate and resolve rate: auto.
	Load func(path string) (*scenario.Scenario, error)
	// Before is told about each scenario before it runs.
	Before func(check, scenario string)
	// Failed, if set, is told about each check RunAll could not evaluate,
	// as it happens.
	Failed func(check string, err error)
}

// RunAll runs the checks in order, each with RunOne. A check that cannot
// be evaluated is one of errs, and the others still run, until ctx ends.
func RunAll(ctx context.Context, checks []Check, opt Options) (results []Result, errs []error) {
	for _, c := range checks {
		r, err := RunOne(ctx, c, opt)
		if err != nil {
			errs = append(errs, err)
			if opt.Failed != nil {
				opt.Failed(c.Name, err)
			}
			if ctx.Err() != nil {
				break
			}
			continue
		}
		results = append(results, r)
	}
	return results, errs
}

var verdictRank = map[string]int{"": 0, "OK": 1, "WARN": 2, "FAIL": 3}

// RunOne runs a check's scenarios and evaluates its claim. An error means
// the check could not be evaluated.
func RunOne(ctx context.Context, c Check, opt Options) (Result, error) {
	res := Result{Check: c}
	var runs []Run
	var runErrs []string
	for _, f := range c.Scenarios {
		path := filepath.Join(opt.Dir, f)
		load := opt.Load
		if load == nil {
			load = scenario.Load
		}
		sc, err := load(path)
		if err != nil {
			return res, err
		}
		res.Rates = append(res.Rates, RateOf(sc))
		if opt.Before != nil {
			opt.Before(c.Name, sc.Name)
		}
		dir, sum, err := runner.Run(ctx, sc, opt.Runner)
		if dir != "" {
			res.Dirs = append(res.Dirs, dir)
		}
		if sum == nil {
			if err == nil {
				err = errors.New("no summary")
			}
			return res, fmt.Errorf("%s: %w", path, err)
		}
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if err != nil {
			runErrs = append(runErrs, err.Error())
		}
		if v := string(sum.Fidelity.Verdict); verdictRank[v] > verdictRank[res.Fidelity] {
			res.Fidelity = v
		}
		runs = append(runs, Run{Dir: dir, Scenario: sc, Summary: sum})
	}
	res.RunError = strings.Join(runErrs, "; ")
	o, err := c.Evaluate(runs)
	if err != nil {
		return res, fmt.Errorf("check %s: %w", c.Name, err)
	}
	res.Outcome = o
	return res, nil
}

// RateOf says at what rate a scenario's fabric runs: "50Mbit (the
// topology's)", or scenario.RateInfo.Describe.
func RateOf(sc *scenario.Scenario) string {
	if len(sc.Cells) == 0 || sc.Cells[0].Config.Topo() == nil {
		return "?"
	}
	cfg := sc.Cells[0].Config
	if r := cfg.Rate; r != nil && r.FullBps != 0 {
		return r.Describe()
	}
	return units.FormatRate(cfg.Topo().FullRate()) + " (the topology's)"
}

// degradedSamples reads a run's subflows.csv and marks each EV whose
// first-hop uplink leads towards the degraded aggregation switch's index
// (in a fat tree, uplink towards aggregation index i reaches the
// destination pod through its aggregation switch i). Only flows to or from
// the degraded switch's pod count.
func degradedSamples(r Run, degraded string) ([]SubflowSample, error) {
	if len(r.Scenario.Cells) == 0 {
		return nil, errors.New("scenario has no cells")
	}
	t := r.Scenario.Cells[0].Config.Topo()
	if t == nil {
		return nil, errors.New("scenario has no topology")
	}
	deg, ok := t.Node(degraded)
	if !ok {
		return nil, fmt.Errorf("no switch %s", degraded)
	}
	rows, err := results.ReadSubflows(r.Dir)
	if err != nil {
		return nil, err
	}
	return subflowSamples(rows, t, deg), nil
}

// subflowSamples turns subflows.csv's rows into samples; see
// degradedSamples.
func subflowSamples(rows []results.SubflowRow, t *topology.Topology, deg *topology.Node) []SubflowSample {
	byAddr := map[string]*topology.Node{}
	for i := range t.Nodes {
		byAddr[t.Nodes[i].Addr.String()] = &t.Nodes[i]
	}
	node := func(s string) (*topology.Node, bool) {
		if n, ok := byAddr[s]; ok {
			return n, true
		}
		return t.Node(s)
	}
	// uplinkAgg: for a host, its edge switch's uplink index -> aggregation Index.
	uplinkAgg := func(host *topology.Node, uplink int) (int, bool) {
		if len(host.Ports) == 0 {
			return 0, false
		}
		edge, ok := t.Node(t.Peer(host.Ports[0]).Node)
		if !ok {
			return 0, false
		}
		i := 0
		for _, p := range edge.Ports {
			peer, ok := t.Node(t.Peer(p).Node)
			if !ok || peer.Role.Tier() <= edge.Role.Tier() {
				continue
			}
			if i == uplink {
				return peer.Index, true
			}
			i++
		}
		return 0, false
	}
	var out []SubflowSample
	for _, r := range rows {
		host, ok1 := node(r.Host)
		peer, ok2 := node(r.Peer)
		if !ok1 || !ok2 || (host.Pod != deg.Pod && peer.Pod != deg.Pod) || host.Pod == peer.Pod || r.Uplink < 0 {
			continue
		}
		agg, ok := uplinkAgg(host, r.Uplink)
		if !ok {
			continue
		}
		out = append(out, SubflowSample{
			Subflow:  fmt.Sprintf("%d/%s/%d/%d", r.Repetition, r.Host, r.Flow, r.Subflow),
			AtNs:     int64(r.At),
			Degraded: agg == deg.Index,
		})
	}
	return out
}
