package access

import (
	"encoding/json"
	"strings"
	"testing"
)

// An empty list in an item stays [] when the item is cloned for a stream
// event (content: null made the openai SDK's stream helper throw).
func TestCloneItemKeepsEmptyLists(t *testing.T) {
	c := cloneItem(map[string]any{"type": "message", "content": []any{}})
	b, _ := json.Marshal(c)
	if !strings.Contains(string(b), `"content":[]`) {
		t.Fatalf("cloned item %s", b)
	}
}

// A non-streaming body holds standard items only (the AI SDK's
// generateText rejects a response with a fabric: item).
func TestStandardDropsFabricItems(t *testing.T) {
	r := &responseObject{ID: "resp_x", Output: []map[string]any{
		{"type": "fabric:warning", "message": "w"}, {"type": "message", "content": []any{}},
	}}
	s := r.standard()
	if len(s.Output) != 1 || s.Output[0]["type"] != "message" || len(r.Output) != 2 {
		t.Fatalf("standard = %v (original %v)", s.Output, r.Output)
	}
}
