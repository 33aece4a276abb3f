package harness

import (
	"github.com/ftlab/ftlab/hostagent/sim"
	"github.com/ftlab/ftlab/hostagent/wire"
)

// parsed returns the wire packet in a sim packet, or nil if it is not one.
func parsed(p *sim.Packet) *wire.Packet {
	var pk wire.Packet
	if wire.Parse(p.Payload, &pk) != nil {
		return nil
	}
	return &pk
}

// dropFirst drops the first n packets for which match is true.
func dropFirst(n int, match func(pk *wire.Packet) bool) sim.Filter {
	seen := 0
	return func(p *sim.Packet) bool {
		pk := parsed(p)
		if pk == nil || !match(pk) || seen >= n {
			return false
		}
		seen++
		return true
	}
}

// dropTails drops the first copy of the last packet of every message.
func dropTails() sim.Filter {
	type key struct{ flow, msg uint32 }
	done := map[key]bool{}
	return func(p *sim.Packet) bool {
		pk := parsed(p)
		if pk == nil || pk.Type != wire.TypeData || pk.Flags&wire.FlagRetx != 0 ||
			pk.Offset+uint32(len(pk.Payload)) != pk.MsgLen {
			return false
		}
		k := key{pk.Flow, pk.Msg}
		if done[k] {
			return false
		}
		done[k] = true
		return true
	}
}

func isType(t wire.Type) func(*wire.Packet) bool {
	return func(pk *wire.Packet) bool { return pk.Type == t }
}

func isRetx(pk *wire.Packet) bool { return pk.Type == wire.TypeData && pk.Flags&wire.FlagRetx != 0 }

// onPaths changes the configuration of every path of the network.
func onPaths(n *sim.Network, f func(*sim.LinkConfig)) {
	c := n.Config()
	for s := 0; s < c.Hosts; s++ {
		for d := 0; d < c.Hosts; d++ {
			if s == d {
				continue
			}
			for k := 0; k < c.Paths; k++ {
				l := n.Path(s, d, k)
				lc := l.Config()
				f(&lc)
				if err := l.Set(lc); err != nil {
					panic(err)
				}
			}
		}
	}
}
