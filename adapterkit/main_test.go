package adapterkit

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"go.uber.org/goleak"
)

// childEnv selects a child mode when the test binary re-executes itself.
const childEnv = "ADAPTERKIT_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	goleak.VerifyTestMain(m)
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// runChild runs Serve on the process's real channel (stdio for v1, fd 3
// for v2, as FABRIC_HOST_PROTOCOL says) with the adapter of mode.
func runChild(mode string) int {
	var a Adapter
	switch mode {
	case "stray":
		// Adapter code that scribbles on stdout and reads stdin.
		a = &testAdapter{
			start: func(ctx context.Context, in StartInput) error {
				fmt.Println("garbage from start")
				return nil
			},
			invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
				fmt.Println("garbage from invoke")
				os.Stdout.WriteString("more garbage\n")
				syscall.Write(1, []byte("raw fd 1 garbage\n"))
				b, _ := io.ReadAll(os.Stdin) // must not steal requests
				return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: fmt.Sprintf("stdin had %d bytes", len(b))}, nil
			},
		}
	case "hang":
		a = &testAdapter{
			invoke: func(ctx context.Context, inv Invocation) (contract.AgentRunResult, error) {
				fmt.Fprintln(os.Stderr, "child: invoke entered")
				<-ctx.Done()
				fmt.Fprintln(os.Stderr, "child: invoke cancelled:", context.Cause(ctx))
				return contract.AgentRunResult{Status: contract.StatusCancelled}, nil
			},
			stop: func(ctx context.Context) error {
				fmt.Fprintln(os.Stderr, "child: session stopped")
				return nil
			},
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown child mode", mode)
		return 2
	}
	if err := Serve(context.Background(), a); err != nil {
		fmt.Fprintln(os.Stderr, "child: Serve:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "child: Serve returned")
	return 0
}
