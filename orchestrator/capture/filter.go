package capture

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/hostagent/wire"
	"github.com/ftlab/ftlab/internal/topology"
)

// Filter selects frames. The zero Filter (and ParseFilter of "") selects
// every frame.
type Filter struct {
	src   string
	match func(*Frame) bool
}

// String returns the expression the filter was parsed from.
func (f Filter) String() string { return f.src }

// Match reports whether the filter selects fr.
func (f Filter) Match(fr *Frame) bool { return f.match == nil || f.match(fr) }

// FilterSyntax is the filter language in brief, for help texts; the full
// description is docs/capture.md.
const FilterSyntax = `primitives, combined with and/&&, or/||, not/! and parentheses:
  type data|ack|nack|tail|section_end|periodic|rtx|probe[,...]   ftlab packet type (probe: the four probes)
  flow N  msg N  psn N  ev N  len N  ttl N  sport N  dport N      N: 7, 0x12, 100-200, >=100, <5, or a comma list
  flag retx|ece|dup|probe_ack[,...]                              ftlab header flags
  src A  dst A  host A                                            A: a node name, an IPv4 address or prefix
  in  out                                                         direction at the captured port
  forwarded  dropped  local  trimmed  ce                          what the switch did (switch ports)
  cause link_down|corrupt|non_ipv4|malformed|ttl|no_route|buffer  why it dropped
  port N  iface NAME                                              the captured port (number, or ifname = peer)
  ftlab  udp  ip                                                  the frame carries an ftlab header, UDP, IPv4`

// ParseFilter compiles a filter expression (FilterSyntax). Node names in
// src/dst/host are resolved in t.
func ParseFilter(expr string, t *topology.Topology) (Filter, error) {
	toks, err := lex(expr)
	if err != nil {
		return Filter{}, err
	}
	if len(toks) == 0 {
		return Filter{}, nil
	}
	p := &parser{toks: toks, topo: t, src: expr}
	m, err := p.or()
	if err != nil {
		return Filter{}, err
	}
	if p.i < len(p.toks) {
		return Filter{}, p.errf(p.toks[p.i], "unexpected %q; join primitives with and, or", p.toks[p.i].s)
	}
	return Filter{src: expr, match: m}, nil
}

type token struct {
	s   string
	col int // 1-based
}

func lex(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '(' || c == ')' || (c == '!' && (i+1 == len(s) || s[i+1] != '=')):
			toks = append(toks, token{s[i : i+1], i + 1})
			i++
		case strings.HasPrefix(s[i:], "&&") || strings.HasPrefix(s[i:], "||"):
			toks = append(toks, token{s[i : i+2], i + 1})
			i += 2
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n()", rune(s[j])) && !strings.HasPrefix(s[j:], "&&") && !strings.HasPrefix(s[j:], "||") {
				j++
			}
			toks = append(toks, token{s[i:j], i + 1})
			i = j
		}
	}
	return toks, nil
}

type parser struct {
	toks []token
	i    int
	topo *topology.Topology
	src  string
}

type matcher = func(*Frame) bool

func (p *parser) errf(t token, format string, args ...any) error {
	return fmt.Errorf("filter %q, column %d: %s", p.src, t.col, fmt.Sprintf(format, args...))
}

func (p *parser) peek() (token, bool) {
	if p.i < len(p.toks) {
		return p.toks[p.i], true
	}
	return token{}, false
}

func (p *parser) next(what string) (token, error) {
	t, ok := p.peek()
	if !ok {
		return token{}, fmt.Errorf("filter %q: ends where %s was expected", p.src, what)
	}
	p.i++
	return t, nil
}

func (p *parser) or() (matcher, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for {
		t, ok := p.peek()
		if !ok || (t.s != "or" && t.s != "||") {
			return l, nil
		}
		p.i++
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		a, b := l, r
		l = func(f *Frame) bool { return a(f) || b(f) }
	}
}

func (p *parser) and() (matcher, error) {
	l, err := p.not()
	if err != nil {
		return nil, err
	}
	for {
		t, ok := p.peek()
		if !ok || (t.s != "and" && t.s != "&&") {
			return l, nil
		}
		p.i++
		r, err := p.not()
		if err != nil {
			return nil, err
		}
		a, b := l, r
		l = func(f *Frame) bool { return a(f) && b(f) }
	}
}

func (p *parser) not() (matcher, error) {
	t, err := p.next("a primitive such as type data")
	if err != nil {
		return nil, err
	}
	switch t.s {
	case "not", "!":
		m, err := p.not()
		if err != nil {
			return nil, err
		}
		return func(f *Frame) bool { return !m(f) }, nil
	case "(":
		m, err := p.or()
		if err != nil {
			return nil, err
		}
		c, err := p.next(`")"`)
		if err != nil {
			return nil, err
		}
		if c.s != ")" {
			return nil, p.errf(c, "expected \")\", found %q", c.s)
		}
		return m, nil
	}
	return p.primitive(t)
}

// frame fields that take a number set.
var numFields = map[string]func(*Frame) (uint64, bool){
	"flow":  func(f *Frame) (uint64, bool) { return uint64(f.Header.Flow), f.FT },
	"msg":   func(f *Frame) (uint64, bool) { return uint64(f.Header.Msg), f.FT },
	"psn":   func(f *Frame) (uint64, bool) { return uint64(f.Header.PSN), f.FT },
	"ev":    func(f *Frame) (uint64, bool) { return uint64(f.Header.EV), f.FT },
	"len":   func(f *Frame) (uint64, bool) { return uint64(f.Len), true },
	"ttl":   func(f *Frame) (uint64, bool) { return uint64(f.TTL), f.IPv4 },
	"sport": func(f *Frame) (uint64, bool) { return uint64(f.SrcPort), f.UDP },
	"dport": func(f *Frame) (uint64, bool) { return uint64(f.DstPort), f.UDP },
	"port":  func(f *Frame) (uint64, bool) { return uint64(f.Port.Port), true },
}

var typeNames = map[string][]wire.Type{
	"data": {wire.TypeData}, "ack": {wire.TypeACK}, "nack": {wire.TypeNACK}, "tail": {wire.TypeTail},
	"section_end": {wire.TypeSectionEnd}, "periodic": {wire.TypePeriodic}, "rtx": {wire.TypeRTX},
	"probe": {wire.TypeTail, wire.TypeSectionEnd, wire.TypePeriodic, wire.TypeRTX},
}

var flagByName = map[string]wire.Flags{"retx": wire.FlagRetx, "ece": wire.FlagECE, "dup": wire.FlagDup, "probe_ack": wire.FlagProbeACK}

var bareWords = map[string]matcher{
	"in":        func(f *Frame) bool { return f.Dir == bpf.TapIn },
	"out":       func(f *Frame) bool { return f.Dir == bpf.TapOut },
	"forwarded": func(f *Frame) bool { return f.Port.Switch && f.Verdict == bpf.TapForward },
	"dropped":   func(f *Frame) bool { return f.Port.Switch && f.Verdict == bpf.TapDrop },
	"local":     func(f *Frame) bool { return f.Port.Switch && f.Verdict == bpf.TapLocal },
	"trimmed":   func(f *Frame) bool { return f.Flags&bpf.TapTrimmed != 0 },
	"ce":        func(f *Frame) bool { return f.Flags&bpf.TapCE != 0 },
	"ftlab":     func(f *Frame) bool { return f.FT },
	"udp":       func(f *Frame) bool { return f.UDP },
	"ip":        func(f *Frame) bool { return f.IPv4 },
}

func (p *parser) primitive(t token) (matcher, error) {
	if m, ok := bareWords[t.s]; ok {
		return m, nil
	}
	if get, ok := numFields[t.s]; ok {
		set, err := p.numSet(t.s)
		if err != nil {
			return nil, err
		}
		return func(f *Frame) bool {
			v, ok := get(f)
			return ok && set.has(v)
		}, nil
	}
	switch t.s {
	case "type":
		var types []wire.Type
		err := p.list("a packet type ("+keys(typeNames)+")", func(a token) error {
			ts, ok := typeNames[strings.ToLower(a.s)]
			if !ok {
				return p.errf(a, "unknown packet type %q (valid: %s)", a.s, keys(typeNames))
			}
			types = append(types, ts...)
			return nil
		})
		if err != nil {
			return nil, err
		}
		return func(f *Frame) bool { return f.FT && slices.Contains(types, f.Header.Type) }, nil
	case "flag":
		var want wire.Flags
		err := p.list("a flag ("+keys(flagByName)+")", func(a token) error {
			fl, ok := flagByName[strings.ToLower(a.s)]
			if !ok {
				return p.errf(a, "unknown flag %q (valid: %s)", a.s, keys(flagByName))
			}
			want |= fl
			return nil
		})
		if err != nil {
			return nil, err
		}
		return func(f *Frame) bool { return f.FT && f.Header.Flags&want != 0 }, nil
	case "cause":
		var causes []bpf.TapCause
		names := bpf.TapCauses()
		err := p.list("a drop cause ("+strings.Join(names, ", ")+")", func(a token) error {
			i := slices.Index(names, a.s)
			if i < 0 {
				return p.errf(a, "unknown drop cause %q (valid: %s)", a.s, strings.Join(names, ", "))
			}
			causes = append(causes, bpf.TapCause(i+1))
			return nil
		})
		if err != nil {
			return nil, err
		}
		return func(f *Frame) bool {
			return f.Port.Switch && f.Verdict == bpf.TapDrop && slices.Contains(causes, f.Cause)
		}, nil
	case "src", "dst", "host":
		var prefixes []netip.Prefix
		err := p.list("a node name, IPv4 address or prefix", func(a token) error {
			pf, err := p.addr(a)
			prefixes = append(prefixes, pf)
			return err
		})
		if err != nil {
			return nil, err
		}
		in := func(a netip.Addr) bool {
			return slices.ContainsFunc(prefixes, func(pf netip.Prefix) bool { return pf.Contains(a) })
		}
		switch t.s {
		case "src":
			return func(f *Frame) bool { return f.IPv4 && in(f.Src) }, nil
		case "dst":
			return func(f *Frame) bool { return f.IPv4 && in(f.Dst) }, nil
		}
		return func(f *Frame) bool { return f.IPv4 && (in(f.Src) || in(f.Dst)) }, nil
	case "iface":
		a, err := p.next("an interface name (the peer node's name)")
		if err != nil {
			return nil, err
		}
		return func(f *Frame) bool { return f.Port.Ifname == a.s || f.Port.Peer == a.s }, nil
	}
	return nil, p.errf(t, "unknown primitive %q; %s", t.s, "valid: type, flow, msg, psn, ev, len, ttl, sport, dport, flag, src, dst, host, in, out, forwarded, dropped, local, trimmed, ce, cause, port, iface, ftlab, udp, ip")
}

// list reads one argument word and calls fn for each comma-separated item.
func (p *parser) list(what string, fn func(token) error) error {
	a, err := p.next(what)
	if err != nil {
		return err
	}
	return p.items(a, fn)
}

// items calls fn for each comma-separated item of a.
func (p *parser) items(a token, fn func(token) error) error {
	col := a.col
	for _, item := range strings.Split(a.s, ",") {
		if item == "" {
			return p.errf(token{a.s, col}, "empty item in %q", a.s)
		}
		if err := fn(token{item, col}); err != nil {
			return err
		}
		col += len(item) + 1
	}
	return nil
}

func (p *parser) addr(a token) (netip.Prefix, error) {
	if p.topo != nil {
		if n, ok := p.topo.Node(a.s); ok {
			return netip.PrefixFrom(n.Addr, n.Addr.BitLen()), nil
		}
	}
	if ad, err := netip.ParseAddr(a.s); err == nil {
		return netip.PrefixFrom(ad, ad.BitLen()), nil
	}
	if pf, err := netip.ParsePrefix(a.s); err == nil {
		return pf.Masked(), nil
	}
	hint := ""
	if p.topo != nil {
		hint = "; " + p.topo.Inventory(true)
	}
	return netip.Prefix{}, p.errf(a, "%q is neither a node, an IPv4 address nor a prefix%s", a.s, hint)
}

// numSet is a union of closed ranges.
type numSet [][2]uint64

func (s numSet) has(v uint64) bool {
	for _, r := range s {
		if v >= r[0] && v <= r[1] {
			return true
		}
	}
	return false
}

func (p *parser) numSet(field string) (numSet, error) {
	a, err := p.next("a number, range or list after " + field)
	if err != nil {
		return nil, err
	}
	if op := a.s; op == ">" || op == ">=" || op == "<" || op == "<=" {
		n, err := p.next("a number after " + op)
		if err != nil {
			return nil, err
		}
		a = token{op + n.s, a.col}
	}
	var set numSet
	err = p.items(a, func(it token) error {
		r, err := numRange(it.s)
		if err != nil {
			return p.errf(it, "%s: %v", field, err)
		}
		set = append(set, r)
		return nil
	})
	return set, err
}

func numRange(s string) ([2]uint64, error) {
	const maxU = ^uint64(0)
	for _, op := range []string{">=", "<=", ">", "<"} {
		if rest, ok := strings.CutPrefix(s, op); ok {
			n, err := num(rest)
			if err != nil {
				return [2]uint64{}, err
			}
			switch op {
			case ">=":
				return [2]uint64{n, maxU}, nil
			case "<=":
				return [2]uint64{0, n}, nil
			case ">":
				if n == maxU {
					return [2]uint64{1, 0}, nil // empty
				}
				return [2]uint64{n + 1, maxU}, nil
			default:
				if n == 0 {
					return [2]uint64{1, 0}, nil
				}
				return [2]uint64{0, n - 1}, nil
			}
		}
	}
	lo, hi, isRange := strings.Cut(s, "..")
	if !isRange {
		lo, hi, isRange = strings.Cut(s, "-")
	}
	a, err := num(lo)
	if err != nil {
		return [2]uint64{}, err
	}
	if !isRange {
		return [2]uint64{a, a}, nil
	}
	b, err := num(hi)
	if err != nil {
		return [2]uint64{}, err
	}
	if b < a {
		return [2]uint64{}, fmt.Errorf("range %s runs backwards", s)
	}
	return [2]uint64{a, b}, nil
}

func num(s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number (decimal, or hex as 0x12)", s)
	}
	return v, nil
}

func keys[V any](m map[string]V) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ", ")
}
