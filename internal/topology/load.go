package topology

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ftlab/ftlab/internal/yamldoc"
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
// Topology.Name. A non-nil error is an yamldoc.Errors listing every problem.
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
			return nil, yamldoc.Errors{{File: file, Msg: emptyFile}}
		}
		return nil, yamldoc.SyntaxError(file, data, err)
	}
	root := yamldoc.Deref(doc.Content[0])
	if yamldoc.IsNull(root) { // "---" or "~" alone
		return nil, yamldoc.Errors{{File: file, Msg: emptyFile}}
	}
	var s Spec
	s.decode(root)
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		// Appended directly: marking the whole spec bad would hide the
		// first document's problems.
		s.org.Append(&yamldoc.FieldError{Line: extra.Line, Column: extra.Column,
			Msg: "a topology file holds one YAML document; remove this second one (after ---)"})
	case !errors.Is(err, io.EOF):
		return nil, yamldoc.SyntaxError(file, data, err)
	}
	return &s, nil
}
