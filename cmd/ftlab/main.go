// Command ftlab builds emulated fat-tree fabrics of network namespaces and
// veth links on one Linux machine and runs experiments on them.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ftlab/ftlab/cmd/ftlab/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
