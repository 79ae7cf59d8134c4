package batch_test

import (
	"errors"
	"os"
	"testing"

	"github.com/fabric-runtime/fabric/batch"
)

// FuzzParse: a spec never panics the reader, and a refused one always says
// where (a file on every error).
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("../examples/batch/batch.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(specHead + "tasks: {items: [{id: x, input: {text: hi}}]}\ngrader: {kind: none}\nrepeats: 2\nreport: {k: [1, 2]}\n"))
	f.Add([]byte(specHead + "tasks:\n  items:\n    - {id: x, input: {text: hi}, grader: {kind: output_match, match: {regex: \"(\"}}}\n"))
	f.Add([]byte(`{"schema_version": "fabric.batch/v1alpha1", "metadata": {"name": "j"}, "configs": [{"id": "a", "config": "a.yaml", "overrides": {"x.y": [1, {"z": null}]}}], "tasks": {"items": []}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := batch.Parse(data, "fuzz.yaml", dir)
		if err == nil {
			if s == nil || len(s.Tasks) == 0 {
				t.Fatal("accepted a spec without tasks")
			}
			return
		}
		var es batch.Errors
		if !errors.As(err, &es) {
			t.Fatalf("error %T is not batch.Errors: %v", err, err)
		}
		for _, e := range es {
			if e.File == "" || e.Code == "" {
				t.Fatalf("error without file or code: %+v", e)
			}
		}
	})
}
