package fidelity

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/orchestrator/topology"
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
	busy := bpf.QueueStats{FirstNs: 1e9, LastNs: 2e9, NextDepartNs: 2e9, BacklogByteNs: 3000 * 1e9}
	busy.Hist[0], busy.Hist[1] = 10, 90
	idle := busy
	idle.Hist[0], idle.Hist[1] = 90, 10
	params := topology.LinkParams{RateBps: 24e6}
	ports := []switchd.PortStats{
		{Switch: "e0", Port: 2, Direction: "E->A", Params: params, Queue: busy, Counters: bpf.PortCounters{TxPackets: 2000, TxBytes: 3e6}},
		{Switch: "e0", Port: 3, Direction: "E->A", Params: params, Queue: idle, Counters: bpf.PortCounters{TxPackets: 2000, TxBytes: 3e6}},
		{Switch: "e0", Port: 4, Direction: "E->A", Queue: busy, Counters: bpf.PortCounters{TxPackets: 2000, TxBytes: 3e6}},
	}
	got := SaturatedLinks(ports)
	want := []LinkInput{{Switch: "e0", Port: 2, Direction: "E->A", RateBps: 24e6, AchievedBps: 24e6, MeanBacklog: 3000,
		MeanGapNs: 500e3, IdealGapNs: 500e3}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("SaturatedLinks (-want +got):\n%s", d)
	}
}

func TestPacing(t *testing.T) {
	flows := []transport.FlowRecord{
		{Pacing: transport.PacingStats{Gaps: 10, IntendedNs: 900, ActualNs: 1000, MaxLateNs: 7}},
		{Pacing: transport.PacingStats{Gaps: 10, IntendedNs: 500, ActualNs: 1000, MaxLateNs: 3}},
		{}, // never held back by its pacer
	}
	got := Pacing(flows)
	want := PacingInput{Flows: 2, Gaps: 20, IntendedNs: 1400, ActualNs: 2000, MaxLateNs: 7, WorstError: 0.5}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Pacing (-want +got):\n%s", d)
	}
	if e := got.Error(); e < 0.2999 || e > 0.3001 {
		t.Errorf("Error = %v, want 0.3", e)
	}
}
