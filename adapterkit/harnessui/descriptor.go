package harnessui

//go:generate go run ./internal/descgen ../../adapters

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/fabric-runtime/fabric/contract"
)

// fragmentJSON holds the contract's settings schemas, defined once:
// templates that settingsProperties composes for each descriptor.
//
//go:embed fragment.json
var fragmentJSON []byte

// settingsProperties returns the settings_schema properties the contract
// owns for an adapter with these interface declarations, in order:
// "interfaces" (S1-S9: the declared names only, additionalProperties false
// there and on each interface, S8) and "startup_timeout_seconds" (L3).
func settingsProperties(decls []contract.InterfaceDeclaration) (object, error) {
	if err := contract.ValidateInterfaceDeclarations(decls); err != nil {
		return nil, err
	}
	v, err := decodeOrdered(fragmentJSON)
	if err != nil {
		return nil, fmt.Errorf("harnessui: fragment.json: %w", err)
	}
	tmpl := v.(object)
	props := object{}
	for _, d := range decls {
		p := object{{"enabled", tmpl.get("enabled")}}
		if d.Kind == contract.InterfaceHTTP {
			p = append(p, member{"port", tmpl.get("port")})
		}
		if d.PublicOrigins {
			p = append(p, member{"public_origins", tmpl.get("public_origins")})
		}
		for _, name := range sortedKeys(d.Settings) { // S6
			raw, err := json.Marshal(d.Settings[name])
			if err != nil {
				return nil, fmt.Errorf("interfaces %s: settings.%s: %w", d.Name, name, err)
			}
			s, err := decodeOrdered(raw)
			if err != nil {
				return nil, err
			}
			p = append(p, member{name, s})
		}
		desc := d.Description
		if desc == "" {
			desc = fmt.Sprintf("The %s interface (%s).", d.Name, d.Kind)
		}
		in := object{{"type", "object"}, {"description", desc}, {"additionalProperties", false}, {"properties", p}}
		if d.Kind == contract.InterfaceHTTP { // S2: a port whenever enabled
			in = append(in, tmpl.get("port_when_enabled").(object)...)
		}
		props = append(props, member{d.Name, in})
	}
	ifaces := append(object{}, tmpl.get("interfaces").(object)...)
	ifaces = append(ifaces, member{"properties", props})
	return object{
		{SettingInterfaces, ifaces},
		{SettingStartupTimeout, tmpl.get("startup_timeout_seconds")},
	}, nil
}

// CheckDescriptor reports whether a descriptor's settings_schema carries
// the contract's fragment exactly as generated from its "interfaces"
// declarations (S8). A descriptor without declarations must not have an
// interfaces setting. Formatting and key order do not matter.
func CheckDescriptor(data []byte) error {
	var d contract.AdapterDescriptor
	if err := json.Unmarshal(data, &d); err != nil {
		return fmt.Errorf("descriptor: %w", err)
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	if len(d.SettingsSchema) > 0 {
		if err := json.Unmarshal(d.SettingsSchema, &schema); err != nil {
			return fmt.Errorf("descriptor %s: settings_schema: %w", d.AdapterID, err)
		}
	}
	if len(d.Interfaces) == 0 {
		if _, ok := schema.Properties[SettingInterfaces]; ok {
			return fmt.Errorf("descriptor %s: settings_schema.properties.interfaces is set but the descriptor declares no interfaces", d.AdapterID)
		}
		return nil
	}
	if schema.Properties == nil {
		return fmt.Errorf("descriptor %s declares interfaces but its settings_schema has no properties (S8)", d.AdapterID)
	}
	want, err := settingsProperties(d.Interfaces)
	if err != nil {
		return fmt.Errorf("descriptor %s: %w", d.AdapterID, err)
	}
	var errs []error
	for _, m := range want {
		b, err := marshal(m.val, "")
		if err != nil {
			return err
		}
		var w any
		if err := json.Unmarshal(b, &w); err != nil {
			return err
		}
		if !reflect.DeepEqual(schema.Properties[m.key], w) {
			errs = append(errs, fmt.Errorf("descriptor %s: settings_schema.properties.%s differs from the interfaces fragment; run `go generate ./adapterkit/harnessui`", d.AdapterID, m.key))
		}
	}
	return errors.Join(errs...)
}

// UpdateDescriptor returns the descriptor with the contract's fragment
// written into settings_schema.properties (replacing the generated keys in
// place, or appending them), leaving every other byte as it was. A
// descriptor without interface declarations is returned unchanged. The
// settings_schema must have a properties object.
func UpdateDescriptor(data []byte) ([]byte, error) {
	var d contract.AdapterDescriptor
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("descriptor: %w", err)
	}
	if len(d.Interfaces) == 0 {
		return data, CheckDescriptor(data)
	}
	want, err := settingsProperties(d.Interfaces)
	if err != nil {
		return nil, fmt.Errorf("descriptor %s: %w", d.AdapterID, err)
	}
	out := append([]byte(nil), data...)
	for _, m := range want {
		if out, err = spliceProperty(out, m.key, m.val); err != nil {
			return nil, fmt.Errorf("descriptor %s: %w", d.AdapterID, err)
		}
	}
	if err := CheckDescriptor(out); err != nil {
		return nil, fmt.Errorf("harnessui: generated descriptor does not check: %w", err)
	}
	return out, nil
}

// spliceProperty sets settings_schema.properties.<key> to val in the
// descriptor's text.
func spliceProperty(data []byte, key string, val any) ([]byte, error) {
	root := span{0, len(data)}
	ss, ok, err := findMember(data, root, "settings_schema")
	if err != nil {
		return nil, err
	}
	if !ok || data[ss.val.start] != '{' {
		return nil, errors.New("a descriptor that declares interfaces needs a settings_schema object (S8)")
	}
	props, ok, err := findMember(data, ss.val, "properties")
	if err != nil {
		return nil, err
	}
	if !ok || data[props.val.start] != '{' {
		return nil, errors.New("settings_schema needs a properties object to hold the interfaces fragment (S8)")
	}
	m, ok, err := findMember(data, props.val, key)
	if err != nil {
		return nil, err
	}
	if ok {
		v, err := marshal(val, lineIndent(data, m.keyStart))
		if err != nil {
			return nil, err
		}
		return splice(data, m.val.start, m.val.end, v), nil
	}
	last, has, err := lastMember(data, props.val)
	if err != nil {
		return nil, err
	}
	outer := lineIndent(data, props.keyStart)
	indent := outer + "  "
	if has && lineStart(data, last.keyStart) {
		indent = lineIndent(data, last.keyStart)
	}
	v, err := marshal(val, indent)
	if err != nil {
		return nil, err
	}
	k, _ := json.Marshal(key)
	entry := "\n" + indent + string(k) + ": " + string(v)
	if has {
		return splice(data, last.val.end, last.val.end, []byte(","+entry)), nil
	}
	return splice(data, props.val.start, props.val.end, []byte("{"+entry+"\n"+outer+"}")), nil
}

func splice(data []byte, start, end int, with []byte) []byte {
	out := make([]byte, 0, len(data)-(end-start)+len(with))
	out = append(out, data[:start]...)
	out = append(out, with...)
	return append(out, data[end:]...)
}

// span is a byte range of the descriptor's text.
type span struct{ start, end int }

// memberSpan locates one member of an object.
type memberSpan struct {
	keyStart int
	val      span
}

// findMember finds key among the members of the object at obj.
func findMember(data []byte, obj span, key string) (memberSpan, bool, error) {
	var found memberSpan
	ok := false
	err := members(data, obj, func(k string, m memberSpan) {
		if k == key && !ok {
			found, ok = m, true
		}
	})
	return found, ok, err
}

// lastMember returns the last member of the object at obj.
func lastMember(data []byte, obj span) (memberSpan, bool, error) {
	var last memberSpan
	ok := false
	err := members(data, obj, func(_ string, m memberSpan) { last, ok = m, true })
	return last, ok, err
}

// members calls fn for each member of the object at obj, with spans in
// data's coordinates.
func members(data []byte, obj span, fn func(string, memberSpan)) error {
	dec := json.NewDecoder(bytes.NewReader(data[obj.start:obj.end]))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("offset %d: not an object", obj.start)
	}
	for dec.More() {
		before := obj.start + int(dec.InputOffset())
		t, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := t.(string)
		keyStart := skipSpace(data, before, ",")
		valStart := skipSpace(data, obj.start+int(dec.InputOffset()), ":")
		if err := skipValue(dec); err != nil {
			return err
		}
		fn(k, memberSpan{keyStart: keyStart, val: span{valStart, obj.start + int(dec.InputOffset())}})
	}
	return nil
}

// skipSpace returns the offset of the first byte at or after i that is
// neither white space nor one of the separators in seps.
func skipSpace(data []byte, i int, seps string) int {
	for i < len(data) {
		switch c := data[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		case bytes.IndexByte([]byte(seps), c) >= 0:
		default:
			return i
		}
		i++
	}
	return i
}

func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// lineIndent returns the white space that starts the line holding pos.
func lineIndent(data []byte, pos int) string {
	start := bytes.LastIndexByte(data[:pos], '\n') + 1
	end := start
	for end < len(data) && (data[end] == ' ' || data[end] == '\t') {
		end++
	}
	return string(data[start:end])
}

// lineStart reports whether only white space precedes pos on its line.
func lineStart(data []byte, pos int) bool {
	start := bytes.LastIndexByte(data[:pos], '\n') + 1
	return len(bytes.TrimLeft(data[start:pos], " \t")) == 0
}

// object is a JSON object that keeps its key order.
type object []member

type member struct {
	key string
	val any
}

func (o object) get(key string) any {
	for _, m := range o {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(m.key, "")
		if err != nil {
			return nil, err
		}
		v, err := marshal(m.val, "")
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal encodes v without HTML escaping, indented by two spaces with
// every line after the first starting with prefix.
func marshal(v any, prefix string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// decodeOrdered decodes JSON keeping object key order (as object) and
// numbers exact (as json.Number).
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after a JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		o := object{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, member{kt.(string), v})
		}
		_, err := dec.Token()
		return o, err
	case json.Delim('['):
		a := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	}
	return t, nil
}
