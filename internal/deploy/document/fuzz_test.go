package document_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fabric-runtime/fabric/internal/deploy/document"
)

// FuzzParse: Parse never panics, and whatever it accepts exports to YAML
// that parses back to the same digest.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b, filepath.Base(name))
		}
	}
	f.Add([]byte(head+"  sandboxes: []\n"), "d.yaml")
	f.Add([]byte(head+"  sandboxes: [{name: s, agents: [{name: a, fabric: {x: [1, null, {y: \"yes\"}]}}]}]\n"), "d.yaml")
	f.Add([]byte(`{"a": {"b": [1, 2]}, "a": 1}`), "d.json")
	f.Add([]byte("a: &x 1\nb: *x\n<<: {c: 1}\n---\n"), "d.yaml")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		d, err := document.Parse(data, name, "/base")
		if err != nil {
			if d != nil {
				t.Fatal("a document and an error")
			}
			if err.Error() == "" {
				t.Fatal("empty error text")
			}
			return
		}
		out, err := document.MarshalYAML(&d.Deployment)
		if err != nil {
			t.Fatalf("accepted document does not export: %v", err)
		}
		back, err := document.Parse(out, "export.yaml", "/base")
		if err != nil {
			t.Fatalf("export does not parse: %v\n%s", err, out)
		}
		if back.Digest != d.Digest {
			t.Fatalf("digest changed in a round trip:\n%s", out)
		}
		_ = d.Bindings()
		_ = d.Credentials()
		for _, a := range d.Agents() {
			_ = d.Attachments(a.Agent.Name)
		}
	})
}
