// Package bundled lists the adapters compiled into the fabric binary: their
// embedded descriptors for the catalog, and their hosts for re-execution.
package bundled

import (
	"context"
	"fmt"
	"os"

	"github.com/fabric-runtime/fabric/adapterkit"
	"github.com/fabric-runtime/fabric/adapters/scripted"
	"github.com/fabric-runtime/fabric/internal/catalog"
)

// Descriptors returns every bundled descriptor, in a fixed order.
func Descriptors() []catalog.Bundled {
	return []catalog.Bundled{
		{Name: "scripted.fabric-adapter.json", Data: scripted.Descriptor},
		{Name: "scripted-v1.fabric-adapter.json", Data: scripted.DescriptorV1},
	}
}

// Lookup returns the bundled adapter with the given builtin name.
func Lookup(name string) (adapterkit.Adapter, bool) {
	switch name {
	case scripted.ID:
		return scripted.New(), true
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
