package workload

import (
	"testing"
	"time"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/google/go-cmp/cmp"
)

// wire is the header and payload of 1500-byte packets with a 64-byte header.
var wire = Wire{Header: 64, Payload: 1450}

// Hand-checked: at 100 Mbit/s one byte takes 80 ns, so a full 1514-byte
// packet takes 121120 ns and a 14500-byte message (10 packets, 15140 bytes
// on the wire) 1211200 ns.
func TestLowerBound(t *testing.T) {
	k4 := fatTree(t, 4)
	tests := []struct {
		name string
		msgs []Message
		wire Wire
		want Bound
	}{
		{
			// Cross-pod: 6 links, so 5 more packet times after the last byte
			// leaves the sender: 1211200 + 5*121120.
			name: "one message across the core",
			msgs: []Message{{ID: 0, Src: "h0-0-0", Dst: "h3-0-0", Bytes: 14500}},
			wire: wire,
			want: Bound{CCT: 1816800, Host: 1816800, Path: 1816800, Limit: "message 0 alone (h0-0-0 -> h3-0-0, 14500B)"},
		},
		{
			// Same edge switch: 2 links, one more packet time.
			name: "one message under one edge",
			msgs: []Message{{ID: 0, Src: "h0-0-0", Dst: "h0-0-1", Bytes: 14500}},
			wire: wire,
			want: Bound{CCT: 1211200 + 121120, Host: 1211200 + 121120, Path: 1211200 + 121120, Limit: "message 0 alone (h0-0-0 -> h0-0-1, 14500B)"},
		},
		{
			// 2:1 incast: the receiver's link carries 30280 bytes (2422400 ns)
			// and cannot start before a first packet crossed 5 links.
			name: "incast 2:1",
			msgs: []Message{
				{ID: 0, Src: "h0-0-0", Dst: "h3-0-0", Bytes: 14500},
				{ID: 1, Src: "h1-0-0", Dst: "h3-0-0", Bytes: 14500},
			},
			wire: wire,
			want: Bound{CCT: 3028000, Host: 3028000, Path: 1816800, Limit: "h3-0-0 receiving 30280B on the wire at 100Mbit"},
		},
		{
			// The last packet is short: 1451 bytes are a full packet and a
			// 1-byte one (65 bytes on the wire, 5200 ns per extra hop).
			name: "short last packet",
			msgs: []Message{{ID: 0, Src: "h0-0-0", Dst: "h0-1-0", Bytes: 1451}},
			wire: wire,
			want: Bound{CCT: (1451+128)*80 + 3*5200, Host: (1451+128)*80 + 3*5200, Path: (1451+128)*80 + 3*5200, Limit: "message 0 alone (h0-0-0 -> h0-1-0, 1451B)"},
		},
		{
			// Two dependent messages: the second starts when the first ends.
			name: "dependency chain",
			msgs: []Message{
				{ID: 0, Src: "h0-0-0", Dst: "h0-0-1", Bytes: 1450},
				{ID: 1, Src: "h0-0-1", Dst: "h0-0-0", Bytes: 1450, After: []int{0}, Step: 1},
			},
			wire: wire,
			// h0-0-0 receives only the second: its link cannot start before
			// the first message ended and a packet crossed the edge switch.
			want: Bound{CCT: 4 * 121120, Host: 4 * 121120, Path: 4 * 121120, Limit: "the chain of messages ending with 1 (h0-0-1 -> h0-0-0, step 1)"},
		},
		{
			// A start offset delays everything; propagation adds per link.
			name: "start offset and propagation",
			msgs: []Message{{ID: 0, Src: "h0-0-0", Dst: "h0-0-1", Bytes: 1450, Start: time.Millisecond}},
			wire: Wire{Header: 64, Payload: 1450, Propagation: time.Microsecond},
			want: Bound{CCT: 1000000 + 121120 + 121120 + 2000, Host: 1000000 + 121120 + 121120 + 2000, Path: 1000000 + 121120 + 121120 + 2000, Limit: "message 0 alone (h0-0-0 -> h0-0-1, 1450B)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LowerBound(tc.msgs, k4, tc.wire)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("bound (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLowerBoundRing: a 2-host ring all-reduce of 2900 bytes is two steps
// of one 1450-byte chunk each way; each step takes a packet time on the
// host link and one more through the edge switch.
func TestLowerBoundRing(t *testing.T) {
	f := fatTree(t, 4)
	msgs := generate(t, Spec{Kind: RingAllReduce, Size: Fixed(2900), Hosts: []string{"h0-0-0", "h0-0-1"}, Order: RingPlan}, f, 1)
	got, err := LowerBound(msgs, f, wire)
	if err != nil {
		t.Fatal(err)
	}
	want := Bound{CCT: 4 * 121120, Host: 3 * 121120, Path: 4 * 121120, Limit: "the chain of messages ending with 2 (h0-0-0 -> h0-0-1, step 1)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bound (-want +got):\n%s", diff)
	}
}

// TestLowerBoundRates: host links at different rates; the slow receiver
// sets the bound.
func TestLowerBoundRates(t *testing.T) {
	s := topology.Spec{Kind: topology.FatTree, K: 4, Overrides: []topology.Override{
		{From: "e3-0", To: "h3-0-0", Params: topology.Params{Rate: "10Mbit"}},
	}}
	top, err := s.Resolve("")
	if err != nil {
		t.Fatal(err)
	}
	f := FabricOf(top)
	h, _ := f.Host("h3-0-0")
	if h.SendBps != 100_000_000 || h.RecvBps != 10_000_000 {
		t.Fatalf("h3-0-0 rates %d/%d", h.SendBps, h.RecvBps)
	}
	got, err := LowerBound([]Message{{ID: 0, Src: "h0-0-0", Dst: "h3-0-0", Bytes: 14500}}, f, wire)
	if err != nil {
		t.Fatal(err)
	}
	// 15140 bytes at 10 Mbit/s: 12112000 ns, plus 5 packet times at the
	// fastest link (100 Mbit/s).
	want := Bound{CCT: 12112000 + 605600, Host: 12112000 + 605600, Path: 12112000 + 605600, Limit: "message 0 alone (h0-0-0 -> h3-0-0, 14500B)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bound (-want +got):\n%s", diff)
	}
}

func TestLowerBoundErrors(t *testing.T) {
	f := fatTree(t, 4)
	for _, tc := range []struct {
		msgs []Message
		wire Wire
		want string
	}{
		{[]Message{{ID: 0, Src: "h0-0-0", Dst: "x", Bytes: 1}}, wire, "message 0: h0-0-0 -> x: no such host"},
		{[]Message{{ID: 0, Src: "h0-0-0", Dst: "h0-0-1", Bytes: 1, After: []int{0}}}, wire, "message 0 waits for message 0, which is not an earlier one"},
		{nil, Wire{Header: 64}, "need a positive payload per packet, got 0 (header 64)"},
	} {
		_, err := LowerBound(tc.msgs, f, tc.wire)
		if err == nil || err.Error() != tc.want {
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
}

func TestSerialize(t *testing.T) {
	got := []time.Duration{
		serialize(1514, 100_000_000),
		serialize(1, 3),                 // 8/3 s, rounded down
		serialize(1<<40, 1_000_000_000), // no overflow: 8796.09 s
	}
	want := []time.Duration{121120, 2666666666, 8796093022208}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("serialize (-want +got):\n%s", diff)
	}
}
