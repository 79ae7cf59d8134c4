package bundled

import (
	"context"
	"fmt"
	"os"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapters/claude"
	"github.com/fabric-runtime/fabric/adapters/codex"
	"github.com/fabric-runtime/fabric/adapters/scripted"
)

// Descriptor is one embedded descriptor document.
type Descriptor struct {
	Name string // file name
	Data []byte
}

// Descriptors returns every bundled descriptor, in a fixed order.
func Descriptors() []Descriptor {
	return []Descriptor{
		{Name: "scripted.fabric-adapter.json", Data: scripted.Descriptor},
		{Name: "scripted-v1.fabric-adapter.json", Data: scripted.DescriptorV1},
		{Name: "claude.fabric-adapter.json", Data: claude.Descriptor},
		{Name: "codex.fabric-adapter.json", Data: codex.Descriptor},
	}
}

// Lookup returns the bundled adapter with the given builtin name.
func Lookup(name string) (adapterkit.Adapter, bool) {
	switch name {
	case scripted.ID:
		return scripted.New(), true
	case claude.ID:
		return claude.New(), true
	case codex.ID:
		return codex.New(), true
	}
	return nil, false
}

// Serve hosts the named bundled adapter on the protocol the core selected
// and returns the process exit code.
func Serve(ctx context.Context, name string) int {
	a, ok := Lookup(name)
	if !ok {
		fmt.Fprintf(os.Stderr, "fabric: no bundled adapter %q\n", name)
		return 2
	}
	if err := adapterkit.Serve(ctx, a); err != nil {
		fmt.Fprintf(os.Stderr, "fabric: adapter host %s: %v\n", name, err)
		return 1
	}
	return 0
}
