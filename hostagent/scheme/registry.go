package scheme

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ftlab/ftlab/hostagent/transport"
)

// Names lists the schemes New knows.
func Names() []string { return []string{"ecmp", "rps", "rss", "rss+pfld"} }

// New returns the scheme called name with its parameters, as a scenario
// would give them: keys and values as text, durations in Go syntax
// ("15us"). Unknown names and keys are errors.
//
//	ecmp      keep_path_on_rto
//	rps       (none)
//	rss       sigma tau jitter metric no_feedback keep_path_on_rto
//	rss+pfld  the rss keys, and bitmap_bits periodic periodic_any_rate
//	          no_tail_probes no_section_probes no_rtx_probes
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
