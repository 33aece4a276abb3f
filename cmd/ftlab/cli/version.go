package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version is set at link time (-X github.com/ftlab/ftlab/cmd/ftlab/cli.Version=...).
var Version = "dev"

// Commit is set at link time by the Makefile, for builds where the Go
// toolchain stamps no VCS information (-X .../internal/cli.Commit=...).
var Commit = ""

// BuildInfo describes this binary.
type BuildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

// Build returns the version, commit and toolchain of this binary: the
// version the build stamped (the Makefile's git describe), else the module
// version the Go toolchain records (`go install .../cmd/ftlab@v1.2.3`),
// else "dev". It names the code in run.json and keys the calibration
// cache, so a binary of another release never reuses a calibration.
func Build() BuildInfo {
	info, _ := debug.ReadBuildInfo()
	return buildInfo(Version, Commit, info)
}

func buildInfo(version, commit string, info *debug.BuildInfo) BuildInfo {
	b := BuildInfo{Version: version, Commit: "unknown", Go: runtime.Version()}
	if commit != "" {
		b.Commit = commit
	}
	if info == nil {
		return b
	}
	if v := info.Main.Version; b.Version == "dev" && v != "" && v != "(devel)" {
		b.Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

func (a *app) versionCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print ftlab's version and commit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := Build()
			if asJSON {
				return a.printJSON(b)
			}
			dirty := ""
			if b.Modified {
				dirty = " (modified)"
			}
			fmt.Fprintf(a.stdout, "ftlab %s commit %s%s %s\n", b.Version, b.Commit, dirty, b.Go)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
