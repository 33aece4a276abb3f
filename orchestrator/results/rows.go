package results

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/ftlab/ftlab/internal/stats"
)

// Rows are one run's rows and outcome: what its part of a report is
// computed from. The CSV files are the source of truth: summaries and
// reports are computed from rows, whether the rows come from a run that
// just finished (RowsOf) or from files (Read), so both give the same
// numbers.
type Rows struct {
	Cell       string
	Repetition int
	Status     string
	CCT, Bound time.Duration // Bound: the CCT lower bound; 0 when there is none
	Flows      []FlowRow
	Links      []LinkRow
	Subflows   []SubflowRow
}

// UplinkFunc says which first-hop uplink a subflow's EV takes from host
// to peer and how many uplinks the host's edge switch has; -1 and 0 when
// the EV decides no path. A nil UplinkFunc decides none.
type UplinkFunc func(host, peer string, ev uint16) (uplink, uplinks int)

// RowsOf turns a finished run into its rows; uplink maps subflows' EVs to
// paths (subflows.csv's uplink column).
func RowsOf(r *Run, uplink UplinkFunc) Rows {
	rows := Rows{Cell: r.Cell, Repetition: r.Repetition, Status: r.Status, CCT: r.CCT,
		Flows: flowRowsOf(r), Links: linkRowsOf(r), Subflows: subflowRowsOf(r, uplink)}
	if r.Bound != nil {
		rows.Bound = r.Bound.CCT
	}
	return rows
}

// FlowRow is one line of flows.csv: one message of one run.
type FlowRow struct {
	Cell                                         string
	Repetition                                   int
	Seed                                         uint64
	ID                                           int
	Src, Dst                                     string
	Bytes                                        uint64
	Step                                         int
	Released, Done, FCT                          time.Duration
	Delivered, Verified                          bool
	Packets, RetxNeeded, RetxSpurious, NACKs     int
	ProbesTail, ProbesSectionEnd, ProbesPeriodic int
	ProbesRTX, RTOs, Reroutes, Losses            int
	LossDetectP50                                time.Duration
	// Retx is the sender's count of retransmitted copies; RetxUseful the
	// receiver's count of those that filled a hole. RetxNeeded is the
	// sender's view (Retx less the copies an ACK said were duplicates),
	// RetxSpurious the receiver's (copies of PSNs it already had, before
	// the message was delivered): a retransmission is useful, spurious or
	// lost, and Retx = RetxUseful + RetxSpurious + lost + late spurious.
	Retx, RetxUseful int
}

var flowsHeader = append(slices.Clone(flowsHeaderV1), "retx", "retx_useful")

// flowsHeaderV1 is flows.csv before retx and retx_useful; such files are
// read with both 0.
var flowsHeaderV1 = []string{
	"cell", "repetition", "seed", "id", "src", "dst", "bytes", "step", "released_ns", "done_ns", "fct_ns",
	"delivered", "verified", "packets", "retx_needed", "retx_spurious", "nacks", "probes_tail",
	"probes_section_end", "probes_periodic", "probes_rtx", "rtos", "reroutes", "losses", "loss_detect_p50_ns",
}

// LinkRow is one line of links.csv: one switch port of one run.
type LinkRow struct {
	Cell                                             string
	Repetition                                       int
	Switch                                           string
	Port                                             int
	Ifname, Link, Direction, Stage                   string
	RateBps, BufferBytes, TxPackets, TxBytes         uint64
	Utilization                                      float64
	RxPackets, DropCorrupt, DropBuffer, DropLinkDown uint64
	DropNoRoute, DropTTL, DropMalformed, DropNonIPv4 uint64
	Trimmed, CEMarked, MaxBacklog                    uint64
	MeanBacklog                                      float64
	QdiscDrops                                       string // empty when the port had no qdisc (line-rate)
	// The real egress queue, measured by the dequeue monitor; empty when
	// it was not (line-rate): packets dequeued, dequeues that left a
	// backlog, and the rate served while backlogged.
	Dequeues, BusyGaps, BusyRateBps string
}

var linksHeader = []string{
	"cell", "repetition", "switch", "port", "ifname", "link", "direction", "stage", "rate_bps", "buffer_bytes",
	"tx_packets", "tx_bytes", "utilization", "rx_packets", "drop_corrupt", "drop_buffer", "drop_link_down",
	"drop_no_route", "drop_ttl", "drop_malformed", "drop_non_ipv4", "trimmed", "ce_marked",
	"max_backlog_bytes", "mean_backlog_bytes", "qdisc_drops", "dequeues", "busy_gaps", "busy_rate_bps",
}

// SubflowRow is one line of subflows.csv: one EV change of one subflow of
// one flow of one run. Packets is the subflow's total (repeated on each of
// its rows); Uplink is the first-hop uplink the EV maps to where the source
// edge switch runs ECMP (-1 elsewhere), Uplinks that switch's uplink count.
type SubflowRow struct {
	Cell             string
	Repetition       int
	Host, Peer       string
	Flow             uint32
	Subflow, Packets int
	At               time.Duration // from the run's start
	EV               uint16
	Reason           string
	Uplink, Uplinks  int
}

var subflowsHeader = []string{
	"cell", "repetition", "host", "peer", "flow", "subflow", "packets", "at_ns", "ev", "reason", "uplink", "uplinks",
}

func subflowRowsOf(r *Run, uplink UplinkFunc) []SubflowRow {
	var rows []SubflowRow
	for _, f := range r.Flows {
		for _, sf := range f.Subflows {
			for _, c := range sf.EVs {
				row := SubflowRow{Cell: r.Cell, Repetition: r.Repetition, Host: f.Host, Peer: f.Peer, Flow: f.Flow,
					Subflow: sf.ID, Packets: sf.Packets, At: time.Duration(c.AtNs - r.StartMonoNs), EV: c.EV, Reason: c.Reason}
				row.Uplink, row.Uplinks = -1, 0
				if uplink != nil {
					row.Uplink, row.Uplinks = uplink(f.Host, f.Peer, c.EV)
				}
				rows = append(rows, row)
			}
		}
	}
	return rows
}

func flowRowsOf(r *Run) []FlowRow {
	rows := make([]FlowRow, 0, len(r.Messages))
	for _, m := range r.Messages {
		row := FlowRow{
			Cell: r.Cell, Repetition: r.Repetition, Seed: r.Seed, ID: m.Message.ID, Src: m.Message.Src, Dst: m.Message.Dst,
			Bytes: m.Message.Bytes, Step: m.Message.Step, Released: m.Released, Done: m.Done, FCT: m.FCT(),
			Delivered: m.Delivered(),
		}
		if m.Received != nil {
			row.Verified, row.RetxSpurious, row.RetxUseful = m.Received.Verified, m.Received.RetxSpurious, m.Received.RetxUseful
		}
		if s := m.Sent; s != nil {
			row.Packets, row.RetxNeeded, row.NACKs, row.Retx = s.Packets, s.RetxNeeded, s.NACKs, s.Retransmissions
			row.ProbesTail, row.ProbesSectionEnd = s.Probes.Tail, s.Probes.SectionEnd
			row.ProbesPeriodic, row.ProbesRTX = s.Probes.Periodic, s.Probes.RTX
			row.RTOs, row.Reroutes, row.Losses = s.RTOs, s.Reroutes, len(s.Losses)
			var delays []int64
			for _, l := range s.Losses {
				delays = append(delays, l.DelayNs)
			}
			row.LossDetectP50 = time.Duration(stats.Median(delays))
		}
		rows = append(rows, row)
	}
	return rows
}

func linkRowsOf(r *Run) []LinkRow {
	rows := make([]LinkRow, 0, len(r.Ports))
	for _, p := range r.Ports {
		c := p.Counters
		row := LinkRow{
			Cell: r.Cell, Repetition: r.Repetition, Switch: p.Switch, Port: p.Port, Ifname: p.Ifname, Link: p.Link,
			Direction: p.Direction, Stage: string(p.Stage), RateBps: p.Params.RateBps, BufferBytes: p.Params.BufferBytes,
			TxPackets: c.TxPackets, TxBytes: c.TxBytes, RxPackets: c.RxPackets,
			DropCorrupt: c.DropCorrupt, DropBuffer: c.DropBuffer, DropLinkDown: c.DropLinkDown, DropNoRoute: c.DropNoRoute,
			DropTTL: c.DropTTL, DropMalformed: c.DropMalformed, DropNonIPv4: c.DropNonIPv4,
			Trimmed: c.Trimmed, CEMarked: c.CEMarked, MaxBacklog: p.Queue.MaxBacklog, MeanBacklog: roundTenth(p.Queue.MeanBacklog()),
		}
		if r.Duration > 0 && row.RateBps > 0 {
			row.Utilization = float64(row.TxBytes*8) / float64(row.RateBps) / r.Duration.Seconds()
		}
		if p.Qdisc != nil {
			row.QdiscDrops = strconv.FormatUint(uint64(p.Qdisc.Drops), 10)
		}
		if d := p.Dequeue; d != nil {
			row.Dequeues, row.BusyGaps, row.BusyRateBps = fmtU(d.Dequeues), fmtU(d.BusyGaps), fmtF(d.BusyRateBps(), 0)
		}
		rows = append(rows, row)
	}
	return rows
}

// roundTenth rounds to the 0.1 that links.csv keeps, so a summary from
// the rows in memory equals one rebuilt from the file.
func roundTenth(x float64) float64 { return math.Round(x*10) / 10 }

func fmtU(v uint64) string         { return strconv.FormatUint(v, 10) }
func fmtI(v int) string            { return strconv.Itoa(v) }
func fmtD(d time.Duration) string  { return strconv.FormatInt(int64(d), 10) }
func fmtB(v bool) string           { return strconv.FormatBool(v) }
func fmtF(v float64, p int) string { return strconv.FormatFloat(v, 'f', p, 64) }

func (f FlowRow) record() []string {
	return []string{f.Cell, fmtI(f.Repetition), fmtU(f.Seed), fmtI(f.ID), f.Src, f.Dst, fmtU(f.Bytes), fmtI(f.Step),
		fmtD(f.Released), fmtD(f.Done), fmtD(f.FCT), fmtB(f.Delivered), fmtB(f.Verified), fmtI(f.Packets),
		fmtI(f.RetxNeeded), fmtI(f.RetxSpurious), fmtI(f.NACKs), fmtI(f.ProbesTail), fmtI(f.ProbesSectionEnd),
		fmtI(f.ProbesPeriodic), fmtI(f.ProbesRTX), fmtI(f.RTOs), fmtI(f.Reroutes), fmtI(f.Losses), fmtD(f.LossDetectP50),
		fmtI(f.Retx), fmtI(f.RetxUseful)}
}

func (l LinkRow) record() []string {
	return []string{l.Cell, fmtI(l.Repetition), l.Switch, fmtI(l.Port), l.Ifname, l.Link, l.Direction, l.Stage,
		fmtU(l.RateBps), fmtU(l.BufferBytes), fmtU(l.TxPackets), fmtU(l.TxBytes), fmtF(l.Utilization, 4), fmtU(l.RxPackets),
		fmtU(l.DropCorrupt), fmtU(l.DropBuffer), fmtU(l.DropLinkDown), fmtU(l.DropNoRoute), fmtU(l.DropTTL),
		fmtU(l.DropMalformed), fmtU(l.DropNonIPv4), fmtU(l.Trimmed), fmtU(l.CEMarked), fmtU(l.MaxBacklog),
		fmtF(l.MeanBacklog, 1), l.QdiscDrops, l.Dequeues, l.BusyGaps, l.BusyRateBps}
}

func (s SubflowRow) record() []string {
	return []string{s.Cell, fmtI(s.Repetition), s.Host, s.Peer, fmtU(uint64(s.Flow)), fmtI(s.Subflow), fmtI(s.Packets),
		fmtD(s.At), fmtU(uint64(s.EV)), s.Reason, fmtI(s.Uplink), fmtI(s.Uplinks)}
}
