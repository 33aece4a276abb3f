package sim

import (
	"fmt"
	"time"
)

// Loss is a link's random loss model. Probabilities are per packet.
type Loss struct {
	// Corruption drops each packet independently with this probability,
	// after it has used the link (a bad CRC at the next hop).
	Corruption float64
	// BurstStart is the probability that a packet starts a loss burst
	// (Gilbert-Elliott: the link enters its bad state and drops the packet).
	BurstStart float64
	// BurstLen is the mean burst length in packets (geometric, >= 1).
	BurstLen float64
	// Duplicate sends a second copy right behind the packet.
	Duplicate float64
}

// LinkConfig describes one FIFO link.
type LinkConfig struct {
	Rate         float64       // bits per second; 0 serializes instantly
	Delay        time.Duration // propagation delay
	Buffer       int           // queue capacity in bytes (tail drop); 0 is unlimited
	ECNThreshold int           // CE-mark ECN-capable packets when the backlog is >= this; 0 never
	Loss         Loss
}

func (c LinkConfig) validate(what string) error {
	prob := func(name string, p float64) error {
		if p < 0 || p > 1 {
			return fmt.Errorf("sim: %s: %s %v is not a probability", what, name, p)
		}
		return nil
	}
	switch {
	case c.Rate < 0:
		return fmt.Errorf("sim: %s: negative rate %v", what, c.Rate)
	case c.Delay < 0:
		return fmt.Errorf("sim: %s: negative delay %v", what, c.Delay)
	case c.Buffer < 0 || c.ECNThreshold < 0:
		return fmt.Errorf("sim: %s: negative buffer or ECN threshold", what)
	case c.Loss.BurstStart > 0 && c.Loss.BurstLen < 1:
		return fmt.Errorf("sim: %s: burst length %v < 1", what, c.Loss.BurstLen)
	}
	for _, p := range []struct {
		n string
		v float64
	}{{"corruption", c.Loss.Corruption}, {"burst start", c.Loss.BurstStart}, {"duplicate", c.Loss.Duplicate}} {
		if err := prob(p.n, p.v); err != nil {
			return err
		}
	}
	return nil
}

// Config describes a network.
type Config struct {
	Seed  uint64
	Hosts int // at least 2
	Paths int // parallel paths per ordered host pair; default 8
	// Host is every host's uplink and downlink (the NIC and the edge
	// switch port); Path is every path's default. Use Network.Path to
	// change one path.
	Host LinkConfig
	Path LinkConfig
	// MTU is the largest IP packet; datagram payloads may be MTU-28 bytes.
	// Default 4096.
	MTU int
	// Overhead is what each datagram costs on a link beyond its payload
	// (Ethernet 14, IPv4 20, UDP 8 = 42 by default).
	Overhead int
}

// Defaults for zero Config fields.
const (
	DefaultPaths    = 8
	DefaultMTU      = 4096
	DefaultOverhead = 14 + 20 + 8
)

func (c *Config) fill() error {
	if c.Paths == 0 {
		c.Paths = DefaultPaths
	}
	if c.MTU == 0 {
		c.MTU = DefaultMTU
	}
	if c.Overhead == 0 {
		c.Overhead = DefaultOverhead
	}
	switch {
	case c.Hosts < 2 || c.Hosts > 1<<16:
		return fmt.Errorf("sim: %d hosts: want 2..65536", c.Hosts)
	case c.Paths < 1 || c.Paths > 1024:
		return fmt.Errorf("sim: %d paths: want 1..1024", c.Paths)
	case c.MTU < 128:
		return fmt.Errorf("sim: MTU %d too small", c.MTU)
	case c.Overhead < 0:
		return fmt.Errorf("sim: negative overhead %d", c.Overhead)
	}
	if err := c.Host.validate("host link"); err != nil {
		return err
	}
	return c.Path.validate("path")
}
