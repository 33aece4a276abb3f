package harness

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDeterministic runs the same lossy scenario twice: every record must
// be identical.
func TestDeterministic(t *testing.T) {
	for name, s := range schemes(t) {
		a, err := Run(lossyTransfer(s, 9))
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(lossyTransfer(s, 9))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a.Sent, b.Sent); diff != "" {
			t.Errorf("%s: sender records differ:\n%s", name, diff)
		}
		if diff := cmp.Diff(a.Flows, b.Flows); diff != "" {
			t.Errorf("%s: flow records differ:\n%s", name, diff)
		}
		if a.Events != b.Events || a.End != b.End {
			t.Errorf("%s: %d events ending %v, then %d ending %v", name, a.Events, a.End, b.Events, b.End)
		}
	}
}

// TestSimSpeed keeps simulating a 16 MiB transfer well under a second of
// wall time (it takes tens of milliseconds; the bound allows -race).
func TestSimSpeed(t *testing.T) {
	start := time.Now()
	if _, err := Run(lossyTransfer(schemes(t)["rss+pfld"], 1)); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("16 MiB took %v of wall time", d)
	}
}

// BenchmarkTransfer16MiB simulates one 16 MiB transfer per op over the
// lossy, reordering fabric, per scheme.
func BenchmarkTransfer16MiB(b *testing.B) {
	for _, name := range []string{"ecmp", "rps", "rss", "rss+pfld"} {
		b.Run(name, func(b *testing.B) {
			s := schemes(b)[name]
			var events uint64
			var pkts int
			var virtual time.Duration
			for b.Loop() {
				res, err := Run(lossyTransfer(s, 1))
				if err != nil {
					b.Fatal(err)
				}
				events += res.Events
				pkts += res.Flows[0].Packets
				virtual += time.Duration(res.End)
			}
			n := float64(b.N)
			b.ReportMetric(float64(events)/n, "events/op")
			b.ReportMetric(float64(pkts)/b.Elapsed().Seconds(), "datapkts/s")
			b.ReportMetric(float64(virtual)/n/1e3, "virtual-µs/op")
		})
	}
}

// stateRun opens flows many flows from host 0 to host 1, each sending
// one 4 KiB message, and returns the per-flow state sizes of rss+pfld.
func stateRun(tb testing.TB, flows int) (rxPerFlow, txPerFlow float64) {
	msgs := make([]Message, flows)
	for i := range msgs {
		msgs[i] = Message{From: 0, To: 1, Size: 4 << 10, Flow: i, At: time.Duration(i) * 50 * time.Nanosecond}
	}
	res, err := Run(Scenario{Net: fabric(2, 1), Transport: endpointConfig(schemes(tb)["rss+pfld"]), Messages: msgs})
	if err != nil {
		tb.Fatal(err)
	}
	n, rx := res.Endpoints[1].ReceiverStateBytes()
	if n != flows {
		tb.Fatalf("%d receiving flows, want %d", n, flows)
	}
	tx := 0
	for _, f := range res.Flows {
		tx += f.StateBytes
	}
	return float64(rx) / float64(n), float64(tx) / float64(len(res.Flows))
}

// TestStatePerFlow checks the paper's memory claim for PSN-based PFLD:
// under 100 KiB per NIC at 1000 flows (the receiver's bitmaps).
func TestStatePerFlow(t *testing.T) {
	rx, tx := stateRun(t, 1000)
	t.Logf("rss+pfld per flow: receiver %.0f B (bitmap + base PSN), sender %.0f B (16 subflows of counters)", rx, tx)
	if total := rx * 1000; total >= 100<<10 {
		t.Errorf("receiver state at 1000 flows %.0f B, want < 100 KiB", total)
	}
}

func BenchmarkStatePerFlow(b *testing.B) {
	for _, flows := range []int{100, 1000} {
		b.Run(fmt.Sprint(flows), func(b *testing.B) {
			var rx, tx float64
			for b.Loop() {
				rx, tx = stateRun(b, flows)
			}
			b.ReportMetric(rx, "rx-B/flow")
			b.ReportMetric(tx, "tx-B/flow")
			b.ReportMetric(rx*float64(flows)/1024, "rx-KiB/NIC")
		})
	}
}
