// Command hostagent is ftlab's host agent: it moves messages between hosts
// with a transport scheme (hostagent/scheme) over real sockets, from
// inside a host's network namespace.
//
//	hostagent serve [--port P] [--addr A]      the control protocol on stdin/stdout (orchestrator)
//	hostagent listen [--port P] [--scheme S]   receive and print each verified message
//	hostagent send --to A --size 1MiB [--scheme S] [--param k=v]...
//
// In a lab: ftlab exec h2-0-0 -- bin/hostagent listen, then
// ftlab exec h0-0-0 -- bin/hostagent send --to 10.2.0.2 --size 16MiB.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/ftlab/ftlab/cmd/hostagent/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
