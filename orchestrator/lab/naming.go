package lab

import (
	"fmt"
	"regexp"
	"strings"
)

// DefaultPrefix starts the name of every namespace ftlab creates. A Store
// can use another (tests do, so they never see each other's labs).
const DefaultPrefix = "ftlab-"

// DefaultName is the lab name used when none is given.
const DefaultName = "default"

// MaxNameLen bounds lab names so namespace names stay readable.
const MaxNameLen = 16

var validName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// ValidateName checks a lab name: lowercase letters, digits and '_',
// starting with a letter, at most MaxNameLen characters. No '-' keeps
// namespace prefixes of different labs disjoint.
func ValidateName(name string) error {
	if name == "" {
		return fmt.Errorf("lab name is empty")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("lab name %q is longer than %d characters", name, MaxNameLen)
	}
	if !validName.MatchString(name) {
		return fmt.Errorf("lab name %q is invalid: use lowercase letters, digits and '_', starting with a letter", name)
	}
	return nil
}

var validPrefix = regexp.MustCompile(`^[a-z][a-z0-9]{0,11}-$`)

// ValidatePrefix checks a namespace prefix: a short lowercase word and '-'.
func ValidatePrefix(p string) error {
	if !validPrefix.MatchString(p) {
		return fmt.Errorf("namespace prefix %q is invalid: want 1-12 lowercase letters or digits and a trailing '-'", p)
	}
	return nil
}

// NamespacePrefix is the prefix of every namespace of the lab.
func (s *Store) NamespacePrefix(lab string) string { return s.Prefix + lab + "-" }

// NamespaceName is the namespace of one node of the lab.
func (s *Store) NamespaceName(lab, node string) string { return s.NamespacePrefix(lab) + node }

// Namer returns NamespaceName bound to one lab.
func (s *Store) Namer(lab string) func(node string) string {
	return func(node string) string { return s.NamespaceName(lab, node) }
}

// labOfNamespace returns the lab a namespace name belongs to, if it is one
// of this store's.
func (s *Store) labOfNamespace(ns string) (string, bool) {
	rest, ok := strings.CutPrefix(ns, s.Prefix)
	if !ok {
		return "", false
	}
	lab, _, ok := strings.Cut(rest, "-")
	if !ok || ValidateName(lab) != nil {
		return "", false
	}
	return lab, true
}
