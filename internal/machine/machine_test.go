package machine

import (
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	m := Read()
	if m.Cores < 1 || m.MemBytes == 0 || m.Kernel == "unknown" || m.CPU == "" {
		t.Errorf("Read() = %+v: cores, memory, kernel and CPU must be known on Linux", m)
	}
	if s := m.String(); !strings.Contains(s, "cores") || !strings.Contains(s, m.Kernel) {
		t.Errorf("String() = %q", s)
	}
}
