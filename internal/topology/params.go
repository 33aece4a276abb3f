package topology

import (
	"fmt"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/internal/yamldoc"
)

// source is where a link parameter value came from, so that a conflict
// (an ECN threshold above the buffer) is blamed on the line that caused it
// rather than on every link it affects.
type source struct {
	field string // e.g. "stages.agg-core.buffer"; "" for defaults and already resolved values
	pos   yamldoc.Pos
	rank  int    // order of application: the value with the higher rank was applied later
	what  string // describes a source without a field
}

func (s *source) describe() string {
	switch {
	case s.field == "":
		return s.what
	case s.pos.Line > 0:
		return fmt.Sprintf("set by %s at line %d", s.field, s.pos.Line)
	}
	return "set by " + s.field
}

type value struct {
	n   uint64
	src *source
}

// change is a parsed Params block: the values to set, nil when inherited.
type change struct{ rate, buffer, ecn, mtu, delay, jitter *value }

func defaults() change {
	src := &source{what: "the default"}
	return change{
		rate:   &value{DefaultRate, src},
		buffer: &value{DefaultBuffer, src},
		ecn:    &value{DefaultECN, src},
		mtu:    &value{DefaultMTU, src},
		delay:  &value{0, src},
		jitter: &value{0, src},
	}
}

// compile parses p's values, reporting each bad one under path (the field
// path of p itself, e.g. "stages.agg-core"). rank orders it among the
// other blocks: later blocks override earlier ones.
func (p *Params) compile(path string, rank int, pr *yamldoc.Problems) change {
	var c change
	set := func(field string, n uint64) *value {
		return &value{n, &source{field: yamldoc.JoinField(path, field), pos: p.org.Val(field), rank: rank}}
	}
	bad := func(field, format string, args ...any) {
		pr.Add(p.org.Val(field), yamldoc.JoinField(path, field), format, args...)
	}
	if p.Rate != "" {
		switch v, err := units.ParseRate(p.Rate); {
		case err != nil:
			bad("rate", "%v", err)
		case v == 0:
			bad("rate", "must be greater than 0")
		default:
			c.rate = set("rate", v)
		}
	}
	if p.Buffer != "" {
		if v, err := units.ParseSize(p.Buffer); err != nil {
			bad("buffer", "%v", err)
		} else {
			c.buffer = set("buffer", v)
		}
	}
	if p.ECN != "" {
		if strings.EqualFold(strings.TrimSpace(p.ECN), "off") {
			c.ecn = set("ecn", 0)
		} else if v, err := units.ParseSize(p.ECN); err != nil {
			bad("ecn", `%v; or write "off" to disable marking`, err)
		} else {
			c.ecn = set("ecn", v)
		}
	}
	duration := func(field, s string) *value {
		if s == "" {
			return nil
		}
		d, err := time.ParseDuration(strings.TrimSpace(s))
		switch {
		case err != nil:
			bad(field, "cannot parse %q: want %s (units ns, us, ms, s)", s, wantDelay)
		case d < 0:
			bad(field, "%v is negative; a %s must be 0 or more", d, field)
		case d > MaxDelay:
			bad(field, "%v is above the %v a link direction may have", d, MaxDelay)
		default:
			return set(field, uint64(d))
		}
		return nil
	}
	c.delay = duration("delay", p.Delay)
	c.jitter = duration("jitter", p.Jitter)
	if p.hasMTU() && !p.org.IsBad("mtu") {
		if p.MTU < MinMTU || p.MTU > MaxMTU {
			bad("mtu", "%d is out of range; mtu must be from %d to %d bytes", p.MTU, MinMTU, MaxMTU)
		} else {
			c.mtu = set("mtu", uint64(p.MTU))
		}
	}
	return c
}

// checkSetsSomething reports a block that sets no parameter at all, which
// is always a mistake (usually a misplaced indentation). Blocks that
// already have a decoding problem are skipped: that problem says more.
func (p *Params) checkSetsSomething(at yamldoc.Pos, path string, pr *yamldoc.Problems) {
	if p.empty() && len(p.org.Problems()) == 0 {
		pr.Add(at, path, "sets nothing; give at least one of rate, buffer, ecn, mtu, delay, jitter")
	}
}
