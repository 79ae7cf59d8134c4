package service

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/catalog"
	"github.com/fabric-runtime/fabric/internal/plan"
	"github.com/fabric-runtime/fabric/internal/runtime"
)

// TestMain doubles as the adapter host of the services these tests start.
func TestMain(m *testing.M) {
	if name := os.Getenv(bundled.EnvAdapter); name != "" {
		os.Exit(bundled.Serve(context.Background(), name))
	}
	goleak.VerifyTestMain(m)
}

func testPlan(t *testing.T, adapter string, settings map[string]any) *contract.RunPlan {
	t.Helper()
	cfg := contract.FabricConfig{
		SchemaVersion: contract.ConfigSchemaVersion,
		Metadata:      contract.MetadataConfig{Name: "svc-test"},
		Runtime:       contract.RuntimeConfig{InputSchema: "text", OutputSchema: "text"},
		Harness:       &contract.HarnessConfig{AdapterID: adapter, Settings: settings},
	}
	var descs []catalog.Bundled
	for _, d := range bundled.Descriptors() {
		descs = append(descs, catalog.Bundled{Name: d.Name, Data: d.Data})
	}
	cat, err := catalog.Discover(catalog.Options{Bundled: descs})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Resolve(cfg, plan.Options{BaseDir: t.TempDir(), Catalog: cat})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testOptions(t *testing.T) Options {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Options{Runtime: runtime.Options{HostBinary: exe, StateDir: t.TempDir(), Env: append(os.Environ(), "GORACE=atexit_sleep_ms=0")}}
}

func TestIsCredentialKey(t *testing.T) {
	for k, want := range map[string]bool{
		"token": true, "api_key": true, "ApiKey": true, "client_secret": true, "password": true, "auth_token": true, "Authorization": true,
		"token_env": false, "api_key_env": false, "token_url": false, "url": false, "port": false, "auth_header": false, "secret_file": false, "user": false,
	} {
		if got := isCredentialKey(k); got != want {
			t.Errorf("isCredentialKey(%q) = %t", k, got)
		}
	}
	for s, want := range map[string]bool{
		"http://user:pw@host/": true, "Bearer abc": true, "basic abc": true,
		"http://host:1/": false, "http://user@host/": false, "plain": false,
	} {
		if got := looksLikeCredential(s); got != want {
			t.Errorf("looksLikeCredential(%q) = %t", s, got)
		}
	}
}

func TestServiceTypesAndCheckAdapter(t *testing.T) {
	d := contract.AdapterDescriptor{AdapterID: "x.y"}
	if got := ServiceTypes(&d); len(got) != 1 || got[0] != "x.y" {
		t.Errorf("default types %v", got)
	}
	d.Capabilities.Metadata = map[string]any{ServiceTypesKey: []any{"gateway", "other"}}
	if got := ServiceTypes(&d); len(got) != 2 || got[0] != "gateway" {
		t.Errorf("declared types %v", got)
	}
	p := &contract.RunPlan{AdapterDescriptor: &contract.ResolvedAdapterDescriptor{Descriptor: d}, HostProtocol: contract.HostProtocolV2}
	var ke *contract.CapabilityError
	if err := CheckAdapter(p, contract.StagePrepare); !errors.As(err, &ke) || ke.Code != CodeServiceUnsupported {
		t.Errorf("no capability: %v", err)
	}
	p.AdapterDescriptor.Descriptor.Capabilities.Service = true
	if err := CheckAdapter(p, contract.StagePrepare); err != nil {
		t.Errorf("v2 service adapter: %v", err)
	}
	p.HostProtocol = contract.HostProtocolV1
	if err := CheckAdapter(p, contract.StagePrepare); !errors.As(err, &ke) || ke.Code != CodeProtocolUnsupported {
		t.Errorf("v1: %v", err)
	}
}

func TestValidateReferenceResolvesCredentials(t *testing.T) {
	p := testPlan(t, "fabric.scripted", nil)
	lookup := func(k string) (string, bool) {
		if k == "SVC_TOKEN" {
			return "token-value-123", true
		}
		return "", false
	}
	env, err := ValidateReference(p, &contract.ServiceReference{
		AdapterID: "fabric.scripted", ServiceType: "shared_state",
		Connection: map[string]any{"url": "http://127.0.0.1:9", "token_env": "SVC_TOKEN", "tls": map[string]any{"ca_file": "/ca.pem"}},
	}, lookup)
	if err != nil || len(env) != 1 || env["SVC_TOKEN"] != "token-value-123" {
		t.Fatalf("env %v, err %v", env, err)
	}
	_, err = ValidateReference(p, &contract.ServiceReference{
		AdapterID: "fabric.scripted", ServiceType: "shared_state",
		Metadata: map[string]any{"api_key": "k-123456"},
	}, lookup)
	var ce *contract.ConfigError
	if !errors.As(err, &ce) || ce.Code != CodeCredentialValue || ce.Path != "metadata.api_key" || strings.Contains(err.Error(), "k-123456") {
		t.Fatalf("credential in metadata: %v", err)
	}
}

func TestRejectInterfaces(t *testing.T) {
	cfg := &contract.FabricConfig{Harness: &contract.HarnessConfig{Settings: map[string]any{"interfaces": map[string]any{}}}}
	var ke *contract.CapabilityError
	if err := RejectInterfaces(cfg, contract.StagePrepare); !errors.As(err, &ke) || ke.Code != CodeInterfacesUnsupported || ke.Path != InterfacesPath {
		t.Fatalf("err = %v", err)
	}
	if err := RejectInterfaces(&contract.FabricConfig{}, contract.StagePrepare); err != nil {
		t.Fatal(err)
	}
}

// fakeUser is a runtime whose state the test sets.
type fakeUser struct {
	id    string
	state atomic.Value
}

func newUser(id string) *fakeUser {
	u := &fakeUser{id: id}
	u.state.Store(runtime.StateActive)
	return u
}

func (u *fakeUser) ID() string    { return u.id }
func (u *fakeUser) State() string { return u.state.Load().(string) }

// TestAcquireRelease: a starting or running user keeps the service; a
// failed start or a stopped user does not; concurrent releases agree.
func TestAcquireRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts := testOptions(t)
	p := testPlan(t, "fabric.scripted", nil)
	s, err := Prepare(ctx, p, opts)
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handle()
	if err := s.VerifyHandle(&h); err != nil {
		t.Fatal(err)
	}
	if other := bind(runtime.NewBindingKey(), &h); other == h.ServiceBinding {
		t.Fatal("the binding does not depend on the key")
	}

	b, done, err := s.Acquire(p.AdapterDescriptor.Descriptor.AdapterID)
	if err != nil {
		t.Fatal(err)
	}
	if b.Service.ServiceID != h.ServiceID || b.Env["FABRIC_SCRIPTED_SERVICE_TOKEN"] == "" || b.Service.Connection["token_env"] != "FABRIC_SCRIPTED_SERVICE_TOKEN" {
		t.Fatalf("binding %+v", b.Service)
	}
	var se *contract.StateError
	if err := s.Release(ctx); !errors.As(err, &se) || se.Code != CodeInUse {
		t.Fatalf("release while starting: %v", err)
	}
	done(nil) // the start failed
	done(nil) // done is idempotent

	_, done, _ = s.Acquire(p.AdapterDescriptor.Descriptor.AdapterID)
	u := newUser("runtime-1")
	done(u)
	if err := s.Release(ctx); !errors.As(err, &se) || se.Code != CodeInUse {
		t.Fatalf("release while bound: %v", err)
	}
	u.state.Store(runtime.StateFailed) // failed but not stopped: its host may live
	if err := s.Release(ctx); !errors.As(err, &se) || se.Code != CodeInUse {
		t.Fatalf("release while a failed runtime is not stopped: %v", err)
	}
	u.state.Store(runtime.StateStopped)

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = s.Release(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("release %d: %v", i, err)
		}
	}
	if s.Status() != contract.ServiceReleased {
		t.Fatalf("status %s", s.Status())
	}
	if _, _, err := s.Acquire(p.AdapterDescriptor.Descriptor.AdapterID); !errors.As(err, &se) || se.Code != CodeReleased {
		t.Fatalf("acquire after release: %v", err)
	}
	var ke *contract.CapabilityError
	if _, _, err := s.Acquire("fabric.scripted.v1"); !errors.As(err, &ke) || ke.Code != CodeAdapterMismatch {
		t.Fatalf("acquire for another adapter: %v", err)
	}
}
