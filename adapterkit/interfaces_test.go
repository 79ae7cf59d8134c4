package adapterkit

import (
	"context"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/hostproto"
)

// ifaceAdapter's sessions run one interface, "dashboard".
type ifaceAdapter struct{ testAdapter }

type ifaceSession struct{ *testSession }

func (a *ifaceAdapter) Start(ctx context.Context, in StartInput) (Session, error) {
	s, err := a.testAdapter.Start(ctx, in)
	if err != nil {
		return nil, err
	}
	return ifaceSession{s.(*testSession)}, nil
}

func (ifaceSession) Interfaces() []contract.InterfaceInfo {
	return []contract.InterfaceInfo{{Name: "dashboard", Kind: contract.InterfaceHTTP, Address: "127.0.0.1", Port: 18789}}
}

func (ifaceSession) CheckInterface(_ context.Context, name, level string) (Health, error) {
	if name != "dashboard" {
		return Health{Outcome: contract.OutcomeFailed, ReasonCode: contract.ReasonEndpointUnavailable}, nil
	}
	if level == contract.LevelReady {
		return Health{Outcome: contract.OutcomeFailed, ReasonCode: contract.ReasonHealthFailed, Message: "sign-in refused"}, nil
	}
	return Health{Outcome: contract.OutcomePassed}, nil
}

// TestV2Interfaces: the start result reports the session's interfaces and
// health checks naming an interface reach CheckInterface, not Health; a
// session without interfaces answers unsupported.
func TestV2Interfaces(t *testing.T) {
	a := &ifaceAdapter{testAdapter{health: func(context.Context, string) (Health, error) {
		return Health{Outcome: contract.OutcomePassed, Source: "runtime"}, nil
	}}}
	c := startV2(t, a)
	var res hostproto.StartResult
	c.mustCall(hostproto.OpStart, startParams("runtime-1"), &res)
	if len(res.Interfaces) != 1 || res.Interfaces[0].Name != "dashboard" || res.Interfaces[0].Port != 18789 {
		t.Fatalf("start result interfaces %+v", res.Interfaces)
	}
	tests := []struct {
		iface, level, outcome, reason string
	}{
		{"", "ready", "passed", ""}, // the runtime itself: the interface's failure does not count (L4)
		{"dashboard", "active", "passed", ""},
		{"dashboard", "ready", "failed", contract.ReasonHealthFailed},
		{"nope", "live", "failed", contract.ReasonEndpointUnavailable},
	}
	for _, tc := range tests {
		var h Health
		c.mustCall(hostproto.MethodHealth, hostproto.HealthParams{Level: tc.level, Interface: tc.iface}, &h)
		if h.Outcome != tc.outcome || h.ReasonCode != tc.reason {
			t.Errorf("health %q at %s = %s/%s, want %s/%s", tc.iface, tc.level, h.Outcome, h.ReasonCode, tc.outcome, tc.reason)
		}
	}

	plain := startV2(t, &testAdapter{})
	plain.start("runtime-2")
	var h Health
	plain.mustCall(hostproto.MethodHealth, hostproto.HealthParams{Level: "live", Interface: "dashboard"}, &h)
	if h.Outcome != contract.OutcomeUnsupported {
		t.Errorf("a session without interfaces: %+v", h)
	}
}
