package runtime

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/health"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
)

func checkReq(t *testing.T, rt *Runtime, level string, timeout float64) contract.CheckRequest {
	t.Helper()
	req := contract.CheckRequest{Scope: contract.ScopeRuntime, RuntimeID: rt.ID(), Level: level, TimeoutSeconds: timeout}
	if err := health.Normalize(&req); err != nil {
		t.Fatal(err)
	}
	return req
}

func stages(rep contract.CheckReport) []string {
	var out []string
	for _, o := range rep.Observations {
		s := o.Stage
		if o.Level != "" {
			s += ":" + o.Level
		}
		out = append(out, s+"="+o.Outcome)
	}
	return out
}

func reason(rep contract.CheckReport) string {
	if rep.ReasonCode == nil {
		return ""
	}
	return *rep.ReasonCode
}

// TestCheckLevels checks an idle runtime at each level over both protocols
// against a real host: stages in order, cumulative, and nothing changed.
func TestCheckLevels(t *testing.T) {
	tests := []struct {
		adapter, level string
		outcome, why   string
		stages         []string
	}{
		{scriptedV2, "live", "passed", "", []string{"state=passed", "process:live=passed", "adapter:live=passed"}},
		{scriptedV2, "active", "passed", "", []string{"state=passed", "process:live=passed", "adapter:live=passed", "adapter:active=passed"}},
		{scriptedV2, "ready", "passed", "", []string{"state=passed", "process:live=passed", "adapter:live=passed", "adapter:active=passed", "adapter:ready=passed"}},
		// A v1 host has no health method: process evidence for live,
		// unsupported beyond.
		{scriptedV1, "live", "passed", "", []string{"state=passed", "process:live=passed"}},
		{scriptedV1, "ready", "unsupported", contract.ReasonUnsupportedAdapter, []string{"state=passed", "process:live=passed", "adapter:active=unsupported"}},
	}
	for _, tc := range tests {
		t.Run(tc.adapter+"/"+tc.level, func(t *testing.T) {
			rt := startRuntime(t, testPlan(t, tc.adapter, nil), testOptions(t))
			rep := rt.Check(context.Background(), checkReq(t, rt, tc.level, 0))
			if rep.Outcome != tc.outcome || reason(rep) != tc.why {
				t.Fatalf("outcome %s/%s, want %s/%s: %s", rep.Outcome, reason(rep), tc.outcome, tc.why, mustJSON(rep))
			}
			if got := stages(rep); mustJSON(got) != mustJSON(tc.stages) {
				t.Fatalf("stages %v, want %v", got, tc.stages)
			}
			if rep.Runtime == nil || rep.Runtime.Activity != contract.ActivityIdle || rep.Runtime.State != StateActive {
				t.Fatalf("runtime observation %+v", rep.Runtime)
			}
			if rep.RuntimeID == nil || *rep.RuntimeID != rt.ID() || rep.RequestedLevel == nil || *rep.RequestedLevel != tc.level {
				t.Fatalf("identity: %s", mustJSON(rep))
			}
			if rt.State() != StateActive {
				t.Fatalf("check changed state to %s", rt.State())
			}
			// The runtime still works after the check.
			res, err := rt.Invoke(context.Background(), contract.RunRequest{Input: "x"}, InvokeOptions{})
			if err != nil || res.Status != contract.StatusSucceeded {
				t.Fatalf("invoke after check: %v %+v", err, res)
			}
		})
	}
}

// TestCheckReadyDuringHangingInvoke: a check answers, within its deadline,
// while an invocation hangs, and reports the runtime busy.
func TestCheckReadyDuringHangingInvoke(t *testing.T) {
	rt := startRuntime(t, testPlan(t, scriptedV2, map[string]any{"mode": "hang"}), testOptions(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rt.Invoke(ctx, contract.RunRequest{Input: "hang"}, InvokeOptions{})
	}()
	waitState(t, rt, StateInvoking)
	start := time.Now()
	rep := rt.Check(context.Background(), checkReq(t, rt, "ready", 2))
	took := time.Since(start)
	if rep.Outcome != contract.OutcomePassed {
		t.Fatalf("outcome %s: %s", rep.Outcome, mustJSON(rep))
	}
	if took > 2*time.Second {
		t.Fatalf("check took %v, past its 2 s deadline", took)
	}
	if rep.Runtime.Activity != contract.ActivityBusy {
		t.Fatalf("activity %s, want busy", rep.Runtime.Activity)
	}
	if rt.State() != StateInvoking {
		t.Fatalf("check changed state to %s", rt.State())
	}
	cancel()
	<-done
}

// TestCheckKilledHost: a host killed from outside is failed/agent_exited
// at live.
func TestCheckKilledHost(t *testing.T) {
	for _, adapter := range []string{scriptedV2, scriptedV1} {
		t.Run(adapter, func(t *testing.T) {
			rt := startRuntime(t, testPlan(t, adapter, nil), testOptions(t))
			if err := syscall.Kill(rt.HostPid(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			select {
			case <-rt.host.Exited():
			case <-time.After(10 * time.Second):
				t.Fatal("host exit not observed")
			}
			rep := rt.Check(context.Background(), checkReq(t, rt, "ready", 0))
			if rep.Outcome != contract.OutcomeFailed || reason(rep) != contract.ReasonAgentExited {
				t.Fatalf("got %s/%s: %s", rep.Outcome, reason(rep), mustJSON(rep))
			}
			last := rep.Observations[len(rep.Observations)-1]
			if last.Level != contract.LevelLive {
				t.Fatalf("failed at level %q, want live", last.Level)
			}
		})
	}
}

// TestCheckHungHost: a stopped (SIGSTOP) host answers nothing; the check
// says unknown/probe_timeout within its deadline and changes nothing.
func TestCheckHungHost(t *testing.T) {
	rt := startRuntime(t, testPlan(t, scriptedV2, nil), testOptions(t))
	pid := rt.HostPid()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	testproc.WaitStopped(t, pid)
	start := time.Now()
	rep := rt.Check(context.Background(), checkReq(t, rt, "live", 0.5))
	took := time.Since(start)
	if rep.Outcome != contract.OutcomeUnknown || reason(rep) != contract.ReasonProbeTimeout {
		t.Fatalf("got %s/%s: %s", rep.Outcome, reason(rep), mustJSON(rep))
	}
	if took > 2*time.Second {
		t.Fatalf("check took %v with a 0.5 s deadline", took)
	}
	if rt.State() != StateActive {
		t.Fatalf("a timed-out check changed state to %s", rt.State())
	}
	syscall.Kill(pid, syscall.SIGCONT)
	rep = rt.Check(context.Background(), checkReq(t, rt, "ready", 0))
	if rep.Outcome != contract.OutcomePassed {
		t.Fatalf("after SIGCONT: %s", mustJSON(rep))
	}
}

func TestCheckStoppedAndFailing(t *testing.T) {
	rt := startRuntime(t, testPlan(t, scriptedV2, nil), testOptions(t))
	if _, err := rt.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep := rt.Check(context.Background(), checkReq(t, rt, "live", 0))
	if rep.Outcome != contract.OutcomeFailed || reason(rep) != contract.ReasonRuntimeUnavailable || rep.Runtime.Activity != contract.ActivityStopped {
		t.Fatalf("stopped: %s", mustJSON(rep))
	}

	// The adapter's own ready evidence: invoke_failure mode fails ready
	// once its failing turn was reached, while live still passes.
	rt = startRuntime(t, testPlan(t, scriptedV2, map[string]any{"mode": "invoke_failure"}), testOptions(t))
	rt.Invoke(context.Background(), contract.RunRequest{Input: "x"}, InvokeOptions{})
	if rep := rt.Check(context.Background(), checkReq(t, rt, "live", 0)); rep.Outcome != contract.OutcomePassed {
		t.Fatalf("live: %s", mustJSON(rep))
	}
	rep = rt.Check(context.Background(), checkReq(t, rt, "ready", 0))
	if rep.Outcome != contract.OutcomeFailed || reason(rep) != contract.ReasonHealthFailed {
		t.Fatalf("ready: %s", mustJSON(rep))
	}
}

// TestCheckInterfaceWithoutInterfaces: checking an interface of a runtime
// whose adapter runs none is unsupported over both protocols, and the
// report names the interface.
func TestCheckInterfaceWithoutInterfaces(t *testing.T) {
	for _, adapter := range []string{scriptedV2, scriptedV1} {
		rt := startRuntime(t, testPlan(t, adapter, nil), testOptions(t))
		req := checkReq(t, rt, "live", 0)
		req.Interface = "dashboard"
		rep := rt.Check(context.Background(), req)
		if rep.Outcome != contract.OutcomeUnsupported || rep.Interface == nil || *rep.Interface != "dashboard" {
			t.Fatalf("%s: %s", adapter, mustJSON(rep))
		}
		if last := rep.Observations[len(rep.Observations)-1]; last.Stage != "interface" {
			t.Fatalf("%s: last stage %s", adapter, last.Stage)
		}
	}
}

// TestStopAfterHostDiedMidTurn: when the host dies during a turn and the
// runtime is stopped right after (as a supervisor cleaning up does), the
// turn reports the crash (failed), not a cancellation nobody asked for.
func TestStopAfterHostDiedMidTurn(t *testing.T) {
	for _, adapter := range []string{scriptedV2, scriptedV1} {
		t.Run(adapter, func(t *testing.T) {
			rt := startRuntime(t, testPlan(t, adapter, map[string]any{"delay_ms": 60000}), testOptions(t))
			type outcome struct {
				res *contract.RunResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				res, err := rt.Invoke(context.Background(), contract.RunRequest{Input: "x"}, InvokeOptions{})
				done <- outcome{res, err}
			}()
			deadline := time.Now().Add(10 * time.Second)
			for rt.State() != StateInvoking {
				if time.Now().After(deadline) {
					t.Fatal("the invocation never started")
				}
				time.Sleep(time.Millisecond)
			}
			if err := syscall.Kill(rt.HostPid(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-rt.host.Exited()
			if _, err := rt.Stop(context.Background()); err != nil {
				t.Fatalf("stop: %v", err)
			}
			o := <-done
			if o.err == nil && o.res.Status == contract.StatusCancelled {
				t.Fatalf("the turn whose host died says cancelled: %s", mustJSON(o.res))
			}
		})
	}
}
