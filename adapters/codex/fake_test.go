//go:build linux

package codex_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/codex"
	"github.com/fabric-runtime/fabric/contract"
)

// envFake makes this test binary act as a scripted codex app-server (see
// fakeCodex); its value is the mode.
const envFake = "FABRIC_CODEX_FAKE"

// serverRequests are the server-to-client requests the fake sends in mode
// "approvals", with the answers the adapter must give.
var serverRequests = []struct {
	method string
	want   string // the answer as JSON: a result, or "error" for a JSON-RPC error
}{
	{"item/commandExecution/requestApproval", `{"decision":"decline"}`},
	{"item/fileChange/requestApproval", `{"decision":"decline"}`},
	{"execCommandApproval", `{"decision":"denied"}`},
	{"applyPatchApproval", `{"decision":"denied"}`},
	{"item/permissions/requestApproval", `{"permissions":{},"scope":"turn"}`},
	{"item/tool/requestUserInput", `{"answers":{}}`},
	{"mcpServer/elicitation/request", `{"action":"decline"}`},
	{"account/chatgptAuthTokens/refresh", `"error"`},
	{"some/future/request", `"error"`},
}

// fakeCodex speaks codex app-server's protocol on stdio for the session
// tests. Modes: approvals (a turn sends every server request and answers
// with what the client replied), ignore_interrupt (a turn never ends),
// exit_mid_turn (the process exits during a turn), exit_on_start.
func fakeCodex(mode string) int {
	if mode == "exit_on_start" {
		fmt.Fprintln(os.Stderr, "fake codex: bad config")
		return 1
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	var mu sync.Mutex
	send := func(v any) {
		mu.Lock()
		out.Encode(v)
		mu.Unlock()
	}
	notify := func(method string, params any) { send(map[string]any{"method": method, "params": params}) }
	answers := map[string]chan json.RawMessage{}
	var amu sync.Mutex
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		if m.Method == "" { // an answer to one of our requests
			var id string
			json.Unmarshal(m.ID, &id)
			amu.Lock()
			ch := answers[id]
			amu.Unlock()
			if ch != nil {
				if len(m.Error) > 0 {
					ch <- json.RawMessage(`"error"`)
				} else {
					ch <- m.Result
				}
			}
			continue
		}
		switch m.Method {
		case "initialize":
			send(map[string]any{"id": m.ID, "result": map[string]any{"userAgent": "fake"}})
		case "thread/start":
			send(map[string]any{"id": m.ID, "result": map[string]any{"thread": map[string]any{"id": "th-fake"}}})
		case "turn/interrupt":
			send(map[string]any{"id": m.ID, "result": map[string]any{}})
		case "turn/start":
			send(map[string]any{"id": m.ID, "result": map[string]any{"turn": map[string]any{"id": "turn-1", "status": "inProgress"}}})
			notify("turn/started", map[string]any{"threadId": "th-fake", "turn": map[string]any{"id": "turn-1", "status": "inProgress"}})
			switch mode {
			case "exit_mid_turn":
				os.Stdout.Sync()
				return 3
			case "ignore_interrupt":
				continue
			}
			go func() {
				got := map[string]json.RawMessage{}
				for i, r := range serverRequests {
					id := fmt.Sprintf("req-%d", i)
					ch := make(chan json.RawMessage, 1)
					amu.Lock()
					answers[id] = ch
					amu.Unlock()
					send(map[string]any{"id": id, "method": r.method, "params": map[string]any{"threadId": "th-fake", "turnId": "turn-1"}})
					got[r.method] = <-ch
				}
				text, _ := json.Marshal(got)
				notify("item/completed", map[string]any{"threadId": "th-fake", "turnId": "turn-1", "item": map[string]any{"type": "agentMessage", "id": "m1", "text": string(text)}})
				notify("turn/completed", map[string]any{"threadId": "th-fake", "turn": map[string]any{"id": "turn-1", "status": "completed"}})
			}()
		}
	}
	return 0
}

// startFake starts the adapter in process against the fake codex.
func startFake(t *testing.T, mode string) (adapterkit.Session, string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(codex.EnvBinary, exe)
	t.Setenv(envFake, mode)
	t.Setenv(keyEnv, testKey)
	home, ws := t.TempDir(), t.TempDir()
	key, url := keyEnv, "http://127.0.0.1:9/v1"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := codex.New().Start(ctx, adapterkit.StartInput{
		Config: contract.AgentConfig{Models: map[string]contract.AgentModel{
			"default": {Provider: "stub", Model: "m", APIKeyEnv: &key, BaseURL: &url},
		}},
		RuntimeContext: contract.RuntimeContext{Environment: contract.EnvironmentHandle{Workspace: &ws}},
		Home:           home,
	})
	if s != nil {
		t.Cleanup(func() { s.Stop(context.Background()) })
	}
	return s, home, err
}

// TestFakeServerRequestsAnswered: every server-to-client request gets an
// answer, so a turn never waits on a human.
func TestFakeServerRequestsAnswered(t *testing.T) {
	s, home, err := startFake(t, "approvals")
	if err != nil {
		t.Fatal(err)
	}
	for _, level := range []string{contract.LevelLive, contract.LevelActive, contract.LevelReady} {
		if h, err := s.Health(context.Background(), level); err != nil || h.Outcome != contract.OutcomePassed {
			t.Errorf("health %s: %+v %v", level, h, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := s.Invoke(ctx, adapterkit.Invocation{Request: contract.AgentRunRequest{Input: "go"}, Events: &adaptertest.Events{}})
	if err != nil || res.Status != contract.StatusSucceeded {
		t.Fatalf("invoke: %+v %v", res, err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(res.Output.(string)), &got); err != nil {
		t.Fatal(err)
	}
	for _, r := range serverRequests {
		if string(got[r.method]) != r.want {
			t.Errorf("%s answered %s, want %s", r.method, got[r.method], r.want)
		}
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, "codex")); !os.IsNotExist(err) {
		t.Errorf("private dirs remain: %v", err)
	}
	if h, _ := s.Health(context.Background(), contract.LevelLive); h.Outcome != contract.OutcomeFailed {
		t.Errorf("live after stop: %+v", h)
	}
}

// TestFakeInterruptIgnored: when codex does not end the turn after
// turn/interrupt, the invoke still returns cancelled within the core's
// cancel grace, and the next invoke fails fast (retryable) instead of
// overlapping two turns.
func TestFakeInterruptIgnored(t *testing.T) {
	s, _, err := startFake(t, "ignore_interrupt")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	t0 := time.Now()
	res, err := s.Invoke(ctx, adapterkit.Invocation{Request: contract.AgentRunRequest{Input: "go"}, Events: &adaptertest.Events{}})
	took := time.Since(t0) - 200*time.Millisecond
	if err != nil || res.Status != contract.StatusCancelled || took > 2*time.Second {
		t.Fatalf("cancelled invoke: %+v %v after %s", res, err, took)
	}
	res, err = s.Invoke(context.Background(), adapterkit.Invocation{Request: contract.AgentRunRequest{Input: "next"}, Events: &adaptertest.Events{}})
	if err != nil || res.Status != contract.StatusFailed || res.Error.Code != codex.CodeTurnStillRunning || !res.Error.Retryable {
		t.Fatalf("next invoke: %+v %v", res, err)
	}
}

// TestFakeExitMidTurn: codex dying during a turn is a lifecycle error
// (the runtime fails), and health reports it.
func TestFakeExitMidTurn(t *testing.T) {
	s, _, err := startFake(t, "exit_mid_turn")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Invoke(context.Background(), adapterkit.Invocation{Request: contract.AgentRunRequest{Input: "go"}, Events: &adaptertest.Events{}})
	var ae *adapterkit.Error
	if !errors.As(err, &ae) || ae.Code != codex.CodeExited || !strings.Contains(ae.Message, "exit status 3") {
		t.Fatalf("invoke: %v", err)
	}
	if h, _ := s.Health(context.Background(), contract.LevelReady); h.Outcome != contract.OutcomeFailed {
		t.Errorf("ready after exit: %+v", h)
	}
}

// TestFakeStartFailures: start fails with stable codes, leaving nothing.
func TestFakeStartFailures(t *testing.T) {
	_, home, err := startFake(t, "exit_on_start")
	var ae *adapterkit.Error
	if !errors.As(err, &ae) || ae.Code != codex.CodeStartFailed || !strings.Contains(ae.Message, "exit status 1") {
		t.Fatalf("exit on start: %v", err)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("home holds %v", entries)
	}

	t.Setenv(keyEnv, "")
	key, url := keyEnv, "http://127.0.0.1:9/v1"
	_, err = codex.New().Start(context.Background(), adapterkit.StartInput{Config: contract.AgentConfig{Models: map[string]contract.AgentModel{
		"default": {Provider: "stub", Model: "m", APIKeyEnv: &key, BaseURL: &url},
	}}, Home: t.TempDir()})
	if !errors.As(err, &ae) || ae.Code != codex.CodeAPIKeyMissing || !strings.Contains(ae.Message, keyEnv) {
		t.Fatalf("missing key: %v", err)
	}
	_, err = codex.New().Start(context.Background(), adapterkit.StartInput{Config: contract.AgentConfig{
		Harness: &contract.AgentHarnessConfig{Settings: map[string]any{"sandbox": "nope"}},
	}, Home: t.TempDir()})
	if !errors.As(err, &ae) || ae.Code != codex.CodeInvalidSettings {
		t.Fatalf("bad settings: %v", err)
	}
}
