package workload

import (
	"fmt"
	"time"
)

// Message is one transfer of a collective.
type Message struct {
	ID    int    `json:"id"` // index in the workload's message list
	Src   string `json:"src"`
	Dst   string `json:"dst"`
	Bytes uint64 `json:"bytes"` // payload bytes
	// Start is the offset from the start of the collective before which the
	// message may not start.
	Start time.Duration `json:"start_ns"`
	// After lists the IDs of earlier messages that must complete before
	// this one starts; it then starts at the later of Start and their
	// completion. IDs in After are always smaller than ID.
	After []int `json:"after,omitempty"`
	// Step numbers the rounds of workloads that have them (ring
	// all-reduce steps, all-to-all rounds), from 0.
	Step int `json:"step,omitempty"`
}

// Kind is the traffic pattern of a workload.
type Kind string

const (
	Permutation   Kind = "permutation"
	AllToAll      Kind = "all-to-all"
	Incast        Kind = "incast"
	Tornado       Kind = "tornado"
	RingAllReduce Kind = "ring-allreduce"
	AllToAllV     Kind = "all-to-all-v"
	HtsimCM       Kind = "cm" // an htsim connection matrix (cm.go)
)

// Kinds lists every kind, in the order the documentation gives them.
var Kinds = []Kind{Permutation, AllToAll, Incast, Tornado, RingAllReduce, AllToAllV, HtsimCM}

// RingOrder says how the hosts of a ring all-reduce are arranged.
type RingOrder string

const (
	// RingRandom orders the ring randomly (from the seed), as with the
	// random server placement of Ofan section 6.7. It is the default:
	// in plan order most ring neighbours share an edge switch and the
	// fabric above it carries almost nothing.
	RingRandom RingOrder = "random"
	// RingPlan orders the ring by the topology's host order.
	RingPlan RingOrder = "plan"
)

// CheckOrder validates the order of messages: IDs are 0..n-1 in order, and
// every dependency names an earlier message. Every generator's output
// satisfies it; the runner may rely on it.
func CheckOrder(msgs []Message) error {
	for i, m := range msgs {
		if m.ID != i {
			return fmt.Errorf("message %d has ID %d", i, m.ID)
		}
		for _, d := range m.After {
			if d < 0 || d >= i {
				return fmt.Errorf("message %d waits for message %d, which is not an earlier one", i, d)
			}
		}
	}
	return nil
}
