package topology

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"

	"gopkg.in/yaml.v3"
)

// Load reads and resolves a topology file. Every error names the path.
func Load(path string) (*Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load topology: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes and resolves a topology file. file names it in error
// messages and becomes Topology.Source; its base name is the default
// Topology.Name. A non-nil error is an Errors listing every problem.
func Parse(file string, data []byte) (*Topology, error) {
	s, err := decodeFile(file, data)
	if err != nil {
		return nil, err
	}
	return s.Resolve(file)
}

func decodeFile(file string, data []byte) (*Spec, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errors{{File: file, Msg: emptyFile}}
		}
		return nil, syntaxError(file, data, err)
	}
	root := deref(doc.Content[0])
	if isNull(root) { // "---" or "~" alone
		return nil, Errors{{File: file, Msg: emptyFile}}
	}
	var s Spec
	s.decode(root)
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		// Appended directly: marking the whole spec bad would hide the
		// first document's problems.
		s.org.problems = append(s.org.problems, &FieldError{Line: extra.Line, Column: extra.Column,
			Msg: "a topology file holds one YAML document; remove this second one (after ---)"})
	case !errors.Is(err, io.EOF):
		return nil, syntaxError(file, data, err)
	}
	return &s, nil
}

// yamlError splits yaml.v3 syntax errors, which exist only as text
// ("yaml: line 3: did not find expected key").
var yamlError = regexp.MustCompile(`^yaml: (?:line \d+: )?(.*)$`)

// syntaxError locates a YAML syntax error. yaml.v3 reports the line where
// the enclosing construct began, sometimes 0-based, so its number cannot
// be trusted. Instead find the shortest prefix of the file (in whole
// lines) that fails with the same message: its last line is where the
// text stopped being valid YAML.
func syntaxError(file string, data []byte, err error) error {
	msg := err.Error()
	if m := yamlError.FindStringSubmatch(msg); m != nil {
		msg = m[1]
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for n := 1; n <= len(lines); n++ {
		perr := parseAll(bytes.Join(lines[:n], nil))
		if perr == nil {
			continue
		}
		if m := yamlError.FindStringSubmatch(perr.Error()); m != nil && m[1] == msg {
			return Errors{{File: file, Line: n, Msg: "invalid YAML: " + msg}}
		}
	}
	return Errors{{File: file, Msg: "invalid YAML: " + msg}}
}

// parseAll parses every document in data, returning the first error.
func parseAll(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
