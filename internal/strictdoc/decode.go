package strictdoc

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v4"
)

// Kind is the JSON type of a node, as messages name it.
type Kind string

// The kinds.
const (
	KindNull   Kind = "null"
	KindBool   Kind = "a boolean"
	KindNumber Kind = "a number"
	KindString Kind = "a string"
	KindArray  Kind = "a list"
	KindObject Kind = "an object"
)

// KindOf is the JSON type of n.
func KindOf(n *yaml.Node) Kind {
	switch n.Kind {
	case yaml.SequenceNode:
		return KindArray
	case yaml.MappingNode:
		return KindObject
	}
	switch ScalarValue(n).(type) {
	case nil:
		return KindNull
	case bool:
		return KindBool
	case string:
		return KindString
	}
	return KindNumber
}

// AppendJSON appends n encoded as JSON, keys in document order.
func AppendJSON(b []byte, n *yaml.Node) []byte {
	switch n.Kind {
	case yaml.MappingNode, yaml.SequenceNode:
		open, sep := byte('['), byte(',')
		if n.Kind == yaml.MappingNode {
			open = '{'
		}
		b = append(b, open)
		for i, c := range n.Content {
			if i > 0 {
				if n.Kind == yaml.MappingNode && i%2 == 1 {
					b = append(b, ':')
				} else {
					b = append(b, sep)
				}
			}
			b = AppendJSON(b, c)
		}
		return append(b, open+2) // ']' or '}'
	}
	enc, err := json.Marshal(ScalarValue(n))
	if err != nil { // a non-finite number, reported by the node checker
		return append(b, "null"...)
	}
	return append(b, enc...)
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// Decoder fills Go values from nodes by their json tags, strictly: a field
// without omitempty is required, a key without a field is unknown, null is
// never a value, types must match exactly, and a json.RawMessage holds an
// object.
type Decoder struct {
	Rep   *Report
	Lines map[string]int // the line of every decoded path
	// Custom decodes the values of the types it knows and reports whether
	// it did; nil decodes every type the standard way.
	Custom func(d *Decoder, v *yaml.Node, path string, line int, dst reflect.Value) bool
	// Rules give types of their own an error code and a message for a
	// value of the wrong type (the kind found replaces %s).
	Rules map[reflect.Type]TypeRule
}

// TypeRule is the error code of a type, used for a mismatch and for an
// unknown field of its struct, and the message for a mismatch.
type TypeRule struct {
	Code     string
	Mismatch string
}

// NewDecoder returns a Decoder recording errors in rep.
func NewDecoder(rep *Report) *Decoder { return &Decoder{Rep: rep, Lines: map[string]int{}} }

// Decode fills dst (settable) from v, found at path on line.
func (d *Decoder) Decode(v *yaml.Node, path string, line int, dst reflect.Value) {
	d.Lines[path] = line
	t := dst.Type()
	code := CodeInvalidType
	if r, ok := d.Rules[t]; ok {
		code = r.Code
	}
	if KindOf(v) == KindNull {
		if d.Rep.At(path) { // an alias, already reported
			return
		}
		d.Rep.Add(code, path, line, "null is not a value here; omit the field instead")
		return
	}
	if d.Custom != nil && d.Custom(d, v, path, line, dst) {
		return
	}
	switch {
	case t == rawMessageType:
		if d.Expect(v, KindObject, code, path, line) {
			dst.SetBytes(AppendJSON(nil, v))
		}
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		d.Decode(v, path, line, p.Elem())
		dst.Set(p)
	case t.Kind() == reflect.Struct:
		if d.Expect(v, KindObject, code, path, line) {
			d.Object(v, path, line, dst, code, nil)
		}
	case t.Kind() == reflect.Slice:
		if !d.Expect(v, KindArray, code, path, line) {
			return
		}
		s := reflect.MakeSlice(t, len(v.Content), len(v.Content))
		for i, it := range v.Content {
			d.Decode(it, IndexPath(path, i), it.Line, s.Index(i))
		}
		dst.Set(s)
	case t.Kind() == reflect.Map:
		if !d.Expect(v, KindObject, code, path, line) {
			return
		}
		m := reflect.MakeMapWithSize(t, len(v.Content)/2)
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, e := v.Content[i], reflect.New(t.Elem()).Elem()
			d.Decode(v.Content[i+1], ChildPath(path, k.Value), k.Line, e)
			m.SetMapIndex(reflect.ValueOf(k.Value), e)
		}
		dst.Set(m)
	case t.Kind() == reflect.String:
		if d.Expect(v, KindString, code, path, line) {
			dst.SetString(v.Value)
		}
	case t.Kind() == reflect.Bool:
		if d.Expect(v, KindBool, code, path, line) {
			dst.SetBool(ScalarValue(v).(bool))
		}
	case t.Kind() == reflect.Int:
		if !d.Expect(v, KindNumber, code, path, line) {
			return
		}
		switch n := ScalarValue(v).(type) {
		case int64:
			dst.SetInt(n)
		case uint64:
			d.Rep.Add(CodeInvalidValue, path, line, "the integer is out of range")
		default:
			d.Rep.Add(CodeInvalidType, path, line, "expected an integer, found a fraction")
		}
	case t.Kind() == reflect.Float64:
		if d.Expect(v, KindNumber, code, path, line) {
			switch n := ScalarValue(v).(type) {
			case int64:
				dst.SetFloat(float64(n))
			case uint64:
				dst.SetFloat(float64(n))
			case float64:
				dst.SetFloat(n)
			}
		}
	default:
		panic("strictdoc: no decoding for " + t.String())
	}
}

// Expect reports whether v has kind k, recording an error when not. The
// message names types only, never the value.
func (d *Decoder) Expect(v *yaml.Node, k Kind, code, path string, line int) bool {
	if KindOf(v) == k {
		return true
	}
	for _, r := range d.Rules {
		if r.Code == code && r.Mismatch != "" {
			d.Rep.Add(code, path, line, fmt.Sprintf(r.Mismatch, KindOf(v)))
			return false
		}
	}
	d.Rep.Add(code, path, line, fmt.Sprintf("expected %s, found %s", k, KindOf(v)))
	return false
}

// Object fills the struct dst from the members of v, skipping the keys in
// skip. code is the struct type's code: an unknown field is reported with
// it, or with CodeUnknownField when it is CodeInvalidType.
func (d *Decoder) Object(v *yaml.Node, path string, line int, dst reflect.Value, code string, skip []string) {
	fields := structFields(dst.Type())
	seen := map[string]bool{}
	unknown := code
	if unknown == CodeInvalidType {
		unknown = CodeUnknownField
	}
	for j := 0; j+1 < len(v.Content); j += 2 {
		k, val := v.Content[j], v.Content[j+1]
		if slices.Contains(skip, k.Value) {
			continue
		}
		p := ChildPath(path, k.Value)
		i := slices.IndexFunc(fields, func(f field) bool { return f.name == k.Value })
		if i < 0 {
			d.Rep.Add(unknown, p, k.Line, fmt.Sprintf("unknown field %q (known: %s)", k.Value, fieldNames(fields)))
			continue
		}
		seen[k.Value] = true
		d.Decode(val, p, k.Line, dst.Field(fields[i].index))
	}
	for _, f := range fields {
		if f.required && !seen[f.name] {
			d.Rep.Add(CodeMissingField, ChildPath(path, f.name), line, f.name+" is required")
		}
	}
}

// field is one JSON field of a struct.
type field struct {
	name     string
	index    int
	required bool // no omitempty
}

func structFields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		f := t.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || tag == "-" {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		out = append(out, field{name: tag, index: i, required: !slices.Contains(strings.Split(opts, ","), "omitempty")})
	}
	return out
}

func fieldNames(fs []field) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}
