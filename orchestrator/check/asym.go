package check

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/report/figure"
	"github.com/ftlab/ftlab/orchestrator/results"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

const (
	asymUplink = "oc-asymmetry-uplink.yaml"
	asymSpines = "oc-asymmetry-spines.yaml"
)

// The asymmetry claim's parameters: the slow path's share of subflows
// must come within ShareTolerance of its capacity share and stay there
// from at most ConvergeTaus rerouting intervals after the first subflow
// started (the paper: "RSS reacts within microseconds", tau being 15 us).
const (
	ShareTolerance = 0.05
	ConvergeTaus   = 20
)

var asymmetryCheck = Check{
	Name:  "rss-asymmetry",
	Paper: "Ordered Chaos Fig. 1(A), V-A",
	Title: "RSS's subflows on a degraded path converge to its capacity share",
	Setup: "The paper: 16 subflows per flow; one of 16 output links at 20 % capacity (Fig. 1A), and the asymmetric fabric of V-A with 4 of 16 aggregation switches at 100 of 400 Gbit/s; RSS moves the worst subflow every tau (15 us, about an RTT) so that the degraded link carries proportionally fewer subflows. " +
		"ftlab: topologies/ordered-chaos.yaml with one source leaf's uplink at 20 % (l0 -> s1 at 80 Gbit/s) and, separately, one of the 4 spines at a quarter rate (s3 at 100 Gbit/s), RSS+PFLD with MPRDMA, sigma 16, tau one base RTT, tornado traffic of 24 MiB per host. The capacity share is computed from the scenario's link rates: a path's bottleneck rate over the sum of the source leaf's paths to the destination.",
	Deviations: []string{
		"4 uplinks per leaf (the paper's Fig. 1A: 16 output links): the capacity share of the slow path is 6.25 % (one uplink at 20 %) and 7.7 % (one spine of 4 at 25 %) rather than 1.5 % and 7.7 %.",
		fmt.Sprintf("The convergence bound, %d tau, is ftlab's: the paper shows convergence in Fig. 1A without a number.", ConvergeTaus),
	},
	Scenarios: []string{asymUplink, asymSpines},
	Quick: map[string]Reduction{
		asymUplink: {Patch: []Patch{seeds(1), set("4MiB", "workload", "size")}},
		asymSpines: {Skip: true},
	},
	Evaluate: evalAsymmetry,
}

// shareSeries is one run's share of subflows on the slow paths, sampled
// every quarter tau over the window in which every counted flow is active.
type shareSeries struct {
	rep     int
	t       []float64 // in tau since the first subflow started
	share   []float64
	target  float64 // the capacity share (mean over the counted subflows)
	subflow int     // subflows counted
	full    int     // the first sample at which every counted subflow had started
}

func evalAsymmetry(in Inputs) Evaluation {
	var ev Evaluation
	fig := figure.Figure{Name: "share", Title: "Ordered Chaos Fig. 1(A): the slow path's share of subflows over time", Columns: 2}
	var tables strings.Builder
	for _, cs := range []struct{ file, name, text string }{
		{asymUplink, "uplink", "one source leaf's uplink at 20 %"},
		{asymSpines, "spines", "one spine of 4 at a quarter rate"},
	} {
		d := in[cs.file]
		share := Claim{ID: cs.name + "-share", Text: cs.text + ": RSS's share of subflows on the slow path ends at its capacity share",
			Paper: "the capacity share (Fig. 1A: converges to the ideal distribution)", Unit: "%",
			Rule: fmt.Sprintf("the slow path's share of subflows over the last quarter of the window within %.0f points of its capacity share, in every seed", 100*ShareTolerance)}
		conv := Claim{ID: cs.name + "-converge", Text: cs.text + fmt.Sprintf(": the share converges within %d tau", ConvergeTaus),
			Paper: "within microseconds (Fig. 1A; no number)", PaperValue: nan, Unit: "tau",
			Rule: fmt.Sprintf("from at most %d tau after the first subflow started, the share stays within %.0f points of the capacity share until the first flow ends, in every seed (the slowest seed is shown)", ConvergeTaus, 100*ShareTolerance)}
		share.Measured, share.PaperValue, conv.Measured = nan, nan, nan
		c := d.find(func(*scenario.Config) bool { return true })
		if c == nil || len(c.Runs) == 0 {
			share.judge(false, "", "", "not run: "+cs.file)
			conv.judge(false, "", "", "not run: "+cs.file)
			ev.Claims = append(ev.Claims, share, conv)
			continue
		}
		tau := c.Cell.Config.RSS.Tau
		var series []shareSeries
		var thin []string
		for _, r := range c.Runs {
			s, why := sharesOf(r, c.Cell.Config.Topo(), tau)
			if why != "" {
				thin = append(thin, fmt.Sprintf("repetition %d: %s", r.Meta.Repetition, why))
				continue
			}
			series = append(series, s)
		}
		if inc := c.Incomplete(); inc != "" {
			thin = append(thin, inc)
		}
		fid := c.Fidelity()
		if len(series) == 0 {
			share.judge(false, fid, strings.Join(thin, "; "), "")
			conv.judge(false, fid, strings.Join(thin, "; "), "")
			ev.Claims = append(ev.Claims, share, conv)
			continue
		}
		shareOK, convOK := true, true
		var ends, convs, starts []float64
		for _, s := range series {
			end := tailMean(s.share, 0.25)
			ct := convergedAt(s, ShareTolerance)
			ends, convs, starts = append(ends, end), append(convs, ct), append(starts, s.share[s.full])
			shareOK = shareOK && math.Abs(end-s.target) <= ShareTolerance
			convOK = convOK && ct <= ConvergeTaus
			share.PaperValue = 100 * s.target
			if w := s.t[len(s.t)-1]; w < 2*ConvergeTaus {
				thin = append(thin, fmt.Sprintf("repetition %d: the window is only %.0f tau, under twice the bound", s.rep, w))
			}
		}
		share.Measured = 100 * slices.MaxFunc(ends, func(a, b float64) int { // the seed furthest from the target
			return cmpAbs(a-series[0].target, b-series[0].target)
		})
		conv.Measured = slices.Max(convs)
		pct := func(v float64) string { return fmt.Sprintf("%.1f %%", 100*v) }
		tauText := func(v float64) string {
			if math.IsInf(v, 1) {
				return "never"
			}
			return fmt.Sprintf("%.1f tau", v)
		}
		detail := fmt.Sprintf("capacity share %.1f %% (%d subflows counted per run); share once every subflow had started %s, over the last quarter %s; converged after %s (tau %s emulated)",
			100*series[0].target, series[0].subflow, Spread(starts, pct), Spread(ends, pct), spreadWith(convs, tauText), tau)
		share.Detail, conv.Detail = detail, detail
		share.judge(shareOK, fid, strings.Join(thin, "; "), "")
		conv.judge(convOK, fid, strings.Join(thin, "; "), "")
		ev.Claims = append(ev.Claims, share, conv)

		p := figure.Panel{Title: cs.text, X: "time since the first subflow started (tau)", Y: "share of subflows on the slow path (%)",
			Kind: figure.Lines, YMin: 0, YMax: 50,
			Refs: []figure.Ref{{Label: fmt.Sprintf("capacity share %.1f %%", 100*series[0].target), Y: 100 * series[0].target},
				{Label: fmt.Sprintf("+%.0f points", 100*ShareTolerance), Y: 100 * (series[0].target + ShareTolerance)}}}
		for _, s := range series {
			ser := figure.Series{Name: fmt.Sprintf("repetition %d", s.rep)}
			for i := range s.t {
				ser.Points = append(ser.Points, figure.Point{X: s.t[i], Y: 100 * s.share[i]})
			}
			p.Series = append(p.Series, ser)
		}
		fig.Panels = append(fig.Panels, p)
		fmt.Fprintf(&tables, "- %s (%s): %s; fidelity %s.\n", cs.name, cs.file, detail, fid)
	}
	if len(fig.Panels) > 0 {
		ev.Figures = []figure.Figure{fig}
	}
	ev.Tables = tables.String()
	return ev
}

// sharesOf reconstructs one run's share of subflows on slow paths: a
// subflow counts from its first EV until its message was delivered, on
// the path its current EV hashes to at the source leaf. Only flows that
// have a slow path (one whose bottleneck is below the fastest of their
// leaf's paths to the destination) count. why says what is missing.
func sharesOf(r RunData, t *topology.Topology, tau time.Duration) (shareSeries, string) {
	s := shareSeries{rep: r.Meta.Repetition}
	if tau <= 0 {
		return s, "no rerouting interval"
	}
	byAddr := map[string]string{}
	for _, n := range t.Nodes {
		byAddr[n.Addr.String()] = n.Name
	}
	name := func(x string) string {
		if n, ok := byAddr[x]; ok {
			return n
		}
		return x
	}
	done := map[[2]string]time.Duration{}
	for _, f := range r.Rows.Flows {
		if f.Delivered {
			done[[2]string{f.Src, f.Dst}] = f.Done
		}
	}
	type key struct {
		host, peer string
		flow       uint32
		sub        int
	}
	type sub struct {
		first, end time.Duration
		changes    []results.SubflowRow
		caps       []float64 // capacity of each uplink for this flow's pair
	}
	subs := map[key]*sub{}
	capsOf := map[[2]string][]float64{}
	for _, row := range r.Rows.Subflows {
		host, peer := name(row.Host), name(row.Peer)
		if row.Uplink < 0 {
			continue
		}
		pair := [2]string{host, peer}
		caps, ok := capsOf[pair]
		if !ok {
			caps = pathCapacities(t, host, peer)
			capsOf[pair] = caps
		}
		if !hasSlow(caps) {
			continue
		}
		end, ok := done[pair]
		if !ok {
			continue
		}
		k := key{host, peer, row.Flow, row.Subflow}
		x := subs[k]
		if x == nil {
			x = &sub{first: row.At, end: end, caps: caps}
			subs[k] = x
		}
		x.first = min(x.first, row.At)
		x.changes = append(x.changes, row)
	}
	if len(subs) == 0 {
		return s, "no subflow of a flow with a slow path (or no delivered flow)"
	}
	t0, t1 := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	target := 0.0
	for _, x := range subs {
		t0, t1 = min(t0, x.first), min(t1, x.end)
		slices.SortFunc(x.changes, func(a, b results.SubflowRow) int { return int(a.At - b.At) })
		target += slowShare(x.caps)
	}
	s.target, s.subflow = target/float64(len(subs)), len(subs)
	if t1 <= t0 {
		return s, "the first flow ended before the last subflow started"
	}
	step := tau / 4
	for at := t0; at <= t1; at += step {
		on, slow := 0, 0
		for _, x := range subs {
			if x.first > at {
				continue
			}
			u := -1
			for _, c := range x.changes {
				if c.At <= at {
					u = c.Uplink
				}
			}
			if u < 0 || u >= len(x.caps) {
				continue
			}
			on++
			if x.caps[u] < slices.Max(x.caps) {
				slow++
			}
		}
		if on == 0 {
			continue
		}
		if on < len(subs) {
			s.full = len(s.t) + 1
		}
		s.t = append(s.t, float64(at-t0)/float64(tau))
		s.share = append(s.share, float64(slow)/float64(on))
	}
	if len(s.t) < 2 || s.full >= len(s.t) {
		return s, "fewer than two samples with every subflow started"
	}
	return s, ""
}

// pathCapacities are, for each uplink of host's leaf (in the order of the
// leaf's ports, as subflows.csv numbers them), the bottleneck rate of the
// path through it to peer: the uplink's upward rate and the top switch's
// downward rate towards peer's leaf. Nil when the hosts share a leaf or
// are unknown.
func pathCapacities(t *topology.Topology, host, peer string) []float64 {
	h, ok1 := t.Node(host)
	p, ok2 := t.Node(peer)
	if !ok1 || !ok2 || len(h.Ports) == 0 || len(p.Ports) == 0 {
		return nil
	}
	leaf, _ := t.Node(t.Peer(h.Ports[0]).Node)
	dst := t.Peer(p.Ports[0]).Node
	if leaf == nil || leaf.Name == dst {
		return nil
	}
	var caps []float64
	for _, port := range leaf.Ports {
		up := t.Peer(port)
		spine, ok := t.Node(up.Node)
		if !ok || spine.Role.Tier() <= leaf.Role.Tier() {
			continue
		}
		l := &t.Links[port.Link]
		c := float64(l.Up.RateBps)
		if down, _, ok := t.LinkBetween(dst, spine.Name); ok {
			c = min(c, float64(down.Down.RateBps))
		} else {
			c = 0 // not a 2-tier path: no capacity known
		}
		caps = append(caps, c)
	}
	return caps
}

func hasSlow(caps []float64) bool {
	return len(caps) > 1 && slices.Min(caps) < slices.Max(caps)
}

// slowShare is the slow paths' share of the capacity.
func slowShare(caps []float64) float64 {
	total, slow := 0.0, 0.0
	top := slices.Max(caps)
	for _, c := range caps {
		total += c
		if c < top {
			slow += c
		}
	}
	return slow / total
}

// tailMean is the mean of the last frac of vs.
func tailMean(vs []float64, frac float64) float64 {
	n := max(1, int(math.Ceil(frac*float64(len(vs)))))
	sum := 0.0
	for _, v := range vs[len(vs)-n:] {
		sum += v
	}
	return sum / float64(n)
}

// convergedAt is the time (tau) from which the share stays within tol of
// the target to the end of the window; +Inf if it ends outside.
func convergedAt(s shareSeries, tol float64) float64 {
	at := math.Inf(1)
	for i := len(s.share) - 1; i >= 0; i-- {
		if math.Abs(s.share[i]-s.target) > tol {
			break
		}
		at = s.t[i]
	}
	return at
}

func cmpAbs(a, b float64) int {
	switch {
	case math.Abs(a) < math.Abs(b):
		return -1
	case math.Abs(a) > math.Abs(b):
		return 1
	}
	return 0
}

// spreadWith is Spread for values that may be infinite.
func spreadWith(vs []float64, format func(float64) string) string {
	if len(vs) == 0 {
		return "-"
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = format(v)
	}
	return strings.Join(parts, ", ") + " by seed"
}
