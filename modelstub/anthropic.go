package modelstub

// messagesUsage is the Anthropic usage object.
func (x *exchange) messagesUsage(out int) map[string]any {
	return map[string]any{
		"input_tokens": x.inputTokens(), "output_tokens": out,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
	}
}

// messages answers the Anthropic Messages API.
func (x *exchange) messages(a *answer, model string) {
	id := x.s.nextID("msg_stub_")
	stop := "end_turn"
	var toolID string
	if a.call != nil {
		stop = "tool_use"
		toolID = x.s.nextID("toolu_stub_")
	}
	withText := len(a.chunks) > 0 || a.call == nil
	if !x.v.stream {
		content := []any{}
		if withText {
			content = append(content, map[string]any{"type": "text", "text": a.text()})
		}
		if a.call != nil {
			content = append(content, map[string]any{"type": "tool_use", "id": toolID, "name": a.call.name, "input": a.call.args})
		}
		x.writeOK(map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model, "content": content,
			"stop_reason": stop, "stop_sequence": nil, "usage": x.messagesUsage(a.outputTokens()),
		})
		return
	}
	e := x.startSSE()
	send := func(typ string, fields map[string]any) {
		fields["type"] = typ
		e.send(typ, fields)
	}
	send("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": x.messagesUsage(1),
	}})
	index := 0
	pinged := false
	ping := func() {
		if !pinged {
			pinged = true
			send("ping", map[string]any{})
		}
	}
	if withText {
		send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{"type": "text", "text": ""}})
		ping()
		for i, c := range a.chunks {
			if i > 0 {
				e.wait(a.interval)
			}
			send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "text_delta", "text": c}})
		}
		send("content_block_stop", map[string]any{"index": index})
		index++
	}
	if a.call != nil {
		send("content_block_start", map[string]any{"index": index, "content_block": map[string]any{
			"type": "tool_use", "id": toolID, "name": a.call.name, "input": map[string]any{},
		}})
		ping()
		for _, part := range splitText(a.call.argsJSON(), 2) {
			send("content_block_delta", map[string]any{"index": index, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		send("content_block_stop", map[string]any{"index": index})
	}
	send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": x.messagesUsage(a.outputTokens()),
	})
	send("message_stop", map[string]any{})
}
