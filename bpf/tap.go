package bpf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
)

// The capture tap (c/tap.h). While a capture runs, xdp_ingress and
// tc_shaped copy the first SnapLen bytes of every frame crossing a tapped
// port into the capture's ring buffer, with the port, the direction and
// what the switch did with it; a Tap reads them. Each switch of a plane
// has its own tap configuration and ring slot; a Tap brings its own ring
// and puts it in its switch's slot, so switches nobody captures hold no
// ring memory. With no capture running the programs pay one array lookup
// per packet.

// Tap limits of the C side.
const (
	TapSnapMax   = 4096    // largest snaplen
	TapRingBytes = 1 << 22 // ring buffer size
	tapHdrLen    = 24      // sizeof(struct tap_hdr)
	tapNoPort    = 0xff
)

// TapDir is the direction of a frame at a tapped port.
type TapDir uint8

const (
	TapIn  TapDir = 1 // arrived on the port
	TapOut TapDir = 2 // sent from the port, or dropped at its egress
)

func (d TapDir) String() string {
	switch d {
	case TapIn:
		return "in"
	case TapOut:
		return "out"
	}
	return fmt.Sprintf("dir(%d)", uint8(d))
}

// TapVerdict is what the switch did with a frame.
type TapVerdict uint8

const (
	TapForward TapVerdict = 1 // forwarded (out of Peer, for IN records)
	TapDrop    TapVerdict = 2 // dropped, see the cause
	TapLocal   TapVerdict = 3 // to the switch itself
)

func (v TapVerdict) String() string {
	switch v {
	case TapForward:
		return "forwarded"
	case TapDrop:
		return "dropped"
	case TapLocal:
		return "local"
	}
	return fmt.Sprintf("verdict(%d)", uint8(v))
}

// TapCause is why a frame was dropped; the names are the PortCounters
// fields that count it.
type TapCause uint8

const (
	TapCauseNone      TapCause = 0
	TapCauseLinkDown  TapCause = 1
	TapCauseCorrupt   TapCause = 2
	TapCauseNonIPv4   TapCause = 3
	TapCauseMalformed TapCause = 4
	TapCauseTTL       TapCause = 5
	TapCauseNoRoute   TapCause = 6
	TapCauseBuffer    TapCause = 7
)

var tapCauseNames = [...]string{"", "link_down", "corrupt", "non_ipv4", "malformed", "ttl", "no_route", "buffer"}

func (c TapCause) String() string {
	if int(c) < len(tapCauseNames) {
		return tapCauseNames[c]
	}
	return fmt.Sprintf("cause(%d)", uint8(c))
}

// TapCauses lists the drop causes by name.
func TapCauses() []string { return append([]string(nil), tapCauseNames[1:]...) }

// TapFlags are details of a record.
type TapFlags uint8

const (
	TapTrimmed TapFlags = 1 // trimmed to its headers (shaped mode)
	TapCE      TapFlags = 2 // CE-marked by this switch
	TapTC      TapFlags = 4 // taken by tc_shaped; otherwise by xdp_ingress
)

// TapRecord is one frame the tap copied.
type TapRecord struct {
	Mono    time.Duration // CLOCK_MONOTONIC when the program saw it
	Len     int           // frame length
	Port    int           // the tapped port
	Dir     TapDir
	Verdict TapVerdict
	Cause   TapCause
	// Peer is the other port of a forwarded or egress-dropped frame: the
	// egress port of an IN record, the ingress port of an OUT record;
	// -1 if there is none (dropped at ingress, local).
	Peer  int
	Flags TapFlags
	Data  []byte // the first bytes of the frame; valid until the next Read
}

// ParseTapRecord decodes a ring record (struct tap_hdr, then the frame).
// rec.Data aliases b.
func ParseTapRecord(b []byte, rec *TapRecord) error {
	if len(b) < tapHdrLen {
		return fmt.Errorf("bpf: tap record of %d bytes, shorter than its header", len(b))
	}
	le := binary.NativeEndian
	caplen := int(le.Uint16(b[12:]))
	if len(b) < tapHdrLen+caplen {
		return fmt.Errorf("bpf: tap record of %d bytes holds less than its %d captured bytes", len(b), caplen)
	}
	*rec = TapRecord{
		Mono:    time.Duration(le.Uint64(b[0:])),
		Len:     int(le.Uint32(b[8:])),
		Port:    int(b[14]),
		Dir:     TapDir(b[15]),
		Verdict: TapVerdict(b[16]),
		Cause:   TapCause(b[17]),
		Peer:    int(b[18]),
		Flags:   TapFlags(b[19]),
		Data:    b[tapHdrLen : tapHdrLen+caplen],
	}
	if rec.Peer == tapNoPort {
		rec.Peer = -1
	}
	return nil
}

// TapConfig says what a tap copies.
type TapConfig struct {
	In, Out []int // ports whose arriving (In) and leaving (Out) frames are copied
	SnapLen int   // bytes copied per frame, 1..TapSnapMax
}

// Tap is one switch's capture tap: its configuration and the ring this
// capture reads. One Tap at a time should read a switch (a new one puts
// its own ring in the switch's slot); package capture serializes captures
// per switch.
type Tap struct {
	sw         uint32
	cfg, rings *ebpf.Map // the plane's tap_cfg and tap_rings
	ring       *ebpf.Map // this capture's ring, in tap_rings[sw]
	rd         *ringbuf.Reader
	rec        ringbuf.Record
}

// OpenTap opens the tap of switch sw of the plane pinned at dir (see
// OpenPlane).
func OpenTap(dir string, sw int) (*Tap, error) {
	cfg, err := ebpf.LoadPinnedMap(filepath.Join(dir, "maps", xdpIngressMapTapCfg), nil)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("bpf: %s has no capture tap (its data plane predates it: reinstall it)", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("bpf: open pinned map %s: %w", xdpIngressMapTapCfg, err)
	}
	rings, err := ebpf.LoadPinnedMap(filepath.Join(dir, "maps", xdpIngressMapTapRings), nil)
	if err != nil {
		cfg.Close()
		return nil, fmt.Errorf("bpf: open pinned map %s: %w", xdpIngressMapTapRings, err)
	}
	return newTap(cfg, rings, sw)
}

// Tap returns a tap on this switch (its own handles on the maps).
func (s *Switch) Tap() (*Tap, error) {
	if err := s.lock(); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	cfg, err := s.maps.TapCfg.Clone()
	if err != nil {
		return nil, fmt.Errorf("bpf: tap: %w", err)
	}
	rings, err := s.maps.TapRings.Clone()
	if err != nil {
		cfg.Close()
		return nil, fmt.Errorf("bpf: tap: %w", err)
	}
	return newTap(cfg, rings, s.id)
}

// newTap makes the capture's ring and puts it in the switch's slot,
// replacing the ring of a capture that ended without taking its own out
// (killed): that one's records are dropped with it.
func newTap(cfg, rings *ebpf.Map, sw int) (t *Tap, err error) {
	defer func() {
		if err != nil {
			cfg.Close()
			rings.Close()
		}
	}()
	if sw < 0 || uint32(sw) >= cfg.MaxEntries() {
		return nil, fmt.Errorf("bpf: tap: no switch %d (the plane has %d)", sw, cfg.MaxEntries())
	}
	ring, err := ebpf.NewMap(&ebpf.MapSpec{Name: "tap_ring", Type: ebpf.RingBuf, MaxEntries: TapRingBytes})
	if err != nil {
		return nil, fmt.Errorf("bpf: tap ring: %w", err)
	}
	rd, err := ringbuf.NewReader(ring)
	if err != nil {
		ring.Close()
		return nil, fmt.Errorf("bpf: tap ring: %w", err)
	}
	if err := rings.Put(uint32(sw), ring); err != nil {
		rd.Close()
		ring.Close()
		return nil, fmt.Errorf("bpf: tap ring of switch %d: %w", sw, err)
	}
	return &Tap{sw: uint32(sw), cfg: cfg, rings: rings, ring: ring, rd: rd}, nil
}

// Start arms the tap: from now on the programs copy what c names. It
// resets the lost count.
func (t *Tap) Start(c TapConfig) error {
	if c.SnapLen < 1 || c.SnapLen > TapSnapMax {
		return fmt.Errorf("bpf: tap snaplen %d out of range (1..%d)", c.SnapLen, TapSnapMax)
	}
	v := xdpIngressTapCfg{Active: 1, Snaplen: uint32(c.SnapLen)}
	for _, set := range []struct {
		ports []int
		mask  *[2]uint64
	}{{c.In, &v.In}, {c.Out, &v.Out}} {
		for _, p := range set.ports {
			if p < 0 || p >= MaxPorts {
				return fmt.Errorf("bpf: tap port %d out of range (0..%d)", p, MaxPorts-1)
			}
			set.mask[p/64] |= 1 << (p % 64)
		}
	}
	if err := t.cfg.Update(t.sw, &v, ebpf.UpdateAny); err != nil {
		return fmt.Errorf("bpf: arm tap: %w", err)
	}
	return nil
}

// Stop disarms the tap: the programs copy nothing more.
func (t *Tap) Stop() error {
	var v xdpIngressTapCfg
	if err := t.cfg.Lookup(t.sw, &v); err != nil {
		return fmt.Errorf("bpf: read tap: %w", err)
	}
	lost := v.Lost
	v = xdpIngressTapCfg{Lost: lost}
	if err := t.cfg.Update(t.sw, &v, ebpf.UpdateAny); err != nil {
		return fmt.Errorf("bpf: disarm tap: %w", err)
	}
	return nil
}

// Armed reports whether some capture has the tap armed.
func (t *Tap) Armed() (bool, error) {
	var v xdpIngressTapCfg
	if err := t.cfg.Lookup(t.sw, &v); err != nil {
		return false, fmt.Errorf("bpf: read tap: %w", err)
	}
	return v.Active != 0, nil
}

// Lost returns the records the programs could not queue since Start
// because the ring was full.
func (t *Tap) Lost() (uint64, error) {
	var v xdpIngressTapCfg
	if err := t.cfg.Lookup(t.sw, &v); err != nil {
		return 0, fmt.Errorf("bpf: read tap: %w", err)
	}
	return v.Lost, nil
}

// SetDeadline makes Read return os.ErrDeadlineExceeded (wrapped) after t
// if no record arrived; the zero time waits for ever.
func (t *Tap) SetDeadline(d time.Time) { t.rd.SetDeadline(d) }

// Pending returns the bytes of records waiting in the ring.
func (t *Tap) Pending() int { return t.rd.AvailableBytes() }

// ErrTapDrained is returned (wrapped) by Read once it has returned every
// record that was in the ring when Drain was called.
var ErrTapDrained = errors.New("tap drained")

// Read waits for the next record and decodes it into rec; rec.Data is
// valid until the next Read. After Close it returns an error wrapping
// os.ErrClosed, after Drain one wrapping ErrTapDrained.
func (t *Tap) Read(rec *TapRecord) error {
	if err := t.rd.ReadInto(&t.rec); err != nil {
		switch {
		case errors.Is(err, ringbuf.ErrClosed):
			return fmt.Errorf("bpf: tap: %w", os.ErrClosed)
		case errors.Is(err, ringbuf.ErrFlushed):
			return fmt.Errorf("bpf: tap: %w", ErrTapDrained)
		}
		return fmt.Errorf("bpf: tap: %w", err)
	}
	return ParseTapRecord(t.rec.RawSample, rec)
}

// Drain makes a Read in progress, and the ones after it, return the
// records in the ring and then ErrTapDrained: how a reader stops without
// losing what the programs already copied (Stop first, so none follow).
func (t *Tap) Drain() error { return t.rd.Flush() }

// Close disarms the tap, takes its ring out of the switch's slot and
// releases it. It unblocks a Read in progress.
func (t *Tap) Close() error {
	err := t.Stop()
	if derr := t.rings.Delete(t.sw); derr != nil && !errors.Is(derr, ebpf.ErrKeyNotExist) {
		err = errors.Join(err, fmt.Errorf("bpf: tap: take out the ring: %w", derr))
	}
	return errors.Join(err, t.rd.Close(), t.cfg.Close(), t.rings.Close(), t.ring.Close())
}
