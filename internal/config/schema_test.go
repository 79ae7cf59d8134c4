package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestSchemaTagsUnderstood guards against drift: every jsonschema tag key
// on a type reachable from FabricConfig must be one the loader enforces
// (or one it deliberately leaves alone), so a new constraint in contract/
// is not silently ignored here.
func TestSchemaTagsUnderstood(t *testing.T) {
	enforced := map[string]bool{
		"minLength": true, "enum": true, "const": true, "default": true,
		"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	}
	seen := map[reflect.Type]bool{}
	var visit func(reflect.Type)
	visit = func(typ reflect.Type) {
		typ = derefType(typ)
		switch typ.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			visit(typ.Elem())
			return
		case reflect.Struct:
		default:
			return
		}
		if seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			sf := typ.Field(i)
			for part := range strings.SplitSeq(sf.Tag.Get("jsonschema"), ",") {
				key, val, _ := strings.Cut(part, "=")
				switch {
				case key == "":
				case key == "pattern" && val == `\S`:
					// Covered by minLength, which the loader reads as non-blank.
				case !enforced[key]:
					t.Errorf("%s.%s: jsonschema %q is not enforced by the loader", typ.Name(), sf.Name, part)
				}
			}
			visit(sf.Type)
		}
	}
	visit(configType())
	if len(seen) < 10 {
		t.Fatalf("visited only %d struct types", len(seen))
	}
}
