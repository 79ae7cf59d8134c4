//go:build linux

package fabric_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/fabric-runtime/fabric/internal/procfs"
	"github.com/fabric-runtime/fabric/internal/testsupport/testproc"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
)

// serviceConfig is a scripted config whose answers show the service's
// shared turn counter.
const serviceConfig = `
schema_version: fabric.agent/v1alpha1
metadata: {name: shared}
runtime: {}
harness:
  adapter_id: fabric.scripted
  settings:
    response: "svc {service_turn} turn {turn}: {input}"
`

func parse(t *testing.T, c *fabric.Client, yaml string) *fabric.Loaded {
	t.Helper()
	l, err := c.ParseConfig([]byte(yaml), "agent.yaml", fabric.LoadOptions{BaseDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func prepare(t *testing.T, c *fabric.Client, l *fabric.Loaded) *fabric.Service {
	t.Helper()
	svc, err := c.PrepareService(context.Background(), l)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	t.Cleanup(func() { svc.Release(context.Background()) })
	return svc
}

func startWith(t *testing.T, c *fabric.Client, l *fabric.Loaded, svc *fabric.Service) *fabric.Runtime {
	t.Helper()
	rt, err := c.StartRuntime(context.Background(), l, fabric.WithService(svc))
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { rt.Stop(context.Background()) })
	return rt
}

func invoke(t *testing.T, rt *fabric.Runtime, input string) string {
	t.Helper()
	res, err := rt.Invoke(context.Background(), input)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != contract.StatusSucceeded {
		t.Fatalf("invoke %q: %s %+v", input, res.Status, res.Error)
	}
	return res.Output.(string)
}

// hostEnviron reads a process's environment (the test runs as its owner).
func hostEnviron(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok {
			out[k] = v
		}
	}
	return out
}

// groupAlive lists live (non-zombie) processes of process group pgid.
func groupAlive(pgid int) []int {
	pids, _ := procfs.Default.GroupPids(pgid)
	return pids
}

func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if len(groupAlive(pgid)) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process group %d still has %v", pgid, groupAlive(pgid))
}

// waitStopped waits until every thread of pid is stopped: SIGSTOP takes
// effect asynchronously, and a thread still running could answer.
func waitStopped(t *testing.T, pid int) { testproc.WaitStopped(t, pid) }

func mustNotContain(t *testing.T, what string, v any, secret string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) {
		t.Fatalf("%s contains the credential: %s", what, b)
	}
}

func checkService(t *testing.T, svc *fabric.Service, level string) contract.CheckReport {
	t.Helper()
	rep, err := svc.Check(context.Background(), contract.CheckRequest{Level: level})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func reason(rep contract.CheckReport) string {
	if rep.ReasonCode == nil {
		return ""
	}
	return *rep.ReasonCode
}

// TestServiceSharedByRuntimes: two runtimes bound to one Fabric-owned
// service see each other's turns; the service survives one runtime's stop;
// Release is refused while a runtime is bound and works after both stop,
// leaving no process and no files.
func TestServiceSharedByRuntimes(t *testing.T) {
	t.Parallel()
	stateDir := t.TempDir()
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(stateDir))
	cfg := parse(t, client, serviceConfig)
	ctx := context.Background()
	svc := prepare(t, client, cfg)

	h := svc.Handle()
	if !strings.HasPrefix(h.ServiceID, "service-") || !strings.HasPrefix(h.ServiceBinding, "fabric-service-binding-") ||
		h.AdapterID != "fabric.scripted" || h.ServiceType != "shared_state" || h.Ownership != "fabric_owned" || h.Status != "active" {
		t.Fatalf("handle %+v", h)
	}
	if url, _ := h.Connection["url"].(string); !strings.HasPrefix(url, "http://127.0.0.1:") || h.Connection["token_env"] != "FABRIC_SCRIPTED_SERVICE_TOKEN" {
		t.Fatalf("connection %v", h.Connection)
	}
	if err := svc.VerifyHandle(h); err != nil {
		t.Fatal(err)
	}
	forged := h
	forged.Ownership = "caller_owned"
	if err := svc.VerifyHandle(forged); err == nil {
		t.Fatal("forged service handle verified")
	}
	if rep := checkService(t, svc, "ready"); rep.Outcome != "passed" || rep.Scope != "service" || rep.ServiceID == nil || *rep.ServiceID != h.ServiceID {
		t.Fatalf("ready check %+v", rep)
	}
	// Client.Check finds the service by id.
	if rep, err := client.Check(ctx, contract.CheckRequest{Scope: "service", ServiceID: h.ServiceID, Level: "active"}); err != nil || rep.Outcome != "passed" {
		t.Fatalf("client check %+v %v", rep, err)
	}

	rt1 := startWith(t, client, cfg, svc)
	rt2 := startWith(t, client, cfg, svc)
	if rt1.Handle().ServiceID != h.ServiceID || rt2.Handle().ServiceID != h.ServiceID {
		t.Fatalf("runtime handles carry %q %q", rt1.Handle().ServiceID, rt2.Handle().ServiceID)
	}
	for i, step := range []struct {
		rt   *fabric.Runtime
		in   string
		want string
	}{
		{rt1, "a", "svc 1 turn 1: a"},
		{rt2, "b", "svc 2 turn 1: b"},
		{rt1, "c", "svc 3 turn 2: c"},
	} {
		if got := invoke(t, step.rt, step.in); got != step.want {
			t.Fatalf("step %d: %q, want %q", i, got, step.want)
		}
	}

	// The credential reached the runtime hosts as an environment variable,
	// and no document carries it.
	env := hostEnviron(t, rt1.HostPid())
	token := env["FABRIC_SCRIPTED_SERVICE_TOKEN"]
	if len(token) < 16 || env["FABRIC_SERVICE_ID"] != h.ServiceID {
		t.Fatalf("runtime host env: token %d bytes, service id %q", len(token), env["FABRIC_SERVICE_ID"])
	}
	mustNotContain(t, "service handle", svc.Handle(), token)
	mustNotContain(t, "runtime handle", rt1.Handle(), token)
	mustNotContain(t, "check report", checkService(t, svc, "ready"), token)

	// The service answers only with its token.
	url := h.Connection["url"].(string)
	for _, tc := range []struct {
		path, auth string
		code       int
	}{
		{"/healthz", "", http.StatusOK},
		{"/v1/state", "", http.StatusUnauthorized},
		{"/v1/state", "Bearer wrong-token", http.StatusUnauthorized},
		{"/v1/state", "Bearer " + token, http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodGet, url+tc.path, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("GET %s (authorization %t): %d, want %d", tc.path, tc.auth != "", resp.StatusCode, tc.code)
		}
	}
	http.DefaultClient.CloseIdleConnections()

	var se *fabric.StateError
	if err := svc.Release(ctx); !errors.As(err, &se) || se.Code != "service_in_use" || !se.Retryable || se.Stage != "release" {
		t.Fatalf("release while bound: %v", err)
	}
	if svc.Status() != "active" {
		t.Fatalf("status after refused release %s", svc.Status())
	}
	if _, err := rt1.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if got := invoke(t, rt2, "d"); got != "svc 4 turn 2: d" {
		t.Fatalf("after one stop: %q", got)
	}
	if err := svc.Release(ctx); !errors.As(err, &se) || se.Code != "service_in_use" {
		t.Fatalf("release with one runtime bound: %v", err)
	}
	if ids, _ := se.Metadata["runtime_ids"].([]string); len(ids) != 1 || ids[0] != rt2.ID() {
		t.Fatalf("in use by %v", se.Metadata["runtime_ids"])
	}
	if _, err := rt2.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	pgid := svc.HostPid()
	if err := svc.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
	if svc.Status() != "released" || svc.Handle().Status != "released" {
		t.Fatalf("status %s", svc.Status())
	}
	waitGroupGone(t, pgid)
	if err := svc.Release(ctx); err != nil {
		t.Fatalf("second release: %v", err)
	}
	if entries, _ := os.ReadDir(stateDir); len(entries) != 0 {
		t.Fatalf("left in the state dir: %v", entries)
	}
	if rep := checkService(t, svc, "live"); rep.Outcome != "failed" || reason(rep) != "service_unavailable" {
		t.Fatalf("check after release %+v", rep)
	}
	if _, err := client.StartRuntime(ctx, cfg, fabric.WithService(svc)); !errors.As(err, &se) || se.Code != "service_released" {
		t.Fatalf("start with a released service: %v", err)
	}
}

// TestAttachServiceOfAnotherClient: a caller-owned attachment to a service
// prepared by another client shares its state; releasing the attachment
// leaves the service running.
func TestAttachServiceOfAnotherClient(t *testing.T) {
	t.Parallel()
	const tokenVar = "FABRIC_TEST_SHARED_TOKEN"
	const token = "shared-token-7f3a9c1e5b2d4068"
	ctx := context.Background()
	owner := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(t.TempDir()), fabric.WithHostEnv(append(os.Environ(), tokenVar+"="+token)))
	ownerCfg := parse(t, owner, serviceConfig+"    service_token_env: "+tokenVar+"\n")
	svc := prepare(t, owner, ownerCfg)
	if svc.Handle().Connection["token_env"] != tokenVar {
		t.Fatalf("connection %v", svc.Handle().Connection)
	}
	mustNotContain(t, "owner's handle", svc.Handle(), token)
	rtA := startWith(t, owner, ownerCfg, svc)

	stateDir := t.TempDir()
	other := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(stateDir), fabric.WithEnv(func(k string) (string, bool) {
		if k == tokenVar {
			return token, true
		}
		return os.LookupEnv(k)
	}))
	cfg := parse(t, other, serviceConfig)
	ref := contract.ServiceReference{
		AdapterID: "fabric.scripted", ServiceType: "shared_state",
		Connection: map[string]any{"url": svc.Handle().Connection["url"], "token_env": tokenVar},
		Metadata:   map[string]any{"owner": "test"},
	}
	att, err := other.AttachService(ctx, cfg, ref)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	t.Cleanup(func() { att.Release(context.Background()) })
	h := att.Handle()
	if h.Ownership != "caller_owned" || h.ServiceType != "shared_state" || h.Connection["url"] != ref.Connection["url"] || h.Connection["token_env"] != tokenVar || h.Metadata["owner"] != "test" || h.ServiceID == svc.ID() {
		t.Fatalf("attachment handle %+v", h)
	}
	mustNotContain(t, "attachment handle", h, token)
	if rep := checkService(t, att, "ready"); rep.Outcome != "passed" {
		t.Fatalf("attachment ready check %+v", rep)
	}

	rtB := startWith(t, other, cfg, att)
	if got := invoke(t, rtA, "from A"); got != "svc 1 turn 1: from A" {
		t.Fatalf("A: %q", got)
	}
	if got := invoke(t, rtB, "from B"); got != "svc 2 turn 1: from B" {
		t.Fatalf("B: %q", got)
	}
	var se *fabric.StateError
	if err := att.Release(ctx); !errors.As(err, &se) || se.Code != "service_in_use" {
		t.Fatalf("release of a bound attachment: %v", err)
	}
	if _, err := rtB.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	pgid := att.HostPid()
	if err := att.Release(ctx); err != nil {
		t.Fatalf("detach: %v", err)
	}
	waitGroupGone(t, pgid)
	if entries, _ := os.ReadDir(stateDir); len(entries) != 0 {
		t.Fatalf("left in the state dir: %v", entries)
	}
	// The service keeps running for its owner.
	if rep := checkService(t, svc, "ready"); rep.Outcome != "passed" {
		t.Fatalf("owner's service after detach %+v", rep)
	}
	if got := invoke(t, rtA, "again"); got != "svc 3 turn 2: again" {
		t.Fatalf("A after detach: %q", got)
	}
}

// TestAttachServiceRejectsBadReferences: every problem is reported at its
// field without starting a process; no error carries a credential value.
func TestAttachServiceRejectsBadReferences(t *testing.T) {
	t.Parallel()
	const secret = "pasted-secret-4711abcdef"
	stateDir := t.TempDir()
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(stateDir), fabric.WithEnv(func(k string) (string, bool) {
		switch k {
		case "GOOD_TOKEN":
			return secret, true
		}
		return os.LookupEnv(k)
	}))
	cfg := parse(t, client, serviceConfig)
	ref := func(conn map[string]any) contract.ServiceReference {
		return contract.ServiceReference{AdapterID: "fabric.scripted", ServiceType: "shared_state", Connection: conn}
	}
	tests := []struct {
		name       string
		ref        contract.ServiceReference
		capability bool
		code, path string
	}{
		{"other adapter", contract.ServiceReference{AdapterID: "fabric.codex", ServiceType: "shared_state"}, true, "service_adapter_mismatch", "adapter_id"},
		{"no adapter", contract.ServiceReference{ServiceType: "shared_state"}, false, "invalid_service_reference", "adapter_id"},
		{"unknown type", contract.ServiceReference{AdapterID: "fabric.scripted", ServiceType: "gateway"}, false, "unknown_service_type", "service_type"},
		{"inline token", ref(map[string]any{"url": "http://127.0.0.1:1", "token": secret}), false, "service_credential_value", "connection.token"},
		{"nested password", ref(map[string]any{"auth": map[string]any{"password": secret}}), false, "service_credential_value", "connection.auth.password"},
		{"url with password", ref(map[string]any{"url": "http://user:" + secret + "@127.0.0.1:1"}), false, "service_credential_value", "connection.url"},
		{"bearer value", ref(map[string]any{"header": "Bearer " + secret}), false, "service_credential_value", "connection.header"},
		{"bad env name", ref(map[string]any{"token_env": "1-not-a-name"}), false, "invalid_env_name", "connection.token_env"},
		{"unset variable", ref(map[string]any{"token_env": "FABRIC_TEST_SURELY_UNSET_VAR"}), false, "service_credential_env_missing", "connection.token_env"},
		{"value beside its reference", ref(map[string]any{"token_env": "GOOD_TOKEN", "note": "x" + secret}), false, "service_credential_value", "connection"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client.AttachService(context.Background(), cfg, tc.ref)
			var code, path string
			var ke *fabric.CapabilityError
			var ce *fabric.ConfigError
			switch {
			case tc.capability && errors.As(err, &ke):
				code, path = ke.Code, ke.Path
			case !tc.capability && errors.As(err, &ce):
				code, path = ce.Code, ce.Path
			default:
				t.Fatalf("err = %v (%T)", err, err)
			}
			if code != tc.code || path != tc.path {
				t.Fatalf("code %s at %s, want %s at %s (%v)", code, path, tc.code, tc.path, err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error carries the credential: %v", err)
			}
		})
	}
	if entries, _ := os.ReadDir(stateDir); len(entries) != 0 {
		t.Fatalf("a host was started: %v", entries)
	}
}

// TestAttachServiceWrongToken: the service rejects a wrong token, so the
// attach fails at its probe and leaves nothing behind.
func TestAttachServiceWrongToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	owner := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(t.TempDir()))
	svc := prepare(t, owner, parse(t, owner, serviceConfig))

	const wrong = "wrong-token-0123456789"
	stateDir := t.TempDir()
	other := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(stateDir), fabric.WithEnv(func(k string) (string, bool) {
		if k == "MY_SERVICE_TOKEN" {
			return wrong, true
		}
		return os.LookupEnv(k)
	}))
	_, err := other.AttachService(ctx, parse(t, other, serviceConfig), contract.ServiceReference{
		AdapterID: "fabric.scripted", ServiceType: "shared_state",
		Connection: map[string]any{"url": svc.Handle().Connection["url"], "token_env": "MY_SERVICE_TOKEN"},
	})
	var re *fabric.RuntimeError
	if !errors.As(err, &re) || re.Code != "scripted_service_unauthorized" || re.Stage != "prepare" {
		t.Fatalf("attach with a wrong token: %v", err)
	}
	if strings.Contains(err.Error(), wrong) || strings.Contains(mustJSON(t, fabric.ErrorInfo(err)), wrong) {
		t.Fatalf("the error carries the token: %v", err)
	}
	if entries, _ := os.ReadDir(stateDir); len(entries) != 0 {
		t.Fatalf("left in the state dir: %v", entries)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServiceRejectsInterfaces: harness.settings.interfaces is refused
// with a stable error before any process is started. The host binary is a
// script that records each launch, so "nothing started" is observed.
func TestServiceRejectsInterfaces(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "launches")
	script := filepath.Join(dir, "host.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho launched >> '"+marker+"'\nexec '"+exe+"' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	launches := func() int {
		b, _ := os.ReadFile(marker)
		return bytes.Count(b, []byte("launched"))
	}
	ctx := context.Background()
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(t.TempDir()), fabric.WithHostBinary(script))
	withInterfaces := parse(t, client, serviceConfig+"    interfaces: {dashboard: {enabled: true}}\n")
	check := func(what string, err error, stage string) {
		t.Helper()
		var ke *fabric.CapabilityError
		if !errors.As(err, &ke) || ke.Code != "service_interfaces_unsupported" || ke.Path != "harness.settings.interfaces" || ke.Stage != stage {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err = client.PrepareService(ctx, withInterfaces)
	check("prepare", err, "prepare")
	_, err = client.AttachService(ctx, withInterfaces, contract.ServiceReference{AdapterID: "fabric.scripted", ServiceType: "shared_state"})
	check("attach", err, "prepare")
	if n := launches(); n != 0 {
		t.Fatalf("%d host(s) launched", n)
	}
	// The recorder works: a service without interfaces is one launch; a
	// runtime that would enable interfaces with it is refused unlaunched.
	svc := prepare(t, client, parse(t, client, serviceConfig))
	if n := launches(); n != 1 {
		t.Fatalf("%d launches for one service", n)
	}
	_, err = client.StartRuntime(ctx, withInterfaces, fabric.WithService(svc))
	check("start with service", err, "start")
	if n := launches(); n != 1 {
		t.Fatalf("%d launches after a refused runtime", n)
	}
}

// TestServiceCapabilityChecks: services need an adapter that declares
// them, and a runtime must be of the service's adapter.
func TestServiceCapabilityChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stateDir := t.TempDir()
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(stateDir))
	v1 := parse(t, client, strings.Replace(serviceConfig, "fabric.scripted", "fabric.scripted.v1", 1))
	var ke *fabric.CapabilityError
	if _, err := client.PrepareService(ctx, v1); !errors.As(err, &ke) || ke.Code != "service_unsupported" || ke.Path != "harness.adapter_id" {
		t.Fatalf("prepare for an adapter without services: %v", err)
	}
	if entries, _ := os.ReadDir(stateDir); len(entries) != 0 {
		t.Fatalf("a host was started: %v", entries)
	}
	svc := prepare(t, client, parse(t, client, serviceConfig))
	if _, err := client.StartRuntime(ctx, v1, fabric.WithService(svc)); !errors.As(err, &ke) || ke.Code != "service_adapter_mismatch" {
		t.Fatalf("runtime of another adapter: %v", err)
	}
	if err := svc.Release(ctx); err != nil {
		t.Fatalf("release after a refused runtime: %v", err)
	}
}

// TestServiceCheckHungAndKilled: a stopped (SIGSTOP) service host gives
// unknown/probe_timeout within the deadline; a killed one gives failed
// with agent_exited at live, and Release still cleans up.
func TestServiceCheckHungAndKilled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(t.TempDir()))
	svc := prepare(t, client, parse(t, client, serviceConfig))
	pid := svc.HostPid()

	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitStopped(t, pid)
	rep, err := svc.Check(ctx, contract.CheckRequest{Level: "active", TimeoutSeconds: 0.5})
	syscall.Kill(pid, syscall.SIGCONT)
	if err != nil || rep.Outcome != "unknown" || reason(rep) != "probe_timeout" {
		t.Fatalf("check of a hung host: %+v %v", rep, err)
	}
	if rep := checkService(t, svc, "ready"); rep.Outcome != "passed" {
		t.Fatalf("check after SIGCONT: %+v", rep)
	}

	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for svc.Status() != "failed" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if svc.Status() != "failed" {
		t.Fatalf("status after kill %s", svc.Status())
	}
	rep = checkService(t, svc, "ready")
	if rep.Outcome != "failed" || reason(rep) != "agent_exited" {
		t.Fatalf("check of a killed host %+v", rep)
	}
	last := rep.Observations[len(rep.Observations)-1]
	if last.Level != "live" {
		t.Fatalf("failed at %q, want live: %+v", last.Level, rep.Observations)
	}
	var se *fabric.StateError
	if _, err := client.StartRuntime(ctx, parse(t, client, serviceConfig), fabric.WithService(svc)); !errors.As(err, &se) || se.Code != "service_failed" {
		t.Fatalf("start with a failed service: %v", err)
	}
	if err := svc.Release(ctx); err != nil || svc.Status() != "released" {
		t.Fatalf("release of a dead service: %v, %s", err, svc.Status())
	}
	waitGroupGone(t, pid)
}
