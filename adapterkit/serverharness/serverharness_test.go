package serverharness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapterkit/harnessui"
	"github.com/fabric-runtime/fabric/contract"
)

func ptr[T any](v T) *T { return &v }

func TestSelectModel(t *testing.T) {
	rules := ModelRules{
		Adapter: "Test", KeyReader: "the server",
		BaseURLs: map[string]string{"hosted": "https://models.example.test/v1"},
		Setting: func(k string, v any) (bool, error) {
			if k != "api" {
				return false, nil
			}
			if v != "x" {
				return true, fmt.Errorf("%v is not x", v)
			}
			return true, nil
		},
	}
	for _, tc := range []struct {
		name    string
		models  map[string]contract.AgentModel
		want    Model
		wantErr string
	}{
		{"base url", map[string]contract.AgentModel{"default": {Provider: "stub", Model: "m", APIKeyEnv: ptr("K"), BaseURL: ptr("http://127.0.0.1:9/v1")}},
			Model{Role: "default", Provider: "stub", Name: "m", BaseURL: "http://127.0.0.1:9/v1", APIKeyEnv: "K", ContextWindow: 128000, MaxTokens: 8192}, ""},
		{"provider default and limits", map[string]contract.AgentModel{"only": {Provider: "hosted", Model: "g", APIKeyEnv: ptr("K"), Settings: map[string]any{"context_window": 4096.0, "max_tokens": 100.0, "api": "x"}}},
			Model{Role: "only", Provider: "hosted", Name: "g", BaseURL: "https://models.example.test/v1", APIKeyEnv: "K", ContextWindow: 4096, MaxTokens: 100}, ""},
		{"no models", nil, Model{}, "no model configured"},
		{"empty model", map[string]contract.AgentModel{"default": {Provider: "hosted", Model: " ", APIKeyEnv: ptr("K")}}, Model{}, "models.default.model is empty"},
		{"no key", map[string]contract.AgentModel{"default": {Provider: "hosted", Model: "g"}}, Model{}, "the server gets the key"},
		{"no base_url", map[string]contract.AgentModel{"default": {Provider: "local", Model: "g", APIKeyEnv: ptr("K")}}, Model{}, `base_url is required for provider "local"`},
		{"bad url", map[string]contract.AgentModel{"default": {Provider: "local", Model: "g", APIKeyEnv: ptr("K"), BaseURL: ptr("ftp://x")}}, Model{}, "is not an http(s) URL"},
		{"bad limit", map[string]contract.AgentModel{"default": {Provider: "hosted", Model: "g", APIKeyEnv: ptr("K"), Settings: map[string]any{"max_tokens": 1.5}}}, Model{}, "settings.max_tokens must be a positive integer"},
		{"adapter setting refused", map[string]contract.AgentModel{"default": {Provider: "hosted", Model: "g", APIKeyEnv: ptr("K"), Settings: map[string]any{"api": "y"}}}, Model{}, "models.default.settings.api y is not x"},
		{"unknown setting", map[string]contract.AgentModel{"default": {Provider: "hosted", Model: "g", APIKeyEnv: ptr("K"), Settings: map[string]any{"top_k": 1.0}}}, Model{}, "top_k is not a model setting of the Test adapter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SelectModel(tc.models, rules)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %+v %v, want %+v", got, err, tc.want)
			}
		})
	}
}

func TestInterfacesAndSettingsError(t *testing.T) {
	desc := []byte(`{"interfaces":[{"name":"web","kind":"http"}]}`)
	for _, tc := range []struct {
		name     string
		settings map[string]any
		wantCode string // of SettingsError's answer; "" for no error
	}{
		{"none", nil, ""},
		{"timeout and own", map[string]any{"startup_timeout_seconds": 5.0, "mine": 1.0}, ""},
		{"unknown own", map[string]any{"theirs": 1.0}, "x_invalid_settings"},
		{"unknown interface", map[string]any{"interfaces": map[string]any{"nope": map[string]any{}}}, harnessui.CodeInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var own struct {
				Mine *int `json:"mine"`
			}
			_, err := DecodeSettings(&contract.AgentHarnessConfig{Settings: tc.settings}, desc, &own)
			if tc.wantCode == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ae *adapterkit.Error
			var ie *harnessui.Error
			serr := SettingsError("x_invalid_settings", err)
			if !(errors.As(serr, &ie) && ie.Code == tc.wantCode) && !(errors.As(serr, &ae) && ae.Code == tc.wantCode) {
				t.Fatalf("SettingsError(%v) = %v, want code %s", err, serr, tc.wantCode)
			}
		})
	}
	if _, err := DecodeSettings(nil, []byte("{"), &struct{}{}); err == nil || !strings.HasPrefix(err.Error(), "descriptor: ") {
		t.Errorf("a descriptor that does not parse: %v", err)
	}
	var ae *adapterkit.Error
	if err := SettingsError("x_invalid_settings", errors.New("settings: bad")); !errors.As(err, &ae) || ae.Code != "x_invalid_settings" {
		t.Errorf("a settings error that is not an interface's: %v", err)
	}
}

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		name, output string
		err          error
		wantCode     string
		wantOutput   bool
	}{
		{"plain error", "boom\nsecret-value here", errors.New("failed"), "x_start_failed", true},
		{"coded error", "boom", adapterkit.Wrap("x_start_timeout", errors.New("slow")), "x_start_timeout", true},
		{"no output", "", errors.New("failed"), "x_start_failed", false},
		{"interface port", "boom", &harnessui.Error{Code: harnessui.CodePortTaken, Message: "taken"}, harnessui.CodePortTaken, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{OutputOf: "the server's", Output: &Tail{Max: 1024}, Codes: Codes{StartFailed: "x_start_failed"},
				Scrub: func(s string) string { return strings.ReplaceAll(s, "secret-value", contract.Redacted) }}
			fmt.Fprint(s.Output, tc.output)
			var ae *adapterkit.Error
			if !errors.As(s.Explain(tc.err), &ae) || ae.Code != tc.wantCode {
				t.Fatalf("Explain: %v, want code %s", ae, tc.wantCode)
			}
			if got := strings.Contains(ae.Message, "the server's last output:\nboom"); got != tc.wantOutput {
				t.Errorf("message %q: output added %v, want %v", ae.Message, got, tc.wantOutput)
			}
			if strings.Contains(ae.Message, "secret-value") {
				t.Errorf("message %q is not scrubbed", ae.Message)
			}
		})
	}
}

// TestHealthWithoutServer: levels the ladder does not know are
// unsupported; a server that is not running fails every level before any
// probe runs.
func TestHealthWithoutServer(t *testing.T) {
	probed := false
	probe := func(context.Context) error { probed = true; return nil }
	s := &Server{Name: "the test server", Source: "test"}
	for _, tc := range []struct {
		level, outcome, reason string
	}{
		{"bogus", contract.OutcomeUnsupported, contract.ReasonUnsupportedLevel},
		{contract.LevelLive, contract.OutcomeFailed, contract.ReasonAgentExited},
		{contract.LevelReady, contract.OutcomeFailed, contract.ReasonAgentExited},
	} {
		done := s.Busy()
		h := s.Health(context.Background(), tc.level, probe, probe)
		done()
		if h.Outcome != tc.outcome || h.ReasonCode != tc.reason || h.Source != "test" || h.Activity != contract.ActivityBusy {
			t.Errorf("%s: %+v", tc.level, h)
		}
	}
	if probed {
		t.Error("a probe ran against a server that is not running")
	}
	if h := s.Health(context.Background(), contract.LevelLive, probe, probe); h.Activity != contract.ActivityIdle {
		t.Errorf("activity %s after the turn", h.Activity)
	}
	if h := s.CheckInterface(context.Background(), "web", contract.LevelLive, true); h.Outcome != contract.OutcomeFailed || h.Message != `no interface "web" runs` {
		t.Errorf("CheckInterface without interfaces: %+v", h)
	}
	if s.Interfaces() != nil {
		t.Error("Interfaces without interfaces")
	}
}

// TestStart: the steps run in order until one fails; then the session is
// stopped once, with a context that has no deadline.
func TestStart(t *testing.T) {
	for _, tc := range []struct {
		name      string
		failAt    int // -1: none
		wantSteps int
		wantStop  bool
	}{
		{"all pass", -1, 3, false},
		{"second fails", 1, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sess := &fakeSession{}
			ran := 0
			step := func(ctx context.Context) error {
				if _, ok := ctx.Deadline(); !ok {
					t.Error("a step runs without the start deadline")
				}
				ran++
				if ran-1 == tc.failAt {
					return errors.New("step failed")
				}
				return nil
			}
			got, err := Start(context.Background(), 1<<30, sess, step, step, step)
			if ran != tc.wantSteps || (err != nil) != tc.wantStop || (sess.stops == 1) != tc.wantStop || sess.stops > 1 {
				t.Fatalf("ran %d steps, err %v, %d stops", ran, err, sess.stops)
			}
			if tc.wantStop && (got != nil || sess.stopDeadline) {
				t.Errorf("failed start returned %v; stop had a deadline: %v", got, sess.stopDeadline)
			}
		})
	}
}

type fakeSession struct {
	adapterkit.Session
	stops        int
	stopDeadline bool
}

func (f *fakeSession) Stop(ctx context.Context) error {
	f.stops++
	_, f.stopDeadline = ctx.Deadline()
	return nil
}

// TestStop: without a process, Stop removes the private directory, runs
// AfterSweep first, and a second Stop does nothing more.
func TestStop(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	if err := os.MkdirAll(filepath.Join(root, "home"), 0o700); err != nil {
		t.Fatal(err)
	}
	after := 0
	s := &Server{Name: "the test server"}
	sp := StopSpec{Own: true, Root: root, AfterSweep: func() {
		if _, err := os.Stat(root); err != nil {
			t.Error("AfterSweep ran after the directory was removed")
		}
		after++
	}}
	for range 2 {
		if err := s.Stop(context.Background(), sp); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) || after != 1 {
		t.Errorf("root still there (%v) or AfterSweep ran %d times", err, after)
	}
}

func TestTail(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		max            int
	}{
		{"short", "a\nb\n", "a\nb", 64},
		{"whole lines kept", "line 1\nline 2\nline 3\n", "line 3", 10},
		{"last 40 lines", strings.Repeat("x\n", 50) + "end\n", strings.Repeat("x\n", 39) + "end", 1 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := &Tail{Max: tc.max}
			for _, line := range strings.SplitAfter(tc.in, "\n") {
				fmt.Fprint(tl, line)
			}
			if got := tl.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
