package openclaw

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// chatRequest is the body of POST /v1/chat/completions.
type chatRequest struct {
	Model         string         `json:"model"`
	User          string         `json:"user"`
	Stream        bool           `json:"stream"`
	StreamOptions map[string]any `json:"stream_options,omitempty"`
	Messages      []chatMessage  `json:"messages"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chunk is one streamed chat.completion.chunk (the fields the adapter
// reads).
type chunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"`
	Error *apiError  `json:"error"`
}

type chatUsage struct {
	PromptTokens     uint64 `json:"prompt_tokens"`
	CompletionTokens uint64 `json:"completion_tokens"`
	TotalTokens      uint64 `json:"total_tokens"`
}

type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

// httpError is a non-2xx answer of the Gateway.
type httpError struct {
	Status  int
	Message string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("the Gateway answered HTTP %d: %s", e.Status, e.Message)
}

// turnOutcome is what one streamed turn produced.
type turnOutcome struct {
	Text         string
	FinishReason string
	Usage        *chatUsage
}

// chat sends one turn and streams the answer, calling onDelta for every
// text delta. It returns what arrived so far together with any error;
// cancelling ctx closes the request, which makes the Gateway abort the
// agent run.
func chat(ctx context.Context, client *http.Client, baseURL, token string, req chatRequest, onDelta func(string)) (turnOutcome, error) {
	var out turnOutcome
	body, err := json.Marshal(req)
	if err != nil {
		return out, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return out, err
	}
	hr.Header.Set("Authorization", "Bearer "+token)
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(hr)
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return out, &httpError{Status: resp.StatusCode, Message: errorMessage(data)}
	}
	var text strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data:")
		if !ok {
			continue
		}
		data = strings.TrimSpace(data)
		if data == "[DONE]" {
			break
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			continue
		}
		if c.Error != nil {
			out.Text = text.String()
			return out, &httpError{Status: http.StatusOK, Message: c.Error.Message}
		}
		if c.Usage != nil {
			out.Usage = c.Usage
		}
		for _, ch := range c.Choices {
			if d := ch.Delta.Content; d != "" {
				text.WriteString(d)
				if onDelta != nil {
					onDelta(d)
				}
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				out.FinishReason = *ch.FinishReason
			}
		}
	}
	out.Text = text.String()
	if err := sc.Err(); err != nil {
		return out, err
	}
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	if out.FinishReason == "" {
		return out, errors.New("the Gateway ended the stream without finishing the turn")
	}
	return out, nil
}

// errorMessage extracts an OpenAI-style error message from a body.
func errorMessage(data []byte) string {
	var e struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error != nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 512 {
		s = s[:512] + "..."
	}
	return s
}
