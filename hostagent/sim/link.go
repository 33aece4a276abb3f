package sim

import (
	"math"
	"math/rand/v2"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/netio"
)

// LinkStats counts what a link did. Drops are split by cause.
type LinkStats struct {
	Packets     uint64 // accepted into the queue (copies included)
	Bytes       uint64 // wire bytes accepted
	Delivered   uint64 // handed to the next hop
	TailDrops   uint64 // buffer full
	LossDrops   uint64 // corruption or burst loss
	FailDrops   uint64 // link failed
	FilterDrops uint64 // dropped by a Filter (paths only)
	Marked      uint64 // CE marks set
	Duplicated  uint64 // copies made
	MaxBacklog  int    // largest backlog seen at enqueue, bytes
}

// Link is one FIFO link of the network. Change it only from the event loop
// (before a run or from a callback); changes apply to packets enqueued
// afterwards.
type Link struct {
	Name string
	cfg  LinkConfig
	net  *Network
	rng  *rand.Rand
	busy float64 // virtual ns at which the queue drains
	bad  bool    // Gilbert-Elliott state
	next func(p *Packet)

	failFrom, failUntil clock.Time
	failing             bool

	stats LinkStats
}

// Config returns the link's configuration.
func (l *Link) Config() LinkConfig { return l.cfg }

// Set replaces the link's configuration.
func (l *Link) Set(c LinkConfig) error {
	if err := c.validate(l.Name); err != nil {
		return err
	}
	l.cfg = c
	return nil
}

// SetRate changes only the rate (bits per second).
func (l *Link) SetRate(bps float64) { l.cfg.Rate = max(bps, 0) }

// Fail makes the link lose every packet that is on it at any time in
// [from, until); until == 0 means forever.
func (l *Link) Fail(from, until clock.Time) {
	l.failing, l.failFrom, l.failUntil = true, from, until
}

// Stats returns the link's counters.
func (l *Link) Stats() LinkStats { return l.stats }

// Backlog is the bytes queued now, the one in service included: what a
// packet arriving now would find ahead of it.
func (l *Link) Backlog() int {
	now := float64(l.net.clk.Now())
	if l.cfg.Rate <= 0 || l.busy <= now {
		return 0
	}
	return int((l.busy - now) * l.cfg.Rate / 8e9)
}

func (l *Link) failed(t clock.Time) bool {
	return l.failing && t >= l.failFrom && (l.failUntil == 0 || t < l.failUntil)
}

// enqueue takes p onto the link now.
func (l *Link) enqueue(p *Packet) { l.take(p, true) }

// take enqueues p; a copy made here is not itself duplicated again.
func (l *Link) take(p *Packet, mayDup bool) {
	n := l.net
	now := n.clk.Now()
	if l.failed(now) {
		l.stats.FailDrops++
		n.free(p)
		return
	}
	size := len(p.Payload) + n.cfg.Overhead
	backlog := l.Backlog()
	if l.cfg.Buffer > 0 && backlog+size > l.cfg.Buffer {
		l.stats.TailDrops++
		n.free(p)
		return
	}
	l.stats.MaxBacklog = max(l.stats.MaxBacklog, backlog)
	if l.cfg.ECNThreshold > 0 && backlog >= l.cfg.ECNThreshold && p.ECN.Capable() {
		p.ECN = netio.CE
		l.stats.Marked++
	}
	l.stats.Packets++
	l.stats.Bytes += uint64(size)
	start := max(l.busy, float64(now))
	if l.cfg.Rate > 0 {
		l.busy = start + float64(size)*8e9/l.cfg.Rate
	} else {
		l.busy = start
	}
	exit := clock.Time(math.Ceil(l.busy))
	dup := mayDup && l.cfg.Loss.Duplicate > 0 && l.rng.Float64() < l.cfg.Loss.Duplicate
	if l.lose() {
		l.stats.LossDrops++
		n.free(p)
	} else {
		n.clk.At(exit.Add(l.cfg.Delay), func() { l.exit(p, exit) })
	}
	if dup {
		l.stats.Duplicated++
		c := n.clone(p)
		c.Dup = true
		l.take(c, false)
	}
}

// lose draws the random loss models for one packet.
func (l *Link) lose() bool {
	ls := &l.cfg.Loss
	if ls.BurstStart > 0 {
		// A burst's first packet is drawn in the good state; after every
		// lost packet the burst goes on with probability 1-1/BurstLen, so
		// bursts are geometric with mean BurstLen.
		if l.bad || l.rng.Float64() < ls.BurstStart {
			l.bad = l.rng.Float64() >= 1/ls.BurstLen
			return true
		}
	}
	return ls.Corruption > 0 && l.rng.Float64() < ls.Corruption
}

// exit hands p to the next hop unless the link failed while p was on it.
func (l *Link) exit(p *Packet, departed clock.Time) {
	if l.failed(departed) || l.failed(l.net.clk.Now()) {
		l.stats.FailDrops++
		l.net.free(p)
		return
	}
	l.stats.Delivered++
	l.next(p)
}
