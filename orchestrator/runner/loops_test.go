package runner

import (
	"runtime"
	"testing"
)

// TestRaiseProcs: holders of raised Ps at the same time add up, and the
// last one out restores what the process had, whatever the order.
func TestRaiseProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	cores := runtime.NumCPU()
	a := raiseProcs(2)
	if got, want := runtime.GOMAXPROCS(0), max(cores+2, before); got != want {
		t.Fatalf("one holder of 2: GOMAXPROCS %d, want %d", got, want)
	}
	b := raiseProcs(3)
	if got, want := runtime.GOMAXPROCS(0), max(cores+5, before); got != want {
		t.Fatalf("holders of 2 and 3: GOMAXPROCS %d, want %d", got, want)
	}
	a()
	a() // a second call changes nothing
	if got, want := runtime.GOMAXPROCS(0), max(cores+3, before); got != want {
		t.Fatalf("the first out: GOMAXPROCS %d, want %d", got, want)
	}
	b()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("the last out: GOMAXPROCS %d, want %d as before", got, before)
	}
}

// TestLeaseLoops: runs going at once share one pool of loops, which closes
// when the last gives it back; the next run gets a new one.
func TestLeaseLoops(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	p1, r1, err := leaseLoops()
	if err != nil {
		t.Fatal(err)
	}
	p2, r2, err := leaseLoops()
	if err != nil {
		t.Fatal(err)
	}
	if p1 != p2 || p1.Len() != runtime.NumCPU() {
		t.Fatalf("two leases at once got pools %p and %p of %d loops; want one pool, a loop per core", p1, p2, p1.Len())
	}
	if err := r1(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	p2.Loop().Post(func() { close(done) }) // still running for the second
	<-done
	if err := r2(); err != nil {
		t.Fatal(err)
	}
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d after the last lease, want %d", got, before)
	}
	p3, r3, err := leaseLoops()
	if err != nil {
		t.Fatal(err)
	}
	defer r3()
	if p3 == p1 {
		t.Error("a lease after the last was given back got the closed pool")
	}
}
