package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/agentctl"
)

// Stdio are the streams a command uses.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Margins added to a request's own timeout for the client's wait: serve
// answers a cut-short operation after cancelling it, which takes a moment.
const (
	checkMargin     = 2 * time.Second
	lifecycleMargin = 15 * time.Second
	statusDeadline  = 10 * time.Second
)

// exitError ends a command with a code after its JSON was written.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

type app struct {
	stdio Stdio
	args  []string
	// serve runs serve in this process (fabric-agent-ctl-serve); nil
	// replaces the process with ServeBinary (fabric-agent-ctl).
	serve Serve
	// ctx is the command's context; cancel ends it.
	ctx    context.Context
	cancel context.CancelFunc
	// signals: once catchSignals ran, the first SIGINT or SIGTERM cancels
	// ctx (Main, MainServe); sigs is the channel that catches them.
	signals     bool
	sigs        chan os.Signal
	socket      string
	operationID string
	getenv      func(string) string
	compact     bool                    // one JSON document per line (invoke --stream)
	onRecord    func(line []byte) error // invoke --stream
}

// Main runs fabric-agent-ctl with the process's arguments and streams;
// serve replaces the process with ServeBinary. The first SIGINT or SIGTERM
// cancels the command once it can matter: when a client is connected and
// waits for serve's answer, or reads its input from stdin. Not before: a
// probe of a dead socket, help and usage errors do not pay for catching
// them (two threads, a tenth of the CPU of fabric-agent-ctl --help,
// bench/cli).
func Main() int {
	return run(context.Background(), os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, true, nil)
}

// MainServe runs fabric-agent-ctl-serve: the same command line as
// fabric-agent-ctl's, with serve alone and run in this process by serve,
// whose context the first SIGINT or SIGTERM cancels.
func MainServe(serve Serve) int {
	return run(context.Background(), os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, true, serve)
}

// Run executes fabric-agent-ctl and returns its exit code: 0 success, 1
// the operation failed, 2 usage, 3 serve unreachable, 4 busy (runtime_busy,
// server_stopping). It catches no signals; serve replaces the process.
func Run(ctx context.Context, args []string, stdio Stdio) int {
	return run(ctx, args, stdio, false, nil)
}

func run(ctx context.Context, args []string, stdio Stdio, signals bool, serve Serve) int {
	a := &app{stdio: stdio, args: args, getenv: os.Getenv, signals: signals, serve: serve}
	a.ctx, a.cancel = context.WithCancel(ctx)
	defer a.cancel()
	root := a.rootCommand()
	root.SetArgs(args)
	root.SetIn(stdio.In)
	root.SetOut(stdio.Out)
	root.SetErr(stdio.Err)
	cmd, err := root.ExecuteContextC(a.ctx)
	if a.sigs != nil {
		signal.Stop(a.sigs)
		close(a.sigs)
	}
	if err == nil {
		return agentctl.ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// Anything cobra reports itself (unknown command or flag, missing
	// required flag, wrong arguments) is a usage error.
	op := "unknown"
	if cmd != nil && cmd != root {
		op = cmd.Name()
	}
	return a.usageFailure(op, err)
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "fabric-agent-ctl",
		Short: "Drive the agent runtimes of a sandbox through its fabric-agent-ctl serve",
		Long: "fabric-agent-ctl serve owns the runtimes of one sandbox; every other subcommand is a short-lived client of it that prints one JSON document on stdout.\n" +
			"Exit codes: 0 success, 1 the operation failed (the JSON says why), 2 usage, 3 serve unreachable, 4 busy (runtime_busy or server_stopping).\n" +
			"The socket is --socket, else $" + agentctl.EnvSocket + ", else $" + agentctl.EnvArtifactsRoot + "/.fabric/" + agentctl.DefaultSocketName + ", else .fabric/" + agentctl.DefaultSocketName + " in the working directory.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if a.socket == "" {
				p, err := agentctl.DefaultSocket(a.getenv)
				if err != nil {
					return err
				}
				a.socket = p
			} else {
				p, err := filepath.Abs(a.socket)
				if err != nil {
					return err
				}
				a.socket = p
			}
			return nil
		},
	}
	root.PersistentFlags().StringVar(&a.socket, "socket", "", "control socket path (default: see above)")
	root.PersistentFlags().StringVar(&a.operationID, "operation-id", "", "operation id sent with the request (default: a fresh one); shows in serve's log")
	if a.serve != nil {
		root.AddCommand(a.serveCommand())
	} else {
		root.AddCommand(a.serveCommand(), a.startCommand(), a.invokeCommand(), a.stopCommand(), a.checkCommand(), a.statusCommand(), a.decideCommand())
	}
	return root
}

// catchSignals makes the first SIGINT or SIGTERM cancel a.ctx from now on
// (when a.signals; once). Later ones are caught too, and ignored, until
// the command returns.
func (a *app) catchSignals() {
	if !a.signals || a.sigs != nil {
		return
	}
	a.sigs = make(chan os.Signal, 1)
	signal.Notify(a.sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if _, ok := <-a.sigs; ok {
			a.cancel()
		}
	}()
}

func (a *app) writeJSON(v any) {
	writeJSON(a.stdio.Out, v, !a.compact)
}

// WriteJSON prints v as fabric-agent-ctl prints its documents: indented,
// HTML characters unescaped, one trailing newline.
func WriteJSON(w io.Writer, v any) { writeJSON(w, v, true) }

func writeJSON(w io.Writer, v any, indent bool) {
	enc := json.NewEncoder(w)
	if indent {
		enc.SetIndent("", "  ")
	}
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func (a *app) writeRaw(raw json.RawMessage) {
	var b bytes.Buffer
	if a.compact {
		if err := json.Compact(&b, raw); err != nil {
			b.Reset()
			b.Write(raw)
		}
	} else if err := json.Indent(&b, raw, "", "  "); err != nil {
		b.Reset()
		b.Write(raw)
	}
	b.WriteByte('\n')
	_, _ = a.stdio.Out.Write(b.Bytes())
}

// usageFailure prints a usage error as JSON (stdout) and text (stderr).
func (a *app) usageFailure(op string, err error) int {
	a.writeJSON(agentctl.Failed(&agentctl.Request{Operation: op, OperationID: a.operationID}, &agentctl.Error{Code: agentctl.CodeUsage, Message: err.Error()}, nil))
	fmt.Fprintln(a.stdio.Err, "fabric-agent-ctl:", err)
	return agentctl.ExitUsage
}

// usage ends a command with a usage error.
func (a *app) usage(cmd *cobra.Command, format string, args ...any) error {
	return &exitError{code: a.usageFailure(cmd.Name(), fmt.Errorf(format, args...))}
}

// call sends req to serve and prints the answer: the operation's document
// when there is one, else the failed response. It returns the exit error.
func (a *app) call(cmd *cobra.Command, req *agentctl.Request, wait time.Duration) error {
	req.OperationID = a.operationID
	ctx := a.ctx
	if wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	c := &agentctl.Client{Socket: a.socket, Connected: a.catchSignals}
	resp, err := c.DoStream(ctx, req, a.onRecord)
	if err != nil {
		ae := agentctl.AsError(err, agentctl.CodeProtocolError)
		a.writeJSON(agentctl.Failed(req, ae, nil))
		fmt.Fprintln(a.stdio.Err, "fabric-agent-ctl:", ae.Message)
		return &exitError{code: agentctl.ExitCode(ae.Code)}
	}
	if resp.Status == agentctl.StatusFailed {
		if len(resp.Output) > 0 {
			a.writeRaw(resp.Output)
		} else {
			a.writeJSON(resp)
		}
		fmt.Fprintf(a.stdio.Err, "fabric-agent-ctl: %s\n", resp.Error.Message)
		return &exitError{code: agentctl.ExitCode(resp.Error.Code)}
	}
	a.writeRaw(resp.Output)
	if req.Operation == agentctl.OpInvoke {
		var res struct {
			Status string              `json:"status"`
			Error  *contract.ErrorInfo `json:"error"`
		}
		if json.Unmarshal(resp.Output, &res) == nil && res.Status != contract.StatusSucceeded {
			if res.Error != nil {
				fmt.Fprintf(a.stdio.Err, "fabric-agent-ctl: invocation %s: %s: %s\n", res.Status, res.Error.Code, res.Error.Message)
			}
			return &exitError{code: agentctl.ExitFailed}
		}
	}
	return nil
}

// timeoutFlag registers --timeout.
func timeoutFlag(cmd *cobra.Command, v *float64, what string) {
	cmd.Flags().Float64Var(v, "timeout", 0, what)
}

func (a *app) checkTimeout(cmd *cobra.Command, t float64) error {
	if t < 0 || t > agentctl.MaxTimeoutSeconds || math.IsNaN(t) {
		return a.usage(cmd, "--timeout must be between 0 and %d seconds", agentctl.MaxTimeoutSeconds)
	}
	return nil
}

func lifecycleWait(t float64) time.Duration {
	if t <= 0 {
		return 0 // bounded by the runtime's own lifecycle limits in serve
	}
	return time.Duration(t*float64(time.Second)) + lifecycleMargin
}

func (a *app) startCommand() *cobra.Command {
	var agent, config, baseDir string
	var strict bool
	var timeout float64
	cmd := &cobra.Command{
		Use:   "start --agent NAME --config FILE",
		Short: "Start a runtime in serve; print its RuntimeHandle",
		Long: "Start a runtime for the config FILE (read by serve; a relative path is resolved here first). NAME must be the config's metadata.name.\n" +
			"Prints the RuntimeHandle; its runtime_id addresses the runtime in invoke, check and stop.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.checkTimeout(cmd, timeout); err != nil {
				return err
			}
			abs, err := filepath.Abs(config)
			if err != nil {
				return a.usage(cmd, "--config: %v", err)
			}
			req := &agentctl.Request{Operation: agentctl.OpStart, Agent: agent, Config: abs, Strict: strict, TimeoutSeconds: timeout}
			if baseDir != "" {
				if req.BaseDir, err = filepath.Abs(baseDir); err != nil {
					return a.usage(cmd, "--base-dir: %v", err)
				}
			}
			return a.call(cmd, req, lifecycleWait(timeout))
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "agent name (the config's metadata.name)")
	cmd.Flags().StringVar(&config, "config", "", "FabricConfig file (YAML or JSON)")
	cmd.Flags().StringVar(&baseDir, "base-dir", "", "directory relative config paths resolve against (default: the config file's directory)")
	cmd.Flags().BoolVar(&strict, "strict", false, "treat unknown top-level config keys as errors")
	timeoutFlag(cmd, &timeout, "seconds the start may take (default: the runtime's start limit)")
	_ = cmd.MarkFlagRequired("agent")
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

func (a *app) invokeCommand() *cobra.Command {
	var agent, runtimeID, input, requestFile, requestID string
	var timeout float64
	var stream bool
	cmd := &cobra.Command{
		Use:   "invoke --agent NAME --runtime-id ID [--input TEXT | --request FILE | stdin] [--stream]",
		Short: "Invoke a runtime once; print the RunResult",
		Long: "Send one invocation to a runtime and print its RunResult. The input is --input, a RunRequest JSON file (--request, - for stdin), or the text on stdin.\n" +
			"With --stream, every line of stdout is one compact JSON document: each event as it happens ({\"seq\":N,\"event\":{...}}, with \"dropped\" when records were lost), then the RunResult (or the failure document).\n" +
			"Exit 0 when the invocation succeeded, 1 when it failed or was cancelled, 4 when the runtime is busy with another invocation (runtime_busy) or serve is shutting down (server_stopping).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.checkTimeout(cmd, timeout); err != nil {
				return err
			}
			rr, err := a.readRunRequest(cmd, input, requestFile)
			if err != nil {
				return err
			}
			if requestID != "" {
				rr.RequestID = requestID
			}
			req := &agentctl.Request{Operation: agentctl.OpInvoke, Agent: agent, RuntimeID: runtimeID, Request: &rr, TimeoutSeconds: timeout, Stream: stream}
			if stream {
				a.compact = true
				a.onRecord = func(line []byte) error {
					// {"record":R} -> R, one line as it arrives.
					rec := line[len(`{"record":`) : len(line)-1]
					if _, err := a.stdio.Out.Write(append(rec, '\n')); err != nil {
						return err
					}
					if f, ok := a.stdio.Out.(interface{ Sync() error }); ok {
						_ = f.Sync()
					}
					return nil
				}
			}
			return a.call(cmd, req, lifecycleWait(timeout))
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "agent name")
	cmd.Flags().StringVar(&runtimeID, "runtime-id", "", "runtime id (from start or status); without it, the agent's only runtime (a deployed agent by its name)")
	cmd.Flags().StringVar(&input, "input", "", "input text")
	cmd.Flags().StringVar(&requestFile, "request", "", "RunRequest JSON file (- for stdin)")
	cmd.Flags().StringVar(&requestID, "request-id", "", "request id kept in the result")
	cmd.Flags().BoolVar(&stream, "stream", false, "print each event as it happens (JSON lines), then the RunResult")
	timeoutFlag(cmd, &timeout, "seconds after which the invocation is cancelled (default: the runtime's invoke limit)")
	_ = cmd.MarkFlagRequired("agent")
	return cmd
}

func (a *app) readRunRequest(cmd *cobra.Command, input, requestFile string) (contract.RunRequest, error) {
	var rr contract.RunRequest
	switch {
	case cmd.Flags().Changed("input") && requestFile != "":
		return rr, a.usage(cmd, "give --input or --request, not both")
	case cmd.Flags().Changed("input"):
		rr.Input = input
		return rr, nil
	case requestFile != "":
		var data []byte
		var err error
		if requestFile == "-" {
			a.catchSignals()
			data, err = io.ReadAll(io.LimitReader(a.stdio.In, agentctl.MaxRequestBytes+1))
		} else {
			data, err = readLimited(requestFile, agentctl.MaxRequestBytes+1)
		}
		if err != nil {
			return rr, a.usage(cmd, "read --request: %v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&rr); err != nil {
			return rr, a.usage(cmd, "--request %s is not a RunRequest: %v", requestFile, err)
		}
		return rr, nil
	}
	a.catchSignals()
	data, err := io.ReadAll(io.LimitReader(a.stdio.In, agentctl.MaxRequestBytes+1))
	if err != nil {
		return rr, a.usage(cmd, "read stdin: %v", err)
	}
	text := string(bytes.TrimRight(data, "\n"))
	if text == "" {
		return rr, a.usage(cmd, "no input: give --input, --request or text on stdin")
	}
	rr.Input = text
	return rr, nil
}

func readLimited(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

func (a *app) stopCommand() *cobra.Command {
	var agent, runtimeID string
	var timeout float64
	cmd := &cobra.Command{
		Use:   "stop --agent NAME --runtime-id ID",
		Short: "Stop a runtime; print the RuntimeStopResult",
		Long: "Stop a runtime (a running invocation is cancelled) and print the RuntimeStopResult. Idempotent: a runtime serve does not own (never started, or already stopped) " +
			"gives status already_stopped and exit 0. Exit 1 (stop_failed) when serve could not confirm the host is gone.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.checkTimeout(cmd, timeout); err != nil {
				return err
			}
			return a.call(cmd, &agentctl.Request{Operation: agentctl.OpStop, Agent: agent, RuntimeID: runtimeID, TimeoutSeconds: timeout}, lifecycleWait(timeout))
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "agent name")
	cmd.Flags().StringVar(&runtimeID, "runtime-id", "", "runtime id")
	timeoutFlag(cmd, &timeout, "seconds the stop may wait on the host (default: the runtime's stop limit)")
	_ = cmd.MarkFlagRequired("agent")
	_ = cmd.MarkFlagRequired("runtime-id")
	return cmd
}

func (a *app) checkCommand() *cobra.Command {
	var agent, runtimeID, iface string
	var live, active, ready bool
	var timeout float64
	cmd := &cobra.Command{
		Use:   "check [--agent NAME --runtime-id ID] [--live|--active|--ready] [--timeout S]",
		Short: "Health-check serve or one runtime; print the CheckReport",
		Long: "Without a runtime, check serve itself (scope server): it answers, whether it is shutting down, and whether an earlier cleanup is unconfirmed. " +
			"With --agent and --runtime-id, check that runtime at a level (default live). One deadline (--timeout, default 3 s) covers the whole check.\n" +
			"Exit 0 whenever a report was produced, whatever its outcome (read outcome: passed, failed, unknown, unsupported); 1 when no report could be produced.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.checkTimeout(cmd, timeout); err != nil {
				return err
			}
			level := ""
			n := 0
			for _, l := range []struct {
				on   bool
				name string
			}{{live, contract.LevelLive}, {active, contract.LevelActive}, {ready, contract.LevelReady}} {
				if l.on {
					level, n = l.name, n+1
				}
			}
			switch {
			case n > 1:
				return a.usage(cmd, "give one of --live, --active, --ready")
			case agent == "" && runtimeID != "":
				return a.usage(cmd, "a runtime check needs --agent (and --runtime-id, unless the agent has one runtime); a server check neither")
			case level != "" && agent == "":
				return a.usage(cmd, "a server check takes no level; --%s needs --agent", level)
			}
			wait := 3*time.Second + checkMargin
			if timeout > 0 {
				wait = time.Duration(timeout*float64(time.Second)) + checkMargin
			}
			if iface != "" && agent == "" {
				return a.usage(cmd, "--interface needs --agent")
			}
			return a.call(cmd, &agentctl.Request{Operation: agentctl.OpCheck, Agent: agent, RuntimeID: runtimeID, Level: level, TimeoutSeconds: timeout, Interface: iface}, wait)
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "agent name (alone: the agent's only runtime)")
	cmd.Flags().StringVar(&runtimeID, "runtime-id", "", "runtime id (with --agent)")
	cmd.Flags().StringVar(&iface, "interface", "", "check this harness interface of the runtime (dashboard, api, terminal...) instead of the runtime; its outcome never decides the runtime's check")
	cmd.Flags().BoolVar(&live, "live", false, "the native process or session is observed (default level)")
	cmd.Flags().BoolVar(&active, "active", false, "its request interface answers")
	cmd.Flags().BoolVar(&ready, "ready", false, "its required setup and connections are observed")
	timeoutFlag(cmd, &timeout, "seconds for the whole check (default 3)")
	return cmd
}

func (a *app) statusCommand() *cobra.Command {
	var agent, runtimeID string
	cmd := &cobra.Command{
		Use:   "status [--agent NAME] [--runtime-id ID]",
		Short: "Print serve's state and the runtimes it owns (read-only)",
		Long: "Print one status document: serve's state, the runtimes it owns as RuntimeHandles (plus host_pid, activity, invocations), filtered by --agent and --runtime-id " +
			"(an empty list when nothing matches), and any unconfirmed cleanup. Never changes anything.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.call(cmd, &agentctl.Request{Operation: agentctl.OpStatus, Agent: agent, RuntimeID: runtimeID}, statusDeadline)
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "only runtimes of this agent")
	cmd.Flags().StringVar(&runtimeID, "runtime-id", "", "only this runtime")
	return cmd
}

func (a *app) decideCommand() *cobra.Command {
	var agent, runtimeID, invocationID, requestID string
	var allow, deny bool
	var timeout float64
	cmd := &cobra.Command{
		Use:   "decide --agent NAME --runtime-id ID --invocation-id ID --request-id ID (--allow | --deny)",
		Short: "Answer a permission request a running invocation raised",
		Long: "Answer a permission request (an event of kind permission_request, whose metadata carries invocation_id and request_id) of a running invocation. " +
			"A request nobody answers within its timeout is denied; every decision is recorded as a permission_decision event.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case agent == "" || runtimeID == "" || invocationID == "" || requestID == "":
				return a.usage(cmd, "decide needs --agent, --runtime-id, --invocation-id and --request-id")
			case allow == deny:
				return a.usage(cmd, "give one of --allow, --deny")
			}
			decision := "deny"
			if allow {
				decision = "allow"
			}
			wait := 10*time.Second + checkMargin
			if timeout > 0 {
				wait = time.Duration(timeout*float64(time.Second)) + checkMargin
			}
			return a.call(cmd, &agentctl.Request{Operation: agentctl.OpDecide, Agent: agent, RuntimeID: runtimeID,
				InvocationID: invocationID, RequestID: requestID, Decision: decision, TimeoutSeconds: timeout}, wait)
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "agent name")
	cmd.Flags().StringVar(&runtimeID, "runtime-id", "", "runtime id")
	cmd.Flags().StringVar(&invocationID, "invocation-id", "", "the invocation that raised the request")
	cmd.Flags().StringVar(&requestID, "request-id", "", "the permission request's id")
	cmd.Flags().BoolVar(&allow, "allow", false, "allow the request")
	cmd.Flags().BoolVar(&deny, "deny", false, "deny the request")
	timeoutFlag(cmd, &timeout, "seconds for the decision to be delivered (default 10)")
	return cmd
}
