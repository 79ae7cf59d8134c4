package config

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/fabric-runtime/fabric/contract"
)

// The shape of a config is read from the contract types themselves: their
// json tags give the keys, their Go types the JSON types, and their
// jsonschema tags (the same ones the published schemas are generated from)
// give enums, bounds, non-blank strings and defaults. A field is required
// when it is neither a pointer, slice, map nor interface and its json tag
// has no omitempty. Rules the tags cannot say live in rules.go.

// field is one JSON member of a contract struct.
type field struct {
	name     string
	typ      reflect.Type
	required bool
	rules    rules
}

// rules are the checks applied to the scalars of one field (to the field
// itself, or to the elements of a list or map field).
type rules struct {
	nonBlank     bool
	enum         []string
	constant     *string
	dflt         *string
	minimum      *float64
	maximum      *float64
	exclusiveMin *float64
	exclusiveMax *float64
	envName      bool // *_env: names a variable whose value is never read
	interpolate  bool // ${VAR} is replaced (rules.go: interpolated)
	hostPath     bool // a path resolved against base_dir (rules.go: hostPath)
	freeText     bool // prose in which ${...} is ordinary text (rules.go: freeText)
}

// fieldsOf lists the JSON members of struct type t.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if sf.Anonymous && name == "" && sf.Type.Kind() == reflect.Struct {
			out = append(out, fieldsOf(sf.Type)...)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out = append(out, field{
			name:     name,
			typ:      sf.Type,
			required: isRequired(sf.Type, opts),
			rules:    fieldRules(t, name, sf.Tag.Get("jsonschema")),
		})
	}
	return out
}

func isRequired(t reflect.Type, jsonOpts string) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return false
	}
	for opt := range strings.SplitSeq(jsonOpts, ",") {
		if opt == "omitempty" || opt == "omitzero" {
			return false
		}
	}
	return true
}

// fieldRules parses a jsonschema tag ("minLength=1,enum=a,enum=b,...") and
// adds the rules for the named field of struct type owner.
func fieldRules(owner reflect.Type, name, tag string) rules {
	r := rules{
		envName:     strings.HasSuffix(name, "_env"),
		interpolate: interpolated(owner, name),
		hostPath:    hostPath(owner, name),
		freeText:    freeText(owner, name),
	}
	for part := range strings.SplitSeq(tag, ",") {
		key, val, _ := strings.Cut(part, "=")
		switch key {
		case "minLength":
			n, err := strconv.Atoi(val)
			r.nonBlank = r.nonBlank || err == nil && n > 0
		case "enum":
			r.enum = append(r.enum, val)
		case "const":
			r.constant = &val
		case "default":
			r.dflt = &val
		case "minimum":
			r.minimum = parseBound(val)
		case "maximum":
			r.maximum = parseBound(val)
		case "exclusiveMinimum":
			r.exclusiveMin = parseBound(val)
		case "exclusiveMaximum":
			r.exclusiveMax = parseBound(val)
		}
	}
	return r
}

func parseBound(s string) *float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil
	}
	return &f
}

// allows reports whether s is one of the enum values (any s when there is
// no enum).
func (r rules) allows(s string) bool {
	return len(r.enum) == 0 || slices.Contains(r.enum, s)
}

// configType is the type a config document decodes into.
func configType() reflect.Type { return reflect.TypeFor[contract.FabricConfig]() }
