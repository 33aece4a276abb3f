package bpf

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Unit tests that need neither root nor a kernel.

func TestConstsMatchC(t *testing.T) {
	src, err := os.ReadFile("c/consts.h")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, m := range regexp.MustCompile(`(?m)^\s*([A-Z_0-9]+)\s*=\s*(0x[0-9a-fA-F]+|\d+)\s*,`).FindAllStringSubmatch(string(src), -1) {
		v, err := strconv.ParseInt(m[2], 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		got[m[1]] = v
	}
	want := map[string]int64{
		"MAX_PORTS": MaxPorts, "MAX_UPLINKS": MaxUplinks, "MAX_GROUPS": MaxGroups,
		"MAX_ROUTES": MaxRoutes, "MAX_POINTERS": MaxPointers, "N_CLASSES": NumClasses,
		"HIST_BUCKETS": HistBuckets, "TRIM_KEEP": TrimKeep, "TRIM_PRIORITY": TrimPriority,
		"CLASS_DATA": int64(ClassData), "CLASS_ACK": int64(ClassAck),
		"MODE_LINE_RATE": int64(ModeLineRate), "MODE_SHAPED": int64(ModeShaped),
		"POLICY_ECMP": int64(PolicyECMP), "POLICY_OFAN": int64(PolicyOfan), "POLICY_POFAN": int64(PolicyPofan),
		"POLICY_RR": int64(PolicyRR), "POLICY_RANDOM": int64(PolicyRandom), "POLICY_AR": int64(PolicyAR),
		"ROUTE_DOWN": int64(RouteDown), "ROUTE_UP": int64(RouteUp), "ROUTE_LOCAL": int64(RouteLocal),
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s: C has %d (found %v), Go has %d", name, g, ok, w)
		}
	}
}

func TestParseNames(t *testing.T) {
	for _, p := range []Policy{PolicyECMP, PolicyOfan, PolicyPofan, PolicyRR, PolicyRandom, PolicyAR} {
		if q, err := ParsePolicy(p.String()); err != nil || q != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", p.String(), q, err)
		}
	}
	if _, err := ParsePolicy("spray"); err == nil {
		t.Error("ParsePolicy accepted an unknown name")
	}
	for _, m := range []Mode{ModeLineRate, ModeShaped} {
		if n, err := ParseMode(m.String()); err != nil || n != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), n, err)
		}
	}
}

func TestCorruptThreshold(t *testing.T) {
	type res struct {
		Thr uint32
		All uint8
		Err bool
	}
	for _, c := range []struct {
		p    float64
		want res
	}{
		{0, res{0, 0, false}},
		{0.5, res{1 << 31, 0, false}},
		{0.01, res{42949672, 0, false}},
		{1, res{math.MaxUint32, 1, false}},
		{-0.1, res{Err: true}},
		{1.5, res{Err: true}},
		{math.NaN(), res{Err: true}},
	} {
		thr, all, err := corruptThreshold(c.p)
		if d := cmp.Diff(c.want, res{thr, all, err != nil}); d != "" {
			t.Errorf("p=%v (-want +got):\n%s", c.p, d)
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	o, err := Options{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := Options{MaxPorts: MaxPorts, MaxRoutes: MaxRoutes, MaxGroups: MaxGroups, MaxPointers: MaxPointers,
		Programs: ProgramsShaped}
	if d := cmp.Diff(want, o); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if _, err := (Options{MaxPorts: MaxPorts + 1}).withDefaults(); err == nil {
		t.Error("MaxPorts above the C bound accepted")
	}
	for _, p := range []Programs{ProgTCShaped, ProgXDPPass | ProgTCShaped, ProgramsAll | 1<<6} {
		if _, err := (Options{Programs: p}).withDefaults(); err == nil {
			t.Errorf("Programs %s accepted", p)
		}
	}
	for _, p := range []Programs{ProgramsLineRate, ProgramsShaped, ProgramsAll, ProgXDPIngress | ProgXDPPass} {
		if o, err := (Options{Programs: p}).withDefaults(); err != nil || o.Programs != p {
			t.Errorf("Programs %s: got %s, %v", p, o.Programs, err)
		}
	}
}

func TestFlowHashSpreads(t *testing.T) {
	// The mirror of the BPF hash: flows differing in one port bit spread
	// evenly over 4 buckets, and the seed changes the mapping.
	var buckets [4]int
	for sport := range uint16(4000) {
		b := frame{sport: sport + 1}.bytes()
		buckets[flowHashOf(b, 1)%4]++
	}
	for i, n := range buckets {
		if n < 850 || n > 1150 {
			t.Errorf("bucket %d has %d of 4000 flows", i, n)
		}
	}
}
