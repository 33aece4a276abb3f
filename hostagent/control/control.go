package control

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"

	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/netio"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// Version is the protocol version the ready event announces. 3: configure
// carries the congestion control (cc, cc_params).
const Version = 3

// MaxLine is the longest command line an agent accepts.
const MaxLine = 1 << 20

// MaxEventLine is the longest event line to accept when reading an
// agent's events: a flow record lists every EV change of the flow, so a
// long message under rss can take megabytes.
const MaxEventLine = 1 << 30

// Command names.
const (
	CmdConfigure = "configure"
	CmdSend      = "send"
	CmdStats     = "stats"
	CmdStop      = "stop"
)

// Event names.
const (
	EvReady      = "ready"
	EvConfigured = "configured"
	EvSent       = "sent"
	EvReceived   = "received"
	EvFlow       = "flow"
	EvStats      = "stats"
	EvError      = "error"
)

// Command is one of *Configure, *Send, *StatsQuery, *Stop.
type Command interface {
	CommandName() string
	stampCmd()
}

// Event is one of *Ready, *Configured, *Sent, *Received, *Flow, *Stats,
// *Error.
type Event interface {
	EventName() string
	stampEvent()
}

// Transport is the transport configuration: the host block of scenario
// files (transport.HostParams: pacing, window, RTOs; its JSON keys are
// this struct's) and what only an agent needs. Zero fields take the
// transport's defaults (package transport), taken at BaseRTTNs, except as
// noted.
type Transport struct {
	transport.HostParams
	// BaseRTTNs is the fabric's idle round trip, the unit of the
	// RTT-relative defaults (default transport.NominalBaseRTT).
	BaseRTTNs int64 `json:"base_rtt_ns,omitempty"`
	// MaxRTTNs is the fabric's maximum unloaded RTT, from which rto: paper
	// sets the timeout (default BaseRTTNs).
	MaxRTTNs int64 `json:"max_rtt_ns,omitempty"`
	MaxRTONs int64 `json:"max_rto_ns,omitempty"` // default 1 s
	// RTOGranularityNs rounds RTO deadlines (default MinRTO/4).
	RTOGranularityNs int64 `json:"rto_granularity_ns,omitempty"`
	// MTU is the IP MTU of the host's link (default 1500).
	MTU int `json:"mtu,omitempty"`
	// SegmentBytes is the payload per DATA packet (default and maximum:
	// MTU - 28 (IPv4, UDP) - 48 (DATA header)).
	SegmentBytes int `json:"segment_bytes,omitempty"`
	// OverheadBytes is what a datagram costs on the link beyond its UDP
	// payload, for pacing (default 42: Ethernet, IPv4, UDP).
	OverheadBytes int `json:"overhead_bytes,omitempty"`
	// Seed seeds flow ids and the schemes' random choices (default: random).
	Seed uint64 `json:"seed,omitempty"`
	// SpinNs: the agent's event loop spins through waits up to this long
	// instead of sleeping (precise pacing for a CPU; default 0).
	SpinNs int64 `json:"spin_ns,omitempty"`
	// QuantumNs is the batching quantum of the agent's event loop: timers
	// due within it run in one wake-up, arrivals within it are read in one
	// batch (default: a quarter of a packet time at the pacing rate; none
	// when unpaced). Agents sharing a loop get the shortest of theirs.
	QuantumNs int64 `json:"quantum_ns,omitempty"`
	// DelayLine turns on the agent's delay line, which emulates the
	// fabric's link delays at the receiver (docs/delay.md): every arrival
	// is held until it came plus the propagation delay its header says
	// its path had, plus AccessDelayNs (the host's own access link, edge
	// to host), plus a random share of its jitter bound and
	// AccessJitterNs, seeded by Seed.
	DelayLine      bool  `json:"delay_line,omitempty"`
	AccessDelayNs  int64 `json:"access_delay_ns,omitempty"`
	AccessJitterNs int64 `json:"access_jitter_ns,omitempty"`
}

// Validate checks ranges; it does not know scheme names.
func (t *Transport) Validate() error {
	var errs []error
	neg := func(name string, v int64) {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s %d is negative", name, v))
		}
	}
	neg("min_rto_ns", int64(t.MinRTO))
	neg("max_rto_ns", t.MaxRTONs)
	neg("initial_rto_ns", int64(t.InitialRTO))
	neg("base_rtt_ns", t.BaseRTTNs)
	neg("max_rtt_ns", t.MaxRTTNs)
	neg("rto_allowance_ns", int64(t.RTOAllowance))
	if t.RTO != "" && t.RTO != transport.RTORFC6298 && t.RTO != transport.RTOPaper {
		errs = append(errs, fmt.Errorf("rto %q: want %s or %s", t.RTO, transport.RTORFC6298, transport.RTOPaper))
	}
	neg("rto_granularity_ns", t.RTOGranularityNs)
	neg("spin_ns", t.SpinNs)
	neg("quantum_ns", t.QuantumNs)
	neg("access_delay_ns", t.AccessDelayNs)
	neg("access_jitter_ns", t.AccessJitterNs)
	neg("segment_bytes", int64(t.SegmentBytes))
	neg("overhead_bytes", int64(t.OverheadBytes))
	if t.MaxRTONs != 0 && int64(t.MinRTO) > t.MaxRTONs {
		errs = append(errs, fmt.Errorf("min_rto_ns %d above max_rto_ns %d", t.MinRTO, t.MaxRTONs))
	}
	if t.MTU != 0 && (t.MTU < 576 || t.MTU > 9216) {
		errs = append(errs, fmt.Errorf("mtu %d outside 576..9216", t.MTU))
	}
	mtu := t.MTU
	if mtu == 0 {
		mtu = 1500
	}
	if seg := mtu - netio.IPv4UDPOverhead - wire.DataLen; t.SegmentBytes > seg {
		errs = append(errs, fmt.Errorf("segment_bytes %d exceeds %d (mtu %d less %d bytes of headers)", t.SegmentBytes, seg, mtu, netio.IPv4UDPOverhead+wire.DataLen))
	}
	if t.Window > 1<<30 {
		errs = append(errs, fmt.Errorf("window_bytes %d above 1 GiB", t.Window))
	}
	if t.SpinNs > int64(1e9) {
		errs = append(errs, fmt.Errorf("spin_ns %d above 1 s", t.SpinNs))
	}
	if t.QuantumNs > int64(1e9) {
		errs = append(errs, fmt.Errorf("quantum_ns %d above 1 s", t.QuantumNs))
	}
	if max(t.AccessDelayNs, t.AccessJitterNs) > int64(math.MaxUint32) {
		errs = append(errs, fmt.Errorf("access delay %d or jitter %d ns above %d", t.AccessDelayNs, t.AccessJitterNs, uint32(math.MaxUint32)))
	}
	if (t.AccessDelayNs != 0 || t.AccessJitterNs != 0) && !t.DelayLine {
		errs = append(errs, errors.New("an access delay or jitter needs delay_line"))
	}
	return errors.Join(errs...)
}

// Configure picks the scheme with its parameter blocks (typed, as the
// scheme registry declares them; nil: the scheme's defaults at the base
// RTT), the congestion control with its blocks (hostagent/cc; "" is none,
// nil params its defaults at the base RTT) and the transport settings.
type Configure struct {
	Cmd       string         `json:"cmd"`
	Scheme    string         `json:"scheme"`
	Params    *scheme.Params `json:"params,omitempty"`
	CC        string         `json:"cc,omitempty"`
	CCParams  *cc.Params     `json:"cc_params,omitempty"`
	Transport Transport      `json:"transport"`
	Name      string         `json:"name,omitempty"`
}

// Send starts a message.
type Send struct {
	Cmd   string `json:"cmd"`
	Msg   int64  `json:"msg"`   // the orchestrator's id
	To    string `json:"to"`    // the receiving agent's IPv4 address
	Bytes uint64 `json:"bytes"` // message size, 0 to 4 GiB - 1
}

// StatsQuery asks for a stats event.
type StatsQuery struct {
	Cmd string `json:"cmd"`
}

// Stop flushes records and ends the agent.
type Stop struct {
	Cmd string `json:"cmd"`
}

func (*Configure) CommandName() string  { return CmdConfigure }
func (*Send) CommandName() string       { return CmdSend }
func (*StatsQuery) CommandName() string { return CmdStats }
func (*Stop) CommandName() string       { return CmdStop }
func (c *Configure) stampCmd()          { c.Cmd = CmdConfigure }
func (c *Send) stampCmd()               { c.Cmd = CmdSend }
func (c *StatsQuery) stampCmd()         { c.Cmd = CmdStats }
func (c *Stop) stampCmd()               { c.Cmd = CmdStop }

// Ready says the agent's sockets are open.
type Ready struct {
	Event   string `json:"event"`
	Version int    `json:"version"`
	Addr    string `json:"addr"`
	Port    uint16 `json:"port"`
}

// Configured confirms configure with the settings in effect.
type Configured struct {
	Event     string         `json:"event"`
	Scheme    string         `json:"scheme"`
	Params    *scheme.Params `json:"params"`
	CC        string         `json:"cc"`
	CCParams  *cc.Params     `json:"cc_params"`
	Transport Transport      `json:"transport"`
	Name      string         `json:"name"`
}

// Sent reports a message fully acknowledged.
type Sent struct {
	Event  string                  `json:"event"`
	Msg    int64                   `json:"msg"`
	Record transport.MessageRecord `json:"record"`
}

// Received reports a message delivered and verified at this agent.
type Received struct {
	Event  string                  `json:"event"`
	From   string                  `json:"from"` // the sender's address
	Record transport.ReceiveRecord `json:"record"`
}

// Flow is the record of a message's flow: after its Sent event (Done),
// or at stop for a message that was not acknowledged (not Done).
type Flow struct {
	Event  string               `json:"event"`
	Msg    int64                `json:"msg"`
	Done   bool                 `json:"done"`
	Record transport.FlowRecord `json:"record"`
}

// LoopStats are the agent event loop's counters.
type LoopStats struct {
	Iterations uint64 `json:"iterations"`
	Sleeps     uint64 `json:"sleeps"`
	Spins      uint64 `json:"spins"`
	Holdoffs   uint64 `json:"holdoffs"` // waits with the sockets held off (batching)
	Timers     uint64 `json:"timers"`
	Posted     uint64 `json:"posted"`
	Reads      uint64 `json:"reads"`       // socket reads
	LateMaxNs  int64  `json:"late_max_ns"` // worst lateness of a timer
	LateMeanNs int64  `json:"late_mean_ns"`
	// CPUNs is the loop thread's CPU time; WaitNs its time runnable but
	// waiting for a CPU.
	CPUNs  int64 `json:"cpu_ns"`
	WaitNs int64 `json:"wait_ns"`
	// Agents is how many agents share the loop (its counters are theirs
	// together); QuantumNs is its batching quantum.
	Agents    int   `json:"agents"`
	QuantumNs int64 `json:"quantum_ns"`
}

// Stats are the agent's counters.
type Stats struct {
	Event    string            `json:"event"`
	Final    bool              `json:"final"` // the last event before exit
	Endpoint transport.Stats   `json:"endpoint"`
	Conn     netio.SocketStats `json:"conn"`
	Loop     LoopStats         `json:"loop"`
	Sent     int               `json:"sent"`     // messages acknowledged
	Received int               `json:"received"` // messages delivered here
	Pending  int               `json:"pending"`  // messages started, not yet acknowledged
	Errors   int               `json:"errors"`   // error events emitted
	// ReceiverFlows and ReceiverStateBytes: receiving flows and their
	// schemes' state (PFLD bitmaps).
	ReceiverFlows      int `json:"receiver_flows"`
	ReceiverStateBytes int `json:"receiver_state_bytes"`
	// EarlyDatagrams arrived before configure and were dropped.
	EarlyDatagrams uint64 `json:"early_datagrams"`
	// CEData are DATA packets that arrived CE-marked here; ECEACKs are
	// ACKs that came back with ECE, echoing a CE mark at the peer.
	CEData  uint64 `json:"ce_data"`
	ECEACKs uint64 `json:"ece_acks"`
	// Delay is the delay line's account of every packet it held (with
	// delay_line); HeldMax the most it held at once.
	Delay     *transport.DelayRecord `json:"delay,omitempty"`
	DelayHeld int                    `json:"delay_held_max,omitempty"`
}

// Error reports a bad command or a failure.
type Error struct {
	Event string `json:"event"`
	Error string `json:"error"`
	Msg   *int64 `json:"msg,omitempty"`   // the send it concerns
	Input string `json:"input,omitempty"` // the offending line, shortened
}

func (*Ready) EventName() string      { return EvReady }
func (*Configured) EventName() string { return EvConfigured }
func (*Sent) EventName() string       { return EvSent }
func (*Received) EventName() string   { return EvReceived }
func (*Flow) EventName() string       { return EvFlow }
func (*Stats) EventName() string      { return EvStats }
func (*Error) EventName() string      { return EvError }
func (e *Ready) stampEvent()          { e.Event = EvReady }
func (e *Configured) stampEvent()     { e.Event = EvConfigured }
func (e *Sent) stampEvent()           { e.Event = EvSent }
func (e *Received) stampEvent()       { e.Event = EvReceived }
func (e *Flow) stampEvent()           { e.Event = EvFlow }
func (e *Stats) stampEvent()          { e.Event = EvStats }
func (e *Error) stampEvent()          { e.Event = EvError }

// MessageKey names a message on both sides: the sender's address and the
// transport's flow and message ids.
type MessageKey struct {
	Sender string `json:"sender"`
	Flow   uint32 `json:"flow"`
	Msg    uint32 `json:"msg"`
}

// Key is the key of a sent message; sender is the sending agent's address
// (its ready event's addr).
func (e *Sent) Key(sender string) MessageKey {
	return MessageKey{Sender: sender, Flow: e.Record.Flow, Msg: e.Record.Msg}
}

// Key is the key of a delivered message.
func (e *Received) Key() MessageKey {
	return MessageKey{Sender: e.From, Flow: e.Record.Flow, Msg: e.Record.Msg}
}

// AppendCommand appends c as one JSON line, its cmd field filled in.
func AppendCommand(b []byte, c Command) ([]byte, error) {
	c.stampCmd()
	return appendLine(b, c)
}

// WriteCommand writes c as one JSON line.
func WriteCommand(w io.Writer, c Command) error {
	b, err := AppendCommand(nil, c)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// AppendEvent appends e as one JSON line, its event field filled in.
func AppendEvent(b []byte, e Event) ([]byte, error) {
	e.stampEvent()
	return appendLine(b, e)
}

// WriteEvent writes e as one JSON line.
func WriteEvent(w io.Writer, e Event) error {
	b, err := AppendEvent(nil, e)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

func appendLine(b []byte, v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return b, fmt.Errorf("control: encode: %w", err)
	}
	b = append(b, data...)
	return append(b, '\n'), nil
}

// DecodeCommand decodes one command line strictly.
func DecodeCommand(line []byte) (Command, error) {
	name, err := peek(line, "cmd")
	if err != nil {
		return nil, err
	}
	switch name {
	case CmdConfigure:
		var c Configure
		if err := strict(line, &c); err != nil {
			return nil, fmt.Errorf("configure: %w", err)
		}
		if err := c.validate(); err != nil {
			return nil, fmt.Errorf("configure: %w", err)
		}
		return &c, nil
	case CmdSend:
		var aux struct {
			Cmd   string  `json:"cmd"`
			Msg   *int64  `json:"msg"`
			To    *string `json:"to"`
			Bytes *uint64 `json:"bytes"`
		}
		if err := strict(line, &aux); err != nil {
			return nil, fmt.Errorf("send: %w", err)
		}
		var missing []string
		if aux.Msg == nil {
			missing = append(missing, "msg")
		}
		if aux.To == nil {
			missing = append(missing, "to")
		}
		if aux.Bytes == nil {
			missing = append(missing, "bytes")
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("send: missing %v", missing)
		}
		c := &Send{Cmd: CmdSend, Msg: *aux.Msg, To: *aux.To, Bytes: *aux.Bytes}
		if err := c.validate(); err != nil {
			return nil, fmt.Errorf("send: %w", err)
		}
		return c, nil
	case CmdStats:
		var c StatsQuery
		if err := strict(line, &c); err != nil {
			return nil, fmt.Errorf("stats: %w", err)
		}
		return &c, nil
	case CmdStop:
		var c Stop
		if err := strict(line, &c); err != nil {
			return nil, fmt.Errorf("stop: %w", err)
		}
		return &c, nil
	}
	return nil, fmt.Errorf("unknown command %q (valid: configure, send, stats, stop)", name)
}

func (c *Configure) validate() error {
	if c.Scheme == "" {
		return errors.New("no scheme")
	}
	return c.Transport.Validate()
}

// MaxBytes is the largest message.
const MaxBytes = 1<<32 - 1

func (c *Send) validate() error {
	if _, err := c.Peer(); err != nil {
		return err
	}
	if c.Bytes > MaxBytes {
		return fmt.Errorf("bytes %d above %d", c.Bytes, uint64(MaxBytes))
	}
	return nil
}

// Peer parses To.
func (c *Send) Peer() (netip.Addr, error) {
	a, err := netip.ParseAddr(c.To)
	if err != nil || !a.Is4() {
		return netip.Addr{}, fmt.Errorf("to %q is not an IPv4 address", c.To)
	}
	return a, nil
}

// DecodeEvent decodes one event line strictly.
func DecodeEvent(line []byte) (Event, error) {
	name, err := peek(line, "event")
	if err != nil {
		return nil, err
	}
	var e Event
	switch name {
	case EvReady:
		e = &Ready{}
	case EvConfigured:
		e = &Configured{}
	case EvSent:
		// MessageRecord's loss causes are text; transport.Cause only
		// marshals, so they are decoded here.
		var aux struct {
			Event  string `json:"event"`
			Msg    int64  `json:"msg"`
			Record struct {
				transport.MessageRecord
				Losses []struct {
					PSN     uint32 `json:"psn"`
					Cause   string `json:"cause"`
					DelayNs int64  `json:"delay_ns"`
					Retx    bool   `json:"retx"`
				} `json:"losses"`
			} `json:"record"`
		}
		if err := strict(line, &aux); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		s := &Sent{Event: aux.Event, Msg: aux.Msg, Record: aux.Record.MessageRecord}
		for _, l := range aux.Record.Losses {
			c, ok := ParseCause(l.Cause)
			if !ok {
				return nil, fmt.Errorf("%s: unknown loss cause %q", name, l.Cause)
			}
			s.Record.Losses = append(s.Record.Losses, transport.LossRecord{PSN: l.PSN, Cause: c, DelayNs: l.DelayNs, Retx: l.Retx})
		}
		return s, nil
	case EvReceived:
		e = &Received{}
	case EvFlow:
		e = &Flow{}
	case EvStats:
		e = &Stats{}
	case EvError:
		e = &Error{}
	default:
		return nil, fmt.Errorf("unknown event %q", name)
	}
	if err := strict(line, e); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return e, nil
}

// ParseCause is the inverse of transport.Cause's text form.
func ParseCause(s string) (transport.Cause, bool) {
	for _, c := range transport.Causes {
		if c.String() == s {
			return c, true
		}
	}
	return 0, false
}

// peek returns the string value of the discriminating key.
func peek(line []byte, key string) (string, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(line, &probe); err != nil {
		return "", fmt.Errorf("not a JSON object: %w", err)
	}
	raw, ok := probe[key]
	if !ok {
		return "", fmt.Errorf("no %q field", key)
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		return "", fmt.Errorf("%q is not a string", key)
	}
	return name, nil
}

// strict decodes exactly one object, with no unknown fields, into v.
func strict(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the object")
	}
	return nil
}

// Shorten cuts s for an error event's input field.
func Shorten(s []byte) string {
	const n = 200
	if len(s) <= n {
		return string(s)
	}
	return string(s[:n]) + "..."
}
