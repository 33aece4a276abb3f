package transport

import "testing"

func TestReorderedOnEV(t *testing.T) {
	r := &receiver{}
	reordered := func(ev uint16, psn uint32) bool {
		_, re := r.reorderedOnEV(ev, psn)
		return re
	}
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
		if got := reordered(s.ev, s.psn); got != s.want {
			t.Errorf("step %d: reorderedOnEV(%d, %d) = %v, want %v", i, s.ev, s.psn, got, s.want)
		}
	}
	if high, re := r.reorderedOnEV(1, 11); !re || high != 14 {
		t.Errorf("reorderedOnEV(1, 11) = %d, %v; want 14 (the highest PSN on EV 1), true", high, re)
	}
	// Across the PSN wrap.
	if reordered(3, 0xffffffff) || reordered(3, 1) || !reordered(3, 0xfffffffe) {
		t.Error("wrap: want only 0xfffffffe after 1 to count")
	}
	// Bounded state.
	for ev := range uint16(3 * maxEVTrack) {
		reordered(ev, 100)
	}
	if len(r.evHigh) > maxEVTrack {
		t.Errorf("tracking %d EVs, bound %d", len(r.evHigh), maxEVTrack)
	}
}
