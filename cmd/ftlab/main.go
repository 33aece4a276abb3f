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
	// Every way a user stops ftlab ends in the same orderly stop: what it
	// built is taken down, what it finished is kept. That includes a
	// closed terminal (SIGHUP) and a reader that went away (SIGPIPE:
	// ftlab run | head, or quitting a pager), which would otherwise kill
	// the process mid-run and leave its lab behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
