package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ftlab/ftlab/internal/units"
	"github.com/ftlab/ftlab/orchestrator/lab"
	"github.com/ftlab/ftlab/orchestrator/runner"
)

func TestLinkSetFlags(t *testing.T) {
	drop, half := 0.05, lab.RateChange{Fraction: 0.5}
	rate := lab.RateChange{Bps: 25 * units.Mbit}
	for _, tt := range []struct {
		name string
		args []string
		want lab.LinkChange
		err  string
	}{
		{"drop", []string{"--drop", "5%"}, lab.LinkChange{Direction: "both", Drop: &drop}, ""},
		{"rate share up", []string{"--rate", "50%", "--direction", "up"}, lab.LinkChange{Direction: "up", Rate: &half}, ""},
		{"rate and clear", []string{"--rate", "25Mbit", "--clear"}, lab.LinkChange{Direction: "both", Rate: &rate, Clear: true}, ""},
		{"bad drop", []string{"--drop", "often"}, lab.LinkChange{}, "--drop: "},
		{"bad rate", []string{"--rate", "0bit"}, lab.LinkChange{}, "--rate: "},
		{"bad direction", []string{"--direction", "in"}, lab.LinkChange{}, "--direction: "},
		{"delay", []string{"--delay", "2ms"}, lab.LinkChange{}, "--delay: a link delay needs the data plane's delay support"},
		{"negative delay", []string{"--delay", "-2ms"}, lab.LinkChange{}, "--delay: -2ms is negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f linkSetFlags
			cmd := parse(t, f.add, tt.args...)
			got, err := f.change(cmd.Flags().Changed)
			if !strings.Contains(errText(err), tt.err) || (tt.err == "") != (err == nil) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSendFlagsOptions(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want runner.SendOptions
		err  string
	}{
		{"defaults", nil, runner.SendOptions{Lab: "default", Src: "h0-0-0", Dst: "h1-0-0", Bytes: units.MiB, Count: 1, Transport: "ecmp", CC: "none", Timeout: time.Minute, Seed: 1}, ""},
		{"everything", []string{"-n", "k4", "--size", "64KiB", "--count", "3", "--parallel", "--transport", "rss+pfld", "--cc", "swift", "--param", "sigma=8", "--param", "host.window=64KiB", "--timeout", "5s", "--seed", "9"},
			runner.SendOptions{Lab: "k4", Src: "h0-0-0", Dst: "h1-0-0", Bytes: 64 * units.KiB, Count: 3, Parallel: true, Transport: "rss+pfld", CC: "swift",
				Params: []string{"sigma=8", "host.window=64KiB"}, Timeout: 5 * time.Second, Seed: 9}, ""},
		{"size", []string{"--size", "lots"}, runner.SendOptions{}, "--size: "},
		{"count", []string{"--count", "0"}, runner.SendOptions{}, "--count: 0"},
		{"timeout", []string{"--timeout", "0s"}, runner.SendOptions{}, "--timeout: "},
		{"transport", []string{"--transport", "tcp"}, runner.SendOptions{}, "--transport: "},
		{"cc", []string{"--cc", "cubic"}, runner.SendOptions{}, "--cc: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var f sendFlags
			parse(t, f.add, tt.args...)
			got, err := f.options([]string{"h0-0-0", "h1-0-0"})
			if !strings.Contains(errText(err), tt.err) || (tt.err == "") != (err == nil) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
