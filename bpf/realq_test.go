package bpf

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// TestRealQueueDecides: one 500-byte arrival into port 1's empty link
// model, with the port's real-queue entry (c/realq.h) set as the dequeue
// monitor would leave it. A fresh entry holding more than the model's
// backlog decides the drop, trim or CE mark; an unknown, stale or crossed
// one leaves the decision to the model. Buffer 2800 bytes, ECN threshold
// 1200.
func TestRealQueueDecides(t *testing.T) {
	requireRoot(t)
	const (
		slow = 80            // bit/s: the entry stays fresh for an hour
		fast = 8_000_000_000 // bit/s: stale after 20 ms
	)
	type want struct {
		Verdict         uint32
		CE, Trimmed     bool
		LagDecided      uint64
		EnqBytesGrewBy  uint64
		DropBufferCount uint64
	}
	for _, tc := range []struct {
		name    string
		rate    uint64
		trim    bool
		real    uint64        // the real backlog the entry gives
		crossed bool          // snap_enq > enq_bytes: the entry gives real - 500
		ago     time.Duration // the snapshot, before now; -1: none
		want    want
	}{
		{"none counted yet", slow, false, 2600, false, -1, want{Verdict: tcRedirect, EnqBytesGrewBy: lmFrameLen}},
		{"fresh, over the buffer", slow, false, 2600, false, 0, want{Verdict: tcShot, LagDecided: 1, DropBufferCount: 1}},
		{"fresh, over the buffer, trimming", slow, true, 2600, false, 0, want{Verdict: tcRedirect, Trimmed: true, LagDecided: 1, EnqBytesGrewBy: 14 + 20 + 8 + TrimKeep}},
		{"fresh, over the ECN threshold", slow, false, 1500, false, 0, want{Verdict: tcRedirect, CE: true, LagDecided: 1, EnqBytesGrewBy: lmFrameLen}},
		{"fresh, under both", slow, false, 600, false, 0, want{Verdict: tcRedirect, EnqBytesGrewBy: lmFrameLen}},
		{"fresh, counts crossed", slow, false, 2800, true, 0, want{Verdict: tcRedirect, CE: true, LagDecided: 1, EnqBytesGrewBy: lmFrameLen}},
		{"stale", fast, false, 2600, false, time.Second, want{Verdict: tcRedirect, EnqBytesGrewBy: lmFrameLen}},
		{"fast and fresh", fast, false, 2600, false, 0, want{Verdict: tcShot, LagDecided: 1, DropBufferCount: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := baseConfig()
			c.Mode, c.Trim = ModeShaped, tc.trim
			f := newFixture(t, c)
			pc := basePort(1)
			pc.RateBps, pc.BufferBytes, pc.ECNBytes = tc.rate, 2800, 1200
			f.must(f.s.SetPort(1, pc))
			f.ingress(4)

			// A snapshot that saw the qdisc hold real - 500 bytes,
			// and one 500-byte frame handed over since.
			const enq = 1 << 40
			rq := xdpIngressRealQueue{EnqBytes: enq, SnapEnq: enq - 500, SnapBacklog: tc.real - 500}
			if tc.crossed {
				// Counts from before a wrap or a reset: nothing handed
				// over since the snapshot.
				rq.SnapEnq = enq + 500
			}
			if tc.ago >= 0 {
				var ts unix.Timespec
				f.must(unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts))
				rq.SnapNs = uint64(ts.Nano() - tc.ago.Nanoseconds())
			}
			f.must(f.s.maps.Realq.Put(f.s.pp(1), rq))
			before := f.counters()

			in := lmFrame(0x02)
			v, out, _ := f.runTC(in)
			q, err := f.s.QueueStats(1)
			f.must(err)
			after, err := f.s.RealQueue(1)
			f.must(err)
			d := delta(before, f.counters())[1]
			got := want{
				Verdict:         v,
				CE:              v == tcRedirect && out[15]&3 == 3,
				Trimmed:         d.Trimmed == 1,
				LagDecided:      q.LagDecided,
				EnqBytesGrewBy:  after.EnqBytes - rq.EnqBytes,
				DropBufferCount: d.DropBuffer,
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if after.SnapEnq != rq.SnapEnq || after.SnapBacklog != rq.SnapBacklog || after.SnapNs != rq.SnapNs {
				t.Errorf("the switch wrote the monitor's fields: %+v, was %+v", after, rq)
			}
		})
	}
}

// TestWatchPort: a monitor loaded against a plane watches a port of it
// with its real-queue entry, refusing ports the plane lacks; one without
// a plane (or against a plane pinned without realq) only watches.
func TestWatchPort(t *testing.T) {
	requireRoot(t)
	f := newFixture(t, baseConfig())
	pp, err := f.s.PlanePort(1)
	f.must(err)
	if _, err := f.s.PlanePort(nPorts + MaxPorts); err == nil {
		t.Error("PlanePort accepted a port past the switch's")
	}
	const mark = 0x7f000201
	for _, tc := range []struct {
		name    string
		plane   *Plane
		port    uint32
		wantErr bool
	}{
		{"plane", f.s.p, pp, false},
		{"plane, no such port", f.s.p, 1 << 30, true},
		{"no plane", nil, 1 << 30, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := StartDequeueMonitor(0, tc.plane)
			f.must(err)
			t.Cleanup(func() { m.Close() })
			err = m.WatchPort(mark, tc.port)
			if (err != nil) != tc.wantErr {
				t.Fatalf("WatchPort: %v, want error %v", err, tc.wantErr)
			}
			if _, serr := m.Stats(mark); (serr != nil) != tc.wantErr {
				t.Errorf("Stats after WatchPort: %v", serr)
			}
			if err := m.WatchPort(0, tc.port); err == nil {
				t.Error("WatchPort(0) accepted")
			}
		})
	}
}
