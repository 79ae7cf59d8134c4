package health

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// scriptedTarget answers from fields; the evaluator is what is tested here
// (the real-host paths are tested in internal/runtime).
type scriptedTarget struct {
	obs     []Observation // successive Observe answers; the last repeats
	answers map[string]hostproto.HealthResult
	err     error
	block   bool
}

func (s *scriptedTarget) Observe() Observation {
	o := s.obs[0]
	if len(s.obs) > 1 {
		s.obs = s.obs[1:]
	}
	return o
}

func (s *scriptedTarget) Probe(ctx context.Context, level string) (hostproto.HealthResult, error) {
	if s.block {
		<-ctx.Done()
		return hostproto.HealthResult{}, ctx.Err()
	}
	return s.answers[level], s.err
}

var idle = Observation{Generation: "g1", State: "active", Activity: contract.ActivityIdle}

func pass(string) hostproto.HealthResult { return hostproto.HealthResult{Outcome: "passed"} }

func allPass() map[string]hostproto.HealthResult {
	return map[string]hostproto.HealthResult{"live": pass(""), "active": pass(""), "ready": pass("")}
}

func TestCheckEvaluation(t *testing.T) {
	tests := []struct {
		name            string
		target          *scriptedTarget
		level           string
		outcome, reason string
		last            string // stage:level of the last observation
	}{
		{"all pass", &scriptedTarget{obs: []Observation{idle}, answers: allPass()}, "ready", "passed", "", "adapter:ready"},
		{"stops at the first non-pass", &scriptedTarget{obs: []Observation{idle}, answers: map[string]hostproto.HealthResult{"live": pass(""), "active": {Outcome: "failed", ReasonCode: "endpoint_unavailable"}}}, "ready", "failed", "endpoint_unavailable", "adapter:active"},
		{"failed without a reason gets health_failed", &scriptedTarget{obs: []Observation{idle}, answers: map[string]hostproto.HealthResult{"live": {Outcome: "failed"}}}, "live", "failed", "health_failed", "adapter:live"},
		{"an invalid outcome is unknown", &scriptedTarget{obs: []Observation{idle}, answers: map[string]hostproto.HealthResult{"live": {Outcome: "great"}}}, "live", "unknown", "probe_error", "adapter:live"},
		{"probe error is unknown", &scriptedTarget{obs: []Observation{idle}, err: errors.New("boom")}, "live", "unknown", "probe_error", "adapter:live"},
		{"exit during the probe", &scriptedTarget{obs: []Observation{idle}, err: ErrExited}, "live", "failed", "agent_exited", "adapter:live"},
		{"timeout is unknown", &scriptedTarget{obs: []Observation{idle}, block: true}, "live", "unknown", "probe_timeout", "adapter:live"},
		{"exited process", &scriptedTarget{obs: []Observation{{Generation: "g1", State: "failed", Exited: true}}}, "ready", "failed", "agent_exited", "process:live"},
		{"gone", &scriptedTarget{obs: []Observation{{Generation: "g1", State: "stopped", Gone: true}}}, "live", "failed", "runtime_unavailable", "state"},
		{"stopping is unknown", &scriptedTarget{obs: []Observation{{Generation: "g1", State: "stopping", Stopping: true}}}, "live", "unknown", "runtime_unavailable", "state"},
		{"replaced while checked", &scriptedTarget{obs: []Observation{idle, {Generation: "g2", State: "active"}}, answers: allPass()}, "live", "unknown", "observation_changed", "observation"},
		{"v1: live from the process", &scriptedTarget{obs: []Observation{idle}, err: errors.ErrUnsupported}, "live", "passed", "", "process:live"},
		{"v1: deeper unsupported", &scriptedTarget{obs: []Observation{idle}, err: errors.ErrUnsupported}, "active", "unsupported", "unsupported_adapter", "adapter:active"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := contract.CheckRequest{Scope: "runtime", RuntimeID: "runtime-1", Level: tc.level, TimeoutSeconds: 0.2}
			if err := Normalize(&req); err != nil {
				t.Fatal(err)
			}
			rep := Check(context.Background(), req, tc.target)
			reason := ""
			if rep.ReasonCode != nil {
				reason = *rep.ReasonCode
			}
			if rep.Outcome != tc.outcome || reason != tc.reason {
				t.Fatalf("got %s/%s, want %s/%s", rep.Outcome, reason, tc.outcome, tc.reason)
			}
			last := rep.Observations[len(rep.Observations)-1]
			got := last.Stage
			if last.Level != "" {
				got += ":" + last.Level
			}
			if got != tc.last {
				t.Fatalf("last stage %s, want %s", got, tc.last)
			}
			if rep.FinishedAtMillis < rep.StartedAtMillis {
				t.Fatal("finished before started")
			}
		})
	}
}

func TestCheckDeadlineCoversTheWholeCheck(t *testing.T) {
	req := contract.CheckRequest{Scope: "runtime", RuntimeID: "r", Level: "ready", TimeoutSeconds: 0.3}
	if err := Normalize(&req); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rep := Check(context.Background(), req, &scriptedTarget{obs: []Observation{idle}, block: true})
	if rep.Outcome != "unknown" {
		t.Fatalf("outcome %s", rep.Outcome)
	}
	// One probe used the deadline; no stage after it was attempted.
	if n := len(rep.Observations); n != 3 {
		t.Fatalf("%d observations, want 3 (state, process, adapter live)", n)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the deadline was not applied")
	}
}

func TestNormalizeDefaults(t *testing.T) {
	req := contract.CheckRequest{Scope: "runtime", RuntimeID: "r"}
	if err := Normalize(&req); err != nil {
		t.Fatal(err)
	}
	if req.Level != "live" || req.TimeoutSeconds != 3 || req.SchemaVersion != contract.CheckSchemaVersion {
		t.Fatalf("defaults: %+v", req)
	}
	srv := contract.CheckRequest{Scope: "server"}
	if err := Normalize(&srv); err != nil || srv.Level != "" {
		t.Fatalf("server: %+v %v", srv, err)
	}
}
