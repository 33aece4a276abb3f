package scheme

import (
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

// registry looks transports up and checks their blocks.
var registry = params.Registry[Transport, Params]{
	Kind: "scheme", Prefix: "scheme", Entries: Transports,
	Name: func(t Transport) string { return t.Name },
	Take: func(t Transport) []string { return t.Blocks },
}

// Names lists the transports New knows.
func Names() []string { return registry.Names() }

// Lookup returns the registry entry of a transport.
func Lookup(name string) (Transport, error) { return registry.Lookup(name) }

// Defaults returns the parameter blocks of a transport with every default
// filled in, for a fabric whose base RTT is env.RTT.
func Defaults(name string, env params.Env) (*Params, error) { return registry.Defaults(name, env) }

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
	t, err := registry.Check(name, p)
	if err != nil {
		return nil, err
	}
	if p == nil {
		p = &Params{}
	}
	return t.New(p), nil
}

// SetParam sets one parameter of transport name's blocks in p from text,
// as a command line gives it: "rss.sigma" names the block, a bare "sigma"
// is looked up among the blocks the transport takes.
func SetParam(p *Params, name, key, text string, env params.Env) error {
	return registry.SetParam(p, name, key, text, env)
}
