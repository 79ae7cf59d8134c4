package claude

import _ "embed"

// Descriptor is the adapter's bundled descriptor.
//
//go:embed packages/nvidia.fabric.claude/claude.fabric-adapter.json
var Descriptor []byte

// ID is the adapter id (and the runner's builtin name).
const ID = "nvidia.fabric.claude"
