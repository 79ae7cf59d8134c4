package batch_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/batch"
)

// specProblems parses src (with its files) and returns every error as
// "file:line path code".
func specProblems(t *testing.T, src string, extra map[string]string) []string {
	t.Helper()
	dir := t.TempDir()
	fs := map[string]string{"batch.yaml": src}
	for k, v := range extra {
		fs[k] = v
	}
	files(t, dir, fs)
	_, err := batch.Load(filepath.Join(dir, "batch.yaml"))
	if err == nil {
		return nil
	}
	var es batch.Errors
	if !errors.As(err, &es) {
		t.Fatalf("error is %T, want batch.Errors: %v", err, err)
	}
	var out []string
	for _, e := range es {
		rel, _ := filepath.Rel(dir, e.File)
		out = append(out, fmt.Sprintf("%s:%d %s %s", rel, e.Line, e.Path, e.Code))
	}
	return out
}

const specHead = `schema_version: fabric.batch/v1alpha1
metadata: {name: t}
configs:
  - {id: a, config: a.yaml}
`

func TestSpecErrors(t *testing.T) {
	cases := []struct {
		name  string
		src   string
		extra map[string]string
		want  []string
	}{
		{"unknown key", specHead + "tasks: {items: [{id: x, input: {text: hi}}]}\ngrader: {kind: none}\nrepeat: 3\n", nil,
			[]string{"batch.yaml:7 repeat unknown_field"}},
		{"repeats zero", specHead + "tasks: {items: [{id: x, input: {text: hi}}]}\ngrader: {kind: none}\nrepeats: 0\n", nil,
			[]string{"batch.yaml:7 repeats invalid_value"}},
		{"k above repeats", specHead + "tasks: {items: [{id: x, input: {text: hi}}]}\ngrader: {kind: none}\nrepeats: 2\nreport:\n  k: [1, 3]\n", nil,
			[]string{"batch.yaml:9 report.k[1] invalid_value"}},
		{"duplicate task id", specHead + "tasks:\n  items:\n    - {id: x, input: {text: hi}}\n    - {id: x, input: {text: ho}}\ngrader: {kind: none}\n", nil,
			[]string{"batch.yaml:8 tasks.items[1] duplicate_id"}},
		{"duplicate task across sources", specHead + "tasks:\n  dir: tasks\n  items:\n    - {id: x, input: {text: hi}}\ngrader: {kind: none}\n",
			map[string]string{"tasks/x/prompt.md": "hi"},
			[]string{"batch.yaml:8 tasks.items[0] duplicate_id"}},
		{"missing grader", specHead + "tasks: {items: [{id: x, input: {text: hi}}]}\n", nil,
			[]string{"batch.yaml:5 tasks.items[0] missing_grader"}},
		{"command without command", specHead + "tasks: {items: [{id: x, input: {text: hi}}]}\ngrader:\n  kind: command\n", nil,
			[]string{"batch.yaml:6 grader.command missing_field"}},
		{"unknown config in per_config", specHead + "tasks: {items: [{id: x, input: {text: hi}}]}\ngrader: {kind: none}\nlimits:\n  per_config: {b: 1}\n", nil,
			[]string{"batch.yaml:8 limits.per_config.b unknown_config"}},
		{"bad id", specHead + "tasks: {items: [{id: a__b, input: {text: hi}}]}\ngrader: {kind: none}\n", nil,
			[]string{"batch.yaml:5 tasks.items[0] invalid_value"}},
		{"task.yaml error names its file", specHead + "tasks: {dir: tasks}\ngrader: {kind: none}\n",
			map[string]string{"tasks/x/task.yaml": "input: {text: hi}\ntimeout: 3\n"},
			[]string{"tasks/x/task.yaml:2 timeout unknown_field"}},
		{"jsonl error names its line", specHead + "tasks: {file: tasks.jsonl}\ngrader: {kind: none}\n",
			map[string]string{"tasks.jsonl": "{\"id\": \"a\", \"input\": {\"text\": \"x\"}}\n{\"id\": \"b\", \"inptu\": {}}\n"},
			[]string{"tasks.jsonl:2 inptu unknown_field"}},
		{"no tasks left", specHead + "tasks: {items: [{id: x, input: {text: hi}}], exclude: [\"*\"]}\ngrader: {kind: none}\n", nil,
			[]string{"batch.yaml:5 tasks no_tasks"}},
		{"several at once", specHead + "tasks: {items: [{id: x, input: {text: hi}}]}\ngrader: {kind: none}\nrepeats: 0\nretry: {classes: [network]}\n", nil,
			[]string{"batch.yaml:7 repeats invalid_value", "batch.yaml:8 retry.classes[0] invalid_value"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := specProblems(t, tc.src, tc.extra)
			// Errors from resolution carry no line for inline items; compare
			// what each case pins.
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpansion(t *testing.T) {
	dir := t.TempDir()
	files(t, dir, map[string]string{"batch.yaml": `schema_version: fabric.batch/v1alpha1
metadata: {name: t}
tasks:
  items:
    - {id: t3, input: {text: c}}
    - {id: t1, input: {text: a}}
    - {id: t2, input: {text: b}}
configs:
  - {id: x, config: a.yaml}
  - {id: y, config: a.yaml}
repeats: 4
grader: {kind: none}
`})
	s, err := batch.Load(filepath.Join(dir, "batch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	trials := batch.Expand(s)
	if len(trials) != 24 {
		t.Fatalf("%d trials, want 24", len(trials))
	}
	var ids []string
	for _, tr := range trials {
		ids = append(ids, tr.ID)
	}
	wantHead := []string{"t1__x__r01", "t1__y__r01", "t2__x__r01", "t2__y__r01", "t3__x__r01", "t3__y__r01", "t1__x__r02"}
	if diff := cmp.Diff(wantHead, ids[:7]); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if ids[23] != "t3__y__r04" {
		t.Errorf("last trial %s, want t3__y__r04", ids[23])
	}
	if !slices.IsSorted(func() []int {
		var r []int
		for _, tr := range trials {
			r = append(r, tr.Repeat)
		}
		return r
	}()) {
		t.Error("trials are not repeat-major")
	}
	again := batch.Expand(s)
	if diff := cmp.Diff(trials, again); diff != "" {
		t.Errorf("expansion differs on rerun:\n%s", diff)
	}
}
