package scenario

import (
	"fmt"
	"math"
	"math/bits"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/internal/yamldoc"
	"gopkg.in/yaml.v3"
)

// Parameter blocks are flat mappings of typed values with defaults. They
// are declared once, as tagged structs, and decoded by reflection, so the
// decoder, the defaults and the documentation test (which checks that
// docs/scenarios.md lists every parameter with its default) cannot drift
// apart. Tags:
//
//	yaml     the key in the file
//	json     the key in the resolved record (with its unit)
//	default  the default, written as in a file and parsed like one
//	unit     for uint64: "size" (bytes) or "rate" (bit/s)
//	zero     a keyword that means 0 ("off", "line", "auto")
//	min max  inclusive bounds, written like values
//	gt lt    exclusive bounds, for fractions
//	pow2     the value must be a power of two
//	multiple the value must be a multiple of this
//	enum     the valid strings, comma-separated

// OfanParams configure the ofan and pofan policies.
type OfanParams struct {
	// AckThreshold separates the two packet size classes of Ofan section
	// 4.1: IP packets of at most this many bytes (ACKs, NACKs, probes,
	// trimmed headers) use their own pointers, started half a rotation
	// away from the data pointers.
	AckThreshold uint64 `yaml:"ack_threshold" json:"ack_threshold_bytes" default:"128B" unit:"size" min:"28B" max:"9216B"`
}

// POfanParams configure the pofan policy.
type POfanParams struct {
	// Pipe is the number of ports per pipe, each pipe keeping its own
	// pointers (4 in current ASICs, Ofan section 5.1; 1 is one pointer set
	// per input port).
	Pipe int `yaml:"pipe" json:"pipe" default:"4" min:"1" max:"64"`
}

// ARParams configure the ar policy.
type ARParams struct {
	// Quantum is the granularity at which queue backlogs are compared:
	// uplinks whose backlogs fall in the same quantum are equally good,
	// and one of them is picked at random. switchd's default is one
	// full-size packet.
	Quantum uint64 `yaml:"quantum" json:"quantum_bytes" default:"1500B" unit:"size" min:"1B" max:"1MiB"`
}

// RSSParams configure reactive subflow spraying (Ordered Chaos III).
type RSSParams struct {
	// Sigma is the number of subflows; packet PSN p goes on subflow
	// p mod sigma. A power of two: the low log2(sigma) entropy bits carry
	// the subflow.
	Sigma int `yaml:"sigma" json:"sigma" default:"16" min:"1" max:"256" pow2:"true"`
	// Tau is the rerouting interval: at the first feedback after each
	// deadline the worst subflow moves to a new path. The paper asks for
	// "a small but reasonable (multiple of RTT) value": by default two base
	// RTTs of the cell's fabric (Config.BaseRTT), whatever its rate.
	Tau time.Duration `yaml:"tau" json:"tau_ns" default:"2rtt" rtt:"ok" min:"1us"`
	// Jitter is the most random time added to each deadline, so flows do
	// not reroute in step.
	Jitter time.Duration `yaml:"jitter" json:"jitter_ns" default:"0.1rtt" rtt:"ok"`
	// Metric ranks subflows: mean RTT, maximum RTT or fraction of ECN
	// marks over the interval (the names hostagent/scheme uses).
	Metric string `yaml:"metric" json:"metric" default:"mean-rtt" enum:"mean-rtt,max-rtt,ecn-fraction"`
	// NoFeedback reroutes a subflow that sent but heard nothing on its
	// path for this long (the optional no-feedback timer of III-B).
	NoFeedback time.Duration `yaml:"no_feedback" json:"no_feedback_ns" default:"off" zero:"off" rtt:"ok" min:"1us"`
}

// PFLDParams configure precise fast loss detection (Ordered Chaos IV).
type PFLDParams struct {
	// BitmapBits is the receiver's per-flow tracking window in packets.
	BitmapBits int `yaml:"bitmap_bits" json:"bitmap_bits" default:"512" min:"64" max:"1048576" multiple:"64"`
	// Periodic is the interval of proactive probes, in packets: one after
	// every Periodic new packets of a subflow (the P of Ordered Chaos
	// V-F); "off" sends only tail, section and retransmission probes.
	Periodic int `yaml:"periodic" json:"periodic" default:"8" zero:"off" min:"1" max:"65536"`
}

// RACKParams configure RACK-TLP loss recovery (RFC 8985).
type RACKParams struct {
	// ReoWnd is the reordering window: a packet is lost once a packet
	// sent this much later was delivered. "auto" is RFC 8985's min_RTT/4.
	ReoWnd time.Duration `yaml:"reo_wnd" json:"reo_wnd_ns" default:"auto" zero:"auto"`
}

// PSNPathParams configure PSN-PATH, and the gapnack baseline, which runs
// PSN-PATH's sender and path manager with a global-gap NACK receiver.
type PSNPathParams struct {
	// K is the number of logical paths; PSN p goes on path p mod K. The
	// paper recommends 4.
	K int `yaml:"k" json:"k" default:"4" min:"1" max:"31"`
	// Beta is the loss penalty of a path's score,
	// score = acks / (acks + beta*nacks) over the last interval.
	Beta float64 `yaml:"beta" json:"beta" default:"10" min:"0"`
	// ExploreThreshold: a path scoring below it is probed for a
	// replacement (DT-Switch's first threshold).
	ExploreThreshold float64 `yaml:"explore_threshold" json:"explore_threshold" default:"0.95" gt:"0" lt:"1"`
	// RemoveThreshold: a path scoring below it is removed at once.
	RemoveThreshold float64 `yaml:"remove_threshold" json:"remove_threshold" default:"0.8" gt:"0" lt:"1"`
	// Interval is how often scores are evaluated and reset: by default two
	// base RTTs, so every path has ACKs or NACKs to be scored on.
	Interval time.Duration `yaml:"interval" json:"interval_ns" default:"2rtt" rtt:"ok" min:"1us"`
}

// PLBParams configure protective load balancing.
type PLBParams struct {
	// Threshold is the fraction of ECN-marked packets in a round trip
	// above which the round counts as congested (FlowBender's 0.05).
	Threshold float64 `yaml:"threshold" json:"threshold" default:"0.05" gt:"0" max:"1"`
	// Rounds is the number of consecutive congested rounds after which
	// the flow moves to a new path.
	Rounds int `yaml:"rounds" json:"rounds" default:"1" min:"1" max:"1000"`
}

// REPSParams configure recycled entropy packet spraying.
type REPSParams struct {
	// Cache is the number of entropies whose packets came back unmarked
	// that the sender keeps for reuse.
	Cache int `yaml:"cache" json:"cache" default:"16" min:"1" max:"4096"`
}

// HostParams configure the host agent, whatever the transport.
type HostParams struct {
	// Pacing is the rate each host sends at; "line" is its link rate.
	Pacing uint64 `yaml:"pacing" json:"pacing_bps" default:"line" unit:"rate" zero:"line"`
	// Window is the most payload a message may have unacknowledged, all
	// its subflows together.
	Window uint64 `yaml:"window" json:"window_bytes" default:"256KiB" unit:"size" min:"1B"`
	// MinRTO is the smallest retransmission timeout. Four base RTTs by
	// default (10 ms on a k=4 fat tree at 100 Mbit/s): a fixed minimum
	// would fire spuriously at low rates, where an RTT takes tens of
	// milliseconds.
	MinRTO time.Duration `yaml:"min_rto" json:"min_rto_ns" default:"4rtt" rtt:"ok" min:"1us"`
	// InitialRTO is the retransmission timeout before a flow has an RTT
	// sample.
	InitialRTO time.Duration `yaml:"initial_rto" json:"initial_rto_ns" default:"8rtt" rtt:"ok" min:"1us"`
	// Header is what every data packet carries besides payload, counted
	// from the Ethernet header: Ethernet 14 + IPv4 20 + UDP 8 + the
	// transport's DATA header (40 bytes in hostagent/wire). A packet's
	// payload is then at most MTU + 14 - header bytes. Used by the CCT
	// lower bound.
	Header uint64 `yaml:"header" json:"header_bytes" default:"82B" unit:"size" min:"42B" max:"256B"`
}

// block describes one parameter block of the file.
type block struct {
	key  string // top-level key
	typ  reflect.Type
	what string // for messages: "the rss transports"
}

// blocks lists every parameter block in file order.
var blocks = []block{
	{"ofan", reflect.TypeFor[OfanParams](), "the ofan and pofan policies"},
	{"pofan", reflect.TypeFor[POfanParams](), "the pofan policy"},
	{"ar", reflect.TypeFor[ARParams](), "the ar policy"},
	{"rss", reflect.TypeFor[RSSParams](), "the rss, rss+pfld and rss+rack transports"},
	{"pfld", reflect.TypeFor[PFLDParams](), "the rss+pfld transport"},
	{"rack", reflect.TypeFor[RACKParams](), "the rss+rack transport"},
	{"psnpath", reflect.TypeFor[PSNPathParams](), "the psnpath and gapnack transports"},
	{"plb", reflect.TypeFor[PLBParams](), "the plb transport"},
	{"reps", reflect.TypeFor[REPSParams](), "the reps transport"},
	{"host", reflect.TypeFor[HostParams](), "every transport"},
}

func blockFor(key string) (block, bool) {
	for _, b := range blocks {
		if b.key == key {
			return b, true
		}
	}
	return block{}, false
}

// paramNames lists the keys of a block's struct in declaration order.
func paramNames(t reflect.Type) []string {
	names := make([]string, t.NumField())
	for i := range names {
		names[i] = t.Field(i).Tag.Get("yaml")
	}
	return names
}

// paramEnv is what parameter values may refer to: the cell's base RTT,
// the unit of durations written as "2rtt".
type paramEnv struct {
	rtt time.Duration
}

// newDefaults returns a pointer to a block struct with every default set.
// Defaults are checked by the tests; a bad one is a programming error.
func newDefaults(t reflect.Type, env paramEnv) reflect.Value {
	v := reflect.New(t)
	for i := range t.NumField() {
		f := t.Field(i)
		x, err := parseParam(f, f.Tag.Get("default"), env)
		if err != nil {
			panic(fmt.Sprintf("scenario: default of %s.%s: %v", t.Name(), f.Name, err))
		}
		v.Elem().Field(i).Set(x)
	}
	return v
}

// decodeBlock decodes a block's mapping n (absent: nil) over its defaults,
// recording problems on w with field paths relative to the block.
func decodeBlock(b block, n *yaml.Node, w *yamldoc.Walker, env paramEnv) reflect.Value {
	v := newDefaults(b.typ, env)
	if n == nil {
		return v
	}
	names := paramNames(b.typ)
	want := fmt.Sprintf("a mapping of parameters of %s: %s", b.what, strings.Join(names, ", "))
	w.Fields(n, want, names, nil, func(key string, node *yaml.Node) {
		i := indexOf(names, key)
		f := b.typ.Field(i)
		text, ok := w.Scalar(node, key, describeParam(f))
		if !ok {
			return
		}
		x, err := parseParam(f, text, env)
		if err == nil {
			err = checkParam(f, x)
		}
		if err != nil {
			w.Problem(yamldoc.PosOf(node), key, "%v", err)
			return
		}
		v.Elem().Field(i).Set(x)
	})
	if c, ok := v.Interface().(interface{ check() (string, string) }); ok {
		if field, msg := c.check(); msg != "" && !w.IsBad(field) {
			w.Problem(w.Val(field), field, "%s", msg)
		}
	}
	return v
}

func indexOf(names []string, key string) int {
	for i, n := range names {
		if n == key {
			return i
		}
	}
	return -1
}

// parseParam parses the text of a parameter according to its type and
// tags. A duration tagged rtt:"ok" may be written as a multiple of the
// base RTT, "2rtt".
func parseParam(f reflect.StructField, text string, env paramEnv) (reflect.Value, error) {
	text = strings.TrimSpace(text)
	if z := f.Tag.Get("zero"); z != "" && strings.EqualFold(text, z) {
		return reflect.Zero(f.Type), nil
	}
	var (
		x   any
		err error
	)
	switch {
	case f.Type == reflect.TypeFor[time.Duration]() && f.Tag.Get("rtt") != "" && strings.HasSuffix(strings.ToLower(text), "rtt"):
		x, err = parseRTTs(strings.TrimSpace(text[:len(text)-3]), env.rtt)
	case f.Type == reflect.TypeFor[time.Duration]():
		x, err = parseDuration(text)
		if err != nil && f.Tag.Get("rtt") != "" {
			err = fmt.Errorf("%v; or a multiple of the base RTT such as 2rtt", err)
		}
	case f.Type.Kind() == reflect.Int:
		var n int
		n, err = strconv.Atoi(text)
		if err != nil {
			err = fmt.Errorf("expected a whole number, found %q", text)
		}
		x = n
	case f.Type.Kind() == reflect.Float64:
		x, err = parseFraction(text)
	case f.Type.Kind() == reflect.Uint64 && f.Tag.Get("unit") == "size":
		x, err = units.ParseSize(text)
	case f.Type.Kind() == reflect.Uint64 && f.Tag.Get("unit") == "rate":
		var r uint64
		r, err = units.ParseRate(text)
		if err == nil && r == 0 {
			err = fmt.Errorf("must be greater than 0")
		}
		x = r
	case f.Type.Kind() == reflect.String:
		x = text
		if enum := f.Tag.Get("enum"); enum != "" {
			err = oneOf(f.Tag.Get("yaml"), text, strings.Split(enum, ","))
		}
	default:
		panic(fmt.Sprintf("scenario: parameter %s has unsupported type %s", f.Name, f.Type))
	}
	if err != nil {
		if z := f.Tag.Get("zero"); z != "" {
			err = fmt.Errorf("%v; or %q", err, z)
		}
		return reflect.Value{}, err
	}
	return reflect.ValueOf(x).Convert(f.Type), nil
}

// checkParam checks the bounds of a parsed value.
func checkParam(f reflect.StructField, x reflect.Value) error {
	if z := f.Tag.Get("zero"); z != "" && x.IsZero() {
		return nil
	}
	bound := func(tag string) (reflect.Value, bool) {
		s := f.Tag.Get(tag)
		if s == "" {
			return reflect.Value{}, false
		}
		b, err := parseParam(f, s, paramEnv{})
		if err != nil {
			panic(fmt.Sprintf("scenario: %s bound of %s: %v", tag, f.Name, err))
		}
		return b, true
	}
	less := func(a, b reflect.Value) bool {
		switch a.Kind() {
		case reflect.Int, reflect.Int64:
			return a.Int() < b.Int()
		case reflect.Uint64:
			return a.Uint() < b.Uint()
		case reflect.Float64:
			return a.Float() < b.Float()
		}
		return false
	}
	show := func(tag string) string { return f.Tag.Get(tag) }
	lo, hasLo := bound("min")
	hi, hasHi := bound("max")
	gt, hasGt := bound("gt")
	lt, hasLt := bound("lt")
	between := func() string {
		switch {
		case hasLo && hasHi:
			return fmt.Sprintf("from %s to %s", show("min"), show("max"))
		case hasGt && hasHi:
			return fmt.Sprintf("above %s and at most %s", show("gt"), show("max"))
		case hasGt && hasLt:
			return fmt.Sprintf("between %s and %s, exclusive", show("gt"), show("lt"))
		case hasLo:
			return "at least " + show("min")
		case hasHi:
			return "at most " + show("max")
		}
		return "above " + show("gt")
	}
	if (hasLo && less(x, lo)) || (hasHi && less(hi, x)) || (hasGt && !less(gt, x)) || (hasLt && !less(x, lt)) {
		return fmt.Errorf("%s is out of range; %s must be %s", formatParam(f, x), f.Tag.Get("yaml"), between())
	}
	if f.Tag.Get("pow2") != "" && (x.Int() <= 0 || bits.OnesCount64(uint64(x.Int())) != 1) {
		return fmt.Errorf("%d is not a power of two; %s must be one (1, 2, 4, 8, ...)", x.Int(), f.Tag.Get("yaml"))
	}
	if m, _ := strconv.Atoi(f.Tag.Get("multiple")); m > 0 && x.Int()%int64(m) != 0 {
		return fmt.Errorf("%d is not a multiple of %d; %s must be one", x.Int(), m, f.Tag.Get("yaml"))
	}
	return nil
}

// formatParam writes a value the way a file would.
func formatParam(f reflect.StructField, x reflect.Value) string {
	switch {
	case f.Type == reflect.TypeFor[time.Duration]():
		return formatDuration(time.Duration(x.Int()))
	case f.Tag.Get("unit") == "size":
		return units.FormatSize(x.Uint())
	case f.Tag.Get("unit") == "rate":
		return units.FormatRate(x.Uint())
	}
	return fmt.Sprint(x.Interface())
}

// describeParam says what a parameter expects, for shape errors.
func describeParam(f reflect.StructField) string {
	var s string
	switch {
	case f.Type == reflect.TypeFor[time.Duration]():
		s = "a duration such as 1ms"
	case f.Tag.Get("unit") == "size":
		s = "a size such as 64KiB"
	case f.Tag.Get("unit") == "rate":
		s = "a rate such as 100Mbit"
	case f.Type.Kind() == reflect.Int:
		s = "a whole number"
	case f.Type.Kind() == reflect.Float64:
		s = "a number such as 0.05 or 5%"
	case f.Tag.Get("enum") != "":
		s = "one of " + strings.ReplaceAll(f.Tag.Get("enum"), ",", ", ")
	}
	if z := f.Tag.Get("zero"); z != "" {
		s += fmt.Sprintf(", or %q", z)
	}
	return s
}

// check enforces what no single RSS parameter can: the jitter must leave
// the interval positive.
func (p *RSSParams) check() (string, string) {
	if p.Jitter >= p.Tau {
		return "jitter", fmt.Sprintf("jitter %s must be shorter than tau %s, or deadlines could pass before they are set", p.Jitter, p.Tau)
	}
	return "", ""
}

// check enforces that PSN-PATH's thresholds are ordered: a path is first
// explored, then removed.
func (p *PSNPathParams) check() (string, string) {
	if p.RemoveThreshold >= p.ExploreThreshold {
		return "remove_threshold", fmt.Sprintf("remove_threshold %g must be below explore_threshold %g: a degrading path is first explored, then removed",
			p.RemoveThreshold, p.ExploreThreshold)
	}
	return "", ""
}

// parseRTTs parses the factor of "<factor>rtt" and returns factor * rtt.
func parseRTTs(factor string, rtt time.Duration) (time.Duration, error) {
	x, err := strconv.ParseFloat(factor, 64)
	if err != nil || x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, fmt.Errorf("expected a positive multiple of the base RTT such as 2rtt, found %q", factor+"rtt")
	}
	return time.Duration(math.Round(x * float64(rtt))), nil
}
