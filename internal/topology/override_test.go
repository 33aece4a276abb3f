package topology

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ftlab/ftlab/internal/yamldoc"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gopkg.in/yaml.v3"
)

// scenario is what a scenario file embedding a topology could look like.
type scenario struct {
	Topology Spec       `yaml:"topology"`
	Links    []Override `yaml:"links"`
	Duration string     `yaml:"duration"`
}

func decodeScenario(t *testing.T, src string) scenario {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(src))
	dec.KnownFields(true)
	var s scenario
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("decoding scenario: %v", err)
	}
	return s
}

func TestScenarioEmbedsSpec(t *testing.T) {
	s := decodeScenario(t, `duration: 10s
topology:
  kind: fattree
  k: 4
  switches:
    a0-1: {rate: 25Mbit}
links:
  - from: a0-0
    to: c0-0
    rate: 1Mbit
`)
	top, err := s.Topology.Resolve("scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if top.Name != "scenario" {
		t.Errorf("name is %q, want the file's base name", top.Name)
	}
	if err := top.ApplyOverrides("scenario.yaml", "links", s.Links); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(linkView{Up: dir{"1Mbit", "64KiB", "16KiB"}, Down: dir{"100Mbit", "64KiB", "16KiB"}, MTU: 1500}, view(t, top, "a0-0", "c0-0")); diff != "" {
		t.Errorf("a0-0~c0-0 mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(linkView{Up: dir{"25Mbit", "64KiB", "16KiB"}, Down: dir{"25Mbit", "64KiB", "16KiB"}, MTU: 1500}, view(t, top, "a0-1", "c1-0")); diff != "" {
		t.Errorf("a0-1~c1-0 mismatch (-want +got):\n%s", diff)
	}
}

func TestScenarioSpecErrorsKeepPositions(t *testing.T) {
	s := decodeScenario(t, `duration: 10s
topology:
  kind: fattree
  k: 5
  links: {rtae: 1Mbit}
`)
	_, err := s.Topology.Resolve("scenario.yaml")
	var errs yamldoc.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Resolve returned %v, want yamldoc.Errors", err)
	}
	want := strings.Join([]string{
		"scenario.yaml:4:6: topology.k: 5 is odd; k must be an even number from 4 to 16",
		`scenario.yaml:5:11: topology.links.rtae: unknown field "rtae"; did you mean "rate"? (valid: rate, buffer, ecn, mtu, delay, jitter)`,
	}, "\n")
	if diff := cmp.Diff(want, errs.Prefix("topology").Error()); diff != "" {
		t.Errorf("error mismatch (-want +got):\n%s", diff)
	}
}

func TestApplyOverridesErrors(t *testing.T) {
	top, err := NewFatTree(4)
	if err != nil {
		t.Fatal(err)
	}
	before, _, _ := top.LinkBetween("e0-0", "a0-0")
	saved := *before
	s := decodeScenario(t, `links:
  - between: [e0-0, a0-0]
    rate: 5Mbit
  - between: [e0-0, a1-0]
    rate: 5Mbit
  - from: e0-0
    to: a0-0
    buffer: 4KiB
  - between: [e0-0, a0-0]
    mtu: 9000
    bogus: 1
`)
	err = top.ApplyOverrides("scenario.yaml", "links", s.Links)
	want := strings.Join([]string{
		"scenario.yaml:4:14: links[1].between: e0-0 and a1-0 are not linked; e0-0 links only to h0-0-0, h0-0-1, a0-0, a0-1",
		"scenario.yaml:8:13: links[2].buffer: buffer 4KiB is below the ecn threshold 16KiB (the topology's current value) on e0-0 -> a0-0; the queue could never reach the marking threshold",
		"scenario.yaml:10:10: links[3].mtu: mtu 9000 does not fit in the buffer 4KiB (set by links[2].buffer at line 8) on e0-0 -> a0-0, so full-size packets would always be dropped",
		`scenario.yaml:11:5: links[3].bogus: unknown field "bogus" (valid: between, from, to, rate, buffer, ecn, mtu, delay, jitter)`,
	}, "\n")
	if err == nil {
		t.Fatalf("ApplyOverrides succeeded, want:\n%s", want)
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error mismatch (-want +got):\n%s", diff)
	}
	after, _, _ := top.LinkBetween("e0-0", "a0-0")
	if diff := cmp.Diff(saved, *after); diff != "" {
		t.Errorf("a failed ApplyOverrides changed the topology (-before +after):\n%s", diff)
	}
}

// TestSpecRoundTrip: a decoded Spec marshals back to YAML that resolves
// to the same topology, so tools can print or rewrite specs.
func TestSpecRoundTrip(t *testing.T) {
	src := `kind: fattree
k: 4
links: {rate: 50Mbit, ecn: off}
stages:
  agg-core: {buffer: 128KiB, mtu: 9000}
switches:
  a0-1: {rate: 25Mbit}
overrides:
  - between: [e0-0, a0-1]
    rate: 10Mbit
  - from: a0-1
    to: c1-0
    buffer: 32KiB
`
	first, err := Parse("rt.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var spec Spec
	if err := yaml.Unmarshal([]byte(src), &spec); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	if err := enc.Encode(&spec); err != nil {
		t.Fatal(err)
	}
	second, err := Parse("rt.yaml", out.Bytes())
	if err != nil {
		t.Fatalf("re-parsing marshaled spec:\n%s\n%v", out.String(), err)
	}
	opts := []cmp.Option{
		cmpopts.IgnoreUnexported(Topology{}),
		cmp.Comparer(func(a, b netip.Addr) bool { return a == b }),
	}
	if diff := cmp.Diff(first, second, opts...); diff != "" {
		t.Errorf("round trip changed the topology (-first +second):\n%s\nmarshaled:\n%s", diff, out.String())
	}
}

func TestLinkParamsString(t *testing.T) {
	got := []string{
		LinkParams{RateBps: 100_000_000, BufferBytes: 65536, ECNBytes: 16384}.String(),
		LinkParams{RateBps: 2_500_000_000, BufferBytes: 1500, ECNBytes: 0}.String(),
		LinkParams{RateBps: 40_000_000, BufferBytes: 65536, Delay: 1500, Jitter: 2 * time.Microsecond}.String(),
	}
	want := []string{"rate 100Mbit, buffer 64KiB, ecn 16KiB", "rate 2.5Gbit, buffer 1500B, ecn off",
		"rate 40Mbit, buffer 64KiB, ecn off, delay 1.5µs, jitter 2µs"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("String mismatch (-want +got):\n%s", diff)
	}
}
