package transport

import "testing"

func TestReorderedOnEV(t *testing.T) {
	r := &receiver{}
	steps := []struct {
		ev   uint16
		psn  uint32
		want bool
	}{
		{1, 10, false}, {2, 11, false}, {1, 12, false},
		{2, 13, false}, {1, 14, false},
		{2, 12, true}, // 13 already arrived on EV 2
	}
	for i, s := range steps {
		if got := r.reorderedOnEV(s.ev, s.psn); got != s.want {
			t.Errorf("step %d: reorderedOnEV(%d, %d) = %v, want %v", i, s.ev, s.psn, got, s.want)
		}
	}
	// Across the PSN wrap.
	if r.reorderedOnEV(3, 0xffffffff) || r.reorderedOnEV(3, 1) || !r.reorderedOnEV(3, 0xfffffffe) {
		t.Error("wrap: want only 0xfffffffe after 1 to count")
	}
	// Bounded state.
	for ev := range uint16(3 * maxEVTrack) {
		r.reorderedOnEV(ev, 100)
	}
	if len(r.evHigh) > maxEVTrack {
		t.Errorf("tracking %d EVs, bound %d", len(r.evHigh), maxEVTrack)
	}
}
