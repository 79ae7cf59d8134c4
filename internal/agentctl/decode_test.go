package agentctl

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fabric-runtime/fabric/contract"
)

const pv = `"protocol_version":"fabric.agent-ctl/v1alpha1"`

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name  string
		line  string
		want  *Request // checked when err is empty
		code  string   // expected error code
		field string   // expected error field
	}{
		{
			name: "start",
			line: `{` + pv + `,"operation_id":"op-1","operation":"start","agent":"demo","config":"/a/agent.yaml","base_dir":"/a","strict":true,"timeout_seconds":30}` + "\n",
			want: &Request{ProtocolVersion: ProtocolVersion, OperationID: "op-1", Operation: OpStart, Agent: "demo", Config: "/a/agent.yaml", BaseDir: "/a", Strict: true, TimeoutSeconds: 30},
		},
		{
			name: "invoke",
			line: `{` + pv + `,"operation_id":"op-2","operation":"invoke","agent":"demo","runtime_id":"runtime-1","request":{"request_id":"r1","input":{"text":"hi"},"context":{"k":1}}}`,
			want: &Request{ProtocolVersion: ProtocolVersion, OperationID: "op-2", Operation: OpInvoke, Agent: "demo", RuntimeID: "runtime-1",
				Request: &contract.RunRequest{RequestID: "r1", Input: map[string]any{"text": "hi"}, Context: map[string]any{"k": float64(1)}}},
		},
		{
			name: "invoke with null input",
			line: `{` + pv + `,"operation_id":"op-2","operation":"invoke","agent":"demo","runtime_id":"runtime-1","request":{"input":null}}`,
			want: &Request{ProtocolVersion: ProtocolVersion, OperationID: "op-2", Operation: OpInvoke, Agent: "demo", RuntimeID: "runtime-1", Request: &contract.RunRequest{}},
		},
		{
			name: "stop",
			line: `{` + pv + `,"operation_id":"op-3","operation":"stop","agent":"demo","runtime_id":"runtime-1"}`,
			want: &Request{ProtocolVersion: ProtocolVersion, OperationID: "op-3", Operation: OpStop, Agent: "demo", RuntimeID: "runtime-1"},
		},
		{
			name: "server check",
			line: `{` + pv + `,"operation_id":"op-4","operation":"check","timeout_seconds":0.5}`,
			want: &Request{ProtocolVersion: ProtocolVersion, OperationID: "op-4", Operation: OpCheck, TimeoutSeconds: 0.5},
		},
		{
			name: "runtime check",
			line: `{` + pv + `,"operation_id":"op-5","operation":"check","agent":"demo","runtime_id":"runtime-1","level":"ready"}`,
			want: &Request{ProtocolVersion: ProtocolVersion, OperationID: "op-5", Operation: OpCheck, Agent: "demo", RuntimeID: "runtime-1", Level: "ready"},
		},
		{
			name: "agent check by name alone",
			line: `{` + pv + `,"operation_id":"op-5","operation":"check","agent":"demo","level":"ready"}`,
			want: &Request{ProtocolVersion: ProtocolVersion, OperationID: "op-5", Operation: OpCheck, Agent: "demo", Level: "ready"},
		},
		{
			name: "deploy apply",
			line: `{` + pv + `,"operation_id":"op-7","operation":"deploy","action":"apply","payload":{"a":1},"timeout_seconds":30}`,
			want: &Request{ProtocolVersion: ProtocolVersion, OperationID: "op-7", Operation: OpDeploy, Action: "apply", Payload: []byte(`{"a":1}`), TimeoutSeconds: 30},
		},
		{
			name: "status filtered by agent",
			line: `  {"operation":"status",` + pv + `,"operation_id":"op-6","agent":"démo agent"}  ` + "\r\n",
			want: &Request{ProtocolVersion: ProtocolVersion, OperationID: "op-6", Operation: OpStatus, Agent: "démo agent"},
		},

		{name: "empty", line: "", code: CodeInvalidRequest, field: "$"},
		{name: "not json", line: "hello", code: CodeInvalidRequest, field: "$"},
		{name: "array", line: `[1]`, code: CodeInvalidRequest, field: "$"},
		{name: "truncated", line: `{` + pv + `,"operation_id":"op-1"`, code: CodeInvalidRequest, field: "$"},
		{name: "trailing data", line: `{` + pv + `,"operation_id":"op-1","operation":"status"} {}`, code: CodeInvalidRequest, field: "$"},
		{name: "duplicate key", line: `{` + pv + `,"operation_id":"op-1","operation":"status","operation":"check"}`, code: CodeInvalidRequest, field: "operation"},
		{name: "missing protocol", line: `{"operation_id":"op-1","operation":"status"}`, code: CodeInvalidRequest, field: "protocol_version"},
		{name: "other protocol", line: `{"protocol_version":"fabric.runtime-control.v1alpha1","operation_id":"op-1","operation":"status"}`, code: CodeProtocolMismatch, field: "protocol_version"},
		{name: "missing operation id", line: `{` + pv + `,"operation":"status"}`, code: CodeInvalidRequest, field: "operation_id"},
		{name: "bad operation id", line: `{` + pv + `,"operation_id":"op 1","operation":"status"}`, code: CodeInvalidRequest, field: "operation_id"},
		{name: "numeric operation id", line: `{` + pv + `,"operation_id":7,"operation":"status"}`, code: CodeInvalidRequest, field: "operation_id"},
		{name: "unknown operation", line: `{` + pv + `,"operation_id":"op-1","operation":"restart"}`, code: CodeInvalidRequest, field: "operation"},
		{name: "unknown field", line: `{` + pv + `,"operation_id":"op-1","operation":"status","colour":"red"}`, code: CodeInvalidRequest, field: "colour"},
		{name: "field of another operation", line: `{` + pv + `,"operation_id":"op-1","operation":"stop","agent":"a","runtime_id":"r","level":"live"}`, code: CodeInvalidRequest, field: "level"},
		{name: "start without agent", line: `{` + pv + `,"operation_id":"op-1","operation":"start","config":"/a.yaml"}`, code: CodeInvalidRequest, field: "agent"},
		{name: "start without config", line: `{` + pv + `,"operation_id":"op-1","operation":"start","agent":"a"}`, code: CodeInvalidRequest, field: "config"},
		{name: "relative config", line: `{` + pv + `,"operation_id":"op-1","operation":"start","agent":"a","config":"agent.yaml"}`, code: CodeInvalidRequest, field: "config"},
		{name: "relative base dir", line: `{` + pv + `,"operation_id":"op-1","operation":"start","agent":"a","config":"/agent.yaml","base_dir":"x"}`, code: CodeInvalidRequest, field: "base_dir"},
		{name: "strict not bool", line: `{` + pv + `,"operation_id":"op-1","operation":"start","agent":"a","config":"/agent.yaml","strict":"yes"}`, code: CodeInvalidRequest, field: "strict"},
		{name: "null agent", line: `{` + pv + `,"operation_id":"op-1","operation":"stop","agent":null,"runtime_id":"r"}`, code: CodeInvalidRequest, field: "agent"},
		{name: "empty agent", line: `{` + pv + `,"operation_id":"op-1","operation":"stop","agent":"","runtime_id":"r"}`, code: CodeInvalidRequest, field: "agent"},
		{name: "agent with control char", line: `{` + pv + `,"operation_id":"op-1","operation":"stop","agent":"a\u0007","runtime_id":"r"}`, code: CodeInvalidRequest, field: "agent"},
		{name: "runtime id with slash", line: `{` + pv + `,"operation_id":"op-1","operation":"stop","agent":"a","runtime_id":"../r"}`, code: CodeInvalidRequest, field: "runtime_id"},
		{name: "stop without runtime", line: `{` + pv + `,"operation_id":"op-1","operation":"stop","agent":"a"}`, code: CodeInvalidRequest, field: "runtime_id"},
		{name: "invoke without request", line: `{` + pv + `,"operation_id":"op-1","operation":"invoke","agent":"a","runtime_id":"r"}`, code: CodeInvalidRequest, field: "request"},
		{name: "invoke without input", line: `{` + pv + `,"operation_id":"op-1","operation":"invoke","agent":"a","runtime_id":"r","request":{"request_id":"x"}}`, code: CodeInvalidRequest, field: "request.input"},
		{name: "invoke request not object", line: `{` + pv + `,"operation_id":"op-1","operation":"invoke","agent":"a","runtime_id":"r","request":"hi"}`, code: CodeInvalidRequest, field: "request"},
		{name: "invoke request unknown member", line: `{` + pv + `,"operation_id":"op-1","operation":"invoke","agent":"a","runtime_id":"r","request":{"input":"x","tools":[]}}`, code: CodeInvalidRequest, field: "request.tools"},
		{name: "invoke request duplicate member", line: `{` + pv + `,"operation_id":"op-1","operation":"invoke","agent":"a","runtime_id":"r","request":{"input":"x","input":"y"}}`, code: CodeInvalidRequest, field: "request.input"},
		{name: "invoke request id not string", line: `{` + pv + `,"operation_id":"op-1","operation":"invoke","agent":"a","runtime_id":"r","request":{"input":"x","request_id":5}}`, code: CodeInvalidRequest, field: "request.request_id"},
		{name: "invoke context not object", line: `{` + pv + `,"operation_id":"op-1","operation":"invoke","agent":"a","runtime_id":"r","request":{"input":"x","context":[1]}}`, code: CodeInvalidRequest, field: "request.context"},
		{name: "negative timeout", line: `{` + pv + `,"operation_id":"op-1","operation":"check","timeout_seconds":-1}`, code: CodeInvalidRequest, field: "timeout_seconds"},
		{name: "huge timeout", line: `{` + pv + `,"operation_id":"op-1","operation":"check","timeout_seconds":1e300}`, code: CodeInvalidRequest, field: "timeout_seconds"},
		{name: "timeout string", line: `{` + pv + `,"operation_id":"op-1","operation":"check","timeout_seconds":"3"}`, code: CodeInvalidRequest, field: "timeout_seconds"},
		{name: "check level without runtime", line: `{` + pv + `,"operation_id":"op-1","operation":"check","level":"ready"}`, code: CodeInvalidRequest, field: "level"},
		{name: "check unknown level", line: `{` + pv + `,"operation_id":"op-1","operation":"check","agent":"a","runtime_id":"r","level":"deep"}`, code: CodeInvalidRequest, field: "level"},
		{name: "deploy without action", line: `{` + pv + `,"operation_id":"op-1","operation":"deploy"}`, code: CodeInvalidRequest, field: "action"},
		{name: "deploy payload not an object", line: `{` + pv + `,"operation_id":"op-1","operation":"deploy","action":"apply","payload":[1]}`, code: CodeInvalidRequest, field: "payload"},
		{name: "deploy with agent", line: `{` + pv + `,"operation_id":"op-1","operation":"deploy","action":"apply","agent":"a"}`, code: CodeInvalidRequest, field: "agent"},
		{name: "stop agent without runtime", line: `{` + pv + `,"operation_id":"op-1","operation":"stop","agent":"a"}`, code: CodeInvalidRequest, field: "runtime_id"},
		{name: "check runtime without agent", line: `{` + pv + `,"operation_id":"op-1","operation":"check","runtime_id":"r"}`, code: CodeInvalidRequest, field: "agent"},
		{name: "too large", line: `{"x":"` + strings.Repeat("a", MaxRequestBytes) + `"}`, code: CodeRequestTooLarge, field: "$"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeRequest([]byte(tt.line))
			if got == nil {
				t.Fatal("DecodeRequest returned no request")
			}
			if tt.code != "" {
				if err == nil {
					t.Fatalf("no error, want %s at %s; got %+v", tt.code, tt.field, got)
				}
				if err.Code != tt.code || err.Field != tt.field {
					t.Fatalf("error %s at %q (%s), want %s at %q", err.Code, err.Field, err.Message, tt.code, tt.field)
				}
				if tt.field != "$" && !strings.Contains(err.Message, tt.field) {
					t.Errorf("message %q does not name the field %q", err.Message, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// An error response echoes what could be read of the envelope.
func TestDecodeRequestSalvagesEnvelope(t *testing.T) {
	req, err := DecodeRequest([]byte(`{` + pv + `,"operation_id":"op-9","operation":"stop","agent":"a"}`))
	if err == nil || req.OperationID != "op-9" || req.Operation != OpStop {
		t.Fatalf("got %+v, %v", req, err)
	}
	req, err = DecodeRequest([]byte(`{"protocol_version":"v0","operation_id":"op-8","operation":"status"}`))
	if err == nil || err.Code != CodeProtocolMismatch || req.OperationID != "op-8" || req.Operation != OpStatus {
		t.Fatalf("got %+v, %v", req, err)
	}
	resp := Failed(req, err, nil)
	if resp.OperationID != "op-8" || resp.Operation != OpStatus || resp.Status != StatusFailed {
		t.Fatalf("response %+v", resp)
	}
	// Nothing readable: "unknown".
	resp = Failed(&Request{}, &Error{Code: CodeInvalidRequest}, nil)
	if resp.OperationID != "unknown" || resp.Operation != "unknown" {
		t.Fatalf("response %+v", resp)
	}
}

func TestDecodeResponse(t *testing.T) {
	good := []string{
		`{` + pv + `,"operation_id":"op-1","operation":"check","status":"succeeded","output":{"outcome":"passed"}}`,
		`{` + pv + `,"operation_id":"op-1","operation":"invoke","status":"failed","error":{"code":"runtime_busy","message":"m","retryable":true},"new_field":1}`,
	}
	for _, g := range good {
		if _, err := DecodeResponse([]byte(g)); err != nil {
			t.Errorf("%s: %v", g, err)
		}
	}
	bad := []string{
		`nope`,
		`{` + pv + `,"status":"succeeded"}`,
		`{` + pv + `,"status":"failed"}`,
		`{` + pv + `,"status":"maybe","output":1}`,
		`{"protocol_version":"v9","status":"succeeded","output":1}`,
	}
	for _, b := range bad {
		if _, err := DecodeResponse([]byte(b)); err == nil {
			t.Errorf("%s: no error", b)
		}
	}
}

func TestExitCodes(t *testing.T) {
	for code, want := range map[string]int{
		"": ExitOK, CodeUsage: ExitUsage, CodeInvalidRequest: ExitUsage, CodeRequestTooLarge: ExitUsage,
		CodeServeUnreachable: ExitUnreachable, CodeServeTimeout: ExitUnreachable,
		CodeRuntimeBusy: ExitBusy, CodeServerStopping: ExitBusy,
		CodeRuntimeNotFound: ExitFailed, CodeStartFailed: ExitFailed, CodeStopFailed: ExitFailed, CodeProtocolMismatch: ExitFailed,
	} {
		if got := ExitCode(code); got != want {
			t.Errorf("ExitCode(%q) = %d, want %d", code, got, want)
		}
	}
}

// FuzzDecodeRequest: the decoder never panics, always returns a request,
// names a field in every error, and what it accepts survives a round trip.
func FuzzDecodeRequest(f *testing.F) {
	seeds := []string{
		`{` + pv + `,"operation_id":"op-1","operation":"start","agent":"demo","config":"/a/agent.yaml","strict":true}`,
		`{` + pv + `,"operation_id":"op-2","operation":"invoke","agent":"demo","runtime_id":"runtime-1","request":{"input":"hi","context":{"a":[1,2]}}}`,
		`{` + pv + `,"operation_id":"op-3","operation":"stop","agent":"demo","runtime_id":"runtime-1","timeout_seconds":2}`,
		`{` + pv + `,"operation_id":"op-4","operation":"check","agent":"demo","runtime_id":"runtime-1","level":"ready"}`,
		`{` + pv + `,"operation_id":"op-5","operation":"status"}`,
		`{` + pv + `,"operation_id":"op-6","operation":"decide","agent":"demo","runtime_id":"runtime-1","invocation_id":"invocation-1","request_id":"permission-1","decision":"allow"}`,
		`{` + pv + `,"operation_id":"op-7","operation":"decide","agent":"demo","runtime_id":"runtime-1","invocation_id":"invocation-1","request_id":"permission-1","decision":"maybe"}`,
		`{` + pv + `,"operation_id":"op-8","operation":"decide","agent":"demo","runtime_id":"runtime-1","request_id":"permission-1","decision":"deny","level":"live"}`,
		`{"protocol_version":1}`,
		`{"a":{"b":[{"c":null}]}}`,
		`{` + pv + `,"operation_id":"op-1","operation":"status","operation":"check"}`,
		`[]`, `null`, `"x"`, `{`, "{\"\xff\":1}",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			data = data[:1<<16] // bounded input
		}
		req, err := DecodeRequest(data)
		if req == nil {
			t.Fatal("no request")
		}
		if err != nil {
			if err.Code == "" || err.Field == "" || err.Message == "" {
				t.Fatalf("error without code, field or message: %+v", err)
			}
			if _, encErr := EncodeResponse(Failed(req, err, nil)); encErr != nil {
				t.Fatalf("error response does not encode: %v", encErr)
			}
			return
		}
		line, encErr := EncodeRequest(req)
		if encErr != nil {
			t.Fatalf("accepted request does not encode: %v", encErr)
		}
		again, err2 := DecodeRequest(line)
		if err2 != nil {
			t.Fatalf("re-encoded request refused: %v\n%s", err2, line)
		}
		a, _ := json.Marshal(req)
		b, _ := json.Marshal(again)
		if string(a) != string(b) {
			t.Fatalf("round trip changed the request:\n%s\n%s", a, b)
		}
	})
}

func TestEncodeResponseIsTheJSONOfResponse(t *testing.T) {
	req := &Request{OperationID: "op-1", Operation: OpInvoke}
	ok, err := Succeeded(req, map[string]any{"output": "a \"quoted\" <tag>\n", "n": 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Response{ok, Failed(req, &Error{Code: CodeRuntimeBusy, Message: "busy", Retryable: true}, map[string]any{"status": "failed"}), Failed(nil, &Error{Code: CodeInvalidRequest, Field: "$"}, nil)} {
		line, err := EncodeResponse(r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(line), "}\n") || strings.Count(string(line), "\n") != 1 {
			t.Fatalf("not one line: %q", line)
		}
		got, err := DecodeResponse(line)
		if err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		want, _ := json.Marshal(r)
		again, _ := json.Marshal(got)
		if string(want) != string(again) {
			t.Fatalf("\n%s\n%s", want, again)
		}
	}
}
