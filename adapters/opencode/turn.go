package opencode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
)

// Invoke runs one turn on the runtime's session: it subscribes to /event,
// posts the input with prompt_async and follows the session's events until
// it is idle again. A cancelled invocation aborts the session's turn.
func (s *session) Invoke(ctx context.Context, inv adapterkit.Invocation) (contract.AgentRunResult, error) {
	defer s.srv.Busy()()
	if res, ok, err := s.srv.CanTurn(ctx); !ok {
		return res, err
	}
	turnNo := s.turns.Add(1)
	md := map[string]any{"turn": turnNo, "session_id": s.sessionID}

	// The stream outlives ctx so that a cancelled turn sees its end.
	streamCtx, stopStream := context.WithCancel(context.WithoutCancel(ctx))
	defer stopStream()
	events, err := s.subscribe(streamCtx)
	if err != nil {
		return s.transportFailure(md, fmt.Errorf("subscribe to events: %w", err))
	}
	defer events.close()
	// The server has subscribed this client once server.connected arrives.
	if err := events.awaitConnected(ctx, s.set.RequestTimeout); err != nil {
		if ctx.Err() != nil {
			return contract.AgentRunResult{Status: contract.StatusCancelled}, nil
		}
		return s.transportFailure(md, err)
	}

	body := map[string]any{
		"agent": s.set.Agent,
		"model": map[string]any{"providerID": providerID, "modelID": s.model.Name},
		"parts": []any{map[string]any{"type": "text", "text": adapterkit.InputText(inv.Request.Input)}},
	}
	if err := s.request(ctx, http.MethodPost, "/session/"+s.sessionID+"/prompt_async", body, nil); err != nil {
		if ctx.Err() != nil {
			s.abort(ctx)
			return contract.AgentRunResult{Status: contract.StatusCancelled}, nil
		}
		return s.transportFailure(md, err)
	}

	t := newTurn(s.sessionID)
	for {
		select {
		case <-ctx.Done():
			s.abort(ctx)
			wait := time.NewTimer(abortWait)
			defer wait.Stop()
			for {
				select {
				case ev, ok := <-events.ch:
					if !ok || t.apply(ev, nil) {
						return t.result(contract.StatusCancelled, md), nil
					}
				case <-wait.C:
					return t.result(contract.StatusCancelled, md), nil
				}
			}
		case <-s.srv.Proc.Done():
			return contract.AgentRunResult{}, s.srv.Exited("exited during the turn")
		case ev, ok := <-events.ch:
			if !ok {
				err := events.err()
				if !s.srv.Running() {
					return contract.AgentRunResult{}, s.srv.Exited("exited during the turn")
				}
				return s.transportFailure(md, fmt.Errorf("the event stream ended during the turn: %w", err))
			}
			if t.apply(ev, func(e adapterkit.Event) {
				e.Message = s.scrub(e.Message)
				inv.Events.Emit(e)
			}) {
				res := t.result(contract.StatusSucceeded, md)
				if u := res.Usage; u != nil {
					inv.Events.Emit(adapterkit.Event{Kind: eventUsage, Metadata: map[string]any{
						"input_tokens": *u.InputTokens, "output_tokens": *u.OutputTokens, "total_tokens": *u.TotalTokens,
					}})
				}
				if res.Error != nil {
					res.Error.Message = s.scrub(res.Error.Message)
				}
				res.Output = s.scrub(res.Output.(string))
				return res, nil
			}
		}
	}
}

// transportFailure is a turn that failed because the server could not be
// reached or answered unexpectedly.
func (s *session) transportFailure(md map[string]any, err error) (contract.AgentRunResult, error) {
	msg := s.scrub(err.Error())
	if he, ok := errors.AsType[*httpError](err); ok {
		md["http_status"] = he.Status
	}
	return contract.AgentRunResult{Status: contract.StatusFailed, Output: "",
		Error: &contract.AgentRunError{Code: CodeTurnFailed, Message: msg, Extensions: md}}, nil
}

// abort asks the server to end the session's running turn.
func (s *session) abort(ctx context.Context) {
	if err := s.request(context.WithoutCancel(ctx), http.MethodPost, "/session/"+s.sessionID+"/abort", nil, nil); err != nil {
		s.log.Warn("opencode: abort failed", "runtime_id", s.runtimeID, "error", s.scrub(err.Error()))
	}
}

// eventStream is one subscription to /event.
type eventStream struct {
	ch   chan event
	body io.Closer
	wg   sync.WaitGroup
	mu   sync.Mutex
	last error
}

// subscribe opens GET /event; a goroutine (joined by close) decodes its
// events into ch, which is closed at the stream's end.
func (s *session) subscribe(ctx context.Context) (*eventStream, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/event", nil)
	if err != nil {
		return nil, err
	}
	req.SetBasicAuth(username, s.password)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := s.stream.Do(req) // response headers bounded by ResponseHeaderTimeout
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, &httpError{Method: http.MethodGet, Path: "/event", Status: resp.StatusCode}
	}
	es := &eventStream{ch: make(chan event, 256), body: resp.Body}
	es.wg.Go(func() {
		defer close(es.ch)
		r := newSSEReader(resp.Body)
		for {
			data, err := r.Next()
			if err != nil {
				es.mu.Lock()
				es.last = err
				es.mu.Unlock()
				return
			}
			ev, err := parseEvent(data)
			if err != nil {
				continue // an event the adapter cannot read is not its business
			}
			select {
			case es.ch <- ev:
			case <-ctx.Done():
				return
			}
		}
	})
	return es, nil
}

func (es *eventStream) err() error {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.last == nil {
		return io.EOF
	}
	return es.last
}

// awaitConnected waits for server.connected, at most d.
func (es *eventStream) awaitConnected(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case ev, ok := <-es.ch:
			if !ok {
				return fmt.Errorf("the event stream ended before server.connected: %w", es.err())
			}
			if ev.Type == "server.connected" {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return fmt.Errorf("no server.connected event within %s", d)
		}
	}
}

// close ends the subscription and joins its goroutine.
func (es *eventStream) close() {
	es.body.Close()
	for range es.ch { // drain so the goroutine can exit
	}
	es.wg.Wait()
}

// turn accumulates one turn's events.
type turn struct {
	sessionID string
	busy      bool
	roles     map[string]string // message id -> role
	msgOrder  []string          // assistant messages, in order
	texts     map[string]*strings.Builder
	partOrder map[string][]string  // message id -> text part ids
	tools     map[string]string    // call id -> status emitted
	tokens    map[string]sseTokens // step-finish part id -> tokens
	errMsg    *messageError
}

func newTurn(sessionID string) *turn {
	return &turn{
		sessionID: sessionID, roles: map[string]string{}, texts: map[string]*strings.Builder{},
		partOrder: map[string][]string{}, tools: map[string]string{}, tokens: map[string]sseTokens{},
	}
}

func (t *turn) text(msgID, partID string) *strings.Builder {
	b, ok := t.texts[partID]
	if !ok {
		b = &strings.Builder{}
		t.texts[partID] = b
		t.partOrder[msgID] = append(t.partOrder[msgID], partID)
	}
	return b
}

// apply takes one event of the stream; emit (nil: none) receives the
// events the adapter reports. It returns true once the session is idle
// after having been busy (the turn's end), or after a session error.
func (t *turn) apply(ev event, emit func(adapterkit.Event)) bool {
	p := ev.Properties
	sid := p.SessionID
	if sid == "" && p.Part != nil {
		sid = p.Part.SessionID
	}
	if sid != t.sessionID {
		return false
	}
	if emit == nil {
		emit = func(adapterkit.Event) {}
	}
	switch ev.Type {
	case "session.status":
		if p.Status != nil {
			switch p.Status.Type {
			case "busy", "retry":
				t.busy = true
			case "idle":
				return t.busy
			}
		}
	case "session.idle":
		return t.busy
	case "session.error":
		// The session's turn ran (and failed): the idle that follows ends
		// it even if its busy status was never seen.
		t.busy = true
		if p.Error != nil && p.Error.Name != "MessageAbortedError" {
			t.errMsg = p.Error
		}
	case "message.updated":
		if i := p.Info; i != nil && i.ID != "" {
			if _, seen := t.roles[i.ID]; !seen && i.Role == "assistant" {
				t.msgOrder = append(t.msgOrder, i.ID)
			}
			t.roles[i.ID] = i.Role
			if i.Role == "assistant" && i.Error != nil && i.Error.Name != "MessageAbortedError" {
				t.errMsg = i.Error
			}
		}
	case "message.part.delta":
		if p.Field != "text" || p.Delta == "" || t.roles[p.MessageID] == "user" {
			return false
		}
		if _, ok := t.texts[p.PartID]; !ok {
			// Deltas of parts the turn has not seen (reasoning parts are
			// announced by message.part.updated first).
			return false
		}
		t.text(p.MessageID, p.PartID).WriteString(p.Delta)
		kind := eventOutputDelta
		if t.roles["reasoning:"+p.PartID] == "reasoning" {
			kind = eventReasoningDelta
		}
		if t.roles[p.MessageID] == "assistant" {
			emit(adapterkit.Event{Kind: kind, Message: p.Delta})
		}
	case "message.part.updated":
		part := p.Part
		if part == nil || t.roles[part.MessageID] == "user" {
			return false
		}
		switch part.Type {
		case "text":
			b := t.text(part.MessageID, part.ID)
			if part.Text != "" || b.Len() == 0 {
				b.Reset()
				b.WriteString(part.Text)
			}
		case "reasoning":
			t.roles["reasoning:"+part.ID] = "reasoning"
			t.texts[part.ID] = &strings.Builder{} // not part of the answer
		case "tool":
			st := part.State
			if st == nil {
				return false
			}
			switch st.Status {
			case "running", "completed", "error":
				if t.tools[part.CallID] == "" {
					t.tools[part.CallID] = "called"
					emit(adapterkit.Event{Kind: eventToolCall, Message: part.Tool, Metadata: map[string]any{
						"tool_name": part.Tool, "call_id": part.CallID, "arguments": cut(string(st.Input), 2000)}})
				}
				if (st.Status == "completed" || st.Status == "error") && t.tools[part.CallID] != "done" {
					t.tools[part.CallID] = "done"
					out := st.Output
					if st.Status == "error" {
						out = st.Error
					}
					emit(adapterkit.Event{Kind: eventToolResult, Message: part.Tool, Metadata: map[string]any{
						"tool_name": part.Tool, "call_id": part.CallID, "is_error": st.Status == "error", "output": cut(out, 2000)}})
				}
			}
		case "step-finish":
			if part.Tokens != nil {
				t.tokens[part.ID] = *part.Tokens
			}
		}
	}
	return false
}

// answer is the text of the turn's last assistant message with text.
func (t *turn) answer() string {
	for i := len(t.msgOrder) - 1; i >= 0; i-- {
		var b strings.Builder
		for _, pid := range t.partOrder[t.msgOrder[i]] {
			if t.roles["reasoning:"+pid] == "reasoning" {
				continue
			}
			b.WriteString(t.texts[pid].String())
		}
		if s := strings.TrimSpace(b.String()); s != "" {
			return b.String()
		}
	}
	return ""
}

// result is the turn's result with the given status (succeeded becomes
// failed when the turn had an error or no answer).
func (t *turn) result(status string, md map[string]any) contract.AgentRunResult {
	res := contract.AgentRunResult{Status: status, Output: t.answer()}
	if len(t.tokens) > 0 {
		var in, out, total uint64
		for _, tk := range t.tokens {
			in, out, total = in+uint64(max(tk.Input, 0)), out+uint64(max(tk.Output, 0)), total+uint64(max(tk.Total, 0))
		}
		res.Usage = &contract.RunUsage{InputTokens: &in, OutputTokens: &out, TotalTokens: &total}
	}
	if status != contract.StatusSucceeded {
		return res
	}
	switch {
	case t.errMsg != nil:
		res.Status = contract.StatusFailed
		code := CodeTurnFailed
		if t.errMsg.Name == "APIError" || t.errMsg.Data.StatusCode != 0 {
			code = CodeModelError
			md["http_status"] = t.errMsg.Data.StatusCode
		}
		res.Error = &contract.AgentRunError{Code: code, Message: t.errMsg.String(), Extensions: md}
	case strings.TrimSpace(res.Output.(string)) == "":
		res.Status = contract.StatusFailed
		res.Error = &contract.AgentRunError{Code: CodeTurnFailed, Message: "the OpenCode agent finished the turn without an answer", Extensions: md}
	}
	return res
}
