package calibrate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/ftlab/ftlab/internal/machine"
	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/runner"
	"github.com/ftlab/ftlab/orchestrator/scenario"
)

// CacheFile is the name of the cache in its directory.
const CacheFile = "calibration.json"

// CacheDir is where calibrations are kept: $FTLAB_CACHE_DIR, or ftlab/
// under the user's cache directory ($XDG_CACHE_HOME or ~/.cache).
func CacheDir() (string, error) {
	if d := os.Getenv("FTLAB_CACHE_DIR"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("calibration cache: %w (set FTLAB_CACHE_DIR)", err)
	}
	return filepath.Join(d, "ftlab"), nil
}

// Cache is the calibrations file.
type Cache struct {
	Format  int       `json:"format"`
	Entries []*Result `json:"entries"`
	path    string
}

const cacheFormat = 1

// OpenCache reads the cache in dir; a missing file is an empty cache.
func OpenCache(dir string) (*Cache, error) {
	c := &Cache{Format: cacheFormat, path: filepath.Join(dir, CacheFile)}
	data, err := os.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("calibration cache: %w", err)
	}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("calibration cache %s: %w (delete it to start over)", c.path, err)
	}
	if c.Format != cacheFormat {
		return nil, fmt.Errorf("calibration cache %s: format %d, this ftlab reads %d (delete it to start over)", c.path, c.Format, cacheFormat)
	}
	return c, nil
}

// Path is the cache file.
func (c *Cache) Path() string { return c.path }

// Lookup returns the calibration with key, or nil.
func (c *Cache) Lookup(key string) *Result {
	for _, e := range c.Entries {
		if e.Key == key {
			return e
		}
	}
	return nil
}

// Put adds r, replacing an entry with its key, and writes the file
// (atomically: a crash leaves the old file or the new one).
func (c *Cache) Put(r *Result) error {
	c.Entries = slices.DeleteFunc(c.Entries, func(e *Result) bool { return e.Key == r.Key })
	c.Entries = append(c.Entries, r)
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return fmt.Errorf("calibration cache: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.path), CacheFile+".*")
	if err != nil {
		return fmt.Errorf("calibration cache: %w", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("calibration cache: %w", err)
	}
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("calibration cache: %w", err)
	}
	return nil
}

// KeyRate is the full link rate a scenario is loaded at for its key: every
// value that follows the rate (link rates, the base RTT, parameters
// written in RTTs) is then the same whatever rate the file says.
const KeyRate = units.Gbit

// codeOf names the code a run uses for the cache key: its version, and
// its commit where the build knows it (a "dev" build from another commit
// is other code; a release installed with `go install ...@v1.2.3` has its
// module version and no commit).
func codeOf(o runner.Options) string {
	if o.Commit == "" || o.Commit == "unknown" {
		return o.Version
	}
	return o.Version + " " + o.Commit
}

// Key identifies what a calibration is valid for: this machine (CPU,
// cores, memory, kernel), the ftlab version and the scenario with its
// rate left out (load loads it at KeyRate), so a scenario saying
// rate: auto and the same one with a fixed rate share a calibration. Any
// other change to the scenario, its topology or this machine calls for a
// new calibration.
func Key(load Loader, version string) (string, error) {
	sc, err := load(KeyRate)
	if err != nil {
		return "", err
	}
	type cellPrint struct {
		Config   scenario.Config
		Links    any
		Messages any
	}
	print := struct {
		Machine machine.Info
		Version string
		Cells   []cellPrint
	}{Machine: machine.Read(), Version: version}
	for _, c := range sc.Cells {
		cfg := *c.Config
		cfg.Rate = nil // says where KeyRate came from
		cp := cellPrint{Config: cfg}
		if t := c.Config.Topo(); t != nil {
			// Rates relative to the fastest link: the shape of the fabric.
			full := float64(t.FullRate())
			type dir struct {
				Rel         float64
				Buffer, ECN uint64
				MTU         int
				Name        string
			}
			var links []dir
			for _, l := range t.Links {
				links = append(links,
					dir{float64(l.Up.RateBps) / full, l.Up.BufferBytes, l.Up.ECNBytes, l.MTU, l.Name},
					dir{float64(l.Down.RateBps) / full, l.Down.BufferBytes, l.Down.ECNBytes, l.MTU, l.Name})
			}
			cp.Links = links
		}
		if len(c.Runs) > 0 {
			cp.Messages = c.Runs[0].Messages
		}
		print.Cells = append(print.Cells, cp)
	}
	data, err := json.Marshal(print)
	if err != nil {
		return "", fmt.Errorf("calibration key: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]), nil
}
