package adapterkit

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// testServiceAdapter is a testAdapter that also provides services.
type testServiceAdapter struct {
	testAdapter
	startService func(ctx context.Context, in ServiceStart) (ServiceSession, error)
	attach       func(ctx context.Context, in ServiceAttach) (ServiceSession, error)
}

func (a *testServiceAdapter) StartService(ctx context.Context, in ServiceStart) (ServiceSession, error) {
	return a.startService(ctx, in)
}

// attachingAdapter adds ServiceAttacher.
type attachingAdapter struct{ *testServiceAdapter }

func (a attachingAdapter) AttachService(ctx context.Context, in ServiceAttach) (ServiceSession, error) {
	return a.attach(ctx, in)
}

type testService struct {
	conn    map[string]any
	creds   map[string]string
	md      map[string]any
	health  func(ctx context.Context, level string) (Health, error)
	stops   atomic.Int32
	stopErr error
}

func (s *testService) Connection() map[string]any       { return s.conn }
func (s *testService) CredentialEnv() map[string]string { return s.creds }
func (s *testService) ServiceMetadata() map[string]any  { return s.md }
func (s *testService) Stop(context.Context) error       { s.stops.Add(1); return s.stopErr }
func (s *testService) Health(ctx context.Context, level string) (Health, error) {
	if s.health != nil {
		return s.health(ctx, level)
	}
	return Health{Outcome: contract.OutcomePassed, Source: "test.service", Message: level}, nil
}

func serviceParams(id string) hostproto.ServiceStartParams {
	return hostproto.ServiceStartParams{ServiceID: id, ServiceType: "shared", AgentName: "agent", BaseDir: "/tmp/base",
		Config: contract.AgentConfig{Harness: &contract.AgentHarnessConfig{Settings: map[string]any{"k": "v"}}}}
}

func TestServiceStartHealthStop(t *testing.T) {
	svc := &testService{conn: map[string]any{"url": "http://127.0.0.1:1", "token_env": "T"}, creds: map[string]string{"T": "s3cret-value"}, md: map[string]any{"version": "1"}}
	var got ServiceStart
	a := &testServiceAdapter{startService: func(ctx context.Context, in ServiceStart) (ServiceSession, error) {
		got = in
		return svc, nil
	}}
	c := startV2(t, a)
	var res hostproto.ServiceStartResult
	c.mustCall(hostproto.MethodServiceStart, serviceParams("service-1"), &res)
	if got.ServiceID != "service-1" || got.ServiceType != "shared" || got.AgentName != "agent" || got.Config.Harness.Settings["k"] != "v" {
		t.Errorf("service start input %+v", got)
	}
	if res.Connection["url"] != "http://127.0.0.1:1" || res.CredentialEnv["T"] != "s3cret-value" || res.Metadata["version"] != "1" {
		t.Errorf("result %+v", res)
	}
	// A service host takes no invocations and no second start.
	err := c.call(hostproto.OpInvoke, invokeParams("service-1", "invocation-1", "x"), nil)
	if d := lifecycleCode(t, err); d.Code != CodeInvalidOperation {
		t.Errorf("invoke: %+v", d)
	}
	err = c.call(hostproto.OpStart, startParams("runtime-1"), nil)
	if d := lifecycleCode(t, err); d.Code != CodeAlreadyStarted {
		t.Errorf("start after service_start: %+v", d)
	}
	err = c.call(hostproto.MethodServiceStart, serviceParams("service-2"), nil)
	if d := lifecycleCode(t, err); d.Code != CodeAlreadyStarted {
		t.Errorf("second service_start: %+v", d)
	}
	var h Health
	c.mustCall(hostproto.MethodHealth, hostproto.HealthParams{Level: contract.LevelReady, TimeoutMillis: 1000}, &h)
	if h.Outcome != contract.OutcomePassed || h.Source != "test.service" || h.Message != contract.LevelReady {
		t.Errorf("health %+v", h)
	}
	c.mustCall(hostproto.OpStop, hostproto.StopParams{RuntimeID: "service-1"}, nil)
	if err := c.waitServed(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if n := svc.stops.Load(); n != 1 {
		t.Errorf("Stop called %d times", n)
	}
	if n := a.starts.Load(); n != 0 {
		t.Errorf("Adapter.Start called %d times", n)
	}
}

func TestServiceStartFailures(t *testing.T) {
	t.Run("no service adapter", func(t *testing.T) {
		c := startV2(t, &testAdapter{})
		err := c.call(hostproto.MethodServiceStart, serviceParams("service-1"), nil)
		if d := lifecycleCode(t, err); d.Code != CodeServiceUnsupported || d.Stage != contract.StagePrepare {
			t.Errorf("%+v", d)
		}
		// The host is still idle: a runtime can start.
		c.start("runtime-1")
	})
	t.Run("missing id", func(t *testing.T) {
		c := startV2(t, &testServiceAdapter{})
		err := c.call(hostproto.MethodServiceStart, serviceParams(""), nil)
		if d := lifecycleCode(t, err); d.Code != CodeInvalidRuntime {
			t.Errorf("%+v", d)
		}
	})
	t.Run("adapter error ends the host", func(t *testing.T) {
		c := startV2(t, &testServiceAdapter{startService: func(context.Context, ServiceStart) (ServiceSession, error) {
			return nil, Errorf("port_taken", "no port")
		}})
		err := c.call(hostproto.MethodServiceStart, serviceParams("service-1"), nil)
		if d := lifecycleCode(t, err); d.Code != "port_taken" || d.Stage != contract.StagePrepare {
			t.Errorf("%+v", d)
		}
		if err := c.waitServed(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	t.Run("panic", func(t *testing.T) {
		c := startV2(t, &testServiceAdapter{startService: func(context.Context, ServiceStart) (ServiceSession, error) {
			panic("boom")
		}})
		err := c.call(hostproto.MethodServiceStart, serviceParams("service-1"), nil)
		if d := lifecycleCode(t, err); d.Code != "lifecycle_adapter_service_start_failed" {
			t.Errorf("%+v", d)
		}
	})
	t.Run("credential in the connection", func(t *testing.T) {
		svc := &testService{conn: map[string]any{"url": "http://x", "auth": map[string]any{"header": "Bearer s3cret-value"}}, creds: map[string]string{"T": "s3cret-value"}}
		c := startV2(t, &testServiceAdapter{startService: func(context.Context, ServiceStart) (ServiceSession, error) { return svc, nil }})
		err := c.call(hostproto.MethodServiceStart, serviceParams("service-1"), nil)
		d := lifecycleCode(t, err)
		if d.Code != CodeInvalidResponse {
			t.Errorf("%+v", d)
		}
		b, _ := json.Marshal(d)
		if strings.Contains(string(b), "s3cret-value") {
			t.Errorf("the error carries the credential: %s", b)
		}
		if err := c.waitServed(); err != nil {
			t.Errorf("Serve: %v", err)
		}
		if n := svc.stops.Load(); n != 1 {
			t.Errorf("the refused service was stopped %d times", n)
		}
	})
	t.Run("bad credential name", func(t *testing.T) {
		svc := &testService{creds: map[string]string{"not a name": "v"}}
		c := startV2(t, &testServiceAdapter{startService: func(context.Context, ServiceStart) (ServiceSession, error) { return svc, nil }})
		err := c.call(hostproto.MethodServiceStart, serviceParams("service-1"), nil)
		if d := lifecycleCode(t, err); d.Code != CodeInvalidResponse {
			t.Errorf("%+v", d)
		}
	})
}

func TestServiceAttach(t *testing.T) {
	ref := contract.ServiceReference{AdapterID: "a", ServiceType: "shared", Connection: map[string]any{"url": "http://127.0.0.1:2", "token_env": "T"}}
	t.Run("without ServiceAttacher", func(t *testing.T) {
		c := startV2(t, &testServiceAdapter{})
		p := serviceParams("service-1")
		p.Reference = &ref
		var res hostproto.ServiceStartResult
		c.mustCall(hostproto.MethodServiceAttach, p, &res)
		if res.Connection["url"] != "http://127.0.0.1:2" || res.Connection["token_env"] != "T" || len(res.CredentialEnv) != 0 {
			t.Errorf("result %+v", res)
		}
		var h Health
		c.mustCall(hostproto.MethodHealth, hostproto.HealthParams{Level: contract.LevelActive}, &h)
		if h.Outcome != contract.OutcomeUnsupported || h.ReasonCode != contract.ReasonUnsupportedAdapter {
			t.Errorf("health %+v", h)
		}
	})
	t.Run("with ServiceAttacher", func(t *testing.T) {
		svc := &testService{conn: map[string]any{"url": "http://127.0.0.1:2"}}
		var got ServiceAttach
		c := startV2(t, attachingAdapter{&testServiceAdapter{attach: func(ctx context.Context, in ServiceAttach) (ServiceSession, error) {
			got = in
			return svc, nil
		}}})
		p := serviceParams("service-1")
		p.Reference = &ref
		c.mustCall(hostproto.MethodServiceAttach, p, nil)
		if got.ServiceID != "service-1" || got.Reference.Connection["token_env"] != "T" {
			t.Errorf("attach input %+v", got)
		}
		c.mustCall(hostproto.OpStop, hostproto.StopParams{RuntimeID: "service-1"}, nil)
		c.waitServed()
		if n := svc.stops.Load(); n != 1 {
			t.Errorf("detach called %d times", n)
		}
	})
	t.Run("missing reference", func(t *testing.T) {
		c := startV2(t, &testServiceAdapter{})
		err := c.call(hostproto.MethodServiceAttach, serviceParams("service-1"), nil)
		if d := lifecycleCode(t, err); d.Code != CodeInvalidStart {
			t.Errorf("%+v", d)
		}
	})
	t.Run("attach error", func(t *testing.T) {
		c := startV2(t, attachingAdapter{&testServiceAdapter{attach: func(context.Context, ServiceAttach) (ServiceSession, error) {
			return nil, Errorf("unauthorized", "token rejected")
		}}})
		p := serviceParams("service-1")
		p.Reference = &ref
		err := c.call(hostproto.MethodServiceAttach, p, nil)
		if d := lifecycleCode(t, err); d.Code != "unauthorized" {
			t.Errorf("%+v", d)
		}
	})
}

// TestStartInputService: a runtime bound to a service receives it.
func TestStartInputService(t *testing.T) {
	a := &testAdapter{}
	c := startV2(t, a)
	p := startParams("runtime-1")
	p.Service = &hostproto.ServiceBinding{ServiceID: "service-1", AdapterID: "a", ServiceType: "shared", Ownership: "fabric_owned", Connection: map[string]any{"url": "http://127.0.0.1:3"}}
	c.mustCall(hostproto.OpStart, p, nil)
	a.mu.Lock()
	in := a.startInput
	a.mu.Unlock()
	if in.Service == nil || in.Service.ServiceID != "service-1" || in.Service.Connection["url"] != "http://127.0.0.1:3" {
		t.Fatalf("start input service %+v", in.Service)
	}
	var res contract.AgentRunResult
	c.mustCall(hostproto.OpInvoke, invokeParams("runtime-1", "invocation-1", "hi"), &res)
	if res.Output != "hi" {
		t.Errorf("invoke %+v", res)
	}
}
