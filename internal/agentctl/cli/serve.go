package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/agentctl/server"
	"github.com/fabric-runtime/fabric/internal/clientopts"
)

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
			// A closed stdout must not kill the sandbox's main process.
			signal.Ignore(syscall.SIGPIPE)
			logger := slog.New(slog.NewJSONHandler(a.stdio.Err, &slog.HandlerOptions{Level: level}))
			srv, err := server.Listen(server.Options{
				Socket: a.socket, Logger: logger, ShutdownTimeout: shutdownTimeout,
				Client: fabric.New(clientopts.With(os.Getenv, fabric.WithLogger(logger))...),
			})
			if err != nil {
				var ae *agentctl.Error
				if !errors.As(err, &ae) {
					ae = &agentctl.Error{Code: agentctl.CodeSocketUnavailable, Message: err.Error()}
				}
				a.writeJSON(map[string]any{"status": agentctl.StatusFailed, "error": ae})
				fmt.Fprintln(a.stdio.Err, "fabric-agent-ctl serve:", ae.Message)
				return &exitError{code: agentctl.ExitFailed}
			}
			a.writeJSON(map[string]any{"status": agentctl.ServerServing, "socket": srv.Socket(), "pid": os.Getpid(), "protocol_version": agentctl.ProtocolVersion})
			logger.Info("serving", "socket", srv.Socket(), "pid", os.Getpid())
			res := server.UntilSignal(cmd.Context(), logger, srv.Serve, srv.Force)
			a.writeJSON(map[string]any{"status": "stopped", "stopped": res.Stopped, "unclean": res.Unclean, "marker": res.Marker})
			if len(res.Unclean) > 0 {
				return &exitError{code: agentctl.ExitFailed}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&shutdownTimeout, "shutdown-timeout", 0, "bound on the wait for runtimes to stop at shutdown, e.g. 20s (default: each runtime's own stop deadlines)")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	return cmd
}
