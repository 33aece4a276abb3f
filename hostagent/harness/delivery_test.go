package harness

import (
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/sim"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// workload mixes sizes (empty, one byte, one packet, many) over several
// flows, in both directions and from two senders into one receiver.
func workload() []Message {
	us := time.Microsecond
	return []Message{
		{From: 0, To: 1, Size: 4 << 20},
		{From: 0, To: 1, Size: 0, At: 10 * us},
		{From: 0, To: 1, Size: 1, At: 10 * us},
		{From: 0, To: 1, Size: 1 << 20, Flow: 1},
		{From: 0, To: 1, Size: 4056, Flow: 1, At: 50 * us},
		{From: 1, To: 0, Size: 300 << 10},
		{From: 2, To: 1, Size: 1 << 20, At: 20 * us},
		{From: 2, To: 1, Size: 100 << 10, At: 20 * us},
	}
}

// faults are the loss situations every scheme must survive.
var faults = []struct {
	name string
	// noSpurious: rss+pfld must not retransmit anything the receiver had.
	noSpurious bool
	setup      func(n *sim.Network)
}{
	{"clean", true, nil},
	{"corruption", true, func(n *sim.Network) {
		onPaths(n, func(c *sim.LinkConfig) { c.Loss.Corruption = 5e-3 })
	}},
	{"burst loss", true, func(n *sim.Network) {
		onPaths(n, func(c *sim.LinkConfig) { c.Loss.BurstStart, c.Loss.BurstLen = 1e-3, 8 })
	}},
	{"tail loss", true, func(n *sim.Network) { n.AddFilter(dropTails()) }},
	{"retransmission loss", true, func(n *sim.Network) {
		onPaths(n, func(c *sim.LinkConfig) { c.Loss.Corruption = 3e-3 })
		n.AddFilter(dropFirst(5, isRetx))
	}},
	{"probe and NACK loss", true, func(n *sim.Network) {
		onPaths(n, func(c *sim.LinkConfig) { c.Loss.Corruption = 3e-3 })
		n.AddFilter(dropFirst(5, isType(wire.TypeNACK)))
		for _, t := range []wire.Type{wire.TypeTail, wire.TypeSectionEnd, wire.TypePeriodic, wire.TypeRTX} {
			n.AddFilter(dropFirst(3, isType(t)))
		}
		n.AddFilter(dropTails())
	}},
	{"duplication", false, func(n *sim.Network) {
		onPaths(n, func(c *sim.LinkConfig) { c.Loss.Duplicate, c.Loss.Corruption = 0.02, 2e-3 })
	}},
	// Spurious retransmissions are possible here: ACKs travel the failed
	// reverse path too, and a packet whose ACKs all die is retransmitted
	// on RTO although it arrived (RTO is allowed to be wrong).
	{"path failure", false, func(n *sim.Network) {
		// Path 3 of every pair, both directions, dies 100 µs in.
		c := n.Config()
		for s := 0; s < c.Hosts; s++ {
			for d := 0; d < c.Hosts; d++ {
				if s != d {
					n.Path(s, d, 3).Fail(sim.Time(100*time.Microsecond), 0)
				}
			}
		}
	}},
}

// TestExactlyOnceDelivery runs every scheme under every fault, without
// congestion control and with each algorithm: the window and the pacing
// it sets must never cost a message or deliver one twice.
func TestExactlyOnceDelivery(t *testing.T) {
	for _, f := range faults {
		for name, s := range schemes(t) {
			for _, algo := range cc.Names() {
				cfg, net := endpointConfig(s), fabric(3, 7)
				sub := f.name + "/" + name
				if algo != cc.None {
					// Marks too, so the windows move on every signal.
					cfg, net.Host.ECNThreshold = withCC(t, cfg, algo, simEnv), 64<<10
					sub += "/" + algo
				}
				t.Run(sub, func(t *testing.T) {
					t.Parallel()
					sc := Scenario{Net: net, Transport: cfg, Messages: workload(),
						Setup: func(n *sim.Network) {
							skewPaths(n)
							if f.setup != nil {
								f.setup(n)
							}
						}}
					res, err := Run(sc)
					if err != nil {
						t.Fatal(err)
					}
					if err := res.CheckExactlyOnce(sc); err != nil {
						t.Fatal(err)
					}
					tot := res.Totals()
					t.Logf("end %v, %+v", res.End, tot)
					if name == "rss+pfld" && f.noSpurious && (tot.SpuriousRx != 0 || tot.SpuriousTx != 0) {
						t.Errorf("rss+pfld made spurious retransmissions: receiver %d, sender %d", tot.SpuriousRx, tot.SpuriousTx)
					}
				})
			}
		}
	}
}
