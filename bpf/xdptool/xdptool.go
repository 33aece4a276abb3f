// Package xdptool measures data planes from the outside: an XDP program
// that counts what arrives on an interface (RxCounter), and an in-kernel
// packet generator (XDPGen, BPF_PROG_TEST_RUN with live frames) sending
// UDP frames built by UDPFrame. Tests of the switch and `ftlab bench` use
// them; they load hand-assembled programs, so they need no clang.
package xdptool

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/internal/nsutil"
)

// RxCounter is an XDP program that counts the packets and bytes arriving
// on interfaces and drops them, so no socket limits the measurement and
// nothing is answered back into the fabric. Native XDP also gives a veth
// the NAPI that XDP redirects into it need.
type RxCounter struct {
	m     *ebpf.Map
	prog  *ebpf.Program
	links []link.Link // one per Attach
}

// NewRxCounter loads the counter; Attach puts it on an interface.
func NewRxCounter() (*RxCounter, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 16, MaxEntries: 1})
	if err != nil {
		return nil, err
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.XDP, License: "GPL",
		Instructions: asm.Instructions{
			asm.FnXdpGetBuffLen.Call(),
			asm.Mov.Reg(asm.R7, asm.R0),
			asm.StoreImm(asm.RFP, -4, 0, asm.Word),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -4),
			asm.LoadMapPtr(asm.R1, m.FD()),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "out"),
			asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
			asm.Add.Imm(asm.R1, 1),
			asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
			asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord),
			asm.Add.Reg(asm.R1, asm.R7),
			asm.StoreMem(asm.R0, 8, asm.R1, asm.DWord),
			asm.Mov.Imm(asm.R0, 1).WithSymbol("out"), // XDP_DROP
			asm.Return(),
		},
	})
	if err != nil {
		m.Close()
		return nil, err
	}
	return &RxCounter{m: m, prog: prog}, nil
}

// Attach attaches the counter in native mode to ifname in namespace ns;
// one counter may count on several interfaces.
func (c *RxCounter) Attach(ns, ifname string) error {
	return nsutil.DoNamed(ns, func() error {
		nl, err := netlink.LinkByName(ifname)
		if err != nil {
			return err
		}
		lk, err := link.AttachXDP(link.XDPOptions{Program: c.prog, Interface: nl.Attrs().Index, Flags: link.XDPDriverMode})
		if err != nil {
			return err
		}
		c.links = append(c.links, lk)
		return nil
	})
}

// Read sums the per-CPU counts.
func (c *RxCounter) Read() (packets, bytes uint64, err error) {
	var per []struct{ P, B uint64 }
	if err := c.m.Lookup(uint32(0), &per); err != nil {
		return 0, 0, err
	}
	for _, v := range per {
		packets += v.P
		bytes += v.B
	}
	return packets, bytes, nil
}

// Close detaches and unloads the counter.
func (c *RxCounter) Close() {
	for _, lk := range c.links {
		_ = lk.Close()
	}
	c.prog.Close()
	c.m.Close()
}

// UDPFrame builds an Ethernet/IPv4/UDP frame of frameLen bytes (>= 42)
// with valid IP and UDP checksums.
func UDPFrame(dstMAC, srcMAC net.HardwareAddr, src, dst netip.Addr, sport, dport uint16, frameLen int) []byte {
	b := make([]byte, frameLen)
	copy(b[0:6], dstMAC)
	copy(b[6:12], srcMAC)
	binary.BigEndian.PutUint16(b[12:], 0x0800)
	ip := b[14:34]
	ip[0], ip[8], ip[9] = 0x45, 64, unix.IPPROTO_UDP
	binary.BigEndian.PutUint16(ip[2:], uint16(frameLen-14))
	binary.BigEndian.PutUint16(ip[6:], 0x4000)
	s4, d4 := src.As4(), dst.As4()
	copy(ip[12:16], s4[:])
	copy(ip[16:20], d4[:])
	binary.BigEndian.PutUint16(ip[10:], ^fold(sum16(0, ip)))
	udp := b[34:]
	binary.BigEndian.PutUint16(udp[0:], sport)
	binary.BigEndian.PutUint16(udp[2:], dport)
	binary.BigEndian.PutUint16(udp[4:], uint16(len(udp)))
	for i := 8; i < len(udp); i++ {
		udp[i] = byte(i)
	}
	var ph [12]byte
	copy(ph[0:4], s4[:])
	copy(ph[4:8], d4[:])
	ph[9] = unix.IPPROTO_UDP
	binary.BigEndian.PutUint16(ph[10:], uint16(len(udp)))
	cs := ^fold(sum16(sum16(0, ph[:]), udp))
	if cs == 0 {
		cs = 0xffff
	}
	binary.BigEndian.PutUint16(udp[6:], cs)
	return b
}

func sum16(s uint32, b []byte) uint32 {
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	return s
}

func fold(s uint32) uint16 {
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}

type xdpMd struct {
	Data, DataEnd, DataMeta, IngressIfindex, RxQueueIndex, EgressIfindex uint32
}

// XDPGen transmits a fixed frame out of an interface from inside the
// kernel: BPF_PROG_RUN with live frames runs a program returning XDP_TX
// with that interface as ingress, which the kernel sends out of it. The
// program rewrites the 42 header bytes each run (live mode recycles
// pages, and switches rewrite headers in place).
type XDPGen struct {
	prog    *ebpf.Program
	frame   []byte
	ns      string
	ifindex int
}

// NewXDPGen prepares a generator sending frame out of ifname in ns.
func NewXDPGen(ns, ifname string, frame []byte) (*XDPGen, error) {
	insns := asm.Instructions{
		asm.LoadMem(asm.R2, asm.R1, 0, asm.Word),
		asm.LoadMem(asm.R3, asm.R1, 4, asm.Word),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, 42),
		asm.JGT.Reg(asm.R4, asm.R3, "out"),
	}
	for off := 0; off < 40; off += 4 {
		insns = append(insns, asm.StoreImm(asm.R2, int16(off), int64(int32(binary.LittleEndian.Uint32(frame[off:]))), asm.Word))
	}
	insns = append(insns,
		asm.StoreImm(asm.R2, 40, int64(binary.LittleEndian.Uint16(frame[40:])), asm.Half),
		asm.Mov.Imm(asm.R0, 3).WithSymbol("out"), // XDP_TX
		asm.Return(),
	)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Type: ebpf.XDP, License: "GPL", Instructions: insns})
	if err != nil {
		return nil, err
	}
	g := &XDPGen{prog: prog, frame: frame, ns: ns}
	err = nsutil.DoNamed(ns, func() error {
		nl, err := netlink.LinkByName(ifname)
		if err == nil {
			g.ifindex = nl.Attrs().Index
		}
		return err
	})
	if err != nil {
		prog.Close()
		return nil, err
	}
	return g, nil
}

// Close unloads the program.
func (g *XDPGen) Close() { g.prog.Close() }

// Run transmits until stop is closed, as fast as possible when pps is 0,
// else paced to pps, adding the frames produced to *count.
func (g *XDPGen) Run(stop <-chan struct{}, pps float64, count *atomic.Uint64) error {
	var sent uint64
	return nsutil.DoNamed(g.ns, func() error {
		start := time.Now()
		for {
			select {
			case <-stop:
				return nil
			default:
			}
			n := uint64(1 << 14)
			if pps > 0 {
				due := uint64(pps * time.Since(start).Seconds())
				if due <= sent {
					time.Sleep(time.Millisecond)
					continue
				}
				n = min(due-sent, 1<<12)
			}
			_, err := g.prog.Run(&ebpf.RunOptions{
				Data: g.frame, Repeat: uint32(n), Flags: unix.BPF_F_TEST_XDP_LIVE_FRAMES,
				Context: xdpMd{DataEnd: uint32(len(g.frame)), IngressIfindex: uint32(g.ifindex)},
			})
			if err != nil {
				return fmt.Errorf("live-frame test run: %w", err)
			}
			sent += n
			count.Add(n)
		}
	})
}
