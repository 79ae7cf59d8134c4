package strictdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v4"
)

// Limits on what a document may be.
const (
	// MaxSize is the largest document, in bytes, that is read.
	MaxSize = 1 << 20
	// maxDepth bounds the nesting of objects and lists.
	maxDepth = 200
)

// Root parses data (at most MaxSize bytes) as one document whose top level
// is a mapping and whose schema_version, when it is a string and schema is
// not empty, is schema;
// it returns nil after a fatal error (recorded in rep).
func Root(data []byte, rep *Report, schema string) *yaml.Node {
	if len(data) > MaxSize {
		rep.Add(CodeTooLarge, "", 0, fmt.Sprintf("the document is over %d bytes", MaxSize))
		return nil
	}
	root := Parse(data, rep)
	if root == nil {
		return nil
	}
	if KindOf(root) != KindObject {
		rep.Add(CodeInvalidType, "", root.Line, "expected a mapping at the top level, found "+string(KindOf(root)))
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if schema != "" && k.Value == "schema_version" && KindOf(v) == KindString && v.Value != schema {
			rep.Add(CodeUnsupportedSchemaVersion, "schema_version", k.Line,
				fmt.Sprintf("schema_version %q is not supported; this Fabric reads %s", v.Value, schema))
			return nil
		}
	}
	return root
}

// ReadFile reads at most MaxSize+1 bytes of path (so that Root can tell a
// file that is too large).
func ReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxSize+1))
}

const utf8BOM = "\xEF\xBB\xBF"

// Parse reads one YAML or JSON document and checks what no part of a
// strict document may hold; it returns the root node, or nil after a fatal
// error (recorded in rep). JSON is checked as JSON first and then read by the YAML
// parser (JSON is YAML), which gives every value its line.
func Parse(data []byte, rep *Report) *yaml.Node {
	data = bytes.TrimPrefix(data, []byte(utf8BOM))
	if IsJSON(rep.File, data) && !json.Valid(data) {
		jsonSyntax(data, rep)
		return nil
	}
	var docs [2]yaml.Node
	n := 0
	loader, err := yaml.NewLoader(bytes.NewReader(data), yaml.WithUniqueKeys(false))
	for err == nil && n < len(docs) {
		if err = loader.Load(&docs[n]); err == nil {
			n++
		}
	}
	switch {
	case err != nil && !errors.Is(err, io.EOF):
		yamlSyntax(rep, err)
	case n == 2:
		rep.Add(CodeMultipleDocuments, "", docs[1].Line, "a second YAML document starts here; the file holds exactly one document")
	case n == 0 || len(docs[0].Content) == 0:
		rep.Add(CodeInvalidType, "", docs[0].Line, "the document is empty; expected a mapping")
	default:
		c := nodeChecker{rep: rep}
		root := docs[0].Content[0]
		if c.node(root, "", 0) {
			return root
		}
	}
	return nil
}

// IsJSON: files named *.json, and any input whose first byte is '{'.
func IsJSON(name string, data []byte) bool {
	if strings.HasSuffix(strings.ToLower(name), ".json") {
		return true
	}
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

func jsonSyntax(data []byte, rep *Report) {
	var v any
	err := json.Unmarshal(data, &v)
	line := 1 + bytes.Count(data, []byte{'\n'})
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line = 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte{'\n'})
	}
	msg := "invalid JSON"
	if err != nil {
		msg += ": " + err.Error()
	}
	rep.Add(CodeSyntax, "", line, msg)
}

func yamlSyntax(rep *Report, err error) {
	var le *yaml.LoadError
	if !errors.As(err, &le) {
		rep.Add(CodeSyntax, "", 0, "invalid YAML: "+err.Error())
		return
	}
	msg := le.Message
	if le.ContextMsg != "" {
		msg = le.ContextMsg + ": " + msg
	}
	rep.Add(CodeSyntax, "", le.Mark.Line, "invalid YAML: "+msg)
}

// nodeChecker rejects, anywhere in the tree (inline FabricConfig objects
// included), what has no JSON meaning: anchors, aliases, tags, merge keys,
// non-scalar keys, duplicate keys, non-finite numbers and deep nesting. It
// removes the offending pairs from mappings, so that decoding sees each key
// once.
type nodeChecker struct{ rep *Report }

// node checks n and below; it returns false after a fatal error.
func (c *nodeChecker) node(n *yaml.Node, path string, depth int) bool {
	if depth > maxDepth {
		c.rep.Add(CodeTooLarge, path, n.Line, fmt.Sprintf("nested deeper than %d levels", maxDepth))
		return false
	}
	if n.Anchor != "" {
		c.rep.Add(CodeUnsupportedYAML, path, n.Line, "YAML anchors (&"+n.Anchor+") are not supported; write each value out")
	}
	if n.Kind != yaml.AliasNode && explicitTag(n) {
		c.rep.Add(CodeUnsupportedYAML, path, n.Line, "YAML tags ("+n.Tag+") are not supported")
	}
	switch n.Kind {
	case yaml.AliasNode:
		c.rep.Add(CodeUnsupportedYAML, path, n.Line, "YAML aliases (*"+n.Value+") are not supported; write the value out")
		n.Kind, n.Tag, n.Alias, n.Value = yaml.ScalarNode, "!!null", nil, ""
	case yaml.ScalarNode:
		if f, ok := ScalarValue(n).(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
			c.rep.Add(CodeInvalidValue, path, n.Line, "not a finite number")
		}
	case yaml.SequenceNode:
		for i, it := range n.Content {
			if !c.node(it, IndexPath(path, i), depth+1) {
				return false
			}
		}
	case yaml.MappingNode:
		return c.mapping(n, path, depth)
	default:
		c.rep.Add(CodeUnsupportedYAML, path, n.Line, "unexpected YAML node")
		return false
	}
	return true
}

func (c *nodeChecker) mapping(n *yaml.Node, path string, depth int) bool {
	firstLine := make(map[string]int, len(n.Content)/2)
	kept := n.Content[:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
			c.rep.Add(CodeUnsupportedYAML, path, k.Line, "a mapping key must be a string, not a list, mapping or alias")
			continue
		case k.ShortTag() == "!!merge" && !explicitTag(k):
			c.rep.Add(CodeUnsupportedYAML, path, k.Line, "YAML merge keys (<<) are not supported; write each field out")
			continue
		case k.Anchor != "" || explicitTag(k):
			c.rep.Add(CodeUnsupportedYAML, path, k.Line, "anchors and tags on mapping keys are not supported")
			continue
		}
		p := ChildPath(path, k.Value)
		if first, dup := firstLine[k.Value]; dup {
			c.rep.Add(CodeDuplicateKey, p, k.Line, fmt.Sprintf("duplicate key %q (lines %d and %d)", k.Value, first, k.Line))
			continue
		}
		firstLine[k.Value] = k.Line
		if !c.node(val, p, depth+1) {
			return false
		}
		kept = append(kept, k, val)
	}
	n.Content = kept
	return true
}

func explicitTag(n *yaml.Node) bool { return n.Style&yaml.TaggedStyle != 0 || n.Tag == "!" }

// ScalarValue is a scalar as JSON sees it: nil, bool, int64, uint64,
// float64 or string. YAML resolves null, booleans and numbers; every other
// scalar (a timestamp, say) is its text.
func ScalarValue(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool", "!!int", "!!float":
		var x any
		if err := n.Load(&x); err != nil {
			return n.Value
		}
		if i, ok := x.(int); ok {
			return int64(i)
		}
		return x
	}
	return n.Value
}

// ChildPath is the path of key below parent: parent.key, or
// parent["key"] for a key that is not a plain word.
func ChildPath(parent, key string) string {
	plain := key != "" && strings.IndexFunc(key, func(r rune) bool {
		return r != '_' && r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) || r > unicode.MaxASCII
	}) < 0
	switch {
	case !plain:
		return parent + "[" + strconv.Quote(key) + "]"
	case parent == "":
		return key
	}
	return parent + "." + key
}

// IndexPath is parent[i].
func IndexPath(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }
