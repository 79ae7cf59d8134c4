package modelstub

import "time"

func (x *exchange) geminiUsage(a *answer, final bool) map[string]any {
	in := x.inputTokens()
	if !final {
		return map[string]any{"promptTokenCount": in, "totalTokenCount": in}
	}
	out := a.outputTokens()
	return map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out}
}

// gemini answers generateContent and streamGenerateContent (SSE with
// alt=sse, else one JSON array of chunks).
func (x *exchange) gemini(a *answer, model string) {
	respID := x.s.nextID("stub")
	response := func(parts []any, final bool) map[string]any {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		if final {
			cand["finishReason"] = "STOP"
		}
		return map[string]any{
			"candidates": []any{cand}, "usageMetadata": x.geminiUsage(a, final),
			"modelVersion": model, "responseId": respID,
		}
	}
	var callPart map[string]any
	if a.call != nil {
		callPart = map[string]any{"functionCall": map[string]any{"name": a.call.name, "args": a.call.args}}
	}
	withText := len(a.chunks) > 0 || a.call == nil
	if !x.v.stream {
		var parts []any
		if withText {
			parts = append(parts, map[string]any{"text": a.text()})
		}
		if callPart != nil {
			parts = append(parts, callPart)
		}
		x.writeOK(response(parts, true))
		return
	}
	// The last chunk carries finishReason (Gemini CLI treats a stream
	// without one as invalid) together with the last text or the call.
	var chunks [][]any
	if withText {
		for _, c := range a.chunks {
			chunks = append(chunks, []any{map[string]any{"text": c}})
		}
		if len(chunks) == 0 {
			chunks = append(chunks, []any{map[string]any{"text": ""}})
		}
	}
	if callPart != nil {
		chunks = append(chunks, []any{callPart})
	}
	if x.r.URL.Query().Get("alt") != "sse" {
		// Without alt=sse the REST API answers one JSON array of chunks.
		if len(a.chunks) > 1 {
			if err := x.pause(time.Duration(len(a.chunks)-1)*a.interval, false); err != nil {
				x.abort(err)
			}
		}
		var all []any
		for i, parts := range chunks {
			all = append(all, response(parts, i == len(chunks)-1))
		}
		x.writeOK(all)
		return
	}
	e := x.startSSE()
	for i, parts := range chunks {
		if i > 0 && i < len(a.chunks) {
			e.wait(a.interval)
		}
		e.send("", response(parts, i == len(chunks)-1))
	}
}
