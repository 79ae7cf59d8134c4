package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/internal/companion"
)

// ServeBinary is the program that serves: fabric-agent-ctl serve replaces
// itself with it, so the clients, which platforms exec for every probe, do
// not link the runtime and every bundled adapter.
const ServeBinary = "fabric-agent-ctl-serve"

// ServeFlags are serve's parsed and checked flags.
type ServeFlags struct {
	// Socket is the control socket's absolute path.
	Socket          string
	ShutdownTimeout time.Duration
	LogLevel        slog.Level
}

// Serve runs serve and returns its exit code. ctx is cancelled by the
// first SIGINT or SIGTERM (MainServe).
type Serve func(ctx context.Context, f ServeFlags, stdio Stdio) int

// serveCommand is serve's one definition, shared by fabric-agent-ctl and
// fabric-agent-ctl-serve: its flags are parsed and checked the same way in
// both, so usage errors and help do not depend on which binary answers.
// Without a.serve (fabric-agent-ctl) it replaces the process with
// ServeBinary, which parses the same command line again.
func (a *app) serveCommand() *cobra.Command {
	var shutdownTimeout time.Duration
	var logLevel string
	cmd := &cobra.Command{
		Use:   "serve [--socket PATH] [--shutdown-timeout D]",
		Short: "Own the sandbox's runtimes and answer the other subcommands on a Unix socket",
		Long: "Bind the control socket (mode 0600; only this user and root are answered) and serve start, invoke, stop, check and status until SIGTERM or SIGINT.\n" +
			"Prints one JSON line when it serves and one when it has stopped; logs (JSON) go to stderr.\n" +
			"On SIGTERM or SIGINT: new work gets server_stopping, running invocations are cancelled and answered with server_stopping, every runtime is stopped within its stop deadlines " +
			"(and --shutdown-timeout, when set), and runtimes whose cleanup could not be confirmed are written to fabric.unclean beside the socket; a second signal cuts the wait short.\n" +
			"Exit 0 after a clean shutdown, 1 when fabric.unclean was written or serve could not start (serve_already_running, socket_unavailable), 2 on usage errors.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return a.usage(cmd, "--log-level must be debug, info, warn or error")
			}
			if shutdownTimeout < 0 {
				return a.usage(cmd, "--shutdown-timeout must not be negative")
			}
			if a.serve == nil {
				return a.execServe(cmd)
			}
			a.catchSignals()
			if code := a.serve(a.ctx, ServeFlags{Socket: a.socket, ShutdownTimeout: shutdownTimeout, LogLevel: level}, a.stdio); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&shutdownTimeout, "shutdown-timeout", 0, "bound on the wait for runtimes to stop at shutdown, e.g. 20s (default: each runtime's own stop deadlines)")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	return cmd
}

// execServe replaces the process with ServeBinary (companion.Exec: same
// pid, arguments, environment, open files and signal dispositions), found
// beside the running executable, else on PATH. It returns only when that
// fails.
func (a *app) execServe(cmd *cobra.Command) error {
	err := fmt.Errorf("serve: %w", companion.Exec(ServeBinary, a.args))
	return &exitError{code: a.usageFailure(cmd.Name(), err)}
}
