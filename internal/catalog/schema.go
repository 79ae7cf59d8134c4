package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kaptinlin/jsonschema"
)

// ErrRemoteRef is returned when a descriptor schema refers to a document
// outside itself.
var ErrRemoteRef = errors.New("schema $ref outside the descriptor is refused")

// Schema is one compiled JSON Schema (2020-12 unless the schema says otherwise).
type Schema struct {
	// mu serializes validations: the library (v0.9.8) caches compiled
	// patterns in the schema during validation without a lock, fixed in
	// v0.9.10, which needs Go 1.27. Drop mu with that upgrade.
	mu       sync.Mutex
	compiled *jsonschema.Schema
}

// Violation is one schema violation at an instance location.
type Violation struct {
	Pointer []string // JSON pointer tokens into the validated instance
	Message string
}

// Path renders the violation's location as a dotted path under prefix
// (`harness.settings` + [port_range start] -> `harness.settings.port_range.start`).
func (v Violation) Path(prefix string) string {
	return DottedPath(prefix, v.Pointer)
}

// DottedPath joins pointer tokens onto prefix; numeric tokens become [i].
func DottedPath(prefix string, tokens []string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			fmt.Fprintf(&b, "[%s]", t)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	return b.String()
}

// JSONPointer renders tokens as an RFC 6901 JSON pointer ("" is the root).
func JSONPointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

func refuse(url string) (io.ReadCloser, error) {
	return nil, fmt.Errorf("%w: %s", ErrRemoteRef, url)
}

// CompileSchema compiles a self-contained schema document. name is used in
// error messages and as the schema's base URI. Formats are annotations, not
// assertions (the 2020-12 default).
func CompileSchema(name string, raw json.RawMessage) (*Schema, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: not JSON: %w", name, err)
	}
	switch doc.(type) {
	case map[string]any, bool:
	default:
		return nil, fmt.Errorf("%s: a schema must be an object or a boolean", name)
	}
	if err := checkStructure(doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s, err := newCompiler(jsonschema.Draft202012).Compile(raw, "urn:fabric:descriptor:"+name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if refs := s.UnresolvedReferenceURIs(); len(refs) > 0 {
		if strings.HasPrefix(refs[0], "#") {
			return nil, fmt.Errorf("%s: $ref %s does not resolve inside the schema", name, refs[0])
		}
		return nil, fmt.Errorf("%s: %w: %s", name, ErrRemoteRef, refs[0])
	}
	return &Schema{compiled: s}, nil
}

// newCompiler returns a compiler that never loads a document outside the
// one compiled: the default HTTP loaders are dropped and every scheme a
// $ref could name is refused.
func newCompiler(dialect jsonschema.Dialect) *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.SetDefaultDialect(dialect)
	c.SetAssertFormat(false)
	for scheme := range c.Loaders {
		delete(c.Loaders, scheme)
	}
	for _, scheme := range []string{"http", "https", "file", "urn"} {
		c.RegisterLoader(scheme, refuse)
	}
	return c
}

// metaCompiler holds the meta-schema a schema's structure is checked
// against, compiled on first use and cached by the compiler.
var metaCompiler = sync.OnceValue(func() *metaChecker {
	return &metaChecker{c: newCompiler(jsonschema.Draft7)}
})

// metaChecker serializes checks for the reason Schema.mu does.
type metaChecker struct {
	mu sync.Mutex
	c  *jsonschema.Compiler
}

// checkStructure checks a schema document against a meta-schema, so a
// malformed schema ({"type":"objekt"}) fails when it is compiled, not at
// every validation. The library carries the draft-07 meta-schema only, so
// a 2020-12 document is checked for the keywords both drafts share (type,
// properties, required, enum, const, the bounds and the combinators);
// the root's $defs are checked as draft-07 definitions; other keywords
// new in 2020-12 are compiled without a structural check.
func checkStructure(doc any) error {
	m, ok := doc.(map[string]any)
	if !ok {
		return nil // a boolean schema
	}
	if v, _ := m["$schema"].(string); v == string(jsonschema.Draft202012) || v == string(jsonschema.Draft202012)+"#" {
		m = maps.Clone(m)
		delete(m, "$schema")
	}
	if defs, ok := m["$defs"]; ok && m["definitions"] == nil {
		m = maps.Clone(m)
		m["definitions"] = defs // so the draft-07 meta-schema checks them too
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	mc := metaCompiler()
	mc.mu.Lock()
	r, err := mc.c.ValidateSchema(raw)
	mc.mu.Unlock()
	if err != nil {
		return err
	}
	if r.IsValid() {
		return nil
	}
	var inst any
	if err := json.Unmarshal(raw, &inst); err != nil {
		return err
	}
	vs := leaves(r, inst)
	msgs := make([]string, 0, len(vs))
	for _, v := range vs {
		msgs = append(msgs, fmt.Sprintf("at '%s': %s", JSONPointer(v.Pointer), v.Message))
	}
	return fmt.Errorf("not a valid JSON Schema: %s", strings.Join(msgs, "; "))
}

// Validate checks instance (any JSON-marshalable value) and returns every
// leaf violation, sorted by location. A nil slice means valid.
func (s *Schema) Validate(instance any) []Violation {
	raw, err := json.Marshal(instance)
	if err != nil {
		return []Violation{{Message: "value is not JSON: " + err.Error()}}
	}
	return s.ValidateJSON(raw)
}

// ValidateJSON checks doc, a JSON document, like Validate.
func (s *Schema) ValidateJSON(doc []byte) []Violation {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var inst any
	if err := d.Decode(&inst); err != nil {
		return []Violation{{Message: "value is not JSON: " + err.Error()}}
	}
	s.mu.Lock()
	r := s.compiled.ValidateJSON(doc)
	s.mu.Unlock()
	if r.IsValid() {
		return nil
	}
	out := leaves(r, inst)
	sort.SliceStable(out, func(i, j int) bool {
		return strings.Join(out[i].Pointer, "/") < strings.Join(out[j].Pointer, "/")
	})
	return out
}

// applicators are the keywords whose failure is that of a subschema: when
// the subschema's own failures are reported, the applicator's summary
// ("Property 'x' does not match the schema") says nothing more.
var applicators = map[string]bool{
	"properties": true, "patternProperties": true, "additionalProperties": true,
	"items": true, "prefixItems": true, "contains": true,
	"unevaluatedProperties": true, "unevaluatedItems": true,
	"allOf": true, "anyOf": true, "oneOf": true, "not": true,
	"if": true, "then": true, "else": true,
	"$ref": true, "$dynamicRef": true, "dependentSchemas": true, "propertyNames": true,
}

// leaves flattens a result tree into its leaf violations, each at the
// instance location it is about. inst is the validated value.
func leaves(r *jsonschema.EvaluationResult, inst any) []Violation {
	var out []Violation
	collectLeaves(r, inst, nil, &out)
	return out
}

// collectLeaves walks the result tree. Each detail's instance location is
// relative to its parent's: empty (the same value) or one token. Two
// habits of the library are undone here: it evaluates a missing required
// property as null (the "required" failure already says it is missing),
// and it reports a property a false additionalProperties refuses at the
// property, with the false schema's message, where the object is the
// thing to fix.
func collectLeaves(r *jsonschema.EvaluationResult, inst any, at []string, out *[]Violation) {
	var failed []*jsonschema.EvaluationResult
	var refused []string
	for _, d := range r.Details {
		if d.IsValid() || !explains(r, d) {
			continue
		}
		if tok, ok := strings.CutPrefix(d.InstanceLocation, "/"); ok {
			if _, present := child(inst, tok); !present {
				continue
			}
			if isFalseSchema(d) && (strings.HasPrefix(d.EvaluationPath, "/additionalProperties") || strings.HasPrefix(d.EvaluationPath, "/unevaluatedProperties")) {
				refused = append(refused, tok)
				continue
			}
		}
		failed = append(failed, d)
	}
	keys := make([]string, 0, len(r.Errors))
	for k := range r.Errors {
		if applicators[k] && hasInvalid(r.Details) {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		*out = append(*out, Violation{Pointer: slices.Clone(at), Message: r.Errors[k].Error()})
	}
	if len(refused) > 0 {
		sort.Strings(refused)
		*out = append(*out, Violation{Pointer: slices.Clone(at), Message: "additional properties '" + strings.Join(refused, "', '") + "' not allowed"})
	}
	for _, d := range failed {
		v, here := inst, at
		if tok, ok := strings.CutPrefix(d.InstanceLocation, "/"); ok {
			v, _ = child(inst, tok)
			here = append(at[:len(at):len(at)], tok)
		}
		collectLeaves(d, v, here, out)
	}
}

func hasInvalid(ds []*jsonschema.EvaluationResult) bool {
	for _, d := range ds {
		if !d.IsValid() {
			return true
		}
	}
	return false
}

// explains reports whether detail d is part of why r failed. The library
// keeps every subschema it evaluated, so a failed "if", the branches of a
// satisfied anyOf or a refuted "not" are invalid details of their own; a
// detail counts when the keyword that evaluated it failed.
func explains(r, d *jsonschema.EvaluationResult) bool {
	kw, _, _ := strings.Cut(strings.TrimPrefix(d.EvaluationPath, "/"), "/")
	switch kw {
	case "if", "not":
		return false
	case "unevaluatedProperties":
		_, a := r.Errors["properties"] // the library files it under "properties"
		_, b := r.Errors[kw]
		return a || b
	case "properties", "patternProperties", "additionalProperties", "items", "prefixItems", "contains",
		"unevaluatedItems", "allOf", "anyOf", "oneOf", "then", "else", "propertyNames", "dependentSchemas":
		_, ok := r.Errors[kw]
		return ok
	}
	return true // $ref and $dynamicRef results carry the referenced schema's path
}

// child is the member tok of an object or array value.
func child(v any, tok string) (any, bool) {
	switch v := v.(type) {
	case map[string]any:
		c, ok := v[tok]
		return c, ok
	case []any:
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(v) {
			return nil, false
		}
		return v[i], true
	}
	return nil, false
}

func isFalseSchema(r *jsonschema.EvaluationResult) bool {
	e, ok := r.Errors["schema"]
	return ok && e.Code == "false_schema_mismatch" && len(r.Errors) == 1
}
