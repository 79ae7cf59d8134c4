package opencode

import (
	"bytes"
	_ "embed"
)

// descriptor is the adapter's bundled descriptor (opencode.fabric-adapter.json).
//
//go:embed packages/nvidia.fabric.opencode/opencode.fabric-adapter.json
var descriptor []byte

// ID is the adapter id.
const ID = "nvidia.fabric.opencode"

// Name is the adapter's name in interface paths (P2):
// <artifact root>/.fabric/opencode/runtimes/<runtime-id>/interfaces/.
const adapterName = "opencode"

// Interface names (S7).
const (
	Web      = "web"
	Terminal = "terminal"
)

// Descriptor returns the adapter's bundled descriptor document (a copy: the
// embedded bytes stay unchanged).
func Descriptor() []byte { return bytes.Clone(descriptor) }
