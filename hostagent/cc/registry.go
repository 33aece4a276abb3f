package cc

import (
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
)

// None is the name of no congestion control: fixed pacing at host.pacing
// and the fixed window host.window (Ofan's analysis, section 2.2).
const None = "none"

// Algorithm is one registry entry: a congestion control with the
// parameter blocks it takes and its constructor. Adding an algorithm is
// adding an entry, its block to Params and its code.
type Algorithm struct {
	Name string
	// Signal and Source say in one line each what the algorithm reacts to
	// and where it comes from (docs, --help).
	Signal, Source string
	// Blocks are the keys of the parameter blocks it reads.
	Blocks []string
	// New builds the algorithm from validated blocks: every block in
	// Blocks is present. nil is cc: none.
	New func(p *Params) transport.CongestionControl
}

// Algorithms is the registry, in the order docs list them.
var Algorithms = []Algorithm{
	{Name: None,
		Signal: "nothing: every message paces at host.pacing with at most host.window in flight",
		Source: "Ofan's analysis without congestion control (section 2.2)",
		New:    func(*Params) transport.CongestionControl { return nil }},
	{Name: "dctcp", Blocks: []string{"dctcp"},
		Signal: "ECN marks: once per window of data the window shrinks by alpha/2, alpha the smoothed fraction of marked bytes; loss halves it, a timeout restarts slow start",
		Source: "RFC 8257 over RFC 5681 (Ofan 6.5)",
		New:    func(p *Params) transport.CongestionControl { return dctcp{*p.DCTCP} }},
	{Name: "mprdma", Blocks: []string{"mprdma"},
		Signal: "ECN marks, per ACK: +1/cwnd packet unmarked, -1/2 packet marked, one window over all paths",
		Source: "MP-RDMA (Lu et al., NSDI 2018), the congestion control of Ordered Chaos's evaluation (V-A)",
		New:    func(p *Params) transport.CongestionControl { return mprdma{*p.MPRDMA} }},
	{Name: "nscc", Blocks: []string{"nscc"},
		Signal: "ECN and queueing delay together: proportional or fair increase, multiplicative decrease when both say congested, quick adapt on loss or a long queue",
		Source: "Ultra Ethernet NSCC (UE specification 1.0; htsim's model), as Ofan 6.5-6.7 runs it",
		New:    func(p *Params) transport.CongestionControl { return nscc{*p.NSCC} }},
	{Name: "swift", Blocks: []string{"swift"},
		Signal: "delay against a target scaled by hops and window: additive increase below, multiplicative decrease above, at most once per round trip",
		Source: "Swift (Kumar et al., SIGCOMM 2020), the basis of Ofan's MSwift",
		New:    func(p *Params) transport.CongestionControl { return swift{*p.Swift} }},
}

// registry looks algorithms up and checks their blocks.
var registry = params.Registry[Algorithm, Params]{
	Kind: "congestion control", Prefix: "cc", Entries: Algorithms,
	Name: func(a Algorithm) string { return a.Name },
	Take: func(a Algorithm) []string { return a.Blocks },
}

// Names lists the algorithms New knows.
func Names() []string { return registry.Names() }

// Lookup returns the registry entry of an algorithm.
func Lookup(name string) (Algorithm, error) { return registry.Lookup(name) }

// Defaults returns the parameter blocks of an algorithm with every default
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

// New returns the algorithm called name with its parameter blocks (nil
// for none). Every block it takes must be present and valid; blocks it
// does not take are an error, so a setting cannot silently do nothing.
func New(name string, p *Params) (transport.CongestionControl, error) {
	a, err := registry.Check(name, p)
	if err != nil {
		return nil, err
	}
	if p == nil {
		p = &Params{}
	}
	return a.New(p), nil
}

// SetParam sets one parameter of algorithm name's blocks in p from text,
// as a command line gives it ("swift.ai" or "ai").
func SetParam(p *Params, name, key, text string, env params.Env) error {
	return registry.SetParam(p, name, key, text, env)
}
