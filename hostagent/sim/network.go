package sim

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/netio"
)

// Time converts a duration since the start of a run to a clock time.
func Time(d time.Duration) clock.Time { return clock.Time(d) }

// Packet is a datagram in flight. Filters may read it; Payload is owned by
// the network and reused after the packet is delivered or dropped.
type Packet struct {
	Src, Dst int // host indices
	EV       uint16
	ECN      netio.ECN
	Path     int // index of the path between Src and Dst
	Payload  []byte
	Sent     clock.Time // when the sending host handed it over
	Dup      bool       // a copy made by a Duplicate loss model
}

// Network is the simulated fabric. It and everything in it belong to the
// goroutine that runs its clock.
type Network struct {
	cfg     Config
	clk     *clock.Virtual
	hosts   []*Host
	byAddr  map[netip.Addr]int
	paths   []*Link // [src][dst][k] flattened
	filters []Filter
	links   uint64   // links made, numbers their random streams
	pool    [][]byte // free MTU-sized payload buffers
	small   [][]byte // free small ones
}

// New builds a network of cfg.Hosts hosts on a fresh virtual clock.
func New(cfg Config) (*Network, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	n := &Network{cfg: cfg, clk: clock.NewVirtual(), byAddr: make(map[netip.Addr]int, cfg.Hosts)}
	for i := 0; i < cfg.Hosts; i++ {
		h := &Host{net: n, id: i, addr: HostAddr(i)}
		h.up = n.newLink(fmt.Sprintf("h%d-up", i), cfg.Host)
		h.down = n.newLink(fmt.Sprintf("h%d-down", i), cfg.Host)
		h.up.next = n.route
		h.down.next = h.deliver
		n.hosts = append(n.hosts, h)
		n.byAddr[h.addr] = i
	}
	n.paths = make([]*Link, cfg.Hosts*cfg.Hosts*cfg.Paths)
	for s := 0; s < cfg.Hosts; s++ {
		for d := 0; d < cfg.Hosts; d++ {
			if s == d {
				continue
			}
			for k := 0; k < cfg.Paths; k++ {
				l := n.newLink(fmt.Sprintf("h%d-h%d-p%d", s, d, k), cfg.Path)
				l.next = n.hosts[d].down.enqueue
				n.paths[n.pathIndex(s, d, k)] = l
			}
		}
	}
	return n, nil
}

// HostAddr is the address of host i: 198.18.x.y, the benchmarking range,
// since these addresses only ever name simulated hosts.
func HostAddr(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)})
}

func (n *Network) newLink(name string, c LinkConfig) *Link {
	n.links++
	return &Link{Name: name, cfg: c, net: n, rng: rand.New(rand.NewPCG(n.cfg.Seed, n.links))}
}

func (n *Network) pathIndex(src, dst, k int) int { return (src*n.cfg.Hosts+dst)*n.cfg.Paths + k }

// Clock is the network's virtual clock; run it to run the network.
func (n *Network) Clock() *clock.Virtual { return n.clk }

// Config returns the configuration with defaults filled in.
func (n *Network) Config() Config { return n.cfg }

// Host returns host i.
func (n *Network) Host(i int) *Host { return n.hosts[i] }

// Path returns path k from src to dst.
func (n *Network) Path(src, dst, k int) *Link { return n.paths[n.pathIndex(src, dst, k)] }

// AddFilter adds f to the filters every packet entering a path goes through.
func (n *Network) AddFilter(f Filter) { n.filters = append(n.filters, f) }

// PathOf returns the path ECMP picks for a packet from src to dst with
// entropy value ev: a hash of the 5-tuple (addresses, UDP, source port ev,
// the agent's port) salted with the seed, as a switch salts its hash.
func (n *Network) PathOf(src, dst int, ev uint16) int {
	h := n.cfg.Seed ^ 0x9E3779B97F4A7C15
	h = mix(h ^ uint64(src)<<32 ^ uint64(dst))
	h = mix(h ^ 17<<16 ^ uint64(ev))
	return int(h % uint64(n.cfg.Paths))
}

// mix is the splitmix64 finalizer: every input bit affects every output bit.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 27
	x *= 0x94D049BB133111EB
	return x ^ x>>31
}

// route moves a packet from its sender's uplink onto its path.
func (n *Network) route(p *Packet) {
	l := n.paths[n.pathIndex(p.Src, p.Dst, p.Path)]
	for _, f := range n.filters {
		if f(p) {
			l.stats.FilterDrops++
			n.free(p)
			return
		}
	}
	l.enqueue(p)
}

// Payload buffers come from two free lists, one for header-only packets
// (ACKs, NACKs, probes) and one for MTU-sized ones, so a steady-state run
// allocates nothing per packet.
const smallBuf = 256

func (n *Network) alloc(size int) []byte {
	pool := &n.pool
	c := n.cfg.MTU
	if size <= smallBuf {
		pool, c = &n.small, smallBuf
	}
	if k := len(*pool); k > 0 && size <= c {
		b := (*pool)[k-1]
		*pool = (*pool)[:k-1]
		return b[:size]
	}
	return make([]byte, size, max(size, c))
}

func (n *Network) free(p *Packet) {
	switch c := cap(p.Payload); {
	case c == smallBuf:
		n.small = append(n.small, p.Payload[:0])
	case c == n.cfg.MTU:
		n.pool = append(n.pool, p.Payload[:0])
	}
	p.Payload = nil
}

func (n *Network) clone(p *Packet) *Packet {
	c := *p
	c.Payload = n.alloc(len(p.Payload))
	copy(c.Payload, p.Payload)
	return &c
}
