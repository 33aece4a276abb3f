package testlab

import (
	"os"
	"os/exec"
	"testing"
)

// RequireToolsEnv, set to 1 (as .ci/run does), turns a missing external
// tool (tshark, chromium) from a skipped check into a failed test, so CI
// cannot pass without running what the tool checks.
const RequireToolsEnv = "FTLAB_REQUIRE_TOOLS"

// Tool returns the path of an external program the test needs. Without
// it the test is skipped with why, or fails where RequireToolsEnv says
// every tool must be there.
func Tool(t testing.TB, name, why string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv(RequireToolsEnv) == "1" {
		t.Fatalf("%s is not installed, and %s=1: %s", name, RequireToolsEnv, why)
	}
	t.Skipf("%s not installed: %s", name, why)
	return ""
}
