package params

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/ftlab/ftlab/internal/yamldoc"
)

type testBlock struct {
	Count  int           `yaml:"count" json:"count" default:"16" min:"1" max:"256" pow2:"true" doc:"a power of two"`
	Every  time.Duration `yaml:"every" json:"every_ns" default:"2rtt" rtt:"ok" min:"1us" doc:"an interval"`
	Off    time.Duration `yaml:"off" json:"off_ns" default:"off" zero:"off" doc:"off or a duration"`
	Frac   float64       `yaml:"frac" json:"frac" default:"5%" gt:"0" lt:"1" doc:"a fraction"`
	Rate   uint64        `yaml:"rate" json:"rate_bps" default:"line" zero:"line" unit:"rate" doc:"a rate"`
	Size   uint64        `yaml:"size" json:"size_bytes" default:"64KiB" unit:"size" min:"1B" doc:"a size"`
	Metric string        `yaml:"metric" json:"metric" default:"mean" enum:"mean,max" doc:"an enum"`
	On     bool          `yaml:"on" json:"on" default:"false" doc:"a switch"`
	Bits   int           `yaml:"bits" json:"bits" default:"512" multiple:"64" doc:"a multiple"`
}

func (b *testBlock) Check() (string, string) {
	if b.Off != 0 && b.Off < b.Every {
		return "off", "off must not be shorter than every"
	}
	return "", ""
}

type testSet struct {
	A *testBlock `json:"a,omitempty" what:"the tests"`
}

var env = Env{RTT: 10 * time.Microsecond}

func TestDefaults(t *testing.T) {
	got := Defaults[testBlock](env)
	want := testBlock{Count: 16, Every: 20 * time.Microsecond, Frac: 0.05, Size: 64 << 10, Metric: "mean", Bits: 512}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	b := BlockOf[testBlock]("a", "the tests")
	if err := b.CheckDefaults(env); err != nil {
		t.Error(err)
	}
}

func decode(t *testing.T, src string) (testBlock, string) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	n := doc.Content[0]
	w := yamldoc.NewWalker(n)
	v := BlockOf[testBlock]("a", "the tests").Decode(n, w, env)
	var pr yamldoc.Problems
	pr.AddAll("a", w.Problems())
	msg := ""
	if err := pr.Result("f.yaml"); err != nil {
		msg = err.Error()
	}
	return *v.Interface().(*testBlock), msg
}

func TestDecode(t *testing.T) {
	got, msg := decode(t, "count: 4\nevery: 1.5rtt\noff: 1ms\nfrac: 0.5\nrate: 10Mbit\nsize: 1KiB\nmetric: max\non: yes\nbits: 128\n")
	want := testBlock{Count: 4, Every: 15 * time.Microsecond, Off: time.Millisecond, Frac: 0.5, Rate: 10_000_000, Size: 1024, Metric: "max", On: true, Bits: 128}
	if msg != "" {
		t.Fatal(msg)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"count: 12\n", `f.yaml:1:8: a.count: 12 is not a power of two; count must be one (1, 2, 4, 8, ...)`},
		{"count: 512\n", `f.yaml:1:8: a.count: 512 is out of range; count must be from 1 to 256`},
		{"count: x\n", `f.yaml:1:8: a.count: expected a whole number, found "x"`},
		{"every: 10\n", `f.yaml:1:8: a.every: "10" has no unit, e.g. 10ms (valid: ns, us, ms, s, m, h); or a multiple of the base RTT such as 2rtt`},
		{"every: -1rtt\n", `f.yaml:1:8: a.every: expected a positive multiple of the base RTT such as 2rtt, found "-1rtt"`},
		{"off: never\n", `f.yaml:1:6: a.off: cannot parse "never": expected a duration such as 10ms or 1.5s (units: ns, us, ms, s, m, h); or "off"`},
		{"frac: 1\n", `f.yaml:1:7: a.frac: 1 is out of range; frac must be between 0 and 1, exclusive`},
		{"metric: avg\n", `f.yaml:1:9: a.metric: unknown metric "avg" (valid: mean, max)`},
		{"bits: 100\n", `f.yaml:1:7: a.bits: 100 is not a multiple of 64; bits must be one`},
		{"on: maybe\n", `f.yaml:1:5: a.on: expected true or false, found "maybe"`},
		{"cuont: 4\n", `f.yaml:1:1: a.cuont: unknown field "cuont"; did you mean "count"? (valid: count, every, off, frac, rate, size, metric, on, bits)`},
		{"off: 5us\n", `f.yaml:1:6: a.off: off must not be shorter than every`},
		{"count:\n", `f.yaml:1:7: a.count: no value; expected a whole number`},
	} {
		_, msg := decode(t, c.src)
		if msg != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.src, msg, c.want)
		}
	}
}

func TestSetAndValidate(t *testing.T) {
	b := BlockOf[testBlock]("a", "the tests")
	v := Defaults[testBlock](env)
	if err := b.Set(&v, "count", "8", env); err != nil || v.Count != 8 {
		t.Errorf("Set count: %v, %d", err, v.Count)
	}
	if err := b.Set(&v, "every", "3rtt", env); err != nil || v.Every != 30*time.Microsecond {
		t.Errorf("Set every: %v, %v", err, v.Every)
	}
	for key, text := range map[string]string{"count": "3", "cuont": "4", "frac": "2"} {
		if err := b.Set(&v, key, text, env); err == nil {
			t.Errorf("Set %s=%s accepted", key, text)
		}
	}
	if err := b.Validate(&v); err != nil {
		t.Errorf("Validate of valid values: %v", err)
	}
	for name, bad := range map[string]func(*testBlock){
		"count":  func(b *testBlock) { b.Count = 3 },
		"metric": func(b *testBlock) { b.Metric = "avg" },
		"every":  func(b *testBlock) { b.Every = -time.Second },
		"check":  func(b *testBlock) { b.Off = time.Microsecond },
	} {
		c := v
		bad(&c)
		if err := b.Validate(&c); err == nil {
			t.Errorf("Validate accepted a bad %s", name)
		}
	}
	if err := b.Validate(v); err == nil {
		t.Error("Validate accepted a struct, not a pointer")
	}
}

func TestSets(t *testing.T) {
	blocks := BlocksOf[testSet]()
	if len(blocks) != 1 || blocks[0].Key != "a" || blocks[0].What != "the tests" {
		t.Fatalf("BlocksOf = %+v", blocks)
	}
	var s testSet
	if Get(&s, "a") != nil || len(Present(&s)) != 0 {
		t.Error("empty set has a block")
	}
	v := Defaults[testBlock](env)
	Put(&s, "a", &v)
	if Get(&s, "a") != &v || !cmp.Equal(Present(&s), []string{"a"}) || s.A != &v {
		t.Error("Put did not store the block")
	}
	Put(&s, "a", nil)
	if s.A != nil {
		t.Error("Put nil did not remove the block")
	}
	if _, ok := Find(blocks, "b"); ok {
		t.Error("Find found a block that is not there")
	}
}

func TestFieldsDocument(t *testing.T) {
	f := BlockOf[testBlock]("a", "").Fields()
	if f[0].Key != "count" || f[0].Default != "16" || f[0].Doc != "a power of two" ||
		!strings.Contains(f[0].Expects, "from 1 to 256") || !strings.Contains(f[0].Expects, "power of two") {
		t.Errorf("count documented as %+v", f[0])
	}
	if !strings.Contains(f[1].Expects, "2rtt") || !strings.Contains(f[2].Expects, `"off"`) {
		t.Errorf("durations documented as %+v, %+v", f[1], f[2])
	}
}

func TestOneOf(t *testing.T) {
	err := OneOf("policy", "ofna", []string{"ecmp", "ofan"})
	if err == nil || err.Error() != `unknown policy "ofna"; did you mean "ofan"? (valid: ecmp, ofan)` {
		t.Errorf("OneOf: %v", err)
	}
	if OneOf("policy", "ofan", []string{"ecmp", "ofan"}) != nil {
		t.Error("OneOf rejected a valid name")
	}
}
