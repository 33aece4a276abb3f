package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ftlab/ftlab/internal/topology"
	"github.com/ftlab/ftlab/orchestrator/fabric"
	"github.com/ftlab/ftlab/switchd"
)

// DefaultRunDir holds one directory per lab. It is on tmpfs, so a reboot,
// which also removes every namespace, removes the records too.
const DefaultRunDir = "/run/ftlab"

// Phase is where a lab is in its life.
type Phase string

const (
	PhaseBuilding Phase = "building"     // up is creating it
	PhaseUp       Phase = "up"           // built and usable
	PhaseTearing  Phase = "tearing-down" // down is removing it
)

// stateVersion is bumped when State changes incompatibly.
const stateVersion = 1

// State is the record of one lab, kept in <run dir>/<lab>/state.json.
type State struct {
	Version      int                `json:"version"`
	Name         string             `json:"name"`
	Phase        Phase              `json:"phase"`
	PID          int                `json:"pid"` // the ftlab process that last changed the lab
	Created      time.Time          `json:"created"`
	Updated      time.Time          `json:"updated"`
	TopologyFile string             `json:"topology_file,omitempty"`
	Topology     *topology.Topology `json:"topology"`
	// Namespaces lists every namespace the lab has or may have: written
	// before the first one is created.
	Namespaces []string        `json:"namespaces"`
	Timings    *fabric.Timings `json:"timings,omitempty"`
	// DataPlane is what forwards in the switches; PinRoot the lab's bpffs.
	DataPlane switchd.Config `json:"dataplane"`
	PinRoot   string         `json:"pin_root,omitempty"`
	// DataPlaneTime is how long installing the data plane took (within
	// Timings.Total if it was installed during the build).
	DataPlaneTime time.Duration `json:"dataplane_time_ns,omitempty"`
	// DataPlaneReused says the last Reprogram reconfigured the installed
	// data plane in place instead of installing a new one.
	DataPlaneReused bool `json:"dataplane_reused,omitempty"`
	// Failed lists the IDs of links that are down.
	Failed []int `json:"failed_links,omitempty"`
	// Owner, if set, is the process the lab belongs to (a run's lab):
	// once it is gone, Cleanup removes the lab although it is up.
	Owner *Owner `json:"owner,omitempty"`
	// Impairments are the link changes `ftlab link set` made, in link
	// order (impair.go); reinstalling the data plane clears them.
	Impairments []Impairment `json:"impairments,omitempty"`
}

// SetupTime is how long the lab took to come up: the fabric and its data
// plane.
func (st *State) SetupTime() time.Duration {
	if st.Timings == nil {
		return st.DataPlaneTime
	}
	if st.Timings.DataPlane > 0 {
		return st.Timings.Total // the data plane was part of the build
	}
	return st.Timings.Total + st.DataPlaneTime
}

// Store is a run directory of labs and the namespace prefix they use.
type Store struct {
	Dir    string // run directory, one subdirectory per lab
	Prefix string // namespace prefix, e.g. "ftlab-"
}

// DefaultStore is the machine's run directory and prefix.
func DefaultStore() *Store { return &Store{Dir: DefaultRunDir, Prefix: DefaultPrefix} }

func (s *Store) labDir(name string) string { return filepath.Join(s.Dir, name) }
func (s *Store) statePath(name string) string {
	return filepath.Join(s.labDir(name), "state.json")
}

// claim creates the lab's directory; it fails if the lab exists.
func (s *Store) claim(name string) error {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("create run directory: %w", err)
	}
	return os.Mkdir(s.labDir(name), 0o755)
}

// Read loads a lab's state.
func (s *Store) Read(name string) (*State, error) {
	data, err := os.ReadFile(s.statePath(name))
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("read state of lab %q: %s: %w", name, s.statePath(name), err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("read state of lab %q: %s has version %d, this ftlab reads %d",
			name, s.statePath(name), st.Version, stateVersion)
	}
	return &st, nil
}

// write saves a lab's state atomically: readers see the old or the new file.
func (s *Store) write(st *State) error {
	st.Version = stateVersion
	st.PID = os.Getpid()
	st.Updated = time.Now().UTC()
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	tmp := s.statePath(st.Name) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if err := os.Rename(tmp, s.statePath(st.Name)); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

// List returns the names of the labs with a run directory, sorted.
func (s *Store) List() ([]string, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list labs: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// ErrBusy says another live ftlab process is working on the lab.
var ErrBusy = errors.New("lab is busy")

// lock takes the lab's exclusive lock without waiting. The kernel drops it
// when the holder exits, also on kill -9, which is how cleanup tells an
// abandoned lab from one that is being worked on.
func (s *Store) lock(name string) (release func(), err error) {
	release, err = flock(filepath.Join(s.labDir(name), "lock"))
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil, fmt.Errorf("lab %q: %w: another ftlab process is working on it", name, ErrBusy)
	}
	if err != nil {
		return nil, fmt.Errorf("lock lab %q: %w", name, err)
	}
	return release, nil
}

// flock takes the exclusive lock of a lock file without waiting;
// unix.EWOULDBLOCK says another process holds it.
func flock(path string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// pinRoot is the mount point of the lab's private bpffs.
func (s *Store) pinRoot(name string) string { return filepath.Join(s.labDir(name), "bpf") }

// PinRoot is where lab name's data plane is pinned once it is up (its
// switches' port marks derive from it: switchd.MarkTag).
func (s *Store) PinRoot(name string) string { return s.pinRoot(name) }

// forget releases the lab's pinned data plane and removes its run
// directory.
func (s *Store) forget(name string) error {
	if err := switchd.Remove(s.pinRoot(name)); err != nil {
		return fmt.Errorf("lab %q: %w", name, err)
	}
	if err := os.RemoveAll(s.labDir(name)); err != nil {
		return fmt.Errorf("remove run directory of lab %q: %w", name, err)
	}
	return nil
}
