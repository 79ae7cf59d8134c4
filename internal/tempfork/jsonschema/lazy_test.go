package jsonschema

import (
	"strings"
	"testing"
)

// The drafts' metaschemas, compiled at the first NewCompiler rather than at
// init, still check schemas and validate instances.
func TestLazyDrafts(t *testing.T) {
	c := NewCompiler()
	if Draft2020.sch == nil || Draft2020.allVocabs["core"] == nil {
		t.Fatal("NewCompiler did not load the drafts")
	}
	bad, _ := UnmarshalJSON(strings.NewReader(`{"type": 5}`))
	if err := c.AddResource("urn:bad", bad); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("urn:bad"); err == nil {
		t.Fatal(`{"type": 5} compiled: the metaschema was not applied`)
	}
	c = NewCompiler()
	good, _ := UnmarshalJSON(strings.NewReader(`{"type": "object", "required": ["a"]}`))
	if err := c.AddResource("urn:good", good); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("urn:good")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(map[string]any{}); err == nil {
		t.Fatal("an object without a passed validation")
	}
	if err := s.Validate(map[string]any{"a": 1.0}); err != nil {
		t.Fatal(err)
	}
}
