// Package servecmd is the body of fabric-agent-ctl serve, which runs in
// fabric-agent-ctl-serve: it binds the control socket and serves the
// sandbox's runtimes until a signal. The command line, its flags and their
// checks are internal/agentctl/cli's, shared with the client.
package servecmd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/agentctl/cli"
	"github.com/fabric-runtime/fabric/internal/agentctl/server"
	"github.com/fabric-runtime/fabric/internal/clientopts"
)

// Main runs fabric-agent-ctl-serve with the process's arguments (those of
// fabric-agent-ctl serve) and returns its exit code. Call
// bundled.ServeHost before it.
func Main() int { return cli.MainServe(Serve) }

// Serve is cli.Serve: it prints one JSON line when it serves and one when
// it has stopped; 1 when serve could not start or fabric.unclean was
// written.
func Serve(ctx context.Context, f cli.ServeFlags, stdio cli.Stdio) int {
	// A closed stdout must not kill the sandbox's main process.
	signal.Ignore(syscall.SIGPIPE)
	logger := slog.New(slog.NewJSONHandler(stdio.Err, &slog.HandlerOptions{Level: f.LogLevel}))
	srv, err := server.Listen(server.Options{
		Socket: f.Socket, Logger: logger, ShutdownTimeout: f.ShutdownTimeout,
		Client: fabric.New(clientopts.With(os.Getenv, fabric.WithLogger(logger))...),
	})
	if err != nil {
		ae := agentctl.AsError(err, agentctl.CodeSocketUnavailable)
		cli.WriteJSON(stdio.Out, map[string]any{"status": agentctl.StatusFailed, "error": ae})
		fmt.Fprintln(stdio.Err, "fabric-agent-ctl serve:", ae.Message)
		return agentctl.ExitFailed
	}
	cli.WriteJSON(stdio.Out, map[string]any{"status": agentctl.ServerServing, "socket": srv.Socket(), "pid": os.Getpid(), "protocol_version": agentctl.ProtocolVersion})
	logger.Info("serving", "socket", srv.Socket(), "pid", os.Getpid())
	res := server.UntilSignal(ctx, logger, srv.Serve, srv.Force)
	cli.WriteJSON(stdio.Out, map[string]any{"status": "stopped", "stopped": res.Stopped, "unclean": res.Unclean, "marker": res.Marker})
	if len(res.Unclean) > 0 {
		return agentctl.ExitFailed
	}
	return agentctl.ExitOK
}
