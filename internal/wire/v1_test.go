package wire

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeV1Response(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		want  V1Response
	}{
		{
			name:  "succeeded",
			frame: `{"operation":"invoke","outcome":{"status":"succeeded","output":{"status":"succeeded","output":"4"}}}`,
			want:  V1Response{Operation: "invoke", Outcome: V1Outcome{Status: "succeeded", Output: json.RawMessage(`{"status":"succeeded","output":"4"}`)}},
		},
		{
			name:  "succeeded null output",
			frame: `{"operation":"stop","outcome":{"status":"succeeded","output":null}}`,
			want:  V1Response{Operation: "stop", Outcome: V1Outcome{Status: "succeeded", Output: json.RawMessage(`null`)}},
		},
		{
			name:  "succeeded without output",
			frame: `{"operation":"stop","outcome":{"status":"succeeded"}}`,
			want:  V1Response{Operation: "stop", Outcome: V1Outcome{Status: "succeeded"}},
		},
		{
			name:  "failed",
			frame: `{"operation":"start","outcome":{"status":"failed","error":{"stage":"start","code":"lifecycle_invalid_config","message":"bad","retryable":false}}}`,
			want: V1Response{Operation: "start", Outcome: V1Outcome{Status: "failed",
				Error: json.RawMessage(`{"stage":"start","code":"lifecycle_invalid_config","message":"bad","retryable":false}`)}},
		},
		{
			name:  "sorted keys and whitespace (python host)",
			frame: ` { "outcome" : { "output" : [1, 2] , "status" : "succeeded" } , "operation" : "invoke" } `,
			want:  V1Response{Operation: "invoke", Outcome: V1Outcome{Status: "succeeded", Output: json.RawMessage(`[1, 2]`)}},
		},
		{
			name:  "escaped keys, last duplicate wins",
			frame: `{"oper\u0061tion":"x","operation":"invoke","outcome":{"status":"failed","status":"succeeded","output":1}}`,
			want:  V1Response{Operation: "invoke", Outcome: V1Outcome{Status: "succeeded", Output: json.RawMessage(`1`)}},
		},
		{
			name:  "unknown fields and contradictory extras ignored",
			frame: `{"operation":"invoke","contract_version":"x","outcome":{"status":"failed","output":1,"error":{"code":"c"}}}`,
			want:  V1Response{Operation: "invoke", Outcome: V1Outcome{Status: "failed", Error: json.RawMessage(`{"code":"c"}`)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeV1Response([]byte(tt.frame))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeV1ResponseMalformed(t *testing.T) {
	tests := []struct {
		name, frame, wantMsg string
	}{
		{"not json", `hello`, "invalid JSON"},
		{"truncated", `{"operation":"invoke","outcome":{"status":"succ`, "invalid JSON"},
		{"trailing garbage", `{"operation":"invoke","outcome":{"status":"succeeded"}} x`, "invalid JSON"},
		{"empty", ``, "empty frame"},
		{"blank", " \t", "empty frame"},
		{"operation key case differs", `{"Operation":"invoke","outcome":{"status":"succeeded"}}`, "missing or empty operation"},
		{"status key case differs", `{"operation":"invoke","outcome":{"Status":"succeeded"}}`, "missing outcome.status"},
		{"array", `[{"operation":"invoke"}]`, "must be a JSON object, got array"},
		{"string", `"invoke"`, "got string"},
		{"number", `42`, "got number"},
		{"null", `null`, "got null"},
		{"bool", `true`, "got boolean"},
		{"empty object", `{}`, "missing or empty operation"},
		{"operation empty", `{"operation":"","outcome":{"status":"succeeded"}}`, "missing or empty operation"},
		{"operation null", `{"operation":null,"outcome":{"status":"succeeded"}}`, "missing or empty operation"},
		{"operation number", `{"operation":7,"outcome":{"status":"succeeded"}}`, "operation must be a string, got number"},
		{"operation object", `{"operation":{},"outcome":{"status":"succeeded"}}`, "operation must be a string, got object"},
		{"outcome missing", `{"operation":"invoke"}`, "missing outcome"},
		{"outcome null", `{"operation":"invoke","outcome":null}`, "missing outcome"},
		{"outcome string", `{"operation":"invoke","outcome":"succeeded"}`, "outcome must be an object, got string"},
		{"outcome array", `{"operation":"invoke","outcome":[]}`, "outcome must be an object, got array"},
		{"status missing", `{"operation":"invoke","outcome":{"output":1}}`, "missing outcome.status"},
		{"status number", `{"operation":"invoke","outcome":{"status":1}}`, "outcome.status must be a string, got number"},
		{"status unknown", `{"operation":"invoke","outcome":{"status":"cancelled"}}`, `"cancelled" is not succeeded or failed`},
		{"status wrong case", `{"operation":"invoke","outcome":{"status":"Succeeded"}}`, "is not succeeded or failed"},
		{"failed without error", `{"operation":"invoke","outcome":{"status":"failed"}}`, "failed outcome without error"},
		{"failed null error", `{"operation":"invoke","outcome":{"status":"failed","error":null}}`, "error must be an object, got null"},
		{"failed string error", `{"operation":"invoke","outcome":{"status":"failed","error":"boom"}}`, "error must be an object, got string"},
		{"failed array error", `{"operation":"invoke","outcome":{"status":"failed","error":[]}}`, "error must be an object, got array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeV1Response([]byte(tt.frame))
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("err = %v, want ErrProtocol", err)
			}
			if _, ok := errors.AsType[*ProtocolError](err); !ok {
				t.Fatalf("err is %T, want *ProtocolError", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %q, want it to mention %q", err, tt.wantMsg)
			}
		})
	}
}

func TestDecodeV1Request(t *testing.T) {
	got, err := DecodeV1Request([]byte(`{"operation":"stop","payload":{"runtime_id":"runtime-1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := V1Request{Operation: "stop", Payload: json.RawMessage(`{"runtime_id":"runtime-1"}`)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{``, `x`, `[]`, `{}`, `{"operation":1}`, `{"operation":""}`, `{"payload":{}}`} {
		if _, err := DecodeV1Request([]byte(bad)); !errors.Is(err, ErrProtocol) {
			t.Errorf("DecodeV1Request(%q) err = %v, want ErrProtocol", bad, err)
		}
	}
}

func TestEncodeV1Request(t *testing.T) {
	tests := []struct {
		name string
		req  V1Request
		want string
	}{
		{"object", V1Request{Operation: "invoke", Payload: json.RawMessage(`{"a":1}`)}, `{"operation":"invoke","payload":{"a":1}}`},
		{"pretty payload compacted", V1Request{Operation: "start", Payload: json.RawMessage("{\n  \"a\": [1,\r\n 2]\n}")}, `{"operation":"start","payload":{"a":[1,2]}}`},
		{"nil payload", V1Request{Operation: "stop"}, `{"operation":"stop","payload":null}`},
		{"escaped operation", V1Request{Operation: "we\"ird\n", Payload: json.RawMessage(`{}`)}, `{"operation":"we\"ird\n","payload":{}}`},
		{"html not escaped", V1Request{Operation: "invoke", Payload: json.RawMessage(`{"q":"<a>&"}`)}, `{"operation":"invoke","payload":{"q":"<a>&"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeV1Request(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			back, err := DecodeV1Request(got)
			if err != nil || back.Operation != tt.req.Operation {
				t.Errorf("round trip: %+v, %v", back, err)
			}
		})
	}
	for _, bad := range []V1Request{{Operation: ""}, {Operation: "x", Payload: json.RawMessage(`{`)}} {
		if _, err := EncodeV1Request(bad); err == nil {
			t.Errorf("EncodeV1Request(%+v) succeeded", bad)
		}
	}
	// Append leaves dst intact on error.
	dst := []byte("keep")
	if out, err := AppendV1Request(dst, V1Request{Operation: "x", Payload: json.RawMessage(`nope`)}); err == nil || string(out) != "keep" {
		t.Errorf("AppendV1Request on error = %q, %v", out, err)
	}
}

func TestEncodeV1Response(t *testing.T) {
	tests := []struct {
		name string
		resp V1Response
		want string
	}{
		{"succeeded", V1Response{Operation: "invoke", Outcome: V1Outcome{Status: V1StatusSucceeded, Output: json.RawMessage(` {"x" : 1} `)}},
			`{"operation":"invoke","outcome":{"status":"succeeded","output": {"x" : 1} }}`},
		{"multi-line output compacted", V1Response{Operation: "invoke", Outcome: V1Outcome{Status: V1StatusSucceeded, Output: json.RawMessage("{\n\t\"x\": 1\r\n}")}},
			`{"operation":"invoke","outcome":{"status":"succeeded","output":{"x":1}}}`},
		{"succeeded nil output", V1Response{Operation: "stop", Outcome: V1Outcome{Status: V1StatusSucceeded}},
			`{"operation":"stop","outcome":{"status":"succeeded","output":null}}`},
		{"failed", V1Response{Operation: "start", Outcome: V1Outcome{Status: V1StatusFailed, Error: json.RawMessage(`{"code":"c"}`), Output: json.RawMessage(`1`)}},
			`{"operation":"start","outcome":{"status":"failed","error":{"code":"c"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeV1Response(tt.resp)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if _, err := DecodeV1Response(got); err != nil {
				t.Errorf("round trip: %v", err)
			}
		})
	}
	for _, bad := range []V1Response{
		{Operation: "", Outcome: V1Outcome{Status: "succeeded"}},
		{Operation: "x", Outcome: V1Outcome{Status: "cancelled"}},
		{Operation: "x", Outcome: V1Outcome{Status: "failed"}},
		{Operation: "x", Outcome: V1Outcome{Status: "failed", Error: json.RawMessage(`"s"`)}},
		{Operation: "x", Outcome: V1Outcome{Status: "failed", Error: json.RawMessage(`{`)}},
		{Operation: "x", Outcome: V1Outcome{Status: "succeeded", Output: json.RawMessage(`nul`)}},
	} {
		if _, err := EncodeV1Response(bad); err == nil {
			t.Errorf("EncodeV1Response(%+v) succeeded", bad)
		}
	}
}

// TestV1DecodeSinglePass guards against decoding a response twice: the
// allocations must stay close to one json.Unmarshal of the same shape.
func TestV1DecodeSinglePass(t *testing.T) {
	frame := []byte(`{"operation":"invoke","outcome":{"status":"succeeded","output":{"status":"succeeded","output":"4","artifacts":[]}}}`)
	type plain struct {
		Operation string `json:"operation"`
		Outcome   *struct {
			Status string          `json:"status"`
			Output json.RawMessage `json:"output"`
			Error  json.RawMessage `json:"error"`
		} `json:"outcome"`
	}
	base := testing.AllocsPerRun(100, func() {
		var v plain
		if err := json.Unmarshal(frame, &v); err != nil {
			t.Fatal(err)
		}
	})
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := DecodeV1Response(frame); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > base {
		t.Errorf("DecodeV1Response: %v allocs, one json.Unmarshal takes %v", allocs, base)
	}
}
