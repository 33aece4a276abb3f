package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// TestMetaWriterIsWriteMeta: after every run, and with tries that did not
// count, MetaWriter's run.json is WriteMeta's byte for byte, also once the
// runs were sorted after they were written, and without runs.
func TestMetaWriterIsWriteMeta(t *testing.T) {
	mwDir, wmDir := t.TempDir(), t.TempDir()
	mw := NewMetaWriter(mwDir)
	same := func(step string, m *Meta) {
		t.Helper()
		if err := mw.Write(m); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if err := WriteMeta(wmDir, m); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(mwDir, RunFile))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(wmDir, RunFile))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Fatalf("%s: run.json (-WriteMeta +MetaWriter):\n%s", step, diff)
		}
	}
	meta := &Meta{Format: Format, Scenario: &scenario.Scenario{Name: "t <&>"}}
	same("no runs yet", meta)
	meta.Runs = []*Run{}
	same("empty runs", meta)
	meta.Retried = []*Run{testRun("a", 0)}
	same("a retried try and no runs", meta)
	for i := range 4 {
		meta.Runs = append(meta.Runs, testRun(fmt.Sprint("c", i%2), i/2))
		same(fmt.Sprintf("run %d", i), meta)
	}
	meta.Runs[0], meta.Runs[3] = meta.Runs[3], meta.Runs[0]
	meta.Complete, meta.Interrupted = false, "interrupted (context canceled)"
	same("sorted and finished", meta)
	var back Meta
	data, _ := os.ReadFile(filepath.Join(mwDir, RunFile))
	if err := json.Unmarshal(data, &back); err != nil || len(back.Runs) != 4 || len(back.Retried) != 1 {
		t.Fatalf("read back: %v, %d runs, %d retried", err, len(back.Runs), len(back.Retried))
	}
}

// BenchmarkMetaWrite: run.json written after the 448th run of a scenario
// (the paper incast's count), by MetaWriter (each run encoded once) and by
// WriteMeta (baseline: every run encoded again).
func BenchmarkMetaWrite(b *testing.B) {
	meta := &Meta{Format: Format, Scenario: &scenario.Scenario{Name: "t"}}
	for i := range 448 {
		meta.Runs = append(meta.Runs, testRun(fmt.Sprint("c", i%28), i/28))
	}
	for _, mode := range []string{"baseline=WriteMeta", "MetaWriter"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			mw := NewMetaWriter(dir)
			if err := mw.Write(meta); err != nil { // the earlier runs' encodings
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				var err error
				if mode == "MetaWriter" {
					err = mw.Write(meta)
				} else {
					err = WriteMeta(dir, meta)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
