package topology

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ftlab/ftlab/internal/yamldoc"
	"github.com/google/go-cmp/cmp"
)

const (
	rateUnits = "(valid: bit, Kbit, Mbit, Gbit, Tbit, bps, Kbps, Mbps, Gbps)"
	sizeUnits = "(valid: B, KB, MB, GB, KiB, MiB, GiB)"
	k4Names   = "this fattree k=4 has hosts h0-0-0..h3-1-1, edge switches e0-0..e3-1, aggregation switches a0-0..a3-1, core switches c0-0..c1-1"
)

// lines joins expected error lines; each case lists every line of the
// error, in order, so a missing or extra problem fails the test.
func lines(l ...string) string { return strings.Join(l, "\n") }

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{
			name: "odd k",
			yaml: "kind: fattree\nk: 5\n",
			want: "bad.yaml:2:4: k: 5 is odd; k must be an even number from 4 to 16",
		},
		{
			name: "k too small",
			yaml: "kind: fattree\nk: 2\n",
			want: "bad.yaml:2:4: k: 2 is out of range; k must be an even number from 4 to 16",
		},
		{
			name: "k too large",
			yaml: "kind: fattree\nk: 18\n",
			want: "bad.yaml:2:4: k: 18 is out of range; k must be an even number from 4 to 16",
		},
		{
			name: "k missing",
			yaml: "kind: fattree\n",
			want: "bad.yaml:1:1: k: missing; a fattree needs k, an even number from 4 to 16",
		},
		{
			name: "k not a number",
			yaml: "kind: fattree\nk: four\n",
			want: `bad.yaml:2:4: k: expected an even number from 4 to 16, found "four"`,
		},
		{
			name: "unknown kind",
			yaml: "kind: fatree\nk: 4\n",
			want: `bad.yaml:1:7: kind: unknown kind "fatree" (valid: fattree, leafspine)`,
		},
		{
			name: "kind missing",
			yaml: "k: 4\n",
			want: "bad.yaml:1:1: kind: missing (valid: fattree, leafspine)",
		},
		{
			name: "unknown field with typo",
			yaml: "kind: fattree\nk: 4\nlinks:\n  rte: 10Mbit\n",
			want: `bad.yaml:4:3: links.rte: unknown field "rte"; did you mean "rate"? (valid: rate, buffer, ecn, mtu, delay, jitter)`,
		},
		{
			name: "unknown top-level field",
			yaml: "kind: fattree\nk: 4\nhosts: 16\n",
			want: `bad.yaml:3:1: hosts: unknown field "hosts" (valid: name, kind, k, leaves, spines, hosts_per_leaf, links, stages, switches, overrides)`,
		},
		{
			name: "link parameter at top level",
			yaml: "kind: fattree\nk: 4\nrate: 10Mbit\n",
			want: `bad.yaml:3:1: rate: unknown field "rate"; link parameters go under links:, stages:, switches: or overrides: (valid: name, kind, k, leaves, spines, hosts_per_leaf, links, stages, switches, overrides)`,
		},
		{
			name: "negative rate",
			yaml: "kind: fattree\nk: 4\nlinks:\n  rate: -10Mbit\n",
			want: `bad.yaml:4:9: links.rate: cannot parse "-10Mbit": rates cannot be negative`,
		},
		{
			name: "zero rate",
			yaml: "kind: fattree\nk: 4\nlinks:\n  rate: 0Mbit\n",
			want: `bad.yaml:4:9: links.rate: must be greater than 0`,
		},
		{
			name: "rate without unit",
			yaml: "kind: fattree\nk: 4\nlinks:\n  rate: 100\n",
			want: `bad.yaml:4:9: links.rate: cannot parse "100": missing unit, e.g. 100Mbit ` + rateUnits,
		},
		{
			name: "unparseable rate",
			yaml: lines(
				"# A fat tree whose core links",
				"# are meant to be fast.",
				"kind: fattree",
				"k: 4",
				"stages:",
				"  agg-core:",
				"    rate: 10Gbt",
				""),
			want: `bad.yaml:7:11: stages.agg-core.rate: cannot parse "10Gbt": unknown unit "Gbt" ` + rateUnits,
		},
		{
			name: "rate with no value",
			yaml: "kind: fattree\nk: 4\nlinks:\n  rate:\n",
			want: `bad.yaml:4:8: links.rate: no value; expected a rate such as 100Mbit`,
		},
		{
			name: "rate given a list",
			yaml: "kind: fattree\nk: 4\nlinks:\n  rate: [10Mbit]\n",
			want: `bad.yaml:4:9: links.rate: expected a rate such as 100Mbit, found a list`,
		},
		{
			name: "unparseable buffer",
			yaml: "kind: fattree\nk: 4\nlinks:\n  buffer: lots\n",
			want: `bad.yaml:4:11: links.buffer: cannot parse "lots": expected a number of bytes with an optional unit, e.g. 64KiB or 1500`,
		},
		{
			name: "ambiguous buffer unit",
			yaml: "kind: fattree\nk: 4\nswitches:\n  a0-1: {buffer: 64K}\n",
			want: `bad.yaml:4:18: switches.a0-1.buffer: cannot parse "64K": ambiguous unit "K": write KiB (1024 bytes) or KB (1000 bytes)`,
		},
		{
			name: "unparseable ecn",
			yaml: "kind: fattree\nk: 4\nlinks:\n  ecn: of\n",
			want: `bad.yaml:4:8: links.ecn: cannot parse "of": expected a number of bytes with an optional unit, e.g. 64KiB or 1500; or write "off" to disable marking`,
		},
		{
			name: "mtu too small",
			yaml: "kind: fattree\nk: 4\nlinks:\n  mtu: 500\n",
			want: "bad.yaml:4:8: links.mtu: 500 is out of range; mtu must be from 576 to 9216 bytes",
		},
		{
			name: "mtu too large",
			yaml: "kind: fattree\nk: 4\nlinks:\n  mtu: 9217\n",
			want: "bad.yaml:4:8: links.mtu: 9217 is out of range; mtu must be from 576 to 9216 bytes",
		},
		{
			name: "mtu with a unit",
			yaml: "kind: fattree\nk: 4\nlinks:\n  mtu: 1500B\n",
			want: `bad.yaml:4:8: links.mtu: expected a whole number of bytes such as 1500, found "1500B"`,
		},
		{
			name: "ecn above buffer in one block",
			yaml: "kind: fattree\nk: 4\nlinks:\n  buffer: 16KiB\n  ecn: 32KiB\n",
			want: "bad.yaml:5:8: links.ecn: ecn 32KiB exceeds the buffer 16KiB (set by links.buffer at line 4) on 96 link directions, e.g. h0-0-0 -> e0-0; the queue could never reach the marking threshold",
		},
		{
			name: "buffer lowered below the default ecn",
			yaml: "kind: fattree\nk: 4\nstages:\n  agg-core: {buffer: 8KiB}\n",
			want: "bad.yaml:4:22: stages.agg-core.buffer: buffer 8KiB is below the ecn threshold 16KiB (the default) on 32 link directions, e.g. a0-0 -> c0-0; the queue could never reach the marking threshold",
		},
		{
			name: "ecn above buffer on one direction",
			yaml: lines(
				"kind: fattree",
				"k: 4",
				"overrides:",
				"  - from: a0-1",
				"    to: c1-0",
				"    ecn: 128KiB",
				""),
			want: "bad.yaml:6:10: overrides[0].ecn: ecn 128KiB exceeds the buffer 64KiB (the default) on a0-1 -> c1-0; the queue could never reach the marking threshold",
		},
		{
			name: "buffer smaller than a packet",
			yaml: "kind: fattree\nk: 4\nlinks:\n  buffer: 1KiB\n  ecn: off\n",
			want: "bad.yaml:4:11: links.buffer: buffer 1KiB cannot hold one full-size packet: the mtu is 1500 (the default) on 96 link directions, e.g. h0-0-0 -> e0-0",
		},
		{
			name: "mtu raised above the buffer",
			yaml: "kind: fattree\nk: 4\nlinks:\n  buffer: 4KiB\n  ecn: 2KiB\nstages:\n  host-edge: {mtu: 9000}\n",
			want: "bad.yaml:7:20: stages.host-edge.mtu: mtu 9000 does not fit in the buffer 4KiB (set by links.buffer at line 4) on 32 link directions, e.g. h0-0-0 -> e0-0, so full-size packets would always be dropped",
		},
		{
			name: "stage of the other kind",
			yaml: "kind: fattree\nk: 4\nstages:\n  leaf-spine: {rate: 10Mbit}\n",
			want: `bad.yaml:4:3: stages.leaf-spine: "leaf-spine" is not a stage of a fattree (valid: host-edge, edge-agg, agg-core)`,
		},
		{
			name: "unknown stage in a leafspine",
			yaml: "kind: leafspine\nleaves: 2\nspines: 2\nhosts_per_leaf: 2\nstages:\n  aggcore: {rate: 10Mbit}\n",
			want: `bad.yaml:6:3: stages.aggcore: "aggcore" is not a stage of a leafspine (valid: host-leaf, leaf-spine)`,
		},
		{
			name: "stage that sets nothing",
			yaml: "kind: fattree\nk: 4\nstages:\n  agg-core:\n",
			want: "bad.yaml:4:3: stages.agg-core: sets nothing; give at least one of rate, buffer, ecn, mtu, delay, jitter",
		},
		{
			name: "switch that does not exist",
			yaml: "kind: fattree\nk: 4\nswitches:\n  a4-0: {rate: 25Mbit}\n",
			want: `bad.yaml:4:3: switches.a4-0: no switch named "a4-0"; this fattree k=4 has edge switches e0-0..e3-1, aggregation switches a0-0..a3-1, core switches c0-0..c1-1`,
		},
		{
			name: "switch override naming a host",
			yaml: "kind: fattree\nk: 4\nswitches:\n  h1-0-1: {rate: 25Mbit}\n",
			want: "bad.yaml:4:3: switches.h1-0-1: h1-0-1 is a host, and switches: applies to switches only; to change its link write an override: - between: [h1-0-1, e1-0]",
		},
		{
			name: "switch given twice",
			yaml: "kind: fattree\nk: 4\nswitches:\n  a0-1: {rate: 25Mbit}\n  a0-1: {rate: 50Mbit}\n",
			want: "bad.yaml:5:3: switches.a0-1: given twice; the first is at line 4",
		},
		{
			name: "link override naming a missing node",
			yaml: "kind: fattree\nk: 4\noverrides:\n  - between: [e0-0, a0-2]\n    rate: 10Mbit\n",
			want: `bad.yaml:4:21: overrides[0].between[1]: no node named "a0-2"; ` + k4Names,
		},
		{
			name: "both ends of a link override missing",
			yaml: "kind: fattree\nk: 4\noverrides:\n  - between: [e9-0, a9-0]\n    rate: 10Mbit\n",
			want: lines(
				`bad.yaml:4:15: overrides[0].between[0]: no node named "e9-0"; `+k4Names,
				`bad.yaml:4:21: overrides[0].between[1]: no node named "a9-0"; `+k4Names,
			),
		},
		{
			name: "from naming a missing node",
			yaml: "kind: fattree\nk: 4\noverrides:\n  - from: core1\n    to: a0-1\n    rate: 10Mbit\n",
			want: `bad.yaml:4:11: overrides[0].from: no node named "core1"; ` + k4Names,
		},
		{
			name: "link override between nodes that are not linked",
			yaml: "kind: fattree\nk: 4\noverrides:\n  - between: [e0-0, a1-0]\n    rate: 10Mbit\n",
			want: "bad.yaml:4:14: overrides[0].between: e0-0 and a1-0 are not linked; e0-0 links only to h0-0-0, h0-0-1, a0-0, a0-1",
		},
		{
			name: "one-direction override between nodes that are not linked",
			yaml: "kind: fattree\nk: 4\noverrides:\n  - from: c0-0\n    to: a0-1\n    rate: 10Mbit\n",
			want: "bad.yaml:5:9: overrides[0].to: c0-0 and a0-1 are not linked; c0-0 links only to a0-0, a1-0, a2-0, a3-0",
		},
		{
			name: "from/to with mtu",
			yaml: "kind: fattree\nk: 4\noverrides:\n  - from: a0-1\n    to: c1-0\n    mtu: 9000\n",
			want: "bad.yaml:6:10: overrides[0].mtu: mtu is per link and cannot be set for one direction (from/to); set it with between: [a0-1, c1-0]",
		},
		{
			name: "from without to",
			yaml: "kind: fattree\nk: 4\noverrides:\n  - from: a0-1\n    rate: 10Mbit\n",
			want: "bad.yaml:4:5: overrides[0].to: missing; from: a0-1 needs to: naming the receiving end of the link",
		},
		{
			name: "between and from together",
			yaml: "kind: fattree\nk: 4\noverrides:\n  - between: [e0-0, a0-1]\n    from: e0-0\n    to: a0-1\n    rate: 10Mbit\n",
			want: "bad.yaml:4:5: overrides[0]: give either between: (both directions) or from: and to: (one direction), not both",
		},
		{
			name: "override naming no link",
			yaml: "kind: fattree\nk: 4\noverrides:\n  - rate: 10Mbit\n",
			want: "bad.yaml:4:5: overrides[0]: names no link; give between: [X, Y] for both directions or from: X and to: Y for one direction",
		},
		{
			name: "between with three nodes",
			yaml: "kind: fattree\nk: 4\noverrides:\n  - between: [h0-0-0, e0-0, a0-0]\n    rate: 10Mbit\n",
			want: "bad.yaml:4:14: overrides[0].between: expected two node names, e.g. [e0-0, a0-1], found 3",
		},
		{
			name: "override that sets nothing",
			yaml: "kind: fattree\nk: 4\noverrides:\n  - between: [e0-0, a0-1]\n",
			want: "bad.yaml:4:5: overrides[0]: sets nothing; give at least one of rate, buffer, ecn, mtu, delay, jitter",
		},
		{
			name: "override that is not a mapping",
			yaml: "kind: fattree\nk: 4\noverrides:\n  - e0-0\n",
			want: `bad.yaml:4:5: overrides[0]: expected an override: a mapping with between: [X, Y] or from: X and to: Y, and the parameters to set, found "e0-0"`,
		},
		{
			name: "leafspine fields in a fattree",
			yaml: "kind: fattree\nk: 4\nleaves: 4\nhosts_per_leaf: 2\n",
			want: lines(
				"bad.yaml:3:1: leaves: only for kind leafspine; a fattree is sized by k alone",
				"bad.yaml:4:1: hosts_per_leaf: only for kind leafspine; a fattree is sized by k alone",
			),
		},
		{
			name: "k in a leafspine",
			yaml: "kind: leafspine\nk: 4\nleaves: 4\nspines: 2\nhosts_per_leaf: 4\n",
			want: "bad.yaml:2:1: k: only for kind fattree; a leafspine is sized by leaves, spines and hosts_per_leaf",
		},
		{
			name: "leafspine sizes missing and out of range",
			yaml: "kind: leafspine\nleaves: 1\nhosts_per_leaf: 65\n",
			want: lines(
				"bad.yaml:1:1: spines: missing; a leafspine needs spines, a number from 1 to 64",
				"bad.yaml:2:9: leaves: 1 is out of range; leaves must be a number from 2 to 64",
				"bad.yaml:3:17: hosts_per_leaf: 65 is out of range; hosts_per_leaf must be a number from 1 to 64",
			),
		},
		{
			name: "invalid name",
			yaml: "name: my lab\nkind: fattree\nk: 4\n",
			want: `bad.yaml:1:7: name: "my lab" may only contain letters, digits, '.', '_' and '-', and must start with a letter or digit`,
		},
		{
			name: "duplicate field",
			yaml: "kind: fattree\nk: 4\nk: 6\n",
			want: "bad.yaml:3:1: k: given twice; the first is at line 2",
		},
		{
			name: "not a mapping",
			yaml: "- kind: fattree\n",
			want: "bad.yaml:1:1: expected a topology: a mapping with kind, its size and optional link settings, found a list",
		},
		{
			name: "invalid YAML",
			yaml: "kind: fattree\nk: [4\n",
			want: "bad.yaml:2: invalid YAML: did not find expected ',' or ']'",
		},
		{
			name: "invalid YAML: bad indentation",
			yaml: "kind: fattree\nk: 4\nlinks:\n  rate: 1Mbit\n   buffer: 2KiB\n",
			want: "bad.yaml:5: invalid YAML: mapping values are not allowed in this context",
		},
		{
			name: "invalid YAML: tab",
			yaml: "kind: fattree\nk: 4\n\tlinks: {}\n",
			want: "bad.yaml:3: invalid YAML: found a tab character that violates indentation",
		},
		{
			name: "invalid YAML: list item among fields",
			yaml: "kind: fattree\nk: 4\noverrides:\n  - {between: [e0-0, a0-0], rate: 1Mbit}\n  rate: 2Mbit\n",
			want: "bad.yaml:5: invalid YAML: did not find expected '-' indicator",
		},
		{
			name: "invalid YAML after a valid multi-line flow mapping",
			yaml: "kind: fattree\nlinks: {rate: 1Mbit,\n  buffer: 64KiB}\nk: [4\n",
			want: "bad.yaml:4: invalid YAML: did not find expected ',' or ']'",
		},
		{
			name: "two documents",
			yaml: "kind: fattree\nk: 4\n---\nkind: leafspine\n",
			want: "bad.yaml:3:1: a topology file holds one YAML document; remove this second one (after ---)",
		},
		{
			name: "empty file",
			yaml: "",
			want: "bad.yaml: " + emptyFile,
		},
		{
			name: "only comments",
			yaml: "# nothing yet\n\n",
			want: "bad.yaml: " + emptyFile,
		},
		{
			name: "only a document marker",
			yaml: "---\n",
			want: "bad.yaml: " + emptyFile,
		},
		{
			name: "several errors reported together",
			yaml: lines(
				"kind: fattree",
				"k: 4",
				"links:",
				"  rate: 100Mbps",
				"  bufer: 64KiB",
				"  mtu: 100000",
				"stages:",
				"  agg-core: {rate: fast}",
				"switches:",
				"  a9-0: {rate: 25Mbit}",
				"overrides:",
				"  - between: [e0-0, c0-0]",
				"    rate: 10Mbit",
				"  - from: a0-1",
				"    to: c1-0",
				"    mtu: 9000",
				""),
			want: lines(
				`bad.yaml:5:3: links.bufer: unknown field "bufer"; did you mean "buffer"? (valid: rate, buffer, ecn, mtu, delay, jitter)`,
				"bad.yaml:6:8: links.mtu: 100000 is out of range; mtu must be from 576 to 9216 bytes",
				`bad.yaml:8:20: stages.agg-core.rate: cannot parse "fast": expected a number and a unit, e.g. 100Mbit or 2.5Gbit`,
				`bad.yaml:10:3: switches.a9-0: no switch named "a9-0"; this fattree k=4 has edge switches e0-0..e3-1, aggregation switches a0-0..a3-1, core switches c0-0..c1-1`,
				"bad.yaml:12:14: overrides[0].between: e0-0 and c0-0 are not linked; e0-0 links only to h0-0-0, h0-0-1, a0-0, a0-1",
				"bad.yaml:16:10: overrides[1].mtu: mtu is per link and cannot be set for one direction (from/to); set it with between: [a0-1, c1-0]",
			),
		},
		{
			name: "errors independent of a bad size are still reported",
			yaml: lines(
				"kind: fattree",
				"k: 7",
				"links: {rate: 1Gbit, ecn: 16kb}",
				"stages:",
				"  host-leaf: {rate: 10Mbit}",
				"overrides:",
				"  - from: a0-0",
				"    to: c0-0",
				"    mtu: 1500",
				""),
			want: lines(
				"bad.yaml:2:4: k: 7 is odd; k must be an even number from 4 to 16",
				`bad.yaml:3:27: links.ecn: cannot parse "16kb": unit "kb" ends in a lowercase b, which usually means bits; sizes are in bytes: write KiB (1024 bytes) or KB (1000 bytes); or write "off" to disable marking`,
				`bad.yaml:5:3: stages.host-leaf: "host-leaf" is not a stage of a fattree (valid: host-edge, edge-agg, agg-core)`,
				"bad.yaml:9:10: overrides[0].mtu: mtu is per link and cannot be set for one direction (from/to); set it with between: [a0-0, c0-0]",
			),
		},
		{
			name: "bad delays and jitter, every one reported",
			yaml: lines(
				"kind: fattree",
				"k: 4",
				"links: {delay: -1ms}",
				"stages:",
				"  agg-core: {delay: 2 ms, jitter: 1s}",
				"overrides:",
				"  - from: a0-0",
				"    to: c0-0",
				"    jitter: -5us",
				"  - between: [h0-0-0, e0-0]",
				"    delay: 10",
				""),
			want: lines(
				"bad.yaml:3:16: links.delay: -1ms is negative; a delay must be 0 or more",
				`bad.yaml:5:21: stages.agg-core.delay: cannot parse "2 ms": want a duration such as 1.5us or 2ms (units ns, us, ms, s)`,
				"bad.yaml:5:35: stages.agg-core.jitter: 1s is above the 500ms a link direction may have",
				"bad.yaml:9:13: overrides[0].jitter: -5µs is negative; a jitter must be 0 or more",
				`bad.yaml:11:12: overrides[1].delay: cannot parse "10": want a duration such as 1.5us or 2ms (units ns, us, ms, s)`,
			),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top, err := Parse("bad.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded (%v), want error:\n%s", top, tt.want)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error mismatch (-want +got):\n%s", diff)
			}
			var fes yamldoc.Errors
			if !errors.As(err, &fes) {
				t.Errorf("error is a %T, want yamldoc.Errors", err)
			}
			var fe *yamldoc.FieldError
			if !errors.As(err, &fe) || fe.File != "bad.yaml" {
				t.Errorf("errors.As(*yamldoc.FieldError) = %v, want a yamldoc.FieldError in bad.yaml", fe)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("kind: fattree\nk: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want string
	}{
		{missing, "load topology: open " + missing + ": no such file or directory"},
		{dir, "load topology: read " + dir + ": is a directory"},
		{bad, bad + ":2:4: k: 3 is out of range; k must be an even number from 4 to 16"},
	}
	for _, tt := range tests {
		_, err := Load(tt.path)
		if err == nil {
			t.Errorf("Load(%s) succeeded, want %q", tt.path, tt.want)
			continue
		}
		if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
			t.Errorf("Load(%s) error mismatch (-want +got):\n%s", tt.path, diff)
		}
	}
}

func TestFieldErrorFormat(t *testing.T) {
	tests := []struct {
		in   yamldoc.FieldError
		want string
	}{
		{yamldoc.FieldError{File: "f.yaml", Line: 3, Column: 7, Field: "k", Msg: "bad"}, "f.yaml:3:7: k: bad"},
		{yamldoc.FieldError{File: "f.yaml", Line: 3, Field: "k", Msg: "bad"}, "f.yaml:3: k: bad"},
		{yamldoc.FieldError{File: "f.yaml", Field: "k", Msg: "bad"}, "f.yaml: k: bad"},
		{yamldoc.FieldError{File: "f.yaml", Msg: "bad"}, "f.yaml: bad"},
		{yamldoc.FieldError{Line: 3, Column: 7, Field: "k", Msg: "bad"}, "3:7: k: bad"},
		{yamldoc.FieldError{Field: "k", Msg: "bad"}, "k: bad"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.in.Error()); diff != "" {
			t.Errorf("Error() mismatch (-want +got):\n%s", diff)
		}
	}
}

// TestSpecInGo: a Spec built in Go has no positions; errors still name
// the field.
func TestSpecInGo(t *testing.T) {
	s := &Spec{Kind: FatTree, K: 4, Links: Params{Rate: "fast"}, Switches: map[string]Params{"x": {Rate: "1Mbit"}}}
	_, err := s.Resolve("")
	want := lines(
		`links.rate: cannot parse "fast": expected a number and a unit, e.g. 100Mbit or 2.5Gbit`,
		`switches.x: no switch named "x"; this fattree k=4 has edge switches e0-0..e3-1, aggregation switches a0-0..a3-1, core switches c0-0..c1-1`,
	)
	if err == nil {
		t.Fatalf("Resolve succeeded, want %q", want)
	}
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error mismatch (-want +got):\n%s", diff)
	}
}
