package modelstub

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// answer is the reply chosen for one request, independent of its API.
type answer struct {
	rule     int
	ruleName string
	kind     string // text, tool_call, error, structured, side_text
	chunks   []string
	interval time.Duration
	call     *call
	err      *ErrorReply
	stall    bool
	stallFor time.Duration // 0 with stall: until the client or the server goes
}

func (a *answer) text() string { return strings.Join(a.chunks, "") }

// call is a tool call in an answer.
type call struct {
	name string
	kind string // function, or local_shell
	args map[string]any
	// namespace is set for a function of a Responses namespace tool (name
	// is then its name within the namespace).
	namespace string
}

func (c *call) argsJSON() string {
	b, err := json.Marshal(c.args)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// appliesTo reports whether a rule is consulted for a main (side false) or
// side request.
func (m *Match) appliesTo(side bool) bool {
	if m.Side != nil {
		return *m.Side == side
	}
	if side {
		return m.Path != ""
	}
	return true
}

// decide picks the answer: the first rule that matches and may fire, else
// the side-request answer, else the default. Every rule whose conditions
// hold counts the request (for nth), whichever rule answers.
func (s *Server) decide(x *exchange, side bool) *answer {
	v, ep := x.v, x.ep
	s.mu.Lock()
	sc := s.script
	winner := -1
	var wcall *call
	for i := range sc.Rules {
		r := &sc.Rules[i]
		m := &r.Match
		if !m.appliesTo(side) ||
			(m.API != "" && m.API != ep.api) ||
			(m.Model != "" && m.Model != v.model) ||
			(m.Path != "" && !strings.Contains(x.r.URL.Path, m.Path)) ||
			(m.Contains != "" && !strings.Contains(v.userText, m.Contains)) {
			continue
		}
		var c *call
		if tc := r.Reply.ToolCall; tc != nil && r.Reply.Error == nil {
			if ep.count || v.toolResult {
				continue
			}
			t, ok := v.pickTool(tc.Tool)
			if !ok {
				continue
			}
			c = buildCall(t, tc)
		}
		s.seen[i]++
		if (m.Nth > 0 && s.seen[i] != m.Nth) || (m.Times > 0 && s.fired[i] >= m.Times) {
			continue
		}
		if winner < 0 {
			winner, wcall = i, c
		}
	}
	var reply *Reply
	a := &answer{rule: winner}
	if winner >= 0 {
		s.fired[winner]++
		rp := sc.Rules[winner].Reply.clone()
		reply = &rp
		a.ruleName = sc.Rules[winner].Name
	}
	var def *Reply
	if sc.Default != nil {
		d := sc.Default.clone()
		def = &d
	}
	sideText := sc.SideText
	s.mu.Unlock()

	fallback := DefaultText
	if def != nil && def.Text != "" {
		fallback = def.Text
	}
	switch {
	case reply != nil:
		a.fill(reply, wcall, fallback)
	case side:
		a.kind = "side_text"
		text := sideText
		if text == "" {
			text = DefaultSideText
		}
		switch {
		case len(v.tools) == 1 && v.forcedTool:
			t := v.tools[0]
			args, _ := exampleValue(t.schema, "", "", 0).(map[string]any)
			if args == nil {
				args = map[string]any{}
			}
			a.kind, a.call = "structured", &call{name: t.name, kind: "function", args: args}
			text = ""
		case v.json:
			a.kind = "structured"
			text = "{}"
			if v.schema != nil {
				if b, err := json.Marshal(exampleValue(v.schema, "", "", 0)); err == nil {
					text = string(b)
				}
			}
		}
		if text != "" {
			a.chunks = []string{text}
		}
	case def != nil:
		a.fill(def, nil, DefaultText)
	default:
		a.kind = "text"
		a.chunks = []string{DefaultText}
	}
	return a
}

func buildCall(t tool, tc *ToolCall) *call {
	if t.kind == "local_shell" {
		args := map[string]any{"command": []any{"bash", "-lc", tc.Command}}
		if tc.Workdir != "" {
			args["working_directory"] = tc.Workdir
		}
		for k, v := range tc.Args {
			args[k] = cloneJSONValue(v)
		}
		return &call{name: t.name, kind: t.kind, args: args}
	}
	if t.namespace != "" {
		return &call{name: t.local, kind: "function", args: shellArgs(t, tc), namespace: t.namespace}
	}
	return &call{name: t.name, kind: "function", args: shellArgs(t, tc)}
}

func (a *answer) fill(r *Reply, c *call, fallback string) {
	a.stall = r.Stall || r.StallMS > 0
	a.stallFor = time.Duration(r.StallMS) * time.Millisecond
	a.interval = time.Duration(r.IntervalMS) * time.Millisecond
	switch {
	case r.Error != nil:
		a.kind, a.err = "error", r.Error
		return
	case c != nil:
		a.kind, a.call = "tool_call", c
	default:
		a.kind = "text"
	}
	text := r.Text
	if text == "" && c == nil {
		text = fallback
	}
	if text != "" {
		a.chunks = splitText(text, max(r.Chunks, 1))
	}
}

// splitText cuts text into n pieces of nearly equal rune counts (fewer when
// the text is shorter than n runes).
func splitText(text string, n int) []string {
	runes := utf8.RuneCountInString(text)
	if n > runes {
		n = runes
	}
	if n <= 1 {
		return []string{text}
	}
	out := make([]string, 0, n)
	rs := []rune(text)
	for i := 0; i < n; i++ {
		out = append(out, string(rs[i*len(rs)/n:(i+1)*len(rs)/n]))
	}
	return out
}

var (
	errClientGone   = errors.New("client went away")
	errServerClosed = errors.New("server closed")
)

// pause waits d (forever when d is 0 and forever is set), or until the
// client goes away or the server closes.
func (x *exchange) pause(d time.Duration, forever bool) error {
	if d <= 0 && !forever {
		return nil
	}
	var tick <-chan time.Time
	if !forever {
		t := time.NewTimer(d)
		defer t.Stop()
		tick = t.C
	}
	select {
	case <-tick:
		return nil
	case <-x.r.Context().Done():
		return errClientGone
	case <-x.s.done:
		return errServerClosed
	}
}

// abort records why the exchange ended early and drops the connection
// without a (further) response.
func (x *exchange) abort(err error) {
	outcome := "client_gone"
	if errors.Is(err, errServerClosed) {
		outcome = "server_closed"
	}
	wrote := x.wrote
	x.s.update(x.rec, func(r *Request) {
		r.Outcome = outcome
		if !wrote {
			r.Status = 0
		}
	})
	panic(http.ErrAbortHandler)
}

// tokens estimates a token count the way the stub reports usage: about
// four bytes a token, at least one.
func tokens(n int) int { return max(1, (n+3)/4) }

func (x *exchange) inputTokens() int { return tokens(len(x.body)) }

func (a *answer) outputTokens() int {
	n := len(a.text())
	if a.call != nil {
		n += len(a.call.argsJSON())
	}
	return tokens(n)
}

// answer sends the chosen answer in the endpoint's API format.
func (x *exchange) answer(a *answer) {
	x.rec.Rule, x.rec.RuleName = a.rule, a.ruleName
	status := http.StatusOK
	if a.err != nil {
		status = a.err.Status
	}
	kind := a.kind
	if x.ep.count && a.err == nil {
		kind = "count"
	}
	x.finishRecord(kind, status)
	if a.stall {
		if err := x.pause(a.stallFor, a.stallFor == 0); err != nil {
			x.abort(err)
		}
	}
	if a.err != nil {
		for k, v := range a.err.Headers {
			x.w.Header().Set(k, v)
		}
		x.writeError(x.ep.api, a.err.Status, a.err.Message, a.err.Type, a.err.RetryAfter)
		return
	}
	if x.ep.count {
		x.setIDHeaders()
		x.wrote = true
		n := x.inputTokens()
		if x.ep.api == APIGemini {
			writeJSON(x.w, http.StatusOK, map[string]any{"totalTokens": n})
		} else {
			writeJSON(x.w, http.StatusOK, map[string]any{"input_tokens": n})
		}
		return
	}
	if !x.v.stream && len(a.chunks) > 1 {
		if err := x.pause(time.Duration(len(a.chunks)-1)*a.interval, false); err != nil {
			x.abort(err)
		}
	}
	model := x.v.model
	if model == "" {
		model = "stub-model"
	}
	switch x.ep.api {
	case APIChat:
		x.chat(a, model)
	case APIResponses:
		x.responses(a, model)
	case APIMessages:
		x.messages(a, model)
	case APIGemini:
		x.gemini(a, model)
	}
}

// sse writes server-sent events, flushing each one.
type sse struct {
	x  *exchange
	rc *http.ResponseController
}

func (x *exchange) startSSE() *sse {
	h := x.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	x.setIDHeaders()
	x.w.WriteHeader(http.StatusOK)
	x.wrote = true
	e := &sse{x: x, rc: http.NewResponseController(x.w)}
	_ = e.rc.Flush()
	return e
}

// send writes one event; an empty name writes a data-only event.
func (e *sse) send(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		b = []byte(`{}`)
	}
	var buf strings.Builder
	if name != "" {
		buf.WriteString("event: ")
		buf.WriteString(name)
		buf.WriteString("\n")
	}
	buf.WriteString("data: ")
	buf.Write(b)
	buf.WriteString("\n\n")
	e.raw(buf.String())
}

func (e *sse) raw(s string) {
	if _, err := io.WriteString(e.x.w, s); err != nil {
		e.x.abort(errClientGone)
	}
	if err := e.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		e.x.abort(errClientGone)
	}
}

// wait pauses between chunks.
func (e *sse) wait(d time.Duration) {
	if err := e.x.pause(d, false); err != nil {
		e.x.abort(err)
	}
}

func (x *exchange) writeOK(v any) {
	x.setIDHeaders()
	x.wrote = true
	writeJSON(x.w, http.StatusOK, v)
}
