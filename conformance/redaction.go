package conformance

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
)

// evidence collects the documents the secret must never appear in.
type evidence struct {
	mu    sync.Mutex
	names []string
	docs  []string
}

func (e *evidence) add(name string, v any) {
	text := marshal(v)
	if err, ok := v.(error); ok {
		text = err.Error() + " " + marshal(fabric.ErrorInfo(err))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.names = append(e.names, name)
	e.docs = append(e.docs, text)
}

// leaks names the documents that contain value.
func (e *evidence) leaks(value string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for i, d := range e.docs {
		if strings.Contains(d, value) {
			out = append(out, e.names[i])
		}
	}
	return out
}

// secretRedaction gives the secret variable a sentinel value and checks
// that it appears in no plan, doctor report, handle, result, event, stop
// result or error, including when the host writes it to its stderr.
func secretRedaction(ctx context.Context, t *itemT) (string, error) {
	name, d, err := t.secretConfig()
	if err != nil {
		return "", err
	}
	value := sentinel()
	ev := &evidence{}
	if err := t.redactionRun(ctx, name, value, d, nil, ev); err != nil {
		return "", err
	}
	note := "no leak_stderr overlay"
	leak := t.s.profile.LeakStderr.withSecret(value)
	if leak != nil && !t.s.profile.CapabilitiesOnly {
		if note, err = t.redactionLeak(ctx, name, value, leak, ev); err != nil {
			return "", err
		}
	}
	found := ev.leaks(value)
	t.observe(ObserverSecretScan, MethodSecretScan, len(found) == 0, "%s",
		leakReport(name, len(ev.docs), uniq(found)))
	if len(found) > 0 {
		return "", fmt.Errorf("the value of %s appears in: %s", name, strings.Join(uniq(found), ", "))
	}
	return fmt.Sprintf("%s's value absent from %d documents (%s); %s", name, len(ev.docs), strings.Join(uniq(ev.names), ", "), note), nil
}

// redactionRun plans, diagnoses, starts, invokes and stops d with the
// secret set, collecting every document.
func (t *itemT) redactionRun(ctx context.Context, name, value string, d doc, ov *Overlay, ev *evidence) error {
	c, _, err := t.clientFor(map[string]*string{name: &value}, ov)
	if err != nil {
		return err
	}
	l, err := t.load(c, d)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if ov == nil { // an overlay may carry the value in the config on purpose
		p, err := c.Plan(ctx, l)
		if err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		ev.add("plan", p)
		ev.add("doctor report", c.Doctor(ctx, l))
	}
	if t.s.profile.CapabilitiesOnly {
		return nil
	}
	rt, err := c.StartRuntime(ctx, l)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	t.runtimes = append(t.runtimes, rt)
	ev.add("handle", rt.Handle())
	by := t.executorOf(rt.HostPid())
	if !t.s.profile.StartStopOnly {
		res, err := rt.Invoke(ctx, t.s.profile.input(ov), fabric.WithEvents(func(e contract.FabricEvent) { ev.add("event", e) }))
		if err != nil {
			return fmt.Errorf("invoke: %w", err)
		}
		ev.add("result", res)
	}
	res, err := rt.Stop(ctx)
	if err != nil {
		ev.add("stop error", err)
		return fmt.Errorf("stop: %w", err)
	}
	ev.add("stop result", res)
	if t.claimed == nil {
		t.claim(by, "%s", res.Status)
	}
	return nil
}

// leakReport is the secret scan's result: where the value appeared, or
// how many documents were scanned.
func leakReport(name string, docs int, found []string) string {
	if len(found) > 0 {
		return fmt.Sprintf("the value of %s appears in: %s", name, strings.Join(found, ", "))
	}
	return fmt.Sprintf("the value of %s appears in none of %d documents", name, docs)
}

// redactionLeak runs the leak overlay (the host writes the value to its
// stderr) and, with the start_failure overlay, checks that the stderr
// tail attached to the start error was scrubbed.
func (t *itemT) redactionLeak(ctx context.Context, name, value string, leak *Overlay, ev *evidence) (string, error) {
	if err := t.redactionRun(ctx, name, value, withAPIKeyEnv(t.s.profile.config(leak), name), leak, ev); err != nil {
		return "", fmt.Errorf("with the leak_stderr overlay: %w", err)
	}
	fail := t.s.profile.StartFailure
	if fail == nil {
		return "host stderr leak run (no start_failure overlay to surface diagnostics)", nil
	}
	c, _, err := t.clientFor(map[string]*string{name: &value}, leak, fail)
	if err != nil {
		return "", err
	}
	_, err = t.start(ctx, c, withAPIKeyEnv(t.s.profile.config(leak, fail), name))
	if err == nil {
		return "", errors.New("start succeeded with the leak_stderr and start_failure overlays")
	}
	ev.add("start error", err)
	info := fabric.ErrorInfo(err)
	if info == nil {
		return "", fmt.Errorf("start error without details: %v", err)
	}
	diag, _ := info.Metadata["diagnostics"].(string)
	if !strings.Contains(diag, contract.Redacted) {
		return "", fmt.Errorf("the start error's diagnostics do not show the leaked value %s (diagnostics %q): the redaction was not exercised", contract.Redacted, diag)
	}
	return "the value the host wrote to stderr is " + contract.Redacted + " in the start error's diagnostics", nil
}

func uniq(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
