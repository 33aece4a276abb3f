package yamldoc

import (
	"bytes"
	"errors"
	"io"
	"regexp"

	"gopkg.in/yaml.v3"
)

// ParseDocument parses a file holding exactly one YAML document and
// returns its root node (aliases followed). Syntax errors are located
// (SyntaxError); an empty document is reported with emptyMsg, a second
// document as such. The result is an Errors on failure.
func ParseDocument(file string, data []byte, emptyMsg string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errors{{File: file, Msg: emptyMsg}}
		}
		return nil, SyntaxError(file, data, err)
	}
	root := Deref(doc.Content[0])
	if IsNull(root) { // "---" or "~" alone
		return nil, Errors{{File: file, Msg: emptyMsg}}
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, Errors{{File: file, Line: extra.Line, Column: extra.Column,
			Msg: "a file holds one YAML document; remove this second one (after ---)"}}
	case !errors.Is(err, io.EOF):
		return nil, SyntaxError(file, data, err)
	}
	return root, nil
}

// yamlError splits yaml.v3 syntax errors, which exist only as text
// ("yaml: line 3: did not find expected key").
var yamlError = regexp.MustCompile(`^yaml: (?:line \d+: )?(.*)$`)

// SyntaxError locates a YAML syntax error. yaml.v3 reports the line where
// the enclosing construct began, sometimes 0-based, so its number cannot
// be trusted. Instead find the shortest prefix of the file (in whole
// lines) that fails with the same message: its last line is where the
// text stopped being valid YAML.
func SyntaxError(file string, data []byte, err error) error {
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
