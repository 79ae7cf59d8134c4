// Package schemas holds the JSON Schemas (draft 2020-12) of the documents
// Fabric exchanges, as committed in this directory: one
// <name>.schema.json per document. The files are embedded, so a program
// that validates documents needs no schema generator; a test keeps them
// equal to what the generator writes from the contract types.
package schemas

import (
	"embed"
	"slices"
	"strings"
	"sync"
)

//go:embed *.schema.json
var files embed.FS

const suffix = ".schema.json"

var names = sync.OnceValue(func() []string {
	entries, _ := files.ReadDir(".") // embedded: cannot fail
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), suffix))
	}
	slices.Sort(out) // ReadDir sorts by file name: "agent.schema" after "agent-config.schema"
	return out
})

// Names returns the name of every schema, sorted. The slice is a fresh
// copy.
func Names() []string { return slices.Clone(names()) }

// Lookup returns the bytes of schemas/<name>.schema.json.
func Lookup(name string) ([]byte, bool) {
	if name == "" || strings.ContainsAny(name, "/.") {
		return nil, false
	}
	b, err := files.ReadFile(name + suffix)
	return b, err == nil
}
