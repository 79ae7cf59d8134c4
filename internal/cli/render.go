package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
)

// turnRenderer renders one streamed turn for people: the answer's text as
// it streams (stdout), one line per tool call with its outcome, and on a
// terminal a spinner while the harness works without output (stderr). With
// plain set (not a terminal, NO_COLOR, TERM=dumb) it writes no escape
// sequences and no spinner, so the output is stable.
type turnRenderer struct {
	out, err io.Writer
	plain    bool

	mu       sync.Mutex
	streamed strings.Builder // output_delta text written so far
	atBOL    bool            // stdout is at the beginning of a line
	spinning bool
	frame    int
	lastAct  time.Time
	tools    map[string]string // call id -> label, for results
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func newTurnRenderer(out, errw io.Writer, plain bool) *turnRenderer {
	return &turnRenderer{out: out, err: errw, plain: plain, atBOL: true, tools: map[string]string{}, lastAct: time.Now()}
}

// run consumes the stream until the turn ends and returns its result.
func (t *turnRenderer) run(ctx context.Context, s *fabric.Stream) (*contract.RunResult, error) {
	start := time.Now()
	stopSpin := make(chan struct{})
	var spinWG sync.WaitGroup
	if !t.plain {
		spinWG.Go(func() { t.spin(stopSpin) })
	}
	for rec, err := range s.Records(ctx) {
		if err != nil {
			break
		}
		t.event(rec.Event)
	}
	close(stopSpin)
	spinWG.Wait()
	res, err := s.Result(context.WithoutCancel(ctx))
	if err != nil {
		return nil, err
	}
	t.finish(res, time.Since(start))
	return res, nil
}

func (t *turnRenderer) spin(stop <-chan struct{}) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			t.mu.Lock()
			t.clearSpinner()
			t.mu.Unlock()
			return
		case <-tick.C:
			t.mu.Lock()
			if time.Since(t.lastAct) > 300*time.Millisecond && t.atBOL {
				t.frame = (t.frame + 1) % len(spinnerFrames)
				fmt.Fprintf(t.err, "\r\x1b[2K%s working…", spinnerFrames[t.frame])
				t.spinning = true
			}
			t.mu.Unlock()
		}
	}
}

// clearSpinner erases the spinner line. Called with mu held.
func (t *turnRenderer) clearSpinner() {
	if t.spinning {
		fmt.Fprint(t.err, "\r\x1b[2K")
		t.spinning = false
	}
}

func (t *turnRenderer) event(ev contract.FabricEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastAct = time.Now()
	switch ev.Kind {
	case "output_delta":
		if ev.Message == "" {
			return
		}
		t.clearSpinner()
		fmt.Fprint(t.out, ev.Message)
		t.streamed.WriteString(ev.Message)
		t.atBOL = strings.HasSuffix(ev.Message, "\n")
	case "tool_call":
		label := toolLabel(ev)
		if id := toolID(ev); id != "" {
			t.tools[id] = label
		}
		t.line(t.style("36", "→ "+label))
	case "tool_result":
		label := toolLabel(ev)
		if id := toolID(ev); id != "" && t.tools[id] != "" {
			label = t.tools[id]
			delete(t.tools, id)
		}
		ok, detail := toolOutcome(ev)
		mark, color := "✓", "32"
		if !ok {
			mark, color = "✗", "31"
		}
		t.line(t.style(color, "  "+mark+" "+label+detail))
	case "file_change":
		t.line(t.style("35", "✎ "+oneLine(ev.Message, 100)))
	case "warning", "model_retry", "status":
		if ev.Message != "" {
			t.line(t.style("33", "! "+oneLine(ev.Message, 120)))
		}
	}
}

// line writes one line on stderr, after ending a streamed text line.
// Called with mu held.
func (t *turnRenderer) line(s string) {
	t.clearSpinner()
	if !t.atBOL {
		fmt.Fprintln(t.out)
		t.atBOL = true
	}
	fmt.Fprintln(t.err, s)
}

func (t *turnRenderer) style(code, s string) string {
	if t.plain {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// finish completes the answer (the result is authoritative: whatever the
// stream did not show is printed) and writes the closing status line.
func (t *turnRenderer) finish(res *contract.RunResult, took time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	streamed := t.streamed.String()
	out, isText := res.Output.(string)
	switch {
	case res.Output == nil:
	case !isText:
		if !t.atBOL {
			fmt.Fprintln(t.out)
		}
		fmt.Fprintln(t.out, jsonIndent(res.Output))
		t.atBOL = true
	case strings.HasPrefix(out, streamed):
		rest := out[len(streamed):]
		fmt.Fprint(t.out, rest)
		if out != "" && !strings.HasSuffix(out, "\n") {
			fmt.Fprintln(t.out)
		}
		t.atBOL = true
	default:
		if !t.atBOL {
			fmt.Fprintln(t.out)
		}
		fmt.Fprintln(t.out, out)
		t.atBOL = true
	}
	fmt.Fprintln(t.err, statusLine(res, took, t.plain))
}

func statusLine(res *contract.RunResult, took time.Duration, plain bool) string {
	parts := []string{fmt.Sprintf("[%s] %s", res.Status, res.InvocationID), took.Round(time.Millisecond).String()}
	if u := res.Usage; u != nil {
		var tok []string
		if u.InputTokens != nil {
			tok = append(tok, fmt.Sprintf("%d in", *u.InputTokens))
		}
		if u.OutputTokens != nil {
			tok = append(tok, fmt.Sprintf("%d out", *u.OutputTokens))
		}
		if len(tok) > 0 {
			parts = append(parts, "tokens "+strings.Join(tok, " / "))
		}
		if u.CostUSD != nil {
			parts = append(parts, fmt.Sprintf("$%.4f", *u.CostUSD))
		}
	}
	if res.Error != nil {
		parts = append(parts, res.Error.Code+": "+oneLine(res.Error.Message, 160))
	}
	line := strings.Join(parts, " · ")
	if plain {
		return line
	}
	color := "32"
	if res.Status != contract.StatusSucceeded {
		color = "31"
	}
	return "\x1b[" + color + "m" + line + "\x1b[0m"
}

func toolID(ev contract.FabricEvent) string {
	for _, k := range []string{"item_id", "id", "tool_use_id", "call_id"} {
		if s, ok := ev.Metadata[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func toolLabel(ev contract.FabricEvent) string {
	name, _ := ev.Metadata["tool"].(string)
	if name == "" {
		name, _ = ev.Metadata["name"].(string)
	}
	msg := oneLine(ev.Message, 100)
	switch {
	case name == "" || name == msg:
		return msg
	case msg == "":
		return name
	}
	return name + " " + msg
}

func toolOutcome(ev contract.FabricEvent) (ok bool, detail string) {
	ok = true
	if b, _ := ev.Metadata["is_error"].(bool); b {
		ok = false
	}
	if st, _ := ev.Metadata["status"].(string); st == "failed" || st == "declined" {
		ok = false
	}
	if code, has := ev.Metadata["exit_code"]; has {
		detail = fmt.Sprintf(" (exit %v)", code)
		if f, isNum := code.(float64); isNum && f != 0 {
			ok = false
		}
	}
	return ok, detail
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max-1] + "…"
	}
	return s
}
