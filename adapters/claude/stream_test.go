package claude

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

func decode(t *testing.T, line string) *message {
	t.Helper()
	var m message
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return &m
}

// A turn captured from claude 2.1.332 against the model stub maps to
// status events, output deltas, and a succeeded result with usage and cost.
func TestCapturedTurn(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "turn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := scrubber{}
	var kinds []string
	var deltas, text string
	var res *contract.AgentRunResult
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		m := decode(t, s.Text())
		if m.Type == "result" {
			r := sc.turnResult(m, false, text)
			res = &r
			continue
		}
		evs, tx := sc.events(m)
		if tx != "" {
			text = tx
		}
		for _, e := range evs {
			kinds = append(kinds, e.Kind)
			if e.Kind == eventOutputDelta {
				deltas += e.Message
			}
		}
	}
	if res == nil {
		t.Fatal("no result line")
	}
	if res.Status != contract.StatusSucceeded || res.Output != "The answer is 4." || res.Error != nil {
		t.Errorf("result %+v", res)
	}
	if deltas != "The answer is 4." || text != "The answer is 4." {
		t.Errorf("deltas %q, assistant text %q", deltas, text)
	}
	if kinds[0] != eventStatus || kinds[1] != eventStatus {
		t.Errorf("kinds %v", kinds)
	}
	u := res.Usage
	if u == nil || *u.InputTokens != 12201 || *u.OutputTokens != 4 || *u.TotalTokens != 12205 || u.CostUSD == nil || *u.CostUSD != 0.048884 {
		t.Errorf("usage %+v", u)
	}
}

func TestCaptured429(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "result-429.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := scrubber{}.turnResult(decode(t, string(b)), false, "")
	if r.Status != contract.StatusFailed || r.Error == nil || r.Error.Code != CodeModelRateLimited || !r.Error.Retryable {
		t.Fatalf("result %+v", r)
	}
	if r.Error.Extensions["status"] != 429 {
		t.Errorf("extensions %v", r.Error.Extensions)
	}
}

func TestTurnResults(t *testing.T) {
	tests := []struct {
		name        string
		line        string
		interrupted bool
		status      string
		code        string
		retryable   bool
		output      string
	}{
		{"success", `{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.5,"usage":{"input_tokens":3,"output_tokens":2}}`, false, "succeeded", "", false, "done"},
		{"success falls back to the assistant text", `{"type":"result","subtype":"success","is_error":false,"result":""}`, false, "succeeded", "", false, "fallback"},
		{"interrupted", `{"type":"result","subtype":"error_during_execution","is_error":true}`, true, "cancelled", "", false, "fallback"},
		{"finished before the interrupt", `{"type":"result","subtype":"success","result":"done"}`, true, "succeeded", "", false, "done"},
		{"execution error", `{"type":"result","subtype":"error_during_execution","is_error":true,"errors":["boom"]}`, false, "failed", CodeExecutionError, false, "fallback"},
		{"max turns", `{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":3}`, false, "failed", CodeMaxTurns, false, "fallback"},
		{"budget", `{"type":"result","subtype":"error_max_budget_usd","is_error":true}`, false, "failed", CodeBudgetExceeded, false, "fallback"},
		{"overloaded", `{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"result":"API Error: overloaded"}`, false, "failed", CodeModelError, true, "API Error: overloaded"},
		{"bad request", `{"type":"result","subtype":"success","is_error":true,"api_error_status":400,"result":"API Error: 400"}`, false, "failed", CodeModelError, false, "API Error: 400"},
		{"bad key", `{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"result":"Invalid API key"}`, false, "failed", CodeModelAuth, false, "Invalid API key"},
		{"unknown error", `{"type":"result","subtype":"success","is_error":true,"result":"Not logged in"}`, false, "failed", CodeClaudeError, false, "Not logged in"},
		{"rate limited while interrupted", `{"type":"result","subtype":"success","is_error":true,"api_error_status":429}`, true, "cancelled", "", false, "fallback"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := scrubber{}.turnResult(decode(t, tc.line), tc.interrupted, "fallback")
			if r.Status != tc.status || r.Output != tc.output {
				t.Errorf("status %s output %q, want %s %q", r.Status, r.Output, tc.status, tc.output)
			}
			switch {
			case tc.code == "" && r.Error != nil:
				t.Errorf("error %+v", r.Error)
			case tc.code != "" && (r.Error == nil || r.Error.Code != tc.code || r.Error.Retryable != tc.retryable || r.Error.Message == ""):
				t.Errorf("error %+v, want %s retryable %v", r.Error, tc.code, tc.retryable)
			}
		})
	}
}

func TestEvents(t *testing.T) {
	sc := scrubber{secret: "sk-secret-value"}
	lines := []string{
		`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}},"parent_tool_use_id":null}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{"}}}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hello"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"env | grep sk-secret-value"}}]},"parent_tool_use_id":null}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"KEY=sk-secret-value"}],"is_error":false}]}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"}]},"isReplay":true}`,
		`{"type":"system","subtype":"permission_denied","tool_name":"Bash","tool_use_id":"toolu_2","message":"needs approval"}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"sub"}]},"parent_tool_use_id":"toolu_9"}`,
	}
	var got []string
	var text string
	for _, l := range lines {
		evs, tx := sc.events(decode(t, l))
		if tx != "" {
			text = tx
		}
		for _, e := range evs {
			b, _ := json.Marshal(e)
			got = append(got, e.Kind+" "+e.Message)
			if strings.Contains(string(b), "sk-secret-value") {
				t.Errorf("event shows the secret: %s", b)
			}
		}
	}
	want := []string{
		"output_delta Hel", "reasoning_delta hmm", "tool_call Bash", "tool_result KEY=[REDACTED]",
		"status permission denied: Bash",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events\n%q\nwant\n%q", got, want)
	}
	if text != "Hello" {
		t.Errorf("assistant text %q (sub-agent text must not count)", text)
	}
}
