// Package servecmd is the body of fabric serve, which runs in fabric-serve:
// a deployment's supervisor with its console, until a signal. The command
// line, its flags and their checks are internal/cli's, shared with fabric.
package servecmd

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/internal/agentctl"
	"github.com/fabric-runtime/fabric/internal/agentctl/server"
	"github.com/fabric-runtime/fabric/internal/cli"
	"github.com/fabric-runtime/fabric/internal/clientopts"
	"github.com/fabric-runtime/fabric/internal/console"
	"github.com/fabric-runtime/fabric/internal/deploy"
	"github.com/fabric-runtime/fabric/internal/supervisor"
)

// Main runs fabric-serve with the process's arguments (those of fabric
// serve) and returns its exit code. Call bundled.ServeHost before it.
func Main() int { return cli.MainServe(Serve) }

// Serve is cli.Serve: it prints one JSON line when it serves and one when
// it has stopped; 1 when it could not start or fabric.unclean was written.
func Serve(ctx context.Context, f cli.ServeFlags, out cli.ServeOutput) int {
	signal.Ignore(syscall.SIGPIPE, syscall.SIGHUP)
	logger := slog.New(slog.NewJSONHandler(out.Err, &slog.HandlerOptions{Level: f.LogLevel}))
	sup, err := supervisor.New(supervisor.Options{StateDir: f.StateDir, Socket: f.Socket, Logger: logger,
		Client: fabric.New(clientopts.With(os.Getenv, fabric.WithLogger(logger))...), ShutdownTimeout: f.ShutdownTimeout})
	if err != nil {
		ae := agentctl.AsError(err, agentctl.CodeSocketUnavailable)
		_ = out.WriteJSON(map[string]any{"status": "failed", "error": ae})
		return cli.ExitFailure
	}
	serve := sup.Serve
	serving := map[string]any{"status": "serving", "socket": sup.Socket(), "pid": os.Getpid(), "state_dir": f.StateDir}
	if f.ConsoleListen != "off" {
		cons, err := console.New(console.Options{Listen: f.ConsoleListen, StateDir: f.StateDir, Supervisor: sup,
			Logger: logger.With("component", "console")})
		if err != nil {
			// Release the socket and the serve lock: nothing was served.
			done, cancel := context.WithCancel(ctx)
			cancel()
			sup.Serve(done)
			_ = out.WriteJSON(map[string]any{"status": "failed", "error": &agentctl.Error{Code: deploy.CodeConsoleUnavailable, Message: err.Error()}})
			return cli.ExitFailure
		}
		sup.SetConsole(cons.URL(), cons.TokenFile())
		serving["console"] = cons.URL()
		serve = func(ctx context.Context) server.Result {
			done := make(chan error, 1)
			go func() { done <- cons.Serve(ctx) }()
			res := sup.Serve(ctx)
			if err := <-done; err != nil {
				logger.Error("console", "error", err)
			}
			return res
		}
	}
	_ = out.WriteJSON(serving)
	res := server.UntilSignal(ctx, logger, serve, sup.Force)
	_ = out.WriteJSON(map[string]any{"status": "stopped", "stopped": res.Stopped, "unclean": res.Unclean, "marker": res.Marker})
	if len(res.Unclean) > 0 {
		return cli.ExitFailure
	}
	return cli.ExitOK
}
