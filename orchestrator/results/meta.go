package results

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// MetaWriter writes a scenario's run.json after each of its runs, as the
// runner does so that an interrupted scenario keeps every finished run.
// The file is WriteMeta's, byte for byte, but the scenario and each run
// are encoded only once: encoding everything again after every run made
// the paper incast's run.json (6 MB by its 448th run, 2.5 MB of it the
// scenario) cost up to 118 ms per run. The scenario and the runs must not
// change once written.
type MetaWriter struct {
	dir      string
	scenario *scenario.Scenario
	scEnc    []byte          // the scenario's encoding, at its depth in the file
	runs     map[*Run][]byte // each run's, at its depth
}

// NewMetaWriter writes run.json in dir.
func NewMetaWriter(dir string) *MetaWriter {
	return &MetaWriter{dir: dir, runs: map[*Run][]byte{}}
}

// Top-level members in MarshalIndent's output start with a newline and a
// two-space indent: only they are indented that little, and no string
// holds a raw newline, so each of these occurs once.
const (
	scenarioKey = "\n  \"scenario\": "
	runsKey     = "\n  \"runs\": "
)

// Write writes m to run.json, atomically.
func (w *MetaWriter) Write(m *Meta) error {
	// The small members, with null and empty stand-ins for the large ones,
	// which are then spliced in where they go.
	head := *m
	head.Scenario = nil
	if head.Runs != nil {
		head.Runs = []*Run{}
	}
	head.Retried = nil
	data, err := json.MarshalIndent(&head, "", "  ")
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.Grow(len(data) + len(w.scEnc))
	rest, err := splice(&b, data, scenarioKey, "null", func() error {
		if m.Scenario == nil {
			b.WriteString("null")
			return nil
		}
		if m.Scenario != w.scenario {
			enc, err := json.MarshalIndent(m.Scenario, "  ", "  ")
			if err != nil {
				return err
			}
			w.scenario, w.scEnc = m.Scenario, enc
		}
		b.Write(w.scEnc)
		return nil
	})
	if err != nil {
		return err
	}
	empty := "[]"
	if m.Runs == nil {
		empty = "null"
	}
	rest, err = splice(&b, rest, runsKey, empty, func() error {
		if len(m.Runs) == 0 {
			b.WriteString(empty)
		} else if err := w.array(&b, m.Runs); err != nil {
			return err
		}
		if len(m.Retried) > 0 {
			b.WriteString(",\n  \"retried\": ")
			return w.array(&b, m.Retried)
		}
		return nil
	})
	if err != nil {
		return err
	}
	b.Write(rest)
	b.WriteByte('\n')
	return writeAtomic(w.dir, RunFile, b.Bytes())
}

// splice copies data to b up to and including the member key, checks
// that stand-in follows, lets value write the member's value instead, and
// returns what follows the stand-in.
func splice(b *bytes.Buffer, data []byte, key, standIn string, value func() error) ([]byte, error) {
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return nil, fmt.Errorf("results: no top-level %q in %s", key[4:len(key)-3], RunFile)
	}
	j := i + len(key)
	if !bytes.HasPrefix(data[j:], []byte(standIn)) {
		return nil, fmt.Errorf("results: %q in %s is not %s", key[4:len(key)-3], RunFile, standIn)
	}
	b.Write(data[:j])
	if err := value(); err != nil {
		return nil, err
	}
	return data[j+len(standIn):], nil
}

// array writes runs as a JSON array at the depth of the top level's
// members, encoding each run the first time it is seen.
func (w *MetaWriter) array(b *bytes.Buffer, runs []*Run) error {
	b.WriteString("[\n    ")
	for k, r := range runs {
		enc, ok := w.runs[r]
		if !ok {
			var err error
			if enc, err = json.MarshalIndent(r, "    ", "  "); err != nil {
				return err
			}
			w.runs[r] = enc
		}
		if k > 0 {
			b.WriteString(",\n    ")
		}
		b.Write(enc)
	}
	b.WriteString("\n  ]")
	return nil
}
