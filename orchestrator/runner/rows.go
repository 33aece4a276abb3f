package runner

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/ftlab/ftlab/internal/stats"
)

// flowRow is one line of flows.csv: one message of one run. The CSV files
// are the source of truth: summaries and reports are computed from rows,
// whether the rows come from a run that just finished or from files
// (ftlab report), so both give the same numbers.
type flowRow struct {
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
}

var flowsHeader = []string{
	"cell", "repetition", "seed", "id", "src", "dst", "bytes", "step", "released_ns", "done_ns", "fct_ns",
	"delivered", "verified", "packets", "retx_needed", "retx_spurious", "nacks", "probes_tail",
	"probes_section_end", "probes_periodic", "probes_rtx", "rtos", "reroutes", "losses", "loss_detect_p50_ns",
}

// linkRow is one line of links.csv: one switch port of one run.
type linkRow struct {
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

// subflowRow is one line of subflows.csv: one EV change of one subflow of
// one flow of one run. Packets is the subflow's total (repeated on each of
// its rows); Uplink is the first-hop uplink the EV maps to where the source
// edge switch runs ECMP (-1 elsewhere), Uplinks that switch's uplink count.
type subflowRow struct {
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

func subflowRowsOf(r *RunResult) []subflowRow {
	var rows []subflowRow
	for _, f := range r.Flows {
		for _, sf := range f.Subflows {
			for _, c := range sf.EVs {
				row := subflowRow{Cell: r.Cell, Repetition: r.Repetition, Host: f.Host, Peer: f.Peer, Flow: f.Flow,
					Subflow: sf.ID, Packets: sf.Packets, At: time.Duration(c.AtNs - r.StartMonoNs), EV: c.EV, Reason: c.Reason}
				row.Uplink, row.Uplinks = r.paths.uplink(f.Host, f.Peer, c.EV)
				rows = append(rows, row)
			}
		}
	}
	return rows
}

func flowRowsOf(r *RunResult) []flowRow {
	rows := make([]flowRow, 0, len(r.Messages))
	for _, m := range r.Messages {
		row := flowRow{
			Cell: r.Cell, Repetition: r.Repetition, Seed: r.Seed, ID: m.Message.ID, Src: m.Message.Src, Dst: m.Message.Dst,
			Bytes: m.Message.Bytes, Step: m.Message.Step, Released: m.Released, Done: m.Done, FCT: m.FCT(),
			Delivered: m.Delivered(),
		}
		if m.Received != nil {
			row.Verified, row.RetxSpurious = m.Received.Verified, m.Received.RetxSpurious
		}
		if s := m.Sent; s != nil {
			row.Packets, row.RetxNeeded, row.NACKs = s.Packets, s.RetxNeeded, s.NACKs
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

func linkRowsOf(r *RunResult) []linkRow {
	rows := make([]linkRow, 0, len(r.Ports))
	for _, p := range r.Ports {
		c := p.Counters
		row := linkRow{
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

func (f flowRow) record() []string {
	return []string{f.Cell, fmtI(f.Repetition), fmtU(f.Seed), fmtI(f.ID), f.Src, f.Dst, fmtU(f.Bytes), fmtI(f.Step),
		fmtD(f.Released), fmtD(f.Done), fmtD(f.FCT), fmtB(f.Delivered), fmtB(f.Verified), fmtI(f.Packets),
		fmtI(f.RetxNeeded), fmtI(f.RetxSpurious), fmtI(f.NACKs), fmtI(f.ProbesTail), fmtI(f.ProbesSectionEnd),
		fmtI(f.ProbesPeriodic), fmtI(f.ProbesRTX), fmtI(f.RTOs), fmtI(f.Reroutes), fmtI(f.Losses), fmtD(f.LossDetectP50)}
}

func (l linkRow) record() []string {
	return []string{l.Cell, fmtI(l.Repetition), l.Switch, fmtI(l.Port), l.Ifname, l.Link, l.Direction, l.Stage,
		fmtU(l.RateBps), fmtU(l.BufferBytes), fmtU(l.TxPackets), fmtU(l.TxBytes), fmtF(l.Utilization, 4), fmtU(l.RxPackets),
		fmtU(l.DropCorrupt), fmtU(l.DropBuffer), fmtU(l.DropLinkDown), fmtU(l.DropNoRoute), fmtU(l.DropTTL),
		fmtU(l.DropMalformed), fmtU(l.DropNonIPv4), fmtU(l.Trimmed), fmtU(l.CEMarked), fmtU(l.MaxBacklog),
		fmtF(l.MeanBacklog, 1), l.QdiscDrops, l.Dequeues, l.BusyGaps, l.BusyRateBps}
}

func (s subflowRow) record() []string {
	return []string{s.Cell, fmtI(s.Repetition), s.Host, s.Peer, fmtU(uint64(s.Flow)), fmtI(s.Subflow), fmtI(s.Packets),
		fmtD(s.At), fmtU(uint64(s.EV)), s.Reason, fmtI(s.Uplink), fmtI(s.Uplinks)}
}

// fieldReader parses one CSV record field by field, keeping the first
// error with the column it happened in.
type fieldReader struct {
	rec    []string
	header []string
	i      int
	err    error
}

func (r *fieldReader) next() string {
	if r.i >= len(r.rec) {
		if r.err == nil {
			r.err = fmt.Errorf("too few columns: %d", len(r.rec))
		}
		return ""
	}
	r.i++
	return r.rec[r.i-1]
}

func (r *fieldReader) fail(err error) {
	if r.err == nil {
		r.err = fmt.Errorf("column %s: %w", r.header[r.i-1], err)
	}
}

func (r *fieldReader) str() string { return r.next() }
func (r *fieldReader) int() int {
	v, err := strconv.Atoi(r.next())
	if err != nil {
		r.fail(err)
	}
	return v
}
func (r *fieldReader) u64() uint64 {
	v, err := strconv.ParseUint(r.next(), 10, 64)
	if err != nil {
		r.fail(err)
	}
	return v
}
func (r *fieldReader) uint(bits int) uint64 {
	v, err := strconv.ParseUint(r.next(), 10, bits)
	if err != nil {
		r.fail(err)
	}
	return v
}
func (r *fieldReader) f64() float64 {
	v, err := strconv.ParseFloat(r.next(), 64)
	if err != nil {
		r.fail(err)
	}
	return v
}
func (r *fieldReader) dur() time.Duration {
	v, err := strconv.ParseInt(r.next(), 10, 64)
	if err != nil {
		r.fail(err)
	}
	return time.Duration(v)
}
func (r *fieldReader) bool() bool {
	v, err := strconv.ParseBool(r.next())
	if err != nil {
		r.fail(err)
	}
	return v
}

func parseFlowRow(rec []string) (flowRow, error) {
	r := &fieldReader{rec: rec, header: flowsHeader}
	f := flowRow{Cell: r.str(), Repetition: r.int(), Seed: r.u64(), ID: r.int(), Src: r.str(), Dst: r.str(),
		Bytes: r.u64(), Step: r.int(), Released: r.dur(), Done: r.dur(), FCT: r.dur(), Delivered: r.bool(),
		Verified: r.bool(), Packets: r.int(), RetxNeeded: r.int(), RetxSpurious: r.int(), NACKs: r.int(),
		ProbesTail: r.int(), ProbesSectionEnd: r.int(), ProbesPeriodic: r.int(), ProbesRTX: r.int(), RTOs: r.int(),
		Reroutes: r.int(), Losses: r.int(), LossDetectP50: r.dur()}
	return f, r.err
}

func parseLinkRow(rec []string) (linkRow, error) {
	r := &fieldReader{rec: rec, header: linksHeader}
	l := linkRow{Cell: r.str(), Repetition: r.int(), Switch: r.str(), Port: r.int(), Ifname: r.str(), Link: r.str(),
		Direction: r.str(), Stage: r.str(), RateBps: r.u64(), BufferBytes: r.u64(), TxPackets: r.u64(), TxBytes: r.u64(),
		Utilization: r.f64(), RxPackets: r.u64(), DropCorrupt: r.u64(), DropBuffer: r.u64(), DropLinkDown: r.u64(),
		DropNoRoute: r.u64(), DropTTL: r.u64(), DropMalformed: r.u64(), DropNonIPv4: r.u64(), Trimmed: r.u64(),
		CEMarked: r.u64(), MaxBacklog: r.u64(), MeanBacklog: r.f64(), QdiscDrops: r.str(),
		Dequeues: r.str(), BusyGaps: r.str(), BusyRateBps: r.str()}
	return l, r.err
}

func parseSubflowRow(rec []string) (subflowRow, error) {
	r := &fieldReader{rec: rec, header: subflowsHeader}
	s := subflowRow{Cell: r.str(), Repetition: r.int(), Host: r.str(), Peer: r.str(), Flow: uint32(r.uint(32)),
		Subflow: r.int(), Packets: r.int(), At: r.dur(), EV: uint16(r.uint(16)), Reason: r.str(), Uplink: r.int(),
		Uplinks: r.int()}
	return s, r.err
}
