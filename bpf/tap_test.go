package bpf

import (
	"bytes"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// tapSeen is the part of a record the tap tests compare.
type tapSeen struct {
	Port    int
	Dir     TapDir
	Verdict TapVerdict
	Cause   TapCause
	Peer    int
	Flags   TapFlags
	Len     int
	CapLen  int
}

// drain reads every record the ring holds now.
func drain(t *testing.T, tap *Tap) ([]tapSeen, [][]byte) {
	t.Helper()
	var seen []tapSeen
	var data [][]byte
	for {
		tap.SetDeadline(time.Now().Add(50 * time.Millisecond))
		var rec TapRecord
		err := tap.Read(&rec)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return seen, data
		}
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, tapSeen{rec.Port, rec.Dir, rec.Verdict, rec.Cause, rec.Peer, rec.Flags, rec.Len, len(rec.Data)})
		data = append(data, bytes.Clone(rec.Data))
	}
}

func openTap(t *testing.T, f *fixture) *Tap {
	t.Helper()
	tap, err := f.s.Tap()
	f.must(err)
	t.Cleanup(func() { tap.Close() })
	return tap
}

// TestTapLineRate: what xdp_ingress copies for each verdict, and nothing
// for untapped ports or while disarmed.
func TestTapLineRate(t *testing.T) {
	f := newFixture(t, baseConfig())
	tap := openTap(t, f)
	down, err := udpFrame(hostAddr(1), 458) // to port 1
	f.must(err)
	ttl1 := bytes.Clone(down)
	ttl1[14+8] = 1

	// Disarmed: nothing.
	f.ingress(4)
	if v, _ := f.runXDP(down); v != xdpRedirect {
		t.Fatalf("verdict %d", v)
	}
	if got, _ := drain(t, tap); len(got) != 0 {
		t.Fatalf("disarmed tap copied %v", got)
	}

	f.must(tap.Start(TapConfig{In: []int{4}, Out: []int{1}, SnapLen: 64}))
	v, out := f.runXDP(down)
	if v != xdpRedirect {
		t.Fatalf("verdict %d", v)
	}
	_, _ = f.runXDP(ttl1)
	f.ingress(5) // untapped ingress, tapped egress
	_, _ = f.runXDP(down)
	f.ingress(4)
	f.must(f.s.SetPortUp(1, false))
	_, _ = f.runXDP(down)
	f.must(f.s.SetPortUp(1, true))
	f.ingress(2) // neither tapped: its uplink traffic is invisible
	up, err := udpFrame(costUp, 100)
	f.must(err)
	_, _ = f.runXDP(up)

	got, data := drain(t, tap)
	n := len(down)
	want := []tapSeen{
		{4, TapIn, TapForward, TapCauseNone, 1, 0, n, 64},
		{1, TapOut, TapForward, TapCauseNone, 4, 0, n, 64},
		{4, TapIn, TapDrop, TapCauseTTL, -1, 0, n, 64},
		{1, TapOut, TapForward, TapCauseNone, 5, 0, n, 64},
		{4, TapIn, TapDrop, TapCauseLinkDown, 1, 0, n, 64},
		{1, TapOut, TapDrop, TapCauseLinkDown, 4, 0, n, 64},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("records (-want +got):\n%s", d)
	}
	// IN is the frame as it arrived, OUT as it left.
	if !bytes.Equal(data[0], down[:64]) {
		t.Errorf("IN record is not the arriving frame:\n%x\n%x", data[0], down[:64])
	}
	if !bytes.Equal(data[1], out[:64]) {
		t.Errorf("OUT record is not the forwarded frame:\n%x\n%x", data[1], out[:64])
	}
	if lost, err := tap.Lost(); err != nil || lost != 0 {
		t.Errorf("lost %d, %v", lost, err)
	}

	f.must(tap.Stop())
	_, _ = f.runXDP(down)
	if got, _ := drain(t, tap); len(got) != 0 {
		t.Fatalf("stopped tap copied %v", got)
	}
}

// TestTapShaped: in shaped mode the IN record comes from tc_shaped with
// the forwarding verdict, and a buffer drop is an egress record too.
func TestTapShaped(t *testing.T) {
	cfg := baseConfig()
	cfg.Mode = ModeShaped
	f := newFixture(t, cfg)
	tap := openTap(t, f)
	down, err := udpFrame(hostAddr(1), 458)
	f.must(err)
	f.must(tap.Start(TapConfig{In: []int{4}, Out: []int{1}, SnapLen: TapSnapMax}))
	f.ingress(4)
	if v, _ := f.runXDP(down); v != xdpPass {
		t.Fatalf("xdp verdict %d", v)
	}
	if v, _, _ := f.runTC(down); v != tcRedirect {
		t.Fatalf("tc verdict %d", v)
	}
	// A full buffer at port 1.
	pc := basePort(1)
	pc.RateBps, pc.BufferBytes = 8000, 100
	f.must(f.s.SetPort(1, pc))
	f.ingress(4) // SetPort pointed lo at port 1
	if v, _, _ := f.runTC(down); v != tcShot {
		t.Fatalf("tc verdict %d on a full buffer", v)
	}
	got, _ := drain(t, tap)
	n := len(down)
	want := []tapSeen{
		{4, TapIn, TapForward, TapCauseNone, 1, TapTC, n, n},
		{1, TapOut, TapForward, TapCauseNone, 4, TapTC, n, n},
		{4, TapIn, TapDrop, TapCauseBuffer, 1, TapTC, n, n},
		{1, TapOut, TapDrop, TapCauseBuffer, 4, TapTC, n, n},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("records (-want +got):\n%s", d)
	}
}

func TestParseTapRecordShort(t *testing.T) {
	var rec TapRecord
	if err := ParseTapRecord(make([]byte, 10), &rec); err == nil {
		t.Error("a 10-byte record parsed")
	}
	b := make([]byte, tapHdrLen)
	b[12] = 5 // caplen 5, no data
	if err := ParseTapRecord(b, &rec); err == nil {
		t.Error("a record shorter than its caplen parsed")
	}
}
