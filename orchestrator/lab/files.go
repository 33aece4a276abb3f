package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// Other engines keep their records about a lab next to its state (a
// teaching session says which student works on it): in the lab's run
// directory, so they go when the lab goes, by down, cleanup or a reboot.

var validFile = regexp.MustCompile(`^[a-z][a-z0-9_-]*\.json$`)

// reserved are the names the store itself uses.
var reserved = map[string]bool{"state.json": true, "state.json.tmp": true}

func (s *Store) filePath(name, file string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	if !validFile.MatchString(file) || reserved[file] {
		return "", fmt.Errorf("lab %q: %q is not a name for a lab's file (lowercase, ending in .json, not state.json)", name, file)
	}
	return filepath.Join(s.labDir(name), file), nil
}

// WriteFile saves a file with the lab, atomically. The lab must exist.
func (s *Store) WriteFile(name, file string, data []byte) error {
	path, err := s.filePath(name, file)
	if err != nil {
		return err
	}
	if _, err := os.Stat(s.statePath(name)); err != nil {
		return fmt.Errorf("lab %q: %w", name, ErrNotFound)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("lab %q: %w", name, err)
	}
	return os.Rename(tmp, path)
}

// ReadFile reads a file kept with the lab.
func (s *Store) ReadFile(name, file string) ([]byte, error) {
	path, err := s.filePath(name, file)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}
