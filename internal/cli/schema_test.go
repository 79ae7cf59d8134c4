package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fabric schema prints the committed schemas/ files byte for byte (the
// drift test in internal/schemagen keeps them equal to the generator's
// output), lists their names, and rejects an unknown name as usage.
func TestSchemaCommand(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "schemas", "batch.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "schema", "batch"); code != 0 || out != string(want) {
		t.Errorf("fabric schema batch: exit %d, stderr %q; output equal to schemas/batch.schema.json: %v", code, errOut, out == string(want))
	}

	code, out, _ := runCLI(t, "schema")
	files, _ := filepath.Glob(filepath.Join("..", "..", "schemas", "*.schema.json"))
	var list struct{ Schemas []string }
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || len(list.Schemas) != len(files) || len(files) == 0 {
		t.Errorf("fabric schema: exit %d, %v, %d names for %d files:\n%s", code, err, len(list.Schemas), len(files), out)
	}

	code, out, _ = runCLI(t, "schema", "--all")
	var all map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &all); code != 0 || err != nil || len(all) != len(files) {
		t.Errorf("fabric schema --all: exit %d, %v, %d schemas for %d files", code, err, len(all), len(files))
	}

	for _, name := range []string{"nope", "../go.mod", "batch.schema"} {
		if code, _, errOut := runCLI(t, "schema", name); code != ExitUsage || !strings.Contains(errOut, "unknown schema") {
			t.Errorf("fabric schema %s: exit %d, stderr %q; want usage error naming the unknown schema", name, code, errOut)
		}
	}
}
