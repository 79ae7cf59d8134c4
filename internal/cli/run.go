package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
)

func (a *app) runCommand() *cobra.Command {
	var cf configFlags
	var input, requestFile string
	var progress bool
	cmd := &cobra.Command{
		Use:   "run CONFIG [--input TEXT | --request FILE]",
		Short: "Start a runtime, invoke it once, stop it, and print the RunResult",
		Long: "Start a runtime for CONFIG, invoke it once and stop it. The input comes from --input, from a RunRequest JSON file (--request), or from stdin.\n" +
			"With --output json (the default when stdout is not a terminal) the RunResult is printed; with text (the default on a terminal), the turn as it streams and a status line. Exit status 0 when the invocation succeeded, 1 otherwise, 2 on usage errors.",
		Args:        cobra.ExactArgs(1),
		Annotations: map[string]string{terminalOutput: "text"},
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := a.readRequest(cmd, input, requestFile)
			if err != nil {
				return err
			}
			l, err := a.client().LoadConfig(args[0], cf.loadOptions())
			if err != nil {
				return a.failure(err)
			}
			for _, w := range l.Warnings {
				fmt.Fprintf(a.stdio.Err, "warning: %s: %s\n", w.Path, w.Message)
			}
			rt, err := a.client().StartRuntime(cmd.Context(), l)
			if err != nil {
				return a.failure(err)
			}
			var res *contract.RunResult
			var invErr error
			switch {
			case a.output == "jsonl":
				res, invErr = a.streamTurn(cmd.Context(), rt, req)
			case a.output == "text":
				var s *fabric.Stream
				if s, invErr = rt.InvokeStream(cmd.Context(), req); invErr == nil {
					res, invErr = newTurnRenderer(a.stdio.Out, a.stdio.Err, plainTerminal(a.stdio.Err)).run(cmd.Context(), s)
				}
			default:
				var events func(contract.FabricEvent)
				if progress || isTerminal(a.stdio.Err) {
					events = a.progressPrinter()
				}
				res, invErr = rt.InvokeRequest(cmd.Context(), req, events)
			}
			_, stopErr := rt.Stop(context.WithoutCancel(cmd.Context()))
			if invErr != nil {
				return a.failure(invErr)
			}
			if a.output != "text" { // the renderer has written the turn
				if err := a.printResult(res); err != nil {
					return err
				}
			}
			if stopErr != nil {
				fmt.Fprintln(a.stdio.Err, "warning: stop:", stopErr)
			}
			if res.Status != contract.StatusSucceeded {
				return silentExit(ExitFailure)
			}
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&input, "input", "", "input text")
	cmd.Flags().StringVar(&requestFile, "request", "", "RunRequest JSON file (- for stdin)")
	cmd.Flags().BoolVar(&progress, "progress", false, "print live events to stderr even when it is not a terminal")
	return cmd
}

func (a *app) readRequest(cmd *cobra.Command, input, requestFile string) (contract.RunRequest, error) {
	var req contract.RunRequest
	switch {
	case input != "" && requestFile != "":
		return req, &exitError{code: ExitUsage, err: fmt.Errorf("give --input or --request, not both")}
	case cmd.Flags().Changed("input"):
		req.Input = input
		return req, nil
	case requestFile != "":
		var data []byte
		var err error
		if requestFile == "-" {
			data, err = io.ReadAll(io.LimitReader(a.stdio.In, 16<<20))
		} else {
			data, err = os.ReadFile(requestFile)
		}
		if err != nil {
			return req, &exitError{code: ExitUsage, err: fmt.Errorf("read --request: %w", err)}
		}
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			return req, &exitError{code: ExitUsage, err: fmt.Errorf("--request %s is not a RunRequest: %w", requestFile, err)}
		}
		return req, nil
	}
	data, err := io.ReadAll(io.LimitReader(a.stdio.In, 16<<20))
	if err != nil {
		return req, err
	}
	text := strings.TrimRight(string(data), "\n")
	if text == "" {
		return req, &exitError{code: ExitUsage, err: fmt.Errorf("no input: give --input, --request or text on stdin")}
	}
	req.Input = text
	return req, nil
}

// streamTurn runs one invocation through InvokeStream, writing each record
// as one JSON line ({"seq":N,"event":{...}}) as it happens; the caller
// writes the result as the last line.
func (a *app) streamTurn(ctx context.Context, rt *fabric.Runtime, req contract.RunRequest) (*contract.RunResult, error) {
	s, err := rt.InvokeStream(ctx, req)
	if err != nil {
		return nil, err
	}
	enc := json.NewEncoder(a.stdio.Out)
	enc.SetEscapeHTML(false)
	for rec, err := range s.Records(ctx) {
		if err != nil {
			break // ctx ended: the turn is cancelled; its result follows
		}
		if err := enc.Encode(rec); err != nil {
			s.Close() // stdout is gone; the turn goes on to its result
			break
		}
	}
	return s.Result(context.WithoutCancel(ctx))
}

func (a *app) printResult(res *contract.RunResult) error {
	if a.output == "jsonl" {
		return a.writeJSON(map[string]any{"result": res})
	}
	if a.output == "json" {
		return a.writeJSON(res)
	}
	if s, ok := res.Output.(string); ok {
		fmt.Fprintln(a.stdio.Out, s)
	} else if res.Output != nil {
		b, _ := json.MarshalIndent(res.Output, "", "  ")
		fmt.Fprintln(a.stdio.Out, string(b))
	}
	line := fmt.Sprintf("[%s] %s", res.Status, res.InvocationID)
	if res.Error != nil {
		line += fmt.Sprintf(" %s: %s", res.Error.Code, res.Error.Message)
	}
	if u := res.Usage; u != nil && u.TotalTokens != nil {
		line += fmt.Sprintf(" tokens=%d", *u.TotalTokens)
	}
	fmt.Fprintln(a.stdio.Err, line)
	return nil
}

func (a *app) progressPrinter() func(contract.FabricEvent) {
	return func(ev contract.FabricEvent) {
		msg := ev.Message
		if len(msg) > 120 {
			msg = msg[:117] + "..."
		}
		fmt.Fprintf(a.stdio.Err, "· %s %s\n", ev.Kind, strings.ReplaceAll(msg, "\n", " "))
	}
}

// plainTerminal reports whether w should get plain output: not a
// terminal, NO_COLOR set, or TERM=dumb.
func plainTerminal(w io.Writer) bool {
	if _, ok := os.LookupEnv("NO_COLOR"); ok || os.Getenv("TERM") == "dumb" {
		return true
	}
	return !isTerminal(w)
}

func jsonIndent(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (a *app) chatCommand() *cobra.Command {
	var cf configFlags
	cmd := &cobra.Command{
		Use:         "chat CONFIG",
		Short:       "Hold one runtime for a multi-turn conversation at a prompt",
		Long:        "Start one runtime and send each line read from stdin as an invocation; print each answer (text on a terminal, each RunResult as JSON otherwise). End with EOF or /quit; the runtime is stopped on exit.",
		Args:        cobra.ExactArgs(1),
		Annotations: map[string]string{terminalOutput: "text"},
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := a.client().LoadConfig(args[0], cf.loadOptions())
			if err != nil {
				return a.failure(err)
			}
			rt, err := a.client().StartRuntime(cmd.Context(), l)
			if err != nil {
				return a.failure(err)
			}
			defer rt.Stop(context.WithoutCancel(cmd.Context()))
			interactive := isTerminal(a.stdio.Out)
			sc := bufio.NewScanner(a.stdio.In)
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			failed := false
			for {
				if interactive {
					fmt.Fprint(a.stdio.Out, "> ")
				}
				if !sc.Scan() {
					break
				}
				line := strings.TrimSpace(sc.Text())
				if line == "" {
					continue
				}
				if line == "/quit" || line == "/exit" {
					break
				}
				res, err := rt.Invoke(cmd.Context(), line)
				if err != nil {
					return a.failure(err)
				}
				if err := a.printResult(res); err != nil {
					return err
				}
				failed = failed || res.Status != contract.StatusSucceeded
				if cmd.Context().Err() != nil {
					break
				}
			}
			if failed {
				return silentExit(ExitFailure)
			}
			return nil
		},
	}
	cf.register(cmd)
	return cmd
}
