package modelstub

import (
	"regexp"
	"sort"
	"strings"
)

// commandProps are the names shell tools give the command property, most
// common first (Codex's exec_command calls it cmd).
var commandProps = []string{"command", "cmd", "commands", "script", "shell_command", "code"}

// schemaTypes returns the lower-cased type names of a schema (Gemini writes
// them upper-case; JSON Schema allows a list).
func schemaTypes(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{strings.ToLower(t)}
	case []any:
		var out []string
		for _, e := range t {
			if es, ok := e.(string); ok {
				out = append(out, strings.ToLower(es))
			}
		}
		return out
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		for _, alt := range arr(s[k]) {
			if ts := schemaTypes(obj(alt)); len(ts) > 0 && ts[0] != "null" {
				return ts
			}
		}
	}
	if obj(s["properties"]) != nil {
		return []string{"object"}
	}
	if s["items"] != nil {
		return []string{"array"}
	}
	return nil
}

func hasType(s map[string]any, t string) bool {
	for _, x := range schemaTypes(s) {
		if x == t {
			return true
		}
	}
	return false
}

func requiredProps(s map[string]any) []string {
	var out []string
	for _, r := range arr(s["required"]) {
		if rs, ok := r.(string); ok {
			out = append(out, rs)
		}
	}
	return out
}

// commandProp picks the property of a shell tool's schema that takes the
// command.
func commandProp(schema map[string]any) string {
	props := obj(schema["properties"])
	for _, name := range commandProps {
		if props[name] != nil {
			return name
		}
	}
	for _, name := range requiredProps(schema) {
		if p := obj(props[name]); p != nil && (hasType(p, "string") || hasType(p, "array")) {
			return name
		}
	}
	return "command"
}

// shellArgs shapes the arguments of a call to a shell-like tool after its
// schema: the command as argv ["bash", "-lc", cmd] when the property is an
// array, else as a string; other required properties get plausible values;
// tc.Args override the result.
func shellArgs(t tool, tc *ToolCall) map[string]any {
	schema := t.schema
	args := map[string]any{}
	if tc.Command != "" || tc.Tool == "" {
		prop := commandProp(schema)
		p := obj(obj(schema["properties"])[prop])
		if hasType(p, "array") && !hasType(p, "string") {
			args[prop] = []any{"bash", "-lc", tc.Command}
		} else {
			args[prop] = tc.Command
		}
	}
	props := obj(schema["properties"])
	for _, name := range requiredProps(schema) {
		if _, done := args[name]; done {
			continue
		}
		args[name] = exampleValue(obj(props[name]), name, tc.Workdir, 0)
	}
	if tc.Workdir != "" {
		for _, name := range []string{"workdir", "cwd", "dir_path", "directory", "working_directory"} {
			if _, ok := props[name]; ok {
				args[name] = tc.Workdir
				break
			}
		}
	}
	for k, v := range tc.Args {
		args[k] = cloneJSONValue(v)
	}
	return args
}

// exampleValue builds a small value valid against a schema: const,
// default or the first enum value when given; otherwise by type, with the
// required properties of objects filled in. name (the property name) picks
// plausible strings and numbers.
func exampleValue(s map[string]any, name, workdir string, depth int) any {
	if depth > 16 {
		return nil
	}
	if v, ok := s["const"]; ok {
		return cloneJSONValue(v)
	}
	if v, ok := s["default"]; ok {
		return cloneJSONValue(v)
	}
	n := strings.ToLower(name)
	if e := arr(s["enum"]); len(e) > 0 {
		// A risk the model declares (Droid's Execute trusts riskLevel)
		// is the lowest the tool offers, so the call runs unasked.
		if strings.Contains(n, "risk") {
			for _, v := range e {
				if str(v) == "low" {
					return "low"
				}
			}
		}
		return cloneJSONValue(e[0])
	}
	types := schemaTypes(s)
	typ := ""
	for _, t := range types {
		if t != "null" {
			typ = t
			break
		}
	}
	if typ == "" && len(types) > 0 {
		return nil
	}
	switch typ {
	case "object":
		props := obj(s["properties"])
		alt := s
		if props == nil {
			for _, k := range []string{"anyOf", "oneOf"} {
				if a := arr(s[k]); len(a) > 0 {
					alt = obj(a[0])
					props = obj(alt["properties"])
					break
				}
			}
		}
		out := map[string]any{}
		req := requiredProps(alt)
		sort.Strings(req)
		for _, r := range req {
			out[r] = exampleValue(obj(props[r]), r, workdir, depth+1)
		}
		return out
	case "array":
		out := []any{}
		if min := num(s["minItems"]); min > 0 {
			item := obj(s["items"])
			for i := 0; i < min && i < 8; i++ {
				out = append(out, exampleValue(item, name, workdir, depth+1))
			}
		}
		return out
	case "boolean":
		return false
	case "integer", "number":
		v := 0
		if strings.Contains(n, "timeout") {
			v = 60000
		}
		if min, ok := s["minimum"].(float64); ok && float64(v) < min {
			v = int(min)
		}
		if max, ok := s["maximum"].(float64); ok && float64(v) > max {
			v = int(max)
		}
		return v
	}
	return matchPattern(s, exampleString(n, workdir))
}

// exampleString is a plausible string for a property named n (lower case).
func exampleString(n, workdir string) string {
	switch {
	case strings.Contains(n, "dir") || n == "cwd" || strings.Contains(n, "path"):
		if workdir != "" {
			return workdir
		}
		return "."
	case strings.Contains(n, "description") || strings.Contains(n, "reason") || strings.Contains(n, "justification"):
		return "Requested by the Fabric model stub script"
	case strings.Contains(n, "summary"):
		// Droid's Execute wants a sentence-cased summary of 3-8 words.
		return "Run the scripted stub command"
	}
	return "Fabric model stub"
}

// patternCandidates are tried, in order, when a string property's
// pattern rejects the plausible value.
var patternCandidates = []string{"Run the scripted stub command", "fabric-model-stub", "stub", "Stub", "0"}

// matchPattern returns v when the schema has no pattern or v matches it,
// else the first candidate that matches, else v. A pattern Go's regexp
// cannot compile (JSON Schema patterns are ECMA-262) is ignored.
func matchPattern(s map[string]any, v string) string {
	pat := str(s["pattern"])
	if pat == "" {
		return v
	}
	re, err := regexp.Compile(pat)
	if err != nil || re.MatchString(v) {
		return v
	}
	for _, c := range patternCandidates {
		if re.MatchString(c) {
			return c
		}
	}
	return v
}
