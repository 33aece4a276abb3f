package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/ftlab/ftlab/bpf"
	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/switchd"
)

// DefaultSnapLen is the bytes kept of each frame unless asked otherwise:
// Ethernet, IPv4 and UDP headers, the ftlab header with room for a NACK
// of 40 PSNs, and the start of a DATA payload.
const DefaultSnapLen = 256

// MaxSnapLen is the most a switch's tap copies of a frame.
const MaxSnapLen = bpf.TapSnapMax

// Format is how frames are written.
type Format string

const (
	FormatPcapng Format = "pcapng" // one pcapng section (ftlab capture -w)
	FormatText   Format = "text"   // one line per frame
	FormatJSON   Format = "json"   // one JSON object per frame and line
)

// Lab is what a capture needs of a lab.
type Lab struct {
	Name      string
	Topo      *topology.Topology
	Namespace func(node string) string
	PinRoot   string
	DataPlane switchd.Config
	// RunDir is the lab's run directory, where captures take their
	// per-switch locks.
	RunDir string
}

// Options say what to capture and where to write it.
type Options struct {
	Targets []string // NODE or NODE:PORT
	Filter  string   // a filter expression (ParseFilter); "" keeps every frame
	Count   int      // stop after writing this many frames; 0: until ctx ends
	SnapLen int      // bytes kept per frame (default DefaultSnapLen)
	Format  Format   // default FormatPcapng
	Out     io.Writer
	// Ready, if set, is called once every port is being captured.
	Ready func(ports []Port)
}

// PortStats count what one port's capture saw.
type PortStats struct {
	Port     string            `json:"port"`
	In       uint64            `json:"in"`      // frames seen arriving
	Out      uint64            `json:"out"`     // frames seen leaving (or dropped at the egress)
	Seen     uint64            `json:"seen"`    // In + Out
	Written  uint64            `json:"written"` // of those, the frames the filter kept
	Lost     uint64            `json:"lost"`    // frames the capture had no room for (a switch's: its ring's, charged to its first port)
	Verdicts map[string]uint64 `json:"verdicts,omitempty"`
}

// Result is what a capture saw.
type Result struct {
	Lab     string      `json:"lab"`
	Filter  string      `json:"filter,omitempty"`
	Ports   []PortStats `json:"ports"`
	Written uint64      `json:"written"`
	Lost    uint64      `json:"lost"`
}

type source interface {
	run(out chan<- *Frame) error // until stopped, then drained
	stop()                       // stop copying; run returns once it read what was copied
	close() error                // release, after run returned
	lost() (*Port, uint64)       // frames lost, final after close, and the port charged
}

// Run captures until ctx ends, a source fails or opt.Count frames were
// written, and returns what it saw. Every tap it armed is disarmed before
// it returns.
func Run(ctx context.Context, l Lab, opt Options) (res *Result, err error) {
	if opt.SnapLen == 0 {
		opt.SnapLen = DefaultSnapLen
	}
	if opt.SnapLen < 1 || opt.SnapLen > MaxSnapLen {
		return nil, fmt.Errorf("capture: snaplen %d out of range (1..%d)", opt.SnapLen, MaxSnapLen)
	}
	if opt.Format == "" {
		opt.Format = FormatPcapng
	}
	if opt.Count < 0 {
		return nil, fmt.Errorf("capture: count %d is negative", opt.Count)
	}
	ports, err := ResolveTargets(l.Topo, opt.Targets)
	if err != nil {
		return nil, err
	}
	filter, err := ParseFilter(opt.Filter, l.Topo)
	if err != nil {
		return nil, err
	}
	needTap := false
	for _, p := range ports {
		needTap = needTap || p.Switch
	}
	if needTap && l.DataPlane.DataPlane != switchd.DataPlaneBPF {
		return nil, fmt.Errorf("capture: switch ports are read through the eBPF data plane's tap, and lab %s runs %s; capture host ports instead", l.Name, l.DataPlane.DataPlane)
	}

	sources, err := openSources(l, ports, opt.SnapLen)
	if err != nil {
		return nil, err
	}
	// Stopping the sources ends their run loops once they have drained
	// what was copied, which closes frames; then they are released.
	var stopOnce sync.Once
	stopAll := func() {
		stopOnce.Do(func() {
			for _, s := range sources {
				s.stop()
			}
		})
	}
	var closeErr error
	released := false
	release := func() {
		if !released {
			released = true
			for _, s := range sources {
				closeErr = errors.Join(closeErr, s.close())
			}
		}
	}
	defer release()

	emit, finish, err := newEmitter(opt, l.Name, ports, filter)
	if err != nil {
		return nil, err
	}
	frames := make(chan *Frame, 4096)
	failed := make(chan error, len(sources))
	var wg sync.WaitGroup
	for _, s := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.run(frames); err != nil {
				failed <- err
				stopAll()
			}
		}()
	}
	go func() { wg.Wait(); close(frames) }()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			stopAll()
		case <-done:
		}
	}()
	if opt.Ready != nil {
		opt.Ready(ports)
	}

	stats := make([]PortStats, len(ports))
	index := map[*Port]int{}
	for i := range ports {
		stats[i] = PortStats{Port: ports[i].String(), Verdicts: map[string]uint64{}}
		index[&ports[i]] = i
	}
	res = &Result{Lab: l.Name, Filter: opt.Filter}
	var emitErr error
	for f := range frames {
		st := &stats[index[f.Port]]
		st.Seen++
		if f.Dir == bpf.TapIn {
			st.In++
		} else {
			st.Out++
		}
		if f.Port.Switch {
			st.Verdicts[verdictKey(f)]++
		}
		if emitErr != nil || opt.Count > 0 && res.Written >= uint64(opt.Count) || !filter.Match(f) {
			continue
		}
		if emitErr = emit(f, len(frames) == 0); emitErr != nil {
			stopAll()
			continue
		}
		st.Written++
		res.Written++
		if opt.Count > 0 && res.Written >= uint64(opt.Count) {
			stopAll()
		}
	}
	// Every source has returned: release them, which makes lost final.
	release()
	close(failed)
	var runErr error
	for err := range failed {
		runErr = errors.Join(runErr, err)
	}
	for _, s := range sources {
		p, lost := s.lost()
		stats[index[p]].Lost += lost
		res.Lost += lost
	}
	res.Ports = stats
	return res, errors.Join(runErr, emitErr, closeErr, finish(stats))
}

// verdictKey names a switch frame's verdict for PortStats.Verdicts:
// "in forwarded", "out dropped buffer", "in local", with ", trimmed".
func verdictKey(f *Frame) string {
	k := f.Dir.String() + " " + f.Verdict.String()
	if f.Verdict == bpf.TapDrop {
		k += " " + f.Cause.String()
	}
	if f.Flags&bpf.TapTrimmed != 0 {
		k += " trimmed"
	}
	return k
}

// openSources opens one tap per switch and one socket per host port. On
// error nothing stays open.
func openSources(l Lab, ports []Port, snaplen int) ([]source, error) {
	clock, err := newMonoClock()
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	var sources []source
	fail := func(err error) ([]source, error) {
		for _, s := range sources {
			s.close()
		}
		return nil, err
	}
	bySwitch := map[string]map[int]*Port{}
	var order []string
	for i := range ports {
		p := &ports[i]
		if !p.Switch {
			s, err := openHostSocket(l.Namespace(p.Node), p, snaplen)
			if err != nil {
				return fail(err)
			}
			sources = append(sources, s)
			continue
		}
		if bySwitch[p.Node] == nil {
			bySwitch[p.Node] = map[int]*Port{}
			order = append(order, p.Node)
		}
		bySwitch[p.Node][p.Port] = p
	}
	for _, node := range order {
		n, _ := l.Topo.Node(node)
		all := map[int]*Port{}
		for i := range n.Ports {
			if p, ok := bySwitch[node][i]; ok {
				all[i] = p
			} else {
				p := portOf(l.Topo, n, i)
				all[i] = &p
			}
		}
		t, err := openSwitchTap(l, node, bySwitch[node], all, snaplen, clock)
		if err != nil {
			return fail(err)
		}
		sources = append(sources, t)
	}
	return sources, nil
}

// newEmitter returns the function that writes one frame (last: no other
// frame is waiting, a moment to flush) and the one that ends the output.
func newEmitter(opt Options, labName string, ports []Port, filter Filter) (func(*Frame, bool) error, func([]PortStats) error, error) {
	switch opt.Format {
	case FormatPcapng:
		pw, err := newPcapWriter(opt.Out, labName, ports, opt.SnapLen, filter.String())
		if err != nil {
			return nil, nil, err
		}
		return func(f *Frame, last bool) error {
				if err := pw.write(f); err != nil {
					return err
				}
				if last {
					return pw.flush()
				}
				return nil
			}, func(stats []PortStats) error {
				return pw.close(stats)
			}, nil
	case FormatText:
		return func(f *Frame, _ bool) error {
			_, err := fmt.Fprintln(opt.Out, f.Summary())
			return err
		}, func([]PortStats) error { return nil }, nil
	case FormatJSON:
		enc := json.NewEncoder(opt.Out)
		return func(f *Frame, _ bool) error { return enc.Encode(f.JSON()) },
			func([]PortStats) error { return nil }, nil
	}
	return nil, nil, fmt.Errorf("capture: unknown format %q (valid: %s, %s, %s)", opt.Format, FormatPcapng, FormatText, FormatJSON)
}

// LabOf is the capture's view of a lab that is up.
func LabOf(store *lab.Store, st *lab.State) (Lab, error) {
	if st.Phase != lab.PhaseUp {
		return Lab{}, fmt.Errorf("capture: lab %q is %s, not up", st.Name, st.Phase)
	}
	// The lab's bpffs is mounted in its run directory.
	return Lab{Name: st.Name, Topo: st.Topology, Namespace: store.Namer(st.Name), PinRoot: st.PinRoot,
		DataPlane: st.DataPlane, RunDir: filepath.Dir(st.PinRoot)}, nil
}
