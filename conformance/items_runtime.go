package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
)

// Runtime states (package fabric documents them as strings).
const (
	stateActive   = "active"
	stateInvoking = "invoking"
	stateStopped  = "stopped"
	stateFailed   = "failed"
)

// Error codes the items expect (docs/errors.md).
const (
	codeRuntimeStopped = "runtime_stopped"
	codeRuntimeFailed  = "runtime_failed"
	codeHostCrashed    = "host_crashed"
	codeProtocolError  = "protocol_error"
)

// transportCodes are the core's transport failures: an adapter-reported
// failure must not use them.
var transportCodes = []string{codeHostCrashed, "host_timeout", "host_io", codeProtocolError, "host_start_failed"}

// settleDelay lets a hanging invocation reach the host before it is killed.
const settleDelay = 200 * time.Millisecond

// goneTimeout bounds waiting for a killed process group to disappear.
const goneTimeout = 2 * time.Second

// startStop starts a runtime and stops it twice, then invokes it.
func startStop(ctx context.Context, t *itemT) (string, error) {
	if err := t.needRuntime(); err != nil {
		return "", err
	}
	t0 := time.Now()
	rt, stateDir, err := t.startWith(ctx)
	if err != nil {
		return "", err
	}
	started := time.Since(t0)
	if err := t.checkStarted(rt, stateDir); err != nil {
		return "", err
	}
	pid := rt.HostPid()
	by := t.executorOf(pid)
	t1 := time.Now()
	res, err := rt.Stop(ctx)
	stopped := time.Since(t1)
	if err != nil {
		return "", fmt.Errorf("stop: %w", err)
	}
	t.claim(by, "%s", res.Status)
	if err := t.validate("runtime-stop-result", res); err != nil {
		return "", err
	}
	if res.Status != "stopped" || res.AlreadyStopped || res.RuntimeID != rt.ID() {
		return "", fmt.Errorf("first stop = %s", marshal(res))
	}
	again, err := rt.Stop(ctx)
	if err != nil || !again.AlreadyStopped || again.Status != "already_stopped" {
		return "", fmt.Errorf("second stop = %s, %v; want already_stopped", marshal(again), err)
	}
	if err := expectStateCode(codeRuntimeStopped)(rt.Invoke(ctx, t.s.profile.input(nil))); err != nil {
		return "", fmt.Errorf("invoke after stop: %w", err)
	}
	if st := rt.State(); st != stateStopped {
		return "", fmt.Errorf("state after stop = %s", st)
	}
	if err := t.observeStopped(ctx, pid, stateDir, ""); err != nil {
		return "", err
	}
	return fmt.Sprintf("runtime started in %s, stopped in %s; second stop already_stopped; invoke after stop %s",
		started.Round(time.Millisecond), stopped.Round(time.Millisecond), codeRuntimeStopped), nil
}

// checkStarted checks a fresh runtime: handle, state, host process, home.
func (t *itemT) checkStarted(rt *fabric.Runtime, stateDir string) error {
	h := rt.Handle()
	if err := t.validate("runtime-handle", h); err != nil {
		return err
	}
	switch {
	case h.RuntimeID != rt.ID() || !strings.HasPrefix(h.RuntimeID, "runtime-"):
		return fmt.Errorf("handle runtime_id %q, runtime id %q", h.RuntimeID, rt.ID())
	case h.AdapterID != t.s.profile.AdapterID:
		return fmt.Errorf("handle adapter_id %q, want %q", h.AdapterID, t.s.profile.AdapterID)
	case h.RuntimeBinding == "":
		return errors.New("handle has no runtime_binding")
	case rt.State() != stateActive:
		return fmt.Errorf("state after start = %s, want active", rt.State())
	case rt.HostPid() <= 0:
		return fmt.Errorf("host pid %d", rt.HostPid())
	}
	if procChecks && len(groupMembers(rt.HostPid())) == 0 {
		return fmt.Errorf("no process in the host's process group %d", rt.HostPid())
	}
	if _, ok := homeOf(stateDir, rt.ID()); !ok {
		return fmt.Errorf("no runtime home for %s in the state directory", rt.ID())
	}
	return nil
}

// invoke runs two invocations on one runtime.
func invoke(ctx context.Context, t *itemT) (string, error) {
	if err := t.needInvoke(); err != nil {
		return "", err
	}
	rt, _, err := t.startWith(ctx)
	if err != nil {
		return "", err
	}
	var results []*contract.RunResult
	for i := 1; i <= 2; i++ {
		reqID := fmt.Sprintf("request-conformance-%d", i)
		res, err := rt.Invoke(ctx, t.s.profile.input(nil), fabric.WithRequestID(reqID))
		if err != nil {
			return "", fmt.Errorf("invoke %d: %w", i, err)
		}
		if err := t.checkResult(rt, res, true); err != nil {
			return "", fmt.Errorf("invoke %d: %w", i, err)
		}
		if res.RequestID != reqID {
			return "", fmt.Errorf("invoke %d: request_id %q, want %q", i, res.RequestID, reqID)
		}
		if st := rt.State(); st != stateActive {
			return "", fmt.Errorf("state after invoke %d = %s, want active", i, st)
		}
		results = append(results, res)
	}
	if results[0].InvocationID == results[1].InvocationID {
		return "", fmt.Errorf("both invocations have id %s", results[0].InvocationID)
	}
	if _, err := rt.Stop(ctx); err != nil {
		return "", fmt.Errorf("stop: %w", err)
	}
	return fmt.Sprintf("2 invocations succeeded on one runtime with distinct ids; output %q", outputText(results[0].Output)), nil
}

// checkResult validates a result of rt and, when ok is set, that it
// succeeded with the expected output.
func (t *itemT) checkResult(rt *fabric.Runtime, res *contract.RunResult, ok bool) error {
	if err := t.validate("run-result", res); err != nil {
		return err
	}
	switch {
	case res.RuntimeID != rt.ID():
		return fmt.Errorf("result runtime_id %q, want %q", res.RuntimeID, rt.ID())
	case !strings.HasPrefix(res.InvocationID, "invocation-"):
		return fmt.Errorf("result invocation_id %q", res.InvocationID)
	case !hasEvent(res.Events, contract.EventInvocationStart) || !hasEvent(res.Events, contract.EventInvocationEnd):
		return fmt.Errorf("result events lack %s or %s", contract.EventInvocationStart, contract.EventInvocationEnd)
	}
	if ok {
		return t.s.succeeded(res)
	}
	return nil
}

// succeeded checks status and the profile's output expectations.
func (s *suite) succeeded(res *contract.RunResult) error {
	if res.Status != contract.StatusSucceeded {
		return fmt.Errorf("status %s, want succeeded (error %s)", res.Status, marshal(res.Error))
	}
	out := outputText(res.Output)
	if want := s.profile.ExpectOutput; want != "" && out != want {
		return fmt.Errorf("output %q, want %q", out, want)
	}
	if want := s.profile.ExpectOutputContains; want != "" && !strings.Contains(out, want) {
		return fmt.Errorf("output %q does not contain %q", out, want)
	}
	return nil
}

func hasEvent(events []contract.FabricEvent, kind string) bool {
	return slices.ContainsFunc(events, func(e contract.FabricEvent) bool { return e.Kind == kind })
}

// outputText is a string output as is, anything else as JSON.
func outputText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// failedInvoke expects an adapter-reported failure that leaves the runtime
// active and able to take another invocation.
func failedInvoke(ctx context.Context, t *itemT) (string, error) {
	if err := t.needInvoke(); err != nil {
		return "", err
	}
	ov := t.s.profile.FailedInvoke
	if ov == nil {
		return "", skipf("the profile has no failed_invoke overlay")
	}
	rt, _, err := t.startWith(ctx, ov)
	if err != nil {
		return "", err
	}
	res, err := rt.Invoke(ctx, t.s.profile.input(ov))
	if err != nil {
		return "", fmt.Errorf("invoke: %w", err)
	}
	if err := t.checkResult(rt, res, false); err != nil {
		return "", err
	}
	switch {
	case res.Status != contract.StatusFailed:
		return "", fmt.Errorf("status %s, want failed", res.Status)
	case res.Error == nil || res.Error.Code == "":
		return "", errors.New("a failed result without an error code")
	case res.Error.Stage != contract.StageInvoke:
		return "", fmt.Errorf("error stage %s, want invoke", res.Error.Stage)
	case slices.Contains(transportCodes, res.Error.Code):
		return "", fmt.Errorf("error %s is a transport failure, not one reported by the adapter", res.Error.Code)
	case rt.State() != stateActive:
		return "", fmt.Errorf("state after a failed invocation = %s, want active", rt.State())
	}
	next, err := rt.Invoke(ctx, t.s.profile.input(ov))
	if err != nil {
		return "", fmt.Errorf("the runtime refused the next invocation: %w", err)
	}
	if _, err := rt.Stop(ctx); err != nil {
		return "", fmt.Errorf("stop: %w", err)
	}
	return fmt.Sprintf("status failed, code %s; the runtime stayed active and took the next invocation (%s)", res.Error.Code, next.Status), nil
}

// startFailure expects a start error that leaves nothing behind.
func startFailure(ctx context.Context, t *itemT) (string, error) {
	if err := t.needRuntime(); err != nil {
		return "", err
	}
	ov := t.s.profile.StartFailure
	if ov == nil {
		return "", skipf("the profile has no start_failure overlay")
	}
	c, stateDir, err := t.clientFor(nil, ov)
	if err != nil {
		return "", err
	}
	_, err = t.start(ctx, c, t.s.profile.config(ov))
	if err == nil {
		return "", errors.New("start succeeded with the start_failure overlay")
	}
	var re *fabric.RuntimeError
	if !errors.As(err, &re) {
		return "", fmt.Errorf("want a RuntimeError, got %T: %v", err, err)
	}
	if re.Stage != contract.StageStart || re.Code == "" {
		return "", fmt.Errorf("RuntimeError stage %q code %q, want stage start and a code", re.Stage, re.Code)
	}
	if left := dirEntries(stateDir); len(left) > 0 {
		return "", fmt.Errorf("the failed start left %v in the state directory", left)
	}
	if left := processesMentioning(stateDir); len(left) > 0 {
		return "", fmt.Errorf("the failed start left processes %v running", left)
	}
	return fmt.Sprintf("RuntimeError stage start, code %s; no home and no process left", re.Code), nil
}

// transportFailure kills the host's process group during an invocation.
func transportFailure(ctx context.Context, t *itemT) (string, error) {
	if err := t.needInvoke(); err != nil {
		return "", err
	}
	ov := t.s.profile.Hang
	switch {
	case ov == nil:
		return "", skipf("the profile has no hang overlay")
	case !procChecks:
		return "", skipf("process groups cannot be inspected on this system")
	}
	rt, stateDir, err := t.startWith(ctx, ov)
	if err != nil {
		return "", err
	}
	pid := rt.HostPid()
	by := t.executorOf(pid)
	res, err := invokeAndKill(ctx, rt, t.s.profile.input(ov), pid)
	if err != nil {
		return "", err
	}
	if err := t.checkResult(rt, res, false); err != nil {
		return "", err
	}
	if res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != codeHostCrashed {
		return "", fmt.Errorf("result %s, error %s; want failed with %s", res.Status, marshal(res.Error), codeHostCrashed)
	}
	if st := rt.State(); st != stateFailed {
		return "", fmt.Errorf("state after the host died = %s, want failed", st)
	}
	if err := expectStateCode(codeRuntimeFailed)(rt.Invoke(ctx, t.s.profile.input(nil))); err != nil {
		return "", fmt.Errorf("invoke after the host died: %w", err)
	}
	stop, err := rt.Stop(ctx)
	if err != nil || !stop.HostCrashed {
		return "", fmt.Errorf("stop = %s, %v; want host_crashed set", marshal(stop), err)
	}
	t.claim(by, "invocation %s with %s; stop %s, host_crashed", res.Status, res.Error.Code, stop.Status)
	if err := t.observeStopped(ctx, pid, stateDir, ""); err != nil {
		return "", err
	}
	return fmt.Sprintf("SIGKILL of process group %d: status failed, code %s, runtime failed, nothing left", pid, codeHostCrashed), nil
}

// invokeAndKill starts an invocation, kills the host's process group once
// it runs, and returns the invocation's result.
func invokeAndKill(ctx context.Context, rt *fabric.Runtime, input any, pgid int) (*contract.RunResult, error) {
	ictx, cancel := context.WithCancel(ctx)
	var res *contract.RunResult
	var invErr error
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		res, invErr = rt.Invoke(ictx, input)
	}()
	defer func() {
		cancel()
		<-finished
	}()
	if err := awaitInvoking(ctx, rt, finished); err != nil {
		if errors.Is(err, errEndedEarly) {
			return nil, fmt.Errorf("%w: %s, %v", err, resultStatus(res), invErr)
		}
		return nil, err
	}
	if err := killGroup(pgid); err != nil {
		return nil, fmt.Errorf("kill process group %d: %w", pgid, err)
	}
	select {
	case <-finished:
	case <-ctx.Done():
		return nil, fmt.Errorf("the invocation did not end after the host was killed: %w", ctx.Err())
	}
	if invErr != nil {
		return nil, fmt.Errorf("invoke: %w", invErr)
	}
	return res, nil
}

var errEndedEarly = errors.New("the hang overlay's invocation ended before the host was killed")

// awaitInvoking waits until rt runs the invocation, then settleDelay more
// for it to reach the host. It fails if the invocation finishes first.
func awaitInvoking(ctx context.Context, rt *fabric.Runtime, finished <-chan struct{}) error {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for rt.State() != stateInvoking {
		select {
		case <-finished:
			return errEndedEarly
		case <-ctx.Done():
			return fmt.Errorf("the invocation never started (state %s): %w", rt.State(), ctx.Err())
		case <-tick.C:
		}
	}
	settle := time.NewTimer(settleDelay)
	defer settle.Stop()
	select {
	case <-finished:
		return errEndedEarly
	case <-ctx.Done():
		return ctx.Err()
	case <-settle.C:
		return nil
	}
}

func resultStatus(res *contract.RunResult) string {
	if res == nil {
		return "no result"
	}
	return "status " + res.Status
}

// malformedOutput expects protocol_error and a failed runtime.
func malformedOutput(ctx context.Context, t *itemT) (string, error) {
	if err := t.needInvoke(); err != nil {
		return "", err
	}
	ov := t.s.profile.MalformedOutput
	if ov == nil {
		return "", skipf("the profile has no malformed_output overlay")
	}
	rt, stateDir, err := t.startWith(ctx, ov)
	if err != nil {
		return "", err
	}
	pid := rt.HostPid()
	res, err := rt.Invoke(ctx, t.s.profile.input(ov))
	if err != nil {
		return "", fmt.Errorf("invoke: %w", err)
	}
	if err := t.checkResult(rt, res, false); err != nil {
		return "", err
	}
	if res.Status != contract.StatusFailed || res.Error == nil || res.Error.Code != codeProtocolError {
		return "", fmt.Errorf("result %s, error %s; want failed with %s", res.Status, marshal(res.Error), codeProtocolError)
	}
	if st := rt.State(); st != stateFailed {
		return "", fmt.Errorf("state after malformed output = %s, want failed", st)
	}
	if _, err := rt.Stop(ctx); err != nil {
		return "", fmt.Errorf("stop: %w", err)
	}
	if err := expectGone(ctx, pid, stateDir); err != nil {
		return "", err
	}
	return fmt.Sprintf("status failed, code %s, runtime failed, host gone", codeProtocolError), nil
}

// cleanup stops a runtime and expects the host to have exited by itself
// on EOF within the exit grace, its group gone and its home removed.
func cleanup(ctx context.Context, t *itemT) (string, error) {
	if err := t.needRuntime(); err != nil {
		return "", err
	}
	c, stateDir, err := t.clientFor(nil)
	if err != nil {
		return "", err
	}
	p, err := t.plan(ctx, c, t.s.profile.config())
	if err != nil {
		return "", fmt.Errorf("plan: %w", err)
	}
	rt, err := c.StartPlan(ctx, p)
	if err != nil {
		return "", fmt.Errorf("start: %w", err)
	}
	t.runtimes = append(t.runtimes, rt)
	pid := rt.HostPid()
	by := t.executorOf(pid)
	home, ok := homeOf(stateDir, rt.ID())
	if !ok {
		return "", fmt.Errorf("no runtime home for %s", rt.ID())
	}
	if !t.s.profile.StartStopOnly {
		res, err := rt.Invoke(ctx, t.s.profile.input(nil))
		if err != nil {
			return "", fmt.Errorf("invoke: %w", err)
		}
		if err := t.s.succeeded(res); err != nil {
			return "", err
		}
	}
	t0 := time.Now()
	res, err := rt.Stop(ctx)
	took := time.Since(t0)
	if err != nil {
		return "", fmt.Errorf("stop: %w", err)
	}
	t.claim(by, "%s", res.Status)
	if res.Status != "stopped" || res.HostCrashed {
		return "", fmt.Errorf("stop = %s, want a clean stop", marshal(res))
	}
	if err := t.observeStopped(ctx, pid, stateDir, home); err != nil {
		return "", err
	}
	// Fabric says whether it had to kill the host; how long stop took is no
	// sign of it (the adapter's own stop may be slow on a loaded machine).
	if hostKilled(res.Events) {
		return "", fmt.Errorf("the host did not exit on stop/EOF within the exit grace of %s and was killed (stop took %s)", seconds(limitsOf(p).ExitGraceSeconds), took.Round(time.Millisecond))
	}
	return fmt.Sprintf("stop took %s (host exited by itself on stop/EOF); group, home and state gone", took.Round(time.Millisecond)), nil
}

// hostKilled reports whether the runtime.stop event says the host was
// killed rather than exiting by itself.
func hostKilled(events []contract.FabricEvent) bool {
	for _, e := range events {
		if e.Kind == contract.EventRuntimeStop && e.Metadata["host_killed"] == true {
			return true
		}
	}
	return false
}

func limitsOf(p *contract.RunPlan) contract.LifecycleLimits {
	if p.Limits == nil {
		return contract.LifecycleLimits{}
	}
	return *p.Limits
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// isolation runs two runtimes at once and checks they share nothing.
func isolation(ctx context.Context, t *itemT) (string, error) {
	if err := t.needRuntime(); err != nil {
		return "", err
	}
	ov := t.s.profile.TurnOutput
	if t.s.profile.StartStopOnly {
		ov = nil
	}
	c, stateDir, err := t.clientFor(nil, ov)
	if err != nil {
		return "", err
	}
	cfg := t.s.profile.config(ov)
	a, err := t.start(ctx, c, cfg)
	if err != nil {
		return "", fmt.Errorf("start a: %w", err)
	}
	b, err := t.start(ctx, c, cfg)
	if err != nil {
		return "", fmt.Errorf("start b: %w", err)
	}
	homeA, okA := homeOf(stateDir, a.ID())
	homeB, okB := homeOf(stateDir, b.ID())
	switch {
	case a.ID() == b.ID():
		return "", fmt.Errorf("both runtimes have id %s", a.ID())
	case a.HostPid() == b.HostPid():
		return "", fmt.Errorf("both runtimes have host pid %d", a.HostPid())
	case !okA || !okB || homeA == homeB:
		return "", fmt.Errorf("runtime homes %q and %q", homeA, homeB)
	}
	turns := "invocations not exercised (start_stop_only)"
	if !t.s.profile.StartStopOnly {
		if err := t.interleave(ctx, a, b, ov != nil); err != nil {
			return "", err
		}
		turns = "turn counts independent"
		if ov == nil {
			turns = "both answer (no turn_output overlay to compare turn counts)"
		}
	}
	pidA := a.HostPid()
	by := t.executorOf(pidA)
	stopA, err := a.Stop(ctx)
	if err != nil {
		return "", fmt.Errorf("stop a: %w", err)
	}
	t.claim(by, "runtime a %s", stopA.Status)
	if err := t.survivor(ctx, b, homeB, pidA, homeA, ov != nil); err != nil {
		return "", err
	}
	if _, err := b.Stop(ctx); err != nil {
		return "", fmt.Errorf("stop b: %w", err)
	}
	return fmt.Sprintf("distinct ids, host pids and homes; %s; stopping one left the other working", turns), nil
}

// interleave invokes a and b at the same time, then a twice and b once,
// and (with turns) checks each output is the runtime's own turn number.
func (t *itemT) interleave(ctx context.Context, a, b *fabric.Runtime, turns bool) error {
	var wg sync.WaitGroup
	var resA, resB *contract.RunResult
	var errA, errB error
	wg.Go(func() { resA, errA = a.Invoke(ctx, t.s.profile.input(nil)) })
	wg.Go(func() { resB, errB = b.Invoke(ctx, t.s.profile.input(nil)) })
	wg.Wait()
	if err := errors.Join(errA, errB); err != nil {
		return fmt.Errorf("concurrent invocations: %w", err)
	}
	steps := []struct {
		rt   *fabric.Runtime
		res  *contract.RunResult
		name string
		turn int
	}{{a, resA, "a", 1}, {b, resB, "b", 1}, {a, nil, "a", 2}, {a, nil, "a", 3}, {b, nil, "b", 2}}
	for _, s := range steps {
		res := s.res
		if res == nil {
			var err error
			if res, err = s.rt.Invoke(ctx, t.s.profile.input(nil)); err != nil {
				return fmt.Errorf("invoke %s: %w", s.name, err)
			}
		}
		if err := checkTurn(res, s.name, s.turn, turns); err != nil {
			return err
		}
	}
	return nil
}

func checkTurn(res *contract.RunResult, name string, turn int, turns bool) error {
	if res.Status != contract.StatusSucceeded {
		return fmt.Errorf("runtime %s turn %d: status %s (%s)", name, turn, res.Status, marshal(res.Error))
	}
	if got := strings.TrimSpace(outputText(res.Output)); turns && got != fmt.Sprint(turn) {
		return fmt.Errorf("runtime %s answered %q on its turn %d: its turn count is not its own", name, got, turn)
	}
	return nil
}

// survivor checks b after a stopped: a's group and home gone, b intact
// and still taking invocations.
func (t *itemT) survivor(ctx context.Context, b *fabric.Runtime, homeB string, pidA int, homeA string, turns bool) error {
	if err := t.observeSurvivor(b.HostPid(), homeB, pidA, homeA); err != nil {
		return err
	}
	if st := b.State(); st != stateActive {
		return fmt.Errorf("the other runtime is %s after the first stopped", st)
	}
	if t.s.profile.StartStopOnly {
		return nil
	}
	res, err := b.Invoke(ctx, t.s.profile.input(nil))
	if err != nil {
		return fmt.Errorf("invoke the remaining runtime: %w", err)
	}
	return checkTurn(res, "b", 3, turns)
}

// observeSurvivor reads the process table and the state directory after
// runtime a stopped: a's group and home gone, b's group and home there.
func (t *itemT) observeSurvivor(pidB int, homeB string, pidA int, homeA string) error {
	var errs []string
	if procChecks {
		if left := groupMembers(pidA); len(left) > 0 {
			errs = append(errs, fmt.Sprintf("stopped runtime's processes %v still run", left))
		}
		if len(groupMembers(pidB)) == 0 {
			errs = append(errs, "stopping one runtime killed the other's host")
		}
	}
	if _, err := os.Stat(homeA); !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Sprintf("stopped runtime's home %s remains", homeA))
	}
	if _, err := os.Stat(homeB); err != nil {
		errs = append(errs, fmt.Sprintf("stopping one runtime removed the other's home: %v", err))
	}
	return t.observeScan(errs, "",
		fmt.Sprintf("group %d and home of the stopped runtime gone; group %d and home of the other present", pidA, pidB),
		"home of the stopped runtime gone, the other's present (no process table here)")
}

// expectStateCode returns a check that an invocation was refused with a
// StateError of the given code.
func expectStateCode(code string) func(*contract.RunResult, error) error {
	return func(res *contract.RunResult, err error) error {
		var se *fabric.StateError
		if !errors.As(err, &se) {
			return fmt.Errorf("want a StateError %s, got %s, %v", code, resultStatus(res), err)
		}
		if se.Code != code {
			return fmt.Errorf("StateError code %s, want %s", se.Code, code)
		}
		return nil
	}
}

// expectGone waits briefly for the host's process group to disappear and
// checks that no runtime home is left.
func expectGone(ctx context.Context, pgid int, stateDir string) error {
	if procChecks {
		deadline := time.Now().Add(goneTimeout)
		for len(groupMembers(pgid)) > 0 {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("processes %v of group %d are still running", groupMembers(pgid), pgid)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if left := dirEntries(stateDir); len(left) > 0 {
		return fmt.Errorf("the state directory still holds %v", left)
	}
	return nil
}

// homeOf finds the home of runtimeID in stateDir.
func homeOf(stateDir, runtimeID string) (string, bool) {
	for _, name := range dirEntries(stateDir) {
		if strings.HasPrefix(name, runtimeID+"-") {
			return filepath.Join(stateDir, name), true
		}
	}
	return "", false
}

func dirEntries(dir string) []string {
	entries, _ := os.ReadDir(dir)
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
