// Package bundled lists the adapters compiled into the fabric binary: their
// embedded descriptors for the catalog.
package bundled

import (
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
