package temporal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// fakeBatch stands in for the planning and trial activities: n trials,
// each "run" for a few milliseconds while it counts how many run at once.
type fakeBatch struct {
	trials []PlannedTrial
	mu     sync.Mutex
	now    int
	peak   int
	runs   map[string]int
}

func newFakeBatch(n int) *fakeBatch {
	f := &fakeBatch{runs: map[string]int{}}
	for i := range n {
		f.trials = append(f.trials, PlannedTrial{ID: fmt.Sprintf("t%d__c__r01", i), Task: fmt.Sprintf("t%d", i), Config: "c", Repeat: 1, QuotaKey: "q"})
	}
	return f
}

func (f *fakeBatch) register(env *testsuite.TestWorkflowEnvironment, concurrency int) {
	env.RegisterWorkflowWithOptions(BatchWorkflow, workflow.RegisterOptions{Name: "BatchWorkflow"})
	env.RegisterWorkflowWithOptions(TrialWorkflow, workflow.RegisterOptions{Name: "TrialWorkflow"})
	env.RegisterActivityWithOptions(func(_ context.Context, ref BatchRef) (Plan, error) {
		return Plan{Count: len(f.trials), PlanFile: ref.PlanFile, Concurrency: concurrency, MaxAttempts: 1}, nil
	}, activity.RegisterOptions{Name: activityPlanBatch})
	env.RegisterActivityWithOptions(func(_ context.Context, _ BatchRef, _ Plan, offset, n int) ([]PlannedTrial, error) {
		offset = min(offset, len(f.trials))
		return f.trials[offset:min(offset+n, len(f.trials))], nil
	}, activity.RegisterOptions{Name: activityPlanPage})
	env.RegisterActivityWithOptions(func(_ context.Context, ref TrialRef) (TrialSummary, error) {
		f.mu.Lock()
		f.now++
		f.peak = max(f.peak, f.now)
		f.runs[ref.Trial.ID]++
		f.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
		f.mu.Lock()
		f.now--
		f.mu.Unlock()
		return TrialSummary{TrialID: ref.Trial.ID, Outcome: "passed", Attempts: 1}, nil
	}, activity.RegisterOptions{Name: activityRunTrial})
}

func TestBatchWorkflowWindow(t *testing.T) {
	env := newTestEnv()
	f := newFakeBatch(10)
	f.register(env, 3)
	env.ExecuteWorkflow(BatchWorkflow, BatchState{Ref: BatchRef{URI: "file:///b", Name: "b", PlanFile: "p.json"}})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res BatchProgress
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Started != 10 || res.Outcomes["passed"] != 10 || res.Failed != 0 {
		t.Fatalf("result %+v, want 10 started and passed", res)
	}
	if f.peak > 3 {
		t.Fatalf("%d trials ran at once, window 3", f.peak)
	}
	for _, tr := range f.trials {
		if f.runs[tr.ID] != 1 {
			t.Errorf("%s ran %d times", tr.ID, f.runs[tr.ID])
		}
	}
}

func TestBatchWorkflowContinuesAsNew(t *testing.T) {
	env := newTestEnv()
	f := newFakeBatch(10)
	f.register(env, 2)
	env.ExecuteWorkflow(BatchWorkflow, BatchState{Ref: BatchRef{URI: "file:///b", Name: "b", PlanFile: "p.json"}, ChildrenPerRun: 4})
	err := env.GetWorkflowError()
	var can *workflow.ContinueAsNewError
	if !errors.As(err, &can) {
		t.Fatalf("error %v, want continue-as-new after 4 children", err)
	}
	if len(f.runs) != 4 {
		t.Fatalf("%d trials ran before continuing as new, want 4", len(f.runs))
	}
}

func TestTrialQueueSanitizes(t *testing.T) {
	for in, want := range map[string]string{"": "fabric-trials/default", "OPENAI_API_KEY": "fabric-trials/OPENAI_API_KEY", "a b/c": "fabric-trials/a_b_c"} {
		if got := TrialQueue(in); got != want {
			t.Errorf("TrialQueue(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDirURIRoundTrip(t *testing.T) {
	u := DirURI("/shared/runs/a b")
	d, err := URIDir(u)
	if err != nil || d != "/shared/runs/a b" {
		t.Fatalf("%s -> %q, %v", u, d, err)
	}
	if _, err := URIDir("s3://bucket/x"); err == nil {
		t.Fatal("s3 URI accepted")
	}
}

func newTestEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(nopLogger{})
	return s.NewTestWorkflowEnvironment()
}

// nopLogger drops the test environment's log lines.
type nopLogger struct{}

func (nopLogger) Debug(string, ...any) {}
func (nopLogger) Info(string, ...any)  {}
func (nopLogger) Warn(string, ...any)  {}
func (nopLogger) Error(string, ...any) {}
