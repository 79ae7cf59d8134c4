package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"go.yaml.in/yaml/v4"
)

// parseYAML reads exactly one YAML document into a value. It returns nil
// after a fatal error; after other errors (duplicate keys, say) it returns
// what it could read, so that the rest can still be checked.
func parseYAML(data []byte, rep *report) *value {
	// Duplicate keys are found while walking the nodes, so that every one
	// is reported with both lines.
	loader, err := yaml.NewLoader(bytes.NewReader(data), yaml.WithUniqueKeys(false))
	if err != nil {
		rep.failf(CodeSyntax, "", 0, "cannot read YAML: %v", err)
		return nil
	}
	var doc yaml.Node
	if err := loader.Load(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			rep.failf(CodeInvalidType, "", 0, "the config is empty; expected a mapping")
			return nil
		}
		yamlSyntax(rep, err)
		return nil
	}
	var next yaml.Node
	switch err := loader.Load(&next); {
	case err == nil:
		rep.failf(CodeMultipleDocuments, "", next.Line, "a second YAML document starts here; a config file holds exactly one document")
		return nil
	case !errors.Is(err, io.EOF):
		yamlSyntax(rep, err)
		return nil
	}
	if len(doc.Content) == 0 {
		rep.failf(CodeInvalidType, "", doc.Line, "the config is empty; expected a mapping")
		return nil
	}
	conv := yamlConverter{rep: rep, expanding: map[*yaml.Node]bool{}}
	root := conv.node(doc.Content[0], "", 0)
	if conv.stopped {
		return nil
	}
	return root
}

// yamlSyntax records a YAML parse error with its line.
func yamlSyntax(rep *report, err error) {
	var le *yaml.LoadError
	if !errors.As(err, &le) {
		rep.failf(CodeSyntax, "", 0, "invalid YAML: %v", err)
		return
	}
	msg := le.Message
	if le.ContextMsg != "" {
		msg = le.ContextMsg + ": " + msg
	}
	rep.failf(CodeSyntax, "", le.Mark.Line, "invalid YAML: %s", msg)
}

// yamlConverter turns a YAML node tree into values.
type yamlConverter struct {
	rep       *report
	expanding map[*yaml.Node]bool // anchored collections being converted, to find cycles
	inAlias   int                 // > 0 while expanding an alias
	expanded  int                 // values created by alias expansion
	stopped   bool                // a fatal error was recorded; stop converting
}

// stop records a fatal error and stops the conversion.
func (c *yamlConverter) stop(code, path string, line int, format string, args ...any) *value {
	c.rep.failf(code, path, line, format, args...)
	c.stopped = true
	return &value{}
}

func (c *yamlConverter) node(n *yaml.Node, path string, depth int) *value {
	if c.stopped {
		return &value{}
	}
	if depth > maxDepth {
		return c.stop(CodeTooLarge, "", n.Line, "nested deeper than %d levels", maxDepth)
	}
	if c.inAlias > 0 {
		if c.expanded++; c.expanded > maxAliasValues {
			return c.stop(CodeTooLarge, path, n.Line, "YAML aliases expand to more than %d values", maxAliasValues)
		}
	}
	if n.Anchor != "" && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) {
		// An alias inside its own anchor's value would expand forever.
		c.expanding[n] = true
		defer delete(c.expanding, n)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return c.alias(n, path, depth)
	case yaml.ScalarNode:
		return c.scalar(n, path)
	case yaml.SequenceNode:
		return c.sequence(n, path, depth)
	case yaml.MappingNode:
		return c.mapping(n, path, depth)
	}
	return c.stop(CodeUnsupportedYAML, path, n.Line, "unexpected YAML node")
}

func (c *yamlConverter) alias(n *yaml.Node, path string, depth int) *value {
	target := n.Alias
	if target == nil {
		return c.stop(CodeSyntax, path, n.Line, "alias *%s has no anchor", n.Value)
	}
	if c.expanding[target] {
		return c.stop(CodeUnsupportedYAML, path, n.Line, "alias *%s refers to a value that contains it", n.Value)
	}
	c.inAlias++
	v := c.node(target, path, depth)
	c.inAlias--
	v.line = n.Line
	return v
}

func (c *yamlConverter) sequence(n *yaml.Node, path string, depth int) *value {
	v := &value{kind: kindArray, line: n.Line, items: make([]*value, 0, len(n.Content))}
	for i, it := range n.Content {
		v.items = append(v.items, c.node(it, indexPath(path, i), depth+1))
	}
	return v
}

func (c *yamlConverter) mapping(n *yaml.Node, path string, depth int) *value {
	v := &value{kind: kindObject, line: n.Line}
	firstLine := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content) && !c.stopped; i += 2 {
		keyNode, valNode := n.Content[i], n.Content[i+1]
		key, ok := c.key(keyNode, path)
		if !ok {
			continue
		}
		p := childPath(path, key)
		if first, dup := firstLine[key]; dup {
			e := c.rep.failf(CodeDuplicateKey, p, keyNode.Line, "duplicate key %q (first on line %d)", key, first)
			e.Metadata["first_line"] = first
			continue
		}
		firstLine[key] = keyNode.Line
		v.members = append(v.members, member{key: key, keyLine: keyNode.Line, value: c.node(valNode, p, depth+1)})
	}
	return v
}

// key returns the text of a mapping key; keys must be scalars.
func (c *yamlConverter) key(k *yaml.Node, path string) (string, bool) {
	if k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		c.rep.failf(CodeUnsupportedYAML, path, k.Line, "a mapping key must be a string, not a list or mapping")
		return "", false
	}
	if k.ShortTag() == "!!merge" {
		c.rep.failf(CodeUnsupportedYAML, path, k.Line, "YAML merge keys (<<) are not supported; use an alias for a whole value instead")
		return "", false
	}
	return k.Value, true
}

// scalar converts a scalar using YAML's own resolution of null, booleans
// and numbers. Every other tag (str, timestamp, binary, custom) keeps the
// text as written.
func (c *yamlConverter) scalar(n *yaml.Node, path string) *value {
	v := &value{line: n.Line}
	switch tag := n.ShortTag(); tag {
	case "!!null":
		v.kind = kindNull
	case "!!bool", "!!int", "!!float":
		var x any
		if err := n.Decode(&x); err != nil {
			c.rep.failf(CodeInvalidValue, path, n.Line, "cannot read %s value %q", tag, n.Value)
			return v
		}
		if err := setScalar(v, x); err != nil {
			c.rep.failf(CodeInvalidValue, path, n.Line, "%v", err)
		}
	default:
		v.kind = kindString
		v.text = n.Value
	}
	return v
}

// setScalar stores a decoded YAML scalar in v.
func setScalar(v *value, x any) error {
	switch x := x.(type) {
	case nil:
		v.kind = kindNull
	case bool:
		v.kind, v.boolean = kindBool, x
	case int:
		v.kind, v.integer, v.text = kindNumber, true, strconv.Itoa(x)
	case int64:
		v.kind, v.integer, v.text = kindNumber, true, strconv.FormatInt(x, 10)
	case uint64:
		v.kind, v.integer, v.text = kindNumber, true, strconv.FormatUint(x, 10)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return fmt.Errorf("%v is not a finite number", x)
		}
		v.kind, v.text = kindNumber, strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return fmt.Errorf("unsupported scalar of type %T", x)
	}
	return nil
}
