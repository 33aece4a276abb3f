package agent_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/switchd"
)

// k4BaseRTT is the base RTT ftlab's scenarios give fattree-k4 at 100
// Mbit/s (orchestrator/scenario.BaseRTT): 6 hops of a 1514-byte frame and
// an 82-byte ACK, and 150 us of processing per hop each way.
const k4BaseRTT = 2566080 * time.Nanosecond

// TestShapedIncastCC: Ordered Chaos's incast on the real k=4 lab, shaped:
// eight hosts of the other pods send 1 MiB each to h3-1-1 at once, with
// rss+pfld, first without congestion control (each paces at its 100
// Mbit/s link with a 256 KiB window, eight BDPs, into the receiver's
// 64 KiB edge buffer), then with mprdma, twice each. Every message is
// delivered intact; with mprdma the senders retransmit at least 10x less
// (they keep out of loss recovery: 25-40x measured, quiet and loaded)
// and the switches' buffers drop fewer packets than without. Buffer drops
// alone are no 10x measure on a loaded machine: they are none's only when
// its senders keep up with their pacing, and under the suite one round of
// none dropped 43 where the other dropped 757 (22-38x quiet, 8.8x then),
// the rest of its losses being RTOs the machine's lag made spurious. That
// needs agents able to overload the fabric at all: on one loop each (9
// threads on 2 cores) a loaded machine's senders fell so far behind that
// none dropped 0-6.
func TestShapedIncastCC(t *testing.T) {
	const dst = "h3-1-1"
	l := newLab(t, switchd.Config{Mode: switchd.ModeShaped, EdgePolicy: "ecmp", Seed: 4})
	link := l.topo.Links[0].Up.RateBps
	senders := []string{"h0-0-0", "h0-0-1", "h0-1-0", "h0-1-1", "h1-0-0", "h1-0-1", "h2-0-0", "h2-0-1"}
	var msgs []transfer
	for _, s := range senders {
		msgs = append(msgs, transfer{src: s, dst: dst})
	}
	bufferDrops := func() uint64 {
		stats, err := l.ctl.Stats()
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		for _, p := range stats {
			n += p.Counters.DropBuffer
		}
		return n
	}
	const size = 1 << 20
	// Two rounds of each, alternating: how the senders' starts fall
	// (their send commands arrive one by one) moves none's drops by 2x.
	drops, retx := map[string]uint64{}, map[string]int{}
	for _, algo := range []string{cc.None, "mprdma", cc.None, "mprdma"} {
		before := bufferDrops()
		as := l.startAgents(t, append([]string{dst}, senders...), control.Configure{Scheme: "rss+pfld", CC: algo, Transport: control.Transport{
			HostParams: transport.HostParams{Pacing: link, Window: 256 << 10, MinRTO: 50 * time.Millisecond},
			BaseRTTNs:  int64(k4BaseRTT),
		}})
		start := time.Now()
		out := as.run(l, msgs, size, 3*time.Minute)
		wall := time.Since(start)
		as.stop()
		checkIntact(t, out, size)
		d := bufferDrops() - before
		drops[algo] += d
		var nretx, rtos int
		var window string
		for _, tr := range out {
			nretx += tr.sent.Record.Retransmissions
			rtos += tr.sent.Record.RTOs
			if c := tr.flow.Record.CC; c != nil && window == "" {
				window = fmt.Sprintf(", a window of %d to %d B (first flow)", c.MinWindowBytes, c.MaxWindowBytes)
			}
		}
		retx[algo] += nretx
		t.Logf("cc %s: 8 x 1 MiB in %v, switch buffer drops %d, retransmissions %d, RTOs %d%s",
			algo, wall.Round(time.Millisecond), d, nretx, rtos, window)
	}
	if 10*max(retx["mprdma"], 1) > retx[cc.None] {
		t.Errorf("mprdma: %d retransmissions in two rounds, not 10x fewer than none's %d", retx["mprdma"], retx[cc.None])
	}
	if drops["mprdma"] >= drops[cc.None] {
		t.Errorf("mprdma: %d buffer drops in two rounds, not fewer than none's %d", drops["mprdma"], drops[cc.None])
	}
}
