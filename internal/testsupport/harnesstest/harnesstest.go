package harnesstest

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/conformance"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/testsupport/livetest"
	"github.com/fabric-runtime/fabric/modelstub"
)

// Deadline bounds one turn of CancelOnEvent until its first event.
const Deadline = 90 * time.Second

// NewRig is adaptertest.New for Fabric's own adapters: the client also
// knows every bundled adapter's descriptor, as Fabric's binaries do.
func NewRig(t testing.TB, o adaptertest.Options) *adaptertest.Rig {
	t.Helper()
	o.ClientOptions = append([]fabric.Option{fabric.WithBundledAdapters(bundled.Adapters())}, o.ClientOptions...)
	return adaptertest.New(t, o)
}

// Events returns the result's events of one kind, in order.
func Events(res *contract.RunResult, kind string) []contract.FabricEvent {
	var out []contract.FabricEvent
	for _, e := range res.Events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// Streamed joins the messages of the result's events of one kind (the
// output deltas, say).
func Streamed(res *contract.RunResult, kind string) string {
	var b strings.Builder
	for _, e := range Events(res, kind) {
		b.WriteString(e.Message)
	}
	return b.String()
}

// CancelOnEvent starts a turn, cancels it at the first event of kind (the
// handshake that says it is under way), and returns the result and the
// time from cancel to result. The test fails if no such event comes
// within Deadline or the turn does not end within 10 s of cancel.
func CancelOnEvent(t testing.TB, rt *fabric.Runtime, input, kind string) (*contract.RunResult, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan struct{})
	type outcome struct {
		res *contract.RunResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		fired := false // events are delivered one at a time
		res, err := rt.Invoke(ctx, input, fabric.WithEvents(func(e contract.FabricEvent) {
			if e.Kind == kind && !fired {
				fired = true
				close(seen)
			}
		}))
		done <- outcome{res, err}
	}()
	wait := time.NewTimer(Deadline)
	defer wait.Stop()
	select {
	case <-seen:
	case o := <-done:
		t.Fatalf("%s ended before any %s event: %+v %v", input, kind, o.res, o.err)
	case <-wait.C:
		t.Fatalf("%s: no %s event within %s", input, kind, Deadline)
	}
	t0 := time.Now()
	cancel()
	end := time.NewTimer(10 * time.Second)
	defer end.Stop()
	select {
	case o := <-done:
		took := time.Since(t0)
		if o.err != nil {
			t.Fatalf("%s: %v", input, o.err)
		}
		return o.res, took
	case <-end.C:
		t.Fatalf("%s did not end within 10 s of cancel", input)
	}
	return nil, 0
}

// CheckEndpoint fails the test when the harness reached anything but the
// rig's OpenAI-compatible endpoint with the rig's key in an Authorization
// header, when a request carries a value containing ambientMarker (an
// ambient key the harness must not use), or when anything went to the
// sentinel proxy.
func CheckEndpoint(t testing.TB, r *adaptertest.Rig, ambientMarker string) {
	t.Helper()
	r.CheckOffline()
	reqs := r.Stub.Requests()
	if len(reqs) == 0 {
		t.Error("the model endpoint saw no request")
	}
	for _, r := range reqs {
		if !strings.HasPrefix(r.Path, "/v1/") || !r.KeyOK || r.AuthHeader != "authorization" {
			t.Errorf("request %d %s %s: auth %q key_ok %v", r.Seq, r.Method, r.Path, r.AuthHeader, r.KeyOK)
		}
		if ambientMarker != "" && strings.Contains(string(r.Body), ambientMarker) {
			t.Errorf("request %d carries the ambient key", r.Seq)
		}
	}
}

// AmbientKey is a fresh placeholder for a provider key a harness finds in
// its environment but must never send (CheckEndpoint's ambientMarker). It
// is recorded in the token ledger, so the suite's scan also proves it
// never appears in any output.
func AmbientKey() string {
	k := "sk-ambient-must-not-be-sent-" + rand.Text()
	harnessui.RecordForAudit(k)
	return k
}

// CheckChatRequests fails t unless every request stub saw came through
// the OpenAI-compatible /v1 base with the key the stub expects in an
// Authorization header, to chat completions for model; no request at all
// is a failure too. It returns the requests.
func CheckChatRequests(t testing.TB, stub *modelstub.Server, model string) []modelstub.Request {
	t.Helper()
	reqs := stub.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model endpoint saw no request")
	}
	for _, r := range reqs {
		if r.Method != "POST" || r.Path != "/v1/chat/completions" || r.AuthHeader != "authorization" || !r.KeyChecked || !r.KeyOK || r.Model != model {
			t.Errorf("request %d: %s %s auth %q key_checked %v key_ok %v model %q", r.Seq, r.Method, r.Path, r.AuthHeader, r.KeyChecked, r.KeyOK, r.Model)
		}
	}
	return reqs
}

// MainRequests drops the side requests the endpoint detected (session
// titles and the like) from reqs.
func MainRequests(reqs []modelstub.Request) []modelstub.Request {
	var out []modelstub.Request
	for _, r := range reqs {
		if !r.Side {
			out = append(out, r)
		}
	}
	return out
}

// Conformance runs the conformance suite with the profile file against
// the real harness, with this test binary as the host of bundled Go
// adapters and path first on PATH. The profile must name its modelstub
// script, which the suite serves itself (as `fabric packages qualify`
// does). Every item must pass except those named in mayskip (documented
// as not provokable in the profile); the endpoint must have seen a
// request.
func Conformance(t testing.TB, profileFile string, path []string, mayskip ...string) {
	t.Helper()
	Suite{Path: path, MaySkip: mayskip}.Run(t, profileFile)
}

// Suite is a conformance run of a live test, for harnesses that need more
// than Conformance's defaults.
type Suite struct {
	// Path goes first on the adapter hosts' PATH.
	Path []string
	// MaySkip names the items that may be skipped.
	MaySkip []string
	// ItemTimeout bounds each item (default 2 minutes).
	ItemTimeout time.Duration
	// Only runs just these items (all when empty); the environment
	// variable FABRIC_CONFORMANCE_ONLY (e.g. "8,9") sets it for a run by
	// hand.
	Only []string
}

// Run runs the suite with profileFile as Conformance does.
func (s Suite) Run(t testing.TB, profileFile string) {
	t.Helper()
	profile, err := conformance.LoadProfile(profileFile)
	if err != nil {
		t.Fatal(err)
	}
	if profile.ModelStub == "" {
		t.Fatalf("profile %s names no modelstub script: every bundled profile serves its own model endpoint", profileFile)
	}
	if profile.SecretEnv != "" {
		harnessui.RecordForAudit(profile.Env[profile.SecretEnv])
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	timeout := s.ItemTimeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	only := s.Only
	if v := os.Getenv("FABRIC_CONFORMANCE_ONLY"); v != "" && len(only) == 0 {
		only = strings.Split(v, ",")
	}
	rep := conformance.Run(context.Background(), nil, profile, conformance.Options{
		ClientOptions: []fabric.Option{fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithHostBinary(exe), fabric.WithExtraPath(s.Path...)},
		ItemTimeout:   timeout,
		TempDir:       t.TempDir(),
		Only:          only,
		Progress: func(it conformance.Item) {
			t.Logf("%-3s %-18s %-5s %s (%s)", it.ID, it.Name, it.Verdict, it.Detail, it.Elapsed.Round(time.Millisecond))
		},
	})
	if len(only) == 0 {
		for _, p := range rep.Unexpected(s.MaySkip...) {
			t.Error(p)
		}
	} else {
		for _, it := range rep.Items {
			if slices.Contains(only, it.ID) && it.Verdict == conformance.Fail {
				t.Errorf("item %s %s failed: %s", it.ID, it.Name, it.Detail)
			}
		}
	}
	if rep.ModelEndpoint == nil {
		t.Fatal("the suite served no model endpoint")
	}
	if rep.ModelEndpoint.Requests == 0 {
		t.Error("the model endpoint saw no request")
	}
}

// HarnessDirs returns dirs made absolute (a relative one is under the
// module's harnesses/ folder, where harnesses/install.sh puts the pinned
// harnesses) when found, given them as a PATH list, finds the harness
// there. Otherwise the harness, named by what, is missing: the test skips,
// or fails where live tests are required (livetest.Missing).
func HarnessDirs(t testing.TB, what string, found func(path string) error, dirs ...string) []string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	abs := make([]string, len(dirs))
	for i, d := range dirs {
		abs[i] = d
		if !filepath.IsAbs(d) {
			abs[i] = filepath.Join(root, "harnesses", d)
		}
	}
	if err := found(strings.Join(abs, string(os.PathListSeparator))); err != nil {
		livetest.Missing(t, what+" (under "+filepath.Join(root, "harnesses")+")", "run harnesses/install.sh", err)
	}
	return abs
}

// moduleRoot is the folder of the go.mod above the working directory (a
// test runs in its package's folder).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
