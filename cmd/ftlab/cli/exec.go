package cli

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/internal/nsutil"
	"github.com/ftlab/ftlab/orchestrator/lab"
)

func (a *app) execCommand() *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "exec <node> [-- <command> [args...]]",
		Short: "Run a command inside a node's network namespace",
		Long: `exec runs a command inside one node's network namespace, e.g.
  ftlab exec h0-0-0 -- ping -c 3 10.0.0.1
  ftlab exec e0-0 -- ip -s link
Without a command it starts $SHELL (or /bin/sh). The command replaces ftlab, so
its exit status, signals and terminal are the command's own. Arguments are
passed as they are, never through a shell.`,
		Args:              cobra.MinimumNArgs(1),
		Annotations:       rootOnly(),
		ValidArgsFunction: a.completeNodes(&name, false, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := a.store.Get(name)
			if err != nil {
				return err
			}
			node := args[0]
			if _, err := lab.NodeOf(st.Topology, node); err != nil {
				return fmt.Errorf("lab %s: %w", name, err)
			}
			argv := args[1:]
			if len(argv) == 0 {
				shell := os.Getenv("SHELL")
				if shell == "" {
					shell = "/bin/sh"
				}
				argv = []string{shell}
			}
			path, err := exec.LookPath(argv[0])
			if err != nil {
				return err
			}
			ns, err := nsutil.Open(a.store.NamespaceName(name, node))
			if err != nil {
				return fmt.Errorf("node %s: %w", node, err)
			}
			// The exec happens on this locked thread, so the new program
			// starts in the node's namespace. There is no way back: on
			// success this call never returns.
			runtime.LockOSThread()
			if err := nsutil.Enter(ns); err != nil {
				return fmt.Errorf("node %s: %w", node, err)
			}
			env := append(os.Environ(), "FTLAB_LAB="+name, "FTLAB_NODE="+node)
			return syscall.Exec(path, argv, env)
		},
	}
	addNameFlag(cmd, &name)
	return cmd
}
