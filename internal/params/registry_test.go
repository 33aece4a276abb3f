package params

import (
	"strings"
	"testing"
)

// otherBlock is a second block of regSet, with a key testBlock shares.
type otherBlock struct {
	Count int `yaml:"count" json:"count" default:"3" min:"1" max:"9" doc:"a count"`
	Solo  int `yaml:"solo" json:"solo" default:"1" min:"0" max:"9" doc:"only here"`
}

type regSet struct {
	A *testBlock  `json:"a,omitempty" what:"the a entries"`
	B *otherBlock `json:"b,omitempty" what:"the b entries"`
}

type entry struct {
	name string
	take []string
}

var testRegistry = Registry[entry, regSet]{
	Kind: "widget", Prefix: "widgets",
	Entries: []entry{{"plain", nil}, {"alpha", []string{"a"}}, {"both", []string{"a", "b"}}},
	Name:    func(e entry) string { return e.name },
	Take:    func(e entry) []string { return e.take },
}

func TestRegistry(t *testing.T) {
	r := &testRegistry
	if got := strings.Join(r.Names(), ","); got != "plain,alpha,both" {
		t.Errorf("Names = %s", got)
	}
	if _, err := r.Lookup("alpah"); err == nil || err.Error() != `widgets: unknown widget "alpah"; did you mean "alpha"? (valid: plain, alpha, both)` {
		t.Errorf("Lookup: %v", err)
	}
	p, err := r.Defaults("both", env)
	if err != nil || p.A == nil || p.A.Count != 16 || p.B == nil || p.B.Count != 3 {
		t.Fatalf("Defaults = %+v, %v", p, err)
	}
	if _, err := r.Check("both", p); err != nil {
		t.Errorf("Check of the defaults: %v", err)
	}
	for _, c := range []struct {
		name string
		p    *regSet
		want string
	}{
		{"plain", nil, ""},
		{"plain", &regSet{B: p.B}, "widgets plain: the b block is not one of plain's (it takes none)"},
		{"alpha", &regSet{}, "widgets alpha: the a block is missing"},
		{"alpha", &regSet{A: &testBlock{Count: 3}}, "widgets alpha: a.count: 3 is not a power of two"},
	} {
		_, err := r.Check(c.name, c.p)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Check(%s, %+v) = %v, want %q", c.name, c.p, err, c.want)
		}
	}
	for _, c := range []struct {
		entry, key, value, want string
	}{
		{"both", "solo", "4", ""},
		{"both", "b.count", "5", ""},
		{"both", "count", "4", `"count" is a parameter of several blocks of both; write one of a, b.count`},
		{"alpha", "solo", "4", `alpha takes no parameter "solo" (blocks: a)`},
		{"alpha", "b.solo", "4", "alpha does not take the b block (blocks: a)"},
		{"both", "b.solo", "10", "b.solo: 10 is out of range"},
	} {
		q := &regSet{}
		err := r.SetParam(q, c.entry, c.key, c.value, env)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("SetParam(%s, %s=%s) = %v, want %q", c.entry, c.key, c.value, err, c.want)
		}
	}
	q := &regSet{}
	if err := r.SetParam(q, "both", "solo", "4", env); err != nil || q.B == nil || q.B.Solo != 4 || q.B.Count != 3 || q.A != nil {
		t.Errorf("SetParam starts the block from its defaults: %+v, %v", q.B, err)
	}
}
