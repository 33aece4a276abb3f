package scenario

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/internal/params"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/internal/yamldoc"
	"github.com/ftlab/ftlab/orchestrator/workload"
	"github.com/ftlab/ftlab/switchd"
	"gopkg.in/yaml.v3"
)

// topFields are the keys of a scenario file, in documentation order.
var topFields = []string{
	"name", "description", "topology", "links", "rate", "dataplane", "policy", "ofan", "pofan", "ar", "trimming", "probe_headroom",
	"transport", "rss", "pfld", "rack", "psnpath", "plb", "reps", "cc", "dctcp", "mprdma", "nscc", "swift", "host",
	"workload", "faults", "repetitions", "seed", "seeds", "timeout", "convergence_delay", "compare",
}

// topHints explain keys that belong one level down.
var topHints = map[string]string{
	"kind":   "the topology's kind goes under topology:, a workload's under workload:, a fault's in its faults: entry",
	"k":      "the fat tree's size goes under topology: (topology: {kind: fattree, k: 4})",
	"size":   "the message size goes under workload:",
	"sigma":  "RSS parameters go under rss:",
	"tau":    "RSS parameters go under rss:",
	"window": "host agent parameters go under host:",
}

// Defaults of the top-level fields.
const (
	DefaultDataPlane              = Shaped
	DefaultPolicy      PolicyName = "ecmp"
	DefaultTransport   Transport  = "ecmp"
	DefaultCC          CCName     = cc.None
	DefaultRepetitions            = 1
	DefaultSeed                   = 1
	DefaultTimeout                = 60 * time.Second
	// DefaultSize is the message size when a workload gives none: Ofan's
	// default permutation message (section 6).
	DefaultSize = "1MiB"

	MaxRepetitions = 1000
)

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// wide holds the fields that apply to the whole scenario, not a cell.
type wide struct {
	name, description string
	seeds             []uint64
}

// cellResult is one decoded cell.
type cellResult struct {
	cfg      *Config
	wide     wide
	problems []*FieldError
	used     map[string]bool // parameter blocks the cell uses
}

// FieldError is topology's: scenario files report problems the same way.
type FieldError = yamldoc.FieldError

// loader checks one scenario file.
type loader struct {
	file string
	opt  Options
}

// decodeCell decodes and resolves one cell's document: the file with the
// cell's compared values substituted and compare removed.
func (l *loader) decodeCell(root *yaml.Node) cellResult {
	var pr yamldoc.Problems
	res := cellResult{used: map[string]bool{}}
	w := yamldoc.NewWalker(root)
	nodes := map[string]*yaml.Node{}
	w.Fields(root, "a scenario: a mapping with topology, workload and optional settings", topFields, topHints,
		func(key string, v *yaml.Node) { nodes[key] = v })
	if w.NotMapping() {
		res.problems = w.Problems()
		return res
	}
	cfg := &Config{Timeout: DefaultTimeout}
	res.cfg = cfg
	scalar := func(key, want string) (string, bool) {
		if n := nodes[key]; n != nil {
			return w.Scalar(n, key, want)
		}
		return "", false
	}
	parsed := func(key, want string, parse func(string) error) {
		if s, ok := scalar(key, want); ok {
			if err := parse(s); err != nil {
				pr.Add(w.Val(key), key, "%v", err)
			}
		}
	}

	res.wide = l.wide(nodes, w, scalar, &pr)

	t, info := l.topology(nodes["topology"], w, &pr)
	cfg.Topology = info
	if n := nodes["links"]; n != nil {
		cfg.Links = l.links(n, t, w, &pr)
	}
	l.rate(cfg, t, nodes, w, scalar, &pr)
	cfg.topo = t
	cfg.BaseRTT, cfg.MaxRTT = fallbackRTT, fallbackRTT
	cfg.Regime = Regime{Dilation: 1}
	if t != nil {
		cfg.fabric = workload.FabricOf(t)
		cfg.BaseRTT, cfg.MaxRTT = BaseRTT(t), MaxRTT(t)
		cfg.Regime = regimeOf(t, cfg.Rate)
	}

	cfg.DataPlane = DefaultDataPlane
	parsed("dataplane", "shaped or linerate", func(s string) error {
		cfg.DataPlane = DataPlane(s)
		return oneOf("data-plane mode", cfg.DataPlane, DataPlanes)
	})
	parsed("trimming", "true or false", func(s string) (err error) {
		cfg.Trimming, err = parseBool(s)
		return err
	})
	parsed("probe_headroom", "a share of each port's buffer such as 1%, or off", func(s string) (err error) {
		if cfg.ProbeHeadroom, err = parseHeadroom(s); err == nil {
			err = checkHeadroom(cfg.ProbeHeadroom, cfg.DataPlane, t)
		}
		return err
	})
	cfg.Transport = DefaultTransport
	parsed("transport", "a transport scheme such as rss+pfld", func(s string) error {
		cfg.Transport = Transport(s)
		return oneOf("transport", cfg.Transport, Transports)
	})
	cfg.CC = DefaultCC
	parsed("cc", "a congestion control such as mprdma", func(s string) error {
		cfg.CC = CCName(s)
		return oneOf("congestion control", cfg.CC, CCs)
	})
	cfg.Policy = l.policy(nodes["policy"], t, w, &pr)
	// A bad timeout must not make every fault time look too late.
	faultLimit := cfg.Timeout
	parsed("timeout", "a duration such as 60s", func(s string) error {
		d, err := parseDuration(s)
		if err == nil && d <= 0 {
			err = fmt.Errorf("must be longer than 0s")
		}
		if err != nil {
			faultLimit = forever
			return err
		}
		cfg.Timeout, faultLimit = d, d
		return nil
	})

	cfg.ConvergenceDelay = switchd.DefaultConvergenceDelay
	parsed("convergence_delay", "a duration such as 50ms", func(s string) error {
		d, err := parseDuration(s)
		if err == nil && d <= 0 {
			err = fmt.Errorf("must be longer than 0s")
		}
		if err == nil {
			cfg.ConvergenceDelay = d
		}
		return err
	})

	l.blocks(cfg, nodes, res.used, &pr)
	l.checkWindow(cfg, nodes, w, &pr)

	wl := l.workload(nodes["workload"], w, t, cfg.fabric, &pr)
	cfg.Workload = wl

	cfg.Faults = l.faults(nodes["faults"], w, t, faultContext{
		timeout: faultLimit, autoRate: cfg.Rate != nil && cfg.Rate.Auto, dilation: cfg.Regime.Dilation,
	}, &pr)

	pr.AddAll("", w.Problems())
	res.problems = problemsOf(&pr)
	return res
}

// wide decodes the scenario-wide fields.
func (l *loader) wide(nodes map[string]*yaml.Node, w *yamldoc.Walker, scalar func(key, want string) (string, bool), pr *yamldoc.Problems) wide {
	var out wide
	if s, ok := scalar("name", "a name such as demo"); ok {
		if !validName.MatchString(s) {
			pr.Add(w.Val("name"), "name", "%q may only contain letters, digits, '.', '_' and '-', and must start with a letter or digit", s)
		}
		out.name = s
	}
	if n := nodes["description"]; n != nil {
		out.description, _ = w.Scalar(n, "description", "text")
	}
	reps := DefaultRepetitions
	if n := nodes["repetitions"]; n != nil {
		if v, ok := w.Integer(n, "repetitions", fmt.Sprintf("a number from 1 to %d", MaxRepetitions)); ok {
			if v < 1 || v > MaxRepetitions {
				pr.Add(w.Val("repetitions"), "repetitions", "%d is out of range; repetitions must be from 1 to %d", v, MaxRepetitions)
			} else {
				reps = v
			}
		}
	}
	seed := uint64(DefaultSeed)
	if s, ok := scalar("seed", "a whole number"); ok {
		v, err := parseSeed(s)
		if err != nil {
			pr.Add(w.Val("seed"), "seed", "%v", err)
		}
		seed = v
	}
	if n := nodes["seeds"]; n != nil {
		if w.Has("seed") {
			pr.Add(w.Key("seeds"), "seeds", "give either seed (the first of consecutive seeds) or seeds (a list), not both")
		}
		first := map[uint64]int{}
		w.Sequence(n, "seeds", "a list of whole numbers, e.g. [1, 2, 3]", func(i int, item *yaml.Node) {
			field := fmt.Sprintf("seeds[%d]", i)
			s, ok := w.Scalar(item, field, "a whole number")
			if !ok {
				return
			}
			v, err := parseSeed(s)
			switch j, dup := first[v]; {
			case err != nil:
				pr.Add(yamldoc.PosOf(item), field, "%v", err)
			case dup:
				pr.Add(yamldoc.PosOf(item), field, "seed %d is listed twice (also seeds[%d]); repetitions with one seed are identical", v, j)
			default:
				first[v] = i
				out.seeds = append(out.seeds, v)
			}
		})
		if v := yamldoc.Deref(n); v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
			pr.Add(w.Val("seeds"), "seeds", "empty; list at least one seed, or leave seeds out")
		}
		if w.Has("repetitions") && !w.IsBad("repetitions") && reps != len(out.seeds) && len(out.seeds) > 0 {
			pr.Add(w.Val("repetitions"), "repetitions", "%d, but seeds lists %d; leave repetitions out, it follows from seeds", reps, len(out.seeds))
		}
		return out
	}
	for i := range reps {
		out.seeds = append(out.seeds, seed+uint64(i))
	}
	return out
}

// blocks decodes the parameter blocks and keeps those the cell's policy
// and transport use.
func (l *loader) blocks(cfg *Config, nodes map[string]*yaml.Node, used map[string]bool, pr *yamldoc.Problems) {
	uses := usedBlocks(cfg)
	for _, b := range blocks {
		n := nodes[b.Key]
		w := yamldoc.NewWalker(n)
		v := b.Decode(n, w, params.Env{RTT: cfg.BaseRTT, Dilation: cfg.Regime.Dilation}) // always, so mistakes in unused blocks are reported too
		pr.AddAll(b.Key, w.Problems())
		used[b.Key] = uses[b.Key]
		if uses[b.Key] {
			setBlock(cfg, b.Key, v.Interface())
		}
	}
}

// checkWindow checks that PFLD's receiver bitmap can track a full window
// of packets: packets beyond it could neither be placed nor NACKed.
func (l *loader) checkWindow(cfg *Config, nodes map[string]*yaml.Node, w *yamldoc.Walker, pr *yamldoc.Problems) {
	msg := windowProblem(cfg)
	if msg == "" {
		return
	}
	at, field := w.Pos(), "host.window"
	if k, _ := mappingEntry(nodes["host"], "window"); k != nil {
		at = yamldoc.PosOf(k)
	} else if k, _ := mappingEntry(nodes["pfld"], "bitmap_bits"); k != nil {
		at, field = yamldoc.PosOf(k), "pfld.bitmap_bits"
	}
	pr.Add(at, field, "%s", msg)
}

// windowProblem says why PFLD's receiver bitmap cannot track a full
// window of the cell's packets, "" if it can.
func windowProblem(cfg *Config) string {
	if cfg.PFLD == nil || cfg.fabric == nil {
		return ""
	}
	payload := uint64(cfg.fabric.MTU + ethernetHeader - int(cfg.Host.Header))
	packets := (cfg.Host.Window + payload - 1) / payload
	if packets <= uint64(cfg.PFLD.BitmapBits) {
		return ""
	}
	return fmt.Sprintf("a window of %s is %d packets of %d bytes, more than the %d PSNs pfld.bitmap_bits tracks; lower host.window or raise pfld.bitmap_bits",
		units.FormatSize(cfg.Host.Window), packets, payload, cfg.PFLD.BitmapBits)
}

// problemsOf returns the collected problems, sorted, with no file name
// unless they come from another file.
func problemsOf(pr *yamldoc.Problems) []*FieldError {
	err := pr.Result("")
	if err == nil {
		return nil
	}
	return err.(yamldoc.Errors)
}

// parseHeadroom parses probe_headroom: a share of the buffer, or off.
func parseHeadroom(s string) (float64, error) {
	if strings.EqualFold(strings.TrimSpace(s), "off") {
		return 0, nil
	}
	return params.ParseFraction(s)
}

// checkHeadroom checks a probe headroom against the data plane and the
// buffers it reserves a share of: what is left must still take a full
// frame on every link.
func checkHeadroom(h float64, dp DataPlane, t *topology.Topology) error {
	switch {
	case h < 0 || h > bpf.MaxProbeHeadroom:
		return fmt.Errorf("%g is outside 0..%g of the buffer (a headroom is a small reserve: the paper needs under 0.2%%)", h, bpf.MaxProbeHeadroom)
	case h == 0:
		return nil
	case dp == LineRate:
		return fmt.Errorf("needs dataplane: shaped: line-rate switches have no queues")
	case t == nil:
		return nil
	}
	for i := range t.Links {
		l := &t.Links[i]
		for _, side := range []topology.Side{topology.SideA, topology.SideB} {
			buf := l.Params(side).BufferBytes
			if left := buf - uint64(float64(buf)*h); left < uint64(l.MTU+ethernetHeader) {
				return fmt.Errorf("leaves %s of the %s buffer of %s to data, less than a %d-byte frame",
					units.FormatSize(left), units.FormatSize(buf), l.Direction(side), l.MTU+ethernetHeader)
			}
		}
	}
	return nil
}
