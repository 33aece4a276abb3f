package lab

import (
	"os/exec"
	"testing"
)

// TestOwnerAlive: a process is its PID and start time: this one is alive,
// the same PID with another start time (a reused PID) is not, and neither
// is a process that exited.
func TestOwnerAlive(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	if !self.Alive() {
		t.Errorf("Self() = %+v is not alive", self)
	}
	if (Owner{PID: self.PID, Start: self.Start + 1}).Alive() {
		t.Error("an owner with this PID but another start time counts as alive")
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Skipf("cannot start a child: %v", err)
	}
	start, err := startTime(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	gone := Owner{PID: child.Process.Pid, Start: start}
	if !gone.Alive() {
		t.Errorf("running child %+v is not alive", gone)
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	if gone.Alive() {
		t.Errorf("child %+v counts as alive after it was killed", gone)
	}
}
