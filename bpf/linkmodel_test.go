package bpf

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/hostagent/wire"
)

// The link model tests send bursts into port 1 (down route to 10.0.0.3)
// at a tiny rate (80 bit/s = 10 bytes/s), so the virtual FIFO hardly
// drains during a test: each 500-byte frame adds 50 s of backlog.

const lmFrameLen = 500

func lmFrame(tos uint8) []byte {
	return frame{dst: hostAddr(1), tos: tos, payload: lmFrameLen - 14 - 20 - 8}.bytes()
}

func shapedFixture(t *testing.T, trim bool, buffer, ecn uint64) *fixture {
	c := baseConfig()
	c.Mode = ModeShaped
	c.Trim = trim
	return shapedFixtureWith(t, c, buffer, ecn)
}

// shapedFixtureWith is shapedFixture with a switch configuration of the
// test's own (shaped mode).
func shapedFixtureWith(t *testing.T, c Config, buffer, ecn uint64) *fixture {
	f := newFixture(t, c)
	pc := basePort(1)
	pc.RateBps, pc.BufferBytes, pc.ECNBytes = 80, buffer, ecn
	f.must(f.s.SetPort(1, pc))
	f.ingress(4)
	return f
}

func TestECNAndBufferDrop(t *testing.T) {
	requireRoot(t)
	for _, tc := range []struct {
		name string
		tos  uint8
		mark bool
	}{
		{"ect0", 0x02, true},
		{"ect1", 0x01, true},
		{"not ect", 0x00, false},
		{"already ce", 0x03, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := shapedFixture(t, false, 2800, 1200)
			in := lmFrame(tc.tos)
			before := f.counters()
			// Arrivals see backlogs 0, 500, 1000, 1500, 2000, 2500 bytes:
			// above 1200 (4th, 5th) ECT gets CE; the 6th does not fit.
			var verdicts []uint32
			var ce []bool
			for i := range 6 {
				v, out, ctx := f.runTC(in)
				verdicts = append(verdicts, v)
				if v != tcRedirect {
					continue
				}
				want := forwarded(in, 1)
				if tc.mark && i >= 3 {
					want[15] |= 0x3
					fixIPChecksum(want)
				}
				if d := cmp.Diff(want, out); d != "" {
					t.Errorf("packet %d (-want +got):\n%s", i, d)
				}
				if !ipChecksumOK(out) {
					t.Errorf("packet %d: bad IPv4 checksum", i)
				}
				if ctx.priority() != 0 {
					t.Errorf("packet %d: priority %#x, want 0", i, ctx.priority())
				}
				ce = append(ce, out[15]&3 == 3 && in[15]&3 != 3)
			}
			wantV := []uint32{tcRedirect, tcRedirect, tcRedirect, tcRedirect, tcRedirect, tcShot}
			if d := cmp.Diff(wantV, verdicts); d != "" {
				t.Errorf("verdicts (-want +got):\n%s", d)
			}
			wantCE := []bool{false, false, false, tc.mark, tc.mark}
			if d := cmp.Diff(wantCE, ce); d != "" {
				t.Errorf("CE marks (-want +got):\n%s", d)
			}
			marks := uint64(0)
			if tc.mark {
				marks = 2
			}
			want := map[int]PortCounters{1: {TxPackets: 5, TxBytes: 5 * lmFrameLen, DropBuffer: 1, CEMarked: marks}}
			if d := cmp.Diff(want, delta(before, f.counters())); d != "" {
				t.Errorf("counter deltas (-want +got):\n%s", d)
			}

			q, err := f.s.QueueStats(1)
			if err != nil {
				t.Fatal(err)
			}
			if q.Packets != 5 || q.Bytes != 5*lmFrameLen {
				t.Errorf("queue accepted %d packets, %d bytes; want 5, %d", q.Packets, q.Bytes, 5*lmFrameLen)
			}
			if q.MaxBacklog < 5*lmFrameLen-10 || q.MaxBacklog > 5*lmFrameLen {
				t.Errorf("max backlog %d, want about %d", q.MaxBacklog, 5*lmFrameLen)
			}
			// Bucket width 2800/16 = 175 bytes: backlogs 0, ~500, ~1000,
			// ~1500, ~2000, ~2500 fall in buckets 0, 2, 5, 8, 11, 14.
			var wantHist [HistBuckets]uint64
			for _, b := range []int{0, 2, 5, 8, 11, 14} {
				wantHist[b] = 1
			}
			if q.BucketBytes != 175 || q.Hist != wantHist {
				t.Errorf("histogram %v (bucket %d bytes), want %v (175)", q.Hist, q.BucketBytes, wantHist)
			}
			if m := q.MeanBacklog(); q.LastNs > q.FirstNs && (m <= 0 || m > 2500) {
				t.Errorf("mean backlog %v, want within (0, 2500]", m)
			}
		})
	}
}

// TestBacklogIntegralExact starts port 1's FIFO from a known state and
// checks the trapezoid added by one arrival, to the byte*ns.
func TestBacklogIntegralExact(t *testing.T) {
	const rate = 8_000_000 // 1 byte per microsecond
	for _, tc := range []struct {
		name        string
		drainsAfter uint64 // ns after t_last at which the queue empties
	}{
		{"still draining", 50_000_000},
		{"emptied before the arrival", 2_000_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := shapedFixture(t, false, 1<<30, 0)
			pc := basePort(1)
			pc.RateBps, pc.BufferBytes = rate, 1<<30
			f.must(f.s.SetPort(1, pc))
			t0 := monoNow(t) - 5_000_000
			b0 := tc.drainsAfter * rate / 8_000_000_000
			st := xdpIngressFifo{T_next: t0 + tc.drainsAfter, T_first: t0, T_last: t0, B_last: b0}
			f.must(f.s.maps.Fifos.Update(uint32(1), &st, ebpf.UpdateLock))
			if v, _, _ := f.runTC(lmFrame(0)); v != tcRedirect {
				t.Fatalf("verdict %d", v)
			}
			q, err := f.s.QueueStats(1)
			if err != nil {
				t.Fatal(err)
			}
			now := q.LastNs
			end := min(now, st.T_next)
			var bEnd uint64
			if st.T_next > now {
				bEnd = (st.T_next - now) * rate / 8_000_000_000
			}
			want := float64((b0 + bEnd) * (end - t0) >> 1)
			if q.BacklogByteNs != want {
				t.Errorf("integral %v byte*ns, want %v", q.BacklogByteNs, want)
			}
			if q.LastBacklog != bEnd+lmFrameLen {
				t.Errorf("backlog after the arrival %d, want %d", q.LastBacklog, bEnd+lmFrameLen)
			}
		})
	}
}

func TestBacklogIntegral(t *testing.T) {
	f := shapedFixture(t, false, 1<<20, 0)
	// 1 Gbit/s: a 500-byte frame adds 4 us; the arrivals a few us apart
	// keep a backlog that the trapezoid integral must account for.
	pc := basePort(1)
	pc.RateBps, pc.BufferBytes = 1_000_000_000, 1<<20
	f.must(f.s.SetPort(1, pc))
	in := lmFrame(0)
	for range 50 {
		if v, _, _ := f.runTC(in); v != tcRedirect {
			t.Fatalf("verdict %d", v)
		}
	}
	q, err := f.s.QueueStats(1)
	if err != nil {
		t.Fatal(err)
	}
	if q.BacklogByteNs <= 0 || q.MeanBacklog() > float64(q.MaxBacklog) {
		t.Errorf("integral %v byte*ns, mean %v, max %d: want a positive mean below the max",
			q.BacklogByteNs, q.MeanBacklog(), q.MaxBacklog)
	}
	if err := f.s.ResetStats(1); err != nil {
		t.Fatal(err)
	}
	if q, _ := f.s.QueueStats(1); q != (QueueStats{BucketBytes: q.BucketBytes}) {
		t.Errorf("after reset: %+v", q)
	}
	if c, _ := f.s.PortCounters(1); c != (PortCounters{}) {
		t.Errorf("counters after reset: %+v", c)
	}
}

func TestTrimming(t *testing.T) {
	requireRoot(t)
	t.Run("data packet trimmed when the buffer is full", func(t *testing.T) {
		f := shapedFixture(t, true, 1200, 0)
		in := lmFrame(0)
		before := f.counters()
		for i := range 2 { // backlogs 0 and 500: both fit in 1200
			if v, _, ctx := f.runTC(in); v != tcRedirect || ctx.priority() != 0 {
				t.Fatalf("packet %d: verdict %d priority %#x", i, v, ctx.priority())
			}
		}
		v, out, ctx := f.runTC(in) // 1000 + 500 > 1200: trimmed
		if v != tcRedirect {
			t.Fatalf("verdict %d, want redirect", v)
		}
		const trimmed = 14 + 20 + 8 + TrimKeep
		want := forwarded(in, 1)[:trimmed]
		binary.BigEndian.PutUint16(want[16:18], 20+8+TrimKeep) // IPv4 total length
		fixIPChecksum(want)
		binary.BigEndian.PutUint16(want[38:40], 8+TrimKeep) // UDP length
		want[40], want[41] = 0, 0                           // UDP checksum off
		if d := cmp.Diff(want, out); d != "" {
			t.Errorf("trimmed frame (-want +got):\n%s", d)
		}
		if !ipChecksumOK(out) {
			t.Errorf("bad IPv4 checksum after trimming")
		}
		if ctx.priority() != TrimPriority {
			t.Errorf("priority %#x, want %#x", ctx.priority(), TrimPriority)
		}
		wantC := map[int]PortCounters{1: {TxPackets: 3, TxBytes: 2*lmFrameLen + trimmed, Trimmed: 1}}
		if d := cmp.Diff(wantC, delta(before, f.counters())); d != "" {
			t.Errorf("counter deltas (-want +got):\n%s", d)
		}
		if q, _ := f.s.QueueStats(1); q.Bytes != 2*lmFrameLen+trimmed {
			t.Errorf("queue bytes %d, want %d (trimmed size counts)", q.Bytes, 2*lmFrameLen+trimmed)
		}
	})

	t.Run("ack packets use the priority class, never dropped", func(t *testing.T) {
		f := shapedFixture(t, true, 1200, 0)
		for range 3 {
			f.runTC(lmFrame(0))
		}
		ack := frame{dst: hostAddr(1)}.bytes() // total length 28 <= 100
		v, out, ctx := f.runTC(ack)
		if v != tcRedirect || ctx.priority() != TrimPriority {
			t.Fatalf("ack: verdict %d priority %#x, want redirect in %#x", v, ctx.priority(), TrimPriority)
		}
		if d := cmp.Diff(forwarded(ack, 1), out); d != "" {
			t.Errorf("ack changed (-want +got):\n%s", d)
		}
	})

	t.Run("probes queue behind the data, in the normal class", func(t *testing.T) {
		// Ordered Chaos IV-B: probes are low priority; in the priority
		// class they would overtake the data of their own path.
		f := shapedFixture(t, true, 1200, 0)
		for range 2 {
			f.runTC(lmFrame(0))
		}
		b, err := wire.Marshal(&wire.Packet{Header: wire.Header{Type: wire.TypeRTX, Flow: 1, PSN: 7}})
		if err != nil {
			t.Fatal(err)
		}
		probe := frame{dst: hostAddr(1), data: b}.bytes()
		before, _ := f.s.QueueStats(1)
		v, _, ctx := f.runTC(probe)
		after, _ := f.s.QueueStats(1)
		if v != tcRedirect || ctx.priority() == TrimPriority {
			t.Fatalf("probe: verdict %d priority %#x, want redirect in the normal class", v, ctx.priority())
		}
		if after.Bytes-before.Bytes != uint64(len(probe)) {
			t.Errorf("the probe took %d bytes of the queue, want its %d", after.Bytes-before.Bytes, len(probe))
		}
		f.runTC(probe) // 1000 + 2 x 78 bytes fit in 1200, a third does not
		v, _, _ = f.runTC(probe)
		if v != tcShot {
			t.Errorf("a probe into a full buffer: verdict %d, want a drop (probes are not trimmed)", v)
		}
	})

	t.Run("non-udp data packet is dropped, not trimmed", func(t *testing.T) {
		f := shapedFixture(t, true, 1200, 0)
		for range 2 {
			f.runTC(lmFrame(0))
		}
		tcp := frame{dst: hostAddr(1), proto: protoTCP, payload: 440}.bytes()
		before := f.counters()
		if v, _, _ := f.runTC(tcp); v != tcShot {
			t.Fatalf("verdict %d, want drop", v)
		}
		if d := cmp.Diff(map[int]PortCounters{1: {DropBuffer: 1}}, delta(before, f.counters())); d != "" {
			t.Errorf("counter deltas (-want +got):\n%s", d)
		}
	})

	t.Run("trimming off drops", func(t *testing.T) {
		f := shapedFixture(t, false, 1200, 0)
		in := lmFrame(0)
		var got []uint32
		for range 3 {
			v, _, _ := f.runTC(in)
			got = append(got, v)
		}
		if d := cmp.Diff([]uint32{tcRedirect, tcRedirect, tcShot}, got); d != "" {
			t.Errorf("verdicts (-want +got):\n%s", d)
		}
	})
}

// TestProbeHeadroom: with a probe headroom (Ordered Chaos IV-B4) the last
// share of each port's buffer takes only ftlab's header-only probes, which
// the switch recognizes by their header (built here by hostagent/wire, so
// the program and the transport agree on the format). Port 1's buffer is
// 1200 bytes and hardly drains; a 25% headroom leaves 900 to every other
// packet: DATA, ACKs, and packets that only look like probes. Off, the same
// arrivals share the whole buffer.
func TestProbeHeadroom(t *testing.T) {
	requireRoot(t)
	enc := func(p wire.Packet) []byte {
		b, err := wire.Marshal(&p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	probe := frame{dst: hostAddr(1), data: enc(wire.Packet{Header: wire.Header{Type: wire.TypeTail, Flow: 1, PSN: 7}})}.bytes()
	rtx := frame{dst: hostAddr(1), data: enc(wire.Packet{Header: wire.Header{Type: wire.TypeRTX, Flow: 1, PSN: 7}})}.bytes()
	ack := frame{dst: hostAddr(1), data: enc(wire.Packet{Header: wire.Header{Type: wire.TypeACK, Flow: 1, PSN: 7}, CumAck: 8})}.bytes()
	notOurs := mutate(probe, func(b []byte) { b[42] = 'X' }) // a probe's size, not its magic
	fragment := mutate(probe, func(b []byte) { b[20] = 0x20; fixIPChecksum(b) })
	data := lmFrame(0)
	small := frame{dst: hostAddr(1), payload: 200 - 42}.bytes()
	if len(probe) != 14+20+8+wire.CommonLen || len(ack) <= len(probe) {
		t.Fatalf("probe frame %d bytes, ACK %d", len(probe), len(ack))
	}
	type arrival struct {
		name string
		in   []byte
		want uint32 // with the headroom
		off  uint32 // without
	}
	// Backlog after each accepted arrival in the comment (with / without).
	seq := []arrival{
		{"data", data, tcRedirect, tcRedirect},                 // 500 / 500
		{"data beyond 900", data, tcShot, tcRedirect},          // 500 / 1000
		{"probe", probe, tcRedirect, tcRedirect},               // 570 / 1070
		{"ack", ack, tcRedirect, tcRedirect},                   // 652 / 1152
		{"small data", small, tcRedirect, tcShot},              // 852 / 1152
		{"ack beyond 900", ack, tcShot, tcShot},                // 852 / 1152
		{"look-alike beyond 900", notOurs, tcShot, tcShot},     // 852 / 1152
		{"fragment beyond 900", fragment, tcShot, tcShot},      // 852 / 1152
		{"probe in the headroom", probe, tcRedirect, tcShot},   // 922 / 1152
		{"rtx probe in the headroom", rtx, tcRedirect, tcShot}, // 992 / 1152
		{"probe", probe, tcRedirect, tcShot},                   // 1062
		{"probe", probe, tcRedirect, tcShot},                   // 1132
		{"probe", probe, tcRedirect, tcShot},                   // 1202 > 1200: the headroom is full
	}
	seq[len(seq)-1].want = tcShot
	for _, headroom := range []float64{0.25, 0} {
		c := baseConfig()
		c.Mode, c.ProbeHeadroom = ModeShaped, headroom
		f := shapedFixtureWith(t, c, 1200, 0)
		if got := f.s.Config().ProbeHeadroom; got != headroom {
			t.Fatalf("config headroom %v, want %v", got, headroom)
		}
		var got, want []string
		for _, a := range seq {
			v, out, _ := f.runTC(a.in)
			w := a.want
			if headroom == 0 {
				w = a.off
			}
			got, want = append(got, fmt.Sprintf("%s: %d", a.name, v)), append(want, fmt.Sprintf("%s: %d", a.name, w))
			if v == tcRedirect {
				if d := cmp.Diff(forwarded(a.in, 1), out); d != "" {
					t.Errorf("headroom %v, %s: forwarded frame (-want +got):\n%s", headroom, a.name, d)
				}
			}
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("headroom %v: verdicts (-want +got):\n%s", headroom, d)
		}
	}
	c := baseConfig()
	c.Mode, c.ProbeHeadroom = ModeShaped, 0.6
	f := newFixture(t, baseConfig())
	if err := f.s.SetConfig(c); err == nil {
		t.Error("a headroom of 60% of the buffer was accepted")
	}
}
