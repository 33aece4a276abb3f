package cli

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/hostagent/agent"
	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/control"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
)

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestCommonOptions(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want agent.Options
		err  string
	}{
		{nil, agent.Options{Port: agent.DefaultPort, MTU: agent.DefaultSocketMTU}, ""},
		{[]string{"--port", "4000", "--addr", "10.0.0.2", "--socket-mtu", "9000", "--netns", "ns1"},
			agent.Options{Port: 4000, Addr: netip.MustParseAddr("10.0.0.2"), MTU: 9000, Namespace: "ns1"}, ""},
		{[]string{"--addr", "::1"}, agent.Options{}, `--addr "::1" is not an IPv4 address`},
	} {
		var c common
		cmd := &cobra.Command{Use: "x"}
		c.add(cmd)
		if err := cmd.ParseFlags(tt.args); err != nil {
			t.Fatal(err)
		}
		got, err := c.options()
		if !strings.Contains(errText(err), tt.err) || (tt.err == "") != (err == nil) {
			t.Errorf("%v: err = %v, want %q", tt.args, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); err == nil && diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.args, diff)
		}
	}
}

func TestTransportConfigure(t *testing.T) {
	defaults := func(name string, rtt time.Duration) *scheme.Params {
		p, err := scheme.Defaults(name, params.Env{RTT: rtt})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	psn := defaults("psnpath", 100*time.Microsecond)
	psn.PSNPath.Paths, psn.PSNPath.Beta = 8, 5
	ccDefaults := func(name string, rtt time.Duration) *cc.Params {
		p, err := cc.Defaults(name, params.Env{RTT: rtt})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	swift := ccDefaults("swift", 100*time.Microsecond)
	swift.Swift.AI, swift.Swift.BaseTarget = 2, 300*time.Microsecond
	for _, tt := range []struct {
		args []string
		want *control.Configure
		err  string
	}{
		{nil, &control.Configure{Scheme: "rss+pfld", Params: defaults("rss+pfld", transport.NominalBaseRTT), CC: "none", CCParams: &cc.Params{}, Transport: control.Transport{
			HostParams: transport.HostParams{Window: 256 << 10}, BaseRTTNs: int64(transport.NominalBaseRTT), MTU: 1500}}, ""},
		{[]string{"--scheme", "psnpath", "--param", "k=8", "--param", "psnpath.beta=5", "--base-rtt", "100us", "--pacing", "100Mbit",
			"--window", "1MiB", "--min-rto", "1ms", "--mtu", "9000", "--spin", "50us"},
			&control.Configure{Scheme: "psnpath", Params: psn, CC: "none", CCParams: &cc.Params{}, Transport: control.Transport{
				HostParams: transport.HostParams{Pacing: 100_000_000, Window: 1 << 20, MinRTO: time.Millisecond},
				BaseRTTNs:  int64(100 * time.Microsecond), MTU: 9000, SpinNs: int64(50 * time.Microsecond)}}, ""},
		{[]string{"--rto", "paper", "--max-rtt", "3ms", "--rto-allowance", "2ms"},
			&control.Configure{Scheme: "rss+pfld", Params: defaults("rss+pfld", transport.NominalBaseRTT), CC: "none", CCParams: &cc.Params{}, Transport: control.Transport{
				HostParams: transport.HostParams{Window: 256 << 10, RTO: "paper", RTOAllowance: 2 * time.Millisecond},
				BaseRTTNs:  int64(transport.NominalBaseRTT), MaxRTTNs: int64(3 * time.Millisecond), MTU: 1500}}, ""},
		{[]string{"--rto", "fixed"}, nil, `rto "fixed": want rfc6298 or paper`},
		{[]string{"--scheme", "psnpath", "--cc", "swift", "--param", "k=8", "--param", "ai=2", "--param", "swift.base_target=3rtt", "--param", "psnpath.beta=5", "--base-rtt", "100us"},
			&control.Configure{Scheme: "psnpath", Params: psn, CC: "swift", CCParams: swift, Transport: control.Transport{
				HostParams: transport.HostParams{Window: 256 << 10}, BaseRTTNs: int64(100 * time.Microsecond), MTU: 1500}}, ""},
		{[]string{"--scheme", "psnpath", "--cc", "swift", "--param", "beta=5"}, nil, `--param "beta=5": both psnpath and swift take "beta"; write it as block.beta`},
		{[]string{"--cc", "cubic"}, nil, `--cc: cc: unknown congestion control "cubic"`},
		{[]string{"--cc", "swift", "--param", "swift.g=1"}, nil, `--param "swift.g=1": swift has no parameter "g"`},
		{[]string{"--param", "dctcp.g=0.1"}, nil, `--param "dctcp.g=0.1": none does not take the dctcp block`},
		{[]string{"--param", "=1"}, nil, `--param "=1": want key=value`},
		{[]string{"--scheme", "nope"}, nil, "--scheme: "},
		{[]string{"--pacing", "fast"}, nil, "--pacing: "},
		{[]string{"--window", "-"}, nil, "--window: "},
	} {
		var f transportFlags
		cmd := &cobra.Command{Use: "x"}
		f.add(cmd)
		if err := cmd.ParseFlags(tt.args); err != nil {
			t.Fatal(err)
		}
		got, err := f.configure()
		if !strings.Contains(errText(err), tt.err) || (tt.err == "") != (err == nil) {
			t.Errorf("%v: err = %v, want %q", tt.args, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); err == nil && diff != "" {
			t.Errorf("%v (-want +got):\n%s", tt.args, diff)
		}
	}
}

func TestSendFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want uint64
		err  string
	}{
		{[]string{"--to", "10.0.0.2"}, 1 << 20, ""},
		{[]string{"--to", "10.0.0.2", "--size", "64KiB", "--count", "3"}, 64 << 10, ""},
		{[]string{"--to", "h0"}, 0, `--to "h0" is not an IPv4 address`},
		{[]string{"--to", "10.0.0.2", "--size", "1mb"}, 0, "--size: "},
		{[]string{"--to", "10.0.0.2", "--count", "0"}, 0, "--count must be at least 1"},
	} {
		var f sendFlags
		cmd := &cobra.Command{Use: "x"}
		f.add(cmd)
		if err := cmd.ParseFlags(tt.args); err != nil {
			t.Fatal(err)
		}
		got, err := f.messageSize()
		if !strings.Contains(errText(err), tt.err) || (tt.err == "") != (err == nil) || got != tt.want {
			t.Errorf("%v: %d, %v; want %d, %q", tt.args, got, err, tt.want, tt.err)
		}
	}
}
