package scripted

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/lazy"
)

// ModeModel sends each invoke to the config's model (OpenAI Chat
// Completions, streaming) with one function tool, shell {command}, and runs
// the commands the model calls in the workspace (model.go).
const ModeModel = "model"

// Error codes of mode model: the model endpoint's failures, each the
// normalised code it stands for (contract.Model*), and the adapter's own.
const (
	CodeModelRateLimited     = contract.ModelRateLimited
	CodeModelQuotaExhausted  = contract.ModelQuotaExhausted
	CodeModelOverloaded      = contract.ModelOverloaded
	CodeModelAuth            = contract.ModelAuth
	CodeModelNotFound        = contract.ModelNotFound
	CodeModelContextExceeded = contract.ModelContextExceeded
	CodeModelServerError     = contract.ModelServerError
	CodeModelUnreachable     = contract.ModelUnreachable
	// CodeModelBadRequest is any other 4xx answer (not a model error the
	// batch runner normalises: the request itself was wrong).
	CodeModelBadRequest = "scripted_model_bad_request"
	// CodeModelProtocol is an answer that is not Chat Completions.
	CodeModelProtocol = "scripted_model_protocol_error"
	// CodeMaxSteps is a turn that still called tools after maxSteps
	// model requests.
	CodeMaxSteps = "scripted_max_steps_exceeded"
)

// Defaults and bounds of mode model.
const (
	maxSteps             = 8               // model requests per turn
	defaultToolTimeoutMS = 30_000          // per shell command
	maxToolOutputBytes   = 64 << 10        // of a command's output sent back
	maxErrorBodyBytes    = 64 << 10        // of an error answer read
	maxSSELineBytes      = 8 << 20         // of one streamed line
	shellTool            = "shell"         // the one tool offered
	eventToolCall        = "tool_call"     // a command the model called
	eventToolResult      = "tool_result"   // its exit status
	toolWaitDelay        = 2 * time.Second // for a killed command's pipes
)

// modelClient is one session's view of its model route.
type modelClient struct {
	url, model, key string
	system          string
	workspace       string
	steps           int
	toolTimeout     time.Duration
	offerShell      bool
	http            *http.Client
}

func newModelClient(in adapterkit.StartInput, set Settings) (*modelClient, error) {
	role, m, err := pickModel(in.Config.Models, set.ModelRole)
	if err != nil {
		return nil, err
	}
	if m.BaseURL == nil || *m.BaseURL == "" {
		return nil, fmt.Errorf("mode model: models.%s.base_url is required", role)
	}
	ws, err := adapterkit.Workspace(in)
	if err != nil {
		return nil, fmt.Errorf("mode model: %w", err)
	}
	c := &modelClient{
		url:         strings.TrimRight(*m.BaseURL, "/") + "/chat/completions",
		model:       m.Model,
		workspace:   ws,
		steps:       maxSteps,
		toolTimeout: defaultToolTimeoutMS * time.Millisecond,
		offerShell:  true,
	}
	if m.APIKeyEnv != nil && *m.APIKeyEnv != "" {
		c.key = os.Getenv(*m.APIKeyEnv) // never logged nor returned
	}
	if in.Config.Instructions != nil && in.Config.Instructions.System != nil {
		c.system = in.Config.Instructions.System.Content
	}
	if set.MaxSteps > 0 {
		c.steps = min(set.MaxSteps, maxSteps)
	}
	if r := in.Config.Runtime; r != nil && r.MaxTurns != nil && int(*r.MaxTurns) < c.steps {
		c.steps = int(*r.MaxTurns)
	}
	if set.ToolTimeoutMS > 0 {
		c.toolTimeout = time.Duration(set.ToolTimeoutMS) * time.Millisecond
	}
	if t := in.Config.Tools; t != nil {
		c.offerShell = (t.Enabled == nil || slices.Contains(t.Enabled, shellTool)) && !slices.Contains(t.Blocked, shellTool)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = 0 // a stalled answer ends with the turn's context
	c.http = &http.Client{Transport: tr}
	return c, nil
}

// pickModel chooses the role: the one named in settings, else "default",
// else the only one.
func pickModel(models map[string]contract.AgentModel, want string) (string, contract.AgentModel, error) {
	if want != "" {
		m, ok := models[want]
		if !ok {
			return "", m, fmt.Errorf("mode model: settings.model_role %q is not a configured model role", want)
		}
		return want, m, nil
	}
	role, m, err := adapterkit.Model(contract.AgentConfig{Models: models})
	if err != nil && !errors.Is(err, adapterkit.ErrNoModel) {
		err = fmt.Errorf("%w: set settings.model_role", err)
	}
	if err != nil {
		return "", m, fmt.Errorf("mode model: %w", err)
	}
	return role, m, nil
}

func (c *modelClient) close() { c.http.CloseIdleConnections() }

type chatMessage struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// shellToolSpec is the tools field of a request, built at first use (no
// work at init: a host that never asks a model does not pay for it).
var shellToolSpec = lazy.Value[[]any]{New: func() []any {
	return []any{map[string]any{
		"type": "function",
		"function": map[string]any{
			"name":        shellTool,
			"description": "Run a shell command (sh -c) in the workspace and return its output.",
			"parameters": map[string]any{
				"type":                 "object",
				"properties":           map[string]any{"command": map[string]any{"type": "string", "description": "The command line."}},
				"required":             []string{"command"},
				"additionalProperties": false,
			},
		},
	}}
}}

// turnUsage sums the usage of a turn's requests.
type turnUsage struct {
	in, out uint64
	seen    bool
}

func (u *turnUsage) result() *contract.RunUsage {
	if !u.seen {
		return nil
	}
	in, out, total := u.in, u.out, u.in+u.out
	return &contract.RunUsage{InputTokens: &in, OutputTokens: &out, TotalTokens: &total}
}

// invokeModel runs one turn against the model.
func (c *modelClient) invokeModel(ctx context.Context, inv adapterkit.Invocation, input string) contract.AgentRunResult {
	str := func(s string) *string { return &s }
	var msgs []chatMessage
	if c.system != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: str(c.system)})
	}
	msgs = append(msgs, chatMessage{Role: "user", Content: str(input)})
	var usage turnUsage
	events := 0
	for step := 0; step < c.steps; step++ {
		reply, rerr := c.complete(ctx, msgs, &usage, func(delta string) {
			inv.Events.Emit(adapterkit.Event{Kind: eventKind, Message: delta, Metadata: map[string]any{"index": events}})
			events++
		})
		if ctx.Err() != nil {
			r := cancelled()
			r.Usage = usage.result()
			return r
		}
		if rerr != nil {
			return contract.AgentRunResult{Status: contract.StatusFailed, Output: "", Error: rerr, Usage: usage.result()}
		}
		if len(reply.ToolCalls) == 0 {
			out := ""
			if reply.Content != nil {
				out = *reply.Content
			}
			return contract.AgentRunResult{Status: contract.StatusSucceeded, Output: out, Usage: usage.result()}
		}
		msgs = append(msgs, reply)
		for _, call := range reply.ToolCalls {
			result := c.runTool(ctx, inv, call)
			if ctx.Err() != nil {
				r := cancelled()
				r.Usage = usage.result()
				return r
			}
			msgs = append(msgs, chatMessage{Role: "tool", ToolCallID: call.ID, Content: str(result)})
		}
	}
	return contract.AgentRunResult{Status: contract.StatusFailed, Output: "", Usage: usage.result(), Error: &contract.AgentRunError{
		Code: CodeMaxSteps, Message: fmt.Sprintf("the model still called tools after %d requests", c.steps),
	}}
}

// runTool runs one shell call and returns what goes back to the model.
func (c *modelClient) runTool(ctx context.Context, inv adapterkit.Invocation, call toolCall) string {
	if call.Function.Name != shellTool || !c.offerShell {
		return fmt.Sprintf("error: no tool named %q", call.Function.Name)
	}
	var args struct {
		Command string `json:"command"`
	}
	if err := json.Unmarshal([]byte(call.Function.Arguments), &args); err != nil || strings.TrimSpace(args.Command) == "" {
		return "error: the arguments must be a JSON object with a non-empty command"
	}
	inv.Events.Emit(adapterkit.Event{Kind: eventToolCall, Message: args.Command, Metadata: map[string]any{"tool": shellTool, "call_id": call.ID}})
	tctx, cancel := context.WithTimeout(ctx, c.toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, "sh", "-c", args.Command)
	cmd.Dir = c.workspace
	cmd.Env = os.Environ()
	if tc := inv.Context.Telemetry; tc != nil {
		for k, v := range tc.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Stdin = nil
	var out cappedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	setProcessGroup(cmd)
	cmd.WaitDelay = toolWaitDelay
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		code = -1
	}
	status := map[string]any{"tool": shellTool, "call_id": call.ID, "exit_code": code}
	text := out.String()
	if tctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		text += fmt.Sprintf("\n[the command was killed after %s]", c.toolTimeout)
		status["timed_out"] = true
	} else if err != nil && ee == nil {
		text += "\n[" + err.Error() + "]"
	}
	if code != 0 {
		text += fmt.Sprintf("\n[exit status %d]", code)
	}
	inv.Events.Emit(adapterkit.Event{Kind: eventToolResult, Message: fmt.Sprintf("exit %d", code), Metadata: status})
	return text
}

// cappedBuffer keeps the first maxToolOutputBytes written to it.
type cappedBuffer struct {
	b         bytes.Buffer
	truncated bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := maxToolOutputBytes - c.b.Len(); room < len(p) {
		c.b.Write(p[:max(room, 0)])
		c.truncated = true
		return len(p), nil
	}
	return c.b.Write(p)
}

func (c *cappedBuffer) String() string {
	if c.truncated {
		return c.b.String() + "\n[output truncated]"
	}
	return c.b.String()
}

// complete sends one Chat Completions request (streaming) and returns the
// assistant message, adding its usage to u and streaming text deltas to
// onText. A failure is the AgentRunError of the turn.
func (c *modelClient) complete(ctx context.Context, msgs []chatMessage, u *turnUsage, onText func(string)) (chatMessage, *contract.AgentRunError) {
	body := map[string]any{
		"model":          c.model,
		"messages":       msgs,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
	}
	if c.offerShell {
		body["tools"] = shellToolSpec.Get()
	}
	b, err := json.Marshal(body)
	if err != nil {
		return chatMessage{}, &contract.AgentRunError{Code: CodeModelProtocol, Message: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(b))
	if err != nil {
		return chatMessage{}, &contract.AgentRunError{Code: CodeModelUnreachable, Message: "model request: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("User-Agent", "fabric-scripted/1")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return chatMessage{}, transportError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
		return chatMessage{}, httpError(resp, data)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return decodeCompletion(resp.Body, u, onText)
	}
	return decodeStream(resp.Body, u, onText)
}

// decodeCompletion reads a non-streamed answer (an endpoint that ignores
// "stream": true).
func decodeCompletion(r io.Reader, u *turnUsage, onText func(string)) (chatMessage, *contract.AgentRunError) {
	var v struct {
		Choices []struct {
			Message chatMessage `json:"message"`
		} `json:"choices"`
		Usage *chatUsage `json:"usage"`
	}
	if err := json.NewDecoder(r).Decode(&v); err != nil {
		return chatMessage{}, streamError(err)
	}
	u.add(v.Usage)
	if len(v.Choices) == 0 {
		return chatMessage{}, &contract.AgentRunError{Code: CodeModelProtocol, Message: "the answer has no choices"}
	}
	m := v.Choices[0].Message
	m.Role = "assistant"
	if m.Content != nil && *m.Content != "" {
		onText(*m.Content)
	}
	return m, nil
}

type chatUsage struct {
	PromptTokens     uint64 `json:"prompt_tokens"`
	CompletionTokens uint64 `json:"completion_tokens"`
}

func (u *turnUsage) add(c *chatUsage) {
	if c == nil {
		return
	}
	u.in += c.PromptTokens
	u.out += c.CompletionTokens
	u.seen = true
}

// decodeStream reads a Chat Completions SSE stream.
func decodeStream(r io.Reader, u *turnUsage, onText func(string)) (chatMessage, *contract.AgentRunError) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxSSELineBytes)
	var text strings.Builder
	var calls []toolCall
	done := false
	for sc.Scan() {
		line := sc.Bytes()
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			done = true
			break
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    int    `json:"index"`
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
			Usage *chatUsage  `json:"usage"`
			Error *chatErrObj `json:"error"`
		}
		if err := json.Unmarshal(data, &chunk); err != nil {
			return chatMessage{}, &contract.AgentRunError{Code: CodeModelProtocol, Message: "a streamed chunk is not JSON: " + err.Error()}
		}
		if chunk.Error != nil {
			// An error in the stream (after a 200): classify it by its body.
			code, retryable := classifyBody(0, chunk.Error)
			return chatMessage{}, &contract.AgentRunError{Code: code, Message: "model error in the stream: " + chunk.Error.Message, Retryable: retryable}
		}
		u.add(chunk.Usage)
		for _, ch := range chunk.Choices {
			if d := ch.Delta.Content; d != "" {
				text.WriteString(d)
				onText(d)
			}
			for _, tc := range ch.Delta.ToolCalls {
				for len(calls) <= tc.Index {
					calls = append(calls, toolCall{Type: "function"})
				}
				c := &calls[tc.Index]
				if tc.ID != "" {
					c.ID = tc.ID
				}
				c.Function.Name += tc.Function.Name
				c.Function.Arguments += tc.Function.Arguments
			}
		}
	}
	if err := sc.Err(); err != nil {
		return chatMessage{}, streamError(err)
	}
	if !done {
		return chatMessage{}, &contract.AgentRunError{Code: CodeModelUnreachable, Message: "the model stream ended before [DONE]", Retryable: true}
	}
	s := text.String()
	return chatMessage{Role: "assistant", Content: &s, ToolCalls: calls}, nil
}

func streamError(err error) *contract.AgentRunError {
	return &contract.AgentRunError{Code: CodeModelUnreachable, Message: "reading the model answer: " + err.Error(), Retryable: true}
}

// transportError maps a request that got no HTTP answer.
func transportError(err error) *contract.AgentRunError {
	msg := "the model endpoint did not answer: " + err.Error()
	if errors.Is(err, syscall.ECONNREFUSED) {
		msg = "the model endpoint refused the connection: " + err.Error()
	}
	return &contract.AgentRunError{Code: CodeModelUnreachable, Message: msg, Retryable: true}
}

type chatErrObj struct {
	Message    string          `json:"message"`
	Type       string          `json:"type"`
	Code       json.RawMessage `json:"code"`
	RetryAfter *float64        `json:"retry_after"`
}

func (e *chatErrObj) code() string {
	var s string
	if json.Unmarshal(e.Code, &s) == nil {
		return s
	}
	return strings.Trim(string(e.Code), `"`)
}

// contextExceeded and retryInMessage are compiled at first use, not at init.
var contextExceeded = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)context[_ ](length|window)|maximum context|too many tokens|prompt is too long`)
}}

// classifyBody maps an error body (status 0: an error inside a stream).
func classifyBody(status int, e *chatErrObj) (code string, retryable bool) {
	kind := ""
	if e != nil {
		kind = e.Type + " " + e.code()
		if contextExceeded.Get().MatchString(kind + " " + e.Message) {
			return CodeModelContextExceeded, false
		}
		if strings.Contains(kind, "insufficient_quota") {
			return CodeModelQuotaExhausted, false
		}
	}
	switch {
	case status == http.StatusTooManyRequests || strings.Contains(kind, "rate_limit"):
		return CodeModelRateLimited, true
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return CodeModelAuth, false
	case status == http.StatusNotFound:
		return CodeModelNotFound, false
	case status == 529 || status == http.StatusServiceUnavailable || strings.Contains(kind, "overloaded"):
		return CodeModelOverloaded, true
	case status >= 500 || status == 0:
		return CodeModelServerError, true
	}
	return CodeModelBadRequest, false
}

var retryInMessage = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`(?i)try again in ([0-9.]+)\s*(ms|s)`) }}

// httpError maps a non-2xx answer.
func httpError(resp *http.Response, body []byte) *contract.AgentRunError {
	var v struct {
		Error *chatErrObj `json:"error"`
	}
	_ = json.Unmarshal(body, &v)
	code, retryable := classifyBody(resp.StatusCode, v.Error)
	msg := ""
	if v.Error != nil {
		msg = v.Error.Message
	}
	if msg == "" {
		msg = strings.TrimSpace(string(body))
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
	}
	re := &contract.AgentRunError{
		Code:       code,
		Message:    fmt.Sprintf("the model endpoint answered %d: %s", resp.StatusCode, msg),
		Retryable:  retryable,
		Extensions: map[string]any{"http_status": resp.StatusCode},
	}
	if code == CodeModelRateLimited || code == CodeModelOverloaded {
		if s, ok := retryAfter(resp.Header.Get("Retry-After"), v.Error); ok {
			re.Extensions["retry_after_seconds"] = s
		}
	}
	return re
}

// retryAfter reads the delay to wait: the Retry-After header (seconds or an
// HTTP date), else the body's retry_after, else "try again in Ns".
func retryAfter(header string, e *chatErrObj) (float64, bool) {
	if h := strings.TrimSpace(header); h != "" {
		if s, err := strconv.ParseFloat(h, 64); err == nil && s >= 0 {
			return s, true
		}
		if t, err := http.ParseTime(h); err == nil {
			return max(time.Until(t).Seconds(), 0), true
		}
	}
	if e == nil {
		return 0, false
	}
	if e.RetryAfter != nil && *e.RetryAfter >= 0 {
		return *e.RetryAfter, true
	}
	if m := retryInMessage.Get().FindStringSubmatch(e.Message); m != nil {
		if s, err := strconv.ParseFloat(m[1], 64); err == nil {
			if m[2] == "ms" {
				s /= 1000
			}
			return s, true
		}
	}
	return 0, false
}
