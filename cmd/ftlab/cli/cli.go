// Package cli is ftlab's command line: one cobra command per verb, each a
// thin layer over the orchestrator packages.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/ftlab/ftlab/orchestrator/lab"
)

// needsRoot marks commands that change or enter network namespaces.
const needsRoot = "needs-root"

// app carries what every command shares.
type app struct {
	stdout, stderr io.Writer
	store          *lab.Store
}

// notice tells the user, on stderr, something a command did on its own.
func (a *app) notice(msg string) { fmt.Fprintf(a.stderr, "ftlab: %s\n", msg) }

// Run executes the ftlab command line and returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	store, err := storeOf(os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "ftlab: %v\n", err)
		return 2
	}
	a := &app{stdout: stdout, stderr: stderr, store: store}
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err = root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(stderr, "ftlab: %v\n", err)
	return 1
}

// storeOf is the machine's lab store, with the environment's overrides
// (for tests, and for keeping a second set of labs apart): FTLAB_RUN_DIR
// for its run directory, FTLAB_PREFIX for its namespace prefix.
func storeOf(getenv func(string) string) (*lab.Store, error) {
	s := lab.DefaultStore()
	if dir := getenv("FTLAB_RUN_DIR"); dir != "" {
		s.Dir = dir
	}
	if p := getenv("FTLAB_PREFIX"); p != "" {
		if err := lab.ValidatePrefix(p); err != nil {
			return nil, fmt.Errorf("FTLAB_PREFIX: %w", err)
		}
		s.Prefix = p
	}
	return s, nil
}

// exitError ends the process with a code and no further message (the
// command already said what happened).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "ftlab",
		Short: "Emulated fat-tree fabrics on one Linux machine",
		Long: `ftlab builds k-ary fat-tree and leaf-spine fabrics out of network namespaces and
veth links on one Linux machine, so load balancing and loss recovery designs can
be run on a real kernel.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Annotations[needsRoot] != "" && os.Geteuid() != 0 {
				return fmt.Errorf("%s must run as root: it creates and enters network namespaces", cmd.CommandPath())
			}
			return nil
		},
	}
	root.AddCommand(
		a.upCommand(),
		a.downCommand(),
		a.statusCommand(),
		a.listCommand(),
		a.execCommand(),
		a.pingallCommand(),
		a.statsCommand(),
		a.linkCommand(),
		a.sendCommand(),
		a.serveCommand(),
		a.runCommand(),
		a.reportCommand(),
		a.compareCommand(),
		a.cleanupCommand(),
		a.validateCommand(),
		a.checkCommand(),
		a.versionCommand(),
		a.benchCommand(),
		a.doctorCommand(),
		a.captureCommand(),
		a.graphCommand(),
		a.labCommand(),
	)
	for _, c := range root.Commands() {
		if c.Name() == "bench" {
			c.AddCommand(a.calibrateCommand(), a.soakCommand())
		}
	}
	a.registerCompletions(root)
	return root
}

func rootOnly() map[string]string { return map[string]string{needsRoot: "yes"} }

// addNameFlag adds --name (-n) for the lab a command acts on.
func addNameFlag(cmd *cobra.Command, name *string) {
	cmd.Flags().StringVarP(name, "name", "n", lab.DefaultName, "lab name (lowercase letters, digits, '_')")
}
