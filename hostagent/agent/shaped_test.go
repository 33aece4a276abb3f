package agent_test

import (
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd"
)

// TestShapedMode: in shaped mode every link, the hosts' included, runs at
// its rate (100 Mbit/s in fattree-k4) with real queues, and the agent
// paces at that rate: rss+pfld moves a message across the core intact.
func TestShapedMode(t *testing.T) {
	l := newLab(t, switchd.Config{Mode: switchd.ModeShaped, EdgePolicy: "ecmp", Seed: 2})
	link := l.topo.Links[0].Up.RateBps
	spin := 200 * time.Microsecond
	as := l.startAgents(t, []string{"h0-0-0", "h3-1-1"}, control.Configure{Scheme: "rss+pfld", Transport: control.Transport{
		HostParams: transport.HostParams{Pacing: link, MinRTO: 50 * time.Millisecond}, SpinNs: int64(spin),
	}})
	const size = 4 << 20
	out := as.run(l, []transfer{{src: "h0-0-0", dst: "h3-1-1"}}, size, 30*time.Second)
	final := as.stop()
	checkIntact(t, out, size)
	s, f := out[0].sent.Record, out[0].flow.Record
	t.Logf("4 MiB at %d Mbit/s pacing: %v (%s), retx %d (needed %d), NACKs %d, RTOs %d; srtt %v; pacing accuracy %.2f; CE arrivals %d",
		link/1e6, time.Duration(s.FCTNs).Round(time.Millisecond), mbps(s.Bytes, s.FCTNs), s.Retransmissions, s.RetxNeeded, s.NACKs, s.RTOs,
		time.Duration(f.SRTTNs).Round(time.Microsecond), f.Pacing.Accuracy, final["h3-1-1"].Conn.RxCE)
	stats, err := l.ctl.Stats()
	if err != nil {
		t.Fatal(err)
	}
	var drops, marks uint64
	for _, p := range stats {
		drops += p.Counters.Drops()
		marks += p.Counters.CEMarked
	}
	t.Logf("switches: %d drops, %d CE marks", drops, marks)
	if ideal := time.Duration(float64(size) * 8 / float64(link) * 1e9); time.Duration(s.FCTNs) < ideal {
		t.Errorf("FCT %v beats the link (%v): shaping is not in effect", time.Duration(s.FCTNs), ideal)
	}
}

// TestShapedIncastECN: three hosts send to one at their link rate (100
// Mbit/s), and the receiver's own link is slowed to 20 Mbit/s, so its
// edge port queues past the ECN threshold however slowly the senders
// manage to send. DATA packets are ECT(0); every CE mark a switch makes
// arrives at the receiver, and the receiver echoes each CE-marked DATA
// packet to its sender with ECE.
func TestShapedIncastECN(t *testing.T) {
	const dst = "h3-1-1"
	l := newLab(t, switchd.Config{Mode: switchd.ModeShaped, EdgePolicy: "ecmp", Seed: 3}, func(topo *topology.Topology) {
		for i := range topo.Links {
			if topo.Links[i].A.Node == dst {
				topo.Links[i].Down.RateBps = 20e6
			}
		}
	})
	link := l.topo.Links[0].Up.RateBps
	senders := []string{"h0-0-0", "h1-0-0", "h2-0-0"}
	as := l.startAgents(t, append([]string{dst}, senders...), control.Configure{Scheme: "rss+pfld", Transport: control.Transport{
		HostParams: transport.HostParams{Pacing: link, MinRTO: 50 * time.Millisecond, Window: 64 << 10},
	}})
	var msgs []transfer
	for _, s := range senders {
		msgs = append(msgs, transfer{src: s, dst: dst})
	}
	const size = 512 << 10
	out := as.run(l, msgs, size, 30*time.Second)
	final := as.stop()
	checkIntact(t, out, size)
	stats, err := l.ctl.Stats()
	if err != nil {
		t.Fatal(err)
	}
	var marks, drops uint64
	for _, p := range stats {
		marks += p.Counters.CEMarked
		drops += p.Counters.Drops()
	}
	var ece uint64
	for _, s := range senders {
		ece += final[s].ECEACKs
	}
	rx := final[dst]
	t.Logf("switches marked %d and dropped %d; receiver got %d CE (%d DATA); senders got %d ECE ACKs", marks, drops, rx.Conn.RxCE, rx.CEData, ece)
	if marks == 0 {
		t.Fatal("no CE marks: the incast did not queue")
	}
	// A packet marked at one hop may still be dropped at a later, full
	// one: every CE that arrives was marked, and every mark arrives unless
	// its packet was dropped after it.
	if rx.Conn.RxCE > marks || rx.Conn.RxCE+drops < marks {
		t.Errorf("switches marked %d packets and dropped %d; %d arrived CE", marks, drops, rx.Conn.RxCE)
	}
	if ece != rx.CEData {
		t.Errorf("%d DATA packets arrived CE, %d ACKs echoed it", rx.CEData, ece)
	}
}
