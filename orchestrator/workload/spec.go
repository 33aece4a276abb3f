package workload

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/ftlab/ftlab/internal/units"
)

// Spec describes a workload; with a fabric and a seed it yields the
// messages. The zero value of an option means its default.
type Spec struct {
	Kind Kind `json:"kind"`
	// Size of every message (permutation, all-to-all, incast, tornado), or
	// of the buffer being all-reduced (ring-allreduce, which moves size/n
	// per step). Unused by all-to-all-v.
	Size Size `json:"size"`
	// Hosts are the participants, in order; nil means every host of the
	// fabric in plan order. For all-to-all-v they name the matrix rows.
	Hosts []string `json:"hosts,omitempty"`
	// InterPod makes a permutation send every message to another pod
	// (leaf, in a leaf-spine fabric).
	InterPod bool `json:"inter_pod,omitempty"`
	// Senders is the number of incast senders, chosen from the seed.
	Senders int `json:"senders,omitempty"`
	// Receiver is the incast receiver; "" chooses it from the seed.
	Receiver string `json:"receiver,omitempty"`
	// Order arranges the ring of a ring all-reduce; "" is RingRandom.
	Order RingOrder `json:"order,omitempty"`
	// MaxParallel limits the all-to-all messages a host has in flight: its
	// message of round r waits for its message of round r-MaxParallel.
	// 0 sends all at once.
	MaxParallel int `json:"max_parallel,omitempty"`
	// Matrix holds the bytes of an all-to-all-v.
	Matrix *Matrix `json:"matrix,omitempty"`
	// CM holds the connections of a cm workload; Hosts maps its node
	// indexes (node i is participant i).
	CM *ConnMatrix `json:"cm,omitempty"`
}

// Problem is something wrong with a Spec for a fabric; Field is the
// option at fault, as written in scenario files ("senders").
type Problem struct {
	Field, Msg string
}

// streamWorkload is the PCG stream of workload generation. Faults and
// other consumers of a run's seed use other streams, so they can be added
// or changed without changing the messages.
const streamWorkload = 0x776f726b6c6f6164 // "workload"

// Check reports every reason the spec cannot be generated on f. Generate
// succeeds for any seed when Check finds nothing.
func (s *Spec) Check(f *Fabric) []Problem {
	var ps []Problem
	add := func(field, format string, args ...any) {
		ps = append(ps, Problem{field, fmt.Sprintf(format, args...)})
	}
	if !slices.Contains(Kinds, s.Kind) {
		add("kind", "unknown workload %q (valid: %s)", s.Kind, kindList())
		return ps
	}
	hosts, err := f.Subset(s.Hosts)
	if err != nil {
		add("hosts", "%v", err)
		return ps
	}
	seen := map[string]bool{}
	for _, h := range hosts {
		if seen[h.Name] {
			add("hosts", "%s is listed twice", h.Name)
			return ps
		}
		seen[h.Name] = true
	}
	n := len(hosts)
	if n < 2 {
		add("hosts", "a %s needs at least 2 hosts, found %d", s.Kind, n)
		return ps
	}
	if s.Kind != AllToAllV && s.Kind != HtsimCM && s.Size.Min == 0 {
		add("size", "missing; a %s needs a message size", s.Kind)
	}
	switch s.Kind {
	case Permutation:
		if s.InterPod {
			if pod, count := largestPod(hosts); count > n/2 {
				add("inter_pod", "impossible: %d of the %d hosts are in %s %d, and an inter-pod permutation needs every pod to hold at most half of them",
					count, n, podWord(f), pod)
			}
		}
	case Incast:
		switch {
		case s.Senders < 1:
			add("senders", "missing; an incast needs the number of senders, 1 to %d", n-1)
		case s.Senders > n-1:
			add("senders", "%d is too many: with %d hosts there are at most %d senders besides the receiver", s.Senders, n, n-1)
		}
		if s.Receiver != "" && !seen[s.Receiver] {
			if _, ok := f.Host(s.Receiver); ok {
				add("receiver", "%s is not one of the workload's hosts", s.Receiver)
			} else {
				add("receiver", "no host named %q", s.Receiver)
			}
		}
	case Tornado:
		if n%2 != 0 {
			add("hosts", "a tornado pairs every host with its mirror in the other half, so it needs an even number of hosts, found %d", n)
		}
	case RingAllReduce:
		if s.Size.IsRange() {
			add("size", "a ring all-reduce reduces one buffer; give one size, not a range")
		} else if s.Size.Min != 0 && s.Size.Min < uint64(n) {
			add("size", "%s is smaller than the %d hosts of the ring; every host needs a chunk of at least 1 byte", units.FormatSize(s.Size.Min), n)
		}
		if s.Order != "" && s.Order != RingRandom && s.Order != RingPlan {
			add("order", "unknown order %q (valid: %s, %s)", s.Order, RingRandom, RingPlan)
		}
	case AllToAll:
		if s.MaxParallel < 0 {
			add("max_parallel", "must not be negative; 0 sends everything at once")
		}
	case HtsimCM:
		if s.CM == nil {
			add("file", "missing; a cm workload needs an htsim connection matrix file")
		} else {
			for _, msg := range s.CM.checkHosts(n) {
				add("file", "%s", msg)
			}
		}
	case AllToAllV:
		switch {
		case s.Matrix == nil:
			add("matrix", "missing; an all-to-all-v needs a traffic matrix file")
		case len(s.Matrix.Bytes) != n:
			what := "the topology's hosts"
			if s.Hosts != nil {
				what = "the hosts listed in hosts"
			}
			add("matrix", "%s is %dx%d but there are %d participants (%s); the matrix must be %dx%d, or list the hosts its rows stand for in hosts",
				s.Matrix.File, len(s.Matrix.Bytes), len(s.Matrix.Bytes), n, what, n, n)
		}
	}
	return ps
}

// Generate returns the messages of the workload on f for a seed. The spec
// must pass Check.
func (s *Spec) Generate(f *Fabric, seed uint64) ([]Message, error) {
	if ps := s.Check(f); len(ps) > 0 {
		return nil, fmt.Errorf("%s: %s", ps[0].Field, ps[0].Msg)
	}
	hosts, _ := f.Subset(s.Hosts)
	r := rand.New(rand.NewPCG(seed, streamWorkload))
	switch s.Kind {
	case Permutation:
		return permutation(hosts, s.Size, s.InterPod, r), nil
	case AllToAll:
		return allToAll(hosts, s.Size, s.MaxParallel, r), nil
	case Incast:
		return incast(hosts, s.Size, s.Senders, s.Receiver, r), nil
	case Tornado:
		return tornado(hosts, s.Size, r), nil
	case RingAllReduce:
		return ringAllReduce(hosts, s.Size.Min, s.Order, r), nil
	case HtsimCM:
		return connMatrixMessages(hosts, s.CM), nil
	default: // AllToAllV; Check rejected anything else
		return allToAllV(hosts, s.Matrix), nil
	}
}

func kindList() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// largestPod returns the pod holding the most of the hosts, and how many.
func largestPod(hosts []Host) (pod, count int) {
	counts := map[int]int{}
	for _, h := range hosts {
		counts[h.Pod]++
		if c := counts[h.Pod]; c > count || (c == count && h.Pod < pod) {
			pod, count = h.Pod, c
		}
	}
	return pod, count
}

func podWord(f *Fabric) string {
	if f.Tiers == 2 {
		return "leaf"
	}
	return "pod"
}
