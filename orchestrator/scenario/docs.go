package scenario

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ftlab/ftlab/hostagent/cc"
	"github.com/ftlab/ftlab/hostagent/scheme"
	"github.com/ftlab/ftlab/hostagent/transport"
	"github.com/ftlab/ftlab/internal/params"
	"github.com/ftlab/ftlab/switchd"
)

// DocSections are the parts of docs/scenarios.md written from the
// registries (switch policies, transports, congestion controls, parameter
// blocks), so the
// documentation cannot fall behind the code: each is the text between
// "<!-- generated: NAME -->" and "<!-- end generated -->". The docs test
// checks them; `go test ./orchestrator/scenario -run TestDocsGenerated
// -update` rewrites them.
func DocSections() map[string]string {
	var pol, tr strings.Builder
	pol.WriteString("| Policy | What a switch does for each upward packet | Blocks |\n|---|---|---|\n")
	for _, p := range switchd.Policies {
		fmt.Fprintf(&pol, "| `%s` | %s | %s |\n", p.Name, p.Doc, codeList(p.Blocks))
	}
	tr.WriteString("| Scheme | Paths | Loss recovery | Blocks |\n|---|---|---|---|\n")
	for _, t := range scheme.Transports {
		fmt.Fprintf(&tr, "| `%s` | %s | %s | %s |\n", t.Name, t.Paths, t.Recovery, codeList(t.Blocks))
	}
	var ccs strings.Builder
	ccs.WriteString("| Congestion control | Reacts to | From | Blocks |\n|---|---|---|---|\n")
	for _, a := range cc.Algorithms {
		fmt.Fprintf(&ccs, "| `%s` | %s | %s | %s |\n", a.Name, a.Signal, a.Source, codeList(a.Blocks))
	}
	return map[string]string{
		"policies":             pol.String(),
		"policy-parameters":    paramTable(switchd.PolicyBlocks),
		"transports":           tr.String(),
		"transport-parameters": paramTable(slices.Concat(scheme.Blocks, []params.Block{transport.HostBlock})),
		"ccs":                  ccs.String(),
		"cc-parameters":        paramTable(cc.Blocks),
	}
}

func paramTable(bs []params.Block) string {
	var b strings.Builder
	b.WriteString("| Block | Field | Meaning | Value | Default |\n|---|---|---|---|---|\n")
	for _, blk := range bs {
		for _, f := range blk.Fields() {
			fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | `%s` |\n", blk.Key, f.Key, f.Doc, f.Expects, f.Default)
		}
	}
	return b.String()
}

func codeList(keys []string) string {
	if len(keys) == 0 {
		return "none"
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = "`" + k + "`"
	}
	return strings.Join(out, ", ")
}
