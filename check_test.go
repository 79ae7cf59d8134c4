package fabric_test

import (
	"context"
	"errors"
	"testing"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
	"github.com/fabric-runtime/fabric/contract"
)

func TestClientCheck(t *testing.T) {
	client := fabric.New(fabric.WithBundledAdapters(bundled.Adapters()), fabric.WithStateDir(t.TempDir()))
	cfg, err := client.ParseConfig([]byte(exampleConfig), "agent.yaml", fabric.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt, err := client.StartRuntime(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Stop(ctx)

	tests := []struct {
		name    string
		req     contract.CheckRequest
		outcome string
		reason  string
		errPath string
	}{
		{"runtime by id", contract.CheckRequest{Scope: "runtime", RuntimeID: rt.ID(), Level: "ready"}, "passed", "", ""},
		{"unknown runtime", contract.CheckRequest{Scope: "runtime", RuntimeID: "runtime-nope"}, "failed", "runtime_unavailable", ""},
		{"unknown service", contract.CheckRequest{Scope: "service", ServiceID: "service-nope"}, "failed", "service_unavailable", ""},
		{"server scope is the sandbox server's", contract.CheckRequest{Scope: "server"}, "unsupported", "unsupported_scope", ""},
		{"server takes no level", contract.CheckRequest{Scope: "server", Level: "live"}, "", "", "level"},
		{"server takes no runtime id", contract.CheckRequest{Scope: "server", RuntimeID: rt.ID()}, "", "", "runtime_id"},
		{"scope required", contract.CheckRequest{}, "", "", "scope"},
		{"bad level", contract.CheckRequest{Scope: "runtime", RuntimeID: rt.ID(), Level: "deep"}, "", "", "level"},
		{"negative timeout", contract.CheckRequest{Scope: "runtime", RuntimeID: rt.ID(), TimeoutSeconds: -1}, "", "", "timeout_seconds"},
		{"wrong schema", contract.CheckRequest{Scope: "runtime", RuntimeID: rt.ID(), SchemaVersion: "x"}, "", "", "schema_version"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := client.Check(ctx, tc.req)
			if tc.errPath != "" {
				var ce *fabric.ConfigError
				if !errors.As(err, &ce) || ce.Path != tc.errPath || ce.Code != "invalid_check_request" {
					t.Fatalf("err = %v, want a ConfigError at %s", err, tc.errPath)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if rep.ReasonCode != nil {
				got = *rep.ReasonCode
			}
			if rep.Outcome != tc.outcome || got != tc.reason || rep.SchemaVersion != contract.CheckSchemaVersion {
				t.Fatalf("got %s/%s, want %s/%s: %+v", rep.Outcome, got, tc.outcome, tc.reason, rep)
			}
		})
	}

	// Runtime.Check defaults to its own id; another id is refused.
	if rep, err := rt.Check(ctx, contract.CheckRequest{Level: "active"}); err != nil || rep.Outcome != "passed" {
		t.Fatalf("rt.Check = %+v, %v", rep, err)
	}
	if _, err := rt.Check(ctx, contract.CheckRequest{RuntimeID: "runtime-other"}); err == nil {
		t.Fatal("a check of another runtime was accepted")
	}

	// After stop, the client no longer holds the runtime.
	rt.Stop(ctx)
	rep, err := client.Check(ctx, contract.CheckRequest{Scope: "runtime", RuntimeID: rt.ID()})
	if err != nil || rep.Outcome != "failed" {
		t.Fatalf("after stop: %+v, %v", rep, err)
	}
}
