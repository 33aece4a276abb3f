package bpf

import (
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"
)

// Load cost. BenchmarkLoad reports wall and CPU milliseconds per Load for
// each program set (Options.Programs) and, per program, the time to load
// its object against maps that already exist, with the verifier's own
// statistics: instructions processed (verified-insns), states explored,
// verification time (verifier-ms, measured by the kernel with the stats
// log on).

// loadProgs are the three programs, each with its object's spec.
var loadProgs = []struct {
	name string
	spec func() (*ebpf.CollectionSpec, error)
}{
	{xdpIngressProgXdpIngress, loadXdpIngress},
	{tcShapedProgTcShaped, loadTcShaped},
	{xdpPassProgXdpPass, loadXdpPass},
}

// cpuNow is the process's user+system CPU time.
func cpuNow(tb testing.TB) time.Duration {
	tb.Helper()
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// verifierStats are the numbers of a LogLevelStats verifier log.
type verifierStats struct {
	insns, totalStates, peakStates int
	usec                           int
}

var (
	reProcessed = regexp.MustCompile(`processed (\d+) insns .*total_states (\d+) peak_states (\d+)`)
	reVerTime   = regexp.MustCompile(`verification time (\d+) usec`)
)

func parseVerifierLog(log string) (verifierStats, bool) {
	var st verifierStats
	m := reProcessed.FindStringSubmatch(log)
	t := reVerTime.FindStringSubmatch(log)
	if m == nil || t == nil {
		return st, false
	}
	st.insns, _ = strconv.Atoi(m[1])
	st.totalStates, _ = strconv.Atoi(m[2])
	st.peakStates, _ = strconv.Atoi(m[3])
	st.usec, _ = strconv.Atoi(t[1])
	return st, true
}

// sharedMaps creates the maps of one instance at their default sizes, for
// loading single programs against them.
func sharedMaps(tb testing.TB) map[string]*ebpf.Map {
	tb.Helper()
	spec, err := loadXdpIngress()
	if err != nil {
		tb.Fatal(err)
	}
	maps := map[string]*ebpf.Map{}
	for _, name := range mapNames {
		m, err := ebpf.NewMap(spec.Maps[name])
		if err != nil {
			tb.Fatalf("map %s: %v", name, err)
		}
		tb.Cleanup(func() { m.Close() })
		maps[name] = m
	}
	return maps
}

// loadOne loads one program's object against the shared maps.
func loadOne(tb testing.TB, spec *ebpf.CollectionSpec, maps map[string]*ebpf.Map, level ebpf.LogLevel) *ebpf.Collection {
	tb.Helper()
	repl := map[string]*ebpf.Map{}
	for name := range spec.Maps {
		if m, ok := maps[name]; ok {
			repl[name] = m
		}
	}
	c, err := ebpf.NewCollectionWithOptions(spec, ebpf.CollectionOptions{
		MapReplacements: repl,
		Programs:        ebpf.ProgramOptions{LogLevel: level},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func BenchmarkLoad(b *testing.B) {
	requireRoot(b)
	for _, set := range loadSets {
		b.Run("Load="+set.name, func(b *testing.B) {
			c0 := cpuNow(b)
			for b.Loop() {
				s, err := Load(set.opts)
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/Load")
			b.ReportMetric(float64((cpuNow(b)-c0).Microseconds())/1000/float64(b.N), "cpu-ms/Load")
			b.ReportMetric(0, "ns/op")
		})
	}
	maps := sharedMaps(b)
	for _, p := range loadProgs {
		b.Run("prog="+p.name, func(b *testing.B) {
			spec, err := p.spec()
			if err != nil {
				b.Fatal(err)
			}
			// One load with the verifier's statistics, outside the timing.
			c := loadOne(b, spec, maps, ebpf.LogLevelStats)
			prog := c.Programs[p.name]
			st, ok := parseVerifierLog(prog.VerifierLog)
			if !ok {
				b.Fatalf("no statistics in the verifier log:\n%s", prog.VerifierLog)
			}
			if info, err := prog.Info(); err == nil {
				if n, ok := info.VerifiedInstructions(); ok {
					st.insns = int(n)
				}
			}
			c.Close()
			b.ResetTimer()
			c0 := cpuNow(b)
			for b.Loop() {
				loadOne(b, spec, maps, 0).Close()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/load")
			b.ReportMetric(float64((cpuNow(b)-c0).Microseconds())/1000/float64(b.N), "cpu-ms/load")
			b.ReportMetric(float64(st.insns), "verified-insns")
			b.ReportMetric(float64(st.totalStates), "states")
			b.ReportMetric(float64(st.usec)/1000, "verifier-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// loadSets are the program sets BenchmarkLoad loads.
var loadSets = []struct {
	name string
	opts Options
}{
	{"linerate", Options{Programs: ProgramsLineRate}},
	{"shaped", Options{Programs: ProgramsShaped}}, // the default
	{"all", Options{Programs: ProgramsAll}},
}

// BenchmarkLoadFatTreeK8 loads the 80 switches of a k=8 fat tree the way
// switchd does (in parallel, 2 per CPU) and reports the wall and CPU time
// per fabric. Sizes as switchd gives a k=8 switch: 8 ports, 128 hosts +
// 32 edge prefixes + k + 8 routes.
func BenchmarkLoadFatTreeK8(b *testing.B) {
	requireRoot(b)
	const switches = 80
	for _, set := range loadSets {
		b.Run("Load="+set.name, func(b *testing.B) {
			opts := set.opts
			opts.MaxPorts, opts.MaxRoutes, opts.MaxGroups, opts.MaxPointers = 8, 176, 177, 352
			c0 := cpuNow(b)
			for b.Loop() {
				sw := make([]*Switch, switches)
				var g errgroup.Group
				g.SetLimit(2 * runtime.NumCPU())
				for i := range sw {
					g.Go(func() (err error) {
						sw[i], err = Load(opts)
						return err
					})
				}
				err := g.Wait()
				for _, s := range sw {
					if s != nil {
						s.Close()
					}
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/fabric")
			b.ReportMetric(float64((cpuNow(b)-c0).Microseconds())/1000/float64(b.N), "cpu-ms/fabric")
			b.ReportMetric(0, "ns/op")
		})
	}
}
