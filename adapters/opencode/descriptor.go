package opencode

import _ "embed"

// Descriptor is the adapter's bundled descriptor (opencode.fabric-adapter.json).
//
//go:embed packages/nvidia.fabric.opencode/opencode.fabric-adapter.json
var Descriptor []byte

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
