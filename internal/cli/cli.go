package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/clientopts"
)

// Exit codes shared by the fabric commands.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Stdio are the streams a command uses.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// silentExit ends the command with code after output was already written.
func silentExit(code int) error { return &exitError{code: code} }

type app struct {
	stdio  Stdio
	output string
	// signals: the first SIGINT or SIGTERM cancels the command's context
	// (Main); stopSignals ends that.
	signals     bool
	stopSignals context.CancelFunc
	// client is the SDK client of Fabric's binaries, created on first
	// use: creating one reads the installed packages, the telemetry
	// settings and the executable's path, which a command's help or a
	// usage error never needs (bench/cli).
	client func() *fabric.Client
	// groups are the group commands not built yet (group).
	groups map[*cobra.Command]func(*cobra.Command)
	// args are the command line's arguments, which serve passes on to
	// ServeBinary.
	args []string
	// serve runs serve in this process (fabric-serve); nil in fabric,
	// whose serve replaces the process with ServeBinary.
	serve Serve
}

// Main runs the fabric CLI with the process's arguments and streams; the
// first SIGINT or SIGTERM cancels the command's context. The signals are
// caught from when a command runs, not for help or a usage error: catching
// them starts two threads, a tenth of the CPU of fabric --help (bench/cli).
func Main() int {
	return run(context.Background(), os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, true, nil)
}

// Run executes the fabric CLI and returns its exit code.
func Run(ctx context.Context, args []string, stdio Stdio) int {
	return run(ctx, args, stdio, false, nil)
}

func run(ctx context.Context, args []string, stdio Stdio, signals bool, serve Serve) int {
	a := &app{stdio: stdio, args: args, serve: serve, signals: signals, client: sync.OnceValue(func() *fabric.Client { return fabric.New(clientopts.Binary(os.Getenv)...) })}
	root := a.rootCommand()
	a.populate(root, args)
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	err := root.ExecuteContext(ctx)
	if a.stopSignals != nil {
		a.stopSignals()
	}
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stdio.Err, "fabric:", ee.err)
		}
		return ee.code
	}
	// Anything cobra reports itself (unknown command or flag, wrong number
	// of arguments) is a usage error.
	fmt.Fprintln(stdio.Err, "fabric:", err)
	return ExitUsage
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "fabric",
		Short:         "Plan, diagnose and run AI agent harnesses through one typed contract",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if a.signals {
				var ctx context.Context
				ctx, a.stopSignals = signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
				cmd.SetContext(ctx)
			}
			if !cmd.Flags().Changed("output") && cmd.Annotations[terminalOutput] != "" && isTerminal(a.stdio.Out) {
				a.output = cmd.Annotations[terminalOutput]
			}
			switch a.output {
			case "json", "text", "jsonl":
				return nil
			}
			return &exitError{code: ExitUsage, err: fmt.Errorf("--output must be json, jsonl or text, not %q", a.output)}
		},
	}
	root.PersistentFlags().StringVarP(&a.output, "output", "o", "json", "output format: json, jsonl (one compact document per line; fabric run streams its events) or text (default for run and chat when stdout is a terminal)")
	if a.serve != nil {
		root.AddCommand(a.serveCommand())
		return root
	}
	root.AddCommand(a.planCommand(), a.doctorCommand(), a.adaptersCommand(), a.schemaCommand(), a.runCommand(), a.chatCommand(), a.checkCommand(), a.conformanceCommand())
	root.AddCommand(a.modelCommand(), a.deployCommand(), a.serveCommand(), a.batchCommand(), a.packagesCommand())
	return root
}

// terminalOutput annotates a command whose output for a person differs
// from its output for programs: its value is the --output a terminal on
// stdout gets when the flag is not given (as kubectl and gh do); anything
// else (a pipe, a file) keeps the JSON default, so scripts keep working.
const terminalOutput = "fabric/terminal-output"

// configFlags are the flags every command that reads a config takes.
type configFlags struct {
	baseDir string
	strict  bool
}

func (f *configFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.baseDir, "base-dir", "", "directory that relative paths resolve against (default: the config file's directory)")
	cmd.Flags().BoolVar(&f.strict, "strict", false, "treat unknown top-level config keys as errors")
}

func (f *configFlags) loadOptions() fabric.LoadOptions {
	return fabric.LoadOptions{BaseDir: f.baseDir, Strict: f.strict}
}

func (a *app) writeJSON(v any) error {
	enc := json.NewEncoder(a.stdio.Out)
	if a.output != "jsonl" {
		enc.SetIndent("", "  ")
	}
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// failure prints err (every joined finding) and returns the exit error.
func (a *app) failure(err error) error {
	findings := splitErrors(err)
	if a.output != "text" {
		infos := make([]*contract.ErrorInfo, 0, len(findings))
		for _, f := range findings {
			info := fabric.ErrorInfo(f)
			if info == nil {
				info = &contract.ErrorInfo{Stage: contract.StageConfig, Code: "error", Message: f.Error()}
			}
			infos = append(infos, info)
		}
		_ = a.writeJSON(map[string]any{"status": "failed", "errors": infos})
		return silentExit(ExitFailure)
	}
	for _, f := range findings {
		fmt.Fprintln(a.stdio.Err, "error:", f)
	}
	return silentExit(ExitFailure)
}

func splitErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, splitErrors(e)...)
		}
		return out
	}
	return []error{err}
}

// Tree returns fabric's whole command tree, every group populated, for
// internal/clifront/gen, which writes fabric's command line from it. Its
// commands must not be run.
func Tree() *cobra.Command {
	a := &app{}
	root := a.rootCommand()
	a.populateAll()
	return root
}
