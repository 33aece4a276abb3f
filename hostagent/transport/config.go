package transport

import (
	"errors"
	"fmt"
	"time"

	"github.com/ftlab/ftlab/hostagent/wire"
	"github.com/ftlab/ftlab/internal/params"
)

// Config configures an Endpoint. Zero fields take the defaults: those of
// HostParams (taken at BaseRTT) and the constants below.
type Config struct {
	// Scheme picks paths and adds loss detection. Required.
	Scheme Scheme
	// Name labels this host in records (default: the conn's address).
	Name string
	// Rate is the pacing rate of each flow in bits per second, counting
	// Overhead per packet. The agent sets it to the host's link rate; 0
	// does not pace at all.
	Rate float64
	// CC is the congestion control: one window per flow, and pacing at
	// window over RTT capped at Rate (package hostagent/cc). nil is
	// cc: none, pacing at Rate with the fixed Window.
	CC CongestionControl
	// Overhead is the link bytes each datagram costs beyond its UDP
	// payload, for pacing (default 42: Ethernet, IPv4, UDP).
	Overhead int
	// Window caps the DATA payload bytes in flight per flow (default:
	// HostParams); under a CC it caps the congestion window. Keep
	// Window/MaxSegment below a PFLD bitmap's size.
	Window int
	// MaxSegment is the payload bytes per DATA packet (default and
	// maximum: the conn's MaxPayload less the DATA header).
	MaxSegment int
	// BaseRTT is the fabric's idle round trip, the unit of the
	// RTT-relative defaults (default NominalBaseRTT).
	BaseRTT time.Duration
	// RTO is how the retransmission timeout is set: RTORFC6298 (the
	// default) or RTOPaper.
	RTO string
	// MaxRTT is the fabric's maximum unloaded RTT, from which RTOPaper
	// sets the timeout (default BaseRTT).
	MaxRTT time.Duration
	// RTOAllowance is what RTOPaper adds to MaxRTT for queueing (default:
	// HostParams).
	RTOAllowance time.Duration
	// InitialRTO is used before the first RTT sample (default: HostParams;
	// RTORFC6298 only).
	InitialRTO time.Duration
	// MinRTO and MaxRTO bound the RTO (defaults: HostParams, and the
	// larger of DefaultMaxRTO and DefaultMaxRTORTTs base RTTs); under
	// RTOPaper only MaxRTO does, capping the backoff.
	MinRTO, MaxRTO time.Duration
	// RTOGranularity rounds the retransmission timer's deadlines up to a
	// multiple of itself (default a quarter of the smallest timeout:
	// MinRTO, or under RTOPaper the fixed one), so packets lost back to
	// back (a path failure) expire in one batch instead of one timer
	// event, backoff step and reroute each.
	RTOGranularity time.Duration
	// MaxRecvSpan is how far beyond its cumulative PSN a receiver accepts
	// packets (default 1<<20); beyond that a packet is a protocol error.
	MaxRecvSpan int
	// Seed seeds flow ids and every flow's random source.
	Seed uint64
	// OnMessageSent gets the sender's record of every completed message.
	OnMessageSent func(MessageRecord)
	// OnMessageReceived gets the receiver's record of every delivery.
	OnMessageReceived func(ReceiveRecord)
}

// Defaults.
const (
	DefaultOverhead    = 14 + 20 + 8
	DefaultMaxRTO      = time.Second
	DefaultMaxRecvSpan = 1 << 20
	// DefaultMaxRTORTTs keeps the backoff's room in RTTs on a
	// time-dilated fabric: at 20 Mbit/s an emulated RTT can take 250 ms,
	// and a fixed 1 s cap would sit below the 4-RTT minimum RTO.
	DefaultMaxRTORTTs = 64
)

func (c *Config) fill(maxPayload int) error {
	if c.Scheme == nil {
		return errors.New("transport: config: no scheme")
	}
	seg := maxPayload - wire.DataLen
	if seg < 1 {
		return fmt.Errorf("transport: conn payload of %d bytes leaves no room after the header", maxPayload)
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if c.BaseRTT < 0 {
		return fmt.Errorf("transport: config: negative base RTT %v", c.BaseRTT)
	}
	if c.BaseRTT == 0 {
		c.BaseRTT = NominalBaseRTT
	}
	host := DefaultHost(params.Env{RTT: c.BaseRTT})
	def(&c.Overhead, DefaultOverhead)
	def(&c.Window, int(host.Window))
	def(&c.MaxSegment, min(seg, wire.MaxPayload))
	def(&c.MaxRecvSpan, DefaultMaxRecvSpan)
	if c.RTO == "" {
		c.RTO = host.RTO
	}
	defDur(&c.MaxRTT, c.BaseRTT)
	defDur(&c.RTOAllowance, host.RTOAllowance)
	defDur(&c.InitialRTO, host.InitialRTO)
	defDur(&c.MinRTO, host.MinRTO)
	defDur(&c.MaxRTO, max(DefaultMaxRTO, DefaultMaxRTORTTs*c.BaseRTT))
	floor := c.MinRTO
	if c.RTO == RTOPaper {
		floor = c.paperRTO()
	}
	defDur(&c.RTOGranularity, max(floor/4, 1))
	switch {
	case c.RTO != RTORFC6298 && c.RTO != RTOPaper:
		return fmt.Errorf("transport: config: RTO mode %q: want %s or %s", c.RTO, RTORFC6298, RTOPaper)
	case c.MaxRTT < 0 || c.RTOAllowance < 0:
		return fmt.Errorf("transport: config: negative maximum RTT %v or RTO allowance %v", c.MaxRTT, c.RTOAllowance)
	case c.RTO == RTOPaper && c.paperRTO() > c.MaxRTO:
		return fmt.Errorf("transport: config: RTO %v (maximum RTT %v + allowance %v) above the maximum RTO %v",
			c.paperRTO(), c.MaxRTT, c.RTOAllowance, c.MaxRTO)
	case c.Rate < 0:
		return fmt.Errorf("transport: config: negative rate %v", c.Rate)
	case c.MaxSegment < 1 || c.MaxSegment > seg:
		return fmt.Errorf("transport: config: segment %d outside 1..%d", c.MaxSegment, seg)
	case c.Window < c.MaxSegment:
		return fmt.Errorf("transport: config: window %d smaller than a segment (%d)", c.Window, c.MaxSegment)
	case c.MinRTO < 0 || c.MaxRTO < c.MinRTO || c.InitialRTO < 0 || c.RTOGranularity < 0:
		return fmt.Errorf("transport: config: RTO bounds %v..%v, initial %v", c.MinRTO, c.MaxRTO, c.InitialRTO)
	case c.MaxRecvSpan < 1 || c.MaxRecvSpan > 1<<30:
		return fmt.Errorf("transport: config: receive span %d", c.MaxRecvSpan)
	}
	return nil
}

// paperRTO is RTOPaper's timeout: the fabric's maximum unloaded RTT plus
// the queueing allowance (Ordered Chaos V-A).
func (c *Config) paperRTO() time.Duration { return c.MaxRTT + c.RTOAllowance }
