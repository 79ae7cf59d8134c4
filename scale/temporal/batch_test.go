package temporal_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/protobuf/proto"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/batch"
	"github.com/fabric-runtime/fabric/contract"
	ftemporal "github.com/fabric-runtime/fabric/scale/temporal"
)

// twelveTrials writes the acceptance batch: 3 tasks x 2 configs x 2
// repeats, one task graded failed; configs a and b draw from quota keys qa
// and qb.
func twelveTrials(t *testing.T, dir, name string, concurrency int, delayA, delayB int) string {
	t.Helper()
	files(t, dir, map[string]string{
		"a.yaml": scriptedConfig(fmt.Sprintf(`{response: "answer: {input}", delay_ms: %d}`, delayA)),
		"b.yaml": scriptedConfig(fmt.Sprintf(`{response: "answer b: {input}", delay_ms: %d}`, delayB)),
		"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: ` + name + `}
tasks:
  items:
    - {id: alpha, input: {text: "alpha"}}
    - {id: beta, input: {text: "beta"}}
    - id: gamma
      input: {text: "gamma"}
      grader: {kind: output_match, match: {contains: "nope"}}
configs:
  - {id: a, config: a.yaml, quota_key: qa}
  - {id: b, config: b.yaml, quota_key: qb}
repeats: 2
limits: {concurrency: ` + fmt.Sprint(concurrency) + `}
grader: {kind: output_match, match: {contains: "answer"}}
`,
	})
	return filepath.Join(dir, "batch.yaml")
}

// runLocal runs spec with the batch package's local executor into dir.
func runLocal(t *testing.T, spec, dir string) time.Duration {
	t.Helper()
	s, err := batch.Load(spec)
	if err != nil {
		t.Fatal(err)
	}
	r, err := batch.Open(context.Background(), s, dir, batch.Options{Client: fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(workerBin)), Host: "local"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	start := time.Now()
	if _, err := r.Run(context.Background(), batch.RunOptions{}); err != nil {
		t.Fatalf("local run: %v", err)
	}
	wall := time.Since(start)
	if _, err := r.Report(context.Background()); err != nil {
		t.Fatalf("local report: %v", err)
	}
	return wall
}

// Acceptance 18: the 12-trial batch on two workers ends with the local
// runner's counts, and the trials are queryable by search attribute.
func TestTwoWorkersMatchLocal(t *testing.T) {
	e := newEnv(t)
	specDir := t.TempDir()
	spec := twelveTrials(t, specDir, "twelve", 4, 200, 300)
	e.worker("host-a", "--queues", "qa,qb", "--slots", "2")
	e.worker("host-b", "--queues", "qa,qb", "--slots", "2")
	start := time.Now()
	// Not the 2 s of the host-loss test: on a loaded machine a race-built
	// worker can miss that, and the trial then runs twice.
	p := e.submit(spec, "--heartbeat-timeout", "15s")
	if code := p.wait(t, 4*time.Minute); code != 0 {
		t.Fatalf("run exit %d:\n%s", code, p.log.String())
	}
	twall := time.Since(start)
	recs := records(t, e.dir)
	want := map[string]int{"a/passed": 4, "a/failed": 2, "b/passed": 4, "b/failed": 2}
	if got := countOutcomes(recs); !reflect.DeepEqual(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	hosts := map[string]int{}
	for _, r := range recs {
		hosts[r.Host]++
		if r.Attempts != 1 {
			t.Errorf("%s: attempts %d, want 1", r.TrialID, r.Attempts)
		}
	}
	t.Logf("trials per host: %v", hosts)

	localDir := filepath.Join(t.TempDir(), "local")
	lwall := runLocal(t, spec, localDir)
	if got := countOutcomes(records(t, localDir)); !reflect.DeepEqual(got, want) {
		t.Fatalf("local outcomes %v, want %v", got, want)
	}
	tc := counts(t, filepath.Join(e.dir, "report", "summary.json"))
	lc := counts(t, filepath.Join(localDir, "report", "summary.json"))
	if len(tc) == 0 || !reflect.DeepEqual(tc, lc) {
		t.Fatalf("summary.json counts differ:\ntemporal %v\nlocal    %v", tc, lc)
	}
	t.Logf("summary counts equal (%d values); wall: temporal %.2fs (incl. submit), local %.2fs", len(tc), twall.Seconds(), lwall.Seconds())

	// Search attributes: the failed trials of this batch.
	ctx := context.Background()
	q := `FabricBatch = "twelve" AND FabricOutcome = "failed"`
	waitFor(t, 30*time.Second, "visibility of "+q, func() bool {
		resp, err := e.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.ns, Query: q})
		if err != nil {
			t.Fatalf("ListWorkflow %s: %v", q, err)
		}
		return len(resp.GetExecutions()) == 4
	})
	q = `FabricBatch = "twelve" AND FabricConfig = "b" AND FabricRepeat = 2 AND FabricOutcome = "passed"`
	resp, err := e.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.ns, Query: q})
	if err != nil || len(resp.GetExecutions()) != 2 {
		t.Fatalf("ListWorkflow %s: %d executions, %v; want 2", q, len(resp.GetExecutions()), err)
	}
}

// activeAttempt reports whether the trial's workflow has a started
// RunTrial activity, and its attempt.
func (e *env) activeAttempt(name, trial string) (int32, bool) {
	d, err := e.client.DescribeWorkflowExecution(context.Background(), ftemporal.TrialWorkflowID(name, trial), "")
	if err != nil {
		return 0, false
	}
	for _, a := range d.GetPendingActivities() {
		if a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
			return a.GetAttempt(), true
		}
	}
	return 0, false
}

// bundledHosts are the adapter hosts among pid's children.
func bundledHosts(pid int) []int {
	var out []int
	for _, c := range children(pid) {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", c))
		if err == nil && strings.Contains(string(env), "FABRIC_BUNDLED_ADAPTER=") {
			out = append(out, c)
		}
	}
	return out
}

// Acceptance 18: a worker SIGKILLed mid-trial loses the trial to the other
// worker after the heartbeat timeout (2 s), which runs it as attempt 2;
// nothing of the killed worker is left.
func TestHostLossRerunsTrialElsewhere(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"slow.yaml": scriptedConfig(`{response: "answer: {input}", delay_ms: 3000}`),
		"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: failover}
tasks:
  items:
    - {id: only, input: {text: "one"}}
configs:
  - {id: slow, config: slow.yaml, quota_key: q}
grader: {kind: output_match, match: {contains: "answer"}}
`,
	})
	a := e.worker("host-a", "--queues", "q", "--slots", "1")
	p := e.submit(filepath.Join(dir, "batch.yaml"), "--heartbeat-timeout", "2s")
	trial := "only__slow__r01"
	var hosts []int
	waitFor(t, 2*time.Minute, "host-a running the trial's adapter host", func() bool {
		_, ok := e.activeAttempt("failover", trial)
		hosts = bundledHosts(a.cmd.Process.Pid)
		return ok && len(hosts) > 0
	})
	e.worker("host-b", "--queues", "q", "--slots", "1")
	killed := time.Now()
	a.kill()
	<-a.done
	waitFor(t, 10*time.Second, "the killed worker's adapter hosts to exit", func() bool {
		for _, h := range hosts {
			if alive(h) {
				return false
			}
		}
		return true
	})
	waitFor(t, 30*time.Second, "attempt 2 started", func() bool {
		n, ok := e.activeAttempt("failover", trial)
		return ok && n == 2
	})
	failover := time.Since(killed)
	if code := p.wait(t, 2*time.Minute); code != 0 {
		t.Fatalf("run exit %d:\n%s", code, p.log.String())
	}
	recs := records(t, e.dir)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	r := recs[0]
	if r.Attempts != 2 || r.Host != "host-b" || r.Outcome != contract.TrialPassed {
		t.Fatalf("record: attempts %d host %q outcome %s; want 2, host-b, passed", r.Attempts, r.Host, r.Outcome)
	}
	t.Logf("failover: attempt 2 started %.2fs after the SIGKILL (heartbeat timeout 2 s); adapter hosts %v gone", failover.Seconds(), hosts)
}

// Acceptance 18: cancelling the batch workflow cancels every running
// trial, and each commits a cancelled record.
func TestCancelWorkflowCancelsEveryTrial(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"hang.yaml": scriptedConfig(`{response: "answer: {input}", delay_ms: 120000}`),
		"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: cancel}
tasks:
  items:
    - {id: t1, input: {text: "1"}}
    - {id: t2, input: {text: "2"}}
    - {id: t3, input: {text: "3"}}
configs:
  - {id: hang, config: hang.yaml, quota_key: q}
limits: {concurrency: 3}
grader: {kind: output_match, match: {contains: "answer"}}
`,
	})
	w := e.worker("host-a", "--queues", "q", "--slots", "3")
	p := e.submit(filepath.Join(dir, "batch.yaml"), "--heartbeat-timeout", "2s")
	ids := []string{"t1__hang__r01", "t2__hang__r01", "t3__hang__r01"}
	waitFor(t, 2*time.Minute, "3 trials running", func() bool {
		for _, id := range ids {
			if _, ok := e.activeAttempt("cancel", id); !ok {
				return false
			}
		}
		return len(bundledHosts(w.cmd.Process.Pid)) == 3
	})
	hosts := bundledHosts(w.cmd.Process.Pid)
	start := time.Now()
	c := e.start("cancel", "cancel", "--dir", e.dir, "--address", e.addr, "--namespace", e.ns)
	if code := c.wait(t, time.Minute); code != 0 {
		t.Fatalf("cancel exit %d:\n%s", code, c.log.String())
	}
	if code := p.wait(t, time.Minute); code != 3 {
		t.Fatalf("run exit %d, want 3:\n%s", code, p.log.String())
	}
	took := time.Since(start)
	recs := records(t, e.dir)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	for _, r := range recs {
		if r.Outcome != contract.TrialCancelled {
			t.Errorf("%s: outcome %s, want cancelled", r.TrialID, r.Outcome)
		}
	}
	waitFor(t, 10*time.Second, "adapter hosts to exit", func() bool {
		for _, h := range hosts {
			if alive(h) {
				return false
			}
		}
		return true
	})
	t.Logf("cancel to all 3 trials committed cancelled and run exited: %.2fs", took.Seconds())
}

// Acceptance 18: TaskQueueActivitiesPerSecond 1 spaces trial starts by at
// least a second, whatever the slots.
func TestQueueRateLimitSpacesStarts(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	files(t, dir, map[string]string{
		"fast.yaml": scriptedConfig(`{response: "answer: {input}"}`),
		"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: rps}
tasks:
  items:
    - {id: t1, input: {text: "1"}}
    - {id: t2, input: {text: "2"}}
    - {id: t3, input: {text: "3"}}
    - {id: t4, input: {text: "4"}}
configs:
  - {id: fast, config: fast.yaml, quota_key: q}
limits: {concurrency: 4}
grader: {kind: output_match, match: {contains: "answer"}}
`,
	})
	e.worker("host-a", "--queues", "q", "--slots", "4", "--queue-rps", "1")
	p := e.submit(filepath.Join(dir, "batch.yaml"))
	if code := p.wait(t, 3*time.Minute); code != 0 {
		t.Fatalf("run exit %d:\n%s", code, p.log.String())
	}
	recs := records(t, e.dir)
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	// When the server handed each RunTrial to the worker (the limiter's
	// doing), from the trial workflows' histories.
	var starts []int64
	for _, r := range recs {
		it := e.client.GetWorkflowHistory(context.Background(), ftemporal.TrialWorkflowID("rps", r.TrialID), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			if ev.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED {
				starts = append(starts, ev.GetEventTime().AsTime().UnixMilli())
			}
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	var gaps []int64
	for i := 1; i < len(starts); i++ {
		gaps = append(gaps, starts[i]-starts[i-1])
	}
	t.Logf("gaps between trial starts (ms): %v", gaps)
	// The test server gives each task queue one partition, so the
	// queue's limit is one token bucket; its burst lets the first two
	// leave together (measured: 45-240 ms apart), then one a second. The
	// event times are the history service's, after matching's dispatch:
	// on a loaded machine they jitter (measured 887-1052 ms for 1 s).
	var sum int64
	for _, g := range gaps[1:] {
		sum += g
		if g < 750 {
			t.Fatalf("trial starts %v ms apart, want ~1 s after the first pair", gaps)
		}
	}
	if mean := sum / int64(len(gaps)-1); mean < 850 {
		t.Fatalf("trial starts %v ms apart (mean %d ms after the first pair), want ~1 s", gaps, mean)
	}
}

// Acceptance 18: a trial whose run result carries more than 2 MB of events
// passes through Temporal by reference: the workflow histories stay small.
func TestLargeRunResultPassesByReference(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	answer := strings.Repeat("ab", 15000)
	files(t, dir, map[string]string{
		"big.yaml": scriptedConfig(`{response: "` + answer + `", events: 30000, event_interval_ms: 0}`),
		"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: big}
tasks:
  items:
    - {id: only, input: {text: "1"}}
configs:
  - {id: big, config: big.yaml, quota_key: q}
grader: {kind: output_match, match: {contains: "ababab"}}
`,
	})
	e.worker("host-a", "--queues", "q", "--slots", "1")
	p := e.submit(filepath.Join(dir, "batch.yaml"))
	if code := p.wait(t, 3*time.Minute); code != 0 {
		t.Fatalf("run exit %d:\n%s", code, p.log.String())
	}
	recs := records(t, e.dir)
	if len(recs) != 1 || recs[0].Outcome != contract.TrialPassed {
		t.Fatalf("records %+v, want one passed", recs)
	}
	var stored int64
	for _, rel := range []string{recs[0].Paths.RunResult, recs[0].Paths.Events} {
		if rel == "" {
			continue
		}
		if fi, err := os.Stat(filepath.Join(e.dir, rel)); err == nil {
			stored = max(stored, fi.Size())
		}
	}
	if stored <= 2<<20 {
		t.Fatalf("largest of run_result/events is %d bytes, want > 2 MiB for the test to mean anything", stored)
	}
	for _, id := range []string{ftemporal.BatchWorkflowID("big"), ftemporal.TrialWorkflowID("big", "only__big__r01")} {
		it := e.client.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		size, n := 0, 0
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatal(err)
			}
			size += proto.Size(ev)
			n++
		}
		t.Logf("%s: %d history events, %d bytes (stored result %d bytes)", id, n, size, stored)
		if size > 64<<10 {
			t.Errorf("%s history is %d bytes, want < 64 KiB", id, size)
		}
	}
}

// TestOverheadPerTrial measures what Temporal adds to each trial: the same
// 8 scripted trials at concurrency 1, local and on one worker; the median
// gap between one trial's end and the next one's start is the per-trial
// scheduling overhead.
func TestOverheadPerTrial(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	var items strings.Builder
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&items, "    - {id: t%d, input: {text: \"%d\"}}\n", i, i)
	}
	files(t, dir, map[string]string{
		"fast.yaml": scriptedConfig(`{response: "answer: {input}"}`),
		"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: overhead}
tasks:
  items:
` + items.String() + `configs:
  - {id: fast, config: fast.yaml, quota_key: q}
limits: {concurrency: 1}
grader: {kind: output_match, match: {contains: "answer"}}
`,
	})
	spec := filepath.Join(dir, "batch.yaml")
	e.worker("host-a", "--queues", "q", "--slots", "1")
	start := time.Now()
	p := e.submit(spec)
	if code := p.wait(t, 3*time.Minute); code != 0 {
		t.Fatalf("run exit %d:\n%s", code, p.log.String())
	}
	twall := time.Since(start)
	localDir := filepath.Join(t.TempDir(), "local")
	lwall := runLocal(t, spec, localDir)
	tg, td := gapsAndDurations(t, records(t, e.dir))
	lg, ld := gapsAndDurations(t, records(t, localDir))
	t.Logf("per-trial: median duration temporal %.3fs local %.3fs; median gap end->next start temporal %.3fs local %.3fs; batch wall temporal %.2fs (incl. process start, submit, report) local %.2fs",
		median(td), median(ld), median(tg), median(lg), twall.Seconds(), lwall.Seconds())
	t.Logf("temporal overhead per trial (median gap end->next start, temporal minus local): %.3fs", median(tg)-median(lg))
}

func gapsAndDurations(t *testing.T, recs []contract.BatchTrial) (gaps, durs []float64) {
	t.Helper()
	if len(recs) != 8 {
		t.Fatalf("%d records, want 8", len(recs))
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Timings.StartedMillis < recs[j].Timings.StartedMillis })
	for i, r := range recs {
		durs = append(durs, r.Timings.DurationSeconds)
		if i > 0 {
			gaps = append(gaps, float64(r.Timings.StartedMillis-recs[i-1].Timings.EndedMillis)/1000)
		}
	}
	return gaps, durs
}

// BatchWorkflow continues as new every ChildrenPerRun children (5 here)
// and still runs every trial once.
func TestContinueAsNewRunsEveryTrial(t *testing.T) {
	e := newEnv(t)
	spec := twelveTrials(t, t.TempDir(), "can", 3, 0, 0)
	e.worker("host-a", "--queues", "qa,qb", "--slots", "3")
	// Submitted by fabric-temporal itself: the trial digests include the
	// Fabric build, which a test binary reports differently.
	p := e.submit(spec, "--children-per-run", "5")
	if code := p.wait(t, 4*time.Minute); code != 0 {
		t.Fatalf("run exit %d:\n%s", code, p.log.String())
	}
	recs := records(t, e.dir)
	want := map[string]int{"a/passed": 4, "a/failed": 2, "b/passed": 4, "b/failed": 2}
	if got := countOutcomes(recs); !reflect.DeepEqual(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	ctx := context.Background()
	q := `WorkflowId = "` + ftemporal.BatchWorkflowID("can") + `"`
	waitFor(t, 30*time.Second, "3 runs of the batch workflow", func() bool {
		resp, err := e.client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: e.ns, Query: q})
		return err == nil && len(resp.GetExecutions()) == 3
	})
}

// TestFabricCLIRunsOnTemporal drives the backend as a user does, through
// the fabric CLI: `fabric batch worker` and `fabric batch run --backend
// temporal` find fabric-temporal beside fabric and hand it their
// arguments.
func TestFabricCLIRunsOnTemporal(t *testing.T) {
	e := newEnv(t)
	fabricBin := filepath.Join(binDir, "fabric")
	buildFabric.Do(func() {
		// fabric runs its commands in fabric-core, found beside it.
		out, err := exec.Command("go", "build", "-C", "../..", "-o", binDir+"/", "./cmd/fabric", "./cmd/fabric-core").CombinedOutput()
		if err != nil {
			fabricErr = fmt.Errorf("go build ./cmd/fabric ./cmd/fabric-core: %v\n%s", err, out)
		}
	})
	if fabricErr != nil {
		t.Fatal(fabricErr)
	}
	spec := twelveTrials(t, t.TempDir(), "cli", 4, 100, 100)
	worker := exec.Command(fabricBin, "batch", "worker", "--address", e.addr, "--namespace", e.ns, "--host", "cli-host", "--queues", "qa,qb", "--slots", "2")
	worker.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	wlog := &syncBuffer{}
	worker.Stdout, worker.Stderr = wlog, wlog
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-worker.Process.Pid, syscall.SIGTERM)
		_ = worker.Wait()
	})
	waitFor(t, 2*time.Minute, "the worker ready", func() bool { return strings.Contains(wlog.String(), "worker ready") })
	run := exec.Command(fabricBin, "batch", "run", spec, "--dir", e.dir, "--backend", "temporal", "--address", e.addr, "--namespace", e.ns)
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("fabric batch run --backend temporal: %v\n%s\nworker:\n%s", err, out, wlog.String())
	}
	want := map[string]int{"a/passed": 4, "a/failed": 2, "b/passed": 4, "b/failed": 2}
	if got := countOutcomes(records(t, e.dir)); !reflect.DeepEqual(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	for _, r := range records(t, e.dir) {
		if r.Host != "cli-host" {
			t.Errorf("%s ran on %q, want the worker cli-host", r.TrialID, r.Host)
		}
	}
}

var (
	buildFabric sync.Once
	fabricErr   error
)
