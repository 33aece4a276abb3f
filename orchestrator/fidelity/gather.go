package fidelity

import (
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/switchd"
)

// SaturatedLinks picks the saturated link directions among a run's switch
// ports and measures each from its real egress queue (PortStats.Dequeue,
// see switchd.DequeueWatch): the rate it served packets at while it had
// packets queued, and its mean service gap against the ideal one. A
// direction is saturated when at least SaturatedMinGaps of its dequeues,
// and SaturatedBusyShare of them, left packets queued. Ports without a
// rate (line-rate) or dequeue measurements are left out, and so are the
// links in skip (ones whose rate a fault changed during the run).
func SaturatedLinks(ports []switchd.PortStats, skip map[string]bool) []LinkInput {
	var out []LinkInput
	for _, p := range ports {
		d, rate := p.Dequeue, p.Params.RateBps
		if rate == 0 || d == nil || skip[p.Link] || d.BusyGaps < SaturatedMinGaps ||
			float64(d.BusyGaps) < SaturatedBusyShare*float64(d.Dequeues) {
			continue
		}
		out = append(out, LinkInput{
			Switch: p.Switch, Port: p.Port, Link: p.Link, Direction: p.Direction, RateBps: rate,
			AchievedBps: d.BusyRateBps(), MeanBacklog: p.Queue.MeanBacklog(), BusyGaps: d.BusyGaps,
			MeanGapNs:  float64(d.BusyNs) / float64(d.BusyGaps),
			IdealGapNs: float64(d.BusyBytes) / float64(d.BusyGaps) * 8 / float64(rate) * 1e9,
			LagDecided: p.Queue.LagDecided,
		})
	}
	return out
}

// UnexplainedDrops finds packets lost where no configured cause drops
// them: on each switch-to-switch link direction, packets the sending port
// forwarded that the receiving port never saw arrive (its RxPackets counts
// every arrival, before any drop of its own), and drops in the shaping
// qdisc of any port (the link model must drop first; a qdisc drop is also
// a packet the peer never saw, so the larger of the two counts).
func UnexplainedDrops(ports []switchd.PortStats) []DropInput {
	byLink := map[string][]int{}
	for i, p := range ports {
		byLink[p.Link] = append(byLink[p.Link], i)
	}
	var out []DropInput
	for i, p := range ports {
		d := DropInput{Link: p.Link, From: p.Switch}
		if p.Qdisc != nil {
			d.QdiscDrop = uint64(p.Qdisc.Drops)
		}
		d.Missing = d.QdiscDrop
		if ends := byLink[p.Link]; len(ends) == 2 {
			peer := ports[ends[0]]
			if ends[0] == i {
				peer = ports[ends[1]]
			}
			d.To, d.Sent, d.Arrived = peer.Switch, p.Counters.TxPackets, peer.Counters.RxPackets
			if d.Sent > d.Arrived {
				d.Missing = max(d.Missing, d.Sent-d.Arrived)
			}
		}
		if d.Missing > 0 {
			out = append(out, d)
		}
	}
	return out
}

// Pacing sums the flows' pacing statistics.
func Pacing(flows []transport.FlowRecord) PacingInput {
	var p PacingInput
	for _, f := range flows {
		s := f.Pacing
		if s.Gaps == 0 || s.ActualNs <= 0 {
			continue
		}
		p.Flows++
		p.Gaps += s.Gaps
		p.IntendedNs += s.IntendedNs
		p.ActualNs += s.ActualNs
		p.LateNs += s.LateNs
		p.LostNs += s.LostNs
		p.SpanNs += s.SpanNs
		p.MaxLateNs = max(p.MaxLateNs, s.MaxLateNs)
		p.WorstError = max(p.WorstError, 1-s.IntendedNs/s.ActualNs)
		if s.SpanNs > 0 {
			p.WorstLoss = max(p.WorstLoss, s.LostNs/s.SpanNs)
		}
	}
	return p
}

// Delay sums the delay lines' accounts of a run: the receivers' of every
// delivered message and the senders' of every flow's ACKs. packetNs is a
// full-size packet's time on the fabric's fastest link, the yardstick of
// their lateness.
func Delay(flows []transport.FlowRecord, received []*transport.ReceiveRecord, packetNs float64) DelayInput {
	var rec transport.DelayRecord
	for i := range flows {
		rec.Merge(flows[i].Delay)
	}
	for _, r := range received {
		if r != nil {
			rec.Merge(r.Delay)
		}
	}
	d := DelayInput{Packets: rec.Packets, PacketNs: packetNs, MaxLateNs: rec.LateMaxNs, P99LateBelowNs: rec.LateBelowNs(0.99)}
	if rec.Packets > 0 {
		d.MeanLateNs = rec.MeanLateNs()
		d.MeanDelayNs = float64(rec.DelaySum) / float64(rec.Packets)
	}
	return d
}
