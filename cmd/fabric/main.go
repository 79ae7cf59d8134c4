// Command fabric plans, diagnoses and runs AI agent harnesses.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/fabric-runtime/fabric/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
