package document

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fabric-runtime/fabric/contract"
)

// kind is the JSON type of a node, as messages name it.
type kind string

const (
	kindNull   kind = "null"
	kindBool   kind = "a boolean"
	kindNumber kind = "a number"
	kindString kind = "a string"
	kindArray  kind = "a list"
	kindObject kind = "an object"
)

func kindOf(n *yaml.Node) kind {
	switch n.Kind {
	case yaml.SequenceNode:
		return kindArray
	case yaml.MappingNode:
		return kindObject
	}
	switch scalarValue(n).(type) {
	case nil:
		return kindNull
	case bool:
		return kindBool
	case string:
		return kindString
	}
	return kindNumber
}

// appendJSON appends n encoded as JSON, keys in document order.
func appendJSON(b []byte, n *yaml.Node) []byte {
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
			b = appendJSON(b, c)
		}
		return append(b, open+2) // ']' or '}'
	}
	enc, err := json.Marshal(scalarValue(n))
	if err != nil { // a non-finite number, reported by the node checker
		return append(b, "null"...)
	}
	return append(b, enc...)
}

var (
	rawMessageType    = reflect.TypeFor[json.RawMessage]()
	integrationType   = reflect.TypeFor[contract.Integration]()
	credentialRefType = reflect.TypeFor[contract.CredentialRef]()
)

// decoder fills contract types from values by their json tags, strictly:
// a field without omitempty is required, a key without a field is unknown,
// null is never a value, and types must match exactly.
type decoder struct {
	rep   *report
	lines map[string]int // the line of every decoded path
}

// decode fills dst (settable) from v, found at path on line.
func (d *decoder) decode(v *yaml.Node, path string, line int, dst reflect.Value) {
	d.lines[path] = line
	t := dst.Type()
	code := CodeInvalidType
	if t == credentialRefType {
		code = CodeInvalidCredential
	}
	if kindOf(v) == kindNull {
		if d.rep.at(path) { // an alias, already reported
			return
		}
		d.rep.add(code, path, line, "null is not a value here; omit the field instead")
		return
	}
	switch {
	case t == rawMessageType:
		if d.expect(v, kindObject, code, path, line) {
			dst.SetBytes(appendJSON(nil, v))
		}
	case t == integrationType:
		d.integration(v, path, line, dst)
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		d.decode(v, path, line, p.Elem())
		dst.Set(p)
	case t.Kind() == reflect.Struct:
		if d.expect(v, kindObject, code, path, line) {
			d.object(v, path, line, dst, code, nil)
		}
	case t.Kind() == reflect.Slice:
		if !d.expect(v, kindArray, code, path, line) {
			return
		}
		s := reflect.MakeSlice(t, len(v.Content), len(v.Content))
		for i, it := range v.Content {
			d.decode(it, indexPath(path, i), it.Line, s.Index(i))
		}
		dst.Set(s)
	case t.Kind() == reflect.Map:
		if !d.expect(v, kindObject, code, path, line) {
			return
		}
		m := reflect.MakeMapWithSize(t, len(v.Content)/2)
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, e := v.Content[i], reflect.New(t.Elem()).Elem()
			d.decode(v.Content[i+1], childPath(path, k.Value), k.Line, e)
			m.SetMapIndex(reflect.ValueOf(k.Value), e)
		}
		dst.Set(m)
	case t.Kind() == reflect.String:
		if d.expect(v, kindString, code, path, line) {
			dst.SetString(v.Value)
		}
	case t.Kind() == reflect.Bool:
		if d.expect(v, kindBool, code, path, line) {
			dst.SetBool(scalarValue(v).(bool))
		}
	case t.Kind() == reflect.Int:
		if !d.expect(v, kindNumber, code, path, line) {
			return
		}
		switch n := scalarValue(v).(type) {
		case int64:
			dst.SetInt(n)
		case uint64:
			d.rep.add(CodeInvalidValue, path, line, "the integer is out of range")
		default:
			d.rep.add(CodeInvalidType, path, line, "expected an integer, found a fraction")
		}
	case t.Kind() == reflect.Float64:
		if d.expect(v, kindNumber, code, path, line) {
			switch n := scalarValue(v).(type) {
			case int64:
				dst.SetFloat(float64(n))
			case uint64:
				dst.SetFloat(float64(n))
			case float64:
				dst.SetFloat(n)
			}
		}
	default:
		panic("document: no decoding for " + t.String())
	}
}

// expect reports whether v has kind k, recording an error when not. The
// message names types only, never the value.
func (d *decoder) expect(v *yaml.Node, k kind, code, path string, line int) bool {
	if kindOf(v) == k {
		return true
	}
	if code == CodeInvalidCredential {
		d.rep.add(code, path, line, fmt.Sprintf("a credential is an object {env: NAME} or {file: PATH}, not %s; never write the secret itself", kindOf(v)))
		return false
	}
	d.rep.add(code, path, line, fmt.Sprintf("expected %s, found %s", k, kindOf(v)))
	return false
}

// object fills the struct dst from the members of v, skipping the keys in
// skip.
func (d *decoder) object(v *yaml.Node, path string, line int, dst reflect.Value, code string, skip []string) {
	fields := structFields(dst.Type())
	seen := map[string]bool{}
	for j := 0; j+1 < len(v.Content); j += 2 {
		k, val := v.Content[j], v.Content[j+1]
		if slices.Contains(skip, k.Value) {
			continue
		}
		p := childPath(path, k.Value)
		i := slices.IndexFunc(fields, func(f field) bool { return f.name == k.Value })
		if i < 0 {
			if code != CodeInvalidCredential {
				code = CodeUnknownField
			}
			d.rep.add(code, p, k.Line, fmt.Sprintf("unknown field %q (known: %s)", k.Value, fieldNames(fields)))
			continue
		}
		seen[k.Value] = true
		d.decode(val, p, k.Line, dst.Field(fields[i].index))
	}
	for _, f := range fields {
		if f.required && !seen[f.name] {
			d.rep.add(CodeMissingField, childPath(path, f.name), line, f.name+" is required")
		}
	}
}

// integration reads "kind" and then the fields of that kind.
func (d *decoder) integration(v *yaml.Node, path string, line int, dst reflect.Value) {
	if !d.expect(v, kindObject, CodeInvalidType, path, line) {
		return
	}
	var kindValue *yaml.Node
	kindLine := line
	for i := 0; i+1 < len(v.Content); i += 2 {
		if v.Content[i].Value == "kind" {
			kindValue, kindLine = v.Content[i+1], v.Content[i].Line
		}
	}
	kp := childPath(path, "kind")
	d.lines[kp] = kindLine
	switch {
	case kindValue == nil:
		d.rep.add(CodeMissingField, kp, line, "kind is required (one of "+strings.Join(contract.IntegrationKinds(), ", ")+")")
		return
	case kindOf(kindValue) != kindString:
		d.rep.add(CodeInvalidType, kp, kindLine, "expected a string, found "+string(kindOf(kindValue)))
		return
	}
	in, ok := contract.NewIntegration(kindValue.Value)
	if !ok {
		d.rep.add(CodeUnknownKind, kp, kindLine, fmt.Sprintf("unknown integration kind %q (known: %s)", kindValue.Value, strings.Join(contract.IntegrationKinds(), ", ")))
		return
	}
	d.object(v, path, line, reflect.ValueOf(in.Variant()).Elem(), CodeInvalidType, []string{"kind"})
	dst.Set(reflect.ValueOf(in))
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
