package scripted_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapters/scripted"
	"github.com/fabric-runtime/fabric/contract"
)

func serviceAdapter(t *testing.T) (adapterkit.Adapter, adapterkit.ServiceAdapter, adapterkit.ServiceAttacher) {
	t.Helper()
	a := scripted.New()
	sa, ok := a.(adapterkit.ServiceAdapter)
	if !ok {
		t.Fatal("the scripted adapter is no ServiceAdapter")
	}
	at, ok := a.(adapterkit.ServiceAttacher)
	if !ok {
		t.Fatal("the scripted adapter is no ServiceAttacher")
	}
	return a, sa, at
}

func startService(t *testing.T, sa adapterkit.ServiceAdapter, settings map[string]any) adapterkit.ServiceSession {
	t.Helper()
	s, err := sa.StartService(context.Background(), adapterkit.ServiceStart{
		ServiceID: "service-1", ServiceType: scripted.ServiceType, AgentName: "agent", BaseDir: "/tmp",
		Config: contract.AgentConfig{Harness: &contract.AgentHarnessConfig{Settings: settings}},
	})
	if err != nil {
		t.Fatalf("start service: %v", err)
	}
	t.Cleanup(func() { s.Stop(context.Background()) })
	return s
}

func get(t *testing.T, c *http.Client, url, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func health(t *testing.T, h interface {
	Health(context.Context, string) (adapterkit.Health, error)
}, level string) adapterkit.Health {
	t.Helper()
	res, err := h.Health(context.Background(), level)
	if err != nil {
		t.Fatalf("health %s: %v", level, err)
	}
	return res
}

func bound(conn map[string]any) *adapterkit.ServiceConnection {
	return &adapterkit.ServiceConnection{ServiceID: "service-1", AdapterID: scripted.ID, ServiceType: scripted.ServiceType, Ownership: contract.OwnershipFabric, Connection: conn}
}

func startBound(t *testing.T, a adapterkit.Adapter, runtimeID string, conn map[string]any, response string) (adapterkit.Session, error) {
	t.Helper()
	s, err := a.Start(context.Background(), adapterkit.StartInput{
		AgentName: "agent", BaseDir: "/tmp",
		Config:         contract.AgentConfig{Harness: &contract.AgentHarnessConfig{Settings: map[string]any{"response": response}}},
		RuntimeContext: contract.RuntimeContext{RuntimeID: runtimeID},
		Service:        bound(conn),
	})
	if err == nil {
		t.Cleanup(func() { s.Stop(context.Background()) })
	}
	return s, err
}

func turn(t *testing.T, s adapterkit.Session, runtimeID, input string) string {
	t.Helper()
	res, err := s.Invoke(context.Background(), adapterkit.Invocation{
		Request: contract.AgentRunRequest{Input: input},
		Context: contract.RuntimeContext{RuntimeID: runtimeID},
		Events:  discard{},
	})
	if err != nil || res.Status != contract.StatusSucceeded {
		t.Fatalf("invoke: %+v %v", res, err)
	}
	return res.Output.(string)
}

type discard struct{}

func (discard) Emit(adapterkit.Event) {}

// TestSharedService: the service answers only with its token; runtimes
// bound to it share its turn counter and notes.
func TestSharedService(t *testing.T) {
	a, sa, _ := serviceAdapter(t)
	svc := startService(t, sa, nil)
	conn := svc.Connection()
	url, _ := conn[scripted.ConnURL].(string)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || conn[scripted.ConnTokenEnv] != scripted.ServiceTokenEnv {
		t.Fatalf("connection %v", conn)
	}
	token := svc.(adapterkit.ServiceCredentials).CredentialEnv()[scripted.ServiceTokenEnv]
	if len(token) < 32 || strings.Contains(url, token) {
		t.Fatalf("token %d bytes", len(token))
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	if code := get(t, hc, url+"/healthz", ""); code != http.StatusOK {
		t.Errorf("healthz %d", code)
	}
	if code := get(t, hc, url+"/v1/state", ""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	if code := get(t, hc, url+"/v1/state", "nope"); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", code)
	}
	if code := get(t, hc, url+"/v1/state", token); code != http.StatusOK {
		t.Errorf("token: %d", code)
	}
	for _, level := range []string{contract.LevelLive, contract.LevelActive, contract.LevelReady} {
		if h := health(t, svc, level); h.Outcome != contract.OutcomePassed {
			t.Errorf("service health %s: %+v", level, h)
		}
	}

	t.Setenv(scripted.ServiceTokenEnv, token)
	r1, err := startBound(t, a, "runtime-1", conn, "{service_turn}|{turn}|{service_notes}")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := startBound(t, a, "runtime-2", conn, "{service_turn}|{turn}|{service_notes}")
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		s      adapterkit.Session
		id, in string
		want   string
	}{
		{r1, "runtime-1", "a", "1|1|a"},
		{r2, "runtime-2", "b", "2|1|a; b"},
		{r1, "runtime-1", "c", "3|2|a; b; c"},
	} {
		if got := turn(t, step.s, step.id, step.in); got != step.want {
			t.Fatalf("%s %s: %q, want %q", step.id, step.in, got, step.want)
		}
	}
	if h := health(t, r1, contract.LevelReady); h.Outcome != contract.OutcomePassed {
		t.Errorf("bound runtime ready: %+v", h)
	}

	// A runtime with a wrong token cannot start.
	t.Setenv(scripted.ServiceTokenEnv, "wrong")
	_, err = startBound(t, a, "runtime-3", conn, "x")
	var ae *adapterkit.Error
	if !errors.As(err, &ae) || ae.Code != scripted.CodeServiceUnauthorized {
		t.Fatalf("start with a wrong token: %v", err)
	}

	// Once the service stops, bound runtimes fail their turns and ready.
	svc.Stop(context.Background())
	if h := health(t, r1, contract.LevelReady); h.Outcome != contract.OutcomeFailed || h.ReasonCode != contract.ReasonServiceUnavailable {
		t.Errorf("ready without the service: %+v", h)
	}
	res, err := r2.Invoke(context.Background(), adapterkit.Invocation{Request: contract.AgentRunRequest{Input: "d"}, Context: contract.RuntimeContext{RuntimeID: "runtime-2"}, Events: discard{}})
	if err != nil || res.Status != contract.StatusFailed || res.Error.Code != scripted.CodeServiceUnavailable {
		t.Fatalf("turn without the service: %+v %v", res, err)
	}
}

// TestServiceTokenFromSettings: service_token_env names the token's
// variable; an unset variable fails the start.
func TestServiceTokenFromSettings(t *testing.T) {
	_, sa, at := serviceAdapter(t)
	t.Setenv("MY_SCRIPTED_TOKEN", "chosen-token-123")
	svc := startService(t, sa, map[string]any{"service_token_env": "MY_SCRIPTED_TOKEN"})
	if svc.Connection()[scripted.ConnTokenEnv] != "MY_SCRIPTED_TOKEN" || svc.(adapterkit.ServiceCredentials).CredentialEnv()["MY_SCRIPTED_TOKEN"] != "chosen-token-123" {
		t.Fatalf("connection %v", svc.Connection())
	}
	_, err := sa.StartService(context.Background(), adapterkit.ServiceStart{ServiceID: "s", Config: contract.AgentConfig{Harness: &contract.AgentHarnessConfig{Settings: map[string]any{"service_token_env": "SURELY_UNSET_SCRIPTED_VAR"}}}})
	var ae *adapterkit.Error
	if !errors.As(err, &ae) || ae.Code != scripted.CodeInvalidSettings {
		t.Fatalf("unset token variable: %v", err)
	}

	// Attach: the right token probes fine, a wrong one is rejected, and
	// detaching leaves the service running.
	ref := contract.ServiceReference{AdapterID: scripted.ID, ServiceType: scripted.ServiceType, Connection: svc.Connection()}
	att, err := at.AttachService(context.Background(), adapterkit.ServiceAttach{Reference: ref})
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	for _, level := range []string{contract.LevelLive, contract.LevelActive, contract.LevelReady} {
		if h := health(t, att, level); h.Outcome != contract.OutcomePassed {
			t.Errorf("attachment health %s: %+v", level, h)
		}
	}
	if err := att.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h := health(t, svc, contract.LevelReady); h.Outcome != contract.OutcomePassed {
		t.Errorf("service after detach: %+v", h)
	}
	t.Setenv("MY_SCRIPTED_TOKEN", "wrong")
	if _, err := at.AttachService(context.Background(), adapterkit.ServiceAttach{Reference: ref}); !errors.As(err, &ae) || ae.Code != scripted.CodeServiceUnauthorized {
		t.Fatalf("attach with a wrong token: %v", err)
	}
	ref.ServiceType = "gateway"
	if _, err := at.AttachService(context.Background(), adapterkit.ServiceAttach{Reference: ref}); !errors.As(err, &ae) || ae.Code != scripted.CodeServiceReference {
		t.Fatalf("attach of another type: %v", err)
	}
}
