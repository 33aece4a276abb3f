package cli

import (
	"runtime/debug"
	"testing"
)

func TestBuildInfo(t *testing.T) {
	installed := &debug.BuildInfo{Main: debug.Module{Path: "github.com/ftlab/ftlab", Version: "v1.2.3"}}
	local := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}}
	for _, c := range []struct {
		name            string
		version, commit string
		info            *debug.BuildInfo
		want            BuildInfo
	}{
		{"go install @version", "dev", "", installed, BuildInfo{Version: "v1.2.3", Commit: "unknown"}},
		{"go build in a checkout", "dev", "", local, BuildInfo{Version: "dev", Commit: "abc123", Modified: true}},
		{"make build", "v1.2.3-4-gdef456", "def456", installed, BuildInfo{Version: "v1.2.3-4-gdef456", Commit: "def456"}},
		{"no build information", "dev", "", nil, BuildInfo{Version: "dev", Commit: "unknown"}},
	} {
		got := buildInfo(c.version, c.commit, c.info)
		got.Go = ""
		if got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
