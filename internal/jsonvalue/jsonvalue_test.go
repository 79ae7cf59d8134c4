package jsonvalue

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestClone(t *testing.T) {
	var orig map[string]any
	if err := json.Unmarshal([]byte(`{"a":{"b":[1,{"c":"d"},null]},"e":"f","g":[],"h":{}}`), &orig); err != nil {
		t.Fatal(err)
	}
	got := CloneObject(orig)
	if !reflect.DeepEqual(got, orig) {
		t.Fatalf("clone %v, want %v", got, orig)
	}
	// The copy shares nothing that can be changed.
	got["a"].(map[string]any)["b"].([]any)[1].(map[string]any)["c"] = "changed"
	got["a"].(map[string]any)["x"] = 1
	if orig["a"].(map[string]any)["b"].([]any)[1].(map[string]any)["c"] != "d" || len(orig["a"].(map[string]any)) != 1 {
		t.Fatalf("changing the clone changed the original: %v", orig)
	}
	for _, v := range []any{map[string]any(nil), []any(nil), nil, "s", 1.5, true} {
		if c := Clone(v); !reflect.DeepEqual(c, v) {
			t.Errorf("Clone(%#v) = %#v", v, c)
		}
	}
}
