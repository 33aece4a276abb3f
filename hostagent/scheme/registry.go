package scheme

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ftlab/ftlab/hostagent/transport"
)

// Names lists the schemes New knows.
func Names() []string {
	return []string{"ecmp", "rps", "rss", "rss+pfld", "rss+rack", "psnpath", "gapnack", "reps", "plb"}
}

// New returns the scheme called name with its parameters, as a scenario
// would give them: keys and values as text, durations in Go syntax
// ("15us"). Unknown names and keys are errors.
//
//	ecmp      keep_path_on_rto
//	rps       (none)
//	rss       sigma tau jitter metric no_feedback keep_path_on_rto
//	rss+pfld  the rss keys, and bitmap_bits periodic periodic_any_rate
//	          no_tail_probes no_section_probes no_rtx_probes
//	rss+rack  the rss keys, and reo_wnd_frac reo_wnd adaptive_reo_wnd
//	          pto_srtts max_ack_delay no_tlp
//	psnpath   paths base_ev beta interval explore remove min_samples
//	          bitmap_bits max_walk no_path_manager no_fpsn keep_path_on_rto
//	gapnack   the psnpath keys but max_walk and no_fpsn (a baseline: the
//	          psnpath sender with a global-gap NACK receiver)
//	reps      buffer freeze no_freeze
//	plb       ecn_threshold rounds keep_path_on_rto
func New(name string, params map[string]string) (transport.Scheme, error) {
	p := &params_{m: params, used: map[string]bool{}}
	var s transport.Scheme
	var err error
	switch name {
	case "ecmp":
		s = ECMP{KeepPathOnRTO: p.bool("keep_path_on_rto")}
	case "rps":
		s = RPS{}
	case "rss":
		s, err = NewRSS(p.rss())
	case "rss+pfld":
		c := PFLD{
			RSS:             p.rss(),
			BitmapBits:      p.int("bitmap_bits"),
			Periodic:        p.int("periodic"),
			PeriodicAnyRate: p.bool("periodic_any_rate"),
			NoTailProbes:    p.bool("no_tail_probes"),
			NoSectionProbes: p.bool("no_section_probes"),
			NoRTXProbes:     p.bool("no_rtx_probes"),
		}
		s, err = NewPFLD(c)
	case "rss+rack":
		c := RACK{
			RSS:         p.rss(),
			ReoWndFrac:  p.float("reo_wnd_frac"),
			ReoWnd:      p.dur("reo_wnd"),
			Adaptive:    p.bool("adaptive_reo_wnd"),
			PTOSRTTs:    p.float("pto_srtts"),
			MaxACKDelay: p.dur("max_ack_delay"),
			NoTLP:       p.bool("no_tlp"),
		}
		s, err = NewRACK(c)
	case "psnpath":
		c := p.psnpath()
		c.MaxWalk = p.int("max_walk")
		c.NoFPSN = p.bool("no_fpsn")
		s, err = NewPSNPath(c)
	case "gapnack":
		s, err = NewGapNACK(p.psnpath())
	case "reps":
		s, err = NewREPS(REPS{Buffer: p.int("buffer"), Freeze: p.dur("freeze"), NoFreeze: p.bool("no_freeze")})
	case "plb":
		s, err = NewPLB(PLB{
			ECNThreshold:  p.float("ecn_threshold"),
			Rounds:        p.int("rounds"),
			KeepPathOnRTO: p.bool("keep_path_on_rto"),
		})
	default:
		return nil, fmt.Errorf("scheme: unknown scheme %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	if p.err != nil {
		return nil, fmt.Errorf("scheme %s: %w", name, p.err)
	}
	if err != nil {
		return nil, err
	}
	var unknown []string
	for k := range params {
		if !p.used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("scheme %s: unknown parameters %s", name, strings.Join(unknown, ", "))
	}
	return s, nil
}

// params_ reads typed parameters, remembering the first error and which
// keys were read.
type params_ struct {
	m    map[string]string
	used map[string]bool
	err  error
}

func (p *params_) get(k string) (string, bool) {
	v, ok := p.m[k]
	p.used[k] = true
	return v, ok
}

func (p *params_) fail(k, v string, err error) {
	if p.err == nil {
		p.err = fmt.Errorf("parameter %s=%q: %w", k, v, err)
	}
}

func (p *params_) int(k string) int {
	v, ok := p.get(k)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		p.fail(k, v, err)
	}
	return n
}

func (p *params_) bool(k string) bool {
	v, ok := p.get(k)
	if !ok {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail(k, v, err)
	}
	return b
}

func (p *params_) float(k string) float64 {
	v, ok := p.get(k)
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
		err = errors.New("not a finite number")
	}
	if err != nil {
		p.fail(k, v, err)
	}
	return f
}

func (p *params_) dur(k string) time.Duration {
	v, ok := p.get(k)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		p.fail(k, v, err)
	}
	return d
}

func (p *params_) rss() RSS {
	c := RSS{
		Sigma:         p.int("sigma"),
		Tau:           p.dur("tau"),
		Jitter:        p.dur("jitter"),
		NoFeedback:    p.dur("no_feedback"),
		KeepPathOnRTO: p.bool("keep_path_on_rto"),
	}
	if v, ok := p.get("metric"); ok {
		m, err := ParseMetric(v)
		if err != nil {
			p.fail("metric", v, err)
		}
		c.Metric = m
	}
	return c
}

func (p *params_) psnpath() PSNPath {
	c := PSNPath{
		Paths:         p.int("paths"),
		Beta:          p.float("beta"),
		Interval:      p.dur("interval"),
		Explore:       p.float("explore"),
		Remove:        p.float("remove"),
		MinSamples:    p.int("min_samples"),
		BitmapBits:    p.int("bitmap_bits"),
		NoPathManager: p.bool("no_path_manager"),
		KeepPathOnRTO: p.bool("keep_path_on_rto"),
	}
	if v, ok := p.get("base_ev"); ok {
		n, err := strconv.ParseUint(v, 10, 16)
		if err != nil {
			p.fail("base_ev", v, err)
		}
		c.BaseEV, c.FixedBase = uint16(n), true
	}
	return c
}
