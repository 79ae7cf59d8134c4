package pi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/contract"
)

// feed dispatches RPC lines as pi writes them.
func feed(t *testing.T, s *session, lines ...string) {
	t.Helper()
	for _, l := range lines {
		var m rpcLine
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		s.dispatch(&m)
	}
}

func newTestSession() (*session, *turn, *adaptertest.Events) {
	rec := &adaptertest.Events{}
	s := &session{key: "sk-secret-key", logger: slog.New(slog.NewTextHandler(io.Discard, nil)), calls: adapterkit.NewCalls[rpcLine]("pi")}
	t := &turn{events: rec, done: make(chan struct{})}
	s.turn = t
	return s, t, rec
}

func TestDispatchTurn(t *testing.T) {
	s, tr, rec := newTestSession()
	feed(t, s,
		`{"type":"agent_start"}`,
		`{"type":"message_update","assistantMessageEvent":{"type":"thinking_delta","delta":"hmm"}}`,
		`{"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":"key sk-secret-key"}}`,
		`{"type":"tool_execution_start","toolCallId":"c1","toolName":"bash","args":{"command":"ls"}}`,
		`{"type":"tool_execution_end","toolCallId":"c1","toolName":"bash","result":{"content":[{"type":"text","text":"a.txt"}]},"isError":false}`,
		`{"type":"message_end","message":{"role":"assistant","content":[{"type":"toolCall"}],"stopReason":"toolUse","usage":{"input":10,"output":2,"totalTokens":12,"cost":{"total":0}}}}`,
		`{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop","usage":{"input":20,"output":3,"totalTokens":23,"cost":{"total":0.5}}}}`,
		`{"type":"agent_end","messages":[]}`,
	)
	select {
	case <-tr.done:
	default:
		t.Fatal("agent_end did not end the turn")
	}
	kinds := []string{}
	for _, e := range rec.List() {
		kinds = append(kinds, e.Kind)
	}
	want := []string{eventReasoningDelta, eventOutputDelta, eventToolCall, eventToolResult}
	if len(kinds) != len(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v, want %v", kinds, want)
		}
	}
	if rec.List()[1].Message != "key [REDACTED]" {
		t.Errorf("the key was not scrubbed: %q", rec.List()[1].Message)
	}
	if rec.List()[3].Metadata["output"] != "a.txt" || rec.List()[2].Metadata["arguments"] != `{"command":"ls"}` {
		t.Errorf("tool events %+v %+v", rec.List()[2], rec.List()[3])
	}
	res := s.result(tr, false)
	if res.Status != contract.StatusSucceeded || res.Output != "done" {
		t.Fatalf("result %+v", res)
	}
	if *res.Usage.InputTokens != 30 || *res.Usage.OutputTokens != 5 || *res.Usage.TotalTokens != 35 || *res.Usage.CostUSD != 0.5 {
		t.Errorf("usage %+v", res.Usage)
	}
}

func TestResultErrorsAndAbort(t *testing.T) {
	s, tr, _ := newTestSession()
	feed(t, s, `{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"400 bad sk-secret-key"}}`)
	res := s.result(tr, false)
	if res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != CodeModelError || res.Error.Message != "400 bad [REDACTED]" {
		t.Errorf("error result %+v %+v", res, res.Error)
	}
	s, tr, _ = newTestSession()
	feed(t, s, `{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"part"}],"stopReason":"aborted"}}`)
	if res := s.result(tr, false); res.Status != contract.StatusCancelled || res.Output != "part" {
		t.Errorf("aborted result %+v", res)
	}
	s, tr, _ = newTestSession()
	if res := s.result(tr, true); res.Status != contract.StatusCancelled {
		t.Errorf("cancelled result %+v", res)
	}
}

func TestResponsesReachTheirCommand(t *testing.T) {
	s, _, _ := newTestSession()
	sent := make(chan string, 1)
	type reply struct {
		r   rpcLine
		err error
	}
	got := make(chan reply, 1)
	go func() {
		r, err := s.calls.Call(context.Background(), nil, func(id string) error { sent <- id; return nil })
		got <- reply{r, err}
	}()
	id := <-sent
	feed(t, s, `{"id":"other","type":"response"}`, `{"id":"`+id+`","type":"response","command":"prompt","success":false,"error":"busy"}`)
	r := <-got
	if r.err != nil || r.r.Success || r.r.Error != "busy" || r.r.Command != "prompt" {
		t.Errorf("response %+v, err %v", r.r, r.err)
	}
}
