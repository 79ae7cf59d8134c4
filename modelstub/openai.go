package modelstub

import (
	"time"
)

func (x *exchange) chatUsage(a *answer) map[string]any {
	in, out := x.inputTokens(), a.outputTokens()
	return map[string]any{
		"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out,
		"prompt_tokens_details":     map[string]any{"cached_tokens": 0, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	}
}

// chat answers OpenAI Chat Completions.
func (x *exchange) chat(a *answer, model string) {
	id := x.s.nextID("chatcmpl-stub-")
	created := time.Now().Unix()
	finish := "stop"
	var callID string
	if a.call != nil {
		finish = "tool_calls"
		callID = x.s.nextID("call_stub_")
	}
	if !x.v.stream {
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
		if len(a.chunks) > 0 || a.call == nil {
			msg["content"] = a.text()
		}
		if a.call != nil {
			msg["tool_calls"] = []any{map[string]any{
				"id": callID, "type": "function",
				"function": map[string]any{"name": a.call.name, "arguments": a.call.argsJSON()},
			}}
		}
		x.writeOK(map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": model,
			"system_fingerprint": "fp_fabric_stub",
			"choices":            []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
			"usage":              x.chatUsage(a),
		})
		return
	}
	e := x.startSSE()
	chunk := func(delta map[string]any, finishReason any) map[string]any {
		c := map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"system_fingerprint": "fp_fabric_stub",
			"choices":            []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finishReason}},
		}
		if x.v.includeUsage {
			c["usage"] = nil
		}
		return c
	}
	e.send("", chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
	for i, c := range a.chunks {
		if i > 0 {
			e.wait(a.interval)
		}
		e.send("", chunk(map[string]any{"content": c}, nil))
	}
	if a.call != nil {
		args := a.call.argsJSON()
		e.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "id": callID, "type": "function",
			"function": map[string]any{"name": a.call.name, "arguments": ""},
		}}}, nil))
		for _, part := range splitText(args, 2) {
			e.send("", chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": 0, "function": map[string]any{"arguments": part},
			}}}, nil))
		}
	}
	e.send("", chunk(map[string]any{}, finish))
	if x.v.includeUsage {
		e.send("", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"system_fingerprint": "fp_fabric_stub", "choices": []any{}, "usage": x.chatUsage(a),
		})
	}
	e.raw("data: [DONE]\n\n")
}

// responseObject is the Responses API `response` object.
func (x *exchange) responseObject(id, model, status string, created int64, output []any, usage any) map[string]any {
	return map[string]any{
		"id": id, "object": "response", "created_at": created, "status": status,
		"background": false, "error": nil, "incomplete_details": nil, "instructions": nil,
		"max_output_tokens": nil, "model": model, "output": output, "parallel_tool_calls": true,
		"previous_response_id": nil, "reasoning": map[string]any{"effort": nil, "summary": nil},
		"store": false, "temperature": 1.0, "text": map[string]any{"format": map[string]any{"type": "text"}},
		"tool_choice": "auto", "tools": []any{}, "top_p": 1.0, "truncation": "disabled",
		"usage": usage, "user": nil, "metadata": map[string]any{},
	}
}

func (x *exchange) responsesUsage(a *answer) map[string]any {
	in, out := x.inputTokens(), a.outputTokens()
	return map[string]any{
		"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": 0},
		"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": in + out,
	}
}

// responseItems builds the finished output items of an answer.
type responseItem struct {
	done  map[string]any // the completed item
	added map[string]any // the item as first announced (in progress, empty)
	text  bool           // a message item
	call  bool           // a function_call item (arguments stream)
}

func (x *exchange) responseItems(a *answer) []responseItem {
	var items []responseItem
	if len(a.chunks) > 0 || a.call == nil {
		id := x.s.nextID("msg_stub_")
		text := a.text()
		items = append(items, responseItem{
			text:  true,
			added: map[string]any{"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}},
			done: map[string]any{"id": id, "type": "message", "status": "completed", "role": "assistant",
				"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}}},
		})
	}
	if c := a.call; c != nil {
		callID := x.s.nextID("call_stub_")
		if c.kind == "local_shell" {
			id := x.s.nextID("lsh_stub_")
			action := map[string]any{"type": "exec", "env": map[string]any{}}
			for k, v := range c.args {
				action[k] = v
			}
			item := func(status string) map[string]any {
				return map[string]any{"id": id, "type": "local_shell_call", "status": status, "call_id": callID, "action": action}
			}
			items = append(items, responseItem{added: item("in_progress"), done: item("completed")})
		} else {
			id := x.s.nextID("fc_stub_")
			added := map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": callID, "name": c.name, "arguments": ""}
			done := map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": callID, "name": c.name, "arguments": c.argsJSON()}
			if c.namespace != "" {
				added["namespace"], done["namespace"] = c.namespace, c.namespace
			}
			items = append(items, responseItem{call: true, added: added, done: done})
		}
	}
	return items
}

// responses answers the OpenAI Responses API.
func (x *exchange) responses(a *answer, model string) {
	id := x.s.nextID("resp_stub_")
	created := time.Now().Unix()
	items := x.responseItems(a)
	output := make([]any, len(items))
	for i, it := range items {
		output[i] = it.done
	}
	if !x.v.stream {
		x.writeOK(x.responseObject(id, model, "completed", created, output, x.responsesUsage(a)))
		return
	}
	e := x.startSSE()
	seq := 0
	send := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		e.send(typ, fields)
	}
	send("response.created", map[string]any{"response": x.responseObject(id, model, "in_progress", created, []any{}, nil)})
	send("response.in_progress", map[string]any{"response": x.responseObject(id, model, "in_progress", created, []any{}, nil)})
	for oi, it := range items {
		send("response.output_item.added", map[string]any{"output_index": oi, "item": it.added})
		itemID := it.done["id"]
		switch {
		case it.text:
			text := a.text()
			part := func(t string) map[string]any {
				return map[string]any{"type": "output_text", "text": t, "annotations": []any{}, "logprobs": []any{}}
			}
			send("response.content_part.added", map[string]any{"item_id": itemID, "output_index": oi, "content_index": 0, "part": part("")})
			for i, c := range a.chunks {
				if i > 0 {
					e.wait(a.interval)
				}
				send("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": oi, "content_index": 0, "delta": c, "logprobs": []any{}})
			}
			send("response.output_text.done", map[string]any{"item_id": itemID, "output_index": oi, "content_index": 0, "text": text, "logprobs": []any{}})
			send("response.content_part.done", map[string]any{"item_id": itemID, "output_index": oi, "content_index": 0, "part": part(text)})
		case it.call:
			args := it.done["arguments"].(string)
			for _, part := range splitText(args, 2) {
				send("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": oi, "delta": part})
			}
			send("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": oi, "name": it.done["name"], "arguments": args})
		}
		send("response.output_item.done", map[string]any{"output_index": oi, "item": it.done})
	}
	send("response.completed", map[string]any{"response": x.responseObject(id, model, "completed", created, output, x.responsesUsage(a))})
}
