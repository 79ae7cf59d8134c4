package claude_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapters/claude"
	"github.com/fabric-runtime/fabric/contract"
)

// fakeModeEnv makes this test binary act as a scripted claude speaking the
// stream-json control protocol (see fakeClaude), so that the session's
// protocol handling is tested without the real harness.
const fakeModeEnv = "FAKECLAUDE_MODE"

// fakeHarness is this binary as a scripted claude, when a test started it
// as one.
func fakeHarness() (bool, int) {
	if mode := os.Getenv(fakeModeEnv); mode != "" {
		return true, fakeClaude(mode)
	}
	return false, 0
}

// fakeClaude is a minimal stream-json peer. Modes:
//
//	ok           answer each user message ("echo: <text>") with lifecycle events
//	nolifecycle  the same without command_lifecycle lines
//	slow         start the turn, never finish it unless interrupted
//	nointerrupt  start the turn, ignore interrupts; the next message first
//	             gets the abandoned turn's (stale) result, then its own
//	crash        exit 3 in the middle of a turn
//	permission   ask can_use_tool and answer with the behavior it got
//	hook         send an unknown control request and answer with the reply
//	noinit       never answer initialize
//	badstart     exit 1 at once
//	grandchild   like ok, with a `sleep 60` left in the process group
func fakeClaude(mode string) int {
	if mode == "badstart" {
		fmt.Fprintln(os.Stderr, "fake claude: error: unknown option")
		return 1
	}
	if mode == "grandchild" {
		cmd := exec.Command("sleep", "60")
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	var wmu sync.Mutex
	emit := func(v any) {
		b, _ := json.Marshal(v)
		wmu.Lock()
		os.Stdout.Write(append(b, '\n'))
		wmu.Unlock()
	}
	lifecycle := func(uuid, state string) {
		if mode != "nolifecycle" {
			emit(map[string]any{"type": "command_lifecycle", "command_uuid": uuid, "state": state})
		}
	}
	result := func(subtype, text string, isErr bool) {
		emit(map[string]any{"type": "result", "subtype": subtype, "is_error": isErr, "result": text,
			"total_cost_usd": 0.001, "usage": map[string]any{"input_tokens": 10, "output_tokens": 2}})
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	current, stale := "", ""
	for in.Scan() {
		var m struct {
			Type      string         `json:"type"`
			RequestID string         `json:"request_id"`
			Request   map[string]any `json:"request"`
			Response  map[string]any `json:"response"`
			UUID      string         `json:"uuid"`
			Message   struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil {
			continue
		}
		switch m.Type {
		case "control_request":
			switch m.Request["subtype"] {
			case "initialize":
				if mode != "noinit" {
					emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": m.RequestID, "response": map[string]any{"commands": []any{}}}})
				}
			case "interrupt":
				emit(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": m.RequestID, "response": map[string]any{}}})
				if mode == "slow" && current != "" {
					result("error_during_execution", "", true)
					lifecycle(current, "cancelled")
					current = ""
				}
			}
			continue
		case "user":
		default:
			continue
		}
		text := ""
		if len(m.Message.Content) > 0 {
			text = m.Message.Content[0].Text
		}
		if stale != "" { // the abandoned turn ends only now
			result("success", "STALE", false)
			lifecycle(stale, "completed")
			stale = ""
		}
		lifecycle(m.UUID, "queued")
		lifecycle(m.UUID, "started")
		emit(map[string]any{"type": "system", "subtype": "init", "session_id": "fake-session", "model": "fake", "permissionMode": "default"})
		delta := func(s string) {
			emit(map[string]any{"type": "stream_event", "event": map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": s}}, "parent_tool_use_id": nil})
		}
		switch mode {
		case "slow":
			current = m.UUID
			delta("slow ")
			continue
		case "nointerrupt":
			if stale == "" && current == "" {
				current, stale = m.UUID, m.UUID
				delta("never ")
				continue
			}
		case "crash":
			delta("about to crash")
			time.Sleep(50 * time.Millisecond)
			return 3
		case "permission", "hook":
			req := map[string]any{"subtype": "can_use_tool", "tool_name": "Bash", "input": map[string]any{"command": "ls"}}
			if mode == "hook" {
				req = map[string]any{"subtype": "hook_callback", "callback_id": "x"}
			}
			emit(map[string]any{"type": "control_request", "request_id": "perm-1", "request": req})
			reply := "none"
			for in.Scan() {
				var r struct {
					Type     string `json:"type"`
					Response struct {
						Subtype   string         `json:"subtype"`
						RequestID string         `json:"request_id"`
						Response  map[string]any `json:"response"`
					} `json:"response"`
				}
				if json.Unmarshal(in.Bytes(), &r) == nil && r.Type == "control_response" && r.Response.RequestID == "perm-1" {
					reply = r.Response.Subtype
					if b, ok := r.Response.Response["behavior"].(string); ok {
						reply += ":" + b
					}
					break
				}
			}
			result("success", "reply="+reply, false)
			lifecycle(m.UUID, "completed")
			continue
		}
		current = ""
		answer := "echo: " + text
		delta(answer[:len(answer)/2])
		delta(answer[len(answer)/2:])
		emit(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": answer}}}, "parent_tool_use_id": nil})
		result("success", answer, false)
		lifecycle(m.UUID, "completed")
	}
	return 0
}

// startFake starts the adapter in-process against the fake claude.
func startFake(t *testing.T, mode string, settings map[string]any) (adapterkit.Session, string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(claude.EnvBinary, exe)
	t.Setenv(fakeModeEnv, mode)
	t.Setenv("GORACE", "atexit_sleep_ms=0") // the fake is this (maybe race-enabled) binary
	home := t.TempDir()
	ws := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := claude.New().Start(ctx, adapterkit.StartInput{
		Home: home,
		Config: contract.AgentConfig{
			Harness: &contract.AgentHarnessConfig{Settings: settings},
			Models:  map[string]contract.AgentModel{"default": {Provider: "anthropic", Model: "fake"}},
		},
		RuntimeContext: contract.RuntimeContext{Environment: contract.EnvironmentHandle{Workspace: &ws}},
	})
	if s != nil {
		t.Cleanup(func() {
			sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer scancel()
			s.Stop(sctx)
		})
	}
	return s, home, err
}

func invoke(t *testing.T, ctx context.Context, s adapterkit.Session, input string) (contract.AgentRunResult, *adaptertest.Events, error) {
	t.Helper()
	rec := &adaptertest.Events{}
	res, err := s.Invoke(ctx, adapterkit.Invocation{ID: "invocation-1", Request: contract.AgentRunRequest{Input: input}, Events: rec})
	return res, rec, err
}

func health(t *testing.T, s adapterkit.Session, level string) adapterkit.Health {
	t.Helper()
	h, err := s.Health(context.Background(), level)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestFakeTurnHealthAndStop(t *testing.T) {
	for _, mode := range []string{"ok", "nolifecycle"} {
		t.Run(mode, func(t *testing.T) {
			s, home, err := startFake(t, mode, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, level := range []string{contract.LevelLive, contract.LevelActive, contract.LevelReady} {
				if h := health(t, s, level); h.Outcome != contract.OutcomePassed || h.Activity != contract.ActivityIdle {
					t.Errorf("%s before the turn: %+v", level, h)
				}
			}
			for i, in := range []string{"hello", "again"} {
				res, rec, err := invoke(t, context.Background(), s, in)
				if err != nil {
					t.Fatal(err)
				}
				if res.Status != contract.StatusSucceeded || res.Output != "echo: "+in {
					t.Errorf("turn %d: %+v", i+1, res)
				}
				if res.Usage == nil || res.Usage.CostUSD == nil || *res.Usage.TotalTokens != 12 {
					t.Errorf("usage %+v", res.Usage)
				}
				if k := strings.Join(rec.Kinds(), ","); k != "status,output_delta,output_delta" {
					t.Errorf("events %s", k)
				}
			}
			dirs := claude.NewDirs(home)
			if _, err := os.Stat(dirs.Tmp); err != nil {
				t.Fatalf("TMPDIR: %v", err)
			}
			pgid := health(t, s, contract.LevelLive).Metadata["pid"].(int)
			if err := s.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dirs.Tmp); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("TMPDIR %s remains after stop", dirs.Tmp)
			}
			if _, err := os.Stat(dirs.Root); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("private dir %s remains after stop", dirs.Root)
			}
			if _, err := os.Stat(home); err != nil {
				t.Errorf("the runtime home (the core's) was removed: %v", err)
			}
			if left := groupMembers(pgid); len(left) > 0 {
				t.Errorf("group %d still has %v", pgid, left)
			}
			if h := health(t, s, contract.LevelLive); h.Outcome != contract.OutcomeFailed || h.ReasonCode != contract.ReasonAgentExited {
				t.Errorf("live after stop: %+v", h)
			}
		})
	}
}

func TestFakeCancelInterrupts(t *testing.T) {
	s, _, err := startFake(t, "slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	t0 := time.Now()
	res, _, err := invoke(t, ctx, s, "take long")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != contract.StatusCancelled {
		t.Fatalf("status %s, want cancelled", res.Status)
	}
	if took := time.Since(t0); took > time.Second {
		t.Errorf("took %s: the interrupt's result was not used", took)
	}
}

// An interrupt that is not answered with a result ends the turn after
// CancelWait; the abandoned turn's late output does not leak into the next.
func TestFakeCancelTimeoutDropsStaleOutput(t *testing.T) {
	s, _, err := startFake(t, "nointerrupt", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	t0 := time.Now()
	res, _, err := invoke(t, ctx, s, "one")
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	if res.Status != contract.StatusCancelled || took < claude.CancelWait || took > claude.CancelWait+time.Second {
		t.Fatalf("status %s after %s", res.Status, took)
	}
	res, rec, err := invoke(t, context.Background(), s, "two")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != contract.StatusSucceeded || res.Output != "echo: two" {
		t.Errorf("next turn %+v (events %v): stale output leaked", res, rec.Kinds())
	}
}

func TestFakeCrashFailsTheRuntime(t *testing.T) {
	s, _, err := startFake(t, "crash", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = invoke(t, context.Background(), s, "x")
	var ae *adapterkit.Error
	if !errors.As(err, &ae) || ae.Code != claude.CodeExited || !strings.Contains(ae.Message, "exit status 3") {
		t.Fatalf("err %v, want %s with the exit status", err, claude.CodeExited)
	}
	for _, level := range []string{contract.LevelLive, contract.LevelReady} {
		if h := health(t, s, level); h.Outcome != contract.OutcomeFailed || h.ReasonCode != contract.ReasonAgentExited {
			t.Errorf("%s after the crash: %+v", level, h)
		}
	}
}

func TestFakeControlRequestsAnswered(t *testing.T) {
	for mode, want := range map[string]string{"permission": "reply=success:deny", "hook": "reply=error"} {
		t.Run(mode, func(t *testing.T) {
			s, _, err := startFake(t, mode, map[string]any{"permission_mode": "acceptEdits"})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, rec, err := invoke(t, ctx, s, "x")
			if err != nil {
				t.Fatal(err)
			}
			if res.Output != want {
				t.Errorf("output %q, want %q", res.Output, want)
			}
			if mode == "permission" && !strings.Contains(strings.Join(rec.Kinds(), ","), claude.EventStatus) {
				t.Errorf("no status event for the denied prompt: %v", rec.Kinds())
			}
		})
	}
}

func TestFakeStartFailures(t *testing.T) {
	for mode, settings := range map[string]map[string]any{
		"noinit":   {"initialize_timeout_seconds": 0.5},
		"badstart": nil,
	} {
		t.Run(mode, func(t *testing.T) {
			_, home, err := startFake(t, mode, settings)
			var ae *adapterkit.Error
			if !errors.As(err, &ae) || ae.Code != claude.CodeInitializeFailed {
				t.Fatalf("err %v, want %s", err, claude.CodeInitializeFailed)
			}
			if _, err := os.Stat(filepath.Join(home, "claude")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a failed start left its private dir")
			}
			for _, e := range procsWithEnvPrefix("CLAUDE_CONFIG_DIR=" + home) {
				t.Errorf("process %d of the failed start still runs", e)
			}
		})
	}
}

func TestFakeStopKillsTheGroup(t *testing.T) {
	s, _, err := startFake(t, "grandchild", nil)
	if err != nil {
		t.Fatal(err)
	}
	pgid := health(t, s, contract.LevelLive).Metadata["pid"].(int)
	if n := len(groupMembers(pgid)); n < 2 {
		t.Fatalf("group %d has %d processes, want claude and its child", pgid, n)
	}
	t0 := time.Now()
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left := groupMembers(pgid); len(left) > 0 {
		t.Errorf("group %d still has %v after stop", pgid, left)
	}
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("stop took %s", took)
	}
}

func TestFakeInvalidSettings(t *testing.T) {
	_, _, err := startFake(t, "ok", map[string]any{"permission_mode": "yolo"})
	var ae *adapterkit.Error
	if !errors.As(err, &ae) || ae.Code != claude.CodeInvalidSettings {
		t.Fatalf("err %v, want %s", err, claude.CodeInvalidSettings)
	}
}

// procsWithEnvPrefix lists processes with an environment entry starting
// with prefix.
func procsWithEnvPrefix(prefix string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(data), "\x00") {
			if strings.HasPrefix(kv, prefix) {
				if st, _, ok := procStat(pid); ok && st != 'Z' {
					out = append(out, pid)
				}
				break
			}
		}
	}
	return out
}
