package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/fabric-runtime/fabric/internal/catalog"
	"github.com/fabric-runtime/fabric/schemas"
)

// Validator checks documents against the committed schemas (package
// schemas, equal to what internal/schemagen generates from the contract
// types). Each schema is compiled the first time it is used. A Validator is safe for concurrent use.
type Validator struct {
	schemas map[string]*lazySchema // fixed at construction
}

type lazySchema struct {
	name   string
	once   sync.Once
	schema *catalog.Schema
	err    error
}

// NewValidator returns a Validator for every name in schemas.Names.
func NewValidator() *Validator {
	v := &Validator{schemas: make(map[string]*lazySchema)}
	for _, name := range schemas.Names() {
		v.schemas[name] = &lazySchema{name: name}
	}
	return v
}

var defaultValidator = sync.OnceValue(NewValidator)

// Validate checks doc against the named schema with a shared Validator.
func Validate(name string, doc []byte) error {
	return defaultValidator().Validate(name, doc)
}

// Validate checks doc, a JSON document, against the named schema. The error
// names the schema and every failing location (a JSON pointer into doc).
func (v *Validator) Validate(name string, doc []byte) error {
	l, ok := v.schemas[name]
	if !ok {
		return fmt.Errorf("contract: unknown schema %q (known: %s)", name, strings.Join(schemas.Names(), ", "))
	}
	s, err := l.compiled()
	if err != nil {
		return err
	}
	if !json.Valid(doc) {
		var x any
		return fmt.Errorf("contract: %s: document is not valid JSON: %w", name, json.Unmarshal(doc, &x))
	}
	vs := s.ValidateJSON(doc)
	if len(vs) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "contract: %s: document does not match schemas/%s.schema.json:", name, name)
	for _, x := range vs {
		fmt.Fprintf(&b, "\n- at '%s': %s", catalog.JSONPointer(x.Pointer), x.Message)
	}
	return fmt.Errorf("%s", b.String())
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

func (l *lazySchema) compiled() (*catalog.Schema, error) {
	l.once.Do(func() {
		l.schema, l.err = compile(l.name)
	})
	return l.schema, l.err
}

func compile(name string) (*catalog.Schema, error) {
	raw, _ := schemas.Lookup(name) // name is one of schemas.Names
	s, err := catalog.CompileSchema(name, raw)
	if err != nil {
		return nil, fmt.Errorf("contract: compile schema %w", err)
	}
	return s, nil
}
