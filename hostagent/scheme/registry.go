package scheme

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
)

// Transport is one registry entry: a transport scheme with the parameter
// blocks it takes and its constructor. Adding a transport is adding an
// entry (and its blocks to Params, if it has its own).
type Transport struct {
	Name string
	// Paths and Recovery say in one line each how the scheme spreads a
	// message's packets and how it recovers losses (docs, --help).
	Paths, Recovery string
	// Blocks are the keys of the parameter blocks it reads.
	Blocks []string
	// New builds the scheme from validated blocks: every block in Blocks
	// is present.
	New func(p *Params) transport.Scheme
}

// Transports is the registry, in the order docs list them.
var Transports = []Transport{
	{Name: "ecmp", Blocks: []string{"ecmp"},
		Paths:    "one entropy per message, so one path under ecmp switches",
		Recovery: "retransmission timeout (host.min_rto)",
		New:      func(p *Params) transport.Scheme { return ECMP{*p.ECMP} }},
	{Name: "rps",
		Paths:    "a random entropy per packet",
		Recovery: "as ecmp",
		New:      func(*Params) transport.Scheme { return RPS{} }},
	{Name: "rss", Blocks: []string{"rss"},
		Paths:    "reactive subflow spraying: rss.sigma ordered subflows, the worst rerouted every rss.tau (Ordered Chaos III)",
		Recovery: "as ecmp",
		New:      func(p *Params) transport.Scheme { return rssScheme{cfg: newRSSConfig(*p.RSS)} }},
	{Name: "rss+pfld", Blocks: []string{"rss", "pfld"},
		Paths:    "as rss",
		Recovery: "precise fast loss detection: the receiver NACKs gaps within a subflow; tail, periodic and retransmission probes (Ordered Chaos IV)",
		New:      func(p *Params) transport.Scheme { return pfldScheme{rss: newRSSConfig(*p.RSS), cfg: *p.PFLD} }},
	{Name: "rss+rack", Blocks: []string{"rss", "rack"},
		Paths:    "as rss",
		Recovery: "RACK-TLP at the sender, per subflow (RFC 8985)",
		New:      func(p *Params) transport.Scheme { return rackScheme{rss: newRSSConfig(*p.RSS), cfg: *p.RACK} }},
	{Name: "psnpath", Blocks: []string{"psnpath"},
		Paths:    "psnpath.k logical paths, PSN p on path p mod k; paths scored by ACKs and NACKs and replaced (DT-Switch)",
		Recovery: "the receiver NACKs gaps within a path (PSN-PATH)",
		New:      func(p *Params) transport.Scheme { return psnpathScheme{cfg: *p.PSNPath} }},
	{Name: "gapnack", Blocks: []string{"psnpath"},
		Paths:    "as psnpath (the same sender and path manager, the same psnpath block)",
		Recovery: "the receiver NACKs any gap in the global PSN order: the PSN-PATH paper's baseline (multipath IRN), so cross-path reordering looks like loss",
		New:      func(p *Params) transport.Scheme { return psnpathScheme{cfg: *p.PSNPath, gap: true} }},
	{Name: "reps", Blocks: []string{"reps"},
		Paths:    "sprays entropies, reusing those whose packets came back unmarked",
		Recovery: "as ecmp",
		New:      func(p *Params) transport.Scheme { return repsScheme{cfg: *p.REPS} }},
	{Name: "plb", Blocks: []string{"plb"},
		Paths:    "one entropy, changed after plb.rounds congested round trips",
		Recovery: "as ecmp",
		New:      func(p *Params) transport.Scheme { return plbScheme{cfg: *p.PLB} }},
}

// Names lists the transports New knows.
func Names() []string {
	out := make([]string, len(Transports))
	for i, t := range Transports {
		out[i] = t.Name
	}
	return out
}

// Lookup returns the registry entry of a transport.
func Lookup(name string) (Transport, error) {
	i := slices.IndexFunc(Transports, func(t Transport) bool { return t.Name == name })
	if i < 0 {
		return Transport{}, fmt.Errorf("scheme: %w", params.OneOf("scheme", name, Names()))
	}
	return Transports[i], nil
}

// Defaults returns the parameter blocks of a transport with every default
// filled in, for a fabric whose base RTT is env.RTT.
func Defaults(name string, env params.Env) (*Params, error) {
	t, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	p := &Params{}
	for _, key := range t.Blocks {
		b, _ := params.Find(Blocks, key)
		params.Put(p, key, b.Defaults(env).Interface())
	}
	return p, nil
}

// MustDefaults is Defaults for names known to be valid (tests, benchmarks).
func MustDefaults(name string, env params.Env) *Params {
	p, err := Defaults(name, env)
	if err != nil {
		panic(err)
	}
	return p
}

// New returns the transport called name with its parameter blocks. Every
// block the transport takes must be present and valid; blocks it does not
// take are an error, so a setting cannot silently do nothing.
func New(name string, p *Params) (transport.Scheme, error) {
	t, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	if p == nil {
		p = &Params{}
	}
	var errs []error
	for _, key := range t.Blocks {
		v := params.Get(p, key)
		if v == nil {
			errs = append(errs, fmt.Errorf("the %s block is missing", key))
			continue
		}
		b, _ := params.Find(Blocks, key)
		if err := b.Validate(v); err != nil {
			errs = append(errs, err)
		}
	}
	for _, key := range params.Present(p) {
		if !slices.Contains(t.Blocks, key) {
			errs = append(errs, fmt.Errorf("the %s block is not one of %s's (%s)", key, name, blockList(t.Blocks)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("scheme %s: %w", name, err)
	}
	return t.New(p), nil
}

func blockList(keys []string) string {
	if len(keys) == 0 {
		return "it takes none"
	}
	return strings.Join(keys, ", ")
}

// SetParam sets one parameter of transport name's blocks in p from text,
// as a command line gives it: "rss.sigma" names the block, a bare "sigma"
// is looked up among the blocks the transport takes.
func SetParam(p *Params, name, key, text string, env params.Env) error {
	t, err := Lookup(name)
	if err != nil {
		return err
	}
	block, field, qualified := strings.Cut(key, ".")
	if !qualified {
		field, block = key, ""
		var owners []string
		for _, k := range t.Blocks {
			b, _ := params.Find(Blocks, k)
			if slices.Contains(b.Names(), field) {
				owners = append(owners, k)
			}
		}
		switch len(owners) {
		case 0:
			return fmt.Errorf("%s takes no parameter %q (blocks: %s)", name, key, blockList(t.Blocks))
		case 1:
			block = owners[0]
		default:
			return fmt.Errorf("%q is a parameter of several blocks of %s; write one of %s.%s", key, name, strings.Join(owners, ", "), field)
		}
	}
	if !slices.Contains(t.Blocks, block) {
		return fmt.Errorf("%s does not take the %s block (blocks: %s)", name, block, blockList(t.Blocks))
	}
	b, _ := params.Find(Blocks, block)
	v := params.Get(p, block)
	if v == nil {
		v = b.Defaults(env).Interface()
		params.Put(p, block, v)
	}
	return b.Set(v, field, text, env)
}
