package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/internal/topology"
)

// Shell completion (ftlab completion bash|zsh|fish, cobra's) knows the
// machine's labs and, for commands that name nodes, the lab's nodes and
// links, read from the lab store: reading needs no privileges.

// buildsLab are the commands whose --name names a lab they are about to
// build, not one that exists.
var buildsLab = map[string]bool{"up": true, "run": true, "check": true, "calibrate": true, "bench": true, "start": true}

// fileArgs are the commands whose arguments are topology or scenario
// files; dirArgs those whose arguments are results directories.
var (
	fileArgs = map[string]bool{"up": true, "run": true, "validate": true, "calibrate": true, "graph": true}
	dirArgs  = map[string]bool{"report": true, "compare": true, "serve": true}
)

// completeFiles completes files with one of the extensions, or
// directories when none is given.
func completeFiles(exts ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		if len(exts) == 0 {
			return nil, cobra.ShellCompDirectiveFilterDirs
		}
		return exts, cobra.ShellCompDirectiveFilterFileExt
	}
}

// registerCompletions gives every --name that names an existing lab, and
// run --lab, the completion of lab names (ftlab lab's --lab names a
// teaching lab), and file arguments the files
// they take.
func (a *app) registerCompletions(root *cobra.Command) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.ValidArgsFunction == nil {
			switch {
			case fileArgs[c.Name()]:
				c.ValidArgsFunction = completeFiles("yaml", "yml")
			case dirArgs[c.Name()]:
				c.ValidArgsFunction = completeFiles()
			}
		}
		if f := c.Flags().Lookup("name"); f != nil && !buildsLab[c.Name()] {
			_ = c.RegisterFlagCompletionFunc("name", a.completeLabs)
		}
		if f := c.Flags().Lookup("lab"); f != nil && c.Name() == "run" {
			_ = c.RegisterFlagCompletionFunc("lab", a.completeLabs)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeLabs lists the labs of the store.
func (a *app) completeLabs(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	names, _ := a.store.List()
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// topologyOf is the topology of the lab a command names, nil if it
// cannot be read.
func (a *app) topologyOf(name string) *topology.Topology {
	st, err := a.store.Get(name)
	if err != nil {
		return nil
	}
	return st.Topology
}

// completeNodes completes the first argument with the nodes of the lab
// *name (hosts only if hosts is set), and later ones with files.
func (a *app) completeNodes(name *string, hosts bool, args int) cobra.CompletionFunc {
	return func(_ *cobra.Command, done []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(done) >= args {
			return nil, cobra.ShellCompDirectiveDefault
		}
		t := a.topologyOf(*name)
		if t == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []string
		for i := range t.Nodes {
			n := &t.Nodes[i]
			if (!hosts || n.Role == topology.RoleHost) && !slices.Contains(done, n.Name) {
				names = append(names, n.Name)
			}
		}
		return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeLinkEnds completes two nodes that share a link: any node first,
// then the first one's neighbours.
func (a *app) completeLinkEnds(name *string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, done []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		switch len(done) {
		case 0:
			return a.completeNodes(name, false, 1)(cmd, done, toComplete)
		case 1:
			t := a.topologyOf(*name)
			if t == nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			n, ok := t.Node(done[0])
			if !ok {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var peers []string
			for _, p := range n.Ports {
				peers = append(peers, t.Peer(p).Node)
			}
			return withPrefix(peers, toComplete), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeWords completes a flag with fixed words.
func completeWords(words ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return withPrefix(words, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

func withPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}
