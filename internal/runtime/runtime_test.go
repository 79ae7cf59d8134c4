package runtime

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/host"
)

var protocols = []struct{ name, adapter string }{{"v1", scriptedV1}, {"v2", scriptedV2}}

func TestStartInvokeStop(t *testing.T) {
	for _, pr := range protocols {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			opts := testOptions(t)
			rt := startRuntime(t, testPlan(t, pr.adapter, map[string]any{"response": "turn {turn}: {input}", "events": 2}), opts)
			h := rt.Handle()
			if !strings.HasPrefix(h.RuntimeID, "runtime-") || !strings.HasPrefix(h.Environment.EnvironmentID, "environment-") || h.Status != StateActive {
				t.Fatalf("handle %+v", h)
			}
			if err := rt.VerifyHandle(&h); err != nil {
				t.Fatal(err)
			}
			forged := h
			forged.AgentName = "someone-else"
			if err := rt.VerifyHandle(&forged); err == nil {
				t.Fatal("forged handle verified")
			}
			var live []string
			var mu sync.Mutex
			res, err := rt.Invoke(context.Background(), contract.RunRequest{RequestID: "my-request", Input: "hello"}, InvokeOptions{Events: func(ev contract.FabricEvent) {
				mu.Lock()
				live = append(live, ev.Kind)
				mu.Unlock()
			}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != contract.StatusSucceeded || res.Output != "turn 1: hello" || res.Error != nil {
				t.Fatalf("result %s %v %+v", res.Status, res.Output, res.Error)
			}
			if res.RequestID != "my-request" || !strings.HasPrefix(res.InvocationID, "invocation-") || res.RuntimeID != h.RuntimeID {
				t.Fatalf("ids %s %s %s", res.RequestID, res.InvocationID, res.RuntimeID)
			}
			if res.AgentName != "test-agent" || res.AdapterID != pr.adapter || res.AdapterKind != "process" {
				t.Fatalf("identity %+v", res)
			}
			kinds := eventKinds(res.Events)
			wantDeltas := 0
			if pr.name == "v2" {
				wantDeltas = 2
			}
			if kinds[0] != contract.EventRuntimeStart || kinds[1] != contract.EventInvocationStart || kinds[len(kinds)-1] != contract.EventInvocationEnd || count(kinds, "output_delta") != wantDeltas {
				t.Fatalf("events %v", kinds)
			}
			if strings.Join(live, ",") != strings.Join(kinds, ",") {
				t.Fatalf("live events %v differ from result events %v", live, kinds)
			}
			if res.Usage == nil || res.Usage.TotalTokens == nil {
				t.Fatalf("usage %+v", res.Usage)
			}
			res2, err := rt.Invoke(context.Background(), contract.RunRequest{Input: "again"}, InvokeOptions{})
			if err != nil || res2.Output != "turn 2: again" || strings.HasPrefix(res2.RequestID, "request-") == false {
				t.Fatalf("second invoke %+v %v", res2, err)
			}
			if k := eventKinds(res2.Events); k[0] != contract.EventInvocationStart {
				t.Fatalf("runtime_start repeated: %v", k)
			}
			pgid := rt.HostPid()
			stop, err := rt.Stop(context.Background())
			if err != nil || stop.Status != "stopped" || stop.HostCrashed || len(stop.Events) != 1 || stop.Events[0].Kind != contract.EventRuntimeStop {
				t.Fatalf("stop %+v %v", stop, err)
			}
			again, err := rt.Stop(context.Background())
			if err != nil || !again.AlreadyStopped {
				t.Fatalf("second stop %+v %v", again, err)
			}
			_, err = rt.Invoke(context.Background(), contract.RunRequest{Input: "late"}, InvokeOptions{})
			var se *contract.StateError
			if !errors.As(err, &se) || se.Code != CodeRuntimeStopped {
				t.Fatalf("invoke after stop: %v", err)
			}
			waitGroupGone(t, pgid)
			assertNoHomes(t, opts.StateDir)
		})
	}
}

func TestConcurrentInvokeIsBusy(t *testing.T) {
	for _, pr := range protocols {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			rt := startRuntime(t, testPlan(t, pr.adapter, map[string]any{"delay_ms": 1500}), testOptions(t))
			first := make(chan *contract.RunResult, 1)
			go func() {
				res, _ := rt.Invoke(context.Background(), contract.RunRequest{Input: "slow"}, InvokeOptions{})
				first <- res
			}()
			waitState(t, rt, StateInvoking)
			begin := time.Now()
			_, err := rt.Invoke(context.Background(), contract.RunRequest{Input: "second"}, InvokeOptions{})
			var se *contract.StateError
			if !errors.As(err, &se) || se.Code != CodeRuntimeBusy || !se.Retryable {
				t.Fatalf("second invoke: %v", err)
			}
			if d := time.Since(begin); d > 200*time.Millisecond {
				t.Errorf("busy answer took %s", d)
			}
			if res := <-first; res.Status != contract.StatusSucceeded {
				t.Fatalf("first %+v", res)
			}
		})
	}
}

func TestCancelInvocation(t *testing.T) {
	for _, pr := range protocols {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			rt := startRuntime(t, testPlan(t, pr.adapter, map[string]any{"delay_ms": 60000}), testOptions(t))
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			begin := time.Now()
			res, err := rt.Invoke(ctx, contract.RunRequest{Input: "x"}, InvokeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("cancelled result after %s", time.Since(begin))
			if d := time.Since(begin); d > 3*time.Second {
				t.Errorf("cancel took %s", d)
			}
			if res.Status != contract.StatusCancelled || res.Error == nil || res.Error.Code != CodeCancelled {
				t.Fatalf("result %s %+v", res.Status, res.Error)
			}
			if pr.name == "v2" {
				// v2 cancels the turn and keeps the runtime.
				if rt.State() != StateActive {
					t.Fatalf("state %s", rt.State())
				}
				// ...and takes the next turn (cancelled again, quickly).
				ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
				defer cancel2()
				res, err := rt.Invoke(ctx2, contract.RunRequest{Input: "after"}, InvokeOptions{})
				if err != nil || res.Status != contract.StatusCancelled || rt.State() != StateActive {
					t.Fatalf("invoke after cancel: %+v %v state=%s", res, err, rt.State())
				}
				return
			}
			// v1 has no cancel: the host was stopped and the runtime failed.
			if rt.State() != StateFailed {
				t.Fatalf("state %s", rt.State())
			}
		})
	}
}

func TestHostKilledMidInvoke(t *testing.T) {
	for _, pr := range protocols {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			rt := startRuntime(t, testPlan(t, pr.adapter, map[string]any{"delay_ms": 60000}), testOptions(t))
			pgid := rt.HostPid()
			done := make(chan *contract.RunResult, 1)
			go func() {
				res, _ := rt.Invoke(context.Background(), contract.RunRequest{Input: "x"}, InvokeOptions{})
				done <- res
			}()
			waitState(t, rt, StateInvoking)
			time.Sleep(50 * time.Millisecond)
			killed := time.Now()
			if err := syscall.Kill(pgid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			res := <-done
			elapsed := time.Since(killed)
			if res.Status != contract.StatusFailed || res.Error.Code != host.CodeHostCrashed {
				t.Fatalf("result %s %+v", res.Status, res.Error)
			}
			t.Logf("crash noticed %s after SIGKILL (target 100ms)", elapsed)
			if elapsed > time.Second {
				t.Errorf("failure noticed after %s", elapsed)
			}
			if rt.State() != StateFailed {
				t.Fatalf("state %s", rt.State())
			}
			waitGroupGone(t, pgid)
		})
	}
}

func TestScriptedFailureModes(t *testing.T) {
	tests := []struct {
		name      string
		adapter   string
		settings  map[string]any
		startCode string
		status    string
		code      string
		state     string
	}{
		{"start failure v2", scriptedV2, map[string]any{"mode": "start_failure"}, "scripted_start_failure", "", "", ""},
		{"start failure v1", scriptedV1, map[string]any{"mode": "start_failure"}, "scripted_start_failure", "", "", ""},
		{"exit on start v2", scriptedV2, map[string]any{"mode": "exit_on_start"}, host.CodeHostCrashed, "", "", ""},
		{"exit on start v1", scriptedV1, map[string]any{"mode": "exit_on_start"}, host.CodeHostCrashed, "", "", ""},
		{"invoke failure v2", scriptedV2, map[string]any{"mode": "invoke_failure"}, "", contract.StatusFailed, "scripted_invoke_failure", StateActive},
		{"invoke failure v1", scriptedV1, map[string]any{"mode": "invoke_failure"}, "", contract.StatusFailed, "scripted_invoke_failure", StateActive},
		{"malformed v2", scriptedV2, map[string]any{"mode": "malformed_output"}, "", contract.StatusFailed, host.CodeProtocolError, StateFailed},
		{"malformed v1", scriptedV1, map[string]any{"mode": "malformed_output"}, "", contract.StatusFailed, host.CodeProtocolError, StateFailed},
		{"crash v2", scriptedV2, map[string]any{"mode": "crash_mid_invoke"}, "", contract.StatusFailed, host.CodeHostCrashed, StateFailed},
		{"crash v1", scriptedV1, map[string]any{"mode": "crash_mid_invoke"}, "", contract.StatusFailed, host.CodeHostCrashed, StateFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := testOptions(t)
			rt, err := Start(context.Background(), testPlan(t, tt.adapter, tt.settings), opts)
			if tt.startCode != "" {
				var re *contract.RuntimeError
				if !errors.As(err, &re) || re.Code != tt.startCode || re.Stage != contract.StageStart {
					t.Fatalf("start err %v, want %s", err, tt.startCode)
				}
				assertNoHomes(t, opts.StateDir)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Stop(context.Background())
			res, err := rt.Invoke(context.Background(), contract.RunRequest{Input: "x"}, InvokeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.status || res.Error == nil || res.Error.Code != tt.code {
				t.Fatalf("result %s %+v", res.Status, res.Error)
			}
			if rt.State() != tt.state {
				t.Fatalf("state %s, want %s", rt.State(), tt.state)
			}
		})
	}
}

func TestInvokeDeadline(t *testing.T) {
	for _, pr := range protocols {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			p := testPlan(t, pr.adapter, map[string]any{"mode": "hang"}, func(c *contract.FabricConfig) {
				c.Runtime.Limits = &contract.LifecycleLimits{InvokeSeconds: 0.5}
			})
			rt := startRuntime(t, p, testOptions(t))
			res, err := rt.Invoke(context.Background(), contract.RunRequest{Input: "x"}, InvokeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != contract.StatusFailed || res.Error.Code != host.CodeHostTimeout || !res.Error.Retryable {
				t.Fatalf("result %s %+v", res.Status, res.Error)
			}
			if rt.State() != StateFailed {
				t.Fatalf("state %s", rt.State())
			}
		})
	}
}

func TestStopDuringInvoke(t *testing.T) {
	for _, pr := range protocols {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			opts := testOptions(t)
			rt := startRuntime(t, testPlan(t, pr.adapter, map[string]any{"mode": "hang"}), opts)
			pgid := rt.HostPid()
			done := make(chan *contract.RunResult, 1)
			go func() {
				res, _ := rt.Invoke(context.Background(), contract.RunRequest{Input: "x"}, InvokeOptions{})
				done <- res
			}()
			waitState(t, rt, StateInvoking)
			begin := time.Now()
			if _, err := rt.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(begin); d > 15*time.Second {
				t.Errorf("stop took %s", d)
			}
			res := <-done
			if res.Status != contract.StatusCancelled {
				t.Fatalf("in-flight result %s %+v", res.Status, res.Error)
			}
			waitGroupGone(t, pgid)
			assertNoHomes(t, opts.StateDir)
		})
	}
}

// TestNewStartsNothing: New mints the runtime's id and builds its bound
// handle before anything runs (the caller's start span names it); Start
// then launches that runtime under the same id.
func TestNewStartsNothing(t *testing.T) {
	opts := testOptions(t)
	opts.Key = NewBindingKey()
	r, err := New(testPlan(t, scriptedV2, nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Handle()
	if !strings.HasPrefix(h.RuntimeID, "runtime-") || h.Status != StateStarting || h.Harness == "" || h.Environment.Provider != contract.EnvironmentLocal {
		t.Fatalf("handle %+v", h)
	}
	if err := r.VerifyHandle(&h); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(opts.StateDir); len(entries) != 0 {
		t.Fatalf("New left %v in the state dir", entries)
	}
	if err := r.Start(context.Background(), Telemetry{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Stop(context.Background()) })
	if got := r.Handle(); got.RuntimeID != h.RuntimeID || got.Status != StateActive {
		t.Fatalf("started handle %+v", got)
	}
}

func TestDiagnosticsAreRedacted(t *testing.T) {
	const secret = "sk-test-very-secret-value-42"
	t.Setenv("FABRIC_TEST_KEY", secret)
	key := "FABRIC_TEST_KEY"
	p := testPlan(t, scriptedV2, map[string]any{"mode": "start_failure", "stderr": "leaking " + secret + " to stderr"}, func(c *contract.FabricConfig) {
		c.Models = map[string]contract.ModelConfig{"default": {Provider: "openai", Model: "m", APIKeyEnv: &key}}
	})
	_, err := Start(context.Background(), p, testOptions(t))
	var re *contract.RuntimeError
	if !errors.As(err, &re) {
		t.Fatalf("err %v", err)
	}
	diag, _ := re.Metadata["diagnostics"].(string)
	if !strings.Contains(diag, "leaking "+contract.Redacted) {
		t.Fatalf("diagnostics missing or unredacted: %q", diag)
	}
	// The plan holds the secret only because this test wrote it into the
	// scripted stderr setting; the error and its diagnostics must not.
	if strings.Contains(mustJSON(re.Info())+re.Error(), secret) {
		t.Fatal("secret value leaked")
	}
}

func TestArtifactsOutsideRootRejected(t *testing.T) {
	rt := &Runtime{}
	root := t.TempDir()
	rt.root = &root
	os.Symlink("/etc", root+"/escape")
	for p, ok := range map[string]bool{"out/a.txt": true, "a.txt": true, "../x": false, "/etc/passwd": false, "a/../../x": false, `C:\x`: false, "escape/passwd": false, "": false} {
		_, got := rt.checkArtifact(contract.AgentArtifact{Name: "n", Kind: "file", Path: p})
		if got != ok {
			t.Errorf("%q: accepted=%v want %v", p, got, ok)
		}
	}
}

func waitState(t *testing.T, rt *Runtime, state string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for rt.State() != state {
		if time.Now().After(deadline) {
			t.Fatalf("state %s, want %s", rt.State(), state)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func eventKinds(evs []contract.FabricEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

func count(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}
