package supervisor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/deploy/desired"
	"github.com/fabric-runtime/fabric/internal/supervisorproto"
)

func TestBackoff(t *testing.T) {
	p := contract.RestartPolicy{Policy: contract.RestartOnFailure, Max: 5, BackoffSeconds: []float64{1, 30}}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for n, w := range want {
		if got := backoff(p, n); got != w {
			t.Errorf("backoff after %d restarts = %v, want %v", n, got, w)
		}
	}
}

func TestRouteName(t *testing.T) {
	for _, id := range []string{"integration/model", "integration/main/model", "integration/" + strings.Repeat("s", 40) + "/" + strings.Repeat("a", 40) + "/" + strings.Repeat("m", 40)} {
		n := routeName(id)
		if len(n) > 64 || strings.Contains(n, "/") {
			t.Errorf("routeName(%q) = %q: longer than 64 or holds a slash", id, n)
		}
	}
	if routeName("integration/model") != "integration.model" {
		t.Fatal(routeName("integration/model"))
	}
	long1 := "integration/" + strings.Repeat("x", 60) + "/a"
	long2 := "integration/" + strings.Repeat("x", 60) + "/b"
	if routeName(long1) == routeName(long2) {
		t.Fatal("two long ids share a route name")
	}
}

// The journal: another format is refused, never rewritten; a good one
// round-trips.
func TestJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, supervisorproto.DesiredFile)
	if st, err := readDesired(path); st != nil || err != nil {
		t.Fatalf("no journal: %v %v", st, err)
	}
	st := &desired.State{FormatVersion: desired.FormatVersion, Name: "d", UID: "u", Agents: []desired.Agent{{Name: "a", Config: json.RawMessage(`{}`), Attachments: []string{}}}, Services: []desired.Service{}}
	if err := writeDesired(path, st); err != nil {
		t.Fatal(err)
	}
	got, err := readDesired(path)
	if err != nil || got.Agents[0].Name != "a" {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	other := []byte(`{"format_version":"fabric.deploy.desired/v0"}`)
	os.WriteFile(path, other, 0o600)
	if _, err := readDesired(path); err == nil || !strings.Contains(err.Error(), "does not rewrite") {
		t.Fatalf("another format: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(other) {
		t.Fatal("the journal of another format was rewritten")
	}
}

// FuzzApplyPayload: the supervisor's decoder of apply payloads never
// panics, and what it accepts re-encodes.
func FuzzApplyPayload(f *testing.F) {
	f.Add([]byte(`{"state":{"format_version":"fabric.deploy.desired/v1alpha1","name":"d","uid":"u","digest":"x","agents":[],"services":[]},"credentials":{"env:K":"v"}}`))
	f.Add([]byte(`{"state":null}`))
	f.Add([]byte(`{"state":{"agents":[{"name":"a","config":{"x":1},"restart":{"policy":"never"}}]},"extra":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var p supervisorproto.ApplyPayload
		if err := decodeStrict(b, &p); err != nil {
			return
		}
		if _, err := json.Marshal(p); err != nil {
			t.Fatalf("accepted payload does not re-encode: %v", err)
		}
	})
}
