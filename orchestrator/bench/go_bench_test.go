package bench

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The same figures as `ftlab bench`, for `go test -bench` (make bench):
// every row becomes a metric named after its figure; ratios are against
// the baseline measured in the same run.
//
//	go test -run '^$' -bench . -benchtime 1x ./orchestrator/bench

var unitChars = regexp.MustCompile(`[^A-Za-z0-9=/.-]+`)

func benchSections(b *testing.B, names ...string) {
	if os.Geteuid() != 0 {
		b.Skip("needs root to create network namespaces")
	}
	for i := 0; i < b.N; i++ {
		rep, err := Run(context.Background(), names, Options{})
		if err != nil {
			b.Fatal(err)
		}
		for _, sec := range rep.Sections {
			for _, r := range sec.Rows {
				name := strings.Trim(unitChars.ReplaceAllString(r.Figure, "-"), "-")
				b.ReportMetric(r.Value, name)
				b.ReportMetric(r.Ratio, name+"/baseline")
			}
		}
	}
}

// BenchmarkFabric: up and down for k = 4, 8, 16 against bare namespaces
// and veths.
func BenchmarkFabric(b *testing.B) { benchSections(b, "fabric") }

// BenchmarkDataplane: packets per second per core, line rate and shaped,
// against kernel IP forwarding through the same namespaces.
func BenchmarkDataplane(b *testing.B) { benchSections(b, "dataplane") }

// BenchmarkAgent: host-agent packets per second per core against a bare
// UDP send/receive loop.
func BenchmarkAgent(b *testing.B) { benchSections(b, "agent") }
