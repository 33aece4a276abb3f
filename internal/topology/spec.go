package topology

import (
	"time"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/internal/yamldoc"
)

// Defaults for every link direction, used unless a file says otherwise.
const (
	DefaultRate   = 100 * units.Mbit // bits per second
	DefaultBuffer = 64 * units.KiB   // bytes of egress queue per direction
	DefaultECN    = 16 * units.KiB   // CE marking threshold, bytes
	DefaultMTU    = 1500             // bytes
	// Links have no propagation delay and no jitter unless a file gives
	// them (delay, jitter).
)

// MaxDelay bounds a link direction's delay and jitter: a packet carries
// the sum along its path in 32-bit nanosecond words (hostagent/wire),
// which six links of MaxDelay leave room for.
const MaxDelay = 500 * time.Millisecond

// Limits on the size of a fabric and on link MTUs.
const (
	MinK = 4  // smallest fat tree: 16 hosts, 20 switches
	MaxK = 16 // largest fat tree: 1024 hosts, 320 switches (namespaces get expensive)

	MinLeaves, MaxLeaves             = 2, 64
	MinSpines, MaxSpines             = 1, 64
	MinHostsPerLeaf, MaxHostsPerLeaf = 1, 64

	// MinMTU is the IPv4 minimum reassembly size; MaxMTU is the usual
	// jumbo-frame ceiling of real switches.
	MinMTU = 576
	MaxMTU = 9216
)

// Spec is a topology file as written, before any checking: sizes, link
// parameter defaults and overrides. Values are kept as text (e.g. "25Mbit")
// so that Resolve can report a bad one together with every other problem.
//
// Spec decodes itself from YAML strictly (unknown fields are problems) and
// remembers where each value was, so a scenario file can embed it
// (`topology: ...`) and still get file:line:column errors. Decoding never
// fails; problems found while decoding are reported by Resolve along with
// the rest. A Spec may also be built in Go, in which case errors carry no
// line numbers.
type Spec struct {
	// Name of the topology; defaults to the file's base name.
	Name string `yaml:"name,omitempty"`
	// Kind is FatTree or LeafSpine.
	Kind Kind `yaml:"kind"`
	// K sizes a fat tree: even, MinK..MaxK.
	K int `yaml:"k,omitempty"`
	// Leaves, Spines and HostsPerLeaf size a leaf-spine.
	Leaves       int `yaml:"leaves,omitempty"`
	Spines       int `yaml:"spines,omitempty"`
	HostsPerLeaf int `yaml:"hosts_per_leaf,omitempty"`

	// Links are the defaults for every link, both directions.
	Links Params `yaml:"links,omitempty"`
	// Stages override Links for every link of a stage.
	Stages map[Stage]Params `yaml:"stages,omitempty"`
	// Switches override Stages for every link of a switch. When both ends
	// of a link are listed, the one written later in the file wins
	// (alphabetical order for a Spec built in Go).
	Switches map[string]Params `yaml:"switches,omitempty"`
	// Overrides set single links or link directions, highest precedence;
	// later entries win over earlier ones.
	Overrides []Override `yaml:"overrides,omitempty"`

	org         yamldoc.Walker
	switchOrder []string // Switches keys in file order
}

// Params is a partial set of link parameters; empty fields are inherited
// from the level below (Spec.Links < Stages < Switches < Overrides).
type Params struct {
	Rate   string `yaml:"rate,omitempty"`   // e.g. "100Mbit", see units.ParseRate
	Buffer string `yaml:"buffer,omitempty"` // egress buffer per direction, e.g. "64KiB"
	ECN    string `yaml:"ecn,omitempty"`    // CE marking threshold, e.g. "16KiB"; "off" or "0" disables
	MTU    int    `yaml:"mtu,omitempty"`    // bytes; per link (both directions)
	// Delay is the one-way propagation delay, e.g. "1.5us" or "2ms"
	// (time.ParseDuration); Jitter bounds a random extra delay per packet
	// (docs/delay.md).
	Delay  string `yaml:"delay,omitempty"`
	Jitter string `yaml:"jitter,omitempty"`

	org yamldoc.Walker
}

// Override changes the parameters of one link: both directions when
// Between names its two ends, one direction (From towards To) otherwise.
// A one-direction override cannot set MTU, which is per link.
type Override struct {
	Between []string `yaml:"between,flow,omitempty"`
	From    string   `yaml:"from,omitempty"`
	To      string   `yaml:"to,omitempty"`
	Params  `yaml:",inline"`

	org yamldoc.Walker
}

// empty reports whether p sets nothing at all.
func (p *Params) empty() bool {
	return p.Rate == "" && p.Buffer == "" && p.ECN == "" && !p.hasMTU() && p.Delay == "" && p.Jitter == ""
}

// hasMTU is true when the file wrote mtu, even "mtu: 0", so that a zero is
// reported as out of range instead of silently meaning "inherit".
func (p *Params) hasMTU() bool { return p.MTU != 0 || p.org.Has("mtu") }

// has reports whether a sizing field was given, in the file or in Go.
func (s *Spec) has(field string) bool {
	if s.org.Has(field) {
		return true
	}
	switch field {
	case "k":
		return s.K != 0
	case "leaves":
		return s.Leaves != 0
	case "spines":
		return s.Spines != 0
	case "hosts_per_leaf":
		return s.HostsPerLeaf != 0
	}
	return false
}

// MarshalYAML writes the override flat, as it is written in files.
// yaml.v3 would otherwise drop the inlined Params: it does not encode the
// fields of an inlined struct that has its own UnmarshalYAML.
func (o Override) MarshalYAML() (any, error) {
	return struct {
		Between []string `yaml:"between,flow,omitempty"`
		From    string   `yaml:"from,omitempty"`
		To      string   `yaml:"to,omitempty"`
		Rate    string   `yaml:"rate,omitempty"`
		Buffer  string   `yaml:"buffer,omitempty"`
		ECN     string   `yaml:"ecn,omitempty"`
		MTU     int      `yaml:"mtu,omitempty"`
		Delay   string   `yaml:"delay,omitempty"`
		Jitter  string   `yaml:"jitter,omitempty"`
	}{o.Between, o.From, o.To, o.Rate, o.Buffer, o.ECN, o.MTU, o.Delay, o.Jitter}, nil
}
