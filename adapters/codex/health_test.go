package codex

import (
	"context"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

// A session whose app-server is gone reports the activity stopped, as the
// other stdio harnesses do (it said idle), and an unknown level is
// unsupported whatever the process's state.
func TestHealthOfAGoneAppServer(t *testing.T) {
	s := &session{}
	tests := []struct{ level, outcome, reason, activity string }{
		{contract.LevelLive, contract.OutcomeFailed, contract.ReasonHealthFailed, contract.ActivityStopped},
		{contract.LevelActive, contract.OutcomeFailed, contract.ReasonHealthFailed, contract.ActivityStopped},
		{contract.LevelReady, contract.OutcomeFailed, contract.ReasonHealthFailed, contract.ActivityStopped},
		{"deep", contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel, contract.ActivityStopped},
	}
	for _, tt := range tests {
		h, err := s.Health(context.Background(), tt.level)
		if err != nil {
			t.Fatal(err)
		}
		if h.Outcome != tt.outcome || h.ReasonCode != tt.reason || h.Activity != tt.activity {
			t.Errorf("Health(%q) = %q %q %q, want %q %q %q", tt.level, h.Outcome, h.ReasonCode, h.Activity, tt.outcome, tt.reason, tt.activity)
		}
	}
}
