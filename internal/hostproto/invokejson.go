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
	runResultObject = object{fields: []field{
		{"status", func(v any) any { return &v.(*runResult).Status }, nil, 0},
		{"output", func(v any) any { return &v.(*runResult).Output }, nil, 0},
		{"error", func(v any) any { return &v.(*runResult).Error }, ptr[runError]{&runErrorObject}, 0},
		{"usage", func(v any) any { return &v.(*runResult).Usage }, ptr[usage]{&usageObject}, 0},
		{"artifacts", func(v any) any { return &v.(*runResult).Artifacts }, list[artifact]{&artifactObject}, 0},
		{"extensions", func(v any) any { return &v.(*runResult).Extensions }, nil, 0},
	}}
	runErrorObject = object{fields: []field{
		{"code", func(v any) any { return &v.(*runError).Code }, nil, 0},
		{"message", func(v any) any { return &v.(*runError).Message }, nil, 0},
		{"retryable", func(v any) any { return &v.(*runError).Retryable }, nil, 0},
		{"extensions", func(v any) any { return &v.(*runError).Extensions }, nil, 0},
	}}
	usageObject = object{fields: []field{
		{"input_tokens", func(v any) any { return &v.(*usage).InputTokens }, nil, 0},
		{"output_tokens", func(v any) any { return &v.(*usage).OutputTokens }, nil, 0},
		{"total_tokens", func(v any) any { return &v.(*usage).TotalTokens }, nil, 0},
		{"cost_usd", func(v any) any { return &v.(*usage).CostUSD }, nil, 0},
		{"extensions", func(v any) any { return &v.(*usage).Extensions }, nil, 0},
	}}
	artifactObject = object{fields: []field{
		{"name", func(v any) any { return &v.(*artifact).Name }, nil, 0},
		{"kind", func(v any) any { return &v.(*artifact).Kind }, nil, 0},
		{"path", func(v any) any { return &v.(*artifact).Path }, nil, 0},
		{"media_type", func(v any) any { return &v.(*artifact).MediaType }, nil, 0},
		{"extensions", func(v any) any { return &v.(*artifact).Extensions }, nil, 0},
	}}

	invokePartsObject = object{fields: []field{
		{"runtime_context", func(v any) any { return &v.(*invokeParts).RuntimeContext }, ptr[runtimeCx]{&runtimeContextObject}, 0},
		{"request", func(v any) any { return &v.(*invokeParts).Request }, ptr[runReq]{&runRequestObject}, 0},
	}}
	invokeParamsObject = object{fields: []field{
		{"runtime_context", func(v any) any { return &v.(*InvokeParams).RuntimeContext }, &runtimeContextObject, 0},
		{"request", func(v any) any { return &v.(*InvokeParams).Request }, &runRequestObject, 0},
	}}
	runtimeContextObject = object{fields: []field{
		{"runtime_id", func(v any) any { return &v.(*runtimeCx).RuntimeID }, nil, 0},
		{"invocation_id", func(v any) any { return &v.(*runtimeCx).InvocationID }, nil, 0},
		{"request_id", func(v any) any { return &v.(*runtimeCx).RequestID }, nil, 0},
		{"environment", func(v any) any { return &v.(*runtimeCx).Environment }, &environmentObject, 0},
		// ArtifactManifest.MarshalJSON uses json.Marshal, which escapes
		// HTML whatever the outer encoder does.
		{"artifacts", func(v any) any { return &v.(*runtimeCx).Artifacts }, &manifestObject, escapeHTML},
		{"telemetry", func(v any) any { return &v.(*runtimeCx).Telemetry }, ptr[telemetry]{&telemetryObject}, 0},
	}}
	environmentObject = object{fields: []field{
		{"environment_id", func(v any) any { return &v.(*envHandle).EnvironmentID }, nil, 0},
		{"provider", func(v any) any { return &v.(*envHandle).Provider }, nil, 0},
		{"control_location", func(v any) any { return &v.(*envHandle).ControlLocation }, nil, 0},
		{"ownership", func(v any) any { return &v.(*envHandle).Ownership }, nil, 0},
		{"workspace", func(v any) any { return &v.(*envHandle).Workspace }, nil, 0},
		{"artifacts", func(v any) any { return &v.(*envHandle).Artifacts }, nil, 0},
		{"env", func(v any) any { return &v.(*envHandle).Env }, nil, 0},
		{"connection", func(v any) any { return &v.(*envHandle).Connection }, nil, 0},
		{"metadata", func(v any) any { return &v.(*envHandle).Metadata }, nil, 0},
	}}
	manifestObject = object{fields: []field{
		{"root", func(v any) any { return &v.(*manifest).Root }, nil, 0},
		// ArtifactManifest.MarshalJSON writes a nil list as [].
		{"artifacts", func(v any) any { return &v.(*manifest).Artifacts }, list[artRef]{&artifactRefObject}, emptyList},
	}}
	artifactRefObject = object{fields: []field{
		{"name", func(v any) any { return &v.(*artRef).Name }, nil, 0},
		{"kind", func(v any) any { return &v.(*artRef).Kind }, nil, 0},
		{"path", func(v any) any { return &v.(*artRef).Path }, nil, 0},
		{"media_type", func(v any) any { return &v.(*artRef).MediaType }, nil, 0},
		{"metadata", func(v any) any { return &v.(*artRef).Metadata }, nil, 0},
	}}
	telemetryObject = object{fields: []field{
		{"relay_enabled", func(v any) any { return &v.(*telemetry).RelayEnabled }, nil, 0},
		{"config_path", func(v any) any { return &v.(*telemetry).ConfigPath }, nil, 0},
		{"env", func(v any) any { return &v.(*telemetry).Env }, nil, 0},
		{"metadata", func(v any) any { return &v.(*telemetry).Metadata }, nil, 0},
	}}
	runRequestObject = object{fields: []field{
		{"input", func(v any) any { return &v.(*runReq).Input }, nil, 0},
		{"context", func(v any) any { return &v.(*runReq).Context }, nil, 0},
		{"extensions", func(v any) any { return &v.(*runReq).Extensions }, nil, 0},
		{"relay_session_root", func(v any) any { return &v.(*runReq).RelaySessionRoot }, nil, 0},
	}}
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

// An object is the JSON members of one struct type S in the order of S's
// fields, which is the order encoding/json writes them in. It is given
// its values as an any holding a *S; a field of type S is handled by its
// object, one of type *S by a ptr and one of type []S by a list.
type object struct{ fields []field }

// A field is one member: its key, the address of its value in an S
// (the value's type says how it is decoded and encoded, and whether
// omitempty leaves it out), and for a value of struct type the object,
// ptr or list that handles it.
type field struct {
	key   string
	at    func(v any) any
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

// nested handles a value of struct type, given its address p.
type nested interface {
	decodeAt(val []byte, p any) bool
	appendAt(dst []byte, p any, esc, keepList bool) (_ []byte, ok, omit bool)
}

// decode decodes the object raw into v, declining an unknown, repeated or
// escaped key and a value of an unexpected type.
func (o *object) decode(raw []byte, v any) bool {
	var s seen
	return wire.ObjectMembers(raw, func(key, val []byte) bool {
		for i := range o.fields {
			if f := &o.fields[i]; f.key == string(key) {
				if !s.first(uint(i)) {
					return false
				}
				if f.of != nil {
					return f.of.decodeAt(val, f.at(v))
				}
				return decodeScalar(val, f.at(v))
			}
		}
		return false
	})
}

func decodeScalar(val []byte, p any) bool {
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
	case *[]string:
		return stringList(val, p)
	case **uint32:
		return uint32Ptr(val, p)
	}
	return false
}

// decodeAt decodes a struct field: null leaves it as it is.
func (o *object) decodeAt(val []byte, p any) bool {
	return wire.IsNull(val) || o.decode(val, p)
}

// append appends v as encoding/json encodes it (HTML-escaped if esc), or
// reports false for a value it leaves to encoding/json.
func (o *object) append(dst []byte, v any, esc bool) ([]byte, bool) {
	sep := byte('{')
	for i := range o.fields {
		f := &o.fields[i]
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

func (o *object) appendAt(dst []byte, p any, esc, _ bool) (_ []byte, ok, omit bool) {
	dst, ok = o.append(dst, p, esc)
	return dst, ok, false
}

// A ptr handles a field of type *S, S being its object's type.
type ptr[S any] struct{ of *object }

func (q ptr[S]) decodeAt(val []byte, p any) bool {
	pp, ok := p.(**S)
	switch {
	case !ok:
		return false
	case wire.IsNull(val):
		*pp = nil
		return true
	}
	*pp = new(S)
	return q.of.decode(val, *pp)
}

// appendAt appends the *S at p, or reports omit for nil.
func (q ptr[S]) appendAt(dst []byte, p any, esc, _ bool) (_ []byte, ok, omit bool) {
	pp, ok := p.(**S)
	switch {
	case !ok:
		return dst, false, false
	case *pp == nil:
		return dst, true, true
	}
	dst, ok = q.of.append(dst, *pp, esc)
	return dst, ok, false
}

// A list handles a field of type []S, S being its object's type.
type list[S any] struct{ of *object }

func (l list[S]) decodeAt(val []byte, p any) bool {
	s, ok := p.(*[]S)
	switch {
	case !ok:
		return false
	case wire.IsNull(val):
		*s = nil
		return true
	}
	*s = []S{}
	return wire.ArrayElements(val, func(elem []byte) bool {
		var zero S // null decodes as the zero value
		*s = append(*s, zero)
		return wire.IsNull(elem) || l.of.decode(elem, &(*s)[len(*s)-1])
	})
}

// appendAt appends the []S at p, or reports omit for an empty one unless
// keepList (which writes a nil list as []).
func (l list[S]) appendAt(dst []byte, p any, esc, keepList bool) (_ []byte, ok, omit bool) {
	s, ok := p.(*[]S)
	switch {
	case !ok:
		return dst, false, false
	case len(*s) == 0 && !keepList:
		return dst, true, true
	}
	dst = append(dst, '[')
	for i := range *s {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, ok = l.of.append(dst, &(*s)[i], esc); !ok {
			return dst, false, false
		}
	}
	return append(dst, ']'), true, false
}
