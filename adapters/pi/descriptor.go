package pi

import (
	"bytes"
	_ "embed"
)

// descriptor is the adapter's bundled descriptor (pi.fabric-adapter.json).
//
//go:embed packages/nvidia.fabric.pi-rpc/pi.fabric-adapter.json
var descriptor []byte

// ID is the adapter id. Upstream's SDK-based host owns nvidia.fabric.pi.
const ID = "nvidia.fabric.pi-rpc"

// Descriptor returns the adapter's bundled descriptor document (a copy: the
// embedded bytes stay unchanged).
func Descriptor() []byte { return bytes.Clone(descriptor) }
