package transport

import (
	"time"

	"github.com/ftlab/ftlab/internal/params"
)

// HostParams configure a host's transport, whatever the scheme: the host
// block of scenario files, carried to agents as part of their
// configuration. Declared once here (tags: package internal/params).
type HostParams struct {
	Pacing       uint64        `yaml:"pacing" json:"pacing_bps" default:"line" unit:"rate" zero:"line" doc:"rate each host sends at; line is the rate of its link (Ofan's rho_max without failures)"`
	Window       uint64        `yaml:"window" json:"window_bytes" default:"256KiB" unit:"size" min:"1B" max:"1GiB" doc:"most unacknowledged payload of one message, all its subflows together"`
	RTO          string        `yaml:"rto" json:"rto" default:"rfc6298" enum:"rfc6298,paper" doc:"how the retransmission timeout is set: rfc6298 estimates it from RTT samples (SRTT + 4 RTTVAR, between min_rto and the larger of 1 s and 64 RTTs); paper fixes it per experiment at the fabric's maximum unloaded RTT plus rto_allowance, as Ordered Chaos V-A does; both back off exponentially on repeated timeouts"`
	RTOAllowance time.Duration `yaml:"rto_allowance" json:"rto_allowance_ns" default:"4rtt" rtt:"ok" min:"1us" doc:"rto: paper only: the queueing allowance added to the fabric's maximum unloaded RTT; without congestion control a queue can hold a whole buffer, so keep it above the longest queueing delay a packet may meet, or the timer fires on packets that are only queued"`
	MinRTO       time.Duration `yaml:"min_rto" json:"min_rto_ns" default:"4rtt" rtt:"ok" min:"1us" doc:"rto: rfc6298 only: smallest retransmission timeout; a fixed one would fire spuriously at low rates, where an RTT takes tens of milliseconds"`
	InitialRTO   time.Duration `yaml:"initial_rto" json:"initial_rto_ns" default:"8rtt" rtt:"ok" min:"1us" doc:"rto: rfc6298 only: retransmission timeout before a flow's first RTT sample"`
	Header       uint64        `yaml:"header" json:"header_bytes" default:"90B" unit:"size" min:"42B" max:"256B" doc:"bytes every data packet carries besides payload, from the Ethernet header on: Ethernet 14 + IPv4 20 + UDP 8 + the DATA header (48 bytes in hostagent/wire); payload per packet is at most MTU + 14 - header; used by the CCT lower bound"`
}

// RTO modes (HostParams.RTO, Config.RTO).
const (
	// RTORFC6298 estimates the timeout from RTT samples (RFC 6298).
	RTORFC6298 = "rfc6298"
	// RTOPaper fixes it at the fabric's maximum unloaded RTT plus an
	// allowance for queueing (Ordered Chaos V-A).
	RTOPaper = "paper"
)

// HostBlock describes HostParams.
var HostBlock = params.BlockOf[HostParams]("host", "every transport")

// NominalBaseRTT stands in for the fabric's base RTT when a Config gives
// none (an endpoint used outside a scenario): the RTT-relative defaults
// of HostParams are taken at it (min RTO 1 ms, initial RTO 2 ms), and it
// stands in for the maximum unloaded RTT too.
const NominalBaseRTT = 250 * time.Microsecond

// DefaultHost returns HostParams with every default, for a fabric whose
// base RTT is env.RTT.
func DefaultHost(env params.Env) HostParams { return params.Defaults[HostParams](env) }
