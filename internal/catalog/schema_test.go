package catalog

import (
	"encoding/json"
	"slices"
	"testing"
)

// Each violation is reported once, at the location to fix, whatever
// subschemas the library evaluated on the way.
func TestValidateLeaves(t *testing.T) {
	const schema = `{
		"type": "object",
		"additionalProperties": false,
		"required": ["name"],
		"properties": {
			"name": {"type": "string"},
			"mode": {"anyOf": [{"const": "a"}, {"const": "b"}]},
			"port": {"type": "integer", "maximum": 10},
			"iface": {
				"type": "object",
				"properties": {"enabled": {"type": "boolean"}, "port": {"type": "integer"}},
				"if": {"properties": {"enabled": {"const": false}}, "required": ["enabled"]},
				"else": {"required": ["port"]}
			},
			"list": {"type": "array", "items": {"$ref": "#/$defs/item"}}
		},
		"$defs": {"item": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer", "minimum": 3}}}}
	}`
	s, err := CompileSchema("t", json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, doc string
		want      []string // dotted paths under "s"
	}{
		{"valid", `{"name":"x","mode":"b","iface":{"port":1},"list":[{"n":3}]}`, nil},
		{"missing required is one violation", `{}`, []string{"s"}},
		{"unknown property at the object", `{"name":"x","nope":1,"nah":2}`, []string{"s"}},
		{"satisfied anyOf and failed if are silent", `{"name":"x","mode":"a","iface":{"port":1},"port":11}`, []string{"s.port"}},
		{"else applies", `{"name":"x","iface":{}}`, []string{"s.iface"}},
		{"through a $ref in an array", `{"name":"x","list":[{"n":5},{"n":1},{}]}`, []string{"s.list[1].n", "s.list[2]"}},
		{"anyOf failed", `{"name":"x","mode":"c"}`, []string{"s.mode", "s.mode"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, v := range s.ValidateJSON([]byte(tt.doc)) {
				if v.Message == "" {
					t.Errorf("empty message at %v", v.Pointer)
				}
				got = append(got, v.Path("s"))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("paths = %q, want %q (%+v)", got, tt.want, s.ValidateJSON([]byte(tt.doc)))
			}
		})
	}
}

func TestCompileSchemaChecksStructure(t *testing.T) {
	for _, raw := range []string{`{"type":"objekt"}`, `{"$defs":{"x":{"type":"objekt"}}}`, `{"properties":{"a":{"minimum":"3"}}}`, `{"$ref":"#/$defs/missing"}`} {
		if _, err := CompileSchema("t", json.RawMessage(raw)); err == nil {
			t.Errorf("%s compiled", raw)
		}
	}
}
