package codex

import (
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit/adaptertest"
	"github.com/fabric-runtime/fabric/contract"
)

// A session whose app-server is gone reports the activity stopped, as the
// other stdio harnesses do (it said idle), and an unknown level is
// unsupported whatever the process's state.
func TestHealthOfAGoneAppServer(t *testing.T) {
	adaptertest.CheckHealth(t, &session{}, []adaptertest.HealthWant{
		{Level: contract.LevelLive, Outcome: contract.OutcomeFailed, Reason: contract.ReasonHealthFailed, Activity: contract.ActivityStopped},
		{Level: contract.LevelActive, Outcome: contract.OutcomeFailed, Reason: contract.ReasonHealthFailed, Activity: contract.ActivityStopped},
		{Level: contract.LevelReady, Outcome: contract.OutcomeFailed, Reason: contract.ReasonHealthFailed, Activity: contract.ActivityStopped},
		{Level: "deep", Outcome: contract.OutcomeUnsupported, Reason: contract.ReasonUnsupportedLevel, Activity: contract.ActivityStopped},
	})
}
