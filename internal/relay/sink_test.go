package relay

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/google/go-cmp/cmp"
)

func TestSinkConfig(t *testing.T) {
	l := newListener(t, Options{})
	sc := l.SinkConfig("runtime-a b")
	u, err := url.Parse(sc.Sink["url"].(string))
	if err != nil || u.Path != "/atof" || u.Query().Get(RuntimeQuery) != "runtime-a b" || u.Host != l.Addr().String() {
		t.Fatalf("url %v %v", sc.Sink["url"], err)
	}
	want := map[string]any{
		"type": "stream", "name": "nemo-fabric-stream", "url": sc.Sink["url"], "transport": "ndjson",
		"timeout_millis": 3000, "field_name_policy": "preserve",
	}
	if diff := cmp.Diff(want, sc.Sink); diff != "" {
		t.Fatalf("sink (-want +got):\n%s", diff)
	}
	if len(sc.Env) != 0 {
		t.Fatalf("Env without a token: %v", sc.Env)
	}
	if got := l.SinkConfig("").Sink["url"]; got != l.URL() {
		t.Fatalf("url without a runtime: %v", got)
	}
}

func TestSinkConfigTokenStaysOutOfTheDocument(t *testing.T) {
	l := newListener(t, Options{RequireToken: true})
	sc := l.SinkConfig("runtime-a")
	if diff := cmp.Diff(map[string]any{"authorization": EnvToken}, sc.Sink["header_env"]); diff != "" {
		t.Fatalf("header_env (-want +got):\n%s", diff)
	}
	tp := &contract.TelemetryPlan{Providers: []string{"relay"}, RelayEnabled: true, AdapterOutputs: []string{}}
	out, err := WithSink(tp, sc)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(doc), l.token) || !strings.Contains(string(doc), EnvToken) {
		t.Fatalf("plan document %s", doc)
	}
	if sc.Env[EnvToken] != "Bearer "+l.token {
		t.Fatal("Env does not carry the header value")
	}
}

func TestInjectSink(t *testing.T) {
	sink := map[string]any{"type": "stream", "name": SinkName, "url": "http://127.0.0.1:1/atof", "transport": "ndjson"}
	fileSink := map[string]any{"type": "file", "output_directory": "relay-atof"}
	userStream := map[string]any{"type": "stream", "name": "archive", "url": "http://x/events"}
	oldOurs := map[string]any{"type": "stream", "name": SinkName, "url": "http://stale/atof"}
	cases := []struct {
		name  string
		relay map[string]any
		want  map[string]any
	}{
		{
			name:  "no relay block",
			relay: nil,
			want: map[string]any{"observability": map[string]any{
				"version": ObservabilityVersion,
				"atof":    map[string]any{"enabled": true, "sinks": []any{sink}},
			}},
		},
		{
			name:  "other settings kept, observability created",
			relay: map[string]any{"project": "p", "output_dir": "./out", "components": []any{}},
			want: map[string]any{"project": "p", "output_dir": "./out", "components": []any{}, "observability": map[string]any{
				"version": ObservabilityVersion,
				"atof":    map[string]any{"enabled": true, "sinks": []any{sink}},
			}},
		},
		{
			name: "enabled ATOF keeps other sinks and replaces ours",
			relay: map[string]any{"observability": map[string]any{
				"version": 4, "atif": map[string]any{"enabled": true},
				"atof": map[string]any{"enabled": true, "sinks": []any{fileSink, oldOurs, userStream}},
			}},
			want: map[string]any{"observability": map[string]any{
				"version": 4, "atif": map[string]any{"enabled": true},
				"atof": map[string]any{"enabled": true, "sinks": []any{fileSink, userStream, sink}},
			}},
		},
		{
			name: "disabled ATOF becomes ours alone",
			relay: map[string]any{"observability": map[string]any{
				"atof": map[string]any{"enabled": false, "sinks": []any{fileSink}},
			}},
			want: map[string]any{"observability": map[string]any{
				"atof": map[string]any{"enabled": true, "sinks": []any{sink}},
			}},
		},
		{
			name:  "observability without ATOF",
			relay: map[string]any{"observability": map[string]any{"version": 4}},
			want: map[string]any{"observability": map[string]any{
				"version": 4, "atof": map[string]any{"enabled": true, "sinks": []any{sink}},
			}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := json.Marshal(tc.relay)
			got, err := InjectSink(tc.relay, sink)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			if after, _ := json.Marshal(tc.relay); string(after) != string(before) {
				t.Fatalf("input modified: %s -> %s", before, after)
			}
			// The copy shares nothing with the input or the sink.
			got["observability"].(map[string]any)["atof"].(map[string]any)["sinks"].([]any)[0].(map[string]any)["mutated"] = true
			if _, ok := sink["mutated"]; ok {
				t.Fatal("the injected sink aliases the caller's")
			}
			if after, _ := json.Marshal(tc.relay); string(after) != string(before) {
				t.Fatalf("output aliases the input: %s -> %s", before, after)
			}
		})
	}
}

func TestInjectSinkRejectsWrongTypes(t *testing.T) {
	sink := map[string]any{"name": SinkName}
	for _, relay := range []map[string]any{
		{"observability": "x"},
		{"observability": map[string]any{"atof": []any{}}},
		{"observability": map[string]any{"atof": map[string]any{"enabled": true, "sinks": map[string]any{}}}},
	} {
		if _, err := InjectSink(relay, sink); err == nil {
			t.Errorf("InjectSink(%v) succeeded", relay)
		}
	}
	if _, err := InjectSink(nil, map[string]any{"url": "x"}); err == nil {
		t.Error("a sink without a name was injected")
	}
	// A user sink whose name is not a string is kept, not compared.
	got, err := InjectSink(map[string]any{"observability": map[string]any{"atof": map[string]any{
		"enabled": true, "sinks": []any{map[string]any{"name": map[string]any{}}, "odd"}}}}, sink)
	if err != nil || len(got["observability"].(map[string]any)["atof"].(map[string]any)["sinks"].([]any)) != 3 {
		t.Fatalf("%v %v", got, err)
	}
}

func TestWithSink(t *testing.T) {
	sc := SinkConfig{Sink: map[string]any{"type": "stream", "name": SinkName, "url": "u"}}
	if _, err := WithSink(&contract.TelemetryPlan{Providers: []string{"native"}}, sc); err == nil {
		t.Fatal("WithSink without Relay succeeded")
	}
	if _, err := WithSink(nil, sc); err == nil {
		t.Fatal("WithSink(nil) succeeded")
	}
	dir := "./relay"
	tp := &contract.TelemetryPlan{
		Providers: []string{"relay"}, RelayEnabled: true, RelayOutputDir: &dir, AdapterOutputs: []string{"atof"},
		RelayConfig: map[string]any{"output_dir": dir},
	}
	out, err := WithSink(tp, sc)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.RelayConfig["observability"]; ok {
		t.Fatal("the input plan was modified")
	}
	sinks := out.RelayConfig["observability"].(map[string]any)["atof"].(map[string]any)["sinks"].([]any)
	if len(sinks) != 1 || sinks[0].(map[string]any)["url"] != "u" || out.RelayConfig["output_dir"] != dir || *out.RelayOutputDir != dir {
		t.Fatalf("plan %+v", out)
	}
	out.Providers[0] = "changed"
	if tp.Providers[0] != "relay" {
		t.Fatal("the copy shares Providers")
	}
}
