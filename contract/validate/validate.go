package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fabric-runtime/fabric/contract/schema"
)

// Validator checks documents against the schemas generated from the
// contract package's types (see schema.Generate). Each schema is compiled
// the first time it is used. A Validator is safe for concurrent use.
type Validator struct {
	schemas map[string]*lazySchema // fixed at construction
}

type lazySchema struct {
	name   string
	once   sync.Once
	schema *jsv.Schema
	err    error
}

// NewValidator returns a Validator for every name in schema.Names.
func NewValidator() *Validator {
	v := &Validator{schemas: make(map[string]*lazySchema)}
	for _, d := range schema.All() {
		v.schemas[d.Name] = &lazySchema{name: d.Name}
	}
	return v
}

var defaultValidator = sync.OnceValue(NewValidator)

// Validate checks doc against the named schema with a shared Validator.
func Validate(name string, doc []byte) error {
	return defaultValidator().Validate(name, doc)
}

// Validate checks doc, a JSON document, against the named schema. The error
// names the schema and every failing location.
func (v *Validator) Validate(name string, doc []byte) error {
	l, ok := v.schemas[name]
	if !ok {
		return fmt.Errorf("contract: unknown schema %q (known: %s)", name, strings.Join(schema.Names(), ", "))
	}
	s, err := l.compiled()
	if err != nil {
		return err
	}
	inst, err := jsv.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("contract: %s: document is not valid JSON: %w", name, err)
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("contract: %s: %w", name, err)
	}
	return nil
}

// ValidateValue marshals value to JSON and checks it against the named
// schema.
func (v *Validator) ValidateValue(name string, value any) error {
	doc, err := json.Marshal(value)
	if err != nil {
		return fmt.Errorf("contract: %s: marshal: %w", name, err)
	}
	return v.Validate(name, doc)
}

func (l *lazySchema) compiled() (*jsv.Schema, error) {
	l.once.Do(func() {
		l.schema, l.err = compileGenerated(l.name)
	})
	return l.schema, l.err
}

func compileGenerated(name string) (*jsv.Schema, error) {
	raw, err := schema.Generate(name)
	if err != nil {
		return nil, err
	}
	doc, err := jsv.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("contract: schema %s: %w", name, err)
	}
	url := "file:///fabric/schemas/" + name + ".schema.json"
	c := jsv.NewCompiler()
	c.DefaultDraft(jsv.Draft2020)
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("contract: schema %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("contract: compile schema %s: %w", name, err)
	}
	return s, nil
}
