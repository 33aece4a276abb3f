package harness

import (
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/sim"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
)

const (
	gbps    = 1e9
	linkBps = 100 * gbps
)

// fabric is the test network: hosts on 100 Gbit/s links, 8 parallel
// 100 Gbit/s paths per host pair whose propagation delays differ (1 to
// 4.5 µs), so packets of one flow on different EVs arrive out of order.
func fabric(hosts int, seed uint64) sim.Config {
	return sim.Config{
		Seed: seed, Hosts: hosts, Paths: 8,
		Host: sim.LinkConfig{Rate: linkBps, Delay: 500 * time.Nanosecond, Buffer: 4 << 20},
		Path: sim.LinkConfig{Rate: linkBps, Delay: time.Microsecond, Buffer: 1 << 20},
	}
}

// skewPaths gives path k between every pair a delay of 1 µs + k*500 ns.
func skewPaths(n *sim.Network) {
	c := n.Config()
	for s := 0; s < c.Hosts; s++ {
		for d := 0; d < c.Hosts; d++ {
			if s == d {
				continue
			}
			for k := 0; k < c.Paths; k++ {
				l := n.Path(s, d, k)
				lc := l.Config()
				lc.Delay = time.Microsecond + time.Duration(k)*500*time.Nanosecond
				if err := l.Set(lc); err != nil {
					panic(err)
				}
			}
		}
	}
}

// endpointConfig paces at line rate with a 256 KiB window and a 100 µs
// minimum RTO (several times the fabric's worst RTT).
func endpointConfig(s transport.Scheme) transport.Config {
	return transport.Config{
		Scheme: s, Rate: linkBps, Window: 256 << 10,
		InitialRTO: 200 * time.Microsecond, MinRTO: 100 * time.Microsecond, MaxRTO: 10 * time.Millisecond,
	}
}

// simEnv is the simulated fabric's base RTT for the schemes' RTT-relative
// defaults: the test fabric's unloaded round trips run from 5 µs (unskewed)
// to 12 µs (the slowest skewed path), about the paper's 12 µs. Tests of
// RSS's rerouting written against Ordered Chaos's 15 µs tau pin it
// (paperTau).
var simEnv = params.Env{RTT: 7500 * time.Nanosecond}

// paperTau is Ordered Chaos's rerouting interval (V-A2), the default of
// rss.tau here until it became one base RTT.
const paperTau = "15us"

// schemes returns every scheme with default parameters.
func schemes(t testing.TB) map[string]transport.Scheme {
	out := map[string]transport.Scheme{}
	for _, name := range scheme.Names() {
		out[name] = named(t, name, nil)
	}
	return out
}
