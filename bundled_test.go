package fabric_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	fabric "github.com/fabric-runtime/fabric"
	"github.com/fabric-runtime/fabric/adapters/bundled"
)

// A client knows the bundled adapters only when it opts in; without,
// a config naming one fails to plan with an error that names the adapter
// and says how to opt in.
func TestBundledAdaptersAreOptIn(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []fabric.Option
		hint bool // the plan fails with the opt-in hint
	}{
		{"plain", nil, true},
		{"opted in", []fabric.Option{fabric.WithBundledAdapters(bundled.Adapters())}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fabric.New(tc.opts...)
			cfg, err := client.ParseConfig([]byte(exampleConfig), "agent.yaml", fabric.LoadOptions{BaseDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			_, err = client.Plan(context.Background(), cfg)
			if !tc.hint {
				if err != nil {
					t.Fatalf("plan: %v", err)
				}
				return
			}
			var ce *fabric.ConfigError
			if !errors.As(err, &ce) || ce.Code != "unknown_adapter" {
				t.Fatalf("plan error = %v, want unknown_adapter", err)
			}
			for _, want := range []string{`"fabric.scripted"`, "fabric.scripted is one", "fabric.WithBundledAdapters(bundled.Adapters())"} {
				if !strings.Contains(ce.Message, want) {
					t.Errorf("message %q lacks %q", ce.Message, want)
				}
			}
		})
	}
}
