package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// ErrRemoteRef is returned when a descriptor schema refers to a document
// outside itself.
var ErrRemoteRef = errors.New("schema $ref outside the descriptor is refused")

// Schema is one compiled JSON Schema (2020-12 unless the schema says otherwise).
type Schema struct {
	compiled *jsonschema.Schema
}

// Violation is one schema violation at an instance location.
type Violation struct {
	Pointer []string // JSON pointer tokens into the validated instance
	Message string
}

// Path renders the violation's location as a dotted path under prefix
// (`harness.settings` + [port_range start] -> `harness.settings.port_range.start`).
func (v Violation) Path(prefix string) string {
	return DottedPath(prefix, v.Pointer)
}

// DottedPath joins pointer tokens onto prefix; numeric tokens become [i].
func DottedPath(prefix string, tokens []string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			fmt.Fprintf(&b, "[%s]", t)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	return b.String()
}

type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%w: %s", ErrRemoteRef, url)
}

// CompileSchema compiles a self-contained schema document. name is used in
// error messages and as the schema's base URI.
func CompileSchema(name string, raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: not JSON: %w", name, err)
	}
	if _, ok := doc.(map[string]any); !ok {
		if _, isBool := doc.(bool); !isBool {
			return nil, fmt.Errorf("%s: a schema must be an object or a boolean", name)
		}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refusingLoader{})
	url := "urn:fabric:descriptor:" + name
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Schema{compiled: s}, nil
}

// Validate checks instance (any JSON-marshalable value) and returns every
// leaf violation, sorted by location. A nil slice means valid.
func (s *Schema) Validate(instance any) []Violation {
	raw, err := json.Marshal(instance)
	if err != nil {
		return []Violation{{Message: "value is not JSON: " + err.Error()}}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []Violation{{Message: "value is not JSON: " + err.Error()}}
	}
	err = s.compiled.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Message: err.Error()}}
	}
	p := message.NewPrinter(language.English)
	var out []Violation
	collectLeaves(ve, p, &out)
	sort.SliceStable(out, func(i, j int) bool {
		return strings.Join(out[i].Pointer, "/") < strings.Join(out[j].Pointer, "/")
	})
	return out
}

func collectLeaves(e *jsonschema.ValidationError, p *message.Printer, out *[]Violation) {
	if len(e.Causes) == 0 {
		*out = append(*out, Violation{
			Pointer: append([]string(nil), e.InstanceLocation...),
			Message: e.ErrorKind.LocalizedString(p),
		})
		return
	}
	for _, c := range e.Causes {
		collectLeaves(c, p, out)
	}
}
