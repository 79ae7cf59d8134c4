package batch_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/modelstub"
)

// stub starts a scripted model endpoint answering script.
func stub(t *testing.T, script string) *modelstub.Server {
	t.Helper()
	sc, err := modelstub.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	s := modelstub.New(sc)
	t.Cleanup(s.Close)
	return s
}

// modelConfig is a fabric.scripted agent in mode model against url.
func modelConfig(url string) string {
	return `schema_version: fabric.agent/v1alpha1
metadata: {name: model-agent}
runtime: {timeout_seconds: 60}
harness:
  adapter_id: fabric.scripted
  settings: {mode: model}
models:
  default: {provider: stub, model: stub-model, api_key_env: FABRIC_BATCH_TEST_KEY, base_url: "` + url + `"}
`
}

// twoKeys writes, in a new directory it returns, a batch of three tasks
// graded on the output "ok" for two agents, on quota keys A and B, each
// with a model endpoint of its own: A's answers its first request with
// the error firstA, B's never fails. tail ends the batch spec.
func twoKeys(t *testing.T, firstA, tail string) (a, b *modelstub.Server, dir string) {
	t.Helper()
	t.Setenv("FABRIC_BATCH_TEST_KEY", "placeholder-not-a-secret")
	a = stub(t, "default: {text: ok}\nrules:\n  - match: {nth: 1}\n    reply: {error: "+firstA+"}\n")
	b = stub(t, "default: {text: ok}\n")
	dir = t.TempDir()
	files(t, dir, map[string]string{
		"a.yaml": modelConfig(a.OpenAIBaseURL()),
		"b.yaml": modelConfig(b.OpenAIBaseURL()),
		"batch.yaml": itemsSpec(3, "  - {id: a, config: a.yaml, quota_key: A}\n  - {id: b, config: b.yaml, quota_key: B}\n",
			"grader: {kind: output_match, match: {equals: ok}}\n"+tail),
	})
	return a, b, dir
}

func TestRateLimitPausesOnlyItsKey(t *testing.T) {
	a, b, dir := twoKeys(t, "{status: 429, retry_after: 2}",
		"limits: {concurrency: 2, quotas: [{key: A, max_in_flight: 1}, {key: B, max_in_flight: 1}]}\nretry: {max_attempts: 2, classes: [model], backoff: {initial_seconds: 0.01}}\n")
	_, _, recs := run(t, dir, batchOptions())
	for _, r := range recs {
		if r.Outcome != contract.TrialPassed {
			t.Errorf("%s: %s %+v", r.TrialID, r.Outcome, r.Error)
		}
		if r.TrialID == "t01__a__r01" && (r.Attempts != 2 || len(r.History) != 1 || r.History[0].Error.Code != contract.ModelRateLimited) {
			t.Errorf("first trial of key A: attempts %d history %+v; want a rate-limited attempt, then a pass", r.Attempts, r.History)
		}
	}
	ra, rb := a.Requests(), b.Requests()
	if len(ra) < 2 || len(rb) < 3 {
		t.Fatalf("requests: A %d, B %d", len(ra), len(rb))
	}
	limited := ra[0].Time
	if gap := ra[1].Time.Sub(limited); gap < 2*time.Second {
		t.Errorf("key A's next request came %s after its 429 with retry_after 2", gap)
	}
	during := 0
	for _, q := range rb {
		if q.Time.After(limited) && q.Time.Before(ra[1].Time) {
			during++
		}
	}
	if during == 0 {
		t.Errorf("key B made no request while key A was paused (%s to %s): B waited for A's pause", limited, ra[1].Time)
	}
}

func TestToolCallBeforeTheTestsArrive(t *testing.T) {
	t.Setenv("FABRIC_BATCH_TEST_KEY", "placeholder-not-a-secret")
	s := stub(t, "default: {text: done}\nrules:\n  - match: {contains: LIST}\n    reply: {tool_call: {command: \"ls -A > listing.txt\"}}\n")
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"agent.yaml":                modelConfig(s.OpenAIBaseURL()),
		"tasks/list/prompt.md":      "LIST the workspace",
		"tasks/list/workspace/a.go": "package a\n",
		"tasks/list/tests/check.sh": "grep -q a.go listing.txt && ! grep -q tests listing.txt\n",
		"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: tools}
tasks: {dir: tasks}
configs: [{id: a, config: agent.yaml}]
grader: {kind: command, command: [sh, "{tests_dir}/check.sh"]}
keep_workspaces: always
`,
	})
	r, _, recs := run(t, dir, batchOptions())
	if len(recs) != 1 || recs[0].Outcome != contract.TrialPassed {
		t.Fatalf("records %+v; want one passed trial (the agent listed a.go and no tests/)", recs)
	}
	if recs[0].Usage == nil || recs[0].Usage.InputTokens == 0 {
		t.Errorf("usage %+v; want the stub's tokens", recs[0].Usage)
	}
	if _, err := filepath.Glob(filepath.Join(r.Dir(), recs[0].Paths.Workspace, "listing.txt")); err != nil {
		t.Error(err)
	}
}

func TestQuotaExhaustedOpensTheCircuit(t *testing.T) {
	a, _, dir := twoKeys(t, "{status: 429, type: insufficient_quota, retry_after: -1}",
		"limits: {concurrency: 1}\nretry: {max_attempts: 3, classes: [model]}\n")
	_, st, recs := run(t, dir, batchOptions())
	got := map[string]string{}
	for _, r := range recs {
		s := r.Outcome
		if r.Error != nil {
			s += ":" + r.Error.Code
		}
		if r.Reason != "" {
			s += ":" + r.Reason
		}
		got[r.TrialID] = s
	}
	want := map[string]string{
		"t01__a__r01": "error:" + contract.ModelQuotaExhausted,
		"t02__a__r01": "skipped:circuit_open", "t03__a__r01": "skipped:circuit_open",
		"t01__b__r01": "passed", "t02__b__r01": "passed", "t03__b__r01": "passed",
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %s, want %s", id, got[id], w)
		}
	}
	if st.Retries != 0 || len(a.Requests()) != 1 {
		t.Errorf("%d retries, %d requests on key A; want 0 and 1 (an exhausted quota is not retried)", st.Retries, len(a.Requests()))
	}
}

func TestServerErrorRetried(t *testing.T) {
	t.Setenv("FABRIC_BATCH_TEST_KEY", "placeholder-not-a-secret")
	s := stub(t, "default: {text: ok}\nrules:\n  - match: {nth: 1}\n    reply: {error: {status: 529}}\n  - match: {contains: FAILME}\n    reply: {text: wrong}\n")
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"a.yaml": modelConfig(s.OpenAIBaseURL()),
		"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: r}
tasks:
  items:
    - {id: first, input: {text: hello}}
    - {id: wrong, input: {text: FAILME}}
configs: [{id: a, config: a.yaml}]
grader: {kind: output_match, match: {equals: ok}}
limits: {concurrency: 1}
retry: {max_attempts: 3, backoff: {initial_seconds: 0.01}}
`,
	})
	_, st, recs := run(t, dir, batchOptions())
	for _, r := range recs {
		switch r.Task {
		case "first":
			if r.Outcome != contract.TrialPassed || r.Attempts != 2 || r.History[0].Error.Code != contract.ModelOverloaded {
				t.Errorf("first: %s after %d attempts (history %+v); want passed on attempt 2 after model_overloaded", r.Outcome, r.Attempts, r.History)
			}
		case "wrong":
			if r.Outcome != contract.TrialFailed || r.Attempts != 1 {
				t.Errorf("wrong: %s after %d attempts; want failed once (a graded failure is never retried)", r.Outcome, r.Attempts)
			}
		}
	}
	if st.Retries != 1 {
		t.Errorf("%d retries, want 1", st.Retries)
	}
}
