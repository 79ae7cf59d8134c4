package modelstub

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"

	"go.yaml.in/yaml/v4"
)

// Limits for script documents: they are small, and a hostile one (alias
// expansion, deep nesting) must not cost more than reading it.
const (
	maxScriptBytes = 4 << 20
	maxScriptNodes = 100_000
	maxScriptDepth = 64
)

// LoadScript reads and parses a script file (YAML or JSON).
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseScript parses a script document (YAML or JSON). It is strict: an
// unknown or repeated key, a value of the wrong type or out of range is an
// error that names its path (rules[2].reply.chunks) and line. An empty
// document is a script without rules.
func ParseScript(data []byte) (*Script, error) {
	if len(data) > maxScriptBytes {
		return nil, fmt.Errorf("script is %d bytes; the limit is %d", len(data), maxScriptBytes)
	}
	loader, err := yaml.NewLoader(bytes.NewReader(data), yaml.WithUniqueKeys(false))
	if err != nil {
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	var doc yaml.Node
	if err := loader.Load(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &Script{}, nil
		}
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	var next yaml.Node
	switch err := loader.Load(&next); {
	case err == nil:
		return nil, fmt.Errorf("line %d: a second YAML document starts here; a script holds one document", next.Line)
	case !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("invalid YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return &Script{}, nil
	}
	d := &decoder{}
	s := &Script{}
	root := doc.Content[0]
	if r, err := d.resolve(root, "(root)"); err != nil {
		return nil, err
	} else if r.Kind == yaml.ScalarNode && r.Tag == "!!null" {
		return s, nil
	}
	err = d.mapping(root, "", 0, map[string]func(*yaml.Node, string) error{
		"rules": func(n *yaml.Node, p string) error {
			return d.sequence(n, p, 1, func(item *yaml.Node, ip string) error {
				var r Rule
				if err := d.rule(item, ip, &r); err != nil {
					return err
				}
				s.Rules = append(s.Rules, r)
				return nil
			})
		},
		"default": func(n *yaml.Node, p string) error {
			s.Default = &Reply{}
			return d.reply(n, p, 1, s.Default)
		},
		"side_text":      d.str(&s.SideText),
		"side_detection": d.str(&s.SideDetection),
	})
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// decoder walks a YAML node tree into Script values, keeping a budget on
// the nodes it visits so that aliases cannot blow up.
type decoder struct {
	visited int
}

func at(n *yaml.Node) string {
	if n == nil || n.Line == 0 {
		return ""
	}
	return fmt.Sprintf(" (line %d)", n.Line)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d *decoder) resolve(n *yaml.Node, path string) (*yaml.Node, error) {
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if hops > 100 || n.Alias == nil {
			return nil, fmt.Errorf("%s: unresolvable alias%s", path, at(n))
		}
		n = n.Alias
	}
	if n == nil {
		return nil, fmt.Errorf("%s: missing value", path)
	}
	if d.visited++; d.visited > maxScriptNodes {
		return nil, fmt.Errorf("%s: the script expands to more than %d values%s", path, maxScriptNodes, at(n))
	}
	return n, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unexpected YAML node"
}

func (d *decoder) mapping(n *yaml.Node, path string, depth int, fields map[string]func(*yaml.Node, string) error) error {
	shown := path
	if shown == "" {
		shown = "(root)"
	}
	n, err := d.resolve(n, shown)
	if err != nil {
		return err
	}
	if depth > maxScriptDepth {
		return fmt.Errorf("%s: nested too deeply%s", shown, at(n))
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: must be a mapping, not %s%s", shown, kindName(n), at(n))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, err := d.resolve(n.Content[i], shown)
		if err != nil {
			return err
		}
		if kn.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s: keys must be strings%s", shown, at(kn))
		}
		key := kn.Value
		p := join(path, key)
		if line, dup := seen[key]; dup {
			return fmt.Errorf("%s: repeated key (first on line %d)%s", p, line, at(kn))
		}
		seen[key] = kn.Line
		f, ok := fields[key]
		if !ok {
			return fmt.Errorf("%s: unknown key%s", p, at(kn))
		}
		if err := f(n.Content[i+1], p); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) sequence(n *yaml.Node, path string, depth int, item func(*yaml.Node, string) error) error {
	n, err := d.resolve(n, path)
	if err != nil {
		return err
	}
	if depth > maxScriptDepth {
		return fmt.Errorf("%s: nested too deeply%s", path, at(n))
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s: must be a list, not %s%s", path, kindName(n), at(n))
	}
	for i, c := range n.Content {
		if err := item(c, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) rule(n *yaml.Node, path string, r *Rule) error {
	sawReply := false
	err := d.mapping(n, path, 2, map[string]func(*yaml.Node, string) error{
		"name": d.str(&r.Name),
		"match": func(n *yaml.Node, p string) error {
			return d.match(n, p, &r.Match)
		},
		"reply": func(n *yaml.Node, p string) error {
			sawReply = true
			return d.reply(n, p, 3, &r.Reply)
		},
	})
	if err != nil {
		return err
	}
	if !sawReply {
		return fmt.Errorf("%s.reply: missing; every rule needs a reply%s", path, at(n))
	}
	return nil
}

func (d *decoder) match(n *yaml.Node, path string, m *Match) error {
	var api string
	err := d.mapping(n, path, 3, map[string]func(*yaml.Node, string) error{
		"contains": d.str(&m.Contains),
		"api":      d.str(&api),
		"model":    d.str(&m.Model),
		"path":     d.str(&m.Path),
		"nth":      d.posInt(&m.Nth),
		"times":    d.posInt(&m.Times),
		"side": func(n *yaml.Node, p string) error {
			var b bool
			if err := d.boolean(&b)(n, p); err != nil {
				return err
			}
			m.Side = &b
			return nil
		},
	})
	m.API = API(api)
	return err
}

func (d *decoder) reply(n *yaml.Node, path string, depth int, r *Reply) error {
	return d.mapping(n, path, depth, map[string]func(*yaml.Node, string) error{
		"text":        d.str(&r.Text),
		"chunks":      d.posInt(&r.Chunks),
		"interval_ms": d.nonNegInt(&r.IntervalMS),
		"stall":       d.boolean(&r.Stall),
		"stall_ms":    d.nonNegInt(&r.StallMS),
		"tool_call": func(n *yaml.Node, p string) error {
			r.ToolCall = &ToolCall{}
			return d.mapping(n, p, depth+1, map[string]func(*yaml.Node, string) error{
				"command": d.str(&r.ToolCall.Command),
				"tool":    d.str(&r.ToolCall.Tool),
				"workdir": d.str(&r.ToolCall.Workdir),
				"args": func(n *yaml.Node, p string) error {
					v, err := d.value(n, p, depth+2)
					if err != nil {
						return err
					}
					m, ok := v.(map[string]any)
					if !ok {
						return fmt.Errorf("%s: must be a mapping%s", p, at(n))
					}
					r.ToolCall.Args = m
					return nil
				},
			})
		},
		"error": func(n *yaml.Node, p string) error {
			r.Error = &ErrorReply{}
			sawStatus := false
			err := d.mapping(n, p, depth+1, map[string]func(*yaml.Node, string) error{
				"status": func(n *yaml.Node, p string) error {
					sawStatus = true
					return d.integer(&r.Error.Status, 400, 599, "an HTTP error status 400-599")(n, p)
				},
				"message":     d.str(&r.Error.Message),
				"type":        d.str(&r.Error.Type),
				"retry_after": d.integer(&r.Error.RetryAfter, -1, 86400, "a number of seconds (-1 for none)"),
				"headers": func(n *yaml.Node, p string) error {
					r.Error.Headers = map[string]string{}
					m, err := d.resolve(n, p)
					if err != nil {
						return err
					}
					if m.Kind != yaml.MappingNode {
						return fmt.Errorf("%s: must be a mapping, not %s%s", p, kindName(m), at(m))
					}
					fields := map[string]func(*yaml.Node, string) error{}
					for i := 0; i+1 < len(m.Content); i += 2 {
						name := m.Content[i].Value
						fields[name] = func(n *yaml.Node, p string) error {
							var v string
							if err := d.str(&v)(n, p); err != nil {
								return err
							}
							r.Error.Headers[name] = v
							return nil
						}
					}
					return d.mapping(m, p, depth+2, fields)
				},
			})
			if err == nil && !sawStatus {
				err = fmt.Errorf("%s.status: missing%s", p, at(n))
			}
			return err
		},
	})
}

// str decodes any non-null scalar as its literal text, so that `text: 4`
// means the text "4".
func (d *decoder) str(dst *string) func(*yaml.Node, string) error {
	return func(n *yaml.Node, path string) error {
		n, err := d.resolve(n, path)
		if err != nil {
			return err
		}
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			return fmt.Errorf("%s: must be a string, not %s%s", path, kindName(n), at(n))
		}
		*dst = n.Value
		return nil
	}
}

func (d *decoder) boolean(dst *bool) func(*yaml.Node, string) error {
	return func(n *yaml.Node, path string) error {
		n, err := d.resolve(n, path)
		if err != nil {
			return err
		}
		if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
			if b, err := strconv.ParseBool(n.Value); err == nil {
				*dst = b
				return nil
			}
		}
		return fmt.Errorf("%s: must be true or false, not %s%s", path, kindName(n), at(n))
	}
}

func (d *decoder) posInt(dst *int) func(*yaml.Node, string) error {
	return d.integer(dst, 1, math.MaxInt32, "an integer of 1 or more")
}

func (d *decoder) nonNegInt(dst *int) func(*yaml.Node, string) error {
	return d.integer(dst, 0, math.MaxInt32, "an integer of 0 or more")
}

func (d *decoder) integer(dst *int, lo, hi int, want string) func(*yaml.Node, string) error {
	return func(n *yaml.Node, path string) error {
		n, err := d.resolve(n, path)
		if err != nil {
			return err
		}
		if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
			if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil && v >= int64(lo) && v <= int64(hi) {
				*dst = int(v)
				return nil
			}
		}
		return fmt.Errorf("%s: must be %s, not %s%s", path, want, kindName(n), at(n))
	}
}

// value converts a YAML node into a JSON-like value (for tool arguments).
func (d *decoder) value(n *yaml.Node, path string, depth int) (any, error) {
	n, err := d.resolve(n, path)
	if err != nil {
		return nil, err
	}
	if depth > maxScriptDepth {
		return nil, fmt.Errorf("%s: nested too deeply%s", path, at(n))
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, err := d.resolve(n.Content[i], path)
			if err != nil {
				return nil, err
			}
			if kn.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s: keys must be strings%s", path, at(kn))
			}
			p := join(path, kn.Value)
			if _, dup := m[kn.Value]; dup {
				return nil, fmt.Errorf("%s: repeated key%s", p, at(kn))
			}
			v, err := d.value(n.Content[i+1], p, depth+1)
			if err != nil {
				return nil, err
			}
			m[kn.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			v, err := d.value(c, fmt.Sprintf("%s[%d]", path, i), depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, nil
		case "!!bool":
			if b, err := strconv.ParseBool(n.Value); err == nil {
				return b, nil
			}
		case "!!int":
			if v, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
				return v, nil
			}
		case "!!float":
			if v, err := strconv.ParseFloat(n.Value, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
				return v, nil
			}
			return nil, fmt.Errorf("%s: %q is not a finite number%s", path, n.Value, at(n))
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("%s: unexpected YAML node%s", path, at(n))
}
