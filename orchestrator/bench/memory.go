package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/ftlab/ftlab/hostagent/harness"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/sim"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/orchestrator/topology"
	"github.com/ftlab/ftlab/switchd"
)

// readKB returns a "Key:   N kB" field of a /proc file in bytes.
func readKB(path, key string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && k == key {
			n, err := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n << 10, err
		}
	}
	return 0, fmt.Errorf("%s: no %s", path, key)
}

// LabMemory builds a k-ary fat tree with the default data plane and
// returns the drop in MemAvailable (kernel and everything else on the
// machine) and the growth of this process's RSS across the build; with
// bare set it makes only the bare namespaces and veths instead. Both are
// removed before it returns.
func LabMemory(ctx context.Context, k int, bare bool) (kernel, rss int64, err error) {
	s, err := newScope()
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		if cerr := s.close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	topo, err := topology.NewFatTree(k)
	if err != nil {
		return 0, 0, err
	}
	a0, err := readKB("/proc/meminfo", "MemAvailable")
	if err != nil {
		return 0, 0, err
	}
	r0, err := readKB("/proc/self/status", "VmRSS")
	if err != nil {
		return 0, 0, err
	}
	if bare {
		err = bareUp(ctx, topo, s.name)
	} else {
		_, err = buildLab(ctx, s, topo, switchd.Config{})
	}
	if err != nil {
		return 0, 0, err
	}
	Settle(ctx, 500*time.Millisecond)
	a1, err := readKB("/proc/meminfo", "MemAvailable")
	if err != nil {
		return 0, 0, err
	}
	r1, err := readKB("/proc/self/status", "VmRSS")
	return a0 - a1, r1 - r0, err
}

// bareUp makes the bare baseline's namespaces and veths and leaves them.
func bareUp(ctx context.Context, topo *topology.Topology, name func(string) string) error {
	// BareUpDown deletes what it made; memory needs them present, so the
	// same objects are made by the first half only.
	return bareObjects(ctx, topo, name)
}

// FlowState runs flows flows of one 4 KiB message each from host 0 to
// host 1 of the simulator with the named scheme and returns the mean
// receiver and sender state bytes per flow.
func FlowState(name string, flows int) (rx, tx float64, err error) {
	sch, err := scheme.New(name, nil)
	if err != nil {
		return 0, 0, err
	}
	const rate = 100e9
	msgs := make([]harness.Message, flows)
	for i := range msgs {
		msgs[i] = harness.Message{From: 0, To: 1, Size: 4 << 10, Flow: i, At: time.Duration(i) * 50 * time.Nanosecond}
	}
	res, err := harness.Run(harness.Scenario{
		Net: sim.Config{Seed: 1, Hosts: 2, Paths: 8,
			Host: sim.LinkConfig{Rate: rate, Delay: 500 * time.Nanosecond, Buffer: 4 << 20},
			Path: sim.LinkConfig{Rate: rate, Delay: time.Microsecond, Buffer: 1 << 20}},
		Transport: transport.Config{Scheme: sch, Rate: rate, Window: flowWindow,
			InitialRTO: 200 * time.Microsecond, MinRTO: 100 * time.Microsecond, MaxRTO: 10 * time.Millisecond},
		Messages: msgs,
	})
	if err != nil {
		return 0, 0, err
	}
	n, rxb := res.Endpoints[1].ReceiverStateBytes()
	txb := 0
	for _, f := range res.Flows {
		txb += f.StateBytes
	}
	if n > 0 {
		rx = float64(rxb) / float64(n)
	}
	if len(res.Flows) > 0 {
		tx = float64(txb) / float64(len(res.Flows))
	}
	return rx, tx, nil
}

const flowWindow = 256 << 10

// Memory measures memory per lab and per flow.
func Memory(ctx context.Context, opt Options) (*Section, error) {
	ks, flows := []int{4, 8}, 1000
	if opt.Quick {
		ks, flows = []int{4}, 100
	}
	sec := &Section{Name: "memory", Method: fmt.Sprintf(
		"Per lab: kernel memory = drop of /proc/meminfo MemAvailable across bringing the lab up (default data plane), 0.5 s after, "+
			"against the same drop for the bare namespaces+veths; ftlab RSS = this process's VmRSS after up against before. "+
			"MemAvailable is machine-wide: other activity adds noise. Per flow: %d flows of one 4 KiB message each in the simulator; "+
			"receiver state = Endpoint.ReceiverStateBytes / flows, sender state = mean FlowRecord.StateBytes; baseline: the %d KiB per-flow send window.",
		flows, flowWindow>>10)}
	for _, k := range ks {
		bk, _, err := LabMemory(ctx, k, true)
		if err != nil {
			return sec, fmt.Errorf("k=%d bare: %w", k, err)
		}
		Settle(ctx, time.Second)
		r0, _ := readKB("/proc/self/status", "VmRSS")
		fk, frss, err := LabMemory(ctx, k, false)
		if err != nil {
			return sec, fmt.Errorf("k=%d: %w", k, err)
		}
		Settle(ctx, time.Second)
		opt.logf("bench: memory k=%d: kernel %d KiB (bare %d KiB), rss +%d KiB", k, fk>>10, bk>>10, frss>>10)
		sec.Rows = append(sec.Rows,
			row(fmt.Sprintf("k=%d kernel memory", k), "MiB", float64(fk)/(1<<20), float64(bk)/(1<<20), "bare namespaces+veths"),
			row(fmt.Sprintf("k=%d ftlab RSS after up", k), "MiB", float64(r0+frss)/(1<<20), float64(r0)/(1<<20), "RSS before up"))
	}
	for _, name := range scheme.Names() {
		rx, tx, err := FlowState(name, flows)
		if err != nil {
			return sec, fmt.Errorf("%s: %w", name, err)
		}
		sec.Rows = append(sec.Rows,
			row(name+" receiver state per flow", "B", rx, flowWindow, "send window"),
			row(name+" sender state per flow", "B", tx, flowWindow, "send window"))
	}
	return sec, nil
}
