package codex

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/contract"
)

// feed hands notifications (method, params JSON) to t as the session
// would.
func feed(t *testing.T, tr *turn, msgs ...[2]string) {
	t.Helper()
	for _, m := range msgs {
		var p notification
		if err := json.Unmarshal([]byte(m[1]), &p); err != nil {
			t.Fatalf("%s: %v", m[0], err)
		}
		tid := p.TurnID
		if tid == "" && p.Turn != nil {
			tid = p.Turn.ID
		}
		if tr.accepts(tid) {
			tr.handle(m[0], p)
		}
	}
}

// Notifications as codex app-server 0.171.0 sent them (trimmed).
func TestTurnEventsAndResult(t *testing.T) {
	rec := &adaptertest.Events{}
	tr := newTurn(rec, tokenCounts{TotalTokens: 100, InputTokens: 90, OutputTokens: 10})
	big := strings.Repeat("x", 5000)
	feed(t, tr,
		[2]string{"turn/started", `{"threadId":"th","turn":{"id":"T1","status":"inProgress"}}`},
		[2]string{"item/started", `{"threadId":"th","turnId":"T1","item":{"type":"commandExecution","id":"call_1","command":"/bin/bash -lc 'echo hi'","cwd":"/ws","status":"inProgress","exitCode":null}}`},
		[2]string{"item/completed", `{"threadId":"th","turnId":"T1","item":{"type":"commandExecution","id":"call_1","command":"/bin/bash -lc 'echo hi'","cwd":"/ws","status":"completed","exitCode":0,"aggregatedOutput":"` + big + `","durationMs":3}}`},
		[2]string{"item/completed", `{"threadId":"th","turnId":"T1","item":{"type":"fileChange","id":"fc_1","status":"completed","changes":[{"path":"a.txt","kind":{"type":"add"},"diff":"+x"},{"path":"b.txt","kind":{"type":"update","move_path":"c.txt"},"diff":""}]}}`},
		[2]string{"item/reasoning/summaryTextDelta", `{"threadId":"th","turnId":"T1","itemId":"r1","delta":"thinking"}`},
		[2]string{"item/agentMessage/delta", `{"threadId":"th","turnId":"T1","itemId":"msg_1","delta":"4"}`},
		[2]string{"item/agentMessage/delta", `{"threadId":"th","turnId":"OTHER","itemId":"msg_9","delta":"not ours"}`},
		[2]string{"item/completed", `{"threadId":"th","turnId":"T1","item":{"type":"agentMessage","id":"msg_1","text":"4"}}`},
		[2]string{"thread/tokenUsage/updated", `{"threadId":"th","turnId":"T1","tokenUsage":{"total":{"totalTokens":160,"inputTokens":140,"cachedInputTokens":5,"outputTokens":20,"reasoningOutputTokens":2},"last":{"totalTokens":60,"inputTokens":50,"cachedInputTokens":5,"outputTokens":10,"reasoningOutputTokens":2}}}`},
		[2]string{"turn/completed", `{"threadId":"th","turn":{"id":"T1","status":"completed","error":null}}`},
	)
	if !tr.isDone() {
		t.Fatal("turn not done")
	}
	want := "tool_call tool_result file_change reasoning_delta output_delta usage"
	if got := strings.Join(rec.Kinds(), " "); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	res := rec.List()[1].Metadata
	if res["exit_code"] != 0 || res["command"] != "/bin/bash -lc 'echo hi'" || res["duration_ms"] != int64(3) {
		t.Errorf("tool_result metadata %v", res)
	}
	if out := res["output"].(string); len(out) > maxOutputMetadata+len(truncatedOutputMarker) || !strings.HasSuffix(out, truncatedOutputMarker) {
		t.Errorf("output not truncated: %d bytes", len(out))
	}
	if fc := rec.List()[2]; fc.Message != "a.txt, b.txt" || len(fc.Metadata["changes"].([]any)) != 2 {
		t.Errorf("file_change %+v", fc)
	}
	r := tr.result(false)
	if r.Status != contract.StatusSucceeded || r.Output != "4" || r.Error != nil {
		t.Fatalf("result %+v", r)
	}
	if *r.Usage.InputTokens != 50 || *r.Usage.OutputTokens != 10 || *r.Usage.TotalTokens != 60 {
		t.Errorf("usage %d/%d/%d, want the turn's delta 50/10/60", *r.Usage.InputTokens, *r.Usage.OutputTokens, *r.Usage.TotalTokens)
	}
}

func TestTurnStructuredOutput(t *testing.T) {
	tr := newTurn(&adaptertest.Events{}, tokenCounts{})
	feed(t, tr,
		[2]string{"item/completed", `{"turnId":"T","item":{"type":"agentMessage","id":"m","text":"{\"answer\":4}"}}`},
		[2]string{"turn/completed", `{"turn":{"id":"T","status":"completed"}}`},
	)
	if out, ok := tr.result(true).Output.(map[string]any); !ok || out["answer"] != float64(4) {
		t.Errorf("output %#v", tr.result(true).Output)
	}
	if tr.result(false).Output != `{"answer":4}` {
		t.Error("text output changed without output_schema")
	}
}

func TestTurnFailedAndInterrupted(t *testing.T) {
	tr := newTurn(&adaptertest.Events{}, tokenCounts{})
	feed(t, tr,
		[2]string{"error", `{"threadId":"th","turnId":"T","willRetry":false,"error":{"message":"exceeded retry limit, last status: 429 Too Many Requests","codexErrorInfo":{"responseTooManyFailedAttempts":{"httpStatusCode":429}}}}`},
		[2]string{"turn/completed", `{"turn":{"id":"T","status":"failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests","codexErrorInfo":{"responseTooManyFailedAttempts":{"httpStatusCode":429}},"additionalDetails":null}}}`},
	)
	r := tr.result(false)
	if r.Status != contract.StatusFailed || r.Error.Code != CodeModelRateLimited || !r.Error.Retryable || r.Error.Extensions["http_status"] != 429 {
		t.Errorf("result %+v error %+v", r, r.Error)
	}

	tr = newTurn(&adaptertest.Events{}, tokenCounts{})
	feed(t, tr,
		[2]string{"item/agentMessage/delta", `{"turnId":"T","itemId":"m","delta":"partial "}`},
		[2]string{"turn/completed", `{"turn":{"id":"T","status":"interrupted"}}`},
	)
	if r := tr.result(false); r.Status != contract.StatusCancelled || r.Output != "partial " {
		t.Errorf("interrupted result %+v", r)
	}
}

func TestRunError(t *testing.T) {
	tests := []struct {
		info      string
		code      string
		retryable bool
	}{
		{`{"responseTooManyFailedAttempts":{"httpStatusCode":429}}`, CodeModelRateLimited, true},
		{`"rateLimitExceeded"`, CodeModelRateLimited, true},
		{`"usageLimitExceeded"`, CodeModelRateLimited, false},
		{`{"httpConnectionFailed":{"httpStatusCode":401}}`, CodeModelAuth, false},
		{`"unauthorized"`, CodeModelAuth, false},
		{`"contextWindowExceeded"`, CodeContextExceeded, false},
		{`{"responseTooManyFailedAttempts":{"httpStatusCode":500}}`, CodeModelError, true},
		{`"serverOverloaded"`, CodeModelError, true},
		{`{"responseStreamDisconnected":{"httpStatusCode":null}}`, CodeModelError, true},
		{`{"httpConnectionFailed":{"httpStatusCode":400}}`, CodeModelError, false},
		{`"modelNotFound"`, CodeModelError, false},
		{`"sandboxError"`, CodeTurnFailed, false},
		{``, CodeTurnFailed, false},
	}
	for _, tt := range tests {
		e := &turnError{Message: "boom", CodexErrorInfo: json.RawMessage(tt.info)}
		got := runError("failed", e)
		if got.Code != tt.code || got.Retryable != tt.retryable || got.Message != "boom" {
			t.Errorf("%s: %+v, want %s retryable=%v", tt.info, got, tt.code, tt.retryable)
		}
	}
	if got := runError("failed", &turnError{Message: "stream disconnected before completion: error sending request", CodexErrorInfo: json.RawMessage(`"other"`)}); got.Code != CodeModelError || !got.Retryable {
		t.Errorf("connection failure: %+v", got)
	}
	if got := runError("failed", nil); got.Code != CodeTurnFailed || got.Message == "" {
		t.Errorf("nil error: %+v", got)
	}
	details := "more"
	if got := runError("failed", &turnError{Message: "m", AdditionalDetails: &details}); got.Message != "m: more" {
		t.Errorf("details: %q", got.Message)
	}
}

func TestTruncateKeepsRunes(t *testing.T) {
	s := strings.Repeat("é", maxOutputMetadata) // 2 bytes each
	out := strings.TrimSuffix(truncate(s), truncatedOutputMarker)
	if len(out) > maxOutputMetadata || !strings.HasPrefix(s, out) || len(out)%2 != 0 {
		t.Errorf("cut at %d bytes", len(out))
	}
	if truncate("short") != "short" {
		t.Error("short string changed")
	}
}
