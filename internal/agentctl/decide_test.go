package agentctl

import (
	"reflect"
	"testing"
)

func TestDecodeDecide(t *testing.T) {
	env := `{` + pv + `,"operation_id":"op-1","operation":"decide"`
	tests := []struct {
		name, line, code, field string
		want                    *Request
	}{
		{name: "allow", line: env + `,"agent":"demo","runtime_id":"runtime-1","invocation_id":"invocation-1","request_id":"permission-1","decision":"allow","timeout_seconds":5}`,
			want: &Request{ProtocolVersion: ProtocolVersion, OperationID: "op-1", Operation: OpDecide, Agent: "demo", RuntimeID: "runtime-1",
				InvocationID: "invocation-1", RequestID: "permission-1", Decision: "allow", TimeoutSeconds: 5}},
		{name: "bad decision", line: env + `,"agent":"demo","runtime_id":"runtime-1","invocation_id":"i","request_id":"p","decision":"yes"}`, code: CodeInvalidRequest, field: "decision"},
		{name: "no decision", line: env + `,"agent":"demo","runtime_id":"runtime-1","invocation_id":"i","request_id":"p"}`, code: CodeInvalidRequest, field: "decision"},
		{name: "no request id", line: env + `,"agent":"demo","runtime_id":"runtime-1","invocation_id":"i","decision":"deny"}`, code: CodeInvalidRequest, field: "request_id"},
		{name: "no invocation id", line: env + `,"agent":"demo","runtime_id":"runtime-1","request_id":"p","decision":"deny"}`, code: CodeInvalidRequest, field: "invocation_id"},
		{name: "bad id", line: env + `,"agent":"demo","runtime_id":"runtime-1","invocation_id":"a b","request_id":"p","decision":"deny"}`, code: CodeInvalidRequest, field: "invocation_id"},
		{name: "no runtime", line: env + `,"agent":"demo","invocation_id":"i","request_id":"p","decision":"deny"}`, code: CodeInvalidRequest, field: "runtime_id"},
		{name: "field of another operation", line: env + `,"agent":"demo","runtime_id":"runtime-1","invocation_id":"i","request_id":"p","decision":"deny","level":"live"}`, code: CodeInvalidRequest, field: "level"},
		{name: "decide field on check", line: `{` + pv + `,"operation_id":"op-1","operation":"check","decision":"allow"}`, code: CodeInvalidRequest, field: "decision"},
		{name: "unknown field", line: env + `,"agent":"demo","runtime_id":"runtime-1","invocation_id":"i","request_id":"p","decision":"deny","why":1}`, code: CodeInvalidRequest, field: "why"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeRequest([]byte(tt.line))
			if tt.code != "" {
				if err == nil || err.Code != tt.code || err.Field != tt.field {
					t.Fatalf("err %+v, want %s at %s", err, tt.code, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
