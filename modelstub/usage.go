package modelstub

import (
	"bytes"
	"encoding/json"
	"math"
)

// Usage is the token usage a model response reports, in the terms every
// API shares.
type Usage struct {
	// InputTokens are the prompt tokens: OpenAI's prompt_tokens or
	// input_tokens, Anthropic's input_tokens plus its cache creation and
	// cache read tokens, Gemini's promptTokenCount.
	InputTokens int64 `json:"input_tokens"`
	// OutputTokens are the generated tokens: completion_tokens,
	// output_tokens, or Gemini's candidatesTokenCount plus
	// thoughtsTokenCount.
	OutputTokens int64 `json:"output_tokens"`
}

// Update sets the fields of u that v reports (those that are not zero).
// Streams report usage cumulatively, and Anthropic splits it over two
// events, so keeping the latest value of each field gives the total.
func (u *Usage) Update(v Usage) {
	if v.InputTokens > 0 {
		u.InputTokens = v.InputTokens
	}
	if v.OutputTokens > 0 {
		u.OutputTokens = v.OutputTokens
	}
}

// BodyUsage reads the usage of a response body of api that was not
// streamed: the top-level usage object (Chat Completions, Responses,
// Messages) or usageMetadata (Gemini). ok is false when the body reports
// none or is not a JSON object.
func BodyUsage(api API, body []byte) (u Usage, ok bool) {
	if !mayHoldUsage(body) {
		return Usage{}, false
	}
	var d usageDoc
	if json.Unmarshal(body, &d) != nil {
		return Usage{}, false
	}
	if api == APIGemini {
		return d.UsageMetadata.usage()
	}
	return d.Usage.usage()
}

// EventUsage reads the usage one server-sent event of a streamed response
// of api carries; data is the event's data (its data lines joined). The
// events that carry usage are Chat Completions' last chunk (when the
// request set stream_options.include_usage), Responses' response.completed
// (and response.incomplete, response.failed) under response.usage,
// Anthropic's message_start (input tokens, under message.usage) and
// message_delta (output tokens, cumulative), and every Gemini chunk
// (cumulative). A field the event does not report is zero: merge events
// with Usage.Update.
func EventUsage(api API, data []byte) (u Usage, ok bool) {
	if !mayHoldUsage(data) {
		return Usage{}, false
	}
	var d usageDoc
	if json.Unmarshal(data, &d) != nil {
		return Usage{}, false
	}
	switch api {
	case APIResponses:
		if d.Response != nil {
			return d.Response.Usage.usage()
		}
	case APIMessages:
		if d.Message != nil && d.Usage == nil {
			return d.Message.Usage.usage()
		}
		return d.Usage.usage()
	case APIGemini:
		return d.UsageMetadata.usage()
	default:
		return d.Usage.usage()
	}
	return Usage{}, false
}

// mayHoldUsage is a cheap test before decoding: every usage object's key
// starts with "usage" (usage, usageMetadata).
func mayHoldUsage(b []byte) bool { return bytes.Contains(b, []byte(`"usage`)) }

// usageDoc holds the places usage appears in any of the APIs' bodies and
// events.
type usageDoc struct {
	Usage         *usageObject `json:"usage"`
	Response      *usageHolder `json:"response"`
	Message       *usageHolder `json:"message"`
	UsageMetadata *geminiUsage `json:"usageMetadata"`
}

type usageHolder struct {
	Usage *usageObject `json:"usage"`
}

// usageObject is OpenAI's and Anthropic's usage object; each API sets only
// its own fields.
type usageObject struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	InputTokens         int64 `json:"input_tokens"`
	OutputTokens        int64 `json:"output_tokens"`
	CacheCreationTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadTokens     int64 `json:"cache_read_input_tokens"`
}

func (o *usageObject) usage() (Usage, bool) {
	if o == nil {
		return Usage{}, false
	}
	u := Usage{
		InputTokens:  sum(o.PromptTokens, o.InputTokens, o.CacheCreationTokens, o.CacheReadTokens),
		OutputTokens: sum(o.CompletionTokens, o.OutputTokens),
	}
	return u, true
}

type geminiUsage struct {
	PromptTokenCount     int64 `json:"promptTokenCount"`
	CandidatesTokenCount int64 `json:"candidatesTokenCount"`
	ThoughtsTokenCount   int64 `json:"thoughtsTokenCount"`
}

func (g *geminiUsage) usage() (Usage, bool) {
	if g == nil {
		return Usage{}, false
	}
	return Usage{
		InputTokens:  sum(g.PromptTokenCount),
		OutputTokens: sum(g.CandidatesTokenCount, g.ThoughtsTokenCount),
	}, true
}

// sum adds token counts, ignoring negative ones and saturating at the
// largest int64 (the counts come from outside).
func sum(ns ...int64) int64 {
	var t int64
	for _, n := range ns {
		if n > 0 {
			t += min(n, math.MaxInt64-t)
		}
	}
	return t
}
