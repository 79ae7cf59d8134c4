package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/internal/clifront"
	"github.com/fabric-runtime/fabric/internal/companion"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

// ServeBinary is the program that runs a deployment's supervisor: fabric
// serve replaces itself with it, so that fabric, whose other commands are
// short-lived, links neither the supervisor nor its console and access
// gateways (SQLite, html/template): Go runs every linked package's init in
// every process.
const ServeBinary = "fabric-serve"

// ServeFlags are fabric serve's parsed and checked flags.
type ServeFlags struct {
	// StateDir and Socket are absolute.
	StateDir        string
	Socket          string
	ShutdownTimeout time.Duration
	LogLevel        slog.Level
	// ConsoleListen is the console's address, or "off".
	ConsoleListen string
}

// ServeOutput is where serve writes: its streams, and writeJSON for its
// JSON lines (the --output format's encoding).
type ServeOutput struct {
	Stdio
	WriteJSON func(v any) error
}

// Serve runs the supervisor until ctx is cancelled (the first SIGINT or
// SIGTERM) and returns the exit code.
type Serve func(ctx context.Context, f ServeFlags, out ServeOutput) int

// MainServe runs fabric-serve: the same command line as fabric's, with
// serve alone and run in this process by serve. Call bundled.ServeHost
// before it.
func MainServe(serve Serve) int {
	return run(context.Background(), os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, true, serve)
}

// systemdUnit is what fabric serve --print-systemd-unit prints.
const systemdUnit = `[Unit]
Description=Fabric deployment supervisor (%[1]s)
After=network.target

[Service]
Type=simple
ExecStart=%[2]s serve --state-dir %[1]s --socket %[3]s
Restart=on-failure
RestartSec=2
# SIGTERM: runtimes and services stop within their deadlines.
KillMode=mixed
TimeoutStopSec=60
UMask=0077

[Install]
WantedBy=multi-user.target
`

// serveCommand is serve's one definition, shared by fabric and
// fabric-serve: its flags are parsed and checked the same way in both,
// and --print-systemd-unit is answered by the binary it was given to.
// Without a.serve (fabric) it then replaces the process with ServeBinary,
// which parses the same command line again.
func (a *app) serveCommand() *cobra.Command {
	var stateDir, socket, logLevel, consoleListen string
	var shutdownTimeout time.Duration
	var unit bool
	cmd := &cobra.Command{
		Use:   "serve --state-dir DIR [--socket PATH] [--print-systemd-unit]",
		Short: "Run a deployment supervisor: owns agents' runtimes and integration services, answers deploy and fabric-agent-ctl requests on a Unix socket",
		Long: "The supervisor that fabric deploy apply starts (supervisor.kind process) or that an operator runs (kind external, e.g. under systemd: --print-systemd-unit prints a unit).\n" +
			"It prints one JSON line when it serves and one when it stopped; logs (JSON) go to stderr. SIGTERM or SIGINT stops every runtime and service; a second signal cuts the wait short.",
		// fabric hands serve to fabric-serve itself (clifront).
		Annotations: map[string]string{clifront.ProgramAnnotation: ServeBinary},
		Args:        cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if stateDir == "" {
				return &exitError{code: ExitUsage, err: errors.New("--state-dir is required")}
			}
			abs, err := filepath.Abs(stateDir)
			if err != nil {
				return &exitError{code: ExitUsage, err: err}
			}
			if socket == "" {
				socket = filepath.Join(abs, supervisorproto.SocketFile)
			}
			if socket, err = filepath.Abs(socket); err != nil {
				return &exitError{code: ExitUsage, err: err}
			}
			if unit {
				exe, _ := os.Executable()
				_, err := fmt.Fprintf(a.stdio.Out, systemdUnit, abs, exe, socket)
				return err
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return &exitError{code: ExitUsage, err: errors.New("--log-level must be debug, info, warn or error")}
			}
			if a.serve == nil {
				// companion.Exec returns only when it failed.
				return &exitError{code: ExitUsage, err: fmt.Errorf("serve: %w", companion.Exec(ServeBinary, a.args))}
			}
			f := ServeFlags{StateDir: abs, Socket: socket, ShutdownTimeout: shutdownTimeout, LogLevel: level, ConsoleListen: consoleListen}
			if code := a.serve(cmd.Context(), f, ServeOutput{Stdio: a.stdio, WriteJSON: a.writeJSON}); code != ExitOK {
				return silentExit(code)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "the deployment's state directory (journal, socket, logs)")
	cmd.Flags().StringVar(&socket, "socket", "", "control socket (default <state-dir>/supervisor.sock)")
	cmd.Flags().DurationVar(&shutdownTimeout, "shutdown-timeout", 0, "bound on the wait for runtimes to stop at shutdown")
	cmd.Flags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	cmd.Flags().BoolVar(&unit, "print-systemd-unit", false, "print a systemd unit that runs this supervisor, and exit")
	cmd.Flags().StringVar(&consoleListen, "console-listen", supervisorproto.ConsoleListen, "the console's loopback address (port 0: chosen once, then kept), or off")
	return cmd
}
