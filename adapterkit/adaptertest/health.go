package adaptertest

import (
	"context"
	"encoding/json"
	"testing"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/contract"
)

// CheckRuntimeHealth checks rt and each interface named at every level (live,
// active, ready), each check bounded by timeoutSeconds, and fails the test
// for any outcome but passed.
func CheckRuntimeHealth(t testing.TB, rt *fabric.Runtime, timeoutSeconds float64, interfaces ...string) {
	t.Helper()
	for _, level := range []string{contract.LevelLive, contract.LevelActive, contract.LevelReady} {
		for _, target := range append([]string{""}, interfaces...) {
			rep, err := rt.Check(context.Background(), contract.CheckRequest{Level: level, TimeoutSeconds: timeoutSeconds, Interface: target})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Outcome != contract.OutcomePassed {
				b, _ := json.Marshal(rep)
				t.Errorf("check %s %q: %s", level, target, b)
			}
		}
	}
}
