package fidelity

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/switchd"
	"github.com/ftlab/ftlab/switchd/shaping"
)

func TestUnexplainedDrops(t *testing.T) {
	ports := []switchd.PortStats{
		{Switch: "e0", Port: 0, Link: "e0-a0", Counters: bpf.PortCounters{TxPackets: 100, RxPackets: 50}},
		{Switch: "a0", Port: 0, Link: "e0-a0", Counters: bpf.PortCounters{TxPackets: 50, RxPackets: 97}, Qdisc: &shaping.Stats{}},
		{Switch: "e0", Port: 1, Link: "h0-e0", Counters: bpf.PortCounters{TxPackets: 10}, Qdisc: &shaping.Stats{Drops: 2}},
	}
	got := UnexplainedDrops(ports)
	want := []DropInput{
		{Link: "e0-a0", From: "e0", To: "a0", Sent: 100, Arrived: 97, Missing: 3},
		{Link: "h0-e0", From: "e0", QdiscDrop: 2, Missing: 2},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("UnexplainedDrops (-want +got):\n%s", d)
	}
}

func TestSaturatedLinks(t *testing.T) {
	q := bpf.QueueStats{FirstNs: 1e9, LastNs: 2e9, BacklogByteNs: 3000 * 1e9}
	params := topology.LinkParams{RateBps: 24e6}
	// 1500-byte frames: 500 µs each at 24 Mbit/s. Busy: 1000 of 2000
	// dequeues left a backlog, served in 600 ms: 20 Mbit/s.
	busy := &bpf.DequeueStats{Dequeues: 2000, Bytes: 3e6, BusyGaps: 1000, BusyNs: 600e6, BusyBytes: 1.5e6}
	mostlyIdle := &bpf.DequeueStats{Dequeues: 2000, Bytes: 3e6, BusyGaps: 400, BusyNs: 200e6, BusyBytes: 6e5}
	few := &bpf.DequeueStats{Dequeues: 99, Bytes: 148500, BusyGaps: 99, BusyNs: 49.5e6, BusyBytes: 148500}
	ports := []switchd.PortStats{
		{Switch: "e0", Port: 2, Link: "e0~a0", Direction: "E->A", Params: params, Queue: q, Dequeue: busy},
		{Switch: "e0", Port: 3, Link: "e0~a1", Direction: "E->A", Params: params, Queue: q, Dequeue: mostlyIdle},
		{Switch: "e0", Port: 4, Link: "e0~a2", Direction: "E->A", Params: params, Queue: q, Dequeue: few},
		{Switch: "e0", Port: 5, Link: "e0~a3", Direction: "E->A", Queue: q, Dequeue: busy},                 // line rate
		{Switch: "e0", Port: 6, Link: "e0~a4", Direction: "E->A", Params: params, Queue: q},                // not measured
		{Switch: "e0", Port: 7, Link: "e0~a5", Direction: "E->A", Params: params, Queue: q, Dequeue: busy}, // rate changed
	}
	got := SaturatedLinks(ports, map[string]bool{"e0~a5": true})
	want := []LinkInput{{Switch: "e0", Port: 2, Link: "e0~a0", Direction: "E->A", RateBps: 24e6, AchievedBps: 20e6, MeanBacklog: 3000,
		BusyGaps: 1000, MeanGapNs: 600e3, IdealGapNs: 500e3}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("SaturatedLinks (-want +got):\n%s", d)
	}
	if v := Judge(Inputs{Links: got}); v.Verdict != WARN {
		t.Errorf("a link serving at 83%% of its rate: verdict %s, want WARN", v.Verdict)
	}
}

func TestPacing(t *testing.T) {
	flows := []transport.FlowRecord{
		{Pacing: transport.PacingStats{Gaps: 10, IntendedNs: 900, ActualNs: 1000, LateNs: 100, LostNs: 10, SpanNs: 1000, MaxLateNs: 7}},
		{Pacing: transport.PacingStats{Gaps: 10, IntendedNs: 500, ActualNs: 1000, LateNs: 500, LostNs: 90, SpanNs: 1000, MaxLateNs: 3}},
		{}, // never held back by its pacer
	}
	got := Pacing(flows)
	want := PacingInput{Flows: 2, Gaps: 20, IntendedNs: 1400, ActualNs: 2000, LateNs: 600, LostNs: 100, SpanNs: 2000, MaxLateNs: 7, WorstError: 0.5, WorstLoss: 0.09}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Pacing (-want +got):\n%s", d)
	}
	if e := got.Error(); e < 0.2999 || e > 0.3001 {
		t.Errorf("Error = %v, want 0.3", e)
	}
}
