package contract_test

import (
	"encoding/json"
	"reflect"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fabric-runtime/fabric/contract/validate"
	"github.com/fabric-runtime/fabric/internal/schemagen"
)

// TestSamplesValidate marshals realistic documents of every type and checks
// them against our generated schemas, then round-trips them through the Go
// type and checks nothing changed.
func TestSamplesValidate(t *testing.T) {
	v := validate.NewValidator()
	all := samples()
	for _, name := range schemagen.Names() {
		docs := all[name]
		if len(docs) == 0 {
			t.Errorf("no sample document for schema %q", name)
			continue
		}
		d, _ := schemagen.Lookup(name)
		for i, doc := range docs {
			if reflect.TypeOf(doc) != d.Type {
				t.Fatalf("%s sample %d has type %T, want %v", name, i, doc, d.Type)
			}
			b, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Validate(name, b); err != nil {
				t.Errorf("%s sample %d: %v\n%s", name, i, err, b)
				continue
			}
			back := reflect.New(d.Type)
			if err := json.Unmarshal(b, back.Interface()); err != nil {
				t.Fatalf("%s sample %d: unmarshal: %v", name, i, err)
			}
			again, err := json.Marshal(back.Interface())
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, b, again) {
				t.Errorf("%s sample %d changed in a round trip:\n%s", name, i, cmp.Diff(string(b), string(again)))
			}
		}
	}
}

func TestValidatorConcurrent(t *testing.T) {
	v := validate.NewValidator()
	all := samples()
	var wg sync.WaitGroup
	for range 4 {
		for _, name := range schemagen.Names() {
			wg.Go(func() {
				if err := v.ValidateValue(name, all[name][0]); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			})
		}
	}
	wg.Wait()
}

func schemaMap(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := schemagen.Generate(name)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return cmp.Equal(x, y)
}
