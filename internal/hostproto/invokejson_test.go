package hostproto

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/contract"
)

// The invoke path's fast codecs against encoding/json, in both directions.

var runResultCorpus = []string{
	`{"status":"succeeded","output":"ok","usage":{"input_tokens":2,"output_tokens":1,"total_tokens":3}}`,
	`{"status":"failed","output":"","error":{"code":"boom","message":"it broke","retryable":true,"extensions":{"a":[1,"2",null]}}}`,
	`{"status":"succeeded","output":{"text":"4","parts":[1,2.5,-1e-7,true,false,null]},"usage":{"input_tokens":12,"output_tokens":1,"total_tokens":13,"cost_usd":0.0125,"extensions":{}},"artifacts":[{"name":"transcript","kind":"log","path":"transcript.jsonl","media_type":"application/x-ndjson","extensions":{"k":"v"}},null],"extensions":{}}`,
	`{"status":"cancelled","output":null,"error":null,"usage":null,"artifacts":null,"extensions":null}`,
	`{"status":"succeeded","artifacts":[]}`,
	`{}`,
	` { "status" : "succeeded" , "output" : [ ] } `,
	`{"status":"succeeded","output":"\u00e9\ud83d\ude00 \ud800 \"quoted\" \\ \/ <tag>"}`,
	"{\"status\":\"succeeded\",\"output\":\"bad \xff utf8\"}",
	`{"status":"succeeded","usage":{"input_tokens":null,"cost_usd":null}}`,
	// Shapes left to encoding/json.
	`{"status":"succeeded","usage":{"input_tokens":-1}}`,
	`{"status":"succeeded","usage":{"input_tokens":1.5}}`,
	`{"status":"succeeded","usage":{"input_tokens":18446744073709551616}}`,
	`{"status":"succeeded","usage":{"cost_usd":1e400}}`,
	`{"status":"succeeded","status":"failed"}`,
	`{"Status":"succeeded"}`,
	`{"st\u0061tus":"succeeded"}`,
	`{"status":1}`,
	`{"status":"succeeded","error":{"retryable":"yes"}}`,
	`{"status":"succeeded","artifacts":{}}`,
	`{"status":"succeeded","extensions":[]}`,
	`{"status":"succeeded","unknown":1}`,
	`[]`,
	`null`,
}

func TestFastRunResultMatchesJSON(t *testing.T) {
	for _, doc := range runResultCorpus {
		checkFastRunResult(t, []byte(doc))
	}
	for _, doc := range runResultCorpus[:10] {
		var r contract.AgentRunResult
		if !fastRunResult([]byte(doc), &r) {
			t.Errorf("fast path declined %s", doc)
		}
	}
}

func FuzzFastRunResult(f *testing.F) { fuzzValidJSON(f, runResultCorpus, checkFastRunResult) }

// fuzzValidJSON seeds f with corpus and checks each valid JSON input: the
// fast decoders are only given JSON that the wire layer has validated.
func fuzzValidJSON(f *testing.F, corpus []string, check func(*testing.T, []byte)) {
	for _, doc := range corpus {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if json.Valid(doc) {
			check(t, doc)
		}
	})
}

func checkFastRunResult(t *testing.T, doc []byte) {
	t.Helper()
	var ref contract.AgentRunResult
	refErr := json.Unmarshal(doc, &ref)
	var got contract.AgentRunResult
	err := DecodeRunResult(doc, &got)
	if (err == nil) != (refErr == nil) {
		t.Fatalf("%s: DecodeRunResult err %v, encoding/json err %v", doc, err, refErr)
	}
	if err != nil {
		return
	}
	if diff := cmp.Diff(ref, got); diff != "" {
		t.Fatalf("%s: DecodeRunResult differs from encoding/json (-json +fast):\n%s", doc, diff)
	}
	if !reflect.DeepEqual(ref, got) {
		t.Fatalf("%s: DecodeRunResult differs from encoding/json in nil-ness:\n%#v\n%#v", doc, ref, got)
	}
}

var invokeParamsDocs = []string{
	`{"runtime_context":{"runtime_id":"runtime-1","invocation_id":"invocation-1","request_id":"request-1","environment":{"environment_id":"environment-1","provider":"local","control_location":"in_env_control","ownership":"caller_owned"},"artifacts":{"artifacts":[]},"telemetry":{"relay_enabled":false}},"request":{"input":"benchmark input"}}`,
	`{"runtime_context":{"runtime_id":"r<&>","environment":{"workspace":"/w","artifacts":"/a","env":{"B":"2","A":"<1>"},"connection":{"x":[1,2.5,-3e-7,true,null,{"y":"z"}]},"metadata":{"m":{}}},"artifacts":{"root":"/tmp/<art>","artifacts":[{"name":"n&","kind":"k","path":"p","media_type":"text/plain","metadata":{"a":1}},{"name":"","kind":"","path":""}]},"telemetry":{"relay_enabled":true,"config_path":"/c","env":{"K":"V"},"metadata":{"m":"v"}}},"request":{"input":{"messages":[{"role":"user","content":"hi \u2028 <b>"}]},"context":{"turn":1},"extensions":{"e":null},"relay_session_root":"/r"}}`,
	`{"runtime_context":{},"request":{"input":null}}`,
	"{\"runtime_context\":{\"runtime_id\":\"bad \xff\"},\"request\":{\"input\":[\"\\u0000\\t\\\"\"]}}",
}

// TestFastInvokeParamsEncoding: the fast encoder writes what encoding/json
// writes, with HTML escaping (json.Marshal, v1) and without (wire.Conn).
func TestFastInvokeParamsEncoding(t *testing.T) {
	for _, doc := range invokeParamsDocs {
		var p InvokeParams
		if err := json.Unmarshal([]byte(doc), &p); err != nil {
			t.Fatal(err)
		}
		if _, ok := appendInvokeParams(nil, &p, false); !ok {
			t.Errorf("fast path declined %s", doc)
		}
		checkInvokeParamsEncoding(t, p)
	}
	checkInvokeParamsEncoding(t, InvokeParams{Request: contract.AgentRunRequest{Input: struct{ X string }{"<x>"}}})
	checkInvokeParamsEncoding(t, InvokeParams{Request: contract.AgentRunRequest{Input: map[string]any{"i": 3, "f": 1e21}}})
}

func FuzzFastInvokeParamsEncoding(f *testing.F) {
	for _, doc := range invokeParamsDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var p InvokeParams
		if json.Unmarshal(doc, &p) != nil {
			return
		}
		checkInvokeParamsEncoding(t, p)
	})
}

func checkInvokeParamsEncoding(t *testing.T, p InvokeParams) {
	t.Helper()
	want, werr := json.Marshal(p)
	got, err := MarshalInvokeParams(&p)
	if (err == nil) != (werr == nil) || string(got) != string(want) {
		t.Fatalf("html-escaped:\nfast %s (%v)\njson %s (%v)", got, err, want, werr)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	werr = enc.Encode(p)
	got, err = p.AppendJSON(nil)
	if (err == nil) != (werr == nil) || (err == nil && string(got)+"\n" != buf.String()) {
		t.Fatalf("not html-escaped:\nfast %s (%v)\njson %s (%v)", got, err, buf.String(), werr)
	}
}

var invokePartsCorpus = []string{
	`{"runtime_context":{"runtime_id":"runtime-1","invocation_id":"invocation-1","request_id":"request-1","environment":{"environment_id":"environment-1","provider":"local","control_location":"in_env_control","ownership":"caller_owned"},"artifacts":{"artifacts":[]},"telemetry":{"relay_enabled":false}},"request":{"input":"benchmark input"}}`,
	`{"runtime_context":{"runtime_id":"r","invocation_id":"i","request_id":"q","environment":{"environment_id":"e","provider":"local","control_location":"c","ownership":"o","workspace":"/w","artifacts":"/a","env":{"A":"1","B":""},"connection":{"x":[1,2.5,-3e2,true,null,{"y":"z"}]},"metadata":{}},"artifacts":{"root":"/tmp/art","artifacts":[{"name":"n","kind":"k","path":"p","media_type":"text/plain","metadata":{"a":1}},null]},"telemetry":{"relay_enabled":true,"config_path":"/c","env":{"K":"V"},"metadata":{"m":"v"}}},"request":{"input":{"messages":[{"role":"user","content":"hi"}]},"context":{"turn":1},"extensions":{},"relay_session_root":"/r"}}`,
	`{"runtime_context":null,"request":null}`,
	`{"runtime_context":{},"request":{}}`,
	`{}`,
	`{"request":{"input":null,"context":null,"extensions":null,"relay_session_root":null},"runtime_context":{"runtime_id":null,"environment":null,"artifacts":null,"telemetry":null}}`,
	`{"runtime_context":{"artifacts":{"root":null,"artifacts":null}}}`,
	` { "request" : { "input" : [ ] , "context" : { } } , "runtime_context" : { "runtime_id" : "a b" } } `,
	// Escapes, non-ASCII, invalid UTF-8 and lone surrogates.
	`{"request":{"input":"tab\there \"q\" \u00e9 \ud83d\ude00 \ud800 é"},"runtime_context":{"runtime_id":"\u0072"}}`,
	"{\"request\":{\"input\":\"bad \xff utf8\",\"context\":{\"k\xfe\":\"v\"}}}",
	// Shapes the fast path leaves to encoding/json.
	`{"runtime_context":{"runtime_id":1}}`,
	`{"runtime_context":{"runtime_id":"a","runtime_id":"b"}}`,
	`{"request":{"input":"a"},"request":{"context":{"x":1}}}`,
	`{"Request":{"input":"case"}}`,
	`{"r\u0065quest":{"input":"escaped key"}}`,
	`{"request":{"input":1e400}}`,
	`{"runtime_context":{"environment":{"env":{"A":1}}}}`,
	`{"runtime_context":{"environment":{"env":{"A":null}}}}`,
	`{"runtime_context":{"telemetry":{"relay_enabled":"yes"}}}`,
	`{"runtime_context":{"artifacts":{"artifacts":{}}}}`,
	`{"runtime_context":{"environment":{"metadata":[]}}}`,
	`{"request":{"context":"x"}}`,
	`{"extra":true,"request":{"input":"x"}}`,
	`[]`,
	`"x"`,
	`null`,
}

// TestFastInvokePayloadMatchesJSON: where the fast path decodes, it agrees
// with encoding/json; where it declines, encoding/json decides.
func TestFastInvokePayloadMatchesJSON(t *testing.T) {
	for _, doc := range invokePartsCorpus {
		checkFastInvokePayload(t, []byte(doc))
	}
	for _, doc := range invokePartsCorpus[:10] {
		var p invokeParts
		if !fastInvokePayload([]byte(doc), &p) {
			t.Errorf("fast path declined %s", doc)
		}
	}
}

func FuzzFastInvokePayload(f *testing.F) {
	fuzzValidJSON(f, invokePartsCorpus, checkFastInvokePayload)
}

func checkFastInvokePayload(t *testing.T, doc []byte) {
	t.Helper()
	var fast invokeParts
	if !fastInvokePayload(doc, &fast) {
		return
	}
	var ref invokeParts
	if err := json.Unmarshal(doc, &ref); err != nil {
		t.Fatalf("%s: fast path decoded what encoding/json rejects: %v", doc, err)
	}
	if diff := cmp.Diff(ref, fast); diff != "" {
		t.Fatalf("%s: fast path differs from encoding/json (-json +fast):\n%s", doc, diff)
	}
	// Nil and empty must match too.
	if !reflect.DeepEqual(ref, fast) {
		t.Fatalf("%s: fast path differs from encoding/json in nil-ness:\n%#v\n%#v", doc, ref, fast)
	}
}

var runResultDocs = []string{
	`{"status":"succeeded","output":"ok","usage":{"input_tokens":2,"output_tokens":1,"total_tokens":3}}`,
	`{"status":"failed","output":"","error":{"code":"boom","message":"it <broke> & \u2028","retryable":true,"extensions":{"b":[1,"2",null,{"z":1,"a":2}],"a":-0.0000001}}}`,
	`{"status":"succeeded","output":{"text":"4","parts":[1,2.5,-1e-7,1e21,123456789,true,false,null]},"usage":{"cost_usd":0.0125,"extensions":{}},"artifacts":[{"name":"t","kind":"log","path":"t.jsonl","media_type":"application/x-ndjson","extensions":{"k":"v"}},{"name":"","kind":"","path":""}],"extensions":{"x":{}}}`,
	`{"status":"cancelled","output":null}`,
	`{"status":"succeeded","output":[],"usage":{},"artifacts":[]}`,
	"{\"status\":\"succeeded\",\"output\":\"bad \xff utf8 \\u0000 \\t\"}",
}

// TestFastRunResultEncoding: appendRunResult writes what json.Marshal
// writes.
func TestFastRunResultEncoding(t *testing.T) {
	for _, doc := range runResultDocs {
		var r contract.AgentRunResult
		if err := json.Unmarshal([]byte(doc), &r); err != nil {
			t.Fatal(err)
		}
		if _, ok := appendRunResult(nil, &r); !ok {
			t.Errorf("fast path declined %s", doc)
		}
		checkRunResultEncoding(t, &r)
	}
	n := uint64(7)
	for _, r := range []contract.AgentRunResult{
		{Status: "succeeded", Output: map[string]any{"n": 3, "i": int64(-4), "u": uint64(5)}},
		{Status: "succeeded", Output: struct{ A int }{1}},              // left to encoding/json
		{Status: "succeeded", Output: map[string]int{"a": 1}},          // idem
		{Status: "succeeded", Output: json.RawMessage(`{"raw":true}`)}, // idem
		{Status: "succeeded", Usage: &contract.RunUsage{TotalTokens: &n}},
		{Status: "succeeded", Output: []any(nil), Extensions: map[string]any{"m": map[string]any(nil)}},
	} {
		checkRunResultEncoding(t, &r)
	}
}

func FuzzFastRunResultEncoding(f *testing.F) {
	for _, doc := range runResultDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var r contract.AgentRunResult
		if json.Unmarshal(doc, &r) != nil {
			return
		}
		checkRunResultEncoding(t, &r)
	})
}

func checkRunResultEncoding(t *testing.T, r *contract.AgentRunResult) {
	t.Helper()
	want, werr := json.Marshal(r)
	got, err := MarshalRunResult(r)
	if (err == nil) != (werr == nil) || string(got) != string(want) {
		t.Fatalf("%#v:\nfast %s (%v)\njson %s (%v)", r, got, err, want, werr)
	}
}

// TestFastJSONFields: the fast decoder and encoder know exactly the JSON
// fields of the types they handle. A field added to or renamed in these
// types must be taught to them (until then a payload carrying a new key is
// sent to the fallback, but a renamed field would be handled under its old
// name, and a new field would not be encoded).
func TestFastJSONFields(t *testing.T) {
	want := map[reflect.Type][]string{
		reflect.TypeFor[invokeParts]():                      {"runtime_context", "request"},
		reflect.TypeFor[InvokeParams]():                     {"runtime_context", "request"},
		reflect.TypeFor[contract.RuntimeContext]():          {"runtime_id", "invocation_id", "request_id", "environment", "artifacts", "telemetry"},
		reflect.TypeFor[contract.EnvironmentHandle]():       {"environment_id", "provider", "control_location", "ownership", "workspace", "artifacts", "env", "connection", "metadata"},
		reflect.TypeFor[contract.ArtifactManifest]():        {"root", "artifacts"},
		reflect.TypeFor[contract.ArtifactRef]():             {"name", "kind", "path", "media_type", "metadata"},
		reflect.TypeFor[contract.RuntimeTelemetryContext](): {"relay_enabled", "config_path", "env", "metadata"},
		reflect.TypeFor[contract.AgentRunRequest]():         {"input", "context", "extensions", "relay_session_root"},
		reflect.TypeFor[contract.AgentRunResult]():          {"status", "output", "error", "usage", "artifacts", "extensions"},
		reflect.TypeFor[contract.AgentRunError]():           {"code", "message", "retryable", "extensions"},
		reflect.TypeFor[contract.RunUsage]():                {"input_tokens", "output_tokens", "total_tokens", "cost_usd", "extensions"},
		reflect.TypeFor[contract.AgentArtifact]():           {"name", "kind", "path", "media_type", "extensions"},
	}
	for typ, names := range want {
		var got []string
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			got = append(got, name)
		}
		if !slices.Equal(got, names) {
			t.Errorf("%v has JSON fields %v; the fast paths know %v", typ, got, names)
		}
	}
}

func TestStartResultEncoding(t *testing.T) {
	for _, r := range []StartResult{
		{},
		{Metadata: map[string]any{}, Interfaces: []contract.InterfaceInfo{}, HealthControl: json.RawMessage{}},
		{Metadata: map[string]any{"a": "<b>"}},
		{HealthControl: json.RawMessage(`{"mode":"poll"}`)},
		{Interfaces: []contract.InterfaceInfo{{}}},
	} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&r); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n")
		got, err := r.AppendJSON([]byte("x"))
		if err != nil || string(got) != "x"+want {
			t.Errorf("%#v: AppendJSON %s (%v), encoding/json %s", r, got, err, want)
		}
	}
}
