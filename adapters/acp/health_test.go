package acp

import (
	"context"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

// A session whose agent is gone reports the activity stopped, and a level
// other than live, active and ready is unsupported, as for the other
// stdio harnesses (it passed, or failed with the agent's state).
func TestHealthOfAGoneAgent(t *testing.T) {
	s := &session{}
	tests := []struct{ level, outcome, reason, activity string }{
		{contract.LevelLive, contract.OutcomeFailed, contract.ReasonHealthFailed, contract.ActivityStopped},
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
