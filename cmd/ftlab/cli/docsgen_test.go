package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/ftlab/ftlab/orchestrator/lab"
)

// The CLI reference's generator lives with its test: make docs runs it
// through TestDocsCurrent -update, so the binary carries none of cobra's
// Markdown and man page writers (and their Markdown and YAML libraries).

// Where make docs writes the CLI reference, from the repository root.
const (
	DocsMarkdownDir = "docs/cli"
	DocsManDir      = "docs/man"
)

// docsDate dates the man pages: a fixed date keeps the generated files
// the same from one run to the next (the test that they are current
// compares them byte for byte). Change it when the reference changes a
// lot.
var docsDate = time.Date(2026, time.December, 1, 0, 0, 0, 0, time.UTC)

// docsRoot is the command tree as the reference documents it: the
// machine's default store and no environment, so nothing local leaks
// into the defaults, and the completion command cobra adds at run time.
func docsRoot() *cobra.Command {
	a := &app{stdout: io.Discard, stderr: io.Discard, store: lab.DefaultStore()}
	root := a.rootCommand()
	root.DisableAutoGenTag = true
	root.InitDefaultCompletionCmd()
	return root
}

// WriteDocs writes the CLI reference generated from the commands: one
// Markdown page per command under mdDir and one man page (section 1)
// per command under manDir. Files of earlier commands that no longer
// exist are removed.
func WriteDocs(mdDir, manDir string) error {
	for _, d := range []string{mdDir, manDir} {
		if err := clean(d); err != nil {
			return err
		}
	}
	root := docsRoot()
	if err := doc.GenMarkdownTree(root, mdDir); err != nil {
		return fmt.Errorf("markdown reference: %w", err)
	}
	header := &doc.GenManHeader{Title: "FTLAB", Section: "1", Date: &docsDate, Source: "ftlab", Manual: "ftlab manual"}
	if err := doc.GenManTree(root, header, manDir); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}

// clean makes dir exist and removes the generated files in it.
func clean(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, "ftlab") && (strings.HasSuffix(n, ".md") || strings.HasSuffix(n, ".1")) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}
