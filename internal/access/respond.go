package access

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// respond answers a create request with its turn: a stream from 0, the
// current snapshot (background), or the final result.
func (g *Gateway) respond(w http.ResponseWriter, r *http.Request, p *principal, t *turn, req *createRequest, surface string, replayed bool) {
	if !replayed && t.onDisconnect == OnDisconnectCancel && !req.Background {
		// Only the connection that created the turn may end it by leaving.
		defer func() {
			if r.Context().Err() != nil {
				select {
				case <-t.done:
				default:
					t.cancel()
				}
			}
		}()
	}
	var chat *chatStream
	if surface == surfaceChat {
		chat = &chatStream{id: "chatcmpl-" + t.id, created: t.created.Unix(), model: t.agent, includeUsage: req.IncludeUsage}
	}
	switch {
	case req.Stream:
		g.stream(w, r, p, t, -1, chat)
	case req.Background && surface == surfaceResponses:
		writeJSON(w, 200, t.snapshot().standard())
	default:
		var wait <-chan time.Time
		if replayed {
			tm := time.NewTimer(g.opts.RetryWait)
			defer tm.Stop()
			wait = tm.C
		}
		select {
		case <-t.done:
		case <-wait:
			writeError(w, &apiError{status: 409, typ: "conflict_error", code: "idempotency_in_progress", retry: true, retryAfter: time.Second,
				message: "the request with this Idempotency-Key is still running"})
			return
		case <-r.Context().Done():
			return
		}
		snap := t.snapshot()
		if chat != nil {
			chat.writeCompletion(w, snap)
			return
		}
		writeJSON(w, 200, snap.standard())
	}
}

// stream serves a turn's events after sequence number after, then follows
// it live until its terminal event, with keep-alives; a revoked or
// replaced key ends it.
func (g *Gateway) stream(w http.ResponseWriter, r *http.Request, p *principal, t *turn, after int, chat *chatStream) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(200)
	rc := http.NewResponseController(w)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
		_, err := w.Write(b)
		return err == nil
	}
	flush := func() bool { return rc.Flush() == nil }
	if !flush() {
		return
	}
	watch, unwatch := g.watchKey(p.g.keyID)
	defer unwatch()
	if code := g.stillValid(p); code != "" {
		g.endFrame(write, flush, code, after+1, chat)
		return
	}
	ping := time.NewTicker(g.opts.PingInterval)
	defer ping.Stop()
	next := after + 1
	for {
		evs, final, notify := t.since(next)
		for _, e := range evs {
			var frame []byte
			if chat != nil {
				frame = chat.frame(e)
			} else {
				frame = sseFrame(e)
			}
			if len(frame) > 0 && !write(frame) {
				return
			}
		}
		next += len(evs)
		if final {
			write([]byte("data: [DONE]\n\n"))
			flush()
			return
		}
		if len(evs) > 0 && !flush() {
			return
		}
		select {
		case <-notify:
		case <-ping.C:
			if code := g.stillValid(p); code != "" {
				g.endFrame(write, flush, code, next, chat)
				return
			}
			if !write([]byte(": ping\n\n")) || !flush() {
				return
			}
		case <-watch.ended:
			g.endFrame(write, flush, watch.reason, next, chat)
			return
		case <-r.Context().Done():
			return
		}
	}
}

func sseFrame(e event) []byte {
	b := make([]byte, 0, len(e.data)+len(e.typ)+16)
	b = append(b, "event: "...)
	b = append(b, e.typ...)
	b = append(b, "\ndata: "...)
	b = append(b, e.data...)
	return append(b, "\n\n"...)
}

// endFrame tells a stream's client why the gateway ends it (an error
// event, not part of the response's log), then closes.
func (g *Gateway) endFrame(write func([]byte) bool, flush func() bool, code string, seq int, chat *chatStream) {
	msg := map[string]string{"token_revoked": "this key was revoked", "token_expired": "this key has expired",
		"agent_replaced": "the agent of this key was replaced", "operation_not_allowed": "this key's client is no longer allowed"}[code]
	var b []byte
	if chat != nil {
		b, _ = json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "authentication_error", "code": code, "param": nil}})
	} else {
		b, _ = json.Marshal(map[string]any{"type": "error", "code": code, "message": msg, "param": nil, "sequence_number": seq})
		b = append([]byte("event: error\n"), append([]byte("data: "), b...)...)
		write(append(b, "\n\n"...))
		flush()
		return
	}
	write(append(append([]byte("data: "), b...), "\n\n"...))
	flush()
}

// handleRetrieve is GET /v1/responses/{id}: the snapshot, or its stream
// replayed after starting_after and followed live. It never dispatches.
func (g *Gateway) handleRetrieve(w http.ResponseWriter, r *http.Request) {
	p, body, ok := g.authenticatedBody(w, r)
	if !ok {
		return
	}
	opts, e := decodeRetrieve(r.URL.Query(), r.Header.Get("Accept"), body)
	if e != nil {
		writeError(w, e)
		return
	}
	t, e := g.find(r.Context(), p, r.PathValue("id"))
	if e != nil {
		writeError(w, e)
		return
	}
	if !opts.Stream {
		writeJSON(w, 200, t.snapshot().standard())
		return
	}
	if t.expired {
		writeError(w, badRequest("response_stream_expired", "stream", "this response can no longer be streamed: its resume window has passed"))
		return
	}
	g.stream(w, r, p, t, opts.After, nil)
}

// handleCancel is POST /v1/responses/{id}/cancel: idempotent; it returns
// the final Response (a finished one unchanged).
func (g *Gateway) handleCancel(w http.ResponseWriter, r *http.Request) {
	p, ok := g.authenticate(w, r)
	if !ok {
		return
	}
	t, e := g.find(r.Context(), p, r.PathValue("id"))
	if e != nil {
		writeError(w, e)
		return
	}
	t.cancel()
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	select {
	case <-t.done:
	case <-ctx.Done():
	}
	writeJSON(w, 200, t.snapshot().standard())
}

// chatStream renders a turn's events as Chat Completions chunks.
type chatStream struct {
	id           string
	created      int64
	model        string
	includeUsage bool
	sentRole     bool
}

func (c *chatStream) chunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{"id": c.id, "object": "chat.completion.chunk", "created": c.created, "model": c.model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
}

func dataFrame(v any) []byte {
	b, _ := json.Marshal(v)
	return append(append([]byte("data: "), b...), "\n\n"...)
}

func (c *chatStream) frame(e event) []byte {
	var out []byte
	if !c.sentRole {
		c.sentRole = true
		out = dataFrame(c.chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	}
	switch e.typ {
	case "response.output_text.delta":
		var d struct {
			Delta string `json:"delta"`
		}
		_ = json.Unmarshal(e.data, &d)
		out = append(out, dataFrame(c.chunk(map[string]any{"content": d.Delta}, nil))...)
	case "response.completed", "response.incomplete", "response.failed":
		var d struct {
			Response responseObject `json:"response"`
		}
		_ = json.Unmarshal(e.data, &d)
		if d.Response.Status == statusFailed && d.Response.Error != nil {
			out = append(out, dataFrame(map[string]any{"error": map[string]any{"message": d.Response.Error.Message, "type": "server_error", "code": d.Response.Error.Code, "param": nil}})...)
			return out
		}
		out = append(out, dataFrame(c.chunk(map[string]any{}, "stop"))...)
		if c.includeUsage {
			m := c.chunk(nil, nil)
			m["choices"] = []any{}
			m["usage"] = chatUsage(d.Response.Usage)
			out = append(out, dataFrame(m)...)
		}
	}
	return out
}

func chatUsage(u *usageTokens) map[string]any {
	if u == nil {
		u = usageOf(nil)
	}
	return map[string]any{"prompt_tokens": u.InputTokens, "completion_tokens": u.OutputTokens, "total_tokens": u.TotalTokens}
}

// writeCompletion writes a non-stream chat.completion; a failed turn is
// still a 200 (it was admitted), with an error member and
// x-fabric-response-status: failed.
func (c *chatStream) writeCompletion(w http.ResponseWriter, snap *responseObject) {
	body := map[string]any{"id": c.id, "object": "chat.completion", "created": c.created, "model": c.model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": snap.outputText(), "refusal": nil},
			"finish_reason": "stop", "logprobs": nil}},
		"usage": chatUsage(snap.Usage)}
	w.Header().Set("x-fabric-response-status", snap.Status)
	if snap.Error != nil {
		body["error"] = map[string]any{"message": snap.Error.Message, "type": "server_error", "code": snap.Error.Code, "param": nil}
	}
	w.Header().Set("x-fabric-response-id", snap.ID)
	writeJSON(w, 200, body)
}
