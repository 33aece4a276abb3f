package fidelity

import (
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/switchd"
)

// SaturatedLinks picks the saturated link directions among a run's switch
// ports (see SaturatedBacklogBytes) and measures each: bytes forwarded
// over the link model's busy window, from its first arrival to when its
// queue last emptied. Ports without a modelled rate (line-rate) are left
// out.
func SaturatedLinks(ports []switchd.PortStats) []LinkInput {
	var out []LinkInput
	for _, p := range ports {
		q, c, rate := p.Queue, p.Counters, p.Params.RateBps
		if rate == 0 || c.TxPackets == 0 || q.FirstNs == 0 {
			continue
		}
		var arrivals uint64
		for _, n := range q.Hist {
			arrivals += n
		}
		if arrivals == 0 || q.MeanBacklog() < SaturatedBacklogBytes ||
			float64(arrivals-q.Hist[0])/float64(arrivals) < SaturatedBusyArrivals {
			continue
		}
		end := max(q.LastNs, q.NextDepartNs)
		if end <= q.FirstNs {
			continue
		}
		window := float64(end - q.FirstNs)
		out = append(out, LinkInput{
			Switch: p.Switch, Port: p.Port, Link: p.Link, Direction: p.Direction, RateBps: rate,
			AchievedBps: float64(c.TxBytes*8) / (window / 1e9), MeanBacklog: q.MeanBacklog(),
			MeanGapNs:  window / float64(c.TxPackets),
			IdealGapNs: float64(c.TxBytes) / float64(c.TxPackets) * 8 / float64(rate) * 1e9,
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
		p.MaxLateNs = max(p.MaxLateNs, s.MaxLateNs)
		p.WorstError = max(p.WorstError, 1-s.IntendedNs/s.ActualNs)
	}
	return p
}
