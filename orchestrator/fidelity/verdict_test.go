package fidelity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestJudge(t *testing.T) {
	idleCPU := &CPUStats{Cores: 2, Samples: 50, SaturatedFraction: 0.02, MeanBusy: 0.4, MeanSoftirq: 0.1}
	busyCPU := &CPUStats{Cores: 2, Samples: 50, SaturatedFraction: 0.3, MeanBusy: 0.97, MeanSoftirq: 0.4, ProcessShare: 0.5}
	goodPacing := PacingInput{Flows: 4, Gaps: 100, IntendedNs: 1e6, ActualNs: 1.02e6, WorstError: 0.03}
	fullLink := LinkInput{Switch: "e0-0", Port: 2, Direction: "E->A", RateBps: 25e6, AchievedBps: 24.9e6, MeanGapNs: 482e3, IdealGapNs: 480e3}
	tests := []struct {
		name        string
		in          Inputs
		wantVerdict Verdict
		wantReasons []string
		wantOver    float64 // how far past its worst WARN limit
	}{
		{
			name:        "clean run",
			in:          Inputs{CPU: idleCPU, Pacing: goodPacing, Links: []LinkInput{fullLink}, OrderChecked: true},
			wantVerdict: OK,
		},
		{
			name:        "no inputs at all",
			in:          Inputs{},
			wantVerdict: OK,
		},
		{
			name: "delay lines on time",
			in: Inputs{CPU: idleCPU, Pacing: goodPacing, OrderChecked: true,
				Delay: DelayInput{Packets: 5000, MeanDelayNs: 6e6, MeanLateNs: 20e3, MaxLateNs: 300e3, P99LateBelowNs: 100e3, PacketNs: 300e3}},
			wantVerdict: OK,
		},
		{
			name: "delay lines late by under a packet time and 1% of the RTT",
			in: Inputs{CPU: idleCPU, Pacing: goodPacing, OrderChecked: true,
				Delay: DelayInput{Packets: 5000, MeanDelayNs: 22.5e6, MeanLateNs: 134e3, MaxLateNs: 4.2e6, P99LateBelowNs: -1, PacketNs: 337e3}},
			wantVerdict: OK,
		},
		{
			name: "delay lines late by more than a packet time",
			in: Inputs{CPU: idleCPU, Pacing: goodPacing, OrderChecked: true,
				Delay: DelayInput{Packets: 5000, MeanDelayNs: 30e6, MeanLateNs: 350e3, MaxLateNs: 2.5e6, P99LateBelowNs: -1, PacketNs: 300e3}},
			wantVerdict: WARN,
			wantReasons: []string{"WARN: link delays emulated late: packets left the delay lines 350µs after their ideal arrival on average (limit 300µs: the less of 1 packet time of 300µs and 1% of the delays' 60.00ms round trip; 99% over 1ms, worst 2.50ms)"},
			wantOver:    350.0 / 300,
		},
		{
			name: "delay lines late by more than 1% of the round trip",
			in: Inputs{CPU: idleCPU, Pacing: goodPacing, OrderChecked: true,
				Delay: DelayInput{Packets: 5000, MeanDelayNs: 6e6, MeanLateNs: 150e3, MaxLateNs: 900e3, P99LateBelowNs: 500e3, PacketNs: 300e3}},
			wantVerdict: WARN,
			wantReasons: []string{"WARN: link delays emulated late: packets left the delay lines 150µs after their ideal arrival on average (limit 120µs: the less of 1 packet time of 300µs and 1% of the delays' 12.00ms round trip; 99% within 500µs, worst 0.90ms)"},
			wantOver:    150.0 / 120,
		},
		{
			name:        "saturated CPU",
			in:          Inputs{CPU: busyCPU, Pacing: goodPacing, OrderChecked: true},
			wantVerdict: WARN,
			wantReasons: []string{"WARN: CPU saturated 30% of the run (limit 10%; mean busy 97%, softirq 40%, ftlab 50% of 2 cores)"},
			wantOver:    3,
		},
		{
			name: "the hypervisor's share is named",
			in: Inputs{CPU: &CPUStats{Cores: 2, Samples: 50, SaturatedFraction: 0.2, MeanBusy: 0.8, MeanSoftirq: 0.2, MeanSteal: 0.12, ProcessShare: 0.4},
				Pacing: PacingInput{Flows: 1, Gaps: 10, IntendedNs: 1e6, ActualNs: 1.3e6, LostNs: 3e5, SpanNs: 1.3e6, WorstLoss: 0.23, MaxLateNs: 4e6}},
			wantVerdict: WARN,
			wantReasons: []string{
				"WARN: CPU saturated 20% of the run (limit 10%; mean busy 80%, softirq 20%, ftlab 40% of 2 cores, the hypervisor took 12% (steal))",
				"WARN: senders lost 23.1% of their paced time to late departures (limit 10%; worst flow 23.0%, latest departure 4.00ms late, the hypervisor took 12% (steal))",
			},
			wantOver: 3e5 / 1.3e6 / 0.1,
		},
		{
			name:        "CPU saturated exactly at the limit is OK",
			in:          Inputs{CPU: &CPUStats{Cores: 2, Samples: 10, SaturatedFraction: MaxCPUSaturated}},
			wantVerdict: OK,
		},
		{
			name:        "reordering within a path",
			in:          Inputs{CPU: idleCPU, Pacing: goodPacing, OrderChecked: true, ReorderedSameEV: 3},
			wantVerdict: FAIL,
			wantReasons: []string{"FAIL: 3 packets reordered within one path (same EV): FIFO links must not reorder"},
		},
		{
			name: "reordering within a path says where",
			in: Inputs{CPU: idleCPU, Pacing: goodPacing, OrderChecked: true, ReorderedSameEV: 1,
				ReorderExample: "h2-0-1 from 10.0.0.2, flow 7 PSN 120 after PSN 121 on EV 4242, 1.2s into the run"},
			wantVerdict: FAIL,
			wantReasons: []string{"FAIL: 1 packets reordered within one path (same EV): FIFO links must not reorder (first: h2-0-1 from 10.0.0.2, flow 7 PSN 120 after PSN 121 on EV 4242, 1.2s into the run)"},
		},
		{
			name:        "reordering where an EV is not one path is not judged",
			in:          Inputs{CPU: idleCPU, OrderChecked: false, ReorderedSameEV: 40},
			wantVerdict: OK,
		},
		{
			name:        "reordering beats a saturated CPU",
			in:          Inputs{CPU: busyCPU, OrderChecked: true, ReorderedSameEV: 1},
			wantVerdict: FAIL,
			wantReasons: []string{
				"FAIL: 1 packets reordered within one path (same EV): FIFO links must not reorder",
				"WARN: CPU saturated 30% of the run (limit 10%; mean busy 97%, softirq 40%, ftlab 50% of 2 cores)",
			},
			wantOver: 3,
		},
		{
			name:        "unexplained drops",
			in:          Inputs{Drops: []DropInput{{Link: "l1", From: "e0-0", To: "a0-0", Sent: 100, Arrived: 98, Missing: 2}, {Link: "l2", From: "a0-0", QdiscDrop: 1, Missing: 1}}},
			wantVerdict: FAIL,
			wantReasons: []string{"FAIL: 3 packets lost on 2 switch-to-switch link directions with no configured cause"},
		},
		{
			// Gaps 25% long, all of it jitter the pacer made up: OK.
			name:        "pacing jitter made up",
			in:          Inputs{Pacing: PacingInput{Flows: 2, Gaps: 10, IntendedNs: 8e5, ActualNs: 1e6, LateNs: 4e5, LostNs: 1e4, SpanNs: 1e6, WorstError: 0.3, WorstLoss: 0.02}},
			wantVerdict: OK,
		},
		{
			name:        "pacing time lost",
			in:          Inputs{Pacing: PacingInput{Flows: 2, Gaps: 10, IntendedNs: 8e5, ActualNs: 1e6, LateNs: 4e5, LostNs: 1.5e5, SpanNs: 1e6, MaxLateNs: 2e6, WorstLoss: 0.3}},
			wantVerdict: WARN,
			wantReasons: []string{"WARN: senders lost 15.0% of their paced time to late departures (limit 10%; worst flow 30.0%, latest departure 2.00ms late)"},
			wantOver:    1.5,
		},
		{
			name:        "pacing departures out of their slots",
			in:          Inputs{Pacing: PacingInput{Flows: 2, Gaps: 10, IntendedNs: 8e5, ActualNs: 2e6, LateNs: 1.2e6, LostNs: 1e4, SpanNs: 1e6, MaxLateNs: 3e5}},
			wantVerdict: WARN,
			wantReasons: []string{"WARN: senders' held departures left 1.50 of their gaps after their slots on average (limit 1; mean gap 80µs, latest departure 0.30ms late)"},
			wantOver:    1.5,
		},
		{
			name:        "links not measured",
			in:          Inputs{LinksUnmeasured: "bpf: qdisc monitor: this kernel cannot attach raw tracepoints"},
			wantVerdict: WARN,
			wantReasons: []string{"WARN: link rates not measured: bpf: qdisc monitor: this kernel cannot attach raw tracepoints"},
		},
		{
			name: "saturated link below its rate",
			in: Inputs{Links: []LinkInput{fullLink,
				{Switch: "a0-1", Port: 3, Direction: "A->C", RateBps: 25e6, AchievedBps: 20e6, MeanGapNs: 600e3, IdealGapNs: 480e3, LagDecided: 37},
				{Switch: "a0-0", Port: 2, Direction: "A->C", RateBps: 25e6, AchievedBps: 23e6, MeanGapNs: 520e3, IdealGapNs: 480e3},
			}},
			wantVerdict: WARN,
			wantReasons: []string{"WARN: 2 of 3 saturated link directions served below 95% of their rate while backlogged (worst A->C a0-1 port 3: 80.0%, gap 600µs vs ideal 480µs; 37 arrivals there dropped or marked for its real queue)"},
			wantOver:    0.95 * 25 / 20,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Judge(tt.in)
			want := Report{Verdict: tt.wantVerdict, Reasons: tt.wantReasons, Over: tt.wantOver, Inputs: tt.in}
			if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); d != "" {
				t.Errorf("Judge (-want +got):\n%s", d)
			}
		})
	}
}

func TestWorst(t *testing.T) {
	tests := []struct{ a, b, want Verdict }{
		{"", "", OK}, {"", WARN, WARN}, {OK, WARN, WARN}, {WARN, OK, WARN}, {WARN, FAIL, FAIL}, {FAIL, WARN, FAIL},
	}
	for _, tt := range tests {
		if got := Worst(tt.a, tt.b); got != tt.want {
			t.Errorf("Worst(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}
