package hostproto

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/wire"
)

// The invoke path's two messages, in both directions, without reflection:
// the core encodes InvokeParams and decodes the AgentRunResult, the host
// decodes the invoke payload and encodes the result. Every fast path
// declines (reports false) what it does not handle, an unknown or repeated
// key, a value of an unexpected type, an escaped key, and encoding/json
// then decides, errors included: it stays the reference, and
// invokejson_test.go checks that both agree and that the fields handled
// here are exactly the types' fields. The decoders are given JSON that the
// wire layer has already validated. See docs/design/wire.md for why these
// stay (the v2 invoke budget).

// AppendJSON encodes p as encoding/json does with HTML escaping off, the
// encoding wire.Conn uses (wire.JSONAppender).
func (p *InvokeParams) AppendJSON(dst []byte) ([]byte, error) {
	if b, ok := appendInvokeParams(dst, p, false); ok {
		return b, nil
	}
	return appendJSONNoEscape(dst, p)
}

// MarshalInvokeParams is json.Marshal(p) (v1 sends the payload so).
func MarshalInvokeParams(p *InvokeParams) ([]byte, error) {
	if b, ok := appendInvokeParams(nil, p, true); ok {
		return b, nil
	}
	return json.Marshal(p)
}

// DecodeRunResult is json.Unmarshal(raw, r) for a raw that is one valid
// JSON value.
func DecodeRunResult(raw []byte, r *contract.AgentRunResult) error {
	var fast contract.AgentRunResult
	if fastRunResult(raw, &fast) {
		*r = fast
		return nil
	}
	return json.Unmarshal(raw, r)
}

// MarshalRunResult is json.Marshal(r).
func MarshalRunResult(r *contract.AgentRunResult) ([]byte, error) {
	if b, ok := appendRunResult(nil, r); ok {
		return b, nil
	}
	return json.Marshal(r)
}

// DecodeInvokePayload decodes an invoke payload, which must be one valid
// JSON value, into its two members, leaving a member that is absent or null
// nil (the host tells a missing member from an empty one). It reports false
// for what it leaves to encoding/json.
func DecodeInvokePayload(raw []byte, rc **contract.RuntimeContext, req **contract.AgentRunRequest) bool {
	var p invokeParts
	if !fastInvokePayload(raw, &p) {
		return false
	}
	*rc, *req = p.RuntimeContext, p.Request
	return true
}

// invokeParts is an invoke payload with presence.
type invokeParts struct {
	RuntimeContext *contract.RuntimeContext  `json:"runtime_context"`
	Request        *contract.AgentRunRequest `json:"request"`
}

// appendJSONNoEscape appends v as encoding/json encodes it with HTML
// escaping off.
func appendJSONNoEscape(dst []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// seen records the keys of one object, to send repeated keys (which
// encoding/json merges) to the fallback.
type seen uint32

func (s *seen) first(bit uint) bool {
	if *s&(1<<bit) != 0 {
		return false
	}
	*s |= 1 << bit
	return true
}

// ---- the messages' fields, each type's once, for both directions ----

// The shorter names of the types the tables describe.
type (
	runResult = contract.AgentRunResult
	runError  = contract.AgentRunError
	usage     = contract.RunUsage
	artifact  = contract.AgentArtifact
	runtimeCx = contract.RuntimeContext
	envHandle = contract.EnvironmentHandle
	manifest  = contract.ArtifactManifest
	artRef    = contract.ArtifactRef
	telemetry = contract.RuntimeTelemetryContext
	runReq    = contract.AgentRunRequest
)

// The core's side decodes the result and encodes the params; the host's
// side decodes the payload (with presence, invokeParts) and encodes the
// result.
var (
	runResultObject = object[runResult]{
		{"status", func(r *runResult) any { return &r.Status }, nil, 0},
		{"output", func(r *runResult) any { return &r.Output }, nil, 0},
		{"error", func(r *runResult) any { return &r.Error }, &runErrorObject, 0},
		{"usage", func(r *runResult) any { return &r.Usage }, &usageObject, 0},
		{"artifacts", func(r *runResult) any { return &r.Artifacts }, &artifactObject, 0},
		{"extensions", func(r *runResult) any { return &r.Extensions }, nil, 0},
	}
	runErrorObject = object[runError]{
		{"code", func(e *runError) any { return &e.Code }, nil, 0},
		{"message", func(e *runError) any { return &e.Message }, nil, 0},
		{"retryable", func(e *runError) any { return &e.Retryable }, nil, 0},
		{"extensions", func(e *runError) any { return &e.Extensions }, nil, 0},
	}
	usageObject = object[usage]{
		{"input_tokens", func(u *usage) any { return &u.InputTokens }, nil, 0},
		{"output_tokens", func(u *usage) any { return &u.OutputTokens }, nil, 0},
		{"total_tokens", func(u *usage) any { return &u.TotalTokens }, nil, 0},
		{"cost_usd", func(u *usage) any { return &u.CostUSD }, nil, 0},
		{"extensions", func(u *usage) any { return &u.Extensions }, nil, 0},
	}
	artifactObject = object[artifact]{
		{"name", func(a *artifact) any { return &a.Name }, nil, 0},
		{"kind", func(a *artifact) any { return &a.Kind }, nil, 0},
		{"path", func(a *artifact) any { return &a.Path }, nil, 0},
		{"media_type", func(a *artifact) any { return &a.MediaType }, nil, 0},
		{"extensions", func(a *artifact) any { return &a.Extensions }, nil, 0},
	}

	invokePartsObject = object[invokeParts]{
		{"runtime_context", func(p *invokeParts) any { return &p.RuntimeContext }, &runtimeContextObject, 0},
		{"request", func(p *invokeParts) any { return &p.Request }, &runRequestObject, 0},
	}
	invokeParamsObject = object[InvokeParams]{
		{"runtime_context", func(p *InvokeParams) any { return &p.RuntimeContext }, &runtimeContextObject, 0},
		{"request", func(p *InvokeParams) any { return &p.Request }, &runRequestObject, 0},
	}
	runtimeContextObject = object[runtimeCx]{
		{"runtime_id", func(rc *runtimeCx) any { return &rc.RuntimeID }, nil, 0},
		{"invocation_id", func(rc *runtimeCx) any { return &rc.InvocationID }, nil, 0},
		{"request_id", func(rc *runtimeCx) any { return &rc.RequestID }, nil, 0},
		{"environment", func(rc *runtimeCx) any { return &rc.Environment }, &environmentObject, 0},
		// ArtifactManifest.MarshalJSON uses json.Marshal, which escapes
		// HTML whatever the outer encoder does.
		{"artifacts", func(rc *runtimeCx) any { return &rc.Artifacts }, &manifestObject, escapeHTML},
		{"telemetry", func(rc *runtimeCx) any { return &rc.Telemetry }, &telemetryObject, 0},
	}
	environmentObject = object[envHandle]{
		{"environment_id", func(e *envHandle) any { return &e.EnvironmentID }, nil, 0},
		{"provider", func(e *envHandle) any { return &e.Provider }, nil, 0},
		{"control_location", func(e *envHandle) any { return &e.ControlLocation }, nil, 0},
		{"ownership", func(e *envHandle) any { return &e.Ownership }, nil, 0},
		{"workspace", func(e *envHandle) any { return &e.Workspace }, nil, 0},
		{"artifacts", func(e *envHandle) any { return &e.Artifacts }, nil, 0},
		{"env", func(e *envHandle) any { return &e.Env }, nil, 0},
		{"connection", func(e *envHandle) any { return &e.Connection }, nil, 0},
		{"metadata", func(e *envHandle) any { return &e.Metadata }, nil, 0},
	}
	manifestObject = object[manifest]{
		{"root", func(m *manifest) any { return &m.Root }, nil, 0},
		// ArtifactManifest.MarshalJSON writes a nil list as [].
		{"artifacts", func(m *manifest) any { return &m.Artifacts }, &artifactRefObject, emptyList},
	}
	artifactRefObject = object[artRef]{
		{"name", func(a *artRef) any { return &a.Name }, nil, 0},
		{"kind", func(a *artRef) any { return &a.Kind }, nil, 0},
		{"path", func(a *artRef) any { return &a.Path }, nil, 0},
		{"media_type", func(a *artRef) any { return &a.MediaType }, nil, 0},
		{"metadata", func(a *artRef) any { return &a.Metadata }, nil, 0},
	}
	telemetryObject = object[telemetry]{
		{"relay_enabled", func(t *telemetry) any { return &t.RelayEnabled }, nil, 0},
		{"config_path", func(t *telemetry) any { return &t.ConfigPath }, nil, 0},
		{"env", func(t *telemetry) any { return &t.Env }, nil, 0},
		{"metadata", func(t *telemetry) any { return &t.Metadata }, nil, 0},
	}
	runRequestObject = object[runReq]{
		{"input", func(r *runReq) any { return &r.Input }, nil, 0},
		{"context", func(r *runReq) any { return &r.Context }, nil, 0},
		{"extensions", func(r *runReq) any { return &r.Extensions }, nil, 0},
		{"relay_session_root", func(r *runReq) any { return &r.RelaySessionRoot }, nil, 0},
	}
)

func fastRunResult(raw []byte, r *runResult) bool { return runResultObject.decode(raw, r) }

func fastInvokePayload(raw []byte, p *invokeParts) bool { return invokePartsObject.decode(raw, p) }

// appendInvokeParams appends p exactly as encoding/json encodes it (with or
// without HTML escaping), or reports false if p holds a value it leaves to
// encoding/json (see wire.AppendValue).
func appendInvokeParams(dst []byte, p *InvokeParams, esc bool) ([]byte, bool) {
	return invokeParamsObject.append(dst, p, esc)
}

// appendRunResult appends r exactly as json.Marshal encodes it, or reports
// false if r holds a value it leaves to encoding/json.
func appendRunResult(dst []byte, r *runResult) ([]byte, bool) {
	return runResultObject.append(dst, r, true)
}

// ---- the codec the tables drive ----

// An object is the JSON fields of a struct T in the order of T's fields,
// which is the order encoding/json writes them in.
type object[T any] []field[T]

// A field is one member: its key, the address of its value in a T (the
// value's type says how it is decoded and encoded, and whether omitempty
// leaves it out), and for a value of a struct type S (S, *S or []S) the
// object of S.
type field[T any] struct {
	key   string
	at    func(*T) any
	of    nested
	flags fieldFlags
}

type fieldFlags uint8

const (
	// escapeHTML: the value is written HTML-escaped whatever the outer
	// encoding (its type's MarshalJSON uses json.Marshal).
	escapeHTML fieldFlags = 1 << iota
	// emptyList: a list never left out, and a nil list written as [].
	emptyList
)

// nested is an object[S] seen from an object holding an S, a *S or an []S
// (p is the address of that value).
type nested interface {
	decodeAt(val []byte, p any) bool
	appendAt(dst []byte, p any, esc, keepList bool) (_ []byte, ok, omit bool)
}

// decode decodes the object raw into v, declining an unknown, repeated or
// escaped key and a value of an unexpected type.
func (o object[T]) decode(raw []byte, v *T) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		for i := range o {
			if f := &o[i]; f.key == string(key) {
				return s.first(uint(i)) && f.decode(val, f.at(v))
			}
		}
		return false
	})
}

func (f *field[T]) decode(val []byte, p any) bool {
	if f.of != nil {
		return f.of.decodeAt(val, p)
	}
	switch p := p.(type) {
	case *string:
		return wire.StringField(val, p)
	case **string:
		return wire.StringPtrField(val, p)
	case *bool:
		return wire.BoolField(val, p)
	case **uint64:
		return wire.Uint64PtrField(val, p)
	case **float64:
		return wire.Float64PtrField(val, p)
	case *map[string]string:
		return wire.StringMapField(val, p)
	case *map[string]any:
		return wire.ObjectField(val, p)
	case *any:
		return wire.ValueField(val, p)
	}
	return false
}

func (o *object[T]) decodeAt(val []byte, p any) bool {
	switch p := p.(type) {
	case *T: // a struct: null leaves it as it is
		return wire.IsNull(val) || o.decode(val, p)
	case **T:
		if wire.IsNull(val) {
			*p = nil
			return true
		}
		*p = new(T)
		return o.decode(val, *p)
	case *[]T:
		if wire.IsNull(val) {
			*p = nil
			return true
		}
		*p = []T{}
		return wire.ArrayElements(val, func(elem []byte) bool {
			var zero T // null decodes as the zero value
			*p = append(*p, zero)
			return wire.IsNull(elem) || o.decode(elem, &(*p)[len(*p)-1])
		})
	}
	return false
}

// append appends v as encoding/json encodes it (HTML-escaped if esc), or
// reports false for a value it leaves to encoding/json.
func (o object[T]) append(dst []byte, v *T, esc bool) ([]byte, bool) {
	sep := byte('{')
	for i := range o {
		f := &o[i]
		n := len(dst)
		dst = append(dst, sep, '"')
		dst = append(dst, f.key...)
		dst = append(dst, '"', ':')
		var ok, omit bool
		if f.of != nil {
			dst, ok, omit = f.of.appendAt(dst, f.at(v), esc || f.flags&escapeHTML != 0, f.flags&emptyList != 0)
		} else {
			dst, ok, omit = appendScalar(dst, f.at(v), esc)
		}
		switch {
		case !ok:
			return dst, false
		case omit:
			dst = dst[:n]
		default:
			sep = ','
		}
	}
	if sep == '{' {
		dst = append(dst, '{')
	}
	return append(dst, '}'), true
}

// appendScalar appends the value at p, or reports omit if omitempty
// leaves it out: the fields these types tag omitempty are exactly their
// pointers, maps and lists.
func appendScalar(dst []byte, p any, esc bool) (_ []byte, ok, omit bool) {
	switch p := p.(type) {
	case *string:
		return wire.AppendString(dst, *p, esc), true, false
	case **string:
		if *p == nil {
			return dst, true, true
		}
		return wire.AppendString(dst, **p, esc), true, false
	case *bool:
		return strconv.AppendBool(dst, *p), true, false
	case **uint64:
		if *p == nil {
			return dst, true, true
		}
		return strconv.AppendUint(dst, **p, 10), true, false
	case **float64:
		if *p == nil {
			return dst, true, true
		}
		dst, ok = wire.AppendFloat(dst, **p)
		return dst, ok, false
	case *map[string]string:
		if len(*p) == 0 {
			return dst, true, true
		}
		return wire.AppendStringMap(dst, *p, esc), true, false
	case *map[string]any:
		if len(*p) == 0 {
			return dst, true, true
		}
		dst, ok = wire.AppendObject(dst, *p, esc)
		return dst, ok, false
	case *any:
		dst, ok = wire.AppendValue(dst, *p, esc)
		return dst, ok, false
	}
	return dst, false, false
}

// appendAt appends the S, *S or []S at p, or reports omit for a nil
// pointer and an empty list unless keepList (which writes a nil list as []).
func (o *object[T]) appendAt(dst []byte, p any, esc, keepList bool) (_ []byte, ok, omit bool) {
	switch p := p.(type) {
	case *T:
		dst, ok = o.append(dst, p, esc)
		return dst, ok, false
	case **T:
		if *p == nil {
			return dst, true, true
		}
		dst, ok = o.append(dst, *p, esc)
		return dst, ok, false
	case *[]T:
		if len(*p) == 0 && !keepList {
			return dst, true, true
		}
		dst = append(dst, '[')
		for i := range *p {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, ok = o.append(dst, &(*p)[i], esc); !ok {
				return dst, false, false
			}
		}
		return append(dst, ']'), true, false
	}
	return dst, false, false
}
