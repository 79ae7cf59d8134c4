package batch

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/fabric-runtime/fabric/contract"
	"github.com/fabric-runtime/fabric/internal/strictdoc"
)

// Spec error codes of a batch's own rules; the strict reading of the file
// adds those of internal/strictdoc (unknown_field, missing_field,
// invalid_type, invalid_value, duplicate_key, ...). docs/batch.md explains
// each.
const (
	CodeDuplicateID   = "duplicate_id"
	CodeMissingGrader = "missing_grader"
	CodeUnknownConfig = "unknown_config"
	CodeNoTasks       = "no_tasks"
)

// Error is one problem of a spec or task file, at its file, line and path.
type Error = strictdoc.Error

// Errors are every problem found, sorted by file and line.
type Errors = strictdoc.Errors

// Spec is a batch spec that passed every check, with its tasks resolved
// (from tasks.dir, tasks.file and tasks.items, filtered, sorted by id).
type Spec struct {
	Spec    contract.BatchSpec
	Path    string // absolute
	BaseDir string // absolute; relative paths resolve against it
	Digest  string // sha256 hex of the spec file's bytes
	Tasks   []contract.BatchTask
	lines   map[string]int // the line of every path of the spec
}

// Repeats is the spec's repeats, 1 when unset.
func (s *Spec) Repeats() int { return max(s.Spec.Repeats, 1) }

// Load reads, checks and resolves the batch spec at path (YAML or JSON).
// The error, when not nil, is Errors: every problem found.
func Load(path string) (*Spec, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, unreadable(path, err)
	}
	data, err := strictdoc.ReadFile(path)
	if err != nil {
		return nil, unreadable(path, err)
	}
	s, err := Parse(data, path, filepath.Dir(abs))
	if err != nil {
		return nil, err
	}
	s.Path = abs
	return s, nil
}

func unreadable(path string, err error) error {
	return Errors{{File: path, Code: strictdoc.CodeUnreadable, Message: "cannot read: " + err.Error()}}
}

// Parse checks a spec held in memory; name names it in messages and
// baseDir resolves its relative paths.
func Parse(data []byte, name, baseDir string) (*Spec, error) {
	s, c, err := parse(data, name, baseDir)
	if err != nil {
		return nil, err
	}
	if errs := c.resolveTasks(); len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

// parseOnly checks a spec without reading its tasks (a batch directory's
// copy, whose tasks lock.json lists).
func parseOnly(data []byte, name, baseDir string) (*Spec, error) {
	s, _, err := parse(data, name, baseDir)
	return s, err
}

func readFile(p string) ([]byte, error) { return strictdoc.ReadFile(p) }

func parse(data []byte, name, baseDir string) (*Spec, *checker, error) {
	rep := &strictdoc.Report{File: name}
	base, err := filepath.Abs(baseDir)
	if err != nil {
		return nil, nil, unreadable(name, err)
	}
	root := strictdoc.Root(data, rep, contract.BatchSchemaVersion)
	if root == nil {
		return nil, nil, rep.Err()
	}
	s := &Spec{Path: name, BaseDir: base}
	dec := newDecoder(rep)
	dec.Decode(root, "", root.Line, reflect.ValueOf(&s.Spec).Elem())
	sum := sha256.Sum256(data)
	s.Digest = hex.EncodeToString(sum[:])
	s.lines = dec.Lines
	c := &checker{rep: rep, lines: dec.Lines, s: s}
	c.check()
	if err := rep.Err(); err != nil {
		return nil, nil, err
	}
	return s, c, nil
}

var rawMessageMapType = reflect.TypeFor[map[string]json.RawMessage]()

// newDecoder reads a spec strictly; overrides hold values of any JSON
// type.
func newDecoder(rep *strictdoc.Report) *strictdoc.Decoder {
	d := strictdoc.NewDecoder(rep)
	d.Custom = func(d *strictdoc.Decoder, v *yaml.Node, p string, line int, dst reflect.Value) bool {
		if dst.Type() != rawMessageMapType {
			return false
		}
		if !d.Expect(v, strictdoc.KindObject, strictdoc.CodeInvalidType, p, line) {
			return true
		}
		m := make(map[string]json.RawMessage, len(v.Content)/2)
		for i := 0; i+1 < len(v.Content); i += 2 {
			k := v.Content[i]
			d.Lines[strictdoc.ChildPath(p, k.Value)] = k.Line
			m[k.Value] = strictdoc.AppendJSON(nil, v.Content[i+1])
		}
		dst.Set(reflect.ValueOf(m))
		return true
	}
	return d
}

type checker struct {
	rep   *strictdoc.Report
	lines map[string]int
	s     *Spec
}

func (c *checker) fail(code, p, msg string) {
	// A rule is not checked where the value could not be read.
	if c.rep.Has(func(e *Error) bool { return within(p, e.Path) || within(e.Path, p) && e.Path != "" }) {
		return
	}
	line := c.lines[p]
	for q := p; line == 0 && q != ""; {
		q = parentPath(q)
		line = c.lines[q]
	}
	c.rep.Add(code, p, line, msg)
}

// within reports whether path p is at or below parent.
func within(p, parent string) bool {
	return p == parent || parent == "" || strings.HasPrefix(p, parent+".") || strings.HasPrefix(p, parent+"[")
}

func parentPath(p string) string {
	if i := strings.LastIndexAny(p, ".["); i >= 0 {
		return p[:i]
	}
	return ""
}

func (c *checker) present(p string) bool { _, ok := c.lines[p]; return ok }

var retryClasses = []string{contract.ErrorClassModel, contract.ErrorClassHarness, contract.ErrorClassSetup, contract.ErrorClassGrader, contract.ErrorClassFabric}

func (c *checker) check() {
	sp := &c.s.Spec
	if c.present("repeats") && sp.Repeats < 1 {
		c.fail(strictdoc.CodeInvalidValue, "repeats", fmt.Sprintf("repeats must be at least 1, not %d", sp.Repeats))
	}
	if !validID(sp.Metadata.Name) {
		c.fail(strictdoc.CodeInvalidValue, "metadata.name", fmt.Sprintf("%q is not a valid name (letters, digits, '.', '_', '-'; starting with a letter or digit)", sp.Metadata.Name))
	}
	switch sp.KeepWorkspaces {
	case "", "never", "on_failure", "always":
	default:
		c.fail(strictdoc.CodeInvalidValue, "keep_workspaces", fmt.Sprintf("keep_workspaces is never, on_failure or always, not %q", sp.KeepWorkspaces))
	}
	if len(sp.Configs) == 0 {
		c.fail(strictdoc.CodeInvalidValue, "configs", "a batch needs at least one config")
	}
	ids := map[string]string{}
	for i, cf := range sp.Configs {
		p := strictdoc.IndexPath("configs", i)
		c.id(p+".id", cf.ID, "config", ids)
		switch {
		case cf.Config != "" && cf.Deployment != "":
			c.fail(strictdoc.CodeInvalidValue, p, "a config names exactly one of config (a FabricConfig file) and deployment (with agent), not both")
		case cf.Config == "" && cf.Deployment == "":
			c.fail(strictdoc.CodeMissingField, p+".config", "a config needs config (a FabricConfig file) or deployment and agent")
		case cf.Deployment != "" && cf.Agent == "":
			c.fail(strictdoc.CodeMissingField, p+".agent", "deployment needs agent: the name of one of its agents")
		case cf.Config != "" && cf.Agent != "":
			c.fail(strictdoc.CodeInvalidValue, p+".agent", "agent goes with deployment, not with config")
		}
	}
	configs := func(p, id string) {
		if _, ok := ids[id]; !ok {
			c.fail(CodeUnknownConfig, p, fmt.Sprintf("no config has id %q (configs: %s)", id, strings.Join(slices.Sorted(maps.Keys(ids)), ", ")))
		}
	}
	if l := sp.Limits; l != nil {
		if c.present("limits.concurrency") && l.Concurrency < 1 {
			c.fail(strictdoc.CodeInvalidValue, "limits.concurrency", "concurrency must be at least 1")
		}
		c.nonNegative("limits.run_timeout_seconds", l.RunTimeoutSeconds)
		c.nonNegative("limits.budget_usd", l.BudgetUSD)
		for _, k := range slices.Sorted(maps.Keys(l.PerConfig)) {
			p := strictdoc.ChildPath("limits.per_config", k)
			configs(p, k)
			if l.PerConfig[k] < 1 {
				c.fail(strictdoc.CodeInvalidValue, p, "a per-config cap must be at least 1")
			}
		}
		keys := map[string]string{}
		for i, q := range l.Quotas {
			p := strictdoc.IndexPath("limits.quotas", i)
			if prev, dup := keys[q.Key]; dup {
				c.fail(CodeDuplicateID, p+".key", fmt.Sprintf("quota key %q is also at %s", q.Key, prev))
			}
			keys[q.Key] = p
			c.nonNegative(p+".max_in_flight", float64(q.MaxInFlight))
			c.nonNegative(p+".runs_per_minute", q.RunsPerMinute)
			c.nonNegative(p+".tokens_per_minute", q.TokensPerMinute)
		}
	}
	if r := sp.Retry; r != nil {
		if c.present("retry.max_attempts") && r.MaxAttempts < 1 {
			c.fail(strictdoc.CodeInvalidValue, "retry.max_attempts", "max_attempts must be at least 1")
		}
		for i, cl := range r.Classes {
			if !slices.Contains(retryClasses, cl) {
				c.fail(strictdoc.CodeInvalidValue, strictdoc.IndexPath("retry.classes", i), fmt.Sprintf("unknown error class %q (known: %s)", cl, strings.Join(retryClasses, ", ")))
			}
		}
		if b := r.Backoff; b != nil && c.present("retry.backoff.factor") && b.Factor < 1 {
			c.fail(strictdoc.CodeInvalidValue, "retry.backoff.factor", "factor must be at least 1")
		}
	}
	models := map[string]bool{}
	for i, pr := range sp.Pricing {
		p := strictdoc.IndexPath("pricing", i)
		if models[pr.Model] {
			c.fail(CodeDuplicateID, p+".model", fmt.Sprintf("model %q is priced twice", pr.Model))
		}
		models[pr.Model] = true
		c.nonNegative(p+".input_per_mtok", pr.InputPerMTok)
		c.nonNegative(p+".cached_input_per_mtok", pr.CachedInputPerMTok)
		c.nonNegative(p+".output_per_mtok", pr.OutputPerMTok)
	}
	if r := sp.Report; r != nil {
		for i, k := range r.K {
			p := strictdoc.IndexPath("report.k", i)
			switch {
			case k < 1:
				c.fail(strictdoc.CodeInvalidValue, p, fmt.Sprintf("k must be at least 1, not %d", k))
			case k > c.s.Repeats():
				c.fail(strictdoc.CodeInvalidValue, p, fmt.Sprintf("k %d is above repeats (%d): pass@k needs at least k trials of every task", k, c.s.Repeats()))
			}
		}
		if r.Baseline != "" {
			configs("report.baseline", r.Baseline)
		}
		if ci := r.CI; ci != nil {
			switch ci.Method {
			case "", "auto", "wilson", "bootstrap":
			default:
				c.fail(strictdoc.CodeInvalidValue, "report.ci.method", fmt.Sprintf("method is auto, wilson or bootstrap, not %q", ci.Method))
			}
			if c.present("report.ci.level") && (ci.Level <= 0 || ci.Level >= 1) {
				c.fail(strictdoc.CodeInvalidValue, "report.ci.level", "level is between 0 and 1 (exclusive)")
			}
			if c.present("report.ci.resamples") && ci.Resamples < 1 {
				c.fail(strictdoc.CodeInvalidValue, "report.ci.resamples", "resamples must be at least 1")
			}
		}
		if g := r.CompletionGate; g != nil && (*g < 0 || *g > 1) {
			c.fail(strictdoc.CodeInvalidValue, "report.completion_gate", "completion_gate is a fraction from 0 to 1")
		}
	}
	if sp.Grader != nil {
		c.grader("grader", sp.Grader)
	}
	for i := range sp.Tasks.Items {
		c.task(strictdoc.IndexPath("tasks.items", i), &sp.Tasks.Items[i])
	}
	for _, field := range []string{"include", "exclude"} {
		pats := sp.Tasks.Include
		if field == "exclude" {
			pats = sp.Tasks.Exclude
		}
		for i, pat := range pats {
			if _, err := path.Match(pat, ""); err != nil {
				c.fail(strictdoc.CodeInvalidValue, strictdoc.IndexPath("tasks."+field, i), fmt.Sprintf("bad pattern %q: %v", pat, err))
			}
		}
	}
	if sp.Tasks.Dir == "" && sp.Tasks.File == "" && len(sp.Tasks.Items) == 0 {
		c.fail(CodeNoTasks, "tasks", "tasks needs dir, file or items")
	}
}

func (c *checker) nonNegative(p string, v float64) {
	if v < 0 {
		c.fail(strictdoc.CodeInvalidValue, p, "must not be negative")
	}
}

func (c *checker) id(p, id, what string, seen map[string]string) {
	if !validID(id) {
		c.fail(strictdoc.CodeInvalidValue, p, fmt.Sprintf("%q is not a valid %s id (letters, digits, '.', '_', '-'; starting with a letter or digit; no '__')", id, what))
		return
	}
	if prev, dup := seen[id]; dup {
		c.fail(CodeDuplicateID, p, fmt.Sprintf("%s id %q is also at %s", what, id, prev))
		return
	}
	seen[id] = fmt.Sprintf("%s line %d", c.rep.File, c.lines[p])
}

// task checks one task's own fields (from the spec, task.yaml or JSONL).
func (c *checker) task(p string, t *contract.BatchTask) {
	if t.Input != nil && t.Input.Text != "" && t.Input.File != "" {
		c.fail(strictdoc.CodeInvalidValue, p+".input", "input has text or file, not both")
	}
	if t.Input != nil && t.Input.Text == "" && t.Input.File == "" {
		c.fail(strictdoc.CodeMissingField, p+".input", "input needs text or file")
	}
	if t.TimeoutSeconds < 0 {
		c.fail(strictdoc.CodeInvalidValue, p+".timeout_seconds", "must not be negative")
	}
	if t.Grader != nil {
		c.grader(p+".grader", t.Grader)
	}
}

func (c *checker) grader(p string, g *contract.GraderSpec) {
	switch g.Kind {
	case contract.GraderCommand:
		if len(g.Command) == 0 {
			c.fail(strictdoc.CodeMissingField, p+".command", "a command grader needs command: [program, args...]")
		}
		if g.Match != nil {
			c.fail(strictdoc.CodeInvalidValue, p+".match", "match goes with kind output_match")
		}
	case contract.GraderOutputMatch:
		if g.Match == nil {
			c.fail(strictdoc.CodeMissingField, p+".match", "an output_match grader needs match {equals|contains|regex}")
		} else {
			m := g.Match
			if m.Equals == "" && m.Contains == "" && m.Regex == "" {
				c.fail(strictdoc.CodeMissingField, p+".match", "match needs equals, contains or regex")
			}
			if m.Regex != "" {
				if _, err := regexp.Compile(m.Regex); err != nil {
					c.fail(strictdoc.CodeInvalidValue, p+".match.regex", "bad regular expression: "+err.Error())
				}
			}
		}
		if len(g.Command) > 0 || g.Reward != nil {
			c.fail(strictdoc.CodeInvalidValue, p, "command and reward go with kind command")
		}
	case contract.GraderNone:
	default:
		c.fail(strictdoc.CodeInvalidValue, p+".kind", fmt.Sprintf("grader kind is command, output_match or none, not %q", g.Kind))
	}
	if g.TimeoutSeconds < 0 {
		c.fail(strictdoc.CodeInvalidValue, p+".timeout_seconds", "must not be negative")
	}
}

// validID: letters, digits, '.', '_' and '-', starting with a letter or
// digit, at most 128 bytes; a trial id joins task, config and repeat with
// "__", so ids must not hold it.
func validID(s string) bool {
	if s == "" || len(s) > 128 || strings.Contains(s, "__") {
		return false
	}
	for i, c := range []byte(s) {
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

func (s *Spec) resolve(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(s.BaseDir, p)
}

// resolveTasks reads tasks.dir and tasks.file, adds the items, checks ids
// and graders, filters, and sorts; the errors name the file each task came
// from.
func (c *checker) resolveTasks() Errors {
	s := c.s
	var errs Errors
	type origin struct {
		file, path string
		line       int
	}
	var tasks []contract.BatchTask
	var where []origin
	if d := s.Spec.Tasks.Dir; d != "" {
		dir := s.resolve(d)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return Errors{{File: s.Path, Line: c.lines["tasks.dir"], Path: "tasks.dir", Code: strictdoc.CodeUnreadable, Message: "cannot read the task directory: " + err.Error()}}
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			t, es := readTaskDir(filepath.Join(dir, e.Name()))
			errs = append(errs, es...)
			if es == nil {
				tasks = append(tasks, t)
				where = append(where, origin{filepath.Join(dir, e.Name(), "task.yaml"), "id", 0})
			}
		}
	}
	if f := s.Spec.Tasks.File; f != "" {
		ts, at, es := readTaskFile(s.resolve(f), s.Path, c.lines["tasks.file"])
		errs = append(errs, es...)
		for i, t := range ts {
			tasks = append(tasks, t)
			where = append(where, origin{s.resolve(f), "", at[i]})
		}
	}
	for i, t := range s.Spec.Tasks.Items {
		tasks = append(tasks, t)
		where = append(where, origin{s.Path, strictdoc.IndexPath("tasks.items", i), c.lines[strictdoc.IndexPath("tasks.items", i)]})
	}
	seen := map[string]int{}
	var kept []contract.BatchTask
	for i, t := range tasks {
		if !validID(t.ID) {
			errs = append(errs, &Error{File: where[i].file, Line: where[i].line, Path: where[i].path, Code: strictdoc.CodeInvalidValue, Message: fmt.Sprintf("%q is not a valid task id (letters, digits, '.', '_', '-'; starting with a letter or digit; no '__')", t.ID)})
			continue
		}
		if j, dup := seen[t.ID]; dup {
			errs = append(errs, &Error{File: where[i].file, Line: where[i].line, Path: where[i].path, Code: CodeDuplicateID, Message: fmt.Sprintf("task id %q is also defined in %s (%s)", t.ID, where[j].file, where[j].path)})
			continue
		}
		seen[t.ID] = i
		if !s.selected(t.ID) {
			continue
		}
		if t.Grader == nil && s.Spec.Grader == nil {
			errs = append(errs, &Error{File: where[i].file, Line: where[i].line, Path: where[i].path, Code: CodeMissingGrader, Message: fmt.Sprintf("task %q has no grader and the spec has no default grader (grader: {kind: command|output_match|none})", t.ID)})
		}
		if t.Input == nil {
			errs = append(errs, &Error{File: where[i].file, Line: where[i].line, Path: where[i].path, Code: strictdoc.CodeMissingField, Message: fmt.Sprintf("task %q has no input (input: {text|file}, or prompt.md in its directory)", t.ID)})
		}
		if t.Input != nil && t.Input.File != "" && !filepath.IsAbs(t.Input.File) {
			base := s.BaseDir
			if t.Dir != "" {
				base = t.Dir
			}
			t.Input.File = filepath.Join(base, t.Input.File)
		}
		if t.Workspace != nil && t.Workspace.Template != "" && !filepath.IsAbs(t.Workspace.Template) {
			base := s.BaseDir
			if t.Dir != "" {
				base = t.Dir
			}
			t.Workspace.Template = filepath.Join(base, t.Workspace.Template)
		}
		kept = append(kept, t)
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].File < errs[j].File })
		return errs
	}
	if len(kept) == 0 {
		return Errors{{File: s.Path, Line: c.lines["tasks"], Path: "tasks", Code: CodeNoTasks, Message: "no task is left after include/exclude"}}
	}
	slices.SortFunc(kept, func(a, b contract.BatchTask) int { return strings.Compare(a.ID, b.ID) })
	s.Tasks = kept
	return nil
}

func (s *Spec) selected(id string) bool {
	inc := s.Spec.Tasks.Include
	ok := len(inc) == 0
	for _, p := range inc {
		if m, _ := path.Match(p, id); m {
			ok = true
		}
	}
	for _, p := range s.Spec.Tasks.Exclude {
		if m, _ := path.Match(p, id); m {
			ok = false
		}
	}
	return ok
}

// readTaskDir reads a task directory: task.yaml (optional; the id defaults
// to the directory's name), prompt.md as the input when task.yaml gives
// none, workspace/ as the template when it gives none.
func readTaskDir(dir string) (contract.BatchTask, Errors) {
	t := contract.BatchTask{ID: filepath.Base(dir)}
	file := filepath.Join(dir, "task.yaml")
	data, err := strictdoc.ReadFile(file)
	switch {
	case err == nil:
		rep := &strictdoc.Report{File: file}
		root := strictdoc.Root(data, rep, "")
		if root == nil {
			return t, rep.Err().(Errors)
		}
		dec := newDecoder(rep)
		var parsed contract.BatchTask
		optionalID(root, filepath.Base(dir))
		dec.Decode(root, "", root.Line, reflect.ValueOf(&parsed).Elem())
		c := &checker{rep: rep, lines: dec.Lines, s: &Spec{}}
		c.task("", &parsed)
		if parsed.Dir != "" {
			c.fail(strictdoc.CodeUnknownField, "dir", "dir is set by Fabric to the task's directory")
		}
		if err := rep.Err(); err != nil {
			return t, err.(Errors)
		}
		t = parsed
	case !os.IsNotExist(err):
		return t, Errors{{File: file, Code: strictdoc.CodeUnreadable, Message: "cannot read: " + err.Error()}}
	}
	t.Dir = dir
	if t.Input == nil {
		if _, err := os.Stat(filepath.Join(dir, "prompt.md")); err == nil {
			t.Input = &contract.TaskInput{File: "prompt.md"}
		}
	}
	if st, err := os.Stat(filepath.Join(dir, "workspace")); err == nil && st.IsDir() {
		if t.Workspace == nil {
			t.Workspace = &contract.TaskWorkspace{}
		}
		if t.Workspace.Template == "" {
			t.Workspace.Template = "workspace"
		}
	}
	return t, nil
}

// optionalID adds id: NAME to a task.yaml that has none, so the decoder's
// required-field rule holds and the directory names the task.
func optionalID(root *yaml.Node, name string) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "id" {
			return
		}
	}
	root.Content = append(root.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "id", Line: root.Line},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name, Line: root.Line})
}

// readTaskFile reads a JSONL file of tasks, one JSON object a line; each
// error names the file and its line.
func readTaskFile(file, specPath string, specLine int) ([]contract.BatchTask, []int, Errors) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, Errors{{File: specPath, Line: specLine, Path: "tasks.file", Code: strictdoc.CodeUnreadable, Message: "cannot read the task file: " + err.Error()}}
	}
	var out []contract.BatchTask
	var lines []int
	var errs Errors
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rep := &strictdoc.Report{File: file}
		var t contract.BatchTask
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("{")) {
			rep.Add(strictdoc.CodeSyntax, "", 1, "each line of a task file is one JSON object")
		} else if root := strictdoc.Root(line, rep, ""); root != nil {
			dec := newDecoder(rep)
			dec.Decode(root, "", root.Line, reflect.ValueOf(&t).Elem())
			c := &checker{rep: rep, lines: dec.Lines, s: &Spec{}}
			c.task("", &t)
		}
		if err := rep.Err(); err != nil {
			for _, e := range err.(Errors) {
				e.Line = i + 1
				errs = append(errs, e)
			}
			continue
		}
		out = append(out, t)
		lines = append(lines, i+1)
	}
	return out, lines, errs
}
