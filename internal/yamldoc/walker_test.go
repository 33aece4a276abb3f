package yamldoc

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

func TestWalker(t *testing.T) {
	root, err := ParseDocument("x.yaml", []byte("alpha: 1\nbeta: [a, b]\nalpah: 2\nalpha: 3\n"), "empty")
	if err != nil {
		t.Fatal(err)
	}
	w := NewWalker(root)
	got := map[string]string{}
	w.Fields(root, "a mapping", []string{"alpha", "beta"}, nil, func(key string, v *yaml.Node) {
		if key == "alpha" {
			n, _ := w.Integer(v, key, "a number")
			got[key] = strings.Repeat("*", n)
			return
		}
		w.Sequence(v, key, "a list", func(i int, item *yaml.Node) {
			s, _ := w.Scalar(item, key, "text")
			got[key] += s
		})
	})
	if diff := cmp.Diff(map[string]string{"alpha": "*", "beta": "ab"}, got); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if !w.Has("beta") || w.Has("gamma") || w.Val("beta") != (Pos{2, 7}) || w.Key("gamma") != (Pos{1, 1}) {
		t.Errorf("positions: has beta %v, beta at %v, gamma at %v", w.Has("beta"), w.Val("beta"), w.Key("gamma"))
	}
	var pr Problems
	pr.AddAll("top", w.Problems())
	pr.Add(Pos{1, 1}, "alpha", "again")
	pr.Add(Pos{1, 1}, "alpha", "again") // reported once
	pr.AddError(Pos{}, "", Errors{{File: "other.yaml", Line: 1, Msg: "elsewhere"}})
	want := strings.Join([]string{
		"x.yaml:1:1: alpha: again",
		`x.yaml:3:1: top.alpah: unknown field "alpah"; did you mean "alpha"? (valid: alpha, beta)`,
		"x.yaml:4:1: top.alpha: given twice; the first is at line 1",
		"other.yaml:1: elsewhere",
	}, "\n")
	err = pr.Result("x.yaml")
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("Result returned %T", err)
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestParseDocument(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"", "x.yaml: nothing here"},
		{"# only a comment\n", "x.yaml: nothing here"},
		{"a: 1\n---\nb: 2\n", "x.yaml:2:1: a file holds one YAML document; remove this second one (after ---)"},
		{"a: [1, 2\nb: 3\n", "x.yaml:1: invalid YAML: did not find expected ',' or ']'"},
	} {
		_, err := ParseDocument("x.yaml", []byte(tc.src), "nothing here")
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseDocument(%q) = %v, want %s", tc.src, err, tc.want)
		}
	}
}
