package config

import (
	"reflect"
	"strconv"
	"strings"
)

// walker checks values against contract types. As it goes it drops null
// members and unknown nested keys, fills in defaults and interpolates, so
// that the walked value decodes cleanly into the contract type.
type walker struct {
	rep    *report
	lookup func(string) (string, bool)
}

// walkStruct checks object obj against struct type t.
func (w *walker) walkStruct(t reflect.Type, obj *value, path string) {
	fields := fieldsOf(t)
	byName := make(map[string]field, len(fields))
	for _, f := range fields {
		byName[f.name] = f
	}
	kept := obj.members[:0]
	for _, m := range obj.members {
		f, known := byName[m.key]
		switch {
		case !known:
			w.rep.warnf(CodeUnknownKey, childPath(path, m.key), m.keyLine, "unknown key %q is ignored", m.key)
			continue
		case m.value.kind == kindNull:
			continue // null is the same as absent
		}
		w.walkValue(f.typ, m.value, childPath(path, m.key), f.rules)
		kept = append(kept, m)
	}
	obj.members = kept
	w.completeStruct(fields, obj, path)
	w.checkStruct(t, obj, path)
}

// completeStruct reports absent required fields and fills in defaults.
func (w *walker) completeStruct(fields []field, obj *value, path string) {
	for _, f := range fields {
		if obj.get(f.name) != nil {
			continue
		}
		switch {
		case f.required:
			w.rep.failf(CodeMissingField, childPath(path, f.name), obj.line, "%s is required", f.name)
		case f.rules.dflt != nil && derefType(f.typ).Kind() == reflect.String:
			obj.members = append(obj.members, member{key: f.name, value: &value{kind: kindString, text: *f.rules.dflt}})
		}
	}
}

// walkValue checks v against type t, applying rules r to its scalars.
func (w *walker) walkValue(t reflect.Type, v *value, path string, r rules) {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		if v.kind == kindNull {
			return // decodes to nil
		}
	}
	t = derefType(t)
	if v.kind == kindNull {
		if t.Kind() != reflect.Struct {
			w.expected(v, path, kindOf(t))
			return
		}
		// An entry written as "name:" with nothing after it is an empty
		// object; its required fields are still required.
		v.kind = kindObject
	}
	switch t.Kind() {
	case reflect.Struct:
		if w.expect(v, kindObject, path) {
			w.walkStruct(t, v, path)
		}
	case reflect.Map:
		if w.expect(v, kindObject, path) {
			for _, m := range v.members {
				w.walkValue(t.Elem(), m.value, childPath(path, m.key), r)
			}
		}
	case reflect.Slice, reflect.Array:
		if w.expect(v, kindArray, path) {
			for i, it := range v.items {
				w.walkValue(t.Elem(), it, indexPath(path, i), r)
			}
		}
	case reflect.String:
		if w.expect(v, kindString, path) {
			w.checkString(v, path, r)
		}
	case reflect.Bool:
		w.expect(v, kindBool, path)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if w.expect(v, kindNumber, path) {
			w.checkInteger(t, v, path, r)
		}
	case reflect.Float32, reflect.Float64:
		if w.expect(v, kindNumber, path) {
			w.checkBounds(v, path, r)
		}
	}
	// Interfaces (settings and other open maps) take any value.
}

// expect reports a type error unless v has kind k.
func (w *walker) expect(v *value, k kind, path string) bool {
	if v.kind == k {
		return true
	}
	w.expected(v, path, k)
	return false
}

func (w *walker) expected(v *value, path string, want kind) {
	hint := ""
	if want == kindString && (v.kind == kindNumber || v.kind == kindBool) {
		hint = " (quote it to make it a string)"
	}
	w.rep.failf(CodeInvalidType, path, v.line, "expected %s, got %s%s", want, v.kind, hint)
}

// checkString applies r to a string value.
func (w *walker) checkString(v *value, path string, r rules) {
	switch {
	case r.interpolate:
		v.text = w.interpolate(v.text, path, v.line)
	case r.envName:
		w.checkEnvName(v, path)
		return
	case !r.freeText && hasReference(v.text):
		w.rep.warnf(CodeInterpolationNotAllowed, path, v.line, "${...} is not interpolated in this field and is kept as written")
	}
	switch {
	case (r.nonBlank || r.hostPath) && isBlank(v.text):
		w.rep.failf(CodeInvalidValue, path, v.line, "must not be blank")
	case r.constant != nil && v.text != *r.constant && path == "schema_version":
		w.rep.failf(CodeUnsupportedSchemaVersion, path, v.line, "unsupported schema version %q; this Fabric reads %q", v.text, *r.constant)
	case r.constant != nil && v.text != *r.constant:
		w.rep.failf(CodeInvalidValue, path, v.line, "must be %q, got %q", *r.constant, v.text)
	case !r.allows(v.text):
		w.rep.failf(CodeInvalidValue, path, v.line, "must be one of %s, got %q", strings.Join(r.enum, ", "), v.text)
	}
}

// checkEnvName requires a variable name. The text is never repeated in the
// message: someone may have pasted the secret itself.
func (w *walker) checkEnvName(v *value, path string) {
	if isEnvName(v.text) {
		return
	}
	hint := ""
	if strings.Contains(v.text, "${") {
		hint = "; write the bare name (API_KEY), not ${API_KEY}"
	}
	w.rep.failf(CodeInvalidEnvName, path, v.line,
		"must be the name of an environment variable (letters, digits and _, not starting with a digit)%s", hint)
}

// checkInteger requires an integer that fits t and r's bounds.
func (w *walker) checkInteger(t reflect.Type, v *value, path string, r rules) {
	if !v.integer {
		w.rep.failf(CodeInvalidType, path, v.line, "expected an integer, got %s", v.text)
		return
	}
	if !w.checkBounds(v, path, r) {
		return
	}
	var err error
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if strings.HasPrefix(v.text, "-") {
			w.rep.failf(CodeInvalidValue, path, v.line, "must not be negative, got %s", v.text)
			return
		}
		_, err = strconv.ParseUint(v.text, 10, t.Bits())
	default:
		_, err = strconv.ParseInt(v.text, 10, t.Bits())
	}
	if err != nil {
		w.rep.failf(CodeInvalidValue, path, v.line, "%s is out of range for a %d-bit integer", v.text, t.Bits())
	}
}

// checkBounds applies r's minimum and maximum to a number.
func (w *walker) checkBounds(v *value, path string, r rules) bool {
	f, err := strconv.ParseFloat(v.text, 64)
	if err != nil {
		w.rep.failf(CodeInvalidValue, path, v.line, "%s is not a valid number", v.text)
		return false
	}
	bounds := []struct {
		limit *float64
		fails func(f, limit float64) bool
		op    string
	}{
		{r.minimum, func(f, l float64) bool { return f < l }, ">="},
		{r.exclusiveMin, func(f, l float64) bool { return f <= l }, ">"},
		{r.maximum, func(f, l float64) bool { return f > l }, "<="},
		{r.exclusiveMax, func(f, l float64) bool { return f >= l }, "<"},
	}
	for _, b := range bounds {
		if b.limit != nil && b.fails(f, *b.limit) {
			w.rep.failf(CodeInvalidValue, path, v.line, "must be %s %s, got %s", b.op, strconv.FormatFloat(*b.limit, 'g', -1, 64), v.text)
			return false
		}
	}
	return true
}

// kindOf is the JSON kind that Go type t decodes from.
func kindOf(t reflect.Type) kind {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return kindObject
	case reflect.Slice, reflect.Array:
		return kindArray
	case reflect.String:
		return kindString
	case reflect.Bool:
		return kindBool
	}
	return kindNumber
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
