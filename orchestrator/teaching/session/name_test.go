package session_test

import (
	"testing"

	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/teaching/session"
)

// TestLabName: a student's lab name is a valid lab name made of the lab
// id and the student, shortened with a hash of the name when it does not
// fit, so two long names with the same beginning get two labs.
func TestLabName(t *testing.T) {
	for _, c := range []struct{ id, student, want string }{
		{"fattree", "alice", "fattree_alice"},
		{"fattree", "Alice ", "fattree_alice"},
		{"ecmp", "jo-ann o.neil", "ecmp_jo_ann_o_ne"},
	} {
		got := session.LabName(c.id, c.student)
		if err := lab.ValidateName(got); err != nil {
			t.Errorf("LabName(%q, %q) = %q: %v", c.id, c.student, got, err)
		}
		if c.want != "" && got != c.want && len(c.id+"_"+c.student) <= lab.MaxNameLen {
			t.Errorf("LabName(%q, %q) = %q, want %q", c.id, c.student, got, c.want)
		}
	}
	a, b := session.LabName("corruption", "maximilian mustermann"), session.LabName("corruption", "maximilian musterfrau")
	if a == b || lab.ValidateName(a) != nil || lab.ValidateName(b) != nil {
		t.Errorf("two long names: %q and %q", a, b)
	}
	u, o := session.LabName("fattree", "Ünal"), session.LabName("fattree", "Ønal")
	if u == o || lab.ValidateName(u) != nil || lab.ValidateName(o) != nil {
		t.Errorf("non-ASCII names: %q and %q", u, o)
	}
}
