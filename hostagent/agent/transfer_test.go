package agent_test

import (
	"testing"
	"time"

	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/switchd"
)

const mib16 = 16 << 20

// checkIntact checks that every message was acknowledged and delivered
// whole and verified, on both sides.
func checkIntact(t *testing.T, out []*transfer, bytes int) {
	t.Helper()
	for i, tr := range out {
		if tr.sent == nil || tr.recv == nil || tr.flow == nil {
			t.Fatalf("message %d (%s->%s): sent %v, delivered %v, flow %v", i, tr.src, tr.dst, tr.sent != nil, tr.recv != nil, tr.flow != nil)
		}
		s, r := tr.sent.Record, tr.recv.Record
		if s.Bytes != bytes || r.Bytes != bytes || !r.Verified || !tr.flow.Done {
			t.Errorf("message %d: sent %d bytes, delivered %d (verified %v)", i, s.Bytes, r.Bytes, r.Verified)
		}
		if s.Flow != r.Flow || s.Msg != r.Msg || r.Peer != tr.recv.From {
			t.Errorf("message %d: sender (flow %d msg %d) and receiver (flow %d msg %d from %s) disagree", i, s.Flow, s.Msg, r.Flow, r.Msg, tr.recv.From)
		}
	}
}

// TestEverySchemeMoves16MiB: every scheme moves 16 MiB between hosts in
// different pods, through the eBPF switch (line-rate mode, ECMP), intact.
func TestEverySchemeMoves16MiB(t *testing.T) {
	l := newLab(t, switchd.Config{Mode: switchd.ModeLineRate, EdgePolicy: "ecmp", Seed: 1})
	for _, name := range scheme.Names() {
		t.Run(name, func(t *testing.T) {
			as := l.startAgents(t, []string{"h0-0-0", "h2-1-1"}, control.Configure{
				// Unpaced; the RTO well above the RTTs of a busy 2-CPU
				// machine, so that time goes to moving data.
				Scheme: name, Transport: control.Transport{HostParams: transport.HostParams{MinRTO: 100 * time.Millisecond, InitialRTO: 100 * time.Millisecond}},
			})
			start := time.Now()
			out := as.run(l, []transfer{{src: "h0-0-0", dst: "h2-1-1"}}, mib16, 20*time.Second)
			wall := time.Since(start)
			final := as.stop()
			checkIntact(t, out, mib16)
			s := out[0].sent.Record
			t.Logf("%s: 16 MiB in %v (%s; wall %v), %d packets, retx %d (needed %d, spurious %d), NACKs %d, probes %d, RTOs %d, reroutes %d",
				name, time.Duration(s.FCTNs).Round(time.Microsecond), mbps(s.Bytes, s.FCTNs), wall.Round(time.Millisecond),
				s.Packets, s.Retransmissions, s.RetxNeeded, s.RetxSpurious, s.NACKs, s.Probes.Total(), s.RTOs, s.Reroutes)
			for h, st := range final {
				if st.Conn.RxDropped != 0 || st.Endpoint.CorruptPayload != 0 || st.Endpoint.MalformedTotal() != 0 {
					t.Errorf("%s: rx dropped %d, corrupt %d, malformed %d", h, st.Conn.RxDropped, st.Endpoint.CorruptPayload, st.Endpoint.MalformedTotal())
				}
			}
		})
	}
}
