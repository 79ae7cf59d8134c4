package acp

import (
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/contract"
)

// A session whose agent is gone reports the activity stopped, and a level
// other than live, active and ready is unsupported, as for the other
// stdio harnesses (it passed, or failed with the agent's state).
func TestHealthOfAGoneAgent(t *testing.T) {
	adaptertest.CheckHealth(t, &session{}, []adaptertest.HealthWant{
		{Level: contract.LevelLive, Outcome: contract.OutcomeFailed, Reason: contract.ReasonHealthFailed, Activity: contract.ActivityStopped},
		{Level: contract.LevelReady, Outcome: contract.OutcomeFailed, Reason: contract.ReasonHealthFailed, Activity: contract.ActivityStopped},
		{Level: "deep", Outcome: contract.OutcomeUnsupported, Reason: contract.ReasonUnsupportedLevel, Activity: contract.ActivityStopped},
	})
}
