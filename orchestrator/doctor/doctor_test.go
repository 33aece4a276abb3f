package doctor

import (
	"os"
	"testing"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/internal/testlab"
)

func TestKernelVersion(t *testing.T) {
	for _, c := range []struct {
		in           string
		major, minor int
		bad          bool
	}{
		{"6.18.44-fc-v1045", 6, 18, false},
		{"6.6.0", 6, 6, false},
		{"5.15.0-91-generic", 5, 15, false},
		{"6.1-rc2", 6, 1, false},
		{"linux", 0, 0, true},
	} {
		major, minor, err := kernelVersion(c.in)
		if (err != nil) != c.bad || major != c.major || minor != c.minor {
			t.Errorf("kernelVersion(%q) = %d, %d, %v", c.in, major, minor, err)
		}
	}
}

// TestRunOnThisMachine: on the project's machines every check passes,
// and the doctor leaves no namespace behind.
func TestRunOnThisMachine(t *testing.T) {
	testlab.RequireRoot(t)
	r := Run()
	for _, c := range r.Results {
		t.Logf("%-22s %-4s %s (%v)", c.Name, c.Status, c.Detail, c.Took)
		if c.Status == Fail || c.Status == Skip {
			t.Errorf("%s: %s: %s; %s", c.Name, c.Status, c.Detail, c.Fix)
		}
	}
	if !r.OK() {
		t.Error("report not OK")
	}
	if left, _ := nsutil.List(nsPrefix); len(left) > 0 {
		t.Errorf("left namespaces %v", left)
	}
}

func TestNotRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		st, _, fix := checkRoot()
		if st != OK || fix != "" {
			t.Errorf("as root: %s %s", st, fix)
		}
		return
	}
	r := Run()
	if r.OK() || r.Results[0].Status != Fail {
		t.Errorf("not root but %+v", r.Results[0])
	}
}
