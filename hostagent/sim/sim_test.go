package sim

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/hostagent/clock"
	"github.com/ftlab/ftlab/hostagent/netio"
)

// arrival is what a test receiver saw.
type arrival struct {
	At  clock.Time
	EV  uint16
	ECN netio.ECN
	Len int
	Tag byte
}

// record attaches a receiver to host i that appends arrivals to *out.
func record(n *Network, i int, out *[]arrival) {
	n.Host(i).Attach(netio.ReceiverFunc(func(d netio.Datagram) {
		var tag byte
		if len(d.Payload) > 0 {
			tag = d.Payload[0]
		}
		*out = append(*out, arrival{n.Clock().Now(), d.EV, d.ECN, len(d.Payload), tag})
	}))
}

func mustNew(t testing.TB, c Config) *Network {
	t.Helper()
	n, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// send sends count datagrams of size bytes from host 0 to host 1, with EVs
// cycling through evs, each tagged with its index.
func send(t testing.TB, n *Network, count, size int, evs ...uint16) {
	t.Helper()
	buf := make([]byte, size)
	for i := 0; i < count; i++ {
		buf[0] = byte(i)
		if err := n.Host(0).Send(netio.Datagram{Peer: HostAddr(1), EV: evs[i%len(evs)], ECN: netio.ECT0, Payload: buf}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSerializationAndDelay(t *testing.T) {
	// 1 Gbit/s everywhere: a 1000-byte datagram (+42 overhead) takes
	// 8336 ns per hop; three hops, 1 µs propagation each.
	lc := LinkConfig{Rate: 1e9, Delay: time.Microsecond}
	n := mustNew(t, Config{Hosts: 2, Paths: 1, Host: lc, Path: lc})
	var got []arrival
	record(n, 1, &got)
	send(t, n, 2, 1000, 7)
	n.Clock().Run()
	const tx = 8336
	want := []clock.Time{3*tx + 3000, 4*tx + 3000} // the second waits one tx behind the first
	if len(got) != 2 || got[0].At != want[0] || got[1].At != want[1] {
		t.Fatalf("arrivals %+v, want times %v", got, want)
	}
}

func TestTailDropAndECN(t *testing.T) {
	n := mustNew(t, Config{Hosts: 2, Paths: 1,
		Path: LinkConfig{Rate: 1e9, Buffer: 5 * 1042, ECNThreshold: 2 * 1042}})
	var got []arrival
	record(n, 1, &got)
	send(t, n, 10, 1000, 1)
	n.Clock().Run()
	st := n.Path(0, 1, 0).Stats()
	// The path queue holds 5 packets (the one in service counts): the
	// rest of a 10-packet burst arriving at once is tail-dropped.
	if len(got) != 5 || st.TailDrops != 5 {
		t.Fatalf("delivered %d, tail drops %d; want 5 and 5", len(got), st.TailDrops)
	}
	var ce int
	for _, a := range got {
		if a.ECN == netio.CE {
			ce++
		}
	}
	if ce != 3 || st.Marked != 3 {
		t.Errorf("CE marked %d (stats %d), want 3 (backlog >= 2 packets)", ce, st.Marked)
	}
}

func TestECMPSpreadsEVs(t *testing.T) {
	n := mustNew(t, Config{Hosts: 2, Seed: 3})
	counts := make([]int, n.Config().Paths)
	for ev := 0; ev < 1<<16; ev++ {
		counts[n.PathOf(0, 1, uint16(ev))]++
	}
	for k, c := range counts {
		if math.Abs(float64(c)-8192) > 400 {
			t.Errorf("path %d gets %d of 65536 EVs", k, c)
		}
	}
	if n.PathOf(0, 1, 5) != n.PathOf(0, 1, 5) {
		t.Error("PathOf not deterministic")
	}
}

func TestLossModels(t *testing.T) {
	const N = 96 * 1024 // whole batches of 1024 keep the 8-bit tags continuous
	tests := []struct {
		name     string
		loss     Loss
		wantRate float64
		wantRun  float64 // mean run of consecutive losses, 0: don't check
	}{
		{"corruption", Loss{Corruption: 0.01}, 0.01, 1.0 / 0.99},
		{"burst", Loss{BurstStart: 0.002, BurstLen: 8}, 0.002 * 8 / (1 - 0.002 + 0.002*8), 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := mustNew(t, Config{Hosts: 2, Paths: 1, Seed: 42, Path: LinkConfig{Loss: tt.loss}})
			var got []arrival
			record(n, 1, &got)
			for i := 0; i < N; i += 1024 {
				send(t, n, 1024, 64, 1)
				n.Clock().Run()
			}
			lost := N - len(got)
			if r := float64(lost) / N; math.Abs(r-tt.wantRate) > 0.15*tt.wantRate {
				t.Errorf("loss rate %.5f, want about %.5f", r, tt.wantRate)
			}
			if st := n.Path(0, 1, 0).Stats(); int(st.LossDrops) != lost {
				t.Errorf("LossDrops %d, lost %d", st.LossDrops, lost)
			}
			// Count loss runs from the gaps in the tags (the tags wrap
			// at 256; a run of 256 losses would hide, at these rates
			// it does not happen).
			runs, prev := 0, -1
			for _, a := range got {
				if gap := (int(a.Tag) - prev - 1 + 256) % 256; gap > 0 {
					runs++
				}
				prev = int(a.Tag)
			}
			if tt.wantRun > 0 && runs > 0 {
				if m := float64(lost) / float64(runs); math.Abs(m-tt.wantRun) > 0.2*tt.wantRun {
					t.Errorf("mean loss run %.2f, want about %.2f", m, tt.wantRun)
				}
			}
		})
	}
}

func TestDuplicateAndFailure(t *testing.T) {
	n := mustNew(t, Config{Hosts: 2, Paths: 1, Path: LinkConfig{Rate: 1e9, Loss: Loss{Duplicate: 1}}})
	var got []arrival
	record(n, 1, &got)
	send(t, n, 3, 100, 1)
	n.Clock().Run()
	if len(got) != 6 || got[0].Tag != 0 || got[1].Tag != 0 || got[2].Tag != 1 {
		t.Fatalf("duplication: %+v", got)
	}

	n = mustNew(t, Config{Hosts: 2, Paths: 1, Path: LinkConfig{Rate: 1e9, Delay: 10 * time.Microsecond}})
	got = nil
	record(n, 1, &got)
	n.Path(0, 1, 0).Fail(5000, 0)
	send(t, n, 1, 100, 1) // on the path when it fails: lost
	n.Clock().RunUntil(20000)
	send(t, n, 1, 100, 1) // after: lost
	n.Clock().Run()
	if len(got) != 0 || n.Path(0, 1, 0).Stats().FailDrops != 2 {
		t.Fatalf("failure: delivered %d, fail drops %d", len(got), n.Path(0, 1, 0).Stats().FailDrops)
	}
}

func TestDropNth(t *testing.T) {
	n := mustNew(t, Config{Hosts: 2, Paths: 2})
	var got []arrival
	record(n, 1, &got)
	n.AddFilter(DropNth(2, func(p *Packet) bool { return p.Payload[0]%2 == 1 })) // the 2nd odd tag: 3
	send(t, n, 6, 10, 1, 2)
	n.Clock().Run()
	var tags []byte
	for _, a := range got {
		tags = append(tags, a.Tag)
	}
	if diff := cmp.Diff([]byte{0, 1, 2, 4, 5}, tags); diff != "" {
		t.Errorf("tags (-want +got):\n%s", diff)
	}
}

func TestSendErrors(t *testing.T) {
	n := mustNew(t, Config{Hosts: 2})
	if err := n.Host(0).Send(netio.Datagram{Peer: HostAddr(0)}); !errors.Is(err, ErrNoRoute) {
		t.Errorf("send to self: %v", err)
	}
	if err := n.Host(0).Send(netio.Datagram{Peer: HostAddr(1), Payload: make([]byte, 5000)}); !errors.Is(err, ErrTooBig) {
		t.Errorf("oversized: %v", err)
	}
	if _, err := New(Config{Hosts: 1}); err == nil {
		t.Error("1 host accepted")
	}
	if _, err := New(Config{Hosts: 2, Path: LinkConfig{Loss: Loss{Corruption: 2}}}); err == nil {
		t.Error("probability 2 accepted")
	}
}

// TestDeterministic runs the same lossy, multipath scenario twice per seed
// and requires identical traces, and different traces across seeds.
func TestDeterministic(t *testing.T) {
	run := func(seed uint64) string {
		lc := LinkConfig{Rate: 10e9, Delay: time.Microsecond, Buffer: 64 << 10, ECNThreshold: 16 << 10,
			Loss: Loss{Corruption: 0.01, BurstStart: 0.001, BurstLen: 4, Duplicate: 0.01}}
		n := mustNew(t, Config{Hosts: 2, Seed: seed, Host: LinkConfig{Rate: 40e9}, Path: lc})
		var got []arrival
		record(n, 1, &got)
		send(t, n, 5000, 1000, 1, 2, 3, 4, 5, 6, 7, 8, 9)
		n.Clock().Run()
		return fmt.Sprint(got)
	}
	a, b, c := run(1), run(1), run(2)
	if a != b {
		t.Error("same seed, different runs")
	}
	if a == c {
		t.Error("different seeds, same run")
	}
}

// BenchmarkForward measures raw simulator speed: packets through three
// hops per op.
func BenchmarkForward(b *testing.B) {
	lc := LinkConfig{Rate: 100e9, Delay: time.Microsecond}
	n := mustNew(b, Config{Hosts: 2, Host: lc, Path: lc})
	n.Host(1).Attach(netio.ReceiverFunc(func(netio.Datagram) {}))
	buf := make([]byte, 4000)
	for b.Loop() {
		for ev := uint16(0); ev < 64; ev++ {
			_ = n.Host(0).Send(netio.Datagram{Peer: HostAddr(1), EV: ev, Payload: buf})
		}
		n.Clock().Run()
	}
	b.ReportMetric(float64(b.N*64)/b.Elapsed().Seconds(), "pkts/s")
}
